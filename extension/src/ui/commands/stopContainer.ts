import * as vscode from 'vscode';
import type { TreeNode } from '../tree/render';
import type { ToolboxCommand } from './types';

/** Stops one container: the tree item's, or one picked from the running list. */
export const stopContainerCommand: ToolboxCommand = {
  id: 'toolbox.stopContainer',
  run: async (s, arg) => {
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
    await vscode.window.withProgress({ location: vscode.ProgressLocation.Notification, title: `Stopping ${target}…` }, () =>
      s.backend.stopContainer(target),
    );
    s.log.info(`Stopped ${target}.`);
    s.shells.closeTerminalsOf([target]);
    await s.refresh.refreshNow();
  },
};
