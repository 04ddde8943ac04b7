/**
 * What the protected paths cost an open (docs/decisions/0042-protected-paths-read-only.md): the
 * same folder, a git repository with a `.vscode` folder, opened with toolbox.protectedPaths on and
 * off, interleaved in one run:
 * - cold: plan (the host facts read), placeholders, create and start, to a TTY shell's first output;
 * - warm: plan and openContainer on the running container (connect), to a shell's first output.
 * benchProtectWindow measures the same as a window opens the folder, through the backend
 * (prepareShell, open, start), which plans the protections three times per open (the prepare's
 * check, the bridge's preview plan, the plan) and serves the bridge.
 * Objects live under a bench prefix and are removed at the end.
 */
import { execFileSync } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import type { StartedShell } from '../extension/src/backend/api';
import { protectedPathFacts } from '../extension/src/backend/hostFacts';
import { DEFAULT_CONFIG } from '../extension/src/config/model';
import { CONTAINER } from '../extension/src/contract/upstream';
import { objectNames } from '../extension/src/contract/objects';
import type { HostFacts } from '../extension/src/contract/types';
import type { EngineContext } from '../extension/src/engine/context';
import { startShellExec } from '../extension/src/engine/exec';
import { openContainer } from '../extension/src/engine/open';
import { planProtections } from '../extension/src/plan/protect';
import { planSession } from '../extension/src/plan/session';
import { testBackend, type TestBackend } from '../test/support/backend';
import { docker as testDocker, removeNamespaceObjects } from '../test/support/docker';
import { ensureTestRuntimeImage } from '../test/support/image';
import { standInSettings } from '../test/support/settings';
import { fmtMs, interleave, spreadOf, stats, type ResultRow, type Stats } from './harness';

/** The goal of issue 25: an open with the protections takes at most this many times one without. */
const GOAL = 1.05;

const UID = 1000;
const GID = 1000;

/** A cloned-looking repository: .git (config, hooks, info) and a .vscode folder, owned by the container user. */
function repository(parent: string, name: string): string {
  const ws = join(parent, name);
  execFileSync('git', ['init', '-q', ws]);
  mkdirSync(join(ws, '.vscode'));
  execFileSync('chown', ['-R', `${UID}:${GID}`, ws]);
  return ws;
}

