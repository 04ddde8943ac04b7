import type { SessionRecord } from '../../backend/api';
import type { TreeNode } from '../views/treeNodes';
import type { CommandServices, ToolboxCommand } from './types';

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
  id: 'toolbox.attachShell',
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
