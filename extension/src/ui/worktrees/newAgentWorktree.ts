import * as vscode from 'vscode';
import { plainText } from '../plainText';
import { errorCode } from '../../contract/errors';
import { branchInputProblem } from '../../plan/worktree';
import type { AgentWorktreeRequest } from '../../backend/api';
import { pickFolder } from '../folders';
import type { CommandServices, ToolboxCommand } from '../commands/toolboxCommand';

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
    let request: AgentWorktreeRequest = { folder, branch: branch.trim(), prompt: given.prompt, base: given.base, noFetch: given.noFetch };
    // What was typed as the task, kept when a refusal asks the question again.
    const typed = { value: '' };
    for (;;) {
      try {
        const opened = await (request.prompt !== undefined
          ? s.shells.openAgentWorktree(request)
          : openWhileTaskIsTyped((prompt) => s.shells.openAgentWorktree({ ...request, prompt }), typed));
        if (!opened) return undefined;
        s.refresh.noteShellOpened();
        for (const note of opened.notes) void vscode.window.showInformationMessage(plainText(note, 'message'));
        return opened;
      } catch (err) {
        const code = errorCode(err);
        if (code === 'fetch-failed' && !request.noFetch) {
          const offline = 'Create Offline';
          const answer = await vscode.window.showErrorMessage(plainText((err as Error).message, 'message'), offline);
          if (answer !== offline) return undefined;
          request = { ...request, noFetch: true };
          continue;
        }
        if (code === 'no-default-branch' || code === 'no-base') {
          const base = await vscode.window.showInputBox({
            title: 'New Agent Worktree: base branch',
            prompt: plainText(`${(err as Error).message} Which branch should ${request.branch} start from?`, 'iconLabel'),
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

/**
 * Asks for the task while the worktree and its container are made (the backend waits for it just
 * before the agent starts), so the agent starts as soon as the task is given. Escape cancels: the
 * backend removes what it made. A refusal closes the question at once, keeping what was typed.
 */
async function openWhileTaskIsTyped<T>(open: (prompt: Promise<string | undefined>) => Promise<T>, typed: { value: string }): Promise<T> {
  const box = vscode.window.createInputBox();
  box.title = 'New Agent Worktree (2/2)';
  box.prompt = 'The task for the agent (optional). It is passed to the agent exactly as typed. The worktree is being made meanwhile.';
  box.placeholder = 'Leave empty to start the agent without a task';
  box.value = typed.value;
  box.ignoreFocusOut = true;
  let answer!: (task: string | undefined) => void;
  const prompt = new Promise<string | undefined>((resolve) => (answer = resolve));
  box.onDidChangeValue((v) => (typed.value = v));
  box.onDidAccept(() => {
    answer(box.value);
    box.hide();
  });
  box.onDidHide(() => answer(undefined));
  box.show();
  try {
    return await open(prompt);
  } finally {
    box.dispose();
  }
}
