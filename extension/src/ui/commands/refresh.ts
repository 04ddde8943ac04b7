import type { ToolboxCommand } from './types';

export const refreshCommand: ToolboxCommand = {
  id: 'toolbox.refresh',
  run: (s) => s.refresh.refreshNow(),
};
