/**
 * The nudge: when a session of this window goes to "needs you" and the user is not looking at its
 * terminal, a notification names the agent, the container and what it said, with Focus. The
 * toolbox.notifyWhenAgentNeedsYou setting turns it off or keeps it for when the window is not
 * focused (ui/agentState.ts shouldNudge).
 *
 * "Looking at it": the window is focused, the terminal is the active one, and the user's last
 * keystroke or editor action was in that terminal (VS Code does not say whether the panel has
 * the focus; a user who went on typing in an editor is not looking at the terminal).
 *
 * At most one nudge per terminal per NUDGE_INTERVAL_MS (ui/agentState.ts NudgeGate), and its
 * text is plain (nudgeText, docs/decisions/0040-outside-text-is-plain-text.md).
 */
import * as vscode from 'vscode';
import { SETTINGS } from '../contract/manifest';
import { NudgeGate, nudgeSetting, nudgeText, shouldNudge } from './agentState';
import { plainText } from './plainText';
import type { AgentTerminal, ShellLauncher } from './shells';

export const FOCUS_BUTTON = 'Focus';

export class AgentNudge implements vscode.Disposable {
  private readonly subscriptions: vscode.Disposable[] = [];
  private readonly gate = new NudgeGate();
  private lastEditorActivity = 0;

  constructor(
    private readonly shells: ShellLauncher,
    private readonly log: vscode.LogOutputChannel,
  ) {
    const editorActivity = () => (this.lastEditorActivity = Date.now());
    this.subscriptions.push(
      shells.onDidChangeAgent((a) => void this.changed(a)),
      vscode.window.onDidChangeActiveTextEditor(editorActivity),
      vscode.window.onDidChangeTextEditorSelection(editorActivity),
    );
  }

  private async changed(a: AgentTerminal): Promise<void> {
    if (!this.gate.asks(a.key, a.status)) return;
    const setting = nudgeSetting(vscode.workspace.getConfiguration().get(SETTINGS.notifyWhenAgentNeedsYou));
    const lookingAt =
      a.terminal !== undefined && vscode.window.activeTerminal === a.terminal && this.shells.lastInputAt(a.key) >= this.lastEditorActivity;
    const windowFocused = vscode.window.state.focused;
    if (!shouldNudge(setting, { windowFocused, activeTerminal: lookingAt })) return;
    if (!this.gate.take(a.key)) return;
    const text = nudgeText(a.container, a.status);
    this.log.info(`Nudge: ${text}`);
    const answer = await vscode.window.showInformationMessage(plainText(text, 'message'), FOCUS_BUTTON);
    if (answer === FOCUS_BUTTON) this.shells.focus(a.key);
  }

  dispose(): void {
    for (const s of this.subscriptions) s.dispose();
  }
}
