import type { ToolboxCommand } from './types';

export const showLog: ToolboxCommand = {
  id: 'toolbox.showLog',
  run: (s) => s.log.show(true),
};
