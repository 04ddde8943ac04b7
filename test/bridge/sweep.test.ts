/**
 * Issue 13, item 10: a window that exits without shutting its bridge down leaves bridge.sock in
 * its run dir. A hub sweeps those at start (bridge/sweep.ts) and unlinks its own sockets before
 * it awaits anything on shutdown.
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync, lstatSync, mkdirSync, symlinkSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { BridgeHub } from '../../extension/src/bridge/hub';
import { connectRefused, sweepStaleSockets } from '../../extension/src/bridge/sweep';
import { call, recorder, startRig, unixTarget, type Rig } from './support';

/** A socket file nobody listens on: bound, never listened, the process gone. */
function staleSocket(path: string): void {
  mkdirSync(dirname(path), { recursive: true });
  const made = spawnSync('python3', ['-c', `import socket; socket.socket(socket.AF_UNIX).bind(${JSON.stringify(path)})`]);
  assert.equal(made.status, 0, String(made.stderr));
  assert.ok(lstatSync(path).isSocket());
}

describe('stale bridge sockets are swept when a hub starts (issue 13, item 10)', () => {
  let rig: Rig;
  let parent: string;
  const paths: Record<string, string> = {};
  before(async () => {
    rig = await startRig();
    parent = dirname(rig.bridge.runDir);
    paths.stale = join(parent, '0badc0de', 'bridge.sock');
    paths.staging = join(parent, '.0123456789ab.sock');
    paths.outsideTarget = join(rig.root, 'elsewhere.sock');
    paths.symlink = join(parent, '1badc0de', 'bridge.sock');
    paths.file = join(parent, '2badc0de', 'bridge.sock');
    paths.sessions = join(parent, '3badc0de', 'sessions.sock');
    paths.notRunDir = join(parent, 'not-a-run-dir', 'bridge.sock');
    staleSocket(paths.stale);
    staleSocket(paths.staging);
    staleSocket(paths.outsideTarget);
    mkdirSync(dirname(paths.symlink));
    symlinkSync(paths.outsideTarget, paths.symlink);
    mkdirSync(dirname(paths.file));
    writeFileSync(paths.file, 'not a socket');
    staleSocket(paths.sessions);
    staleSocket(paths.notRunDir);
  });
  after(async () => {
    await rig.cleanup();
  });

  it('tells a refused socket from a live one', async () => {
    assert.equal(await connectRefused(paths.stale, 1_000), true);
    assert.equal(await connectRefused(rig.bridge.socketPath, 1_000), false);
  });

  it("removes only stale bridge.sock files and staging sockets, keeping a live window's socket, symlinks, files and other names", async () => {
    const events: string[] = [];
    const logged = new BridgeHub({
      home: rig.home,
      tmpRoot: rig.tmpRoot,
      env: { PATH: process.env.PATH },
      port: 0,
      ...recorder(),
      log: (e) => void ('message' in e && events.push(e.message)),
    });
    rig.extraHubs.push(logged);
    await logged.ensureWorkspace({ ...rig.registration, key: `${rig.registration.key}-second` });

    assert.equal(existsSync(paths.stale), false, 'the stale bridge socket is gone');
    assert.equal(existsSync(paths.staging), false, 'the stale staging socket is gone');
    assert.ok(lstatSync(paths.symlink).isSymbolicLink(), 'a symlink is never touched');
    assert.ok(lstatSync(paths.outsideTarget).isSocket(), 'nor what it points at');
    assert.ok(lstatSync(paths.file).isFile());
    assert.ok(lstatSync(paths.sessions).isSocket(), "the session holder's socket is not the sweep's");
    assert.ok(lstatSync(paths.notRunDir).isSocket(), 'only run dirs named like ours are looked at');
    assert.ok(lstatSync(rig.bridge.socketPath).isSocket(), "the live window's socket stays");
    assert.equal((await call(unixTarget(rig), '/healthz')).status, 200, 'and still serves');
    assert.ok(
      events.some((m) => m.startsWith('Removed 2 stale bridge socket(s)') && m.includes(paths.stale) && m.includes(paths.staging)),
      events.join('\n'),
    );
  });

  it('sweeps nothing when there is nothing stale, and bounds how many run dirs it looks at', async () => {
    assert.deepEqual(await sweepStaleSockets(parent), []);
    const crowded = join(rig.root, 'crowded');
    for (let i = 0; i < 5; i++) staleSocket(join(crowded, `0000000${i}`, 'bridge.sock'));
    const removed = await sweepStaleSockets(crowded, { maxRunDirs: 2, connectMs: 1_000 });
    assert.equal(removed.length, 2);
    assert.deepEqual(await sweepStaleSockets(join(rig.root, 'no-such-dir')), []);
  });
});

describe("a hub's shutdown unlinks its sockets before it awaits anything (issue 13, item 10)", () => {
  it('the socket file is gone as soon as dispose() is called, before its promise settles', async () => {
    const rig = await startRig();
    try {
      assert.ok(existsSync(rig.bridge.socketPath));
      const disposing = rig.hub.dispose();
      assert.equal(existsSync(rig.bridge.socketPath), false, 'still there when dispose() returned its promise');
      assert.equal(existsSync(join(rig.bridge.stateDir, 'port')), false, 'the port file too');
      await disposing;
    } finally {
      await rig.cleanup();
    }
  });
});