export async function benchProtect(): Promise<ResultRow[]> {
  const docker = testDocker();
  const names = objectNames(`tbxbench${process.pid}`);
  const image = await ensureTestRuntimeImage();
  const home = mkdtempSync(join(tmpdir(), 'tbxbench-home-'));
  const dir = mkdtempSync(join(tmpdir(), 'tbxbench-ro-'));
  const host: HostFacts = { uid: UID, gid: GID, home, platform: process.platform, pathExists: existsSync, ...protectedPathFacts() };
  const ctx: EngineContext = { docker, names };
  const plan = (ws: string, protectedPaths: boolean, namedShell?: string) =>
    planSession({ workspace: ws, config: DEFAULT_CONFIG, peer: true, image, names, protectedPaths, namedShell }, host).plan;
  const open = async (ws: string, protectedPaths: boolean, namedShell?: string) => {
    const o = await openContainer(ctx, plan(ws, protectedPaths, namedShell), { ensureImage: async () => undefined });
    const shell = await startShellExec(docker, o.id, { cmd: ['printf', 'x'], cols: 120, rows: 40, user: `${UID}:${GID}` });
    await new Promise<void>((resolve, reject) => {
      shell.stream.once('data', () => resolve());
      shell.stream.once('error', reject);
    });
    shell.dispose();
  };
  try {
    // Cold: nothing of the namespace exists; each round a fresh repository.
    const samples = { on: [] as number[], off: [] as number[] };
    let n = 0;
    for (let i = 0; i < 11; i++) {
      for (const who of i % 2 === 0 ? (['on', 'off'] as const) : (['off', 'on'] as const)) {
        await removeNamespaceObjects(docker, names);
        const ws = repository(dir, `cold-${n++}`);
        const t0 = performance.now();
        await open(ws, who === 'on');
        if (i > 0) samples[who].push(performance.now() - t0);
      }
    }
    await removeNamespaceObjects(docker, names);
    const coldOn = stats(samples.on);
    const coldOff = stats(samples.off);

    // Warm: one running container each, opened again and again.
    const wsOn = repository(dir, 'warm-on');
    const wsOff = repository(dir, 'warm-off');
    await open(wsOn, true);
    await open(wsOff, false);
    // 40 rounds: a warm open is ~150 ms, and 5 % of it is within the noise of 15 on a loaded machine.
    const warm = await interleave({ on: () => open(wsOn, true), off: () => open(wsOff, false) }, { rounds: 40, warmup: 3 });
    const warmOn = warm.on!;
    const warmOff = warm.off!;
    const sample = plan(repository(dir, 'count'), true);
    const extra = sample.mounts.filter((m) => m.name.startsWith('protected')).length;
    const row = (what: string, on: typeof coldOn, off: typeof coldOff): ResultRow => ({
      benchmark: 'Protected paths',
      measure: `${what} with the protection (${extra} more binds, ${sample.placeholders?.length ?? 0} placeholders) vs toolbox.protectedPaths off`,
      value: `${(on.median / off.median).toFixed(3)}× (${fmtMs(on.median)} vs ${fmtMs(off.median)})`,
      spread: `on ${spreadOf(on)}; off ${spreadOf(off)}`,
      goal: `≤ ${GOAL}×`,
      met: on.median / off.median <= GOAL,
    });
    return [
      row('cold open (plan, placeholders, create, start → first output)', coldOn, coldOff),
      row('warm open (plan, connect → first output)', warmOn, warmOff),
    ];
  } finally {
    await removeNamespaceObjects(docker, names);
    rmSync(home, { recursive: true, force: true });
    rmSync(dir, { recursive: true, force: true });
  }
}

type Arm = 'on' | 'off';

const quiet = { log: () => undefined, step: () => undefined };

/** Resolves on the shell's first output (its prompt, or the start of one), then ends it. */
async function firstOutput(shell: StartedShell): Promise<void> {
  await new Promise<void>((resolve, reject) => {
    shell.stream.once('data', () => resolve());
    shell.stream.once('error', reject);
  });
  shell.dispose();
}

/** One open of `folder` as a window makes it: prepare (config, plan), open (bridge, engine), start. */
async function openOnce(backend: TestBackend, folder: string): Promise<string> {
  const prepared = await backend.prepareShell({ folder });
  const session = await prepared.open(quiet, new AbortController().signal);
  await firstOutput(await session.start({ cols: 120, rows: 40 }));
  return session.name;
}

function ratioRow(what: string, measure: string, on: Stats, off: Stats): ResultRow {
  const ratio = on.median / off.median;
  return {
    benchmark: `Protected paths, window: ${what}`,
    measure,
    value: `${ratio.toFixed(3)}× (on ${fmtMs(on.median)}, off ${fmtMs(off.median)})`,
    spread: `on ${spreadOf(on)}; off ${spreadOf(off)}`,
    goal: `≤ ${GOAL}×`,
    met: ratio <= GOAL,
  };
}

/**
 * Cold and warm open with the protections on and off, as a window opens a folder: through the
 * backend (prepareShell, open, start) to the shell's first output. The anchor and the socket
 * volume exist in both arms, so the cold ratio is the container's own create. Held sessions are
 * off (a plain exec shell): the same in both arms, and a warm round would leave a session behind.
 */
