/**
 * `npm run bench`: runs every benchmark against the real engine, prints the table and writes
 * bench/RESULTS.md. Exits non-zero only when a benchmark errors, never for a missed goal.
 */
import { writeFileSync } from 'node:fs';
import { cpus, release, totalmem } from 'node:os';
import { join } from 'node:path';
import { benchBridge } from './bridge';
import { benchColdOpen, benchThroughput, benchWarmOpen } from './engine';
import { markdownTable, type ResultRow } from './harness';
import { benchImage } from './image';
import { benchSessions } from './sessions';
import { benchShim } from './shim';
import { benchStartup } from './startup';
import { benchRefresh, benchScale } from './ui';

type Bench = [name: string, run: () => Promise<ResultRow[]>];

const BENCHES: Bench[] = [
  ['warm-open', benchWarmOpen],
  ['cold-open', benchColdOpen],
  ['throughput', benchThroughput],
  ['sessions', benchSessions],
  ['bridge', benchBridge],
  ['shim', benchShim],
  ['startup', benchStartup],
  ['refresh', benchRefresh],
  ['scale', benchScale],
  ['image', benchImage],
];

async function main(): Promise<void> {
  const only = process.argv.slice(2);
  const rows: ResultRow[] = [];
  const failures: string[] = [];
  for (const [name, run] of BENCHES) {
    if (only.length && !only.includes(name)) continue;
    const t0 = Date.now();
    process.stdout.write(`bench ${name} … `);
    try {
      const r = await run();
      rows.push(...r);
      console.log(`done in ${((Date.now() - t0) / 1000).toFixed(1)} s`);
    } catch (error) {
      console.log('FAILED');
      console.error(error);
      failures.push(name);
    }
  }
  const engine = await engineVersion();
  const header = [
    '# Benchmark results',
    '',
    `Run ${new Date().toISOString()} by \`npm run bench\`${only.length ? ` (only: ${only.join(', ')})` : ''}.`,
    '',
    `- Machine: ${cpus().length}× ${cpus()[0]?.model ?? 'cpu'}, ${(totalmem() / 2 ** 30).toFixed(0)} GiB, Linux ${release()}`,
    `- Node ${process.version}; Docker engine ${engine}`,
    '- Each pair of contestants is interleaved (A B A B …) after a warm-up; ratios are measured in the same run.',
    '',
    '',
  ].join('\n');
  const table = markdownTable(rows);
  console.log(`\n${table}`);
  writeFileSync(
    join(__dirname, '../../bench/RESULTS.md'),
    `${header}${table}\n${failures.length ? `\nFailed: ${failures.join(', ')}\n` : ''}`,
  );
  if (failures.length) process.exit(1);
}

async function engineVersion(): Promise<string> {
  try {
    const Docker = (await import('dockerode')).default;
    const v = await new Docker().version();
    return `${v.Version} (API ${v.ApiVersion})`;
  } catch {
    return 'unreachable';
  }
}

void main();
