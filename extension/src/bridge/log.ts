import type { BridgeEvent } from './server';

/** One line for the Toolbox log per bridge event: every request's route, status and duration. */
export function describeBridgeEvent(event: BridgeEvent): { level: 'info' | 'warn'; text: string } {
  if (event.kind !== 'request') return { level: event.kind, text: `bridge: ${event.message}` };
  const where = event.workspace ? `${event.transport}, ${event.workspace}` : event.transport;
  const detail = event.detail ? ` — ${event.detail}` : '';
  return {
    level: event.status >= 400 ? 'warn' : 'info',
    text: `bridge: ${event.route} ${event.status} in ${event.durationMs.toFixed(0)} ms (${where})${detail}`,
  };
}
