import * as vscode from 'vscode';
import type { TreeNode } from '../tree/render';
import { confirmDestructive, isConfirmed } from './confirm';
import type { ToolboxCommand } from './types';

/**
 * Stops one container: the tree item's, one named by a string argument, or one picked from the
 * list, after a modal confirmation whose default keeps it running (skipped with
 * `{ confirmed: true }` as the second argument).
 */
export const stopContainerCommand: ToolboxCommand = {
  id: 'toolbox.stopContainer',
  run: async (s, arg, options) => {
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
    if (!isConfirmed(options)) {
      const ok = await confirmDestructive(
        `Stop ${target}?`,
        'Its open shells close and the programs running in them end, in every window. The container is removed; ' +
          'the files in your folder are kept, and the next Open Toolbox Shell creates a new container.',
        'Stop Container',
      );
      if (!ok) return;
    }
    await vscode.window.withProgress({ location: vscode.ProgressLocation.Notification, title: `Stopping ${target}…` }, () =>
      s.backend.stopContainer(target),
    );
    s.log.info(`Stopped ${target}.`);
    s.shells.closeTerminalsOf([target]);
    await s.refresh.refreshNow();
  },
};
