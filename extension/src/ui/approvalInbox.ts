/**
 * The agents' questions waiting for the user in this window (issue 28;
 * docs/decisions/0050-approvals-over-the-bridge.md). The bridge's /approval hands each checked
 * question to EditorActions.askApproval, which puts it here; it stays until the user answers it
 * (the notification, the status bar's pick, the Workspaces view), the time runs out, or the hook
 * hangs up (the user answered in the agent's own prompt, the agent was interrupted).
 *
 * Nothing here ever answers "allow" by itself: a time-out, a full inbox, a hook that left and a
 * window that closes are all "ask", so the agent's own prompt takes over. Each question is
 * answered once: the first answer wins and a later one (a second click, a stale notification)
 * changes nothing.
 *
 * No vscode import: unit-tested under plain node (test/unit/approval-inbox.test.ts).
 */
import type { AgentEvent, ApprovalAnswer, ApprovalRequest } from '../bridge/route';
import { AGENT_HOOK_LIMITS, APPROVAL_DECISIONS } from '../contract/constants';

/** The shortest wait toolbox.approvals.timeoutSeconds may set, in seconds. */
export const MIN_APPROVAL_TIMEOUT_S = 10;

/** Why a question was answered "ask" without the user (the reason the hook passes to the agent). */
export const ASK_REASONS = {
  full: 'too many questions waiting',
  closed: 'the VS Code window closed',
  left: 'the agent stopped waiting',
  terminal: "answered in the agent's terminal",
  off: 'approvals in VS Code are turned off',
  duplicate: 'this question is already waiting',
  timeout: (seconds: number) => `no answer in VS Code within ${seconds} s`,
} as const;

/** toolbox.approvals.timeoutSeconds as milliseconds: the default when unset or not a number, clamped to 10 s … maxTimeoutS. */
export function approvalTimeoutMs(setting: unknown): number {
  const seconds = typeof setting === 'number' && Number.isFinite(setting) ? setting : AGENT_HOOK_LIMITS.defaultTimeoutS;
  return Math.round(Math.min(AGENT_HOOK_LIMITS.maxTimeoutS, Math.max(MIN_APPROVAL_TIMEOUT_S, seconds)) * 1000);
}

/** A timer the inbox can set and clear (setTimeout by default; a test passes its own clock). */
export interface InboxTimers {
  set(fn: () => void, ms: number): unknown;
  clear(handle: unknown): void;
}

const REAL_TIMERS: InboxTimers = {
  set: (fn, ms) => setTimeout(fn, ms),
  clear: (handle) => clearTimeout(handle as NodeJS.Timeout),
};

export interface InboxOptions {
  timers?: InboxTimers;
  /** Questions one container may have waiting (AGENT_HOOK_LIMITS.pendingPerContainer). */
  perContainer?: number;
  /** Questions waiting in this window, every container together (AGENT_HOOK_LIMITS.pendingTotal). */
  total?: number;
}

interface Waiting {
  request: ApprovalRequest;
  resolve(answer: ApprovalAnswer): void;
  timer: unknown;
  signal: AbortSignal;
  onAbort(): void;
}

export class ApprovalInbox {
  private readonly waiting = new Map<string, Waiting>();
  /** How the last questions left (id → words), so a late click on one can say what happened. */
  private readonly gone = new Map<string, string>();
  private readonly listeners = new Set<() => void>();
  private readonly timers: InboxTimers;
  private readonly perContainer: number;
  private readonly total: number;
  private closed = false;

  constructor(options: InboxOptions = {}) {
    this.timers = options.timers ?? REAL_TIMERS;
    this.perContainer = options.perContainer ?? AGENT_HOOK_LIMITS.pendingPerContainer;
    this.total = options.total ?? AGENT_HOOK_LIMITS.pendingTotal;
  }

  /** Called after a question arrives or leaves (answered, timed out, abandoned, the inbox closed). */
  onDidChange(listener: () => void): { dispose(): void } {
    this.listeners.add(listener);
    return { dispose: () => void this.listeners.delete(listener) };
  }

  /**
   * Puts a question in the inbox and resolves with the user's answer; with "ask" when nobody
   * answers within `timeoutMs`, when the inbox is full (at once), or when `signal` aborts (the
   * question then just leaves: the caller has hung up and ignores the value).
   */
  ask(request: ApprovalRequest, signal: AbortSignal, timeoutMs: number): Promise<ApprovalAnswer> {
    if (this.closed) return Promise.resolve(WITHDRAWN);
    if (signal.aborted) return Promise.resolve(ask(ASK_REASONS.left));
    if (this.waiting.has(request.id)) return Promise.resolve(ask(ASK_REASONS.duplicate));
    const mine = [...this.waiting.values()].filter((w) => w.request.container === request.container).length;
    if (mine >= this.perContainer || this.waiting.size >= this.total) return Promise.resolve(ask(ASK_REASONS.full));
    return new Promise<ApprovalAnswer>((resolve) => {
      const onAbort = () => this.settle(request.id, ask(ASK_REASONS.left));
      const seconds = Math.round(timeoutMs / 1000);
      const timer = this.timers.set(() => this.settle(request.id, ask(ASK_REASONS.timeout(seconds))), timeoutMs);
      this.waiting.set(request.id, { request, resolve, timer, signal, onAbort });
      signal.addEventListener('abort', onAbort, { once: true });
      this.fire();
    });
  }

