import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer, type Server, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { MIN_API_VERSION, checkApiVersion, connectEngine, probeEngines } from '../../extension/src/engine/client';

const realSocket = process.env.TOOLBOX_TEST_DOCKER_SOCKET ?? '/var/run/docker.sock';

describe('connectEngine against real and broken endpoints', () => {
  let dir: string;
  let silent: Server;
  const held: Socket[] = [];

  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'tbx-client-'));
    // A socket that accepts connections and never says a word: a hung daemon.
    silent = createServer((s) => held.push(s));
    await new Promise<void>((resolve) => silent.listen(join(dir, 'silent.sock'), resolve));
  });

  after(async () => {
    for (const s of held) s.destroy();
    await new Promise<void>((resolve) => silent.close(() => resolve()));
    rmSync(dir, { recursive: true, force: true });
  });

  it('reaches the engine through the setting and reports its version', async () => {
    const conn = await connectEngine({ setting: `unix://${realSocket}`, env: {}, home: dir });
    assert.equal(conn.endpoint.source, 'setting');
    assert.match(conn.version, /^\d+\.\d+/);
    assert.match(conn.apiVersion, /^1\.\d+$/);
    const info = await conn.docker.ping();
    assert.equal(String(info), 'OK');
  });

  it('reaches the engine through the current Docker context in the config dir', async () => {
    const { mkdirSync, writeFileSync } = await import('node:fs');
    const { contextMetaPath } = await import('../../extension/src/engine/client');
    const configDir = join(dir, '.docker');
    const metaPath = contextMetaPath(configDir, 'testctx');
    mkdirSync(join(metaPath, '..'), { recursive: true });
    writeFileSync(join(configDir, 'config.json'), JSON.stringify({ currentContext: 'testctx' }));
    writeFileSync(metaPath, JSON.stringify({ Name: 'testctx', Endpoints: { docker: { Host: `unix://${realSocket}` } } }));
    const conn = await connectEngine({ env: {}, home: dir });
    assert.equal(conn.endpoint.source, 'context testctx');
    assert.equal(conn.endpoint.endpoint, `unix://${realSocket}`);
  });

  it('says no socket exists when the socket path is missing', async () => {
    const missing = join(dir, 'nothing-here.sock');
    await assert.rejects(connectEngine({ env: { DOCKER_HOST: `unix://${missing}` }, home: dir }), (err: Error) => {
      assert.equal(
        err.message,
        `Docker is not reachable at unix://${missing} (from DOCKER_HOST): no socket exists at ${missing} — ` +
          'is Docker installed and running? Start Docker, or set toolbox.dockerHost.',
      );
      return true;
    });
  });

  it('gives up on an endpoint that accepts but never answers, and says it timed out', async () => {
    const sock = join(dir, 'silent.sock');
    await assert.rejects(connectEngine({ setting: `unix://${sock}`, env: {}, home: dir, timeoutMs: 1500 }), (err: Error) => {
      assert.match(
        err.message,
        new RegExp(
          `^Docker is not reachable at unix://${sock} \\(from the toolbox\\.dockerHost setting\\): no answer within 1\\.5 s — ` +
            'the daemon may be hung, or the endpoint is not a Docker engine\\. Restart Docker, or correct toolbox\\.dockerHost\\.$',
        ),
      );
      return true;
    });
    assert.ok(held.length >= 1, 'the silent socket saw the connection attempt');
  });

  it('says the connection was refused when nothing listens on a TCP endpoint', async () => {
    const probe = createServer();
    await new Promise<void>((resolve) => probe.listen(0, '127.0.0.1', resolve));
    const port = (probe.address() as { port: number }).port;
    await new Promise<void>((resolve) => probe.close(() => resolve()));
    await assert.rejects(connectEngine({ setting: `tcp://127.0.0.1:${port}`, env: {}, home: dir }), (err: Error) => {
      assert.match(
        err.message,
        new RegExp(
          `at tcp://127\\.0\\.0\\.1:${port} \\(from the toolbox\\.dockerHost setting\\): connection refused — is the daemon running\\?`,
        ),
      );
      return true;
    });
  });

  it('finds the real engine among the usual sockets when nothing is configured, and it passes the API floor', async () => {
    const missing = join(dir, 'no-engine.sock');
    // A home without a docker config (an earlier test left a context in dir/.docker).
    const conn = await connectEngine({
      env: {},
      home: join(dir, 'clean-home'),
      platform: 'linux',
      wellKnown: [
        { label: 'Docker', endpoint: `unix://${missing}` },
        { label: 'Test', endpoint: `unix://${realSocket}` },
      ],
    });
    assert.equal(conn.endpoint.source, 'well-known Test');
    // The engine here (Docker 20.10: API 1.41) is at or above the floor; connectEngine checked it.
    assert.doesNotThrow(() => checkApiVersion(conn.apiVersion));
    const [major, minor] = conn.apiVersion.split('.').map(Number);
    const [fMajor, fMinor] = MIN_API_VERSION.split('.').map(Number);
    assert.ok(major! > fMajor! || (major === fMajor && minor! >= fMinor!), `API ${conn.apiVersion} >= ${MIN_API_VERSION}`);
  });

  it('offers the real engine in Select Engine with its version', async () => {
    const probes = await probeEngines({
      env: {},
      home: dir,
      platform: 'linux',
      wellKnown: [{ label: 'Test', endpoint: `unix://${realSocket}` }],
    });
    assert.equal(probes.length, 1);
    assert.match(probes[0]!.version ?? '', /^\d+\.\d+/);
    assert.equal(probes[0]!.problem, undefined);
  });
});
