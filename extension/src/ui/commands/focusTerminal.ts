import type { CommandServices, ToolboxCommand } from './types';

/** Focuses one of this window's Toolbox terminals (a session's row in the tree, the nudge's Focus). */
export const focusTerminal: ToolboxCommand = {
  id: 'toolbox.focusTerminal',
  run: (s: CommandServices, key: unknown) => {
    const first = s.shells.agentTerminals().find((a) => a.status.state === 'needsYou');
    const target = typeof key === 'number' ? key : first?.key;
    if (target === undefined || !s.shells.focus(target)) {
      throw new Error('That terminal is closed. Open a Toolbox shell from the Toolbox view or the command palette.');
    }
  },
};
