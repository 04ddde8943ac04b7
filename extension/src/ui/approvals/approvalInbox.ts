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
 * changes nothing. The waiting, the answer-once and the time-out are ui/approvals/questionInbox.ts's; what
 * is the agents' own (the caps, the answers' reasons, leftBehind) is here.
 *
 * No vscode import: unit-tested under plain node (test/unit/approval-inbox.test.ts).
 */
import type { AgentEvent, ApprovalAnswer, ApprovalRequest } from '../../backend/api/editor';
import { AGENT_HOOK_LIMITS, APPROVAL_DECISIONS } from '../../contract/agentHook';
import { QuestionInbox, realTimers, type InboxTimers } from './questionInbox';

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

export type { InboxTimers } from './questionInbox';

export interface InboxOptions {
  timers?: InboxTimers;
  /** Questions one container may have waiting (AGENT_HOOK_LIMITS.pendingPerContainer). */
  perContainer?: number;
  /** Questions waiting in this window, every container together (AGENT_HOOK_LIMITS.pendingTotal). */
  total?: number;
}

export class ApprovalInbox extends QuestionInbox<ApprovalRequest, ApprovalAnswer> {
  private readonly perContainer: number;
  private readonly total: number;

  constructor(options: InboxOptions = {}) {
    super(options.timers ?? realTimers(true), leftAs);
    this.perContainer = options.perContainer ?? AGENT_HOOK_LIMITS.pendingPerContainer;
    this.total = options.total ?? AGENT_HOOK_LIMITS.pendingTotal;
  }

  /**
   * Puts a question in the inbox and resolves with the user's answer; with "ask" when nobody
   * answers within `timeoutMs`, when the inbox is full (at once), or when `signal` aborts (the
   * question then just leaves: the caller has hung up and ignores the value).
   */
  ask(request: ApprovalRequest, signal: AbortSignal, timeoutMs: number): Promise<ApprovalAnswer> {
    if (this.closed) return Promise.resolve(WITHDRAWN);
    if (signal.aborted) return Promise.resolve(ask(ASK_REASONS.left));
    if (this.get(request.id) !== undefined) return Promise.resolve(ask(ASK_REASONS.duplicate));
    const mine = this.pending().filter((q) => q.container === request.container).length;
    if (mine >= this.perContainer || this.size >= this.total) return Promise.resolve(ask(ASK_REASONS.full));
    const seconds = Math.round(timeoutMs / 1000);
    return this.wait(request, signal, timeoutMs, { answer: ask(ASK_REASONS.timeout(seconds)) }, { answer: ask(ASK_REASONS.left) });
  }

  /**
   * The user's answer to a waiting question. False when it is no longer waiting (answered
   * already, timed out, abandoned): nothing is sent then. An "allow for the session" the agent
   * cannot remember is sent as an allow for this once.
   */
  answer(id: string, answer: ApprovalAnswer): boolean {
    const request = this.get(id);
    if (request === undefined || !(APPROVAL_DECISIONS as readonly string[]).includes(answer.decision)) return false;
    const reason = answer.reason !== undefined ? { reason: answer.reason } : {};
    if (answer.decision === 'allow') {
      const scope = answer.scope === 'session' && request.canAllowForSession ? 'session' : 'once';
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
    const stale = this.pending().filter(
      (q) =>
        q.container === event.container &&
        q.agentSession === event.agentSession &&
        // Fired after the question came (reports arrive late and out of order: the prompt that
        // led to the question may be reported after it).
        event.at >= q.receivedAt &&
        (over || (event.tool === q.tool && event.text === q.subject.text)),
    );
    return this.settleAll(
      stale.map((q) => q.id),
      ask(ASK_REASONS.terminal),
    );
  }

  /**
   * The window is going away (a reload or a close): every waiting question, and every later one, is
   * withdrawn, never answered. The hook asks again, so a reloaded window shows it anew; after a
   * close the agent's own prompt decides (docs/decisions/0050-approvals-over-the-bridge.md).
   */
  dispose(): void {
    this.close({ answer: WITHDRAWN });
  }
}

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
