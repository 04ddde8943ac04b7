import { openShellFor } from '../shells/openShell';
import type { ToolboxCommand } from './types';

/** A Toolbox terminal running Claude Code in the folder's container (a held session: it survives reloads). */
export const startClaudeCode: ToolboxCommand = {
  id: 'toolbox.startClaudeCode',
  run: (s, arg) => openShellFor(s, arg, undefined, 'claude'),
};
