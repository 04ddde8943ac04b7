import { approvalIdOf } from './showApprovals';
import type { ToolboxCommand } from './types';

/** Open Terminal on a question's row: the terminal it came from, to answer in the agent's own prompt; it does not answer. */
export const approvalOpenTerminal: ToolboxCommand = {
  id: 'toolbox.approval.openTerminal',
  run: async (s, arg) => {
    const id = approvalIdOf(arg);
    if (id === undefined) return s.approvals.showApprovals();
    s.approvals.openTerminal(id);
  },
};
