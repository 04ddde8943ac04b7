/**
 * Finding 3 of issue 11: the bridge run dir is mounted read-write into the container, so the
 * container can bind its own socket at the bridge path before a window starts its bridge. The
 * window's liveness probe used to buffer the reply without limit (3.2 GiB of RSS for a streamed
 * reply) and without an absolute deadline, and reused anything that said {"status":"ok"}.
 *
 * Each test binds a hostile server (test/fixtures/hostile-bridge, a separate process, as the
 * container would be) at the exact socket path a hub will pick, then starts the hub and asserts:
 * bounded time, bounded RSS growth, and that the hub serves the path with its own bridge.
 */
import assert from 'node:assert/strict';
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { lstatSync, mkdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { after, describe, it } from 'node:test';
import { BridgeHub } from '../../extension/src/bridge/hub';
import { chooseRunDir, type RunDirChoice } from '../../extension/src/bridge/state';
import type { WorkspaceRegistration } from '../../extension/src/bridge/hub';
import { call, makeTempRoot, recorder } from './support';

const HOSTILE = resolve(__dirname, '../../../test/fixtures/hostile-bridge');
const MiB = 1024 * 1024;

interface Scene {
  root: string;
  home: string;
  tmpRoot: string;
  registration: WorkspaceRegistration;
  choice: RunDirChoice;
  children: ChildProcess[];
  hubs: BridgeHub[];
}

const scenes: Scene[] = [];
after(async () => {
  for (const s of scenes) {
    for (const c of s.children) c.kill('SIGKILL');
    for (const h of s.hubs) await h.dispose();
    rmSync(s.root, { recursive: true, force: true });
  }
});

/** A temp home and the run dir a hub will pick for it, created the way a previous start left it. */
function scene(): Scene {
  const root = makeTempRoot();
  const home = join(root, 'home');
  const tmpRoot = join(root, 't');
  const workspace = join(root, 'ws');
  for (const d of [home, tmpRoot, workspace]) mkdirSync(d, { recursive: true });
  const registration: WorkspaceRegistration = {
    key: `tbbhostile-${root.slice(-6)}`,
    workspaceFolder: workspace,
    mountsRoots: [],
    proximoEnabled: false,
    defaultAgentHome: workspace,
    defaultCodexHome: workspace,
  };
  const choice = chooseRunDir({ key: registration.key, uid: process.getuid?.() ?? -1, platform: process.platform, tmpRoot });
  mkdirSync(choice.runDir, { recursive: true, mode: 0o700 });
  const s: Scene = { root, home, tmpRoot, registration, choice, children: [], hubs: [] };
  scenes.push(s);
  return s;
}

/** The container's server on the bridge socket path, as its own process. */
async function hostile(s: Scene, mode: 'stream' | 'silent' | 'drip' | 'fake-ok'): Promise<ChildProcess> {
  const child = spawn(process.execPath, [HOSTILE, s.choice.socketPath, mode], { stdio: ['ignore', 'pipe', 'inherit'] });
  s.children.push(child);
  await new Promise<void>((ready, fail) => {
    child.stdout?.once('data', () => ready());
    child.once('exit', (code) => fail(new Error(`hostile-bridge exited with ${code}`)));
  });
  return child;
}

interface Started {
  reused: boolean;
  socketPath: string;
  ms: number;
  rssGrowthMiB: number;
  events: ReturnType<typeof recorder>;
}

/** Starts a hub for the scene, measuring time and peak RSS growth; gives up after `limitMs`. */
async function startHub(s: Scene, limitMs = 5_000): Promise<Started> {
  const rec = recorder();
  const hub = new BridgeHub({ home: s.home, tmpRoot: s.tmpRoot, env: {}, port: 0, ...rec });
  s.hubs.push(hub);
  global.gc?.();
  const rss0 = process.memoryUsage().rss;
  let peak = rss0;
  const sampler = setInterval(() => (peak = Math.max(peak, process.memoryUsage().rss)), 20);
  const t0 = performance.now();
  let timer: NodeJS.Timeout | undefined;
  try {
    const bridge = await Promise.race([
      hub.ensureWorkspace(s.registration),
      new Promise<never>((_, reject) => {
        timer = setTimeout(
          () => reject(new Error(`the hub did not start within ${limitMs} ms (RSS grew ${((peak - rss0) / MiB).toFixed(0)} MiB)`)),
          limitMs,
        );
      }),
    ]);
    peak = Math.max(peak, process.memoryUsage().rss);
    return {
      reused: bridge.reused,
      socketPath: bridge.socketPath,
      ms: performance.now() - t0,
      rssGrowthMiB: (peak - rss0) / MiB,
      events: rec,
    };
  } finally {
    clearInterval(sampler);
    clearTimeout(timer);
  }
}

/** The token the hub wrote: the container can read it too, which is why it proves nothing. */
function tokenOf(s: Scene): string {
  return readFileSync(join(s.home, '.toolbox', 'toolbox', 'vscode', s.registration.key, 'token'), 'utf8').trim();
}

/** Our bridge serves the socket path: an authorised /open reaches this hub's openExternal. */
async function assertOwnBridgeServes(s: Scene, started: Started): Promise<void> {
  const url = `http://own-bridge.example/${s.registration.key}`;
  const reply = await call({ socketPath: s.choice.socketPath }, '/open', { token: tokenOf(s), body: { url } });
  assert.equal(reply.status, 204, reply.text);
  assert.ok(started.events.urls.includes(url), 'the request reached this hub, not the hostile server');
}

describe('hostile server at the bridge socket path (issue 11, finding 3)', () => {
  it('streams an endless reply: the probe gives up in bounded time and memory, and the hub starts its own bridge', async (t) => {
    const s = scene();
    await hostile(s, 'stream');
    const started = await startHub(s);
    t.diagnostic(`endless stream: started in ${started.ms.toFixed(0)} ms, peak RSS growth ${started.rssGrowthMiB.toFixed(1)} MiB`);
    assert.equal(started.reused, false);
    assert.ok(started.ms < 2_500, `took ${started.ms} ms`);
    assert.ok(started.rssGrowthMiB < 64, `RSS grew ${started.rssGrowthMiB} MiB`);
    assert.ok(started.events.events.some((e) => e.kind === 'warn' && /Something other than a Toolbox bridge/.test(e.message)));
    await assertOwnBridgeServes(s, started);
  });

  for (const mode of ['silent', 'drip'] as const) {
    it(`${mode === 'silent' ? 'never answers' : 'drips a never-ending header a byte at a time'}: the probe has an absolute deadline`, async (t) => {
      const s = scene();
      await hostile(s, mode);
      const started = await startHub(s);
      t.diagnostic(`${mode} server: started in ${started.ms.toFixed(0)} ms`);
      assert.equal(started.reused, false);
      assert.ok(started.ms < 2_500, `took ${started.ms} ms`);
      await assertOwnBridgeServes(s, started);
    });
  }

  it('answers a fake {"status":"ok"}: not reused, because it cannot prove it holds the hub key', async () => {
    const s = scene();
    await hostile(s, 'fake-ok');
    const started = await startHub(s);
    assert.equal(started.reused, false, 'a bare {"status":"ok"} must not make the window skip its own bridge');
    assert.ok(started.events.events.some((e) => e.kind === 'warn' && /without a valid proof/.test(e.message)));
    await assertOwnBridgeServes(s, started);
  });

  it("still reuses another window's bridge, which proves itself with the hub key", async () => {
    const s = scene();
    const first = await startHub(s);
    assert.equal(first.reused, false);
    const second = await startHub(s);
    assert.equal(second.reused, true);
    assert.equal(second.socketPath, first.socketPath);
  });

  it('keeps the hub key where the container cannot read it: 0600, in the unmounted parent of the run dirs', async () => {
    const s = scene();
    await startHub(s);
    const keyFile = join(s.choice.parent, 'hub.key');
    assert.equal(statSync(keyFile).mode & 0o777, 0o600);
    assert.ok(!keyFile.startsWith(`${s.choice.runDir}/`), 'not in the run dir (mounted read-write)');
    assert.ok(!keyFile.startsWith(`${join(s.home, '.toolbox')}/`), 'not under the mounts root or the state dirs');
    assert.equal(statSync(s.choice.parent).mode & 0o777, 0o700);
  });

  it('replaces a symlink planted at the socket path without following it (the target keeps its mode)', async () => {
    const s = scene();
    const victim = join(s.root, 'victim.rc');
    writeFileSync(victim, 'export PATH\n', { mode: 0o644 });
    spawnSync('ln', ['-s', victim, s.choice.socketPath]);
    assert.ok(lstatSync(s.choice.socketPath).isSymbolicLink());
    const started = await startHub(s);
    assert.equal(started.reused, false);
    assert.equal(statSync(victim).mode & 0o777, 0o644, 'the symlink target was chmodded');
    assert.ok(lstatSync(s.choice.socketPath).isSocket());
    assert.equal(lstatSync(s.choice.socketPath).mode & 0o777, 0o600);
    await assertOwnBridgeServes(s, started);
  });

  it('never chmods or chowns by a path inside the container-writable run dir (a symlink swapped in there would be followed)', async () => {
    const s = scene();
    // The module objects themselves (an ES import gives a read-only namespace copy): the bridge's
    // compiled CommonJS reads fs.chmod & co. from them at each call, so wrapping them sees every call.
    // eslint-disable-next-line @typescript-eslint/no-require-imports -- see above
    const fs = require('node:fs') as Record<string, unknown>;
    // eslint-disable-next-line @typescript-eslint/no-require-imports -- see above
    const fsp = require('node:fs/promises') as Record<string, unknown>;
    const calls: string[] = [];
    const restore: Array<() => void> = [];
    for (const [mod, names] of [
      [fs, ['chmod', 'chmodSync', 'lchmod', 'lchmodSync', 'chown', 'chownSync', 'lchown', 'lchownSync']],
      [fsp, ['chmod', 'lchmod', 'chown', 'lchown']],
    ] as const) {
      for (const name of names) {
        const original = mod[name];
        if (typeof original !== 'function') continue;
        mod[name] = (...args: unknown[]) => {
          calls.push(`${name} ${String(args[0])}`);
          return (original as (...a: unknown[]) => unknown)(...args);
        };
        restore.push(() => (mod[name] = original));
      }
    }
    try {
      await startHub(s);
    } finally {
      for (const undo of restore) undo();
    }
    const inRunDir = calls.filter((c) => c.split(' ')[1]?.startsWith(`${s.choice.runDir}/`) || c.endsWith(s.choice.runDir));
    assert.deepEqual(inRunDir, []);
    assert.equal(lstatSync(s.choice.socketPath).mode & 0o777, 0o600, 'the socket still ends up 0600');
  });
});
