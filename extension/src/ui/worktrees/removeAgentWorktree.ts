import * as vscode from 'vscode';
import { plainText } from '../plainText';
import { branchOf, pickWorktree } from './pickWorktree';
import type { ToolboxCommand } from '../commands/toolboxCommand';

/**
 * Remove Agent Worktree…: stops its container, removes the worktree and deletes the branch when
 * that loses nothing. Force (uncommitted files, unmerged commits) and deleting the branch on
 * origin are offered only in a confirmation that names what will be lost.
 * `{ confirmed: true, force?, deleteRemote? }` as a second argument skips it (tests).
 */
export const removeAgentWorktree: ToolboxCommand = {
  id: 'toolbox.removeAgentWorktree',
  run: async (s, arg, options?: unknown) => {
    const w = await pickWorktree(s, arg, 'Remove which agent worktree?');
    if (!w) return undefined;
    const branch = branchOf(w);
    const ref = { root: w.root, branch };
    const given = (options ?? {}) as { confirmed?: boolean; force?: boolean; deleteRemote?: boolean };
    let force = given.force === true;
    let deleteRemote = given.deleteRemote === true;
    if (given.confirmed !== true) {
      const risk = await s.backend.agentWorktreeRisk(ref);
      const losses: string[] = [];
      if (risk.dirtyFiles.length > 0) {
        const shown =
          risk.dirtyFiles.slice(0, 5).join(', ') + (risk.dirtyFiles.length > 5 ? `, and ${risk.dirtyFiles.length - 5} more` : '');
        losses.push(`${risk.dirtyFiles.length} uncommitted file${risk.dirtyFiles.length === 1 ? '' : 's'} (${shown})`);
      }
      if (risk.unmergedCommits > 0) {
        losses.push(
          `${risk.unmergedCommits} commit${risk.unmergedCommits === 1 ? '' : 's'} on ${branch} that ${risk.unmergedCommits === 1 ? 'is' : 'are'} neither on its base nor pushed`,
        );
      }
      // The one safe answer (VS Code adds no Cancel beside a close affordance; Escape answers Keep).
      const keep: vscode.MessageItem = { title: 'Keep', isCloseAffordance: true };
      const remove: vscode.MessageItem = { title: 'Remove' };
      const discard: vscode.MessageItem = { title: 'Remove and Discard' };
      const alsoOrigin: vscode.MessageItem = { title: 'Remove, Also on Origin' };
      const buttons = losses.length > 0 ? [keep, discard] : risk.pushed ? [keep, remove, alsoOrigin] : [keep, remove];
      const detail =
        losses.length > 0
          ? `This will be lost for good: ${losses.join(' and ')}. The container is stopped.`
          : `The container is stopped, the folder ${w.path} removed and the branch deleted (its commits are on its base${risk.pushed ? ' or on origin' : ''}).` +
            (risk.pushed ? ` "Also on Origin" deletes origin/${branch} too.` : '');
      const answer = await vscode.window.showWarningMessage(
        plainText(`Remove the agent worktree ${branch}?`, 'message'),
        { modal: true, detail: plainText(detail, 'message') },
        ...buttons,
      );
      if (answer === undefined || answer === keep) return undefined;
      force = answer === discard;
      deleteRemote = answer === alsoOrigin;
    }
    // Its terminals and its Compare editor go with it: nothing reopens a shell in another folder.
    s.shells.closeTerminalsIn(w.path);
    await closeCompareTabs(branch);
    s.refresh.setRemoving(w.path, true);
    let out: Awaited<ReturnType<typeof s.backend.removeAgentWorktree>>;
    try {
      out = await vscode.window.withProgress(
        { location: { viewId: 'toolbox.worktrees' }, title: plainText(`Removing ${branch}`, 'message') },
        () => s.backend.removeAgentWorktree(ref, { force, deleteRemote }),
      );
    } finally {
      s.refresh.setRemoving(w.path, false);
    }
    s.refresh.refreshSoon(0);
    void vscode.window.showInformationMessage(
      plainText(
        [`Removed the agent worktree ${branch}.`, ...out.notes, out.remoteDeleted ? `origin/${branch} was deleted too.` : '']
          .filter(Boolean)
          .join(' '),
        'message',
      ),
    );
    return out;
  },
};

/** Closes the Compare with Base editors of a branch (their title is `<branch> ↔ origin/<base>`, compareAgentWorktree.ts). */
async function closeCompareTabs(branch: string): Promise<void> {
  const tabs = vscode.window.tabGroups.all.flatMap((g) => g.tabs).filter((t) => t.label.startsWith(`${branch} ↔ origin/`));
  if (tabs.length > 0) await vscode.window.tabGroups.close(tabs).then(undefined, () => undefined);
}
