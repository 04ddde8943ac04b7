/**
 * Run Doctor on the real engine (issue 31, item 3): a window's backend opens a container of its
 * own (the test's name prefix, a temporary home) and the doctor gathers the real facts about the
 * engine, that container, the peer anchor and socket volume it made, and the runtime image, each
 * line judged by plan/doctor/. A second backend points at a socket that never answers: the
 * doctor ends with a warning line in bounded time, never a hang. Prints the report (the first
 * test's) so a run shows what the user reads.
 */
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { DoctorCheck, DoctorResult } from '../../extension/src/backend/api';
import { DOCTOR_LIMITS } from '../../extension/src/backend/doctor';
import { MIN_API_VERSION } from '../../extension/src/contract/constants';
import { RUNTIME_IMAGE_TEST_REPO } from '../../extension/src/contract/image';
import { objectNames } from '../../extension/src/contract/objects';
import { docker, removeNamespaceObjects, TEST_ENGINE } from '../support/docker';
import { testBackend, type TestBackend } from '../support/backend';
import { ensureTestRuntimeImage } from '../support/image';
import { standInSettings } from '../support/settings';

function line(result: DoctorResult, id: string): DoctorCheck {
  const found = result.checks.find((c) => c.id === id);
  assert.ok(found, `no check ${id} in:\n${result.text}`);
  return found;
}

