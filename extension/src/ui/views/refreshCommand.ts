import type { ToolboxCommand } from '../commands/toolboxCommand';
import { COMMAND_LABELS } from '../../contract/manifest';

export const refreshCommand: ToolboxCommand = {
  id: COMMAND_LABELS.refresh.command,
  run: (s) => s.refresh.refreshNow(),
};
