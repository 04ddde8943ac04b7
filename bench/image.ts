/**
 * Issue #14: the runtime image a first Open Toolbox Shell needs. In one run, with the product's
 * build arguments (agents installed, the host's extra certificate authorities as the extension
 * passes them):
 *  - a cold build (no layer cache) of the Dockerfile before issue #14
 *    (bench/fixtures/Dockerfile.before-issue14) and of today's, same context otherwise: the ratio;
 *  - the two images' sizes: the ratio;
 *  - the image step of a first open with the image absent: pulled from a registry on loopback
 *    (scripts/ensure-registry.sh) vs built (the cold build above).
 * One round each: a cold build with agents takes minutes on two shared cores. Today's image is
 * built first, so that anything a proxy caches favours the old one, not the new.
 */
import { copyFileSync, cpSync, mkdtempSync, rmSync } from 'node:fs';
import { homedir, tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { HOST } from '../extension/src/contract/upstream';
import { RUNTIME_IMAGE_CONTEXT } from '../extension/src/contract/image';
import { objectNames } from '../extension/src/contract/objects';
import { ensureRuntimeImage } from '../extension/src/engine/image';
import {
  buildRuntimeImage,
  extraCaCerts,
  publishedRuntimeImageRef,
  runtimeContextHash,
  splitTag,
} from '../extension/src/engine/imageBuild';
import { docker as testDocker } from '../test/support/docker';
import { repoRoot } from '../test/support/image';
import { pushImage, startRegistry } from '../test/support/registry';
import { fmtMs, type ResultRow } from './harness';

function productBuildArgs(): Record<string, string> {
  // As EngineBackend.imageBuildArgs: ~/.toolbox/certs and, on Linux, the host's local CAs.
  const dirs = [join(homedir(), HOST.mountsRoot, 'certs')];
  if (process.platform === 'linux') dirs.push(HOST.localCaDir);
  const certs = dirs.map((d) => extraCaCerts(d)).filter((c) => c !== undefined);
  return certs.length ? { EXTRA_CA_CERTS: certs.join('\n') } : {};
}

function context(dockerfile?: string): string {
  const dir = mkdtempSync(join(tmpdir(), 'tbxbench-ctx-'));
  for (const d of RUNTIME_IMAGE_CONTEXT.dirs) cpSync(join(repoRoot(), d), join(dir, d), { recursive: true });
  if (dockerfile) copyFileSync(dockerfile, join(dir, RUNTIME_IMAGE_CONTEXT.dockerfile));
  return dir;
}

const gb = (bytes: number) => `${(bytes / 1e9).toFixed(2)} GB`;

export async function benchImage(): Promise<ResultRow[]> {
  const d = testDocker();
  const names = objectNames('tbxbench');
  const buildArgs = productBuildArgs();
  const newCtx = context();
  const oldCtx = context(join(repoRoot(), 'bench', 'fixtures', 'Dockerfile.before-issue14'));
  const newTag = `tbxbench-image/new:${runtimeContextHash(newCtx, buildArgs)}`;
  const oldTag = `tbxbench-image/old:${runtimeContextHash(oldCtx, buildArgs)}`;
  const registry = startRegistry('tbxbench');
  const published = publishedRuntimeImageRef(newTag, registry.address);
  const created = [newTag, oldTag, published];
  const timed = async (tag: string, contextRoot: string): Promise<number> => {
    const t0 = performance.now();
    await buildRuntimeImage(d, { contextRoot, tag, buildArgs, noCache: true });
    return performance.now() - t0;
  };
  try {
    const newMs = await timed(newTag, newCtx);
    const oldMs = await timed(oldTag, oldCtx);
    const newSize = (await d.getImage(newTag).inspect()).Size;
    const oldSize = (await d.getImage(oldTag).inspect()).Size;

    // Publish today's image on loopback, then drop it locally: the first open must fetch it.
    await d.getImage(newTag).tag(splitTag(published));
    await pushImage(d, published);
    await d.getImage(published).remove({ noprune: true });
    await d.getImage(newTag).remove();
    const t0 = performance.now();
    const outcome = await ensureRuntimeImage(
      { docker: d, names },
      { ref: newTag, pull: 'auto', ours: true, publishedRef: published, contextRoot: newCtx, buildArgs },
    );
    const pullMs = performance.now() - t0;
    if (outcome.how !== 'pulled') throw new Error(`expected a pull, got ${JSON.stringify(outcome)}`);

    const buildRatio = newMs / oldMs;
    const sizeRatio = newSize / oldSize;
    return [
      {
        benchmark: 'Runtime image: cold build',
        measure: 'no layer cache, agents installed: today’s Dockerfile vs the one before issue #14',
        value: `${buildRatio.toFixed(2)}× (${fmtMs(newMs)} vs ${fmtMs(oldMs)})`,
        spread: 'one build each (minutes on two cores)',
        goal: '≤ 0.35×, ≤ 60 s',
        met: buildRatio <= 0.35 && newMs <= 60_000,
      },
      {
        benchmark: 'Runtime image: size',
        measure: 'today’s image vs the one before issue #14',
        value: `${sizeRatio.toFixed(2)}× (${gb(newSize)} vs ${gb(oldSize)})`,
        spread: '–',
        goal: '≤ 0.6×',
        met: sizeRatio <= 0.6,
      },
      {
        benchmark: 'First open, image absent',
        measure: 'the image step: pulled from a registry on loopback vs built (the cold build above)',
        value: `${(pullMs / newMs).toFixed(2)}× (pull ${fmtMs(pullMs)} vs build ${fmtMs(newMs)})`,
        spread: 'one each; the base image’s layers were already present for both',
        goal: 'reported',
        met: undefined,
      },
    ];
  } finally {
    for (const ref of created) {
      await d
        .getImage(ref)
        .remove({ force: true })
        .catch(() => undefined);
    }
    registry.stop();
    rmSync(newCtx, { recursive: true, force: true });
    rmSync(oldCtx, { recursive: true, force: true });
  }
}
