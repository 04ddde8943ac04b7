/**
 * The left side of Compare with Base: a file at the worktree's merge base, read with host git
 * through the backend (an added file has no left side at all: compareAgentWorktree.ts).
 */
import type * as vscode from 'vscode';
import type { WorktreeService } from '../../backend/api';

export function worktreeBaseProvider(backend: Pick<WorktreeService, 'agentWorktreeFileAt'>): vscode.TextDocumentContentProvider {
  return {
    async provideTextDocumentContent(uri: vscode.Uri): Promise<string> {
      const q = JSON.parse(uri.query) as { worktree?: unknown; commit?: unknown };
      if (typeof q.worktree !== 'string' || typeof q.commit !== 'string') return '';
      // The path is the worktree file's own (compareAgentWorktree.ts baseUri): the file is what follows the worktree.
      const prefix = `${q.worktree.replace(/\/+$/, '')}/`;
      if (!uri.path.startsWith(prefix)) return '';
      return backend.agentWorktreeFileAt(q.worktree, q.commit, uri.path.slice(prefix.length));
    },
  };
}
