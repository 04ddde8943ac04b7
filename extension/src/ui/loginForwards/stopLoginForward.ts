import * as vscode from 'vscode';
import { loginForwardPickItem } from './loginForwardText';
import { COMMAND_LABELS } from '../../contract/manifest';
import type { ToolboxCommand } from '../commands/toolboxCommand';

/**
 * Stop Forwarding a Login Port… (the login status bar item's click): the one open forward, or a
 * pick of them; a port number as the argument stops that one.
 */
export const stopLoginForward: ToolboxCommand = {
  id: COMMAND_LABELS.stopLoginForward.command,
  run: async (s, arg) => {
    const open = s.backend.loginForwards();
    let port = typeof arg === 'number' ? arg : undefined;
    if (port === undefined) {
      if (open.length === 0) {
        void vscode.window.showInformationMessage('No login callback is forwarded.');
        return;
      }
      const now = Date.now();
      const picked = await vscode.window.showQuickPick(
        open.map((f) => ({ ...loginForwardPickItem(f, now), port: f.port })),
        { placeHolder: 'Stop forwarding which login callback?' },
      );
      port = picked?.port;
    }
    if (port !== undefined) await s.backend.stopLoginForward(port);
  },
};
