import { approvalIdOf } from './showApprovals';
import type { ToolboxCommand } from './types';

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
