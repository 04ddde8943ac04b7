/**
 * Agents' questions answered from the editor (issue 28; docs/decisions/0050-approvals-over-the-bridge.md).
 * The bridge's /approval calls EditorActions.askApproval (`ask` here) with a checked question; it
 * waits in the inbox (ui/approvals/approvalInbox.ts) while a notification says who asks what, with Allow,
 * Deny, Allow for This Session (when the agent can remember it) and Open Terminal. The status bar
 * counts the questions waiting (ui/views/statusBars.ts ApprovalStatusBar) and the Workspaces view lists
 * them; both lead to the same answer pick.
 *
 * Never "allow" without the user's click: turned off, full, timed out, abandoned or closed is
 * "ask", and the agent's own prompt takes over. Each question is answered once; a click on an
 * answered one only says so in the status bar. Every text of a question came from a container and
 * is shown plain (ui/approvals/approvalText.ts, docs/decisions/0040-outside-text-is-plain-text.md).
 *
 * Settings, read at each question: toolbox.approvals.enabled, toolbox.approvals.notify,
 * toolbox.approvals.timeoutSeconds.
 */
import * as vscode from 'vscode';
import type { ApprovalAnswer, ApprovalRequest } from '../../backend/api/editor';
import { SETTINGS } from '../../contract/manifest';
import { approvalTimeoutMs, ASK_REASONS, type ApprovalInbox } from './approvalInbox';
import { approvalMessage, approvalPickItem } from './approvalText';
import { inline, plainText } from '../plainText';
import type { ShellLauncher } from '../shells/shellLauncher';

/** An answer the user can give. */
export type ApprovalChoice = 'allow' | 'session' | 'deny';

/** The notification's buttons. */
export const APPROVAL_BUTTONS = {
  allow: 'Allow',
  deny: 'Deny',
  session: 'Allow for This Session',
  terminal: 'Open Terminal',
} as const;

/** Said in the status bar when a click reaches a question that has left the inbox. */
export const ALREADY_ANSWERED = 'That question was already answered';

/** What the agent is told with a deny from the editor. */
const DENIED = 'The user denied this in VS Code.';

/** The answer a choice sends (the inbox turns a session allow the agent cannot keep into a one-time allow). */
export function answerOf(choice: ApprovalChoice): ApprovalAnswer {
  switch (choice) {
    case 'allow':
      return { decision: 'allow', scope: 'once' };
    case 'session':
      return { decision: 'allow', scope: 'session' };
    case 'deny':
      return { decision: 'deny', reason: DENIED };
  }
}

export class ApprovalPrompter implements vscode.Disposable {
  constructor(
    private readonly inbox: ApprovalInbox,
    private readonly shells: Pick<ShellLauncher, 'terminalFor' | 'focus'>,
    private readonly log: vscode.LogOutputChannel,
  ) {}

  /** EditorActions.askApproval: the question waits for the user (or the time, or the hook hanging up). */
  async ask(request: ApprovalRequest, signal: AbortSignal): Promise<ApprovalAnswer> {
    const config = vscode.workspace.getConfiguration();
    const what = describe(request);
    if (config.get<boolean>(SETTINGS.approvalsEnabled, true) === false) {
      this.log.info(`Agent question ${request.id} answered "ask" (${SETTINGS.approvalsEnabled} is off): ${what}`);
      return { decision: 'ask', reason: ASK_REASONS.off };
    }
    const timeoutMs = approvalTimeoutMs(config.get(SETTINGS.approvalsTimeoutSeconds));
    const waiting = this.inbox.ask(request, signal, timeoutMs);
    if (this.inbox.get(request.id) === request) {
      this.log.info(`Agent question ${request.id}: ${what}`);
      if (config.get<boolean>(SETTINGS.approvalsNotify, true) !== false) void this.notify(request);
    }
    const answer = await waiting;
    const scope = answer.scope !== undefined ? ` (${answer.scope})` : '';
    this.log.info(`Agent question ${request.id}: ${answer.decision}${scope}${answer.reason !== undefined ? `: ${answer.reason}` : ''}.`);
    return answer;
  }

  /** The user's answer from a button, a pick or the tree; false (and a status bar note) when the question has left. */
  answer(id: string, choice: ApprovalChoice): boolean {
    if (this.inbox.answer(id, answerOf(choice))) return true;
    this.alreadyAnswered(id);
    return false;
  }

