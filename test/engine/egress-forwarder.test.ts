/**
 * Issue 30: the egress forwarder in a real runtime-image container. The container has no network
 * but its loopback (NetworkMode none), as under an egress policy; a directory of this host is
 * bound read-only at EGRESS.containerDir with a stand-in proxy listening on the socket in it (a
 * node:net server that answers every request with a fixed response, and CONNECT with a tunnel).
 * The image's entrypoint starts the forwarder because ENV.egressSocket is set, and curl inside,
 * pointed at 127.0.0.1:EGRESS.proxyPort, reaches the stand-in: plain HTTP in absolute form and a
 * CONNECT tunnel. ssh, which reads no proxy variable, goes through the stand-in too, by the
 * image's ssh configuration and `toolbox-egress --connect`, with nothing configured by the test:
 * the stand-in refuses `CONNECT example.test:22` with a policy sentence (403), and ssh (and git
 * over SSH) shows it. The documented exec that starts the forwarder where the entrypoint did not
 * is harmless where it did.
 */
import assert from 'node:assert/strict';
import { chmodSync, mkdtempSync, rmSync } from 'node:fs';
import { createServer, type Server, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import type Docker from 'dockerode';
import { textResponse } from '../../extension/src/bridge/egressWire';
import { EGRESS } from '../../extension/src/contract/egress';
import { ENV } from '../../extension/src/contract/shims';
import { testNamespace, testUser } from '../support/docker';
import { execIn } from '../support/exec';
import { ensureTestRuntimeImage } from '../support/image';

const BODY = 'hello from the stand-in proxy';
const REFUSED = 'Toolbox egress policy (allowlist) refused example.test:22: no rule allows it. Allow it from VS Code.';
const RESPONSE = `HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nContent-Length: ${BODY.length}\r\nConnection: close\r\n\r\n${BODY}`;

/** Reads one request head; resolves with it, or with '' when the connection ends first. */
function readHead(sock: Socket, buffered: Buffer = Buffer.alloc(0)): Promise<{ head: string; rest: Buffer }> {
  return new Promise((resolve) => {
    let data = buffered;
    const check = (): boolean => {
      const end = data.indexOf('\r\n\r\n');
      if (end < 0) return false;
      sock.off('data', onData);
      sock.pause();
      resolve({ head: data.subarray(0, end).toString('latin1'), rest: data.subarray(end + 4) });
      return true;
    };
    const onData = (c: Buffer): void => {
      data = Buffer.concat([data, c]);
      check();
    };
    if (check()) return;
    sock.on('data', onData);
    sock.resume();
    sock.once('end', () => resolve({ head: '', rest: Buffer.alloc(0) }));
  });
}

describe('the egress forwarder in a network-less runtime container (issue 30)', () => {
  const ns = testNamespace();
  const dir = mkdtempSync(join(tmpdir(), `${ns.names.prefix}-egress-`));
  const socketPath = join(dir, EGRESS.socket);
  const seen: string[] = [];
  let server: Server;
  let container: Docker.Container;
  const open = new Set<Socket>();

  before(async () => {
    chmodSync(dir, 0o755);
    server = createServer((sock) => {
      open.add(sock);
      sock.on('close', () => open.delete(sock));
      sock.on('error', () => undefined);
      void (async () => {
        const { head, rest } = await readHead(sock);
        seen.push(head.split('\r\n')[0]);
        if (head.startsWith('CONNECT example.test:22 ')) {
          sock.end(textResponse(403, REFUSED));
          return;
        }
        if (head.startsWith('CONNECT ')) {
          sock.write('HTTP/1.1 200 Connection established\r\n\r\n');
          const inner = await readHead(sock, rest);
          seen.push(`tunnelled: ${inner.head.split('\r\n')[0]}`);
        }
        sock.end(RESPONSE);
      })();
    });
    await new Promise<void>((resolve) => server.listen(socketPath, resolve));
    // The container's user is not this test's: it must be able to connect.
    chmodSync(socketPath, 0o666);
    const image = await ensureTestRuntimeImage();
    const user = testUser(1000, 1000);
    container = await ns.docker.createContainer({
      name: `${ns.names.prefix}-egress`,
      Image: image,
      User: `${user.uid}:${user.gid}`,
      Env: [`${ENV.egressSocket}=${EGRESS.containerSocket}`],
      HostConfig: { NetworkMode: 'none', Binds: [`${dir}:${EGRESS.containerDir}:ro`] },
    });
    await container.start();
  });

  after(async () => {
    for (const sock of open) sock.destroy();
    await new Promise<void>((resolve) => (server ? server.close(() => resolve()) : resolve()));
    await ns.cleanup();
    rmSync(dir, { recursive: true, force: true });
  });

  /** curl inside the container through the forwarder; retried while the entrypoint is still starting it. */
  async function curl(args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
    const cmd = ['curl', '-sS', '--max-time', '10', '-x', `http://127.0.0.1:${EGRESS.proxyPort}`, ...args];
    for (let attempt = 0; ; attempt++) {
      const run = await execIn(container, cmd);
      // 7: nothing listens yet (the entrypoint's forwarder starts with the container).
      if (run.code !== 7 || attempt >= 50) return run;
      await new Promise((r) => setTimeout(r, 100));
    }
  }

  it('has no network but loopback', async () => {
    const links = await execIn(container, ['sh', '-c', 'ls /sys/class/net']);
    assert.equal(links.stdout.trim(), 'lo');
  });

  it('relays curl -x http://127.0.0.1:3128 to the proxy socket: plain HTTP in absolute form', async () => {
    const run = await curl(['http://example.invalid/']);
    assert.equal(run.code, 0, run.stderr);
    assert.equal(run.stdout, BODY);
    assert.ok(seen.includes('GET http://example.invalid/ HTTP/1.1'), `the stand-in saw ${JSON.stringify(seen)}`);
  });

  it('relays a CONNECT tunnel (curl -p): bytes after the proxy’s answer pass untouched', async () => {
    const run = await curl(['-p', 'http://example.invalid/tunnelled']);
    assert.equal(run.code, 0, run.stderr);
    assert.equal(run.stdout, BODY);
    assert.ok(seen.includes('CONNECT example.invalid:80 HTTP/1.1'), `the stand-in saw ${JSON.stringify(seen)}`);
    assert.ok(seen.includes('tunnelled: GET /tunnelled HTTP/1.1'), `the stand-in saw ${JSON.stringify(seen)}`);
  });

  it('sends ssh through the proxy with no configuration: CONNECT example.test:22, and the refusal’s sentence on stderr', async () => {
    await curl(['http://example.invalid/ready']); // the forwarder listens: the entrypoint is past its egress step
    const run = await execIn(container, ['ssh', '-o', 'BatchMode=yes', '-o', 'StrictHostKeyChecking=no', 'git@example.test', '-p', '22']);
    assert.equal(run.code, 255, run.stderr);
    assert.ok(seen.includes('CONNECT example.test:22 HTTP/1.1'), `the stand-in saw ${JSON.stringify(seen)}`);
    assert.match(run.stderr, /toolbox-egress: the egress proxy refused example\.test:22: HTTP\/1\.1 403 Forbidden/);
    assert.ok(run.stderr.includes(REFUSED), run.stderr);
    const log = await execIn(container, ['sh', '-c', 'cat "$HOME/.toolbox-state/init/entrypoint.log"']);
    assert.match(log.stdout, /ssh connects through the egress proxy \(\/etc\/ssh\/ssh_config\.d\/toolbox-egress\.conf\)/);
  });

  it('git over SSH gets the same: the sentence, and no other way out', async () => {
    const before = seen.filter((l) => l === 'CONNECT example.test:22 HTTP/1.1').length;
    const run = await execIn(container, ['git', 'ls-remote', 'git@example.test:org/repo.git']);
    assert.notEqual(run.code, 0);
    assert.ok(run.stderr.includes(REFUSED), run.stderr);
    assert.equal(seen.filter((l) => l === 'CONNECT example.test:22 HTTP/1.1').length, before + 1);
  });

  it('was started by the entrypoint, supervised, and logs to the init log dir', async () => {
    const log = await execIn(container, ['sh', '-c', 'cat "$HOME/.toolbox-state/init/egress.log"']);
    assert.equal(log.code, 0, log.stderr);
    assert.match(log.stdout, new RegExp(`listening on 127\\.0\\.0\\.1.* port ${EGRESS.proxyPort}, relaying to ${EGRESS.containerSocket}`));
    const ps = await execIn(container, ['ps', '-eo', 'args']);
    assert.equal(ps.stdout.split('\n').filter((l) => l.includes(`${EGRESS.forwarder} --supervise`)).length, 2, ps.stdout);
  });

  it('the documented exec start is harmless where the entrypoint started it: exit 0, nothing new', async () => {
    const run = await execIn(container, [EGRESS.forwarder, '--supervise', '--socket', EGRESS.containerSocket]);
    assert.equal(run.code, 0, run.stderr);
    assert.match(run.stderr, new RegExp(`a forwarder already serves port ${EGRESS.proxyPort} here`));
    const again = await curl(['http://example.invalid/again']);
    assert.equal(again.stdout, BODY);
  });
});
