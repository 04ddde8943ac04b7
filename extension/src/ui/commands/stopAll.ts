import * as vscode from 'vscode';
import type { ToolboxCommand } from './types';

/**
 * `toolbox stop --all`: every toolbox container and the anchor, after a modal confirmation
 * (skipped when called with `{ confirmed: true }`, for keybindings and automation).
 */
export const stopAllCommand: ToolboxCommand = {
  id: 'toolbox.stopAll',
  run: async (s, options) => {
    const ok = 'Stop All';
    const confirmed = (options as { confirmed?: unknown } | undefined)?.confirmed === true;
    const answer = confirmed
      ? ok
      : await vscode.window.showWarningMessage(
          'Stop every toolbox container?',
          {
            modal: true,
            detail: `This stops all shells in every window, and the peer anchor (${s.backend.names.anchor}). The socket volume is kept.`,
          },
          ok,
        );
    if (answer !== ok) return;
    const stopped = await vscode.window.withProgress(
      { location: vscode.ProgressLocation.Notification, title: 'Stopping all toolbox containers…' },
      () => s.backend.stopAll(),
    );
    s.log.info(stopped.length ? `Stopped ${stopped.join(', ')}.` : 'No toolbox containers were running.');
    s.shells.closeTerminalsOf(stopped);
    await s.refresh.refreshNow();
  },
};
