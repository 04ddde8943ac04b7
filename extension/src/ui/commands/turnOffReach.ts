import { basename } from 'node:path';
import * as vscode from 'vscode';
import { plainText } from '../plainText';
import { confirmDestructive } from './confirm';
import { readHostFacts } from '../../backend/hostFacts';
import { reachTitle } from '../../plan/posture';
import type { TreeNode } from '../tree/render';
import { stopAndReopen } from './recreateContainer';
import type { ToolboxCommand } from './types';

/**
 * "Turn off for this folder" on an item under a container's "Can reach on this host": writes
 * the upstream-compatible change into the folder's .toolbox.yaml (backend prepareTurnOff), then
 * says the container keeps it until it is recreated and offers to do that now.
 */
export const turnOffReach: ToolboxCommand = {
  id: 'toolbox.turnOffReach',
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
    const file = vscode.workspace.asRelativePath(plan.file, true);
    if (plan.sharedWith && !plan.alreadyOff) {
      const turnOff = 'Turn Off There';
      // The file applies to other folders too: Enter leaves it as it is.
      const confirmed = await confirmDestructive(
        `Turn off the ${what} in ${plan.file}?`,
        `${basename(folder)} takes its settings from ${plan.file}, which also applies to every other folder under ${plan.sharedWith}. To keep it to this folder, give the folder its own .toolbox.yaml first.`,
        turnOff,
        'Leave It On',
      );
      if (!confirmed) return undefined;
    }
    await plan.apply();
    if (!plan.alreadyOff) s.log.info(`Turned off the ${what} for ${folder}: ${plan.creates ? 'created' : 'updated'} ${plan.file}.`);
    const recreate = 'Recreate Now';
    const open = 'Open .toolbox.yaml';
    const answer = await vscode.window.showInformationMessage(
      plainText(
        `${plan.alreadyOff ? `The ${what} is already off in ${file}` : `The ${what} is off for this folder (${file} ${plan.creates ? 'created' : 'updated'})`}. ` +
          `${container.name} keeps it until it is recreated, which ends its shells.`,
        'message',
      ),
      recreate,
      open,
    );
    if (answer === open) await vscode.window.showTextDocument(vscode.Uri.file(plan.file));
    if (answer === recreate) return stopAndReopen(s, container.name, folder);
    return undefined;
  },
};
