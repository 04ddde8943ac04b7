import type { SessionRecord } from '../../backend/api';
import type { TreeNode } from '../views/treeNodes';
import type { CommandServices, ToolboxCommand } from '../commands/toolboxCommand';
import { confirmDestructive, isConfirmed } from '../commands/confirmDestructive';
import { COMMAND_LABELS } from '../../contract/manifest';

/** The record a tree node's held shell stands for (what Attach and End need to reach it). */
export function recordOf(node: TreeNode | undefined): SessionRecord | undefined {
  const c = node?.container;
  const s = node?.shell;
  if (!c || !s || !c.holder) return undefined;
  return {
    folder: c.workspace ?? '',
    container: c.name,
    containerId: c.id,
    sessionId: s.id,
    title: s.title ?? `Toolbox: ${c.name}`,
    holder: c.holder,
    cols: 80,
    rows: 24,
    openedAt: Date.now(),
  };
}

/** Opens a terminal on a held shell (a detached one, or one another window shows too). */
export const attachShell: ToolboxCommand = {
  id: COMMAND_LABELS.attachShell.command,
  run: async (s: CommandServices, arg) => {
    const record = recordOf(arg as TreeNode | undefined);
    if (!record) throw new Error('Pick a shell under a container in the Toolbox view to attach to it.');
    const here = s.shells.shells.find((o) => o.record?.containerId === record.containerId && o.record.sessionId === record.sessionId);
    if (here) {
      here.terminal.show();
      return here;
    }
    const shell = await s.shells.attach(record);
    s.refresh.noteShellOpened();
    return shell;
  },
};

/** Ends a held shell from the tree (as closing its terminal would), after a confirmation. */
export const endShell: ToolboxCommand = {
  id: 'toolbox.endShell',
  run: async (s, arg, options) => {
    const node = arg as TreeNode | undefined;
    const record = recordOf(node);
    if (!record) throw new Error('Pick a shell under a container in the Toolbox view to end it.');
    if (!isConfirmed(options)) {
      const ok = await confirmDestructive(
        `End the shell "${node?.label}" in ${record.container}?`,
        `The programs running in it end, as when its terminal is closed${node?.shell?.attached ? ' (terminals showing it close)' : ''}. ` +
          "When it is the container's last shell, the container is removed too; the files in your folder are kept.",
        'End Shell',
        'Keep Shell',
      );
      if (!ok) return;
    }
    s.shells.closeTerminalsOfSession(record);
    await s.backend.endShell(record);
    await s.refresh.refreshNow();
  },
};
