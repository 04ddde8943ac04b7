import * as vscode from 'vscode';
import { pickWorktree } from './pickWorktree';
import type { ToolboxCommand } from '../commands/toolboxCommand';

/** Open: re-attach to a worktree's container (recreated when it was removed) and relaunch the agent. */
export const openAgentWorktree: ToolboxCommand = {
  id: 'toolbox.openAgentWorktree',
  run: async (s, arg) => {
    const w = await pickWorktree(s, arg, 'Open which agent worktree?');
    if (!w) return undefined;
    if (!w.present) throw new Error(`The folder of this worktree (${w.path}) is gone. Remove the worktree, or create it again.`);
    const shell = await s.shells.openTerminal({ folder: w.path, worktree: { root: w.root } });
    if (shell) s.refresh.noteShellOpened();
    return shell;
  },
};

/** Open Folder in New Window: the worktree as its own VS Code window. */
export const openAgentWorktreeFolder: ToolboxCommand = {
  id: 'toolbox.openAgentWorktreeFolder',
  run: async (s, arg) => {
    const w = await pickWorktree(s, arg, 'Open which agent worktree in a new window?');
    if (!w) return undefined;
    if (!w.present) throw new Error(`The folder of this worktree (${w.path}) is gone. Remove the worktree, or create it again.`);
    await vscode.commands.executeCommand('vscode.openFolder', vscode.Uri.file(w.path), { forceNewWindow: true });
    return w.path;
  },
};
