import type { BridgeEvent } from './server';

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
