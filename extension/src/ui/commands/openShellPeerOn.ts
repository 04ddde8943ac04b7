import { openShellFor } from './openShell';
import type { ToolboxCommand } from './types';

/** `toolbox shell --peer`: this one run in the shared PID namespace. */
export const openShellPeerOn: ToolboxCommand = {
  id: 'toolbox.openShellPeerOn',
  run: (s, arg) => openShellFor(s, arg, true),
};
