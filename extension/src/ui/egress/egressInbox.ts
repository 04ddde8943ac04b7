/**
 * The connection questions waiting for the user in this window (issue 30,
 * docs/decisions/0056-egress-through-a-host-proxy.md). The backend hands each question of a
 * container in `ask` mode to the prompter (ui/egress/egressQuestions.ts), which puts it here while its connection
 * is held; it stays until the user answers it (the notification, the status bar's pick), the
 * backend lets go of it (the program gave up, the backend's time ran out: its signal aborts), or
 * the window closes.
 *
 * Nothing here allows by itself: an abort, a window that closes and a question left waiting past
 * the backend's own limit are all `deny`. Each question is answered once: the first answer wins
 * and a later one (a second click, a stale notification) changes nothing. The waiting, the
 * answer-once and the time-out are ui/approvals/questionInbox.ts's; the choices and their words are here.
 *
 * Also the one writer of toolbox.egressForFolder's new value (`settingWithAllow`): the folder's
 * entry with one more `allow`, everything else as it was.
 *
 * No vscode import: unit-tested under plain node (test/unit/egress-ui.test.ts).
 */
import type { EgressChoice, EgressQuestion } from '../../backend/api/egress';
import { EGRESS_LIMITS } from '../../contract/egress';
import { cleanPath } from '../../plan/naming';
import { QuestionInbox, realTimers, type InboxTimers } from '../approvals/questionInbox';

/** A timer the inbox can set and clear (setTimeout by default; a test passes its own clock). */
export type EgressTimers = InboxTimers;

/**
 * How long past the backend's own limit (EGRESS_LIMITS.askMs) a question may wait before the inbox
 * answers `deny` itself: the backend's signal should have come first; this only keeps a question
 * whose signal never comes from waiting in the status bar for ever.
 */
export const EGRESS_GRACE_MS = 5_000;

/** Why a question left without the user's answer, for a late click. */
export const EGRESS_LEFT = {
  gaveUp: 'the connection gave up or its time ran out (denied)',
  closed: 'the window closed (denied)',
  duplicate: 'the same question is already waiting',
} as const;

export class EgressInbox extends QuestionInbox<EgressQuestion, EgressChoice> {
  private readonly waitMs: number;

  constructor(options: { timers?: EgressTimers; waitMs?: number } = {}) {
    // A question left behind keeps no process alive.
    super(options.timers ?? realTimers(false), leftAs);
    this.waitMs = options.waitMs ?? EGRESS_LIMITS.askMs + EGRESS_GRACE_MS;
  }

  /**
   * Puts a question in the inbox and resolves with the user's answer; with `deny` when `signal`
   * aborts, when the inbox closes, or at once when it is closed already, the signal has aborted
   * already or the same id is waiting.
   */
  ask(question: EgressQuestion, signal: AbortSignal): Promise<EgressChoice> {
    if (this.closed || signal.aborted || this.get(question.id) !== undefined) return Promise.resolve('deny');
    return this.wait(question, signal, this.waitMs, { answer: 'deny', how: EGRESS_LEFT.gaveUp });
  }

  /** The user's answer; false when the question is no longer waiting (nothing is sent then). */
  answer(id: string, choice: EgressChoice): boolean {
    return this.settle(id, choice);
  }

  /** The window is going away: every waiting question, and every later one, is denied. */
  dispose(): void {
    this.close({ answer: 'deny', how: EGRESS_LEFT.closed });
  }
}

function leftAs(choice: EgressChoice): string {
  switch (choice) {
    case 'once':
      return 'allowed once';
    case 'folder':
      return 'allowed for the folder';
    case 'deny':
      return 'denied';
  }
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === 'object' && !Array.isArray(value);
}

/**
 * toolbox.egressForFolder's new value with `rule` (`host:port`) added to the folder's `allow`:
 * the folder's other keys and entries and every other folder as they were, no duplicate
 * (`unchanged` then). Throws, naming what is wrong, when the setting, the folder's entry or its
 * `allow` is not what the setting's schema says: a value the user wrote by hand is never replaced.
 */
export function settingWithAllow(setting: unknown, folder: string, rule: string): { value: Record<string, unknown>; unchanged: boolean } {
  if (setting !== undefined && setting !== null && !isRecord(setting)) {
    throw new Error('toolbox.egressForFolder in your User settings is not an object; fix it there, then answer again.');
  }
  const all: Record<string, unknown> = { ...(setting ?? {}) };
  const key = cleanPath(folder);
  const entry = Object.hasOwn(all, key) ? all[key] : undefined;
  if (entry !== undefined && entry !== null && !isRecord(entry)) {
    throw new Error(`toolbox.egressForFolder's entry for ${key} in your User settings is not an object; fix it there, then answer again.`);
  }
  const fields: Record<string, unknown> = { ...(entry ?? {}) };
  const allow = fields.allow;
  if (allow !== undefined && !Array.isArray(allow)) {
    throw new Error(`toolbox.egressForFolder's "allow" for ${key} in your User settings is not a list; fix it there, then answer again.`);
  }
  const list = (allow ?? []) as unknown[];
  const lower = rule.toLowerCase();
  if (list.some((r) => typeof r === 'string' && r.trim().toLowerCase() === lower)) return { value: all, unchanged: true };
  all[key] = { ...fields, allow: [...list, rule] };
  return { value: all, unchanged: false };
}
