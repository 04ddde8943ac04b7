import * as vscode from 'vscode';
import type { TreeNode } from '../tree/render';
import type { CommandServices, ToolboxCommand } from './types';

/** Stops a drifted container and opens its folder's shell again with the current settings. */
export async function stopAndReopen(s: CommandServices, name: string, folder: string | undefined) {
  await vscode.window.withProgress({ location: vscode.ProgressLocation.Notification, title: `Stopping ${name}…` }, () =>
    s.backend.stopContainer(name),
  );
  s.log.info(`Stopped ${name} to recreate it with the current settings.`);
  s.shells.closeTerminalsOf([name]);
  await s.refresh.refreshNow();
  if (!folder) return undefined;
  const shell = await s.shells.openTerminal({ folder });
  if (shell) s.refresh.noteShellOpened();
  await s.refresh.refreshNow();
  return shell;
}

export const recreateContainer: ToolboxCommand = {
  id: 'toolbox.recreateContainer',
  run: async (s, arg) => {
    const node = arg as TreeNode | undefined;
    const finding = node?.container
      ? s.refresh.state.findings.find((f) => f.container.id === node.container?.id)
      : s.refresh.state.findings[0];
    const container = node?.container ?? finding?.container;
    if (!container) {
      void vscode.window.showInformationMessage('No drifted toolbox container in this window.');
      return undefined;
    }
    return stopAndReopen(s, container.name, finding?.folder ?? container.workspace);
  },
};
