/**
 * The peer-messaging regression gate (docs/decisions/0001-peer-messaging-on-by-default.md), against the real engine and the runtime image: two
 * peer-enabled containers share the socket directory (a real UNIX socket, bound then chmodded,
 * as Claude Code does) and a PID namespace (the first one's pid resolves in the second), and the
 * shared directory is 0700 and owned by the session user. A container outside the namespace is
 * the negative control: it must fail to resolve the pid, or the gate proves nothing.
 */
import assert from 'node:assert/strict';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import type Docker from 'dockerode';
import { ensureAnchor, ensureSocketVolume } from '../../extension/src/engine/peer';
import { inspectPeerState, readAgentSessions } from '../../extension/src/engine/peerState';
import { CONTAINER } from '../../extension/src/contract/upstream';
import { createAdapted } from '../../extension/src/engine/compat';
import { TEST_LABEL, testNamespace, testUser, type TestNamespace } from '../support/docker';
import { execIn as execCommand, type ExecResult } from '../support/exec';
import { ensureTestRuntimeImage } from '../support/image';

const { uid: UID, gid: GID } = testUser(4242, 4343);
const DIR = CONTAINER.peerSocketDir;

/** Binds <dir>/<pid>.sock, chmods it 0600, listens, says so, and answers every connection. */
const LISTENER = `
import os, socket
path = '${DIR}/%d.sock' % os.getpid()
s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
s.bind(path)
os.chmod(path, 0o600)
s.listen(4)
print('ready pid=%d' % os.getpid(), flush=True)
while True:
    c, _ = s.accept()
    c.sendall(b'hello from %d\\n' % os.getpid())
    c.close()
`;

const CONNECT = `
import socket, sys
s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
s.connect(sys.argv[1])
print(s.recv(100).decode().strip())
`;

/** Runs a command in a container (no TTY); output trimmed, as the assertions compare lines. */
async function execIn(container: Docker.Container, cmd: string[]): Promise<ExecResult> {
  const r = await execCommand(container, cmd);
  return { code: r.code, stdout: r.stdout.trim(), stderr: r.stderr.trim() };
}

async function logsOf(container: Docker.Container): Promise<string> {
  const raw = (await container.logs({ stdout: true, stderr: true, follow: false })) as unknown as Buffer;
  return raw.toString('latin1');
}

/** Waits (bounded) for the listener to print its pid; fails with the logs if it died. */
async function listenerPid(container: Docker.Container): Promise<number> {
  for (let attempt = 0; attempt < 600; attempt++) {
    const logs = await logsOf(container);
    const m = /ready pid=(\d+)/.exec(logs);
    if (m) return Number(m[1]);
    const info = await container.inspect();
    if (!info.State.Running) throw new Error(`The listener exited (${info.State.ExitCode}) before it was ready:\n${logs}`);
    await new Promise((r) => setTimeout(r, 200));
  }
  throw new Error(`The listener never reported ready:\n${await logsOf(container)}`);
}

