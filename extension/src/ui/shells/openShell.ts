import { pickFolder } from '../folders';
import type { CommandServices, ToolboxCommand } from '../commands/toolboxCommand';
import { COMMAND_LABELS } from '../../contract/manifest';

/**
 * Opens (creates or reattaches) the folder's container with its peer setting, or a per-run
 * override, and a terminal in it: a shell, or an agent (Start Claude Code, Start Codex).
 */
export async function openShellFor(s: CommandServices, arg: unknown, peer?: boolean, agent?: 'claude' | 'codex') {
  const folder = await pickFolder(arg);
  if (!folder) return undefined;
  const shell = await s.shells.openTerminal({ folder, peer, ...(agent ? { agent } : {}) });
  if (shell) s.refresh.noteShellOpened();
  return shell;
}

export const openShell: ToolboxCommand = {
  id: COMMAND_LABELS.openShell.command,
  run: (s, arg) => openShellFor(s, arg),
};

/** `toolbox shell --peer=false`: this one run outside the shared PID namespace. */
export const openShellPeerOff: ToolboxCommand = {
  id: 'toolbox.openShellPeerOff',
  run: (s, arg) => openShellFor(s, arg, false),
};

/** `toolbox shell --peer`: this one run in the shared PID namespace. */
export const openShellPeerOn: ToolboxCommand = {
  id: 'toolbox.openShellPeerOn',
  run: (s, arg) => openShellFor(s, arg, true),
};
