import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import {
  MIN_API_VERSION,
  checkApiVersion,
  connectEngine,
  contextTlsPath,
  describeConnection,
  planEndpoints,
  probeEngines,
  resolveEndpoint,
  wellKnownSockets,
} from '../../extension/src/engine/client';

/** An HTTP server on a unix socket answering /_ping and /version like an engine would. */
async function fakeEngine(path: string, apiVersion: string, version = '99.0.0'): Promise<Server> {
  const server = createServer((req, res) => {
    const url = req.url ?? '';
    if (url.endsWith('/_ping')) {
      res.end('OK');
    } else if (url.endsWith('/version')) {
      res.setHeader('content-type', 'application/json');
      res.end(JSON.stringify({ Version: version, ApiVersion: apiVersion, MinAPIVersion: '1.12' }));
    } else {
      res.statusCode = 404;
      res.end('{"message":"page not found"}');
    }
  });
  await new Promise<void>((resolve) => server.listen(path, resolve));
  return server;
}

describe('resolveEndpoint with TLS material', () => {
  const meta = (host: string, skip = false) => JSON.stringify({ Name: 'x', Endpoints: { docker: { Host: host, SkipTLSVerify: skip } } });
  const config = JSON.stringify({ currentContext: 'remote' });

  it("uses the context's TLS directory, and speaks https when it holds certificates", () => {
    const r = resolveEndpoint({
      env: {},
      dockerConfigText: config,
      contextMetaText: meta('tcp://10.0.0.9:2375'),
      contextTlsDir: '/cfg/contexts/tls/abc/docker',
      platform: 'linux',
    });
    assert.equal(r.source, 'context remote');
    assert.deepEqual(r.options, { host: '10.0.0.9', port: 2375, protocol: 'https' });
    assert.equal(r.tlsDir, '/cfg/contexts/tls/abc/docker');
    assert.equal(r.skipTlsVerify, undefined);
  });

  it('honours SkipTLSVerify of the context, and ignores DOCKER_TLS_VERIFY for a context', () => {
    const skip = resolveEndpoint({
      env: { DOCKER_TLS_VERIFY: '1', DOCKER_CERT_PATH: '/elsewhere' },
      dockerConfigText: config,
      contextMetaText: meta('tcp://10.0.0.9:2376', true),
      contextTlsDir: '/t',
      platform: 'linux',
    });
    assert.equal(skip.skipTlsVerify, true);
    assert.equal(skip.tlsDir, '/t');
    const plain = resolveEndpoint({
      env: { DOCKER_TLS_VERIFY: '1' },
      dockerConfigText: config,
      contextMetaText: meta('tcp://10.0.0.9:2375'),
      platform: 'linux',
    });
    assert.deepEqual(plain.options, { host: '10.0.0.9', port: 2375, protocol: 'http' });
    assert.equal(plain.tlsDir, undefined);
  });

  it('takes the certificates from the docker config directory when DOCKER_CERT_PATH is unset', () => {
    const r = resolveEndpoint({
      env: { DOCKER_HOST: 'tcp://h:2376', DOCKER_TLS_VERIFY: '1' },
      dockerConfigDir: '/home/me/.docker',
      platform: 'linux',
    });
    assert.equal(r.options.protocol, 'https');
    assert.equal(r.tlsDir, '/home/me/.docker');
    const explicit = resolveEndpoint({
      env: { DOCKER_HOST: 'tcp://h:2376', DOCKER_CERT_PATH: '/certs' },
      dockerConfigDir: '/home/me/.docker',
      platform: 'linux',
    });
    assert.equal(explicit.tlsDir, '/certs');
    const plain = resolveEndpoint({ env: { DOCKER_HOST: 'tcp://h:2375' }, dockerConfigDir: '/home/me/.docker', platform: 'linux' });
    assert.equal(plain.tlsDir, undefined);
  });
});

