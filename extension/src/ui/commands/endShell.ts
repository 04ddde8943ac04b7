import * as vscode from 'vscode';
import type { TreeNode } from '../tree/render';
import { recordOf } from './attachShell';
import type { ToolboxCommand } from './types';

/** Ends a held shell from the tree (as closing its terminal would), after a confirmation. */
export const endShell: ToolboxCommand = {
  id: 'toolbox.endShell',
  run: async (s, arg, options) => {
    const node = arg as TreeNode | undefined;
    const record = recordOf(node);
    if (!record) throw new Error('Pick a shell under a container in the Toolbox view to end it.');
    if ((options as { confirmed?: unknown } | undefined)?.confirmed !== true) {
      const end = 'End Shell';
      const answer = await vscode.window.showWarningMessage(
        `End the shell "${node?.label}" in ${record.container}?`,
        {
          modal: true,
          detail: `Its processes get SIGHUP, as when its terminal is closed${node?.shell?.attached ? ' (terminals showing it close)' : ''}. When it is the container's last shell, the container is removed too.`,
        },
        end,
      );
      if (answer !== end) return;
    }
    s.shells.closeTerminalsOfSession(record);
    await s.backend.endShell(record);
    await s.refresh.refreshNow();
  },
};
