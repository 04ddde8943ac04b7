import * as vscode from 'vscode';
import { pickFolder } from '../folders';
import type { ToolboxCommand } from './types';

/** Flips the folder-scoped toolbox.peerMessaging; it applies to the next shell. */
export const togglePeerMessaging: ToolboxCommand = {
  id: 'toolbox.togglePeerMessaging',
  run: async (s, arg) => {
    const folder = await pickFolder(arg);
    if (!folder) return;
    const current = await s.backend.peerWanted(folder);
    const config = vscode.workspace.getConfiguration('toolbox', vscode.Uri.file(folder));
    await config.update('peerMessaging', !current, vscode.ConfigurationTarget.WorkspaceFolder);
    s.log.info(`Peer messaging ${!current ? 'on' : 'off'} for ${folder}; it applies to the next shell.`);
    void vscode.window.showInformationMessage(
      `Toolbox: peer messaging is now ${!current ? 'on' : 'off'} for this folder. It applies to the next shell; a running container with the other setting is marked as drifted.`,
    );
  },
};