describe('wellKnownSockets', () => {
  it('lists the default, rootless, Colima, OrbStack, Rancher Desktop and Podman sockets in that order', () => {
    const list = wellKnownSockets('/home/me', { XDG_RUNTIME_DIR: '/run/user/1000' }, 'linux');
    assert.deepEqual(
      list.map((s) => `${s.label} ${s.endpoint}`),
      [
        'Docker unix:///var/run/docker.sock',
        'rootless Docker unix:///run/user/1000/docker.sock',
        'Colima unix:///home/me/.colima/default/docker.sock',
        'Colima unix:///home/me/.colima/docker.sock',
        'OrbStack unix:///home/me/.orbstack/run/docker.sock',
        'Rancher Desktop unix:///home/me/.rd/docker.sock',
        'Podman unix:///run/user/1000/podman/podman.sock',
        'Podman unix:///run/podman/podman.sock',
      ],
    );
  });

  it('leaves out the XDG_RUNTIME_DIR sockets when it is unset, and uses the pipe on Windows', () => {
    const list = wellKnownSockets('/home/me', {}, 'linux').map((s) => s.endpoint);
    assert.ok(!list.some((e) => e.includes('/run/user/')));
    assert.equal(list.at(-1), 'unix:///run/podman/podman.sock');
    assert.deepEqual(
      wellKnownSockets('C:\\Users\\me', {}, 'win32').map((s) => s.endpoint),
      ['npipe:////./pipe/docker_engine'],
    );
  });
});

describe('checkApiVersion', () => {
  it('accepts the floor and newer, refuses older and non-versions with what to do', () => {
    assert.equal(MIN_API_VERSION, '1.41');
    checkApiVersion('1.41');
    checkApiVersion('1.43');
    checkApiVersion('2.0');
    assert.throws(
      () => checkApiVersion('1.40'),
      (err: Error) => {
        assert.equal(
          err.message,
          'Docker Engine API 1.40 is older than the oldest supported (1.41): update Docker (20.10 or newer) or Podman (4.3 or newer), ' +
            'or point toolbox.dockerHost at a newer engine.',
        );
        return true;
      },
    );
    assert.throws(() => checkApiVersion('1.9'), /API 1\.9 is older/);
    assert.throws(() => checkApiVersion(undefined), /"undefined", which is not a Docker Engine API version/);
    assert.throws(() => checkApiVersion('1.41; rm -rf'), /is not a Docker Engine API version/);
  });
});

