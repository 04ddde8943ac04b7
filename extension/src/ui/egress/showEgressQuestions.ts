import type { ToolboxCommand } from '../commands/toolboxCommand';

/** The command the connection questions' status bar item runs (ui/views/statusBars.ts EgressStatusBar). */
export const SHOW_EGRESS_QUESTIONS_COMMAND = 'toolbox.showEgressQuestions';

/**
 * The egress policy's connection questions waiting (issue 30; the status bar item, the palette): a
 * pick of them, oldest first, then Allow Once / Allow for This Folder / Deny (ui/egress/egressQuestions.ts). A
 * question's id as the argument goes straight to its answer pick.
 */
export const showEgressQuestions: ToolboxCommand = {
  id: SHOW_EGRESS_QUESTIONS_COMMAND,
  run: (s, arg) => s.egress.showQuestions(typeof arg === 'string' ? arg : undefined),
};
