/**
 * The rows of the Worktrees view, pure: one per toolbox worktree, from the backend's summary and
 * the agent sessions the snapshot saw in its container. The provider only copies them.
 */
import type { AgentWorktreeSummary } from '../../backend/api';
import { inline, plainItem } from '../plainText';

export interface WorktreeRow {
  id: string;
  label: string;
  description: string;
  tooltip: string;
  /** `worktree.<running|stopped|none>[.dirty][.rebasing]`, for the menus' when clauses. */
  contextValue: string;
  icon: { id: string; color?: string };
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
