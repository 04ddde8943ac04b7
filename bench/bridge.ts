/**
 * Bridge benchmarks: an authorised request's round trip over the unix socket and over loopback
 * TCP (each on a fresh connection, as the shims' curl makes them), and a burst of 200
 * concurrent requests under the real rate limits.
 */
import { ROUTES } from '../extension/src/contract/shims';
import { RATE_LIMITS } from '../extension/src/bridge/hub';
import { call, startRig, tcpTarget, unixTarget } from '../test/bridge/support';
import { fmtMs, stats, type ResultRow } from './harness';

async function roundTrips(target: Parameters<typeof call>[0], token: string, n: number): Promise<number[]> {
  const out: number[] = [];
  for (let i = 0; i < n; i++) {
    const t0 = performance.now();
    const reply = await call(target, ROUTES.open, { token, body: { url: 'https://example.test/' } });
    out.push(performance.now() - t0);
    if (reply.status !== 204) throw new Error(`/open answered ${reply.status}: ${reply.text}`);
  }
  return out;
}

export async function benchBridge(): Promise<ResultRow[]> {
  const rows: ResultRow[] = [];
  const rig = await startRig();
  try {
    const unix = unixTarget(rig);
    const tcp = tcpTarget(rig);
    await roundTrips(unix, rig.token, 50); // warm-up
    await roundTrips(tcp, rig.token, 50);
    const u: number[] = [];
    const t: number[] = [];
    for (let round = 0; round < 10; round++) {
      u.push(...(await roundTrips(unix, rig.token, 100)));
      t.push(...(await roundTrips(tcp, rig.token, 100)));
    }
    const su = stats(u);
    const st = stats(t);
    rows.push({
      benchmark: 'Bridge round trip',
      measure: 'authorised POST /open, unix socket, new connection each',
      value: `p50 ${fmtMs(su.median)}, p99 ${fmtMs(su.p99)}`,
      spread: `p10 ${fmtMs(su.p10)} – p90 ${fmtMs(su.p90)} (n=${su.n})`,
      goal: '≤ 2 ms p50',
      met: su.median <= 2,
    });
    rows.push({
      benchmark: 'Bridge round trip',
      measure: 'authorised POST /open, loopback TCP, new connection each',
      value: `p50 ${fmtMs(st.median)}, p99 ${fmtMs(st.p99)} (${(st.median / su.median).toFixed(2)}× the socket)`,
      spread: `p10 ${fmtMs(st.p10)} – p90 ${fmtMs(st.p90)} (n=${st.n})`,
      goal: '–',
      met: undefined,
    });
  } finally {
    await rig.cleanup();
  }

  // The burst runs under the real token buckets: only 204s and 429s are acceptable.
  const limited = await startRig({ hub: { rateLimits: RATE_LIMITS } });
  try {
    const t0 = performance.now();
    const replies = await Promise.allSettled(
      Array.from({ length: 200 }, () =>
        call(unixTarget(limited), ROUTES.open, { token: limited.token, body: { url: 'https://example.test/' } }),
      ),
    );
    const elapsed = performance.now() - t0;
    const statuses = new Map<string, number>();
    for (const r of replies) {
      const key = r.status === 'fulfilled' ? String(r.value.status) : `error ${String(r.reason).slice(0, 40)}`;
      statuses.set(key, (statuses.get(key) ?? 0) + 1);
    }
    const errors = [...statuses].filter(([k]) => k !== '204' && k !== '429').reduce((n, [, v]) => n + v, 0);
    const health = await call(unixTarget(limited), ROUTES.healthz, { method: 'GET' });
    rows.push({
      benchmark: 'Bridge burst',
      measure: '200 concurrent authorised requests (real rate limits), unix socket',
      value: `${[...statuses].map(([k, v]) => `${v}× ${k}`).join(', ')} in ${fmtMs(elapsed)}; /healthz after: ${health.status}`,
      spread: '–',
      goal: '0 errors beyond 429s',
      met: errors === 0 && health.status === 200,
    });
  } finally {
    await limited.cleanup();
  }
  return rows;
}
