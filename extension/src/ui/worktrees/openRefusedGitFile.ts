/**
 * Open File for a repository host git refused (docs/decisions/0039): the config file that holds
 * the refused key, in the editor, as text. Its argument is the Worktrees view's row, or an error
 * whose `open-file` action names the file.
 */
import { isAbsolute } from 'node:path';
import * as vscode from 'vscode';
import { COMMAND_LABELS } from '../../contract/manifest';
import type { ToolboxCommand } from '../commands/toolboxCommand';

/** The file a row (`{ refusal: { file } }`) or an error (`{ file }`) names, when it is an absolute path. */
export function refusedFileOf(arg: unknown): string | undefined {
  const a = arg as { refusal?: { file?: unknown }; file?: unknown } | undefined;
  const file = a?.refusal?.file ?? a?.file;
  return typeof file === 'string' && isAbsolute(file) ? file : undefined;
}

export const openRefusedGitFile: ToolboxCommand = {
  id: COMMAND_LABELS.openRefusedGitFile.command,
  run: async (_s, arg) => {
    const file = refusedFileOf(arg);
    if (file === undefined) throw new Error('Open File needs a refused repository from the Worktrees view.');
    await vscode.window.showTextDocument(vscode.Uri.file(file), { preview: false });
    return file;
  },
};
