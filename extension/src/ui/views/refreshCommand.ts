import type { ToolboxCommand } from '../commands/toolboxCommand';

export const refreshCommand: ToolboxCommand = {
  id: 'toolbox.refresh',
  run: (s) => s.refresh.refreshNow(),
};
