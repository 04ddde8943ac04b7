import { pickFolder } from '../folders';
import type { ToolboxCommand } from '../commands/toolboxCommand';
import { COMMAND_LABELS } from '../../contract/manifest';

/**
 * Opens a read-only document with every configuration key of the folder, its value and the
 * layer that set it (default, ~/.toolbox.yaml:line, .toolbox.yaml:line, a TOOLBOX_* variable, a
 * setting), as the CLI's `toolbox config show --origin` prints it.
 */
export const showResolvedConfig: ToolboxCommand = {
  id: COMMAND_LABELS.showResolvedConfig.command,
  run: async (s, arg) => {
    const folder = await pickFolder(arg, 'Show the configuration of which folder?');
    if (!folder) return;
    await s.resolvedConfig.show(folder);
  },
};
