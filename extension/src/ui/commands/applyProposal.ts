import { COMMAND_LABELS } from '../../contract/manifest';
import { proposalIdOf } from '../proposals';
import type { ToolboxCommand } from './types';

/** Apply on a proposal's diff (editor title): writes the proposed text to the host file (ui/proposals.ts). */
export const applyProposal: ToolboxCommand = {
  id: COMMAND_LABELS.applyProposal.command,
  run: async (s, uri) => {
    const id = proposalIdOf(uri) ?? (await s.proposals.pick('Apply'));
    if (id !== undefined) await s.proposals.apply(id);
  },
};
