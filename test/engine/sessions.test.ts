/**
 * The session holder in the real runtime image, reached the way the extension reaches it: the
 * socket in a bind-mounted run dir straight from the host, and the exec transport. Shells keep
 * running (same pid) while detached, bytes pass through untouched both ways, a full-screen
 * program is redrawn on reattach, and killing a session ends its process. A container created with
 * ENV.sessionSocket has its holder started by the image's entrypoint: reached with no exec at all,
 * and an exec's ensure racing it starts no second one (docs/decisions/0032-session-holder-started-with-the-container.md).
 */
import assert from 'node:assert/strict';
import { chownSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import type Docker from 'dockerode';
import { createAdapted } from '../../extension/src/engine/compat';
import { CONTAINER } from '../../extension/src/contract/upstream';
import { ENV } from '../../extension/src/contract/shims';
import { imageStartsHolder } from '../../extension/src/engine/image';
import {
  attachHeldSession,
  ensureHolder,
  execTransport,
  holderAddress,
  HolderUnavailableError,
  listHeldSessions,
  reachHolder,
  SessionEndedError,
  startHeldSession,
  type HeldSession,
  type HolderAddress,
  type HolderTransport,
} from '../../extension/src/engine/sessions';
import { TEST_LABEL, TEST_ROOTLESS, testNamespace, testUser, type TestNamespace } from '../support/docker';
import { execIn } from '../support/exec';
import { ensureTestRuntimeImage } from '../support/image';

/** The container runs as uid 1000 (the runtime image's user), owning the mounted run dir. */
const ids = testUser(1000, 1000);
const USER = `${ids.uid}:${ids.gid}`;

/** Everything a session printed, as it arrives. */
function collect(session: HeldSession) {
  const chunks: Buffer[] = [];
  session.stream.on('data', (c: Buffer) => chunks.push(c));
  return {
    get bytes() {
      return Buffer.concat(chunks);
    },
    get text() {
      return Buffer.concat(chunks).toString('latin1');
    },
    async waitFor(pattern: RegExp, timeoutMs = 15_000): Promise<RegExpExecArray> {
      const end = Date.now() + timeoutMs;
      for (;;) {
        const m = pattern.exec(Buffer.concat(chunks).toString('latin1'));
        if (m) return m;
        if (Date.now() > end)
          throw new Error(`never saw ${pattern}; got ${JSON.stringify(Buffer.concat(chunks).toString('latin1').slice(-400))}`);
        await new Promise((r) => setTimeout(r, 20));
      }
    },
  };
}

const COUNTER = ['sh', '-c', 'i=0; while :; do i=$((i+1)); echo "tick $i pid $$"; sleep 0.1; done'];

describe('session holder in the runtime image', () => {
  let ns: TestNamespace;
  let image: string;
  let runDir: string;
  let container: Docker.Container;
  let address: HolderAddress;
  let direct: HolderTransport;

  before(async () => {
    ns = testNamespace();
    image = await ensureTestRuntimeImage();
    runDir = mkdtempSync(join(tmpdir(), 'tbxt-run-'));
    chownSync(runDir, ids.uid, ids.gid);
    // Through the engine adapter, as the extension's own containers (the user namespace on rootless Podman).
    container = await createAdapted(ns.docker, {
      name: `${ns.names.prefix}-sessions`,
      Image: image,
      User: USER,
      Labels: { [TEST_LABEL]: '1' },
      HostConfig: { Binds: [`${runDir}:${CONTAINER.bridgeRunDir}`], NetworkMode: 'none', AutoRemove: false },
    });
    await container.start();
    address = holderAddress(runDir, USER);
    direct = await reachHolder(ns.docker, container.id, address);
  });

  after(async () => {
    await ns?.cleanup();
    if (runDir) rmSync(runDir, { recursive: true, force: true });
  });

  const spec = (cmd: string[], extra: Partial<{ cols: number; rows: number; spare: boolean }> = {}) => ({
    cmd,
    env: ['TERM=xterm-256color'],
    cwd: CONTAINER.workspace,
    cols: 100,
    rows: 30,
    ...extra,
  });

  it('is reached through the run dir socket on a local engine, with no exec per shell', async () => {
    assert.equal(direct.kind, 'socket');
    // Idempotent: a second ensure finds the running holder and starts nothing.
    await ensureHolder(ns.docker, container.id, address);
    const { stdout } = await execIn(container, ['sh', '-c', 'pgrep -fc "toolbox-session (serve|ensure)"']);
    assert.equal(stdout.trim(), '1', 'one holder daemon');
  });

  it('keeps a shell running while detached and reattaches to the same process', async () => {
    const first = await startHeldSession(direct, spec(COUNTER));
    const out1 = collect(first);
    const [, n1, pid] = await out1.waitFor(/tick (\d+) pid (\d+)/);
    first.dispose(); // the window went away
    await new Promise((r) => setTimeout(r, 600));
    const listed = await listHeldSessions(direct);
    const entry = listed.find((s) => s.id === first.id);
    assert.ok(entry && !entry.ended && entry.attached === 0, `listed as detached: ${JSON.stringify(entry)}`);

    const again = await attachHeldSession(direct, first.id, { cols: 100, rows: 30 });
    assert.equal(again.pid, first.pid);
    const out2 = collect(again);
    // Recent output is replayed, then the counter goes on from where it was, in the same shell.
    await out2.waitFor(new RegExp(`tick ${Number(n1)} pid ${pid}`));
    const later = await out2.waitFor(new RegExp(`tick (\\d+) pid ${pid}\\r\\n(?![\\s\\S]*tick \\d+ pid ${pid}\\r\\n[\\s\\S]*$)`));
    assert.ok(Number(later[1]) > Number(n1) + 3, `the counter advanced while detached (${n1} → ${later[1]})`);
    // The holder says how much of that is replayed history (the recogniser reads it as such: ui/shells/toolboxShellPty.ts).
    assert.ok(again.replayBytes !== undefined && again.replayBytes > 0, `replayBytes ${again.replayBytes}`);
    const replayed = out2.bytes.subarray(0, again.replayBytes).toString('latin1');
    assert.match(replayed, new RegExp(`tick ${Number(n1)} pid ${pid}`));
    const bare = await attachHeldSession(direct, first.id, { cols: 100, rows: 30 }, false);
    assert.ok((bare.replayBytes ?? 0) < 64, `without replay only the restored modes: ${bare.replayBytes}`);
    bare.dispose();
    await again.kill();
    const code = await again.exitCode.catch(() => undefined);
    void code;
    await new Promise((r) => setTimeout(r, 500));
    const after = (await listHeldSessions(direct)).find((s) => s.id === first.id);
    assert.ok(after?.ended, 'killed');
    const { stdout } = await execIn(container, ['sh', '-c', `kill -0 ${pid} 2>/dev/null && echo alive || echo gone`]);
    assert.equal(stdout.trim(), 'gone');
  });

  it('passes every byte value through unchanged, both ways (raw mode), with OSC 8 links and bracketed paste', async () => {
    const program = [
      'import os, sys, tty',
      'tty.setraw(0)',
      'out = bytes(range(256)) + b"\\x1b]8;;https://example.com\\x1b\\\\link\\x1b]8;;\\x1b\\\\" + b"\\x1b[?2004h"',
      'os.write(1, b"<<" + out + b">>")',
      'got = b""',
      'while len(got) < 256 + 12:',
      '    got += os.read(0, 4096)',
      'open("/tmp/input.bin", "wb").write(got)',
      'os.write(1, b"DONE")',
    ].join('\n');
    const session = await startHeldSession(direct, spec(['python3', '-c', program]));
    const out = collect(session);
    await out.waitFor(/>>/);
    const text = out.bytes;
    const start = text.indexOf('<<') + 2;
    const expected = Buffer.concat([
      Buffer.from(Array.from({ length: 256 }, (_, i) => i)),
      Buffer.from('\x1b]8;;https://example.com\x1b\\link\x1b]8;;\x1b\\\x1b[?2004h', 'latin1'),
    ]);
    assert.deepEqual(text.subarray(start, start + expected.length), expected);
    const input = Buffer.concat([Buffer.from(Array.from({ length: 256 }, (_, i) => i)), Buffer.from('\x1b[200~paste\x1b[201~', 'latin1')]);
    session.stream.write(input);
    await out.waitFor(/DONE/);
    const { stdout } = await execIn(container, ['python3', '-c', 'import sys; sys.stdout.write(open("/tmp/input.bin","rb").read().hex())']);
    assert.equal(stdout, input.toString('hex'));
    await session.exitCode;
  });

  it('redraws a full-screen program on reattach: back into the alternate screen, then a new frame', async () => {
    const program = [
      'import os, signal, sys, time',
      'n = [0]',
      'def draw(*_):',
      '    n[0] += 1',
      '    cols, rows = os.get_terminal_size(1)',
      '    os.write(1, b"\\x1b[H\\x1b[2JFRAME %d %dx%d" % (n[0], cols, rows))',
      'signal.signal(signal.SIGWINCH, draw)',
      'os.write(1, b"\\x1b[?1049h\\x1b[?25l")',
      'draw()',
      'while True: time.sleep(1)',
    ].join('\n');
    const session = await startHeldSession(direct, spec(['python3', '-c', program]));
    await collect(session).waitFor(/FRAME 1 100x30/);
    session.dispose();
    const back = await attachHeldSession(direct, session.id, { cols: 100, rows: 30 });
    const out = collect(back);
    // Same size: the holder still asks for a redraw. The terminal first gets the screen mode back.
    await out.waitFor(/FRAME 2 100x30/);
    assert.ok(out.text.startsWith('\x1b[?1049h'), `starts in the alternate screen: ${JSON.stringify(out.text.slice(0, 30))}`);
    assert.ok(out.text.includes('\x1b[?25l'), 'the hidden cursor is restored');
    await back.resize(120, 40);
    await out.waitFor(/FRAME 3 120x40/);
    await back.kill();
  });

  it('hands over a spare shell at once and keeps one ready', async () => {
    const first = await startHeldSession(direct, spec(['sh', '-c', 'echo "ready $$"; exec sleep 600'], { spare: true }));
    await collect(first).waitFor(/ready \d+/);
    await new Promise((r) => setTimeout(r, 300)); // the spare starts behind the first
    const second = await startHeldSession(direct, spec(['sh', '-c', 'echo "ready $$"; exec sleep 600'], { spare: true }));
    const out = collect(second);
    // The spare printed before it was claimed: its output is there immediately.
    const [, pid] = await out.waitFor(/ready (\d+)/, 2_000);
    assert.equal(String(second.pid), pid);
    const listed = await listHeldSessions(direct);
    assert.ok(
      !listed.some((s) => s.id !== first.id && s.id !== second.id && !s.ended && s.cmd?.[2]?.includes('ready')),
      'spares are not listed',
    );
    await first.kill();
    await second.kill();
  });

  it('replaces a spare of another size instead of handing it over, and keeps serving', async () => {
    const cmd = ['sh', '-c', 'echo "ready $$"; exec sleep 600'];
    const first = await startHeldSession(direct, spec(cmd, { spare: true, cols: 100, rows: 30 }));
    await collect(first).waitFor(/ready \d+/);
    await new Promise((r) => setTimeout(r, 300));
    // A terminal of another size: the spare's first screen was drawn for 100x30, so not that one.
    const second = await startHeldSession(direct, spec(cmd, { spare: true, cols: 90, rows: 20 }));
    const out = collect(second);
    await out.waitFor(/ready \d+/);
    const { stdout } = await execIn(container, ['sh', '-c', `stty -F /proc/${second.pid}/fd/0 size 2>/dev/null || echo unknown`]);
    assert.match(stdout.trim(), /^(20 90|unknown)$/);
    await new Promise((r) => setTimeout(r, 4_000)); // the discarded spare is reaped (SIGHUP, then the grace period)
    const listed = await listHeldSessions(direct);
    assert.deepEqual(
      listed
        .filter((s) => !s.ended)
        .map((s) => s.id)
        .sort(),
      [first.id, second.id].sort(),
      'the holder still serves, and lists no spare',
    );
    await first.kill();
    await second.kill();
  });

  it('reports a session that ended while detached, with its exit code', async () => {
    const s = await startHeldSession(direct, spec(['sh', '-c', 'sleep 0.3; exit 7']));
    s.dispose();
    await new Promise((r) => setTimeout(r, 900));
    await assert.rejects(attachHeldSession(direct, s.id, { cols: 80, rows: 24 }), (err: unknown) => {
      assert.ok(err instanceof SessionEndedError);
      assert.equal(err.exitCode, 7);
      return true;
    });
  });

  it('works the same through the exec transport', async () => {
    const viaExec = execTransport(ns.docker, container.id, address);
    const s = await startHeldSession(viaExec, spec(COUNTER));
    const [, , pid] = await collect(s).waitFor(/tick (\d+) pid (\d+)/);
    s.dispose();
    const again = await attachHeldSession(viaExec, s.id, { cols: 100, rows: 30 });
    assert.equal(String(again.pid), pid);
    await collect(again).waitFor(new RegExp(`pid ${pid}`));
    await again.kill();
  });

  it('says the image has no holder instead of hanging (a plain Debian container)', async () => {
    const plain = await ns.docker.createContainer({
      name: `${ns.names.prefix}-plain`,
      Image: 'debian:bookworm-slim',
      Cmd: ['sleep', 'infinity'],
      Labels: { [TEST_LABEL]: '1' },
      HostConfig: { NetworkMode: 'none' },
    });
    await plain.start();
    await assert.rejects(reachHolder(ns.docker, plain.id, holderAddress(undefined, '0:0')), (err: unknown) => {
      assert.ok(err instanceof HolderUnavailableError);
      assert.match(err.message, /no session holder/);
      return true;
    });
  });

  it('says the image has no holder while it also watches the run dir socket (the start is not a race it can lose)', async () => {
    const plainRun = mkdtempSync(join(tmpdir(), 'tbxt-run-'));
    try {
      const plain = await ns.docker.createContainer({
        name: `${ns.names.prefix}-plain-rundir`,
        Image: 'debian:bookworm-slim',
        Cmd: ['sleep', 'infinity'],
        Labels: { [TEST_LABEL]: '1' },
        HostConfig: { Binds: [`${plainRun}:${CONTAINER.bridgeRunDir}`], NetworkMode: 'none' },
      });
      await plain.start();
      await assert.rejects(reachHolder(ns.docker, plain.id, holderAddress(plainRun, '0:0')), (err: unknown) => {
        assert.ok(err instanceof HolderUnavailableError);
        assert.match(err.message, /no session holder/);
        return true;
      });
    } finally {
      rmSync(plainRun, { recursive: true, force: true });
    }
  });
});

describe('session holder started by the container itself (ENV.sessionSocket)', () => {
  let ns: TestNamespace;
  let image: string;
  const runDirs: string[] = [];

  before(async () => {
    ns = testNamespace();
    image = await ensureTestRuntimeImage();
  });

  after(async () => {
    await ns?.cleanup();
    for (const d of runDirs) rmSync(d, { recursive: true, force: true });
  });

  /** A started container of the runtime image, with the socket variable or without (as older versions made them). */
  async function containerWith(
    name: string,
    socketVariable: boolean,
    user = ids,
  ): Promise<{ container: Docker.Container; address: HolderAddress }> {
    const runDir = mkdtempSync(join(tmpdir(), 'tbxt-run-'));
    runDirs.push(runDir);
    chownSync(runDir, user.uid, user.gid);
    const address = holderAddress(runDir, `${user.uid}:${user.gid}`);
    const container = await createAdapted(ns.docker, {
      name: `${ns.names.prefix}-${name}`,
      Image: image,
      User: `${user.uid}:${user.gid}`,
      Env: socketVariable ? [`${ENV.sessionSocket}=${address.containerSocket}`] : [],
      Labels: { [TEST_LABEL]: '1' },
      HostConfig: { Binds: [`${runDir}:${CONTAINER.bridgeRunDir}`], NetworkMode: 'none' },
    });
    await container.start();
    return { container, address };
  }

  it('is reached on the run dir socket with no exec, and an ensure by exec afterwards starts no second holder', async () => {
    assert.equal(await imageStartsHolder(ns.docker, image), true, 'the runtime image says its entrypoint starts the holder');
    const { container, address } = await containerWith('own-holder', true);
    const transport = await reachHolder(ns.docker, container.id, address, { startedByContainer: true });
    assert.equal(transport.kind, 'socket');
    assert.deepEqual((await container.inspect()).ExecIDs ?? [], [], 'no exec ran in the container');
    // The shells it holds get the container's environment, not the entrypoint's own shell state.
    const s = await startHeldSession(transport, {
      cmd: ['sh', '-c', `echo "lvl=[$SHLVL] sock=[$${ENV.sessionSocket}]"; sleep 30`],
      env: [],
      cwd: '/',
      cols: 80,
      rows: 24,
    });
    const [, level, socket] = await collect(s).waitFor(/lvl=\[(.*?)\] sock=\[(.*?)\]/);
    assert.equal(level, '', 'no SHLVL from the entrypoint');
    assert.equal(socket, address.containerSocket);
    await s.kill();
    // An older extension (or the fallback) starts it by exec: it finds this one answering.
    await ensureHolder(ns.docker, container.id, address);
    const { stdout } = await execIn(container, ['sh', '-c', 'pgrep -fc "toolbox-session (serve|ensure)"']);
    assert.equal(stdout.trim(), '1', 'one holder daemon');
  });

  it("gives the first shell of a user the image does not know its account: the holder starts before the entrypoint's account step", async () => {
    const { container, address } = await containerWith('own-holder-account', true, testUser(4343, 4343));
    const transport = await reachHolder(ns.docker, container.id, address, { startedByContainer: true });
    const s = await startHeldSession(transport, {
      cmd: [
        'sh',
        '-c',
        'echo "who=[$(id -un)] home=[$(getent passwd $(id -u) | cut -d: -f6)] pending=[${TOOLBOX_ACCOUNT_PENDING-unset}]"; sleep 30',
      ],
      env: [],
      cwd: '/',
      cols: 80,
      rows: 24,
    });
    const [, who, home, pending] = await collect(s).waitFor(/who=\[(.*?)\] home=\[(.*?)\] pending=\[(.*?)\]/);
    assert.match(who!, /^[a-z_][a-z0-9_-]*$/, `the account entry was there when the shell started: ${who}`);
    // Rootless Podman's keep-id writes the host user's own entry, which the entrypoint keeps.
    if (!TEST_ROOTLESS) {
      assert.equal(who, 'toolbox', 'the entrypoint wrote the entry');
      assert.equal(home, CONTAINER.home);
    }
    assert.equal(pending, 'unset', "the entrypoint's marker variable is not passed on");
    await s.kill();
    // The order that makes it faster: the holder's start is under way before the account step.
    const log = (await container.logs({ stdout: true, stderr: true })).toString();
    const started = log.indexOf('starting the session holder');
    const account = log.indexOf('added passwd entry toolbox:4343');
    if (!TEST_ROOTLESS) assert.ok(started >= 0 && account > started, log);
  });

  it('starts one holder when an exec ensure races the entrypoint', async () => {
    const { container, address } = await containerWith('own-holder-race', true);
    await Promise.all([ensureHolder(ns.docker, container.id, address), ensureHolder(ns.docker, container.id, address)]);
    const transport = await reachHolder(ns.docker, container.id, address);
    assert.equal(transport.kind, 'socket');
    await new Promise((r) => setTimeout(r, 300));
    const { stdout } = await execIn(container, ['sh', '-c', 'pgrep -fc "toolbox-session (serve|ensure)"']);
    assert.equal(stdout.trim(), '1', 'one holder daemon');
    assert.equal((await listHeldSessions(transport)).length, 0);
  });

  it('still starts the holder by exec in a container created without the variable (an older version made it)', async () => {
    const { container, address } = await containerWith('old-holder', false);
    const transport = await reachHolder(ns.docker, container.id, address);
    assert.equal(transport.kind, 'socket');
    assert.ok(((await container.inspect()).ExecIDs ?? []).length > 0, 'the holder was started by an exec');
    const s = await startHeldSession(transport, { cmd: ['sh', '-c', 'echo held-old; sleep 30'], env: [], cwd: '/', cols: 80, rows: 24 });
    await collect(s).waitFor(/held-old/);
    await s.kill();
  });
});
