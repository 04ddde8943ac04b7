/**
 * What the protected paths cost an open (docs/decisions/0042-protected-paths-read-only.md): the
 * same folder, a git repository with a `.vscode` folder, opened with toolbox.protectedPaths on and
 * off, interleaved in one run:
 * - cold: plan (the host facts read), placeholders, create and start, to a TTY shell's first output;
 * - warm: plan and openContainer on the running container (connect), to a shell's first output.
 * Objects live under a bench prefix and are removed at the end.
 */
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { protectedPathFacts } from '../extension/src/backend/hostFacts';
import { DEFAULT_CONFIG } from '../extension/src/config/model';
import { objectNames } from '../extension/src/contract/objects';
import type { HostFacts } from '../extension/src/contract/types';
import type { EngineContext } from '../extension/src/engine/context';
import { startShellExec } from '../extension/src/engine/exec';
import { openContainer } from '../extension/src/engine/open';
import { planSession } from '../extension/src/plan/session';
import { docker as testDocker, removeNamespaceObjects } from '../test/support/docker';
import { ensureTestRuntimeImage } from '../test/support/image';
import { fmtMs, interleave, spreadOf, stats, type ResultRow } from './harness';

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
    const warm = await interleave({ on: () => open(wsOn, true), off: () => open(wsOff, false) }, { rounds: 15, warmup: 3 });
    const warmOn = warm.on!;
    const warmOff = warm.off!;
    const sample = plan(repository(dir, 'count'), true);
    const extra = sample.mounts.filter((m) => m.name.startsWith('protected')).length;
    const row = (what: string, on: typeof coldOn, off: typeof coldOff): ResultRow => ({
      benchmark: 'Protected paths',
      measure: `${what} with the protection (${extra} more binds, ${sample.placeholders?.length ?? 0} placeholders) vs toolbox.protectedPaths off`,
      value: `${(on.median / off.median).toFixed(3)}× (${fmtMs(on.median)} vs ${fmtMs(off.median)})`,
      spread: `on ${spreadOf(on)}; off ${spreadOf(off)}`,
      goal: '≤ 1.05×',
      met: on.median / off.median <= 1.05,
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
