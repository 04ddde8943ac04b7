/** Which agent worktree a command is about: its tree node, or the user's pick among them. */
import * as vscode from 'vscode';
import { plainText } from '../plainText';
import type { AgentWorktreeSummary } from '../../backend/api';
import { windowFolders } from '../folders';
import type { CommandServices } from '../commands/toolboxCommand';

/** What the Worktrees view passes as a command argument. */
export interface WorktreeNodeArg {
  worktree: AgentWorktreeSummary;
}

/** The worktree of a node argument, else one picked from this window's repositories; undefined when cancelled. */
export async function pickWorktree(s: CommandServices, arg: unknown, placeHolder: string): Promise<AgentWorktreeSummary | undefined> {
  const node = arg as Partial<WorktreeNodeArg> | undefined;
  if (node?.worktree?.root && node.worktree.path) return node.worktree;
  const given = arg as Partial<AgentWorktreeSummary> | undefined;
  if (given?.root && given.path) return given as AgentWorktreeSummary;
  const all = (await s.backend.agentWorktrees(windowFolders())).filter((w) => w.branch !== undefined || w.rebasing);
  if (all.length === 0) {
    throw new Error('There are no agent worktrees in the repositories of this window. Create one with New Agent Worktree.');
  }
  const picked = await vscode.window.showQuickPick(
    all.map((w) => ({ label: plainText(w.branch ?? w.path, 'iconLabel'), description: plainText(w.path, 'iconLabel'), worktree: w })),
    { placeHolder: plainText(placeHolder, 'message') },
  );
  return picked?.worktree;
}

/** The branch of a worktree for git commands; one mid-rebase is found by its folder name. */
export function branchOf(w: AgentWorktreeSummary): string {
  return w.branch ?? w.path.slice(w.path.lastIndexOf('/') + 1).replace(/^tbx-/, '');
}
