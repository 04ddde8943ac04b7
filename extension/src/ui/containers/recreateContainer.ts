import * as vscode from 'vscode';
import { plainText } from '../plainText';
import type { TreeNode } from '../views/treeNodes';
import { confirmDestructive, isConfirmed } from '../commands/confirmDestructive';
import type { CommandServices, ToolboxCommand } from '../commands/toolboxCommand';
import { COMMAND_LABELS } from '../../contract/manifest';

/**
 * Stops a drifted container and opens its folder's shell again: with the current settings, or
 * with `peer` as a per-run choice (a container that was opened that way).
 */
export async function stopAndReopen(s: CommandServices, name: string, folder: string | undefined, peer?: boolean) {
  await vscode.window.withProgress(
    { location: vscode.ProgressLocation.Notification, title: plainText(`Stopping ${name}…`, 'message') },
    () => s.backend.stopContainer(name),
  );
  s.log.info(`Stopped ${name} to recreate it with the current settings.`);
  s.shells.closeTerminalsOf([name]);
  await s.refresh.refreshNow();
  if (!folder) return undefined;
  const shell = await s.shells.openTerminal(peer === undefined ? { folder } : { folder, peer });
  if (shell) s.refresh.noteShellOpened();
  await s.refresh.refreshNow();
  return shell;
}

/** Recreate Drifted Container…: asks first (Enter keeps it running) unless given `{ confirmed: true }`. */
export const recreateContainer: ToolboxCommand = {
  id: COMMAND_LABELS.recreateContainer.command,
  run: async (s, arg, options) => {
    const node = arg as TreeNode | undefined;
    const finding = node?.container
      ? s.refresh.state.findings.find((f) => f.container.id === node.container?.id)
      : s.refresh.state.findings[0];
    const container = node?.container ?? finding?.container;
    if (!container) {
      void vscode.window.showInformationMessage('No drifted toolbox container in this window.');
      return undefined;
    }
    if (!isConfirmed(options)) {
      const ok = finding
        ? await confirmDestructive(finding.notice.message, finding.notice.detail, 'Restart')
        : await confirmDestructive(
            `Restart ${container.name}?`,
            'Toolbox stops it, which closes its open shells and ends the programs running in them, in every window, ' +
              'then opens a new shell in a new container. The files in your folder are kept.',
            'Restart',
          );
      if (!ok) return undefined;
    }
    return stopAndReopen(s, container.name, finding?.folder ?? container.workspace, container.peerRun);
  },
};
