/**
 * The connection questions waiting for the user in this window (issue 30,
 * docs/decisions/0056-egress-through-a-host-proxy.md). The backend hands each question of a
 * container in `ask` mode to the prompter (ui/egress.ts), which puts it here while its connection
 * is held; it stays until the user answers it (the notification, the status bar's pick), the
 * backend lets go of it (the program gave up, the backend's time ran out: its signal aborts), or
 * the window closes.
 *
 * Nothing here allows by itself: an abort, a window that closes and a question left waiting past
 * the backend's own limit are all `deny`. Each question is answered once: the first answer wins
 * and a later one (a second click, a stale notification) changes nothing.
 *
 * Also the one writer of toolbox.egressForFolder's new value (`settingWithAllow`): the folder's
 * entry with one more `allow`, everything else as it was.
 *
 * No vscode import: unit-tested under plain node (test/unit/egress-ui.test.ts).
 */
import type { EgressChoice, EgressQuestion } from '../backend/api/egress';
import { EGRESS_LIMITS } from '../contract/constants';
import { cleanPath } from '../plan/naming';

/** A timer the inbox can set and clear (setTimeout by default; a test passes its own clock). */
export interface EgressTimers {
  set(fn: () => void, ms: number): unknown;
  clear(handle: unknown): void;
}

const REAL_TIMERS: EgressTimers = {
  set: (fn, ms) => {
    const t = setTimeout(fn, ms);
    // A question left behind keeps no process alive.
    t.unref?.();
    return t;
  },
  clear: (handle) => clearTimeout(handle as NodeJS.Timeout),
};

/**
 * How long past the backend's own limit (EGRESS_LIMITS.askMs) a question may wait before the inbox
 * answers `deny` itself: the backend's signal should have come first; this only keeps a question
 * whose signal never comes from waiting in the status bar for ever.
 */
export const EGRESS_GRACE_MS = 5_000;

interface Waiting {
  question: EgressQuestion;
  resolve(choice: EgressChoice): void;
  timer: unknown;
  signal: AbortSignal;
  onAbort(): void;
}

/** Why a question left without the user's answer, for a late click. */
export const EGRESS_LEFT = {
  gaveUp: 'the connection gave up or its time ran out (denied)',
  closed: 'the window closed (denied)',
  duplicate: 'the same question is already waiting',
} as const;

export class EgressInbox {
  private readonly waiting = new Map<string, Waiting>();
  /** How the last questions left (id → words), so a late click can say what happened. */
  private readonly gone = new Map<string, string>();
  private readonly listeners = new Set<() => void>();
  private readonly timers: EgressTimers;
  private readonly waitMs: number;
  private closed = false;

  constructor(options: { timers?: EgressTimers; waitMs?: number } = {}) {
    this.timers = options.timers ?? REAL_TIMERS;
    this.waitMs = options.waitMs ?? EGRESS_LIMITS.askMs + EGRESS_GRACE_MS;
  }

  /** Called after a question arrives or leaves. */
  onDidChange(listener: () => void): { dispose(): void } {
    this.listeners.add(listener);
    return { dispose: () => void this.listeners.delete(listener) };
  }

  /**
   * Puts a question in the inbox and resolves with the user's answer; with `deny` when `signal`
   * aborts, when the inbox closes, or at once when it is closed already, the signal has aborted
   * already or the same id is waiting.
   */
  ask(question: EgressQuestion, signal: AbortSignal): Promise<EgressChoice> {
    if (this.closed || signal.aborted || this.waiting.has(question.id)) return Promise.resolve('deny');
    return new Promise<EgressChoice>((resolve) => {
      const onAbort = () => this.settle(question.id, 'deny', EGRESS_LEFT.gaveUp);
      const timer = this.timers.set(onAbort, this.waitMs);
      this.waiting.set(question.id, { question, resolve, timer, signal, onAbort });
      signal.addEventListener('abort', onAbort, { once: true });
      this.fire();
    });
  }

  /** The user's answer; false when the question is no longer waiting (nothing is sent then). */
  answer(id: string, choice: EgressChoice): boolean {
    return this.settle(id, choice, leftAs(choice));
  }

  /** The questions waiting, oldest first. */
  pending(): readonly EgressQuestion[] {
    return [...this.waiting.values()].map((w) => w.question);
  }

  /** A waiting question by id; undefined once it has left. */
  get(id: string): EgressQuestion | undefined {
    return this.waiting.get(id)?.question;
  }

  /** How a question that has left went, in words; undefined when unknown or still waiting. */
  howLeft(id: string): string | undefined {
    return this.gone.get(id);
  }

  get size(): number {
    return this.waiting.size;
  }

  /** The window is going away: every waiting question, and every later one, is denied. */
  dispose(): void {
    if (this.closed) return;
    this.closed = true;
    for (const id of [...this.waiting.keys()]) this.settle(id, 'deny', EGRESS_LEFT.closed, false);
    this.fire();
    this.listeners.clear();
  }

  private settle(id: string, choice: EgressChoice, how: string, fire = true): boolean {
    const entry = this.waiting.get(id);
    if (entry === undefined) return false;
    this.waiting.delete(id);
    this.gone.set(id, how);
    if (this.gone.size > GONE_KEPT) this.gone.delete(this.gone.keys().next().value!);
    this.timers.clear(entry.timer);
    entry.signal.removeEventListener('abort', entry.onAbort);
    entry.resolve(choice);
    if (fire) this.fire();
    return true;
  }

  private fire(): void {
    for (const listener of [...this.listeners]) {
      try {
        listener();
      } catch {
        // A listener that fails (a view being disposed) must not keep the answer from the connection.
      }
    }
  }
}

/** Questions whose way out is remembered for a late click. */
const GONE_KEPT = 64;

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
