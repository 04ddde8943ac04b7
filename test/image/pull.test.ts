/**
 * Pull before build (issue #14) against a real registry on loopback (Debian's docker-registry,
 * started by scripts/ensure-registry.sh): the runtime image published under its hash is pulled,
 * not built, and runs; a registry that answers 404 or is down makes the step build instead and
 * say so; a cancelled build or pull leaves no image under the runtime tag; Rebuild Runtime
 * Image prunes only old images of our repository that no container uses.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { RUNTIME_IMAGE_LABELS, RUNTIME_IMAGE_PUBLISHED } from '../../extension/src/contract/image';
import { demux } from '../../extension/src/engine/containers';
import type { EngineContext } from '../../extension/src/engine/context';
import { ensureImage, ensureRuntimeImage } from '../../extension/src/engine/image';
import { buildRuntimeImage, publishedRuntimeImageRef, splitTag } from '../../extension/src/engine/imageBuild';
import type { ImageProgress } from '../../extension/src/engine/imageProgress';
import { pruneRuntimeImages } from '../../extension/src/engine/imageRebuild';
import { TEST_ENGINE, TEST_LABEL, testNamespace, type TestNamespace } from '../support/docker';
import { ensureTestRuntimeImage, repoRoot, TEST_BUILD_ARGS } from '../support/image';
import { pushImage, republishAsMultiPlatformIndex, startRegistry, type LoopbackRegistry } from '../support/registry';

describe('runtime image: pull before build', () => {
  let ns: TestNamespace;
  let registry: LoopbackRegistry;
  let base: string;
  let hash: string;
  const images: string[] = [];

  before(async () => {
    ns = testNamespace();
    registry = startRegistry(ns.names.prefix);
    base = await ensureTestRuntimeImage();
    hash = base.slice(base.lastIndexOf(':') + 1);
  });
  after(async () => {
    await ns?.cleanup();
    for (const ref of images.reverse()) {
      await ns.docker
        .getImage(ref)
        .remove({ force: true })
        .catch(() => undefined);
    }
    registry?.stop();
  });

  const ctx = (log: string[]): EngineContext => ({ docker: ns.docker, names: ns.names, log: (l) => log.push(l) });
  /** A runtime tag of this test's own (the shared test image keeps its tag). */
  const localTag = (): string => {
    const ref = `${ns.names.prefix}-runtime/${randomBytes(3).toString('hex')}:${hash}`;
    images.push(ref);
    return ref;
  };
  const exists = (ref: string) =>
    ns.docker
      .getImage(ref)
      .inspect()
      .then(() => true)
      .catch(() => false);

  /**
   * Publishes an image carrying the test image's context label plus one layer of its own
   * (`bytes` of random data), so that a pull really downloads something; returns the published ref.
   */
  async function publish(bytes: number, label: string = hash): Promise<string> {
    const c = await ns.docker.createContainer({
      name: `${ns.names.prefix}-publish-${randomBytes(3).toString('hex')}`,
      Image: base,
      User: '0:0',
      Entrypoint: ['sh', '-c'],
      Cmd: [`head -c ${bytes} /dev/urandom > /opt/published-layer && echo ${randomBytes(4).toString('hex')} >> /opt/published-layer`],
      Labels: { [TEST_LABEL]: ns.names.prefix },
      HostConfig: { NetworkMode: 'none' },
    });
    await c.start();
    await c.wait();
    const published = publishedRuntimeImageRef(`x:${hash}`, registry.address);
    const { repo, tag } = splitTag(published);
    // The commit keeps the runtime image's own entrypoint, command and user, not this container's.
    const config = (await ns.docker.getImage(base).inspect()).Config;
    await c.commit({
      repo,
      tag,
      changes: [
        `LABEL ${RUNTIME_IMAGE_LABELS.contextHash}=${label}`,
        `ENTRYPOINT ${JSON.stringify(config.Entrypoint)}`,
        `CMD ${JSON.stringify(config.Cmd)}`,
        `USER ${config.User}`,
      ],
    });
    await c.remove({ force: true });
    await pushImage(ns.docker, published);
    // Gone locally: only the registry has it now.
    await ns.docker.getImage(published).remove({ noprune: false });
    assert.equal(await exists(published), false);
    return published;
  }

  it('pulls the published image (not built), tags it as the runtime image, and a container runs it', async () => {
    const published = await publish(8 << 20);
    const ref = localTag();
    const log: string[] = [];
    const progress: ImageProgress[] = [];
    const outcome = await ensureRuntimeImage(ctx(log), {
      ref,
      pull: 'auto',
      ours: true,
      publishedRef: published,
      contextRoot: repoRoot(),
      buildArgs: TEST_BUILD_ARGS,
      onLog: (l) => log.push(l),
      onProgress: (p) => progress.push(p),
    });
    assert.deepEqual(outcome, { how: 'pulled', from: published });
    assert.ok(!log.some((l) => /^Step \d+\/\d+/.test(l)), 'nothing was built');
    // Podman's pull stream counts layers but carries no byte counts (docs/engines.md).
    const expected =
      TEST_ENGINE === 'podman'
        ? /^Pulling the runtime image: \d+ of \d+ layers/
        : /^Pulling the runtime image: \d+ of \d+ layers, .* MB of .* MB$/;
    assert.ok(
      progress.some((p) => expected.test(p.message)),
      progress.map((p) => p.message).join('\n'),
    );
    assert.equal(progress.at(-1)?.percent, 100);
    // The registry's name is not left behind; the runtime tag carries the pulled layer.
    assert.equal(await exists(published), false);
    const c = await ns.docker.createContainer({
      name: `${ns.names.prefix}-pulled`,
      Image: ref,
      User: '4242:4242',
      Cmd: ['bash', '-c', 'whoami && test -s /opt/published-layer && command -v code git python3'],
      Labels: { [TEST_LABEL]: ns.names.prefix },
      HostConfig: { NetworkMode: 'none' },
    });
    await c.start();
    const { StatusCode } = (await c.wait()) as { StatusCode: number };
    const out = demux((await c.logs({ stdout: true, stderr: true, follow: false })) as unknown as Buffer);
    assert.equal(StatusCode, 0, out);
    assert.match(out, /toolbox/);
    assert.match(out, /\/usr\/local\/bin\/code/);

    // Warm path: the tag exists, so no registry is asked (this one is stopped for a moment).
    const again = await ensureRuntimeImage(ctx([]), {
      ref,
      pull: 'auto',
      ours: true,
      publishedRef: `127.0.0.1:1/${RUNTIME_IMAGE_PUBLISHED.path}:${hash}`,
      contextRoot: repoRoot(),
    });
    assert.deepEqual(again, { how: 'present' });
  });

  it('pulls a multi-platform index with attestations, as runtime-image.yml publishes it with BuildKit', async () => {
    // The label is the check after a pull, not an image id: the engine takes its own platform's
    // manifest from the index and skips the unknown/unknown attestation manifests.
    const published = await publish(1024);
    const platforms = await republishAsMultiPlatformIndex(published);
    assert.deepEqual(platforms.filter((p) => p.startsWith('unknown')).length, 2, platforms.join(', '));
    const ref = localTag();
    const log: string[] = [];
    const outcome = await ensureRuntimeImage(ctx(log), {
      ref,
      pull: 'auto',
      ours: true,
      publishedRef: published,
      contextRoot: repoRoot(),
      buildArgs: TEST_BUILD_ARGS,
      onLog: (l) => log.push(l),
    });
    assert.deepEqual(outcome, { how: 'pulled', from: published }, log.join('\n'));
    const info = await ns.docker.getImage(ref).inspect();
    assert.equal(info.Architecture, process.arch === 'arm64' ? 'arm64' : 'amd64');
    assert.equal(info.Config.Labels?.[RUNTIME_IMAGE_LABELS.contextHash], hash);
  });

  it("follows upstream's pull policy: never asks no registry, always pulls over a present image", async () => {
    const published = await publish(1024);
    // never: builds although the registry has the image.
    const neverRef = localTag();
    const neverLog: string[] = [];
    const never = await ensureRuntimeImage(ctx(neverLog), {
      ref: neverRef,
      pull: 'never',
      ours: true,
      publishedRef: published,
      contextRoot: repoRoot(),
      buildArgs: TEST_BUILD_ARGS,
      onLog: (l) => neverLog.push(l),
    });
    assert.deepEqual(never, { how: 'built', pullFailed: undefined });
    assert.ok(!neverLog.some((l) => /pull/i.test(l)), neverLog.join('\n'));
    // always: the tag is present, and the pull still replaces it with the published image.
    const always = await ensureRuntimeImage(ctx([]), {
      ref: neverRef,
      pull: 'always',
      ours: true,
      publishedRef: published,
      contextRoot: repoRoot(),
    });
    assert.deepEqual(always, { how: 'pulled', from: published });
    const probe = await ns.docker.createContainer({
      name: `${ns.names.prefix}-always`,
      Image: neverRef,
      Cmd: ['test', '-s', '/opt/published-layer'],
      Labels: { [TEST_LABEL]: ns.names.prefix },
      HostConfig: { NetworkMode: 'none' },
    });
    await probe.start();
    assert.equal(((await probe.wait()) as { StatusCode: number }).StatusCode, 0);
    // always, registry down: the present image is kept.
    const kept = await ensureRuntimeImage(ctx([]), {
      ref: neverRef,
      pull: 'always',
      ours: true,
      publishedRef: `127.0.0.1:1/${RUNTIME_IMAGE_PUBLISHED.path}:${hash}`,
      contextRoot: repoRoot(),
    });
    assert.deepEqual(kept, { how: 'present' });
  });

  it('builds instead when the registry answers 404, and says so in the log', async () => {
    const ref = localTag();
    const log: string[] = [];
    const missing = `${registry.address}/${RUNTIME_IMAGE_PUBLISHED.path}:000000000000`;
    const outcome = await ensureRuntimeImage(ctx(log), {
      ref,
      pull: 'auto',
      ours: true,
      publishedRef: missing,
      contextRoot: repoRoot(),
      buildArgs: TEST_BUILD_ARGS,
      onLog: (l) => log.push(l),
    });
    assert.equal(outcome.how, 'built');
    assert.match(
      log.join('\n'),
      new RegExp(
        `Could not pull ${missing.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')} \\(.*(not found|manifest unknown).*\\)\\. Building the runtime image on this machine instead\\.`,
        'i',
      ),
    );
    assert.equal(await exists(ref), true);
  });

  it('builds instead when the registry is down, and says so', async () => {
    const ref = localTag();
    const log: string[] = [];
    // Port 1 on loopback: nothing listens, the connection is refused.
    await ensureImage(ctx(log), {
      ref,
      pull: 'auto',
      ours: true,
      publishedRef: `127.0.0.1:1/${RUNTIME_IMAGE_PUBLISHED.path}:${hash}`,
      contextRoot: repoRoot(),
      buildArgs: TEST_BUILD_ARGS,
      onLog: (l) => log.push(l),
    });
    assert.match(
      log.join('\n'),
      /Could not pull 127\.0\.0\.1:1\/.*connection refused.*Building the runtime image on this machine instead/is,
    );
    assert.equal(await exists(ref), true);
  });

  it('refuses a published image built from another context, and builds', async () => {
    const published = await publish(1024, 'ffffffffffff');
    const ref = localTag();
    const log: string[] = [];
    const outcome = await ensureRuntimeImage(ctx(log), {
      ref,
      pull: 'auto',
      ours: true,
      publishedRef: published,
      contextRoot: repoRoot(),
      buildArgs: TEST_BUILD_ARGS,
      onLog: (l) => log.push(l),
    });
    assert.equal(outcome.how, 'built');
    assert.match(log.join('\n'), /built from another context/);
    assert.equal(await exists(published), false);
  });

  it('leaves no image under the runtime tag when a pull is cancelled', async () => {
    const published = await publish(96 << 20);
    const ref = localTag();
    const abort = new AbortController();
    await assert.rejects(
      ensureRuntimeImage(ctx([]), {
        ref,
        pull: 'auto',
        ours: true,
        publishedRef: published,
        contextRoot: repoRoot(),
        buildArgs: TEST_BUILD_ARGS,
        // Cancel as soon as bytes arrive, like a user pressing Cancel mid-download (Podman's
        // pull reports layers, not bytes: there, as soon as a layer is on its way).
        onProgress: (p) => {
          if ((TEST_ENGINE === 'podman' ? /layers/ : /MB of/).test(p.message)) abort.abort();
        },
        signal: abort.signal,
      }),
      (err: Error) => err.name === 'AbortError',
    );
    assert.equal(abort.signal.aborted, true);
    assert.equal(await exists(ref), false);
    assert.equal(await exists(published), false);
    // Nor later, once the engine has settled.
    await new Promise((r) => setTimeout(r, 3000));
    assert.equal(await exists(ref), false);
    assert.equal(await exists(published), false);
  });

  it('leaves no image under the runtime tag when a build is cancelled', async () => {
    const ref = localTag();
    const abort = new AbortController();
    const steps: string[] = [];
    // A build without cache leaves intermediate images that the classic builder then offers as
    // cache for the same steps; later builds of the shared test context may take them and miss
    // the rest of the cache. This test removes the ones it made.
    const existing = new Set((await ns.docker.listImages({ all: true })).map((i) => i.Id));
    after(async () => {
      const made = (await ns.docker.listImages({ all: true }))
        .filter((i) => !existing.has(i.Id) && (i.RepoTags ?? []).every((t) => t === '<none>:<none>'))
        .sort((a, b) => b.Created - a.Created);
      for (const image of made)
        await ns.docker
          .getImage(image.Id)
          .remove({ noprune: true })
          .catch(() => undefined);
    });
    await assert.rejects(
      buildRuntimeImage(ns.docker, {
        contextRoot: repoRoot(),
        tag: ref,
        buildArgs: TEST_BUILD_ARGS,
        noCache: true,
        networkMode: 'host',
        // Cancel when the apt step starts: the build is then really running a container.
        onProgress: (p) => {
          steps.push(p.message);
          if (/\(RUN apt-get/.test(p.message)) abort.abort();
        },
        signal: abort.signal,
      }),
      (err: Error) => err.name === 'AbortError',
    );
    assert.ok(
      steps.some((s) => /RUN apt-get/.test(s)),
      steps.join('\n'),
    );
    assert.equal(await exists(ref), false);
    await new Promise((r) => setTimeout(r, 3000));
    assert.equal(await exists(ref), false);
  });

  it('prunes old runtime images of our repository after a rebuild, never one a container uses', async () => {
    const repo = `${ns.names.prefix}-prune/runtime`;
    const keep = `${repo}:${hash}`;
    const oldUnused = `${repo}:aaaaaaaaaaaa`;
    const oldUsed = `${repo}:bbbbbbbbbbbb`;
    const foreign = `${ns.names.prefix}-other/runtime:cccccccccccc`;
    images.push(keep, oldUnused, oldUsed, foreign);
    // Distinct images (one layer each), so removal is more than an untag.
    for (const ref of [oldUnused, oldUsed, foreign]) {
      const c = await ns.docker.createContainer({
        name: `${ns.names.prefix}-mk-${randomBytes(3).toString('hex')}`,
        Image: base,
        Cmd: ['true'],
        Labels: { [TEST_LABEL]: ns.names.prefix },
      });
      const { repo: r, tag } = splitTag(ref);
      await c.commit({ repo: r, tag });
      await c.remove({ force: true });
    }
    await ns.docker.getImage(base).tag(splitTag(keep));
    // A stopped container still uses oldUsed.
    await ns.docker.createContainer({
      name: `${ns.names.prefix}-user`,
      Image: oldUsed,
      Cmd: ['true'],
      Labels: { [TEST_LABEL]: ns.names.prefix },
    });
    const { pruned, inUse } = await pruneRuntimeImages(ns.docker, keep, []);
    assert.deepEqual(pruned, [oldUnused]);
    assert.deepEqual(inUse, [oldUsed]);
    assert.equal(await exists(keep), true);
    assert.equal(await exists(oldUnused), false);
    assert.equal(await exists(oldUsed), true);
    assert.equal(await exists(foreign), true);
  });
});
