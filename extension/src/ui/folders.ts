/** Which workspace folder a command is about: its argument, the only folder, or the user's pick. */
import * as vscode from 'vscode';
import type { TreeNode } from './views/treeNodes';

export async function pickFolder(arg?: unknown, placeHolder = 'Open a Toolbox shell for which folder?'): Promise<string | undefined> {
  if (arg instanceof vscode.Uri) return vscode.workspace.getWorkspaceFolder(arg)?.uri.fsPath ?? arg.fsPath;
  const node = arg as TreeNode | undefined;
  if (node?.folder) return node.folder;
  if (node?.container?.workspace) return node.container.workspace;
  const folders = (vscode.workspace.workspaceFolders ?? []).filter((f) => f.uri.scheme === 'file' || f.uri.scheme === 'vscode-remote');
  if (folders.length === 0) {
    throw new Error('Toolbox needs a folder: open a folder (File: Open Folder…), then open the Toolbox shell again.');
  }
  if (folders.length === 1) return folders[0]!.uri.fsPath;
  const picked = await vscode.window.showWorkspaceFolderPick({ placeHolder });
  return picked?.uri.fsPath;
}

/** Absolute paths of this window's folders, in folder order. */
export function windowFolders(): string[] {
  return (vscode.workspace.workspaceFolders ?? []).map((f) => f.uri.fsPath);
}
