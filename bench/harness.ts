/**
 * The benchmark harness: contestants are measured interleaved (A B A B …) after a warm-up, so
 * drift in machine load hits both alike, and each result is reported as a ratio measured in the
 * same run. Speed targets are reported here, never asserted in tests.
 */
import { performance } from 'node:perf_hooks';

export interface Sample {
  name: string;
  ms: number[];
}

export interface Stats {
  median: number;
  p10: number;
  p90: number;
  p99: number;
  min: number;
  n: number;
}

export function stats(values: number[]): Stats {
  if (values.length === 0) throw new Error('stats of an empty sample');
  const s = [...values].sort((a, b) => a - b);
  const q = (p: number) => s[Math.min(s.length - 1, Math.max(0, Math.ceil((p / 100) * s.length) - 1))]!;
  return { median: q(50), p10: q(10), p90: q(90), p99: q(99), min: s[0]!, n: s.length };
}

export type Contestant = () => Promise<void>;

/** Times each contestant `rounds` times, interleaved, after `warmup` untimed rounds. */
export async function interleave(
  contestants: Record<string, Contestant>,
  opts: { rounds?: number; warmup?: number } = {},
): Promise<Record<string, Stats>> {
  const rounds = opts.rounds ?? 10;
  const warmup = opts.warmup ?? 2;
  const names = Object.keys(contestants);
  const samples: Record<string, number[]> = Object.fromEntries(names.map((n) => [n, []]));
  for (let r = 0; r < warmup + rounds; r++) {
    // Alternate the order each round so neither contestant always runs first.
    const order = r % 2 === 0 ? names : [...names].reverse();
    for (const name of order) {
      const t0 = performance.now();
      await contestants[name]!();
      const dt = performance.now() - t0;
      if (r >= warmup) samples[name]!.push(dt);
    }
  }
  return Object.fromEntries(names.map((n) => [n, stats(samples[n]!)]));
}

export interface ResultRow {
  benchmark: string;
  measure: string;
  value: string;
  spread: string;
  goal: string;
  met: boolean | undefined;
}

export function fmtMs(ms: number): string {
  return ms < 10 ? `${ms.toFixed(2)} ms` : `${ms.toFixed(1)} ms`;
}

export function spreadOf(s: Stats): string {
  return `p10 ${fmtMs(s.p10)} – p90 ${fmtMs(s.p90)} (n=${s.n})`;
}

/** The results as a markdown table; `before`: rows already rendered, kept ahead of these. */
export function markdownTable(rows: ResultRow[], before: string[] = []): string {
  const head = '| benchmark | measure | result | spread | goal | met |\n|---|---|---|---|---|---|';
  const body = rows.map(
    (r) =>
      `| ${r.benchmark} | ${r.measure} | ${r.value} | ${r.spread} | ${r.goal} | ${r.met === undefined ? '–' : r.met ? 'yes' : '**no**'} |`,
  );
  return [head, ...before, ...body].join('\n');
}
