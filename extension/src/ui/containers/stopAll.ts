import * as vscode from 'vscode';
import { plainText } from '../plainText';
import { stopAllConfirmation } from './confirmations';
import type { ToolboxCommand } from '../commands/toolboxCommand';
import { COMMAND_LABELS } from '../../contract/manifest';

/**
 * `toolbox stop --all`: the toolbox containers listed now, the anchor last, after a modal
 * confirmation that names them (skipped when called with `{ confirmed: true }`, for keybindings
 * and automation). Only what was listed is stopped, never a container that appeared since.
 *
 * The safe choice is the dialog's default: VS Code focuses the first button that is not the
 * close affordance, so "Keep Running" comes first and Enter stops nothing; Escape is Cancel.
 */
export const stopAllCommand: ToolboxCommand = {
  id: COMMAND_LABELS.stopAll.command,
  run: async (s, options) => {
    const confirmed = (options as { confirmed?: unknown } | undefined)?.confirmed === true;
    const targets = await s.backend.stopAllTargets();
    if (targets.length === 0) {
      void vscode.window.showInformationMessage('No toolbox containers to stop.');
      return;
    }
    const children = (s.refresh.state.snapshot?.containers ?? [])
      .filter((c) => targets.includes(c.name) && c.dockerChildren)
      .map((c) => c.dockerChildren!);
    const text = stopAllConfirmation(targets, s.backend.names.anchor, children);
    const keep: vscode.MessageItem = { title: 'Keep Running' };
    const stop: vscode.MessageItem = { title: text.stopLabel };
    const answer = confirmed
      ? stop
      : await vscode.window.showWarningMessage(
          plainText(text.message, 'message'),
          { modal: true, detail: plainText(text.detail, 'detail') },
          keep,
          stop,
        );
    if (answer !== stop) return;
    const stopped = await vscode.window.withProgress(
      {
        location: vscode.ProgressLocation.Notification,
        title: `Stopping ${targets.length} toolbox container${targets.length === 1 ? '' : 's'}…`,
      },
      () => s.backend.stopAll(targets),
    );
    s.log.info(stopped.length ? `Stopped ${stopped.join(', ')}.` : 'No toolbox containers were running.');
    s.shells.closeTerminalsOf(stopped);
    await s.refresh.refreshNow();
  },
};
