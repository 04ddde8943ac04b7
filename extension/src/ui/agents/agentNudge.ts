/**
 * The nudge: when a session of this window goes to "needs you" and the user is not looking at its
 * terminal, a notification names the agent, the container and what it said, with Focus. The
 * toolbox.notifyWhenAgentNeedsYou setting turns it off or keeps it for when the window is not
 * focused (ui/agents/agentState.ts shouldNudge).
 *
 * "Looking at it": the window is focused, the terminal is the active one, and the user's last
 * keystroke or editor action was in that terminal (VS Code does not say whether the panel has
 * the focus; a user who went on typing in an editor is not looking at the terminal).
 *
 * At most one nudge per terminal per NUDGE_INTERVAL_MS (ui/agents/agentState.ts NudgeGate), and its
 * text is plain (nudgeText, docs/decisions/0040-outside-text-is-plain-text.md).
 *
 * It also tells the session when the user looks at it: the terminal brought to the front in a
 * focused window, or the window focused while that terminal is the one they last used, clears its
 * "needs you" (ui/agents/agentState.ts focused()). And when an agent launched here quits within
 * AGENT_QUICK_EXIT_MS with an error, one notification says what to do (quickExitText), with a
 * button to its terminal, whatever toolbox.notifyWhenAgentNeedsYou says.
 */
import * as vscode from 'vscode';
import { SETTINGS } from '../../contract/manifest';
import { NudgeGate, nudgeSetting, nudgeText, quickExit, quickExitText, shouldNudge } from './agentState';
import { plainText } from '../plainText';
import type { AgentTerminal, ShellLauncher } from '../shells/shellLauncher';

export const FOCUS_BUTTON = 'Focus';
export const FOCUS_TERMINAL_BUTTON = 'Focus Terminal';

export class AgentNudge implements vscode.Disposable {
  private readonly subscriptions: vscode.Disposable[] = [];
  private readonly gate = new NudgeGate();
  private lastEditorActivity = 0;
  /** Terminals whose agent's early exit was told already (once per terminal). */
  private readonly quickExitTold = new Set<number>();

  constructor(
    private readonly shells: ShellLauncher,
    private readonly log: vscode.LogOutputChannel,
  ) {
    const editorActivity = () => (this.lastEditorActivity = Date.now());
    this.subscriptions.push(
      shells.onDidChangeAgent((a) => void this.changed(a)),
      vscode.window.onDidChangeActiveTextEditor(editorActivity),
      vscode.window.onDidChangeTextEditorSelection(editorActivity),
      // The user brings a terminal to the front: whatever it asked for has been seen.
      vscode.window.onDidChangeActiveTerminal((t) => {
        if (t && vscode.window.state.focused) shells.focused(t);
      }),
      // Back in the window, where that terminal is the one they last used (not an editor).
      vscode.window.onDidChangeWindowState((state) => {
        const t = vscode.window.activeTerminal;
        if (!state.focused || !t) return;
        const key = shells.keyOf(t);
        if (key !== undefined && shells.lastInputAt(key) >= this.lastEditorActivity) shells.focused(t);
      }),
    );
  }

  private async changed(a: AgentTerminal): Promise<void> {
    if (quickExit(a.status, a.launchedAt) && !this.quickExitTold.has(a.key)) {
      this.quickExitTold.add(a.key);
      const text = quickExitText(a.container, a.status, a.launchedAt!, a.agentHome);
      this.log.info(`Agent ended early: ${text}`);
      const answer = await vscode.window.showWarningMessage(plainText(text, 'message'), FOCUS_TERMINAL_BUTTON);
      if (answer === FOCUS_TERMINAL_BUTTON) this.shells.focus(a.key);
      return;
    }
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
