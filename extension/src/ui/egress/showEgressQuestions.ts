import { COMMAND_LABELS } from '../../contract/manifest';
import type { ToolboxCommand } from '../commands/toolboxCommand';

/**
 * The egress policy's connection questions waiting (issue 30; the status bar item, the palette): a
 * pick of them, oldest first, then Allow Once / Allow for This Folder / Deny (ui/egress/egressQuestions.ts). A
 * question's id as the argument goes straight to its answer pick.
 */
export const showEgressQuestions: ToolboxCommand = {
  id: COMMAND_LABELS.showEgressQuestions.command,
  run: (s, arg) => s.egress.showQuestions(typeof arg === 'string' ? arg : undefined),
};
