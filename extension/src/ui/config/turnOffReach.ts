import * as vscode from 'vscode';
import { plainText } from '../plainText';
import { readHostFacts } from '../../backend/hostFacts';
import { reachTitle } from '../../plan/posture';
import type { TreeNode } from '../views/treeNodes';
import { stopAndReopen } from '../containers/recreateContainer';
import type { ToolboxCommand } from '../commands/toolboxCommand';
import { COMMAND_LABELS } from '../../contract/manifest';

/**
 * "Turn off for this folder" on an item under a container's "Can reach on this host": records it
 * in the user's settings (toolbox.turnedOffForFolder, backend prepareTurnOff), where the folder's
 * container cannot turn it back on (docs/decisions/0041), then says the container keeps it until
 * it is recreated and offers to do that now.
 */
export const turnOffReach: ToolboxCommand = {
  id: COMMAND_LABELS.turnOffReach.command,
  run: async (s, arg) => {
    const node = arg as TreeNode | undefined;
    const reach = node?.reach;
    const container = node?.container;
    const folder = node?.folder;
    if (!reach || !container || !folder) {
      void vscode.window.showInformationMessage(
        'Pick an item under "Can reach on this host" of a container of this window in the Toolbox view, then Turn Off for This Folder.',
      );
      return undefined;
    }
    const home = readHostFacts(process.env).home;
    const what = reachTitle(reach, home);
    const plan = await s.backend.prepareTurnOff(folder, reach);
    await plan.apply();
    if (!plan.alreadyOff) s.log.info(`Turned off the ${what} for ${folder} in your user setting ${plan.setting}.`);
    const recreate = 'Recreate Now';
    const open = 'Open Setting';
    const answer = await vscode.window.showInformationMessage(
      plainText(
        `${plan.alreadyOff ? `The ${what} is already off for this folder` : `The ${what} is off for this folder`} ` +
          `(kept in your user setting ${plan.setting}, which its container cannot change). ` +
          `${container.name} keeps it until it is recreated, which ends its shells.`,
        'message',
      ),
      recreate,
      open,
    );
    if (answer === open) await vscode.commands.executeCommand('workbench.action.openSettings', plan.setting);
    if (answer === recreate) return stopAndReopen(s, container.name, folder);
    return undefined;
  },
};
