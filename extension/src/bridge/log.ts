/**
 * The bridge's log: its events (one per request, and the server's own notes) and how each is
 * written as a line. No other bridge module is imported here, so every one may import it.
 */

export type Transport = 'unix' | 'tcp';

export interface RequestLogEntry {
  kind: 'request';
  transport: Transport;
  route: string;
  status: number;
  durationMs: number;
  /** The workspace key, once the token identified it. */
  workspace?: string;
  /** The refusal or failure reason; never set for /credential. */
  detail?: string;
}

export type BridgeEvent = RequestLogEntry | { kind: 'info' | 'warn'; message: string };
export type BridgeLog = (event: BridgeEvent) => void;

/**
 * Untrusted text (a path, URL or route a container sent) made safe for one log line: control
 * characters, DEL, C1 controls and the Unicode line separators are written as escapes, so a
 * request cannot end a log line early and forge the next one.
 */
export function logSafe(text: string): string {
  // eslint-disable-next-line no-control-regex -- matching control characters is the point
  return text.replace(/[\u0000-\u001f\u007f-\u009f\u2028\u2029]/g, (c) => {
    if (c === '\n') return '\\n';
    if (c === '\r') return '\\r';
    if (c === '\t') return '\\t';
    return `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`;
  });
}

/** One line for the Toolbox log per bridge event: every request's route, status and duration. */
export function describeBridgeEvent(event: BridgeEvent): { level: 'info' | 'warn'; text: string } {
  if (event.kind !== 'request') return { level: event.kind, text: `bridge: ${logSafe(event.message)}` };
  const where = event.workspace ? `${event.transport}, ${event.workspace}` : event.transport;
  const detail = event.detail ? ` — ${logSafe(event.detail)}` : '';
  return {
    level: event.status >= 400 ? 'warn' : 'info',
    text: `bridge: ${logSafe(event.route)} ${event.status} in ${event.durationMs.toFixed(0)} ms (${logSafe(where)})${detail}`,
  };
}
