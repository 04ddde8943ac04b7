import * as vscode from 'vscode';
import { leftBehindConfirmation } from './confirmations';
import { plainText } from '../plainText';
import type { TreeNode } from '../views/treeNodes';
import { confirmDestructive, isConfirmed } from '../commands/confirmDestructive';
import type { ToolboxCommand } from '../commands/toolboxCommand';

/**
 * Remove What Was Left Behind, on a "Left behind by" row (ui/views/treeNodes.ts leftBehindNodes): the
 * containers and networks a container of ours started through its Docker endpoint, once something
 * other than this editor removed that container (engine/dockerEndpoint/children.ts removeLeftBehind). A
 * modal lists what goes and what stays ("Keep Running" first, so Enter removes nothing);
 * `{ confirmed: true }` skips it. The backend refuses when a container of the owner's name exists
 * again. Takes the row or the owner's name; no pick of its own, so it is not in the palette.
 */
export const removeLeftBehindCommand: ToolboxCommand = {
  id: 'toolbox.removeLeftBehind',
  run: async (s, arg, options) => {
    const owner = (arg as TreeNode | undefined)?.leftBehind ?? (typeof arg === 'string' ? arg : undefined);
    if (!owner) return;
    const children = s.refresh.state.snapshot?.leftBehind?.find((g) => g.owner === owner)?.children;
    if (!children) {
      void vscode.window.showInformationMessage(plainText(`Nothing left behind by ${owner} is listed now.`, 'message'));
      return;
    }
    if (!isConfirmed(options)) {
      const text = leftBehindConfirmation(owner, children);
      if (!(await confirmDestructive(text.message, text.detail, text.removeLabel))) return;
    }
    try {
      const removed = await vscode.window.withProgress(
        { location: vscode.ProgressLocation.Notification, title: plainText(`Removing what ${owner} left behind…`, 'message') },
        () => s.backend.removeLeftBehind(owner),
      );
      const gone = [...removed.containers, ...removed.networks.map((n) => `network ${n}`)];
      s.log.info(
        `Removed what ${owner} left behind: ${gone.length > 0 ? gone.join(', ') : 'nothing (already gone)'}` +
          (removed.volumes.length > 0 ? `; kept its volumes ${removed.volumes.join(', ')}.` : '.'),
      );
    } catch (err) {
      void vscode.window.showErrorMessage(plainText((err as Error).message, 'message'));
    }
    await s.refresh.refreshNow();
  },
};