  /**
   * The user's answer to a waiting question. False when it is no longer waiting (answered
   * already, timed out, abandoned): nothing is sent then. An "allow for the session" the agent
   * cannot remember is sent as an allow for this once.
   */
  answer(id: string, answer: ApprovalAnswer): boolean {
    const entry = this.waiting.get(id);
    if (entry === undefined || !(APPROVAL_DECISIONS as readonly string[]).includes(answer.decision)) return false;
    const reason = answer.reason !== undefined ? { reason: answer.reason } : {};
    if (answer.decision === 'allow') {
      const scope = answer.scope === 'session' && entry.request.canAllowForSession ? 'session' : 'once';
      return this.settle(id, { decision: 'allow', scope, ...reason });
    }
    return this.settle(id, { decision: answer.decision, ...reason });
  }

  /**
   * What an agent reports next can tell that a question it asked was answered in its terminal
   * (Claude Code shows its own prompt beside the hook and, answered there, does not stop the
   * hook): a finished call of the same tool on the same subject (allowed there), or its turn or
   * session ending, or a new prompt from the user (denied or interrupted there). Those questions
   * of that agent session leave the inbox, answered "ask" (the agent already has its answer).
   * Returns how many left.
   */
  leftBehind(event: AgentEvent): number {
    if (event.agentSession === undefined) return 0;
    const over = event.kind === 'stop' || event.kind === 'session-end' || event.kind === 'prompt';
    const stale = [...this.waiting.values()].filter(
      ({ request: q }) =>
        q.container === event.container &&
        q.agentSession === event.agentSession &&
        // Fired after the question came (reports arrive late and out of order: the prompt that
        // led to the question may be reported after it).
        event.at >= q.receivedAt &&
        (over || (event.tool === q.tool && event.text === q.subject.text)),
    );
    for (const w of stale) this.settle(w.request.id, ask(ASK_REASONS.terminal), false);
    if (stale.length > 0) this.fire();
    return stale.length;
  }

  /** The questions waiting, oldest first. */
  pending(): readonly ApprovalRequest[] {
    return [...this.waiting.values()].map((w) => w.request);
  }

  /** How a question that has left the inbox left ("denied in VS Code", …); undefined when unknown or still waiting. */
  howLeft(id: string): string | undefined {
    return this.gone.get(id);
  }

  /** A waiting question by id; undefined once it has left. */
  get(id: string): ApprovalRequest | undefined {
    return this.waiting.get(id)?.request;
  }

  get size(): number {
    return this.waiting.size;
  }

  /**
   * The window is going away (a reload or a close): every waiting question, and every later one, is
   * withdrawn, never answered. The hook asks again, so a reloaded window shows it anew; after a
   * close the agent's own prompt decides (docs/decisions/0050-approvals-over-the-bridge.md).
   */
  dispose(): void {
    if (this.closed) return;
    this.closed = true;
    for (const id of [...this.waiting.keys()]) this.settle(id, WITHDRAWN, false);
    this.fire();
    this.listeners.clear();
  }

  private settle(id: string, answer: ApprovalAnswer, fire = true): boolean {
    const entry = this.waiting.get(id);
    if (entry === undefined) return false;
    this.waiting.delete(id);
    this.gone.set(id, leftAs(answer));
    if (this.gone.size > GONE_KEPT) this.gone.delete(this.gone.keys().next().value!);
    this.timers.clear(entry.timer);
    entry.signal.removeEventListener('abort', entry.onAbort);
    entry.resolve(answer);
    if (fire) this.fire();
    return true;
  }

  private fire(): void {
    for (const listener of [...this.listeners]) {
      try {
        listener();
      } catch {
        // A listener that fails (a view being disposed) must not keep the answer from the agent.
      }
    }
  }
}

/** Questions whose way out is remembered for a late click. */
const GONE_KEPT = 64;

/** How a question left, in words, from the answer it got. */
function leftAs(answer: ApprovalAnswer): string {
  if (answer.decision === 'allow') return answer.scope === 'session' ? 'allowed for the session in VS Code' : 'allowed in VS Code';
  if (answer.decision === 'deny') return 'denied in VS Code';
  if (answer.reason === ASK_REASONS.left) return 'answered in the terminal, or the agent stopped waiting';
  if (answer.reason === ASK_REASONS.terminal) return ASK_REASONS.terminal;
  return `left to the agent's own prompt (${answer.reason ?? 'no answer'})`;
}

/** What a window going away says: no answer; the bridge tells the hook to ask again. */
const WITHDRAWN: ApprovalAnswer = { decision: 'ask', reason: ASK_REASONS.closed, withdrawn: true };

function ask(reason: string): ApprovalAnswer {
  return { decision: 'ask', reason };
}
