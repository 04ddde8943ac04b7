/**
 * The egress policy on a real engine (issue 30, docs/decisions/0056-egress-through-a-host-proxy.md),
 * every attack made from inside a real container, as root. A folder in `allowlist` mode gets a
 * container with no network but its loopback; its forwarder relays to this window's proxy, which
 * lets through what the policy allows and refuses the rest with the policy's words. The origin
 * server lives in a network namespace the test makes (test/support/netns.ts); host names reach the
 * proxy's lookup through the test's own table, since no test touches the host's resolver.
 *
 * Without root (the rootless Podman pass) the namespace cannot be made: the allowed destination is
 * then a server on the host's loopback, named by an explicit IP rule, and the name cases are skipped.
 */
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, get, type Server } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { EgressQuestion, SessionRecord, ShellSession } from '../../extension/src/backend/api';
import { EGRESS } from '../../extension/src/contract/egress';
import { LABELS } from '../../extension/src/contract/upstream';
import { objectNames } from '../../extension/src/contract/objects';
import { testBackend, type TestBackend } from '../support/backend';
import { docker, removeNamespaceObjects } from '../support/docker';
import { execIn } from '../support/exec';
import { ensureTestRuntimeImage } from '../support/image';
import { netnsAvailable, originNamespace, type OriginNamespace } from '../support/netns';
import { hardenedUserFile } from '../support/projectAttack';
import { standInSettings } from '../support/settings';

const progress = { step: () => undefined, log: () => undefined };

