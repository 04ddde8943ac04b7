/**
 * `npm run bench`: runs every benchmark against the real engine, prints the table and writes
 * bench/RESULTS.md. Exits non-zero only when a benchmark errors, never for a missed goal.
 */
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { cpus, release, totalmem } from 'node:os';
import { join } from 'node:path';
import { benchAgentState } from './agentState';
import { benchBridge } from './bridge';
import { benchDockerEndpoint } from './dockerEndpoint';
import { benchEgressContainer } from './egressContainer';
import { benchEgressProxy } from './egressProxy';
import { benchColdOpen, benchThroughput, benchWarmOpen } from './engine';
import { markdownTable, type ResultRow } from './harness';
import { benchImage } from './image';
import { benchPodman } from './podman';
import { benchProtect, benchProtectWindow } from './protect';
import { benchSessions } from './sessions';
import { benchShim } from './shim';
import { benchReattach } from './reattach';
import { benchRemote } from './remote';
import { benchStartup } from './startup';
import { benchRefresh, benchScale } from './ui';
import { benchWorktree } from './worktree';

type Bench = [name: string, run: () => Promise<ResultRow[]>];

const BENCHES: Bench[] = [
  ['warm-open', benchWarmOpen],
  ['cold-open', benchColdOpen],
  ['throughput', benchThroughput],
  ['sessions', benchSessions],
  ['reattach', benchReattach],
  ['bridge', benchBridge],
  ['shim', benchShim],
  ['startup', benchStartup],
  ['refresh', benchRefresh],
  ['scale', benchScale],
  ['image', benchImage],
  ['worktree', benchWorktree],
  ['agentstate', benchAgentState],
  ['remote', benchRemote],
  ['podman', benchPodman],
  ['protect', benchProtect],
  ['protect-window', benchProtectWindow],
  ['docker-endpoint', benchDockerEndpoint],
  ['egress-proxy', benchEgressProxy],
  ['egress-container', benchEgressContainer],
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
  console.log(`\n${markdownTable(rows)}`);
  const file = join(__dirname, '../../bench/RESULTS.md');
  // A run of some benchmarks updates their rows in the last full run's table and says so.
  const kept = only.length && existsSync(file) ? keptRows(readFileSync(file, 'utf8'), rows) : undefined;
  const text = kept
    ? `${kept.header.trimEnd()}\n\nRows of ${only.join(', ')} updated ${new Date().toISOString()}.\n\n${markdownTable(rows, kept.rows)}`
    : `${header}${markdownTable(rows)}`;
  writeFileSync(file, `${text}\n${failures.length ? `\nFailed: ${failures.join(', ')}\n` : ''}`);
  if (failures.length) process.exit(1);
}

/**
 * The last run's header (up to its table, without earlier "updated" lines) and its table rows
 * other than those of the benchmarks just run (matched by the benchmark column).
 */
function keptRows(previous: string, fresh: ResultRow[]): { header: string; rows: string[] } | undefined {
  const start = previous.indexOf('| benchmark |');
  if (start < 0) return undefined;
  const header = previous
    .slice(0, start)
    .split('\n')
    .filter((line) => !line.startsWith('Rows of '))
    .join('\n')
    .replace(/\n{3,}/g, '\n\n');
  const names = new Set(fresh.map((r) => r.benchmark));
  const rows = previous
    .slice(start)
    .split('\n')
    .slice(2)
    .filter((line) => line.startsWith('| ') && !names.has(line.split(' | ')[0]!.slice(2)));
  return { header, rows };
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
