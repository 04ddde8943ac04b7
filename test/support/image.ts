/**
 * The runtime image for integration tests: built from this repository with INSTALL_AGENTS=0
 * (no Node.js, no agents), tagged in a test-only repository so it never stands in for the
 * image the extension builds for users. Memoised per process; Docker's build cache makes a
 * repeat build across processes a matter of seconds.
 */
import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import type Docker from 'dockerode';
import { RUNTIME_IMAGE_CONTEXT, RUNTIME_IMAGE_TEST_REPO } from '../../extension/src/contract/image';
import { buildRuntimeImage, runtimeContextHash } from '../../extension/src/engine/imageBuild';
import { docker } from './docker';

export const TEST_RUNTIME_IMAGE_REPO = RUNTIME_IMAGE_TEST_REPO;
export const TEST_BUILD_ARGS: Record<string, string> = { INSTALL_AGENTS: '0' };

/** The repository root: the nearest ancestor of this file holding the runtime Dockerfile. */
export function repoRoot(): string {
  let dir = __dirname;
  for (;;) {
    if (existsSync(join(dir, RUNTIME_IMAGE_CONTEXT.dockerfile))) return dir;
    const up = dirname(dir);
    if (up === dir) throw new Error(`No ${RUNTIME_IMAGE_CONTEXT.dockerfile} above ${__dirname}.`);
    dir = up;
  }
}

export function testRuntimeImageTag(): string {
  return `${TEST_RUNTIME_IMAGE_REPO}:${runtimeContextHash(repoRoot(), TEST_BUILD_ARGS)}`;
}

let pending: Promise<string> | undefined;
const pendingOn = new Map<Docker, Promise<string>>();

/**
 * The same image on another engine than the suite's (a test that drives two engines at once,
 * test/engine/holder-identity.test.ts). Memoised per client.
 */
export function ensureTestRuntimeImageOn(d: Docker): Promise<string> {
  let p = pendingOn.get(d);
  if (!p) {
    p = build(d).catch((err: unknown) => {
      pendingOn.delete(d);
      throw err;
    });
    pendingOn.set(d, p);
  }
  return p;
}

/** Builds (or reuses) the test runtime image and resolves with its tag. */
export function ensureTestRuntimeImage(): Promise<string> {
  if (!pending) {
    pending = build().catch((err: unknown) => {
      pending = undefined;
      throw err;
    });
  }
  return pending;
}

async function build(d: Docker = docker()): Promise<string> {
  const tag = testRuntimeImageTag();
  const exists = await d
    .getImage(tag)
    .inspect()
    .then(() => true)
    .catch(() => false);
  if (exists) return tag;
  await untagStale(d, tag);
  await buildRuntimeImage(d, {
    contextRoot: repoRoot(),
    tag,
    buildArgs: TEST_BUILD_ARGS,
    // RUN steps only need the apt mirror; host networking keeps builds independent of docker0.
    networkMode: 'host',
    onLog: process.env.TOOLBOX_TEST_BUILD_LOG ? (line) => process.stderr.write(`[image] ${line}\n`) : undefined,
  });
  return tag;
}

/**
 * Best-effort: drops tags of the test repository older than an hour (never forced, so images in
 * use stay; the age keeps a concurrent test process's memoised tag alive while a file changes).
 */
async function untagStale(d: Docker, current: string): Promise<void> {
  const images = await d.listImages({ filters: { reference: [`${TEST_RUNTIME_IMAGE_REPO}:*`] } }).catch(() => []);
  const cutoff = Date.now() / 1000 - 3600;
  for (const img of images) {
    if (img.Created > cutoff) continue;
    for (const t of img.RepoTags ?? []) {
      if (t !== current && t.startsWith(`${TEST_RUNTIME_IMAGE_REPO}:`)) {
        await d
          .getImage(t)
          .remove({ noprune: true })
          .catch(() => undefined);
      }
    }
  }
}
