import { approvalIdOf } from './showApprovals';
import type { ToolboxCommand } from './types';

/** Deny on a question's row (inline): the agent is told the user said no. */
export const approvalDeny: ToolboxCommand = {
  id: 'toolbox.approval.deny',
  run: async (s, arg) => {
    const id = approvalIdOf(arg);
    if (id === undefined) return s.approvals.showApprovals();
    s.approvals.answer(id, 'deny');
  },
};
