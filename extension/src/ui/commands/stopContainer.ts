import * as vscode from 'vscode';
import { stopContainerConfirmation } from '../model';
import { heldShellItem } from '../tree/items';
import type { TreeNode } from '../tree/render';
import type { CommandServices, ToolboxCommand } from './types';

/**
 * Stops one container: the tree item's, or one picked from the running list. When shells are
 * attached to it (a terminal of this window, or a held shell another window shows), a modal
 * names them first; "Keep Running" is its first button, so Enter stops nothing (VS Code focuses
 * the first button that is not the close affordance), and Escape is Cancel. `{ confirmed: true }`
 * as a second argument skips it, for keybindings and automation.
 *
 * While the engine stops it (seconds: SIGTERM, then the grace period) the row shows it as
 * stopping, without a Stop action. From the tree, the list's focus is cleared before the row goes,
 * so it does not land on the next container's row and its Stop button.
 */
export const stopContainerCommand: ToolboxCommand = {
  id: 'toolbox.stopContainer',
  run: async (s, arg, options) => {
    const fromTree = (arg as TreeNode | undefined)?.container !== undefined;
    let name = (arg as TreeNode | undefined)?.container?.name ?? (typeof arg === 'string' ? arg : undefined);
    if (!name) {
      const snap = await s.backend.snapshot();
      const picks = snap.containers.map((c) => ({ label: c.name, description: c.workspace ?? c.state }));
      if (picks.length === 0) {
        void vscode.window.showInformationMessage('No toolbox containers are running.');
        return;
      }
      name = (await vscode.window.showQuickPick(picks, { placeHolder: 'Stop which toolbox container?' }))?.label;
      if (!name) return;
    }
    const target = name;
    const confirmed = (options as { confirmed?: unknown } | undefined)?.confirmed === true;
    const text = stopContainerConfirmation(target, attachedShells(s, target));
    if (text && !confirmed) {
      const keep: vscode.MessageItem = { title: 'Keep Running' };
      const stop: vscode.MessageItem = { title: text.stopLabel };
      const answer = await vscode.window.showWarningMessage(text.message, { modal: true, detail: text.detail }, keep, stop);
      if (answer !== stop) return;
    }
    s.refresh.setStopping(target, true);
    if (fromTree) await clearTreeFocus();
    try {
      await vscode.window.withProgress({ location: vscode.ProgressLocation.Notification, title: `Stopping ${target}…` }, () =>
        s.backend.stopContainer(target),
      );
      s.log.info(`Stopped ${target}.`);
      s.shells.closeTerminalsOf([target]);
      await s.refresh.refreshNow();
    } finally {
      s.refresh.setStopping(target, false);
    }
    if (fromTree) await clearTreeFocus();
  },
};

/**
 * The shells a stop would end, as a person would name them: this window's terminals by their
 * names, then held shells that only other windows show.
 */
function attachedShells(s: CommandServices, container: string): string[] {
  const ours = s.shells.liveTerminals(container);
  const names = ours.map((o) => o.name);
  const summary = s.refresh.state.snapshot?.containers.find((c) => c.name === container);
  for (const held of summary?.shells ?? []) {
    const here = ours.filter((o) => o.sessionId === held.id).length;
    if (held.attached > here) names.push(`${heldShellItem(held, Date.now()).label} (in another window)`);
  }
  return names;
}

/** Focuses the Workspaces view and clears its list focus and selection (VS Code's Escape in a list). */
async function clearTreeFocus(): Promise<void> {
  try {
    await vscode.commands.executeCommand('toolbox.workspaces.focus');
    await vscode.commands.executeCommand('list.clear');
  } catch {
    // Only cosmetic: the stop itself went through.
  }
}
