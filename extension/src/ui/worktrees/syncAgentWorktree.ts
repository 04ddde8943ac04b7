import * as vscode from 'vscode';
import { plainText } from '../plainText';
import { branchOf, pickWorktree } from './pickWorktree';
import type { ToolboxCommand } from '../commands/toolboxCommand';

/** Sync: rebase onto the recorded base and push with lease; a conflict says how to go on. */
export const syncAgentWorktree: ToolboxCommand = {
  id: 'toolbox.syncAgentWorktree',
  run: async (s, arg) => {
    const w = await pickWorktree(s, arg, 'Sync which agent worktree with its base?');
    if (!w) return undefined;
    const branch = branchOf(w);
    const out = await vscode.window.withProgress(
      { location: vscode.ProgressLocation.Notification, title: plainText(`Toolbox: syncing ${branch}`, 'message') },
      (progress) =>
        s.backend.syncAgentWorktree({ root: w.root, branch }, (line) => {
          s.log.info(line);
          progress.report({ message: plainText(line, 'message') });
        }),
    );
    s.refresh.refreshSoon(0);
    void vscode.window.showInformationMessage(
      plainText(
        `${branch} is ${out.resumed ? 'rebased (the stopped rebase was continued)' : `rebased onto origin/${out.base}`} and pushed.`,
        'message',
      ),
    );
    return out;
  },
};
