import { approvalIdOf } from './showApprovals';
import type { ToolboxCommand } from './types';

/** Allow on a question's row (inline): the agent goes ahead, this once. */
export const approvalAllow: ToolboxCommand = {
  id: 'toolbox.approval.allow',
  run: async (s, arg) => {
    const id = approvalIdOf(arg);
    if (id === undefined) return s.approvals.showApprovals();
    s.approvals.answer(id, 'allow');
  },
};
