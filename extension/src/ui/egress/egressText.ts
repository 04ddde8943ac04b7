/**
 * The words of the egress policy (issue 30) for each place that shows them: the question's
 * notification, the status bar, the quick picks, the connection log's document. A host name, a
 * reason and an address came from a container (or from what it made the proxy see): our words
 * come first and say who asks, the outside parts are one line each, plain
 * (docs/decisions/0040-outside-text-is-plain-text.md). Pure, no vscode import:
 * test/unit/plain-text.test.ts runs each builder on its hostile corpus.
 */
import type { EgressLogEntry, EgressQuestion } from '../../backend/api/egress';
import { inline, plainText } from '../plainText';

/** `host:port`, an IPv6 literal as `[addr]:port` (the form toolbox.egressForFolder's `allow` takes). */
export function destination(host: string, port: number): string {
  const bare = host.startsWith('[') && host.endsWith(']') ? host.slice(1, -1) : host;
  return `${bare.includes(':') ? `[${bare}]` : bare}:${port}`;
}

/** The last part of a folder path ("app" of "/src/app"). */
function folderName(folder: string): string {
  return (
    folder
      .split(/[\\/]+/)
      .filter(Boolean)
      .pop() ?? folder
  );
}

/** The notification: `toolbox-app-1234abcd (folder app) wants to connect to api.example.com:443`. */
export function egressMessage(q: Pick<EgressQuestion, 'container' | 'folder' | 'host' | 'port'>): string {
  return plainText(
    `${inline(q.container, 200)} (folder ${inline(folderName(q.folder), 100)}) wants to connect to ${inline(destination(q.host, q.port), 300)}`,
    'message',
  );
}

/** The status bar: `$(globe) N` and a tooltip that lists the questions; undefined hides it. */
export function egressStatus(pending: readonly EgressQuestion[]): { text: string; tooltip: string; label: string } | undefined {
  if (pending.length === 0) return undefined;
  const n = pending.length;
  const shown = pending.slice(0, 10);
  return {
    text: `$(globe) ${n}`,
    label: `${n} connection question${n === 1 ? '' : 's'} waiting`,
    tooltip: plainText(
      [
        `${n} connection question${n === 1 ? '' : 's'} waiting (each connection is held until you answer):`,
        ...shown.map((q) => `• ${inline(egressMessage(q), 300)}`),
        ...(n > shown.length ? [`• and ${n - shown.length} more`] : []),
        '',
        'Click to answer.',
      ].join('\n'),
      'tooltip',
    ),
  };
}

/** A question as a quick pick row (the pick's sink escapes `$(`). */
export function egressPickItem(q: EgressQuestion): { label: string; description: string; detail: string } {
  return {
    label: plainText(destination(q.host, q.port), 'iconLabel', 200),
    description: plainText(q.container, 'iconLabel', 200),
    detail: plainText(`Folder: ${inline(q.folder)}`, 'iconLabel'),
  };
}

/** "512 B", "12.3 KB", "4.0 MB". */
export function byteSize(n: number): string {
  if (!Number.isFinite(n) || n < 1024) return `${Math.max(0, Math.round(Number.isFinite(n) ? n : 0))} B`;
  const units = ['KB', 'MB', 'GB', 'TB'];
  let value = n / 1024;
  let unit = 0;
  while (value >= 1024 && unit < units.length - 1) {
    value /= 1024;
    unit++;
  }
  return `${value.toFixed(1)} ${units[unit]}`;
}

const VIA: Record<EgressLogEntry['via'], string> = { connect: 'HTTP CONNECT', http: 'plain HTTP', socks: 'SOCKS5' };

/** A time with its date, as the log document writes it: `2026-12-03 12:00:05` (local time). */
export function logTime(ms: number): string {
  const d = new Date(ms);
  const p = (n: number) => String(n).padStart(2, '0');
  return `${d.getFullYear()}-${p(d.getMonth() + 1)}-${p(d.getDate())} ${p(d.getHours())}:${p(d.getMinutes())}:${p(d.getSeconds())}`;
}

/**
 * One connection as a line of the log's document: time, verdict, host:port, address, bytes up and
 * down, reason. Every outside part on this one line.
 */
export function egressLogLine(e: EgressLogEntry): string {
  const open = e.verdict === 'allowed' && e.endedAt === undefined ? ' (open)' : '';
  // Every part is one line and bounded; two spaces between columns (a whole-line clean would fold them).
  return [
    logTime(e.at),
    e.verdict === 'allowed' ? 'allowed' : 'denied ',
    inline(destination(e.host, e.port), 300),
    e.address !== undefined ? inline(e.address, 100) || '-' : '-',
    `up ${byteSize(e.bytesUp)} down ${byteSize(e.bytesDown)}${open}`,
    inline(e.reason, 500),
  ].join('  ');
}

/** The connection log's document: a header, then one line per connection, oldest first. */
export function egressLogDocument(container: string, entries: readonly EgressLogEntry[], now: number = Date.now()): string {
  const allowed = entries.filter((e) => e.verdict === 'allowed').length;
  const header = [
    `Connections of ${inline(container)} through this window's egress proxy, oldest first.`,
    `${entries.length} connection${entries.length === 1 ? '' : 's'} (${allowed} allowed, ${entries.length - allowed} denied); as of ${logTime(now)}.`,
    'Columns: time, verdict, host:port, address connected to, bytes up and down, reason.',
    '',
  ];
  if (entries.length === 0) return [...header, 'No connection yet in this window.', ''].join('\n');
  return [...header, ...entries.map(egressLogLine), ''].join('\n');
}

/** The tooltip of a log row: what, how, why, when (one line per fact; outside parts inline). */
export function egressLogTooltip(e: EgressLogEntry): string {
  const lines = [
    `${e.verdict === 'allowed' ? 'Allowed' : 'Denied'}: ${inline(destination(e.host, e.port), 300)} (${VIA[e.via] ?? 'unknown'})`,
    `${e.verdict === 'allowed' ? 'Rule' : 'Reason'}: ${inline(e.reason, 500)}`,
    e.address !== undefined ? `Address: ${inline(e.address, 100)}` : undefined,
    `Asked at ${logTime(e.at)}${e.endedAt !== undefined ? `, ended at ${logTime(e.endedAt)}` : e.verdict === 'allowed' ? ', still open' : ''}.`,
    e.verdict === 'allowed' ? `Sent ${byteSize(e.bytesUp)}, received ${byteSize(e.bytesDown)}.` : undefined,
  ];
  return plainText(lines.filter((l) => l !== undefined).join('\n'), 'tooltip');
}
