import { COMMAND_LABELS } from '../../contract/manifest';
import type { ToolboxCommand } from './types';

/** The proposals waiting for the user (a dismissed notification leaves one waiting): pick one, see its diff. */
export const reviewProposals: ToolboxCommand = {
  id: COMMAND_LABELS.reviewProposals.command,
  run: async (s) => {
    const id = await s.proposals.pick('Review');
    if (id !== undefined) await s.proposals.review(id);
  },
};