describe('peer messaging regression gate', () => {
  let ns: TestNamespace;
  let image: string;
  let anchorId: string;
  let first: Docker.Container;
  let second: Docker.Container;
  let outsider: Docker.Container;
  let pid: number;
  const sockPath = () => `${DIR}/${pid}.sock`;

  const session = async (suffix: string, cmd: string[], peer: boolean) => {
    // Through the engine adapter, as the extension's own shells (the user namespace on rootless Podman).
    const c = await createAdapted(ns.docker, {
      name: `${ns.names.prefix}-named-${suffix}`,
      Image: image,
      Cmd: cmd,
      User: `${UID}:${GID}`,
      Labels: { [TEST_LABEL]: ns.names.prefix },
      HostConfig: {
        AutoRemove: false,
        NetworkMode: 'none',
        Binds: [`${ns.names.socketVolume}:${DIR}`],
        ...(peer ? { PidMode: `container:${ns.names.anchor}` } : {}),
      },
    });
    await c.start();
    return c;
  };

  before(async () => {
    ns = testNamespace();
    image = await ensureTestRuntimeImage();
    const ctx = { docker: ns.docker, names: ns.names, log: () => undefined };
    anchorId = await ensureAnchor(ctx, image);
    await ensureSocketVolume(ctx, image, UID, GID);
    first = await session('peer-a', ['python3', '-c', LISTENER], true);
    second = await session('peer-b', ['sleep', 'infinity'], true);
    outsider = await session('outsider', ['sleep', 'infinity'], false);
    pid = await listenerPid(first);
  });

  after(async () => {
    await ns.cleanup();
  });

  it("shows the first container's bound and chmodded socket to the second", async () => {
    assert.equal((await execIn(second, ['test', '-S', sockPath()])).code, 0, `${sockPath()} is a socket in the second container`);
    assert.equal((await execIn(second, ['stat', '-c', '%a %u:%g', sockPath()])).stdout, `600 ${UID}:${GID}`);
    const reply = await execIn(second, ['python3', '-c', CONNECT, sockPath()]);
    assert.equal(reply.stdout, `hello from ${pid}`, reply.stderr);
  });

  it("resolves the first container's pid from the second (shared PID namespace)", async () => {
    const kill0 = await execIn(second, ['sh', '-c', 'kill -0 "$1"', 'sh', String(pid)]);
    assert.equal(kill0.code, 0, kill0.stderr);
    const cmdline = await execIn(second, ['cat', `/proc/${pid}/cmdline`]);
    assert.match(cmdline.stdout, /^python3\0-c\0/);
  });

  it('keeps the shared directory 0700 and owned by the session user', async () => {
    assert.equal((await execIn(second, ['stat', '-c', '%a %u:%g', DIR])).stdout, `700 ${UID}:${GID}`);
  });

  it('negative control: a container outside the namespace sees the socket but cannot resolve the pid', async () => {
    assert.equal((await execIn(outsider, ['test', '-S', sockPath()])).code, 0);
    assert.notEqual((await execIn(outsider, ['sh', '-c', 'kill -0 "$1"', 'sh', String(pid)])).code, 0);
    const cmdline = await execIn(outsider, ['cat', `/proc/${pid}/cmdline`]);
    assert.doesNotMatch(cmdline.stdout, /python3/);
  });

  it("inspectPeerState reports the running anchor, the volume's owner and mode, and exactly the two members", async () => {
    const state = await inspectPeerState({ docker: ns.docker, names: ns.names });
    assert.equal(state.anchor.state, 'running');
    assert.equal(state.anchor.id, anchorId);
    assert.equal(state.anchor.image, image);
    assert.equal(state.volume.exists, true);
    assert.equal(state.volume.owner, `${UID}:${GID}`);
    assert.equal(state.volume.mode, '0700');
    assert.ok(state.volume.mountpoint?.startsWith('/'));
    assert.deepEqual(state.members, [`${ns.names.prefix}-named-peer-a`, `${ns.names.prefix}-named-peer-b`]);
  });

  it('inspectPeerState reports a missing anchor and volume in an empty namespace', async () => {
    const empty = testNamespace();
    try {
      assert.deepEqual(await inspectPeerState({ docker: empty.docker, names: empty.names }), {
        anchor: { state: 'missing' },
        volume: { exists: false },
        members: [],
      });
    } finally {
      await empty.cleanup();
    }
  });
});

describe('readAgentSessions', () => {
  let ns: TestNamespace;
  before(() => {
    ns = testNamespace();
  });
  after(async () => {
    await ns.cleanup();
  });

  it('reads every <pid>.json it can parse and skips the rest without throwing', async () => {
    const claudeHome = join(ns.home, '.toolbox', '.claude');
    const dir = join(claudeHome, 'sessions');
    mkdirSync(dir, { recursive: true });
    writeFileSync(
      join(dir, '41.json'),
      JSON.stringify({
        pid: 41,
        sessionId: 's-41',
        cwd: '/workspace',
        name: 'api',
        messagingSocketPath: `${DIR}/41.sock`,
        startedAt: 1764676800000,
        pidDomain: 'x',
      }),
    );
    writeFileSync(join(dir, '7.json'), JSON.stringify({ pid: 7, cwd: 42, startedAt: '2026-01-01T00:00:00Z' }));
    writeFileSync(join(dir, '8.json'), '{"pid": 8,');
    writeFileSync(join(dir, '9.json'), JSON.stringify({ sessionId: 'no pid' }));
    writeFileSync(join(dir, 'notes.txt'), 'not a session');
    mkdirSync(join(dir, '10.json'));
    assert.deepEqual(await readAgentSessions(claudeHome), [
      { pid: 7, startedAt: '2026-01-01T00:00:00Z' },
      { pid: 41, sessionId: 's-41', cwd: '/workspace', name: 'api', messagingSocketPath: `${DIR}/41.sock`, startedAt: 1764676800000 },
    ]);
  });

  it('returns no sessions when the registry directory does not exist', async () => {
    assert.deepEqual(await readAgentSessions(join(ns.home, 'nowhere')), []);
  });
});
