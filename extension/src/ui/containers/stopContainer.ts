import * as vscode from 'vscode';
import { plainText } from '../plainText';
import { stopContainerConfirmation } from './confirmations';
import { heldShellItem } from '../views/treeItems';
import type { TreeNode } from '../views/treeNodes';
import { confirmDestructive, isConfirmed } from '../commands/confirmDestructive';
import type { CommandServices, ToolboxCommand } from '../commands/toolboxCommand';
import { COMMAND_LABELS } from '../../contract/manifest';

/**
 * Stops one container: the tree item's, one named by a string argument, or one picked from the
 * running list. A modal asks first, naming the shells attached to it (a terminal of this window,
 * or a held shell another window shows); "Keep Running" is its first button, so Enter stops
 * nothing (VS Code focuses the first button that is not the close affordance), and Escape is
 * Cancel. `{ confirmed: true }` as a second argument skips it, for keybindings and automation.
 *
 * While the engine stops it (seconds: SIGTERM, then the grace period) the row shows it as
 * stopping, without a Stop action. From the tree, the list's focus is cleared before the row goes,
 * so it does not land on the next container's row and its Stop button.
 */
export const stopContainerCommand: ToolboxCommand = {
  id: COMMAND_LABELS.stopContainer.command,
  run: async (s, arg, options) => {
    const fromTree = (arg as TreeNode | undefined)?.container !== undefined;
    let name = (arg as TreeNode | undefined)?.container?.name ?? (typeof arg === 'string' ? arg : undefined);
    if (!name) {
      const snap = await s.backend.snapshot();
      const picks = snap.containers.map((c) => ({
        label: plainText(c.name, 'iconLabel'),
        description: plainText(c.workspace ?? c.state, 'iconLabel'),
        name: c.name,
      }));
      if (picks.length === 0) {
        void vscode.window.showInformationMessage('No toolbox containers are running.');
        return;
      }
      name = (await vscode.window.showQuickPick(picks, { placeHolder: 'Stop which toolbox container?' }))?.name;
      if (!name) return;
    }
    const target = name;
    const children = s.refresh.state.snapshot?.containers.find((c) => c.name === target)?.dockerChildren;
    const named = stopContainerConfirmation(target, attachedShells(s, target), children);
    if (!isConfirmed(options)) {
      const ok = await confirmDestructive(
        named?.message ?? `Stop ${target}?`,
        named?.detail ??
          'Its open shells close and the programs running in them end, in every window. The container is removed; ' +
            'the files in your folder are kept, and the next Open Toolbox Shell creates a new container.',
        named?.stopLabel ?? 'Stop Container',
      );
      if (!ok) return;
    }
    s.refresh.setStopping(target, true);
    if (fromTree) await clearTreeFocus();
    try {
      await vscode.window.withProgress(
        { location: vscode.ProgressLocation.Notification, title: plainText(`Stopping ${target}…`, 'message') },
        () => s.backend.stopContainer(target),
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
