import { openShellFor } from '../shells/openShell';
import type { ToolboxCommand, CommandServices } from '../commands/toolboxCommand';
import { COMMAND_LABELS } from '../../contract/manifest';

/** A Toolbox terminal running Claude Code in the folder's container (a held session: it survives reloads). */
export const startClaudeCode: ToolboxCommand = {
  id: 'toolbox.startClaudeCode',
  run: (s, arg) => openShellFor(s, arg, undefined, 'claude'),
};

/** A Toolbox terminal running Codex in the folder's container (a held session: it survives reloads). */
export const startCodex: ToolboxCommand = {
  id: 'toolbox.startCodex',
  run: (s, arg) => openShellFor(s, arg, undefined, 'codex'),
};

/** Focuses one of this window's Toolbox terminals (a session's row in the tree, the nudge's Focus). */
export const focusTerminal: ToolboxCommand = {
  id: COMMAND_LABELS.focusTerminal.command,
  run: (s: CommandServices, key: unknown) => {
    const first = s.shells.agentTerminals().find((a) => a.status.state === 'needsYou');
    const target = typeof key === 'number' ? key : first?.key;
    if (target === undefined || !s.shells.focus(target)) {
      throw new Error('That terminal is closed. Open a Toolbox shell from the Toolbox view or the command palette.');
    }
  },
};
