import { COMMAND_LABELS } from '../../contract/manifest';
import type { ToolboxCommand } from '../commands/toolboxCommand';
import { proposalIdOf } from './proposalReview';

/** The proposals waiting for the user (a dismissed notification leaves one waiting): pick one, see its diff. */
export const reviewProposals: ToolboxCommand = {
  id: COMMAND_LABELS.reviewProposals.command,
  run: async (s) => {
    const id = await s.proposals.pick('Review');
    if (id !== undefined) await s.proposals.review(id);
  },
};

/** Apply on a proposal's diff (editor title): writes the proposed text to the host file (ui/approvals/proposalReview.ts). */
export const applyProposal: ToolboxCommand = {
  id: COMMAND_LABELS.applyProposal.command,
  run: async (s, uri) => {
    const id = proposalIdOf(uri) ?? (await s.proposals.pick('Apply'));
    if (id !== undefined) await s.proposals.apply(id);
  },
};

/** Reject on a proposal's diff (editor title): drops it, writing nothing (ui/approvals/proposalReview.ts). */
export const rejectProposal: ToolboxCommand = {
  id: COMMAND_LABELS.rejectProposal.command,
  run: async (s, uri) => {
    const id = proposalIdOf(uri) ?? (await s.proposals.pick('Reject'));
    if (id !== undefined) s.proposals.reject(id);
  },
};
