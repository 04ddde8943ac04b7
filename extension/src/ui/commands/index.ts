/** The single registration point of every Toolbox command. */
import * as vscode from 'vscode';
import { attachShell } from './attachShell';
import { driftActions } from './driftActions';
import { endShell } from './endShell';
import { manageCredentialGrants } from './manageCredentialGrants';
import { openNamedShell } from './openNamedShell';
import { openShell } from './openShell';
import { openShellPeerOff } from './openShellPeerOff';
import { openShellPeerOn } from './openShellPeerOn';
import { rebuildRuntimeImage } from './rebuildRuntimeImage';
import { recreateContainer } from './recreateContainer';
import { refreshCommand } from './refresh';
import { showLog } from './showLog';
import { stopAllCommand } from './stopAll';
import { stopContainerCommand } from './stopContainer';
import { togglePeerMessaging } from './togglePeerMessaging';
import { turnOffReach } from './turnOffReach';
import type { CommandServices, ToolboxCommand } from './types';

export const COMMANDS: readonly ToolboxCommand[] = [
  openShell,
  openShellPeerOff,
  openShellPeerOn,
  openNamedShell,
  stopContainerCommand,
  stopAllCommand,
  recreateContainer,
  togglePeerMessaging,
  refreshCommand,
  showLog,
  driftActions,
  attachShell,
  endShell,
  manageCredentialGrants,
  turnOffReach,
  rebuildRuntimeImage,
];

export function registerCommands(services: CommandServices): vscode.Disposable[] {
  return COMMANDS.map((c) =>
    vscode.commands.registerCommand(c.id, async (...args: unknown[]) => {
      try {
        return await c.run(services, ...args);
      } catch (err) {
        const message = (err as Error).message ?? String(err);
        services.log.error(`${c.id}: ${message}`);
        void vscode.window.showErrorMessage(message, 'Show Log').then((a) => a && services.log.show(true));
        return undefined;
      }
    }),
  );
}
