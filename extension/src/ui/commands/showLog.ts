import type { ToolboxCommand } from './toolboxCommand';
import { COMMAND_LABELS } from '../../contract/manifest';

export const showLog: ToolboxCommand = {
  id: COMMAND_LABELS.showLog.command,
  run: (s) => s.log.show(true),
};
