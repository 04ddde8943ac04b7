import * as vscode from 'vscode';
import { branchInputProblem } from '../../plan/worktree';
import type { AgentWorktreeRequest } from '../../backend/api';
import { pickFolder } from '../folders';
import type { CommandServices, ToolboxCommand } from './types';

/** The error code a refusal from engine/worktree.ts carries (only its type crosses into the UI). */
function codeOf(err: unknown): string | undefined {
  const code = (err as { code?: unknown }).code;
  return typeof code === 'string' ? code : undefined;
}

/**
 * New Agent Worktree…: a branch name and an optional task, then the worktree, its container and
 * the agent's terminal. `{ branch, prompt, base, noFetch }` as the argument skips the questions.
 */
export const newAgentWorktree: ToolboxCommand = {
  id: 'toolbox.newAgentWorktree',
  run: async (s: CommandServices, arg?: unknown) => {
    const given = (arg ?? {}) as Partial<AgentWorktreeRequest>;
    const folder = given.folder ?? (await pickFolder(arg));
    if (!folder) return undefined;
    const branch =
      given.branch ??
      (await vscode.window.showInputBox({
        title: 'New Agent Worktree (1/2)',
        prompt: 'The new branch for this task. It gets its own worktree and container.',
        placeHolder: 'fix/login-timeout',
        validateInput: (v) => branchInputProblem(v),
      }));
    if (branch === undefined) return undefined;
    const prompt =
      given.prompt ??
      (await vscode.window.showInputBox({
        title: 'New Agent Worktree (2/2)',
        prompt: 'The task for the agent (optional). It is passed to the agent exactly as typed.',
        placeHolder: 'Leave empty to start the agent without a task',
      }));
    if (prompt === undefined) return undefined;
    let request: AgentWorktreeRequest = { folder, branch: branch.trim(), prompt, base: given.base, noFetch: given.noFetch };
    for (;;) {
      try {
        const opened = await s.shells.openAgentWorktree(request);
        if (!opened) return undefined;
        s.refresh.noteShellOpened();
        for (const note of opened.notes) void vscode.window.showInformationMessage(note);
        return opened;
      } catch (err) {
        const code = codeOf(err);
        if (code === 'fetch-failed' && !request.noFetch) {
          const offline = 'Create Offline';
          const answer = await vscode.window.showErrorMessage((err as Error).message, offline);
          if (answer !== offline) return undefined;
          request = { ...request, noFetch: true };
          continue;
        }
        if (code === 'no-default-branch' || code === 'no-base') {
          const base = await vscode.window.showInputBox({
            title: 'New Agent Worktree: base branch',
            prompt: `${(err as Error).message} Which branch should ${request.branch} start from?`,
            placeHolder: 'main',
          });
          if (!base) return undefined;
          request = { ...request, base: base.trim() };
          continue;
        }
        throw err;
      }
    }
  },
};
