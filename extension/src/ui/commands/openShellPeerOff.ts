import { openShellFor } from './openShell';
import type { ToolboxCommand } from './types';

/** `toolbox shell --peer=false`: this one run outside the shared PID namespace. */
export const openShellPeerOff: ToolboxCommand = {
  id: 'toolbox.openShellPeerOff',
  run: (s, arg) => openShellFor(s, arg, false),
};
