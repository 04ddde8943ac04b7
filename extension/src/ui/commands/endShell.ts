import type { TreeNode } from '../views/treeNodes';
import { recordOf } from './attachShell';
import { confirmDestructive, isConfirmed } from './confirm';
import type { ToolboxCommand } from './types';

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
