import { COMMAND_LABELS } from '../../contract/manifest';
import type { ToolboxCommand } from '../commands/toolboxCommand';

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
  id: COMMAND_LABELS.showApprovals.command,
  run: (s, arg) => s.approvals.showApprovals(approvalIdOf(arg)),
};

/** Allow on a question's row (inline): the agent goes ahead, this once. */
export const approvalAllow: ToolboxCommand = {
  id: 'toolbox.approval.allow',
  run: async (s, arg) => {
    const id = approvalIdOf(arg);
    if (id === undefined) return s.approvals.showApprovals();
    s.approvals.answer(id, 'allow');
  },
};

/**
 * Allow for This Session on a question's row (its context menu, only when the agent can remember
 * it): the agent does not ask again for the same thing in its session.
 */
export const approvalAllowForSession: ToolboxCommand = {
  id: 'toolbox.approval.allowForSession',
  run: async (s, arg) => {
    const id = approvalIdOf(arg);
    if (id === undefined) return s.approvals.showApprovals();
    s.approvals.answer(id, 'session');
  },
};

/** Deny on a question's row (inline): the agent is told the user said no. */
export const approvalDeny: ToolboxCommand = {
  id: 'toolbox.approval.deny',
  run: async (s, arg) => {
    const id = approvalIdOf(arg);
    if (id === undefined) return s.approvals.showApprovals();
    s.approvals.answer(id, 'deny');
  },
};

/** Open Terminal on a question's row: the terminal it came from, to answer in the agent's own prompt; it does not answer. */
export const approvalOpenTerminal: ToolboxCommand = {
  id: 'toolbox.approval.openTerminal',
  run: async (s, arg) => {
    const id = approvalIdOf(arg);
    if (id === undefined) return s.approvals.showApprovals();
    s.approvals.openTerminal(id);
  },
};
