import type { ToolboxCommand } from './toolboxCommand';

export const showLog: ToolboxCommand = {
  id: 'toolbox.showLog',
  run: (s) => s.log.show(true),
};
