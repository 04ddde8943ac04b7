import { SHOW_APPROVALS_COMMAND } from '../views/treeNodes';
import type { ToolboxCommand } from './types';

/** The question a command was run on: a row of the Workspaces view (its node) or the id itself (the row's click). */
export function approvalIdOf(arg: unknown): string | undefined {
  if (typeof arg === 'string') return arg;
  if (arg !== null && typeof arg === 'object' && typeof (arg as { approvalId?: unknown }).approvalId === 'string') {
    return (arg as { approvalId: string }).approvalId;
  }
  return undefined;
}

/**
 * The agents' questions waiting (the status bar item, the palette): a pick of them, oldest first,
 * then Allow / Allow for This Session / Deny / Open Terminal. On a question's row: that question's answer pick.
 */
export const showApprovals: ToolboxCommand = {
  id: SHOW_APPROVALS_COMMAND,
  run: (s, arg) => s.approvals.showApprovals(approvalIdOf(arg)),
};
