import { COMMAND_LABELS } from '../../contract/manifest';
import { proposalIdOf } from '../proposals';
import type { ToolboxCommand } from './types';

/** Reject on a proposal's diff (editor title): drops it, writing nothing (ui/proposals.ts). */
export const rejectProposal: ToolboxCommand = {
  id: COMMAND_LABELS.rejectProposal.command,
  run: async (s, uri) => {
    const id = proposalIdOf(uri) ?? (await s.proposals.pick('Reject'));
    if (id !== undefined) s.proposals.reject(id);
  },
};
