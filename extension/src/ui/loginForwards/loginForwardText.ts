/**
 * The words for login callback forwards (issue 29): the status bar item, its tooltip, the quick
 * pick rows and the notices. Pure, so test/unit/login-forward-text.test.ts holds them to hostile
 * container names; every container name is plain text here (docs/decisions/0040).
 */
import type { LoginForwardEvent, LoginForwardInfo } from '../../backend/api/loginForwards';
import { inline, plainText } from '../plainText';

/** "Login callback on port 1455 forwarded to <container>": the sentence every place uses. */
export function forwardSentence(f: Pick<LoginForwardInfo, 'port' | 'container'>): string {
  return `Login callback on port ${f.port} forwarded to ${inline(f.container, 200)}`;
}

function minutesLeft(closesAt: number, now: number): string {
  const m = Math.max(1, Math.ceil((closesAt - now) / 60_000));
  return `${m} min`;
}

/** The status bar: `$(key) Login :1455` (or several ports) and a tooltip naming each; undefined hides it. */
export function loginForwardStatus(
  forwards: readonly LoginForwardInfo[],
  now: number,
): { text: string; tooltip: string; label: string } | undefined {
  if (forwards.length === 0) return undefined;
  const ports = forwards.map((f) => `:${f.port}`).join(' ');
  const lines = forwards.map(
    (f) =>
      `${forwardSentence(f)} (127.0.0.1:${f.port} on this host; closes after the login, at the latest in ${minutesLeft(f.closesAt, now)}).`,
  );
  return {
    text: `$(key) Login ${ports}`,
    label: plainText(lines.join(' '), 'message'),
    tooltip: plainText([...lines, '', 'Click to stop forwarding.'].join('\n'), 'tooltip'),
  };
}

/** A forward as a quick pick row (Stop Forwarding a Login Port…). */
export function loginForwardPickItem(f: LoginForwardInfo, now: number): { label: string; description: string } {
  return {
    label: plainText(`Port ${f.port}`, 'iconLabel', 50),
    description: plainText(`to ${inline(f.container, 200)} · closes in ${minutesLeft(f.closesAt, now)} at the latest`, 'iconLabel', 300),
  };
}

/** What the user is told when something happened to a forward; undefined: nothing to say. */
export function loginForwardNotice(event: LoginForwardEvent): { level: 'error' | 'status'; text: string } | undefined {
  switch (event.kind) {
    case 'opened':
      return { level: 'status', text: plainText(`${forwardSentence(event.forward)}.`, 'message') };
    case 'failed':
      return {
        level: 'error',
        text: plainText(
          `The login callback on port ${event.port} cannot reach ${inline(event.container, 200)}: ${event.message}`,
          'message',
        ),
      };
    case 'closed': {
      const why: Record<typeof event.end, string> = {
        answered: 'the login callback was answered',
        'timed-out': 'its time ran out',
        stopped: 'stopped',
        connections: 'too many connections',
        failed: 'the container can no longer be reached',
      };
      return { level: 'status', text: plainText(`Login callback on port ${event.forward.port} closed: ${why[event.end]}.`, 'message') };
    }
  }
}