describe('Run Doctor against the real engine (issue 31, item 3)', () => {
  const names = objectNames(`tbxt${Math.random().toString(16).slice(2, 8)}`);
  let home: string;
  let folder: string;
  const backends: TestBackend[] = [];
  let container = '';

  before(async () => {
    // The backend's own runtime image (no image: key), as a user's window asks for it: the test
    // image's layers make its build short when this machine does not have it yet.
    await ensureTestRuntimeImage();
    home = mkdtempSync(join(tmpdir(), 'tbxt-doctor-'));
    folder = join(home, 'project');
    mkdirSync(folder);
    writeFileSync(join(folder, 'README.md'), 'hello\n');
    writeFileSync(join(folder, '.toolbox.yaml'), '# the doctor test folder\n');
  });

  after(async () => {
    for (const b of backends) b.dispose();
    await removeNamespaceObjects(docker(), names).catch(() => undefined);
    rmSync(home, { recursive: true, force: true });
  });

  it('reports the engine, the container it opened, the peer objects and the runtime image', { timeout: 600_000 }, async () => {
    // No registry: the image is built here when missing (toolbox.runtimeImage.pull off).
    const backend = testBackend(names, home, { settings: standInSettings({ pullRuntimeImage: () => false }) });
    backends.push(backend);
    const prepared = await backend.prepareShell({ folder });
    container = prepared.container;
    const session = await prepared.open({ log: () => undefined, step: () => undefined }, new AbortController().signal);
    assert.equal(session.name, container);

    const started = Date.now();
    const result = await backend.doctor({ folders: [folder], vscodeVersion: '1.100.0-test' });
    const took = Date.now() - started;
    console.log(`--- the doctor's report (${took} ms) ---\n${result.text}--- redacted ---\n${result.redacted}---`);

    // The engine: reachable, how it was found, the product and the API against the floor.
    const reachable = line(result, 'engine.reachable');
    assert.equal(reachable.status, 'pass', reachable.detail);
    assert.match(reachable.detail, /^unix:\/\/\/.+, (found by probing the usual sockets|set in )/);
    const product = line(result, 'engine.product');
    assert.equal(product.status, 'pass');
    assert.match(product.detail, TEST_ENGINE === 'podman' ? /^Podman \d/ : /^Docker \d/);
    assert.match(product.detail, /\((rootful|rootless)\)/);
    const api = line(result, 'engine.api');
    assert.equal(api.status, 'pass');
    assert.match(api.detail, new RegExp(`the oldest supported is ${MIN_API_VERSION.replace('.', '\\.')}`));

    // The container it opened, measured (backend/transportFacts.ts): on this engine the shims
    // take the bridge's socket and the holder answers on its own from this host.
    const transports = line(result, `transports:${container}`);
    assert.equal(transports.status, 'pass', transports.detail);
    assert.match(
      transports.detail,
      /^Bridge: unix socket \(the bridge socket in the container’s run dir answers\)\. Sessions: holder socket \(/,
    );

    // Peer messaging's objects, made by the open under the test's prefix: running, ours, the user's.
    const anchor = line(result, 'peer.anchor');
    assert.equal(anchor.status, 'pass', anchor.detail);
    assert.equal(anchor.title, `Peer anchor ${names.anchor}`);
    const volume = line(result, 'peer.volume');
    assert.equal(volume.status, 'pass', volume.detail);
    assert.equal(volume.title, `Socket volume ${names.socketVolume}`);
    assert.match(volume.detail, /^Present/);
    const peer = line(result, `peer.folder:${folder}`);
    assert.equal(peer.status, 'pass', peer.detail);
    assert.match(peer.detail, /^On \(default\); the running containers agree\.$/);

    // The runtime image: the backend's own tag, present, built here, not stale.
    const image = result.checks.find((c) => c.id.startsWith(`image:${RUNTIME_IMAGE_TEST_REPO}:`));
    assert.ok(image, result.text);
    assert.equal(image.status, 'pass', image.detail);
    assert.match(
      image.detail,
      /present \(the content-hash tag this extension asks for\), (built on this machine|pulled from a registry); not stale/,
    );

    // What the open gave the container: its protected paths, its own Docker endpoint, the engine's network.
    assert.equal(line(result, `protected:${container}`).status, 'pass', line(result, `protected:${container}`).detail);
    const dockerLine = line(result, `docker:${container}`);
    assert.equal(dockerLine.status, 'pass', dockerLine.detail);
    assert.match(dockerLine.detail, /^Its own policy endpoint \(never the host's socket\), served by this window\.$/);
    assert.equal(line(result, `egress:${folder}`).status, 'info');
    assert.equal(line(result, `egress.container:${container}`).status, 'pass');

    // The counts say what the lines say; nothing failed.
    assert.equal(result.counts.failed, 0, result.text);
    assert.equal(
      result.summary,
      `Doctor: ${result.counts.passed} passed, ${result.counts.warnings} warning${result.counts.warnings === 1 ? '' : 's'}, 0 failed`,
    );
    assert.ok(took < DOCTOR_LIMITS.connectMs + DOCTOR_LIMITS.planMs, `took ${took} ms`);

    // The redacted copy: the temporary home is ~, the versions stay.
    assert.ok(!result.redacted.includes(home), 'no home path in the copy');
    assert.match(result.redacted, /Folders: ~\/project/);
    assert.match(result.redacted, /Toolbox for VS Code \d+\.\d+\.\d+ · VS Code 1\.100\.0-test · linux /);
  });

  describe('an engine that never answers', () => {
    let server: Server;
    const sockets: Socket[] = [];
    let socketPath = '';

    before(async () => {
      socketPath = join(home, 'silent.sock');
      // Accepts every connection and says nothing: a hung daemon.
      server = createServer((s) => void sockets.push(s));
      await new Promise<void>((resolve) => server.listen(socketPath, resolve));
    });

    after(async () => {
      for (const s of sockets) s.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    });

    it('ends with a warning line in bounded time, and skips what needs the engine', { timeout: 60_000 }, async () => {
      const backend = testBackend(names, home, {
        settings: standInSettings({ dockerHost: () => `unix://${socketPath}`, pullRuntimeImage: () => false }),
      });
      backends.push(backend);
      const started = Date.now();
      const result = await backend.doctor({ folders: [folder] });
      const took = Date.now() - started;
      const engine = line(result, 'engine.reachable');
      assert.equal(engine.status, 'warn', result.text);
      assert.equal(engine.title, 'Engine slow to answer');
      assert.match(engine.detail, /no answer within/);
      assert.match(engine.fix ?? '', /Toolbox: Select Engine…/);
      assert.ok(took < DOCTOR_LIMITS.connectMs + 2_000, `took ${took} ms`);
      // The rest is said, not waited for.
      assert.equal(line(result, 'peer.objects').status, 'info');
      assert.match(line(result, 'peer.objects').detail, /^Not checked: the engine is not reachable/);
      // What the folder's plan says is still there: its egress mode and protected paths.
      assert.equal(line(result, `egress:${folder}`).status, 'info');
      assert.equal(line(result, `protected:${folder}`).status, 'info');
    });
  });
});
