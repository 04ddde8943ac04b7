import type { ToolboxCommand } from '../commands/types';

export const refreshCommand: ToolboxCommand = {
  id: 'toolbox.refresh',
  run: (s) => s.refresh.refreshNow(),
};