  /** Focuses the terminal the question came from (else the container's first); the question keeps waiting. */
  openTerminal(id: string): boolean {
    const request = this.inbox.get(id);
    if (request === undefined) {
      this.alreadyAnswered(id);
      return false;
    }
    const key = this.shells.terminalFor(request.container, request.session);
    if (key !== undefined && this.shells.focus(key)) return true;
    void vscode.window.showInformationMessage(
      plainText(
        `No terminal of ${inline(request.container)} is open in this window. Answer here, or open its shell to answer in the agent's own prompt.`,
        'message',
      ),
    );
    return false;
  }

  /** The answer pick for one question, or first a pick of the questions waiting (oldest first). */
  async showApprovals(id?: string): Promise<void> {
    let request: ApprovalRequest | undefined;
    if (id !== undefined) {
      request = this.inbox.get(id);
      if (request === undefined) {
        this.alreadyAnswered(id);
        return;
      }
    } else {
      const pending = this.inbox.pending();
      if (pending.length === 0) {
        void vscode.window.showInformationMessage('No agent questions are waiting.');
        return;
      }
      const now = Date.now();
      const picked = await vscode.window.showQuickPick(
        pending.map((r) => ({ ...approvalPickItem(r, now), id: r.id })),
        { placeHolder: 'Answer which agent question? (oldest first)', matchOnDescription: true, matchOnDetail: true },
      );
      if (picked === undefined) return;
      request = this.inbox.get(picked.id);
      if (request === undefined) {
        this.alreadyAnswered(picked.id);
        return;
      }
    }
    await this.pickAnswer(request);
  }

  private async pickAnswer(request: ApprovalRequest): Promise<void> {
    type Row = vscode.QuickPickItem & { choice: ApprovalChoice | 'terminal' };
    const rows: Row[] = [
      { label: `$(check) ${APPROVAL_BUTTONS.allow}`, description: 'this once', choice: 'allow' },
      ...(request.canAllowForSession
        ? [
            {
              label: `$(check-all) ${APPROVAL_BUTTONS.session}`,
              description: 'the agent does not ask again for this in its session',
              choice: 'session' as const,
            },
          ]
        : []),
      { label: `$(close) ${APPROVAL_BUTTONS.deny}`, description: 'the agent is told you said no', choice: 'deny' },
      {
        label: `$(terminal) ${APPROVAL_BUTTONS.terminal}`,
        description: "answer in the agent's own prompt; the question stays here",
        choice: 'terminal',
      },
    ];
    const picked = await vscode.window.showQuickPick(rows, {
      title: plainText(approvalMessage(request), 'iconLabel'),
      placeHolder: 'Your answer',
    });
    if (picked === undefined) return;
    if (picked.choice === 'terminal') this.openTerminal(request.id);
    else this.answer(request.id, picked.choice);
  }

  /** The notification of a new question; dismissed, the question stays in the status bar and the tree. */
  private async notify(request: ApprovalRequest): Promise<void> {
    const buttons: string[] = [
      APPROVAL_BUTTONS.allow,
      APPROVAL_BUTTONS.deny,
      ...(request.canAllowForSession ? [APPROVAL_BUTTONS.session] : []),
      APPROVAL_BUTTONS.terminal,
    ];
    const choice = await vscode.window.showInformationMessage(plainText(approvalMessage(request), 'message'), ...buttons);
    if (choice === undefined) return;
    if (choice === APPROVAL_BUTTONS.terminal) this.openTerminal(request.id);
    else if (choice === APPROVAL_BUTTONS.allow) this.answer(request.id, 'allow');
    else if (choice === APPROVAL_BUTTONS.session) this.answer(request.id, 'session');
    else if (choice === APPROVAL_BUTTONS.deny) this.answer(request.id, 'deny');
  }

  /** Says in the status bar that a question has left, and how when the inbox remembers. */
  private alreadyAnswered(id?: string): void {
    const how = id === undefined ? undefined : this.inbox.howLeft(id);
    vscode.window.setStatusBarMessage(how === undefined ? ALREADY_ANSWERED : `${ALREADY_ANSWERED}: ${how}`, 6000);
  }

  dispose(): void {
    // The inbox is the composition root's (it withdraws every waiting question when disposed).
  }
}

/** One line for the log: who asks which tool about what (the bridge replaced control characters; the log runs nothing). */
function describe(r: ApprovalRequest): string {
  const session = r.session !== undefined ? ` ${r.session}` : '';
  return `${r.agent} in ${r.container}${session} asks to use ${r.tool} (${r.subject.kind}: ${r.subject.text.slice(0, 300)})`;
}
