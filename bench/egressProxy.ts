/**
 * Egress proxy benchmarks (issue 30, extension/src/bridge/egressProxy.ts): 100 MiB from a
 * loopback server through the proxy's unix socket (CONNECT, then the splice with its byte counts)
 * against a direct connection to the same server, and a connection's set-up (CONNECT to its 200)
 * against a direct connect. The proxy runs here alone, as in the extension host; the origin and
 * the client run in bench/egressProxyChild.ts, which interleaves the contestants in one run. The
 * policy is the real one (a rule for 127.0.0.1).
 */
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { startEgressProxy } from '../extension/src/bridge/egressProxy';
import { decideDestination, parseEgressRule, type EgressRule } from '../extension/src/plan/egress';
import { fmtMs, stats, type ResultRow, type Stats } from './harness';

interface ChildReport {
  throughput: Record<'proxy' | 'direct', Stats>;
  setup: Record<'proxy' | 'direct', number[]>;
  totalBytes: number;
}

function runChild(socketPath: string): Promise<ChildReport> {
  return new Promise((resolve, reject) => {
    execFile(process.execPath, [join(__dirname, 'egressProxyChild.js'), socketPath], { timeout: 300_000 }, (error, stdout, stderr) => {
      if (error) reject(new Error(`the bench child failed: ${stderr || error.message}`));
      else resolve(JSON.parse(stdout) as ChildReport);
    });
  });
}

export async function benchEgressProxy(): Promise<ResultRow[]> {
  const dir = mkdtempSync('/tmp/tbe-bench-');
  const socketPath = join(dir, 'egress.sock');
  const policy = { mode: 'allowlist' as const, rules: [parseEgressRule('127.0.0.1', 'user') as EgressRule] };
  let logged = 0;
  let bytesDown = 0;
  const proxy = await startEgressProxy({
    socketPath,
    mode: () => policy.mode,
    decide: (dest) => {
      const v = decideDestination(policy, dest);
      return Promise.resolve(v.kind === 'allow' ? { allow: true as const } : { allow: false as const, reason: 'denied' });
    },
    onConnection: () => (logged += 1),
    onEnd: (entry) => (bytesDown += entry.bytesDown),
  });
  try {
    const report = await runChild(socketPath);
    if (logged === 0 || bytesDown < report.totalBytes) throw new Error('the proxy did not log the connections it carried');
    const rows: ResultRow[] = [];
    const p = report.throughput.proxy;
    const d = report.throughput.direct;
    const mib = (ms: number): number => report.totalBytes / 2 ** 20 / (ms / 1000);
    const ratio = d.median / p.median;
    rows.push({
      benchmark: 'Egress proxy: 100 MiB from a loopback server',
      measure: 'CONNECT through the proxy (unix socket, splice, byte counts) vs a direct TCP connection, throughput',
      value: `${ratio.toFixed(2)}× the direct speed (${mib(p.median).toFixed(0)} vs ${mib(d.median).toFixed(0)} MiB/s)`,
      spread: `proxy p10 ${fmtMs(p.p10)} – p90 ${fmtMs(p.p90)} (n=${p.n}); direct p10 ${fmtMs(d.p10)} – p90 ${fmtMs(d.p90)} (n=${d.n})`,
      goal: '≥ 0.9×',
      met: ratio >= 0.9,
    });
    const sp = stats(report.setup.proxy);
    const sd = stats(report.setup.direct);
    const overhead = sp.median - sd.median;
    rows.push({
      benchmark: 'Egress proxy: connection set-up p50',
      measure: 'CONNECT to its 200 through the proxy (policy, connect to the origin) vs a direct connect',
      value: `+${fmtMs(overhead)} (proxy p50 ${fmtMs(sp.median)}, p99 ${fmtMs(sp.p99)}; direct p50 ${fmtMs(sd.median)})`,
      spread: `proxy p10 ${fmtMs(sp.p10)} – p90 ${fmtMs(sp.p90)} (n=${sp.n}); direct p10 ${fmtMs(sd.p10)} – p90 ${fmtMs(sd.p90)} (n=${sd.n})`,
      goal: '≤ 2 ms over direct',
      met: overhead <= 2,
    });
    return rows;
  } finally {
    await proxy.close();
    rmSync(dir, { recursive: true, force: true });
  }
}
