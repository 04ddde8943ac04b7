import * as vscode from 'vscode';
import { plainText } from '../plainText';
import { isConfirmed } from '../commands/confirmDestructive';
import { pickFolder } from '../folders';
import type { ToolboxCommand } from '../commands/toolboxCommand';

/** Prune Merged: removes the agent worktrees whose branch is merged into its base; dirty ones stay. */
export const pruneAgentWorktrees: ToolboxCommand = {
  id: 'toolbox.pruneAgentWorktrees',
  run: async (s, arg, options?: unknown) => {
    const folder = await pickFolder(arg);
    if (!folder) return undefined;
    if (!isConfirmed(options)) {
      const prune: vscode.MessageItem = { title: 'Remove Merged' };
      const answer = await vscode.window.showWarningMessage(
        'Remove the agent worktrees whose branch is merged into its base?',
        {
          modal: true,
          detail:
            'Their containers are stopped and their branches deleted. A worktree with uncommitted changes is kept. A squash-merged branch is not seen as merged: remove it yourself.',
        },
        { title: 'Keep' },
        prune,
      );
      if (answer !== prune) return undefined;
    }
    const out = await vscode.window.withProgress(
      { location: vscode.ProgressLocation.Notification, title: 'Toolbox: removing merged agent worktrees' },
      () => s.backend.pruneAgentWorktrees(folder, (line) => s.log.info(line)),
    );
    s.refresh.refreshSoon(0);
    const parts = [
      out.removed.length === 0 ? 'No agent worktree is merged into its base.' : `Removed ${out.removed.map((r) => r.branch).join(', ')}.`,
      ...out.kept.map((k) => `Kept ${k.branch}: ${k.why}.`),
      ...out.notes,
    ];
    void vscode.window.showInformationMessage(plainText(parts.join(' '), 'message'));
    return out;
  },
};
