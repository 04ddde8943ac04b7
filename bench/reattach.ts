/**
 * Reattach after a window reload, in a real VS Code (code-server): activation → every recorded
 * terminal showing its current screen (the holder sends it first), for one shell and for ten.
 * Runs bench/reattachUi.ts through scripts/e2e.sh, which brings its own code-server, temp HOME
 * and object prefix.
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fmtMs, spreadOf, stats, type ResultRow } from './harness';

export async function benchReattach(): Promise<ResultRow[]> {
  const dir = mkdtempSync(join(tmpdir(), 'toolbox-bench-reattach-'));
  const out = join(dir, 'samples.json');
  try {
    const run = spawnSync('bash', ['scripts/e2e.sh'], {
      cwd: join(__dirname, '../..'),
      stdio: ['ignore', 'inherit', 'inherit'],
      env: { ...process.env, E2E_SKIP_BUILD: '1', E2E_ONLY_UI: '1', E2E_UI_TESTS: 'out/bench/reattachUi.js', BENCH_OUT: out },
    });
    if (run.status !== 0) throw new Error(`scripts/e2e.sh exited with ${run.status}`);
    const samples = JSON.parse(readFileSync(out, 'utf8')) as { one: number[]; ten: number[] };
    const row = (count: string, values: number[], goal: number): ResultRow => {
      const s = stats(values);
      return {
        benchmark: `Reattach after reload (${count})`,
        measure: 'code-server: activation → every reattached terminal shows its screen',
        value: `${fmtMs(s.median)} median`,
        spread: spreadOf(s),
        goal: `≤ ${goal} ms`,
        met: s.median <= goal,
      };
    };
    return [row('1 shell', samples.one, 300), row('10 shells', samples.ten, 1000)];
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
