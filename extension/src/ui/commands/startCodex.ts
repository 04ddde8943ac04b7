import { openShellFor } from '../shells/openShell';
import type { ToolboxCommand } from './types';

/** A Toolbox terminal running Codex in the folder's container (a held session: it survives reloads). */
export const startCodex: ToolboxCommand = {
  id: 'toolbox.startCodex',
  run: (s, arg) => openShellFor(s, arg, undefined, 'codex'),
};