describe('endpoints from fixture docker config directories and fake engines', () => {
  let dir: string;
  const servers: Server[] = [];
  let good: string;
  let old: string;
  let refused: string;
  let missing: string;

  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'tbx-endpoints-'));
    good = join(dir, 'good.sock');
    old = join(dir, 'old.sock');
    refused = join(dir, 'refused.sock');
    missing = join(dir, 'missing.sock');
    servers.push(await fakeEngine(good, '1.41', '20.10.24'));
    servers.push(await fakeEngine(old, '1.40', '19.03.15'));
    // A file where a socket should be: connecting to it is refused.
    writeFileSync(refused, '');
  });

  after(async () => {
    for (const s of servers) await new Promise<void>((resolve) => s.close(() => resolve()));
    rmSync(dir, { recursive: true, force: true });
  });

  it('reads the current context, its endpoint and its TLS directory from DOCKER_CONFIG', async () => {
    const cfg = join(dir, 'cfg');
    const digest = createHash('sha256').update('secure').digest('hex');
    mkdirSync(join(cfg, 'contexts', 'meta', digest), { recursive: true });
    mkdirSync(join(cfg, 'contexts', 'tls', digest, 'docker'), { recursive: true });
    writeFileSync(join(cfg, 'config.json'), JSON.stringify({ currentContext: 'secure' }));
    writeFileSync(
      join(cfg, 'contexts', 'meta', digest, 'meta.json'),
      JSON.stringify({ Name: 'secure', Endpoints: { docker: { Host: 'tcp://build.example:2375', SkipTLSVerify: true } } }),
    );
    writeFileSync(join(cfg, 'contexts', 'tls', digest, 'docker', 'ca.pem'), 'not a real certificate');
    const plan = await planEndpoints({ env: { DOCKER_CONFIG: cfg }, home: dir, platform: 'linux', wellKnown: [] });
    assert.equal(contextTlsPath(cfg, 'secure'), join(cfg, 'contexts', 'tls', digest, 'docker'));
    assert.equal(plan.configured?.source, 'context secure');
    assert.equal(plan.configured?.tlsDir, contextTlsPath(cfg, 'secure'));
    assert.equal(plan.configured?.skipTlsVerify, true);
    assert.deepEqual(plan.configured?.options, { host: 'build.example', port: 2375, protocol: 'https' });

    // DOCKER_CONTEXT=default wins over currentContext: nothing is configured, the sockets are tried.
    const none = await planEndpoints({ env: { DOCKER_CONFIG: cfg, DOCKER_CONTEXT: 'default' }, home: dir, platform: 'linux' });
    assert.equal(none.configured, undefined);
    assert.equal(none.wellKnown[0]?.source, 'default');
  });

  it('tries the well-known sockets in order and connects to the first engine that answers and is new enough', async () => {
    const conn = await connectEngine({
      env: {},
      home: dir,
      platform: 'linux',
      wellKnown: [
        { label: 'Missing', endpoint: `unix://${missing}` },
        { label: 'Refusing', endpoint: `unix://${refused}` },
        { label: 'Old', endpoint: `unix://${old}` },
        { label: 'Good', endpoint: `unix://${good}` },
      ],
    });
    assert.equal(conn.endpoint.source, 'well-known Good');
    assert.equal(conn.apiVersion, '1.41');
    assert.equal(describeConnection(conn), `Docker 20.10.24 at unix://${good} (the Good socket)`);
  });

  it('names every socket tried, in order, with why each failed, when none answers', async () => {
    await assert.rejects(
      connectEngine({
        env: {},
        home: dir,
        platform: 'linux',
        wellKnown: [
          { label: 'Docker', endpoint: `unix://${missing}` },
          { label: 'Refusing', endpoint: `unix://${refused}` },
          { label: 'Old', endpoint: `unix://${old}` },
        ],
      }),
      (err: Error) => {
        assert.equal(
          err.message,
          'Docker is not reachable: nothing is configured (no toolbox.dockerHost, DOCKER_HOST or Docker context), and none of the usual ' +
            `sockets answered. Tried in order: (1) unix://${missing} (the platform default): no socket there; ` +
            `(2) unix://${refused} (the Refusing socket): connection refused; ` +
            `(3) unix://${old} (the Old socket): Docker Engine API 1.40 is older than the oldest supported (1.41). ` +
            'Start Docker (or Colima, OrbStack, Rancher Desktop, Podman), or set toolbox.dockerHost.',
        );
        return true;
      },
    );
  });

  it('refuses a configured engine older than the floor, and does not fall back to another socket', async () => {
    await assert.rejects(
      connectEngine({
        setting: `unix://${old}`,
        env: {},
        home: dir,
        platform: 'linux',
        wellKnown: [{ label: 'Good', endpoint: `unix://${good}` }],
      }),
      (err: Error) => {
        assert.equal(
          err.message,
          `Docker Engine API 1.40 at unix://${old} (from the toolbox.dockerHost setting) is older than the oldest supported (1.41): ` +
            'update Docker (20.10 or newer) or Podman (4.3 or newer), or point toolbox.dockerHost at a newer engine.',
        );
        return true;
      },
    );
  });

  it('lists the candidates for Select Engine with their version or problem, leaving out absent sockets', async () => {
    const probes = await probeEngines({
      env: { DOCKER_HOST: `unix://${good}` },
      home: dir,
      platform: 'linux',
      wellKnown: [
        { label: 'Docker', endpoint: `unix://${missing}` },
        { label: 'Good', endpoint: `unix://${good}` },
        { label: 'Old', endpoint: `unix://${old}` },
        { label: 'Refusing', endpoint: `unix://${refused}` },
      ],
    });
    assert.deepEqual(
      probes.map((p) => [p.endpoint.endpoint, p.endpoint.source, p.version ?? p.problem]),
      [
        [`unix://${good}`, 'DOCKER_HOST', '20.10.24'],
        [`unix://${old}`, 'well-known Old', 'Docker Engine API 1.40 is older than the oldest supported (1.41)'],
        [`unix://${refused}`, 'well-known Refusing', 'connection refused'],
      ],
    );
  });
});