describe('egress policy: allowlist from a real container (real engine)', () => {
  const names = objectNames(`tbxe${Math.random().toString(16).slice(2, 8)}`);
  const withNetns = netnsAvailable();
  let dir: string;
  let home: string;
  let folder: string;
  let backend: TestBackend;
  let session: ShellSession;
  /** The held shell's record: what a reloaded window reattaches from. */
  let record: SessionRecord;
  let shell: { dispose(): void } | undefined;
  let origin: OriginNamespace | undefined;
  let loopback: Server;
  let loopbackPort: number;
  /** host:port the allowed server answers at, as the container names it. */
  let allowed: string;
  const questions: EgressQuestion[] = [];

  /** Runs a shell script in the container as root; its exit code and output. */
  async function root(script: string): Promise<{ code: number; out: string }> {
    const r = await execIn(docker().getContainer(session.id), ['sh', '-c', script], { user: '0' });
    return { code: r.code, out: `${r.stdout}${r.stderr}` };
  }

  before(async () => {
    const image = await ensureTestRuntimeImage();
    dir = mkdtempSync(join(tmpdir(), `${names.prefix}-egress-`));
    home = join(dir, 'home');
    folder = join(home, 'proj');
    mkdirSync(folder, { recursive: true });
    loopback = createServer((_req, res) => res.end('hello from the host loopback\n'));
    await new Promise<void>((resolve) => loopback.listen(0, '127.0.0.1', resolve));
    loopbackPort = (loopback.address() as { port: number }).port;
    if (withNetns) origin = await originNamespace(names.prefix.slice(4));
    allowed = origin ? `allowed.test:${origin.port}` : `127.0.0.1:${loopbackPort}`;
    const rules = origin ? ['allowed.test', 'rebind.test', 'loop.test', `${origin.address}:${origin.port}`, '169.254.169.254'] : [allowed];
    writeFileSync(
      join(home, '.toolbox.yaml'),
      `${hardenedUserFile(image)}peer_messaging: false\negress:\n  mode: allowlist\n  defaults: false\n  allow: ${JSON.stringify(rules)}\n`,
    );
    const table: Record<string, string[]> = origin
      ? {
          'allowed.test': [origin.address],
          'other.test': [origin.address],
          // An allowed name that resolves onto this host: DNS rebinding.
          'rebind.test': [origin.hostAddress],
          'loop.test': ['127.0.0.1'],
        }
      : {};
    backend = testBackend(names, home, {
      settings: standInSettings(),
      egressPrompter: { ask: async (q) => (questions.push(q), 'deny') },
      egress: { proxy: { lookup: async (host) => table[host] ?? [] } },
    });
    session = await (await backend.prepareShell({ folder })).open(progress, new AbortController().signal);
    const started = await session.start({ cols: 120, rows: 30 });
    record = started.record!;
    shell = started;
  });

  after(async () => {
    shell?.dispose();
    backend?.dispose();
    await removeNamespaceObjects(docker(), names).catch(() => undefined);
    origin?.close();
    loopback?.close();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it('makes a container with no network but loopback, labelled, with the proxy socket read-only', async () => {
    const info = await docker().getContainer(session.id).inspect();
    assert.equal(info.HostConfig.NetworkMode, 'none');
    assert.equal(info.Config.Labels[LABELS.egress], EGRESS.enforcedLabel);
    const mount = info.Mounts.find((m) => m.Destination === EGRESS.containerDir);
    assert.ok(mount && mount.RW === false, 'the proxy directory is bound read-only');
    const links = await root('cat /proc/net/dev | tail -n +3 | cut -d: -f1 | tr -d " "');
    assert.equal(links.out.trim(), 'lo', 'loopback is its only interface');
    // The container cannot replace the socket the host listens on.
    const swap = await root(`rm -f ${EGRESS.containerSocket} && echo removed`);
    assert.notEqual(swap.code, 0, swap.out);
  });

  it('lets an allowed host through the proxy variables (plain HTTP, and a CONNECT tunnel)', async () => {
    const path = origin ? '/hello' : '/';
    const plain = await root(`curl -sS --noproxy '' --max-time 20 http://${allowed}${path}`);
    assert.equal(plain.code, 0, plain.out);
    assert.match(plain.out, origin ? /hello from tbx/ : /hello from the host loopback/);
    // Plain HTTP in a tunnel goes to an IP rule; to a name a tunnel carries only TLS naming it or SSH.
    const literal = origin ? `${origin.address}:${origin.port}` : allowed;
    const tunnel = await root(`curl -sS --noproxy '' --proxytunnel --max-time 20 http://${literal}${path}`);
    assert.equal(tunnel.code, 0, tunnel.out);
    const log = backend.egressLog(session.name);
    const last = log.filter((e) => e.verdict === 'allowed').at(-1);
    assert.ok(last, JSON.stringify(log));
    assert.ok(last.bytesDown > 0, 'the log counts the bytes');
    if (origin) {
      const named = await root(`curl -sS --noproxy '' --proxytunnel --max-time 20 http://${allowed}${path}`);
      assert.notEqual(named.code, 0, named.out);
      const cut = backend.egressLog(session.name).at(-1);
      assert.equal(cut?.host, 'allowed.test', JSON.stringify(cut));
      assert.equal(cut.verdict, 'denied');
      assert.match(cut.reason, /its first bytes are neither a TLS ClientHello naming it \(SNI\) nor SSH/);
    }
  });

  it('refuses any other host with the policy’s message, and logs it', async () => {
    const target = origin ? `other.test:${origin.port}` : 'other.test:80';
    const r = await root(`curl -sS --noproxy '' --max-time 20 -w '\\n%{http_code}' http://${target}/`);
    assert.match(r.out, /egress policy \(allowlist\)/i, r.out);
    assert.match(r.out, /403$/);
    const tunnel = await root(`curl -sS --noproxy '' --max-time 20 https://${target}/`);
    assert.notEqual(tunnel.code, 0);
    assert.match(tunnel.out, /403/);
    const denied = backend.egressLog(session.name).filter((e) => e.verdict === 'denied');
    assert.ok(
      denied.some((e) => e.host === 'other.test'),
      JSON.stringify(denied),
    );
    assert.equal(questions.length, 0, 'allowlist mode never asks');
  });

  it('no trick gets out: no proxy, another proxy variable, raw sockets, DNS, IPv6, the socket itself', async () => {
    const dest = origin ? origin.address : '10.213.0.2';
    const port = origin ? origin.port : 80;
    const direct = await root(`curl -sS --noproxy '*' --max-time 5 http://${dest}:${port}/`);
    assert.notEqual(direct.code, 0, 'no route without the proxy');
    assert.match(direct.out, /unreachable|Couldn't connect|Failed to connect/i, direct.out);
    const unset = await root(`env -u HTTP_PROXY -u http_proxy -u ALL_PROXY -u all_proxy curl -sS --max-time 5 http://${dest}:${port}/`);
    assert.notEqual(unset.code, 0, unset.out);
    const py = (code: string) => root(`python3 - <<'PY'\n${code}\nPY`);
    const raw = await py(
      `import socket\ntry:\n    s = socket.socket(socket.AF_INET, socket.SOCK_RAW, socket.IPPROTO_ICMP)\n    s.sendto(b"\\x08\\x00\\xf7\\xff\\x00\\x00\\x00\\x00", ("${dest}", 0))\n    print("SENT")\nexcept OSError as e:\n    print("REFUSED", e)`,
    );
    assert.match(raw.out, /REFUSED/, raw.out);
    const dns = await py(
      `import socket\ntry:\n    socket.getaddrinfo("example.com", 443)\n    print("RESOLVED")\nexcept OSError as e:\n    print("REFUSED", e)\ntry:\n    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)\n    s.sendto(b"x", ("${dest}", 53))\n    print("SENT")\nexcept OSError as e:\n    print("REFUSED", e)`,
    );
    assert.doesNotMatch(dns.out, /RESOLVED|SENT/, dns.out);
    const v6 = await py(
      `import socket\ntry:\n    socket.create_connection(("fd00::1", 80), timeout=3)\n    print("CONNECTED")\nexcept OSError as e:\n    print("REFUSED", e)`,
    );
    assert.match(v6.out, /REFUSED/, v6.out);
    // The proxy's socket, spoken to directly: an origin-form request is no proxy request.
    const sock = await root(`curl -sS --max-time 5 --unix-socket ${EGRESS.containerSocket} -w '\\n%{http_code}' http://other.test/`);
    assert.match(sock.out, /400$/, sock.out);
  });

  it('never reaches cloud metadata or this host’s own addresses, whatever the rules say', async (t) => {
    const meta = await root(`curl -sS --noproxy '' --max-time 10 -w '\\n%{http_code}' http://169.254.169.254/latest/meta-data/`);
    assert.match(meta.out, /403$/, meta.out);
    if (!origin) return t.skip('needs the test network namespace (root)');
    for (const name of ['rebind.test', 'loop.test']) {
      const r = await root(`curl -sS --noproxy '' --max-time 10 -w '\\n%{http_code}' http://${name}:${origin.port}/hello`);
      assert.match(r.out, /403$/, `${name}: ${r.out}`);
      assert.doesNotMatch(r.out, /hello from/, 'nothing of the host was fetched');
    }
    const literal = await root(`curl -sS --noproxy '' --max-time 10 http://${origin.address}:${origin.port}/hello`);
    assert.match(literal.out, /hello from tbx/, 'an explicit IP rule is honoured');
  });

  it('publishes ports without a network: the host relays them into the container’s loopback, and the view lists them', async () => {
    const free = createServer();
    await new Promise<void>((resolve) => free.listen(0, '127.0.0.1', resolve));
    const hostPort = (free.address() as { port: number }).port;
    await new Promise((resolve) => free.close(resolve));
    const portsFolder = join(home, 'ports');
    mkdirSync(portsFolder, { recursive: true });
    const s = await (
      await backend.prepareShell({ folder: portsFolder, ports: [`127.0.0.1:${hostPort}:8080`] })
    ).open(progress, new AbortController().signal);
    const info = await docker().getContainer(s.id).inspect();
    assert.equal(info.HostConfig.NetworkMode, 'none');
    assert.deepEqual(info.HostConfig.PortBindings ?? {}, {}, 'the engine publishes nothing');
    // A server in the container, on its own loopback only.
    const server = await execIn(docker().getContainer(s.id), [
      'sh',
      '-c',
      'mkdir -p /tmp/www && echo "served from inside" > /tmp/www/index.html && (python3 -m http.server 8080 --bind 127.0.0.1 --directory /tmp/www >/dev/null 2>&1 &) && echo started',
    ]);
    assert.equal(server.code, 0, server.stderr);
    let body = '';
    for (let i = 0; i < 100 && !body.includes('served from inside'); i++) {
      body = await new Promise<string>((resolve) => {
        get({ host: '127.0.0.1', port: hostPort, path: '/' }, (res) => {
          let text = '';
          res.on('data', (c: Buffer) => (text += c.toString()));
          res.on('end', () => resolve(text));
        }).on('error', () => resolve(''));
      });
    }
    assert.match(body, /served from inside/);
    const row = (await backend.snapshot()).containers.find((c) => c.name === s.name);
    assert.deepEqual(
      row?.ports?.map((p) => `${p.hostIp}:${p.hostPort}->${p.containerPort}`),
      [`127.0.0.1:${hostPort}->8080`],
    );
  });

  it('never mounts the host’s own Docker socket under a policy, even with toolbox.dockerEndpoint: raw-socket', async () => {
    const rawHome = join(dir, 'raw-home');
    const rawFolder = join(rawHome, 'proj');
    mkdirSync(rawFolder, { recursive: true });
    // The docker-sock mount on, as upstream's default, and the raw socket asked for in the settings.
    writeFileSync(
      join(rawHome, '.toolbox.yaml'),
      `image: ${await ensureTestRuntimeImage()}\npeer_messaging: false\nmounts:\n  - {name: ssh, disabled: true}\negress:\n  mode: allowlist\n`,
    );
    const raw = testBackend(names, rawHome, {
      pathExists: () => true,
      settings: standInSettings({ dockerEndpoint: () => 'raw-socket', persistSessions: () => false }),
    });
    try {
      const s = await (await raw.prepareShell({ folder: rawFolder })).open(progress, new AbortController().signal);
      const info = await docker().getContainer(s.id).inspect();
      assert.equal(info.HostConfig.NetworkMode, 'none');
      assert.deepEqual(
        info.Mounts.filter((m) => m.Destination === '/var/run/docker.sock' || m.Destination.startsWith('/run/toolbox-docker')).map(
          (m) => m.Destination,
        ),
        [],
        'neither the host socket nor an endpoint',
      );
      const r = await execIn(docker().getContainer(s.id), ['sh', '-c', 'test -S /var/run/docker.sock && echo REACHED || echo NONE'], {
        user: '0',
      });
      assert.equal(r.stdout.trim(), 'NONE');
    } finally {
      raw.dispose();
    }
  });

  it('after a window reload, the container’s proxy is served again and the policy holds', async () => {
    shell?.dispose();
    backend.dispose();
    const down = await root(`curl -sS --noproxy '' --max-time 5 http://${allowed}/`);
    assert.notEqual(down.code, 0, 'no window, no way out');
    backend = testBackend(names, home, {
      settings: standInSettings(),
      egressPrompter: { ask: async (q) => (questions.push(q), 'deny') },
      egress: { proxy: { lookup: async (host) => (origin && host === 'allowed.test' ? [origin.address] : []) } },
    });
    const again = await backend.reattachShell(record);
    shell = again;
    // The proxy comes back beside the reattach (backend/sessions.ts restoreDockerEndpoint): poll for it.
    let ok: { code: number; out: string } | undefined;
    for (let i = 0; i < 100 && ok?.code !== 0; i++) {
      ok = await root(`curl -sS --noproxy '' --max-time 5 http://${allowed}${origin ? '/hello' : '/'}`);
    }
    assert.equal(ok?.code, 0, ok?.out);
    const denied = await root(`curl -sS --noproxy '' --max-time 10 -w '\\n%{http_code}' http://other.test:80/`);
    assert.match(denied.out, /403$/, denied.out);
  });
});
