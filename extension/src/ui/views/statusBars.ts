/**
 * The status bar: the drift warning, the count of sessions that need you (AgentStatusBar), of
 * agents' questions waiting (ApprovalStatusBar) and of connection questions waiting (EgressStatusBar).
 *
 * The drift warning: shown while a container of this window's folders has PID-namespace drift
 * (either direction), lacks the socket volume, or runs with another seccomp profile than the
 * folder's toolbox.seccomp; gone as soon as the drift is. It names the one container to stop,
 * never a blanket fix.
 */
import * as vscode from 'vscode';
import { COMMAND_LABELS } from '../../contract/manifest';
import { plainText } from '../plainText';
import { driftStatus, findingKey, type DriftFinding } from '../containers/driftFindings';
import { needsYouStatus, type AgentStatus } from '../agents/agentState';
import { approvalsStatus } from '../approvals/approvalText';
import type { ApprovalRequest } from '../../backend/api/editor';
import type { EgressQuestion } from '../../backend/api/egress';
import { egressStatus } from '../egress/egressText';

/** What a status item shows: our icon syntax in `text` (kept), the rest plain text. */
export interface StatusText {
  text: string;
  tooltip: string;
  label: string;
}

/** Shows `status` on `item`, or hides it when there is nothing to say. */
export function showStatus(item: vscode.StatusBarItem, status: StatusText | undefined): void {
  if (!status) {
    item.hide();
    return;
  }
  // Our icon and numbers: 'label' keeps the icon.
  item.text = plainText(status.text, 'label');
  item.tooltip = plainText(status.tooltip, 'tooltip');
  item.accessibilityInformation = { label: plainText(status.label, 'message') };
  item.show();
}

export class DriftStatusBar implements vscode.Disposable {
  private readonly item: vscode.StatusBarItem;
  private findings: DriftFinding[] = [];
  /** Findings the user dismissed (findingKey: the container and what differs); a new finding shows again. */
  private readonly dismissed = new Set<string>();

  constructor() {
    this.item = vscode.window.createStatusBarItem('toolbox.drift', vscode.StatusBarAlignment.Left, 100);
    this.item.name = 'Toolbox drift';
    this.item.backgroundColor = new vscode.ThemeColor('statusBarItem.warningBackground');
    this.item.command = COMMAND_LABELS.driftActions.command;
  }

  /** Findings still to show (not dismissed). */
  get current(): DriftFinding[] {
    return this.findings.filter((f) => !this.dismissed.has(findingKey(f)));
  }

  update(findings: DriftFinding[]): void {
    this.findings = findings;
    for (const key of [...this.dismissed]) if (!findings.some((f) => findingKey(f) === key)) this.dismissed.delete(key);
    this.render();
  }

  dismiss(finding: DriftFinding): void {
    this.dismissed.add(findingKey(finding));
    this.render();
  }

  private render(): void {
    const status = driftStatus(this.current);
    if (!status) {
      this.item.hide();
      return;
    }
    // The builder cleaned the container's name ($( escaped): 'label' keeps the warning icon.
    this.item.text = plainText(status.text, 'label');
    this.item.tooltip = plainText(status.tooltip, 'tooltip');
    this.item.accessibilityInformation = { label: plainText(`Toolbox: ${status.name} has drifted from its settings`, 'message') };
    this.item.show();
  }

  dispose(): void {
    this.item.dispose();
  }
}

/** The count of this window's sessions that need you; a click focuses the first. Hidden at zero. */
export class AgentStatusBar implements vscode.Disposable {
  private readonly item: vscode.StatusBarItem;

  constructor() {
    this.item = vscode.window.createStatusBarItem('toolbox.agents', vscode.StatusBarAlignment.Left, 99);
    this.item.name = 'Toolbox sessions that need you';
    this.item.backgroundColor = new vscode.ThemeColor('statusBarItem.warningBackground');
    this.item.command = COMMAND_LABELS.focusTerminal.command;
  }

  update(list: ReadonlyArray<{ container: string; title: string; status: AgentStatus }>): void {
    const status = needsYouStatus(list);
    if (!status) {
      this.item.hide();
      return;
    }
    this.item.text = plainText(status.text, 'label');
    this.item.tooltip = plainText(status.tooltip, 'tooltip');
    this.item.accessibilityInformation = { label: plainText(status.tooltip.split('\n')[0], 'message') };
    this.item.show();
  }

  dispose(): void {
    this.item.dispose();
  }
}

/**
 * The count of agents' questions waiting for an answer (issue 28): `$(question) N`, its tooltip
 * listing them; a click opens the pick of them (toolbox.showApprovals). Hidden at zero.
 */
export class ApprovalStatusBar implements vscode.Disposable {
  private readonly item: vscode.StatusBarItem;

  constructor() {
    this.item = vscode.window.createStatusBarItem('toolbox.approvals', vscode.StatusBarAlignment.Left, 98);
    this.item.name = 'Toolbox agent questions';
    this.item.backgroundColor = new vscode.ThemeColor('statusBarItem.warningBackground');
    this.item.command = COMMAND_LABELS.showApprovals.command;
  }

  update(pending: readonly ApprovalRequest[]): void {
    showStatus(this.item, approvalsStatus(pending));
  }

  dispose(): void {
    this.item.dispose();
  }
}

/**
 * The count of connection questions waiting for an answer (issue 30): `$(globe) N`, its tooltip
 * listing them; a click opens the pick of them (toolbox.showEgressQuestions). Hidden at zero.
 */
export class EgressStatusBar implements vscode.Disposable {
  private readonly item: vscode.StatusBarItem;

  constructor() {
    this.item = vscode.window.createStatusBarItem('toolbox.egress', vscode.StatusBarAlignment.Left, 97);
    this.item.name = 'Toolbox connection questions';
    this.item.backgroundColor = new vscode.ThemeColor('statusBarItem.warningBackground');
    this.item.command = COMMAND_LABELS.showEgressQuestions.command;
  }

  update(pending: readonly EgressQuestion[]): void {
    showStatus(this.item, egressStatus(pending));
  }

  dispose(): void {
    this.item.dispose();
  }
}
