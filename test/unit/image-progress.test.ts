/**
 * Progress a person can read (issue #14): pull events folded into layers and bytes, build steps,
 * the notification's text with percent and elapsed time, and where the runtime image is pulled from.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { execFileSync } from 'node:child_process';
import { join } from 'node:path';
import { RUNTIME_IMAGE_PUBLISHED } from '../../extension/src/contract/image';
import { publishedRuntimeImageRef, runtimeImageLabels, runtimeImageTag, splitTag } from '../../extension/src/engine/imageBuild';
import { repoRoot } from '../support/image';
import { buildStepProgress, PullProgress } from '../../extension/src/engine/imageProgress';
import { formatElapsed, formatProgress, PhaseProgress } from '../../extension/src/ui/progress';

describe('pull progress', () => {
  it('counts layers done and bytes downloaded, as a percent of the bytes once every layer has a size', () => {
    const p = new PullProgress('the runtime image');
    assert.equal(p.update({ status: 'Pulling from toolbox-dev/toolbox-vscode-runtime', id: 'abc123' }), undefined);
    p.update({ status: 'Pulling fs layer', id: 'l1' });
    const waiting = p.update({ status: 'Pulling fs layer', id: 'l2' });
    assert.deepEqual(waiting, { message: 'Pulling the runtime image: 0 of 2 layers', percent: 0 });
    p.update({ status: 'Downloading', id: 'l1', progressDetail: { current: 1_000_000, total: 4_000_000 } });
    // l2 has no size yet: the layer count is the measure.
    assert.equal(p.report().percent, 0);
    const both = p.update({ status: 'Downloading', id: 'l2', progressDetail: { current: 0, total: 16_000_000 } });
    assert.equal(both?.message, 'Pulling the runtime image: 0 of 2 layers, 1.0 MB of 20 MB');
    assert.equal(both?.percent, 5);
    p.update({ status: 'Download complete', id: 'l1' });
    const done = p.update({ status: 'Pull complete', id: 'l1' });
    assert.equal(done?.message, 'Pulling the runtime image: 1 of 2 layers, 4.0 MB of 20 MB');
    assert.equal(done?.percent, 20);
    p.update({ status: 'Pull complete', id: 'l2' });
    assert.deepEqual(p.report(), { message: 'Pulling the runtime image: 2 of 2 layers, 20 MB of 20 MB', percent: 100 });
  });

  it('measures by bytes when only the layers the engine lacks have sizes', () => {
    const p = new PullProgress('the runtime image');
    for (let i = 0; i < 10; i++) p.update({ status: 'Already exists', id: `base${i}` });
    p.update({ status: 'Pulling fs layer', id: 'new' });
    assert.equal(p.report().percent, 90);
    const r = p.update({ status: 'Downloading', id: 'new', progressDetail: { current: 50_000_000, total: 200_000_000 } });
    assert.deepEqual(r, { message: 'Pulling the runtime image: 10 of 11 layers, 50 MB of 200 MB', percent: 25 });
  });

  it('counts layers the engine already has as done, and ignores digest and status lines', () => {
    const p = new PullProgress('x');
    p.update({ status: 'Already exists', id: 'base' });
    assert.equal(p.update({ status: 'Digest: sha256:00', id: undefined }), undefined);
    assert.equal(p.update({ status: 'Status: Downloaded newer image for x' }), undefined);
    assert.deepEqual(p.report(), { message: 'Pulling x: 1 of 1 layers', percent: 100 });
  });

  it('ends at every layer once the pull succeeded, though the stream never said so (Podman)', () => {
    const p = new PullProgress('x');
    for (const id of ['a', 'b', 'c']) p.update({ status: 'Pulling fs layer', id });
    p.update({ status: 'Download complete', id: 'a' });
    assert.equal(p.report().percent, 0);
    assert.deepEqual(p.complete(), { message: 'Pulling x: 3 of 3 layers', percent: 100 });
  });
});

describe('build progress', () => {
  it('names the step and counts the steps before it as done', () => {
    const r = buildStepProgress('the runtime image', 'Step 5/22 : RUN apt-get update  && apt-get install -y --no-install-recommends bash');
    assert.equal(r?.percent, 18);
    assert.match(r!.message, /^Building the runtime image: step 5 of 22 \(RUN apt-get update && apt-get install -y --no-i…\)$/);
    assert.equal(buildStepProgress('x', ' ---> Running in 1f753c3f4a0b'), undefined);
  });
});

describe('the notification text', () => {
  it('adds the percent and, after two seconds, the elapsed time', () => {
    assert.equal(formatProgress('Pulling', 41.7, 1500), 'Pulling · 41%');
    assert.equal(formatProgress('Building', undefined, 65_000), 'Building · 1:05');
    assert.equal(formatProgress('Building', 150, 9_000), 'Building · 100% · 9 s');
    assert.equal(formatElapsed(3_600_000), '60:00');
  });

  it('restarts the clock when the phase changes, not when the same phase reports again', () => {
    let now = 0;
    const reports: string[] = [];
    const phases = new PhaseProgress({ report: (v) => reports.push(v.message ?? '') }, () => now);
    try {
      phases.step('Pulling the runtime image: 0 of 3 layers', 0);
      now = 5_000;
      phases.step('Pulling the runtime image: 1 of 3 layers', 33);
      assert.equal(reports.at(-1), 'Pulling the runtime image: 1 of 3 layers · 33% · 5 s');
      phases.step('Building the runtime image: step 1 of 20 (FROM x)', 0);
      assert.equal(reports.at(-1), 'Building the runtime image: step 1 of 20 (FROM x) · 0%');
    } finally {
      phases.dispose();
    }
  });
});

describe('where the runtime image is pulled from', () => {
  it('keeps the local hash under the published path, and lets registry_mirror replace the registry', () => {
    const { registry, path } = RUNTIME_IMAGE_PUBLISHED;
    assert.equal(publishedRuntimeImageRef('toolbox-vscode/runtime:0123456789ab'), `${registry}/${path}:0123456789ab`);
    assert.equal(
      publishedRuntimeImageRef('toolbox-vscode-test/runtime:0123456789ab', 'harbor.corp.io/ghcr-proxy/'),
      `harbor.corp.io/ghcr-proxy/${path}:0123456789ab`,
    );
    assert.equal(publishedRuntimeImageRef('x/y:abc', '127.0.0.1:5000'), `127.0.0.1:5000/${path}:abc`);
  });

  it('splits a reference whose registry has a port', () => {
    assert.deepEqual(splitTag('127.0.0.1:5000/a/b:c1'), { repo: '127.0.0.1:5000/a/b', tag: 'c1' });
    assert.deepEqual(splitTag('127.0.0.1:5000/a/b'), { repo: '127.0.0.1:5000/a/b', tag: 'latest' });
  });
});

describe('scripts/runtime-image-tag.mjs (what the workflow publishes under)', () => {
  const run = (...args: string[]) =>
    execFileSync('node', [join(repoRoot(), 'scripts', 'runtime-image-tag.mjs'), ...args], { encoding: 'utf8' }).trim();

  it('prints the tag, published reference and label the extension computes', () => {
    const tag = runtimeImageTag(repoRoot(), {});
    assert.equal(run(), tag);
    assert.equal(run('--published'), publishedRuntimeImageRef(tag));
    assert.equal(run('--published', '--mirror', '127.0.0.1:5000'), publishedRuntimeImageRef(tag, '127.0.0.1:5000'));
    const [k, v] = Object.entries(runtimeImageLabels(repoRoot(), {}))[0]!;
    assert.equal(v, tag.slice(tag.lastIndexOf(':') + 1), 'the label is the hash the tag carries');
    assert.equal(run('--label'), `${k}=${v}`);
    assert.equal(run('--build-args', '{"INSTALL_AGENTS":"0"}'), runtimeImageTag(repoRoot(), { INSTALL_AGENTS: '0' }));
  });
});