export async function benchProtectWindow(): Promise<ResultRow[]> {
  const d = testDocker();
  const names = objectNames(`tbxbenchp${process.pid}`);
  const image = await ensureTestRuntimeImage();
  const home = mkdtempSync(join(tmpdir(), 'tbxbench-protect-'));
  // The image in ~/.toolbox.yaml: from the project file it would wait for the user's approval (decision 0041).
  writeFileSync(join(home, '.toolbox.yaml'), `image: ${image}\n`);
  const template = join(home, 'template');
  mkdirSync(template);
  execFileSync('git', ['init', '-q', '-b', 'main', template]);
  mkdirSync(join(template, '.vscode'));
  writeFileSync(join(template, '.vscode', 'settings.json'), '{}\n');
  writeFileSync(join(template, 'README.md'), 'hello\n');
  let n = 0;
  /** A new folder, a copy of the template (the protected paths a fresh clone has). */
  const newFolder = (arm: Arm) => {
    const folder = join(home, `proj-${arm}-${++n}`);
    cpSync(template, folder, { recursive: true });
    return folder;
  };
  const backends: Record<Arm, TestBackend> = {
    on: testBackend(names, home, { settings: standInSettings({ protectedPaths: () => true, persistSessions: () => false }) }),
    off: testBackend(names, home, { settings: standInSettings({ protectedPaths: () => false, persistSessions: () => false }) }),
  };
  const removeContainer = async (name: string) => {
    await d
      .getContainer(name)
      .remove({ force: true })
      .catch(() => undefined);
    // AutoRemove: wait until the name is free, so the next round's create is not slowed by it.
    for (let i = 0; i < 100; i++) {
      if (!(await d.listContainers({ all: true, filters: { name: [name] } })).some((c) => c.Names.includes(`/${name}`))) return;
      await new Promise((r) => setTimeout(r, 50));
    }
  };
  try {
    // What the protections are in this folder: binds, placeholders, and the planning's own time.
    const sample = newFolder('on');
    const facts = protectedPathFacts();
    const plan = () => planProtections({ workspace: sample, targets: [CONTAINER.workspace, sample], facts });
    const planned = plan();
    const planMs: number[] = [];
    for (let i = 0; i < 200; i++) {
      const t0 = performance.now();
      plan();
      planMs.push(performance.now() - t0);
    }
    const planning = stats(planMs);

    // Warm: one folder per arm, its container made once; every round opens it again.
    const warmFolder = { on: newFolder('on'), off: newFolder('off') };
    for (const arm of ['on', 'off'] as const) await openOnce(backends[arm], warmFolder[arm]);
    const warm = await interleave(
      {
        on: async () => void (await openOnce(backends.on, warmFolder.on)),
        off: async () => void (await openOnce(backends.off, warmFolder.off)),
      },
      { rounds: 40, warmup: 3 },
    );

    // Cold: a new folder each round, its container removed after (not timed).
    const cold: Record<Arm, number[]> = { on: [], off: [] };
    const rounds = 12;
    for (let i = 0; i < rounds + 1; i++) {
      for (const arm of i % 2 === 0 ? (['on', 'off'] as const) : (['off', 'on'] as const)) {
        const folder = newFolder(arm);
        const t0 = performance.now();
        const name = await openOnce(backends[arm], folder);
        const dt = performance.now() - t0;
        if (i > 0) cold[arm].push(dt);
        await removeContainer(name);
      }
    }

    return [
      ratioRow('cold open', 'on vs off: no container → prepare, open, shell to first output (backend)', stats(cold.on), stats(cold.off)),
      ratioRow('warm open', 'on vs off: running container → prepare, open, shell to first output (backend)', warm.on!, warm.off!),
      {
        benchmark: 'Protected paths, window: planning',
        measure: `planProtections with this host's lstat (a git folder: ${planned.mounts.length} binds, ${planned.placeholders.length} placeholders)`,
        value: `p50 ${fmtMs(planning.median)} per plan`,
        spread: spreadOf(planning),
        goal: '–',
        met: undefined,
      },
    ];
  } finally {
    for (const b of Object.values(backends)) b.dispose();
    await removeNamespaceObjects(d, names);
    rmSync(home, { recursive: true, force: true });
  }
}
