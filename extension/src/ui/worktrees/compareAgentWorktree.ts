import * as vscode from 'vscode';
import { COMMAND_LABELS } from '../../contract/manifest';
import { plainText } from '../plainText';
import { branchOf, pickWorktree } from './pickWorktree';
import type { ToolboxCommand } from '../commands/toolboxCommand';

/** The scheme of a file as it was at the worktree's merge base, served from the host (ui/worktrees/worktreeBaseProvider.ts). */
export const WORKTREE_BASE_SCHEME = 'toolbox-worktree-base';

/**
 * A URI for `file` at `commit` in the worktree at `worktreePath`. Its path is the worktree file's
 * own path (only the scheme and the query differ), as VS Code's git extension does for a file at
 * a commit: the multi-file diff shows a pair whose paths differ as a rename (issue 26 item 6).
 */
export function baseUri(worktreePath: string, commit: string, file: string): vscode.Uri {
  return vscode.Uri.from({
    scheme: WORKTREE_BASE_SCHEME,
    path: vscode.Uri.file(`${worktreePath}/${file}`).path,
    query: JSON.stringify({ worktree: worktreePath, commit }),
  });
}

/**
 * The multi-file diff's rows: [label, original, modified]. An added file has no original and a
 * deleted one no modified side, so VS Code shows them as added and deleted; only a file git
 * found renamed has an original under another name.
 */
export function changeResources<U>(
  diff: { changes: ReadonlyArray<{ path: string; oldPath?: string; status: 'added' | 'modified' | 'deleted' | 'renamed' }> },
  worktreeFile: (file: string) => U,
  baseFile: (file: string) => U,
): Array<[U, U | undefined, U | undefined]> {
  return diff.changes.map((c) => {
    const right = worktreeFile(c.path);
    const left = c.status === 'added' ? undefined : baseFile(c.oldPath ?? c.path);
    return [right, left, c.status === 'deleted' ? undefined : right];
  });
}

/**
 * Compare with Base: every file the worktree changed since it left its base (uncommitted work
 * included) in VS Code's multi-file diff editor, from the host: no container is needed.
 */
export const compareAgentWorktree: ToolboxCommand = {
  id: COMMAND_LABELS.compareAgentWorktree.command,
  run: async (s, arg) => {
    const w = await pickWorktree(s, arg, 'Compare which agent worktree with its base?');
    if (!w) return undefined;
    const branch = branchOf(w);
    const diff = await s.backend.agentWorktreeChanges({ root: w.root, branch });
    if (diff.changes.length === 0) {
      void vscode.window.showInformationMessage(plainText(`${branch} has no changes against origin/${diff.base}.`, 'message'));
      return diff;
    }
    const resources = changeResources(
      diff,
      (file) => vscode.Uri.file(`${diff.path}/${file}`),
      (file) => baseUri(diff.path, diff.mergeBase, file),
    );
    await vscode.commands.executeCommand('vscode.changes', `${branch} ↔ origin/${diff.base}`, resources);
    return diff;
  },
};
