/**
 * Refused requests, aggregated: a container can send tens of thousands of bad requests a second
 * (a wrong token costs it nothing), and one log line each would flood the Toolbox log. The first
 * refusal of each kind (transport, route, status, workspace) in an interval is logged as it
 * happens, up to a fixed number of lines; every other refusal is counted, and the counts are
 * logged as one line when the interval ends.
 */
import { ROUTES } from '../contract/shims';
import type { BridgeEvent, BridgeLog, RequestLogEntry } from './log';

/**
 * Refused requests are logged one by one only for the first of each kind (route, status,
 * transport, workspace) in an interval, and at most `lines` of them; the rest are counted and
 * logged as one summary line when the interval ends.
 */
export const REFUSAL_LOG = {
  intervalMs: 10_000,
  lines: 20,
} as const;

export interface RefusalLogOptions {
  intervalMs: number;
  /** Refusals logged one by one per interval, at most. */
  lines: number;
}

export interface RefusalLog {
  log: BridgeLog;
  /** Logs the pending summary now (dispose). */
  flush(): void;
}

const KNOWN_ROUTES = new Set<string>(Object.values(ROUTES));
/** Kinds listed by name in one summary line; the rest are summed as "other". */
const SUMMARY_KINDS = 8;

function kindOf(e: RequestLogEntry): string {
  const route = KNOWN_ROUTES.has(e.route) ? e.route : '(unknown route)';
  return `${route} ${e.status} (${e.workspace ? `${e.transport}, ${e.workspace}` : e.transport})`;
}

export function aggregateRefusals(log: BridgeLog, options: RefusalLogOptions = REFUSAL_LOG): RefusalLog {
  let seen = new Set<string>();
  let logged = 0;
  let suppressed = new Map<string, number>();
  let timer: NodeJS.Timeout | undefined;

  const flush = (): void => {
    clearTimeout(timer);
    timer = undefined;
    const counts = [...suppressed.entries()].sort((a, b) => b[1] - a[1]);
    seen = new Set();
    logged = 0;
    suppressed = new Map();
    if (counts.length === 0) return;
    const total = counts.reduce((sum, [, n]) => sum + n, 0);
    const named = counts.slice(0, SUMMARY_KINDS).map(([kind, n]) => `${n} × ${kind}`);
    const rest = counts.slice(SUMMARY_KINDS).reduce((sum, [, n]) => sum + n, 0);
    if (rest > 0) named.push(`${rest} × other kinds`);
    log({
      kind: 'warn',
      message:
        `${total} more refused request${total === 1 ? '' : 's'} in the last ${options.intervalMs / 1000} s, not logged one by one: ` +
        `${named.join('; ')}. A container sending this many bad requests is misbehaving; stop it if this goes on.`,
    });
  };

  const record = (event: BridgeEvent): void => {
    if (event.kind !== 'request' || event.status < 400) {
      log(event);
      return;
    }
    timer ??= setTimeout(flush, options.intervalMs).unref();
    const kind = kindOf(event);
    if (!seen.has(kind) && logged < options.lines) {
      seen.add(kind);
      logged += 1;
      log(event);
      return;
    }
    suppressed.set(kind, (suppressed.get(kind) ?? 0) + 1);
  };

  return { log: record, flush };
}
