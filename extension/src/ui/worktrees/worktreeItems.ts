/**
 * The rows of the Worktrees view, pure: one per toolbox worktree, from the backend's summary and
 * the agent sessions the snapshot saw in its container. The provider only copies them.
 */
import type { AgentWorktreeRefusal, AgentWorktreeSummary } from '../../backend/api';
import { displayConfigKey } from '../../plan/gitConfig';
import { inline, plainItem } from '../plainText';

/** What the provider copies onto a tree item, for every row of the view. */
interface RowItem {
  id: string;
  label: string;
  description: string;
  tooltip: string;
  /** For the menus' when clauses. */
  contextValue: string;
  icon: { id: string; color?: string };
}

/** A toolbox worktree; contextValue `worktree.<running|stopped|none>[.dirty][.rebasing]`. */
export interface WorktreeRow extends RowItem {
  worktree: AgentWorktreeSummary;
}

export function worktreeRow(w: AgentWorktreeSummary, agentSessions: number, removing = false): WorktreeRow {
  const dir = w.path.slice(w.path.lastIndexOf('/') + 1);
  const label = w.branch ?? `${dir} (rebasing)`;
  const container = w.container?.state === 'running' ? 'running' : w.container ? 'stopped' : 'none';
  const parts: string[] = [];
  if (!w.present) parts.push('folder missing');
  if (w.rebasing) parts.push('rebase stopped on a conflict');
  if (w.ahead !== undefined && w.behind !== undefined) parts.push(`↑${w.ahead} ↓${w.behind}`);
  if (w.present) parts.push(w.dirty ? 'uncommitted changes' : 'clean');
  parts.push(
    container === 'running'
      ? agentSessions > 0
        ? 'agent running'
        : 'container running'
      : container === 'stopped'
        ? 'container stopped'
        : 'no container',
  );
  const base = w.base && inline(w.base);
  const tooltip = [
    `${inline(label)}: ${inline(w.path)}`,
    base
      ? `Base: ${base}${w.ahead !== undefined ? ` (${w.ahead} commit${w.ahead === 1 ? '' : 's'} ahead, ${w.behind} behind origin/${base})` : ''}`
      : 'No base recorded.',
    w.dirty
      ? 'Has uncommitted changes.'
      : w.present
        ? 'No uncommitted changes.'
        : 'The folder is gone: remove the worktree, or create it again.',
    w.container
      ? `Container ${inline(w.container.name)}: ${inline(w.container.state)}${agentSessions > 0 ? `, ${agentSessions} agent session${agentSessions === 1 ? '' : 's'}` : ''}.`
      : 'No container: Open starts one and the agent.',
    w.rebasing ? 'A sync stopped on a conflict: resolve the files, stage them, then Sync again.' : '',
  ]
    .filter(Boolean)
    .join('\n');
  if (removing) {
    // Being removed by this window: no actions meanwhile, and it says so until it is gone.
    return plainItem({
      id: `worktree:${w.path}`,
      label,
      description: 'removing: stopping its container, then the worktree…',
      tooltip,
      contextValue: 'removingWorktree',
      icon: { id: 'loading~spin' },
      worktree: w,
    });
  }
  return plainItem({
    id: `worktree:${w.path}`,
    label,
    description: parts.join(' · '),
    tooltip,
    contextValue: `worktree.${container}${w.dirty ? '.dirty' : ''}${w.rebasing ? '.rebasing' : ''}`,
    icon:
      w.rebasing || !w.present
        ? { id: 'warning', color: 'list.warningForeground' }
        : { id: 'git-branch', color: w.dirty ? 'gitDecoration.modifiedResourceForeground' : undefined },
    worktree: w,
  });
}

/**
 * A repository host git refused (docs/decisions/0039): one row saying the key and the file, with
 * Open File; contextValue `gitRefused`, or `gitRefused.path` for a symbolic link (nothing to open).
 */
export interface RefusedRow extends RowItem {
  refusal: AgentWorktreeRefusal;
}

export function refusedRow(r: AgentWorktreeRefusal): RefusedRow {
  const key = r.key !== undefined ? displayConfigKey(r.key) : undefined;
  const file = r.file !== undefined ? inline(r.file) : undefined;
  return plainItem({
    id: `refused:${r.folder}`,
    label:
      r.code === 'repo-config-unsafe'
        ? key
          ? `Host git refused: ${key}`
          : 'Host git refused this repository'
        : 'Host git refused a symbolic link',
    description: file ?? inline(r.folder),
    tooltip: [
      inline(r.message),
      file ? 'Open File shows the file; remove the key (or move it to your global git config), then refresh.' : '',
    ]
      .filter(Boolean)
      .join('\n'),
    contextValue: file ? 'gitRefused' : 'gitRefused.path',
    icon: { id: 'shield', color: 'list.errorForeground' },
    refusal: r,
  });
}

/** Any row of the Worktrees view. */
export type WorktreesViewRow = WorktreeRow | RefusedRow;
