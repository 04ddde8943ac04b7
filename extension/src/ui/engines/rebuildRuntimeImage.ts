import * as vscode from 'vscode';
import { plainText } from '../plainText';
import { withPhaseProgress } from '../progress';
import type { ToolboxCommand } from '../commands/toolboxCommand';
import { COMMAND_LABELS } from '../../contract/manifest';

/**
 * Toolbox: Rebuild Runtime Image (upstream's `toolbox build`): builds the runtime image on this
 * machine, with the layer cache or from scratch (`--no-cache`), under a cancellable progress
 * notification; old toolbox runtime images that no container uses are removed afterwards.
 * Containers already running keep their image until they are recreated.
 * `{ noCache: boolean }` as the argument skips the question (keybindings, tests).
 */
export const rebuildRuntimeImage: ToolboxCommand = {
  id: COMMAND_LABELS.rebuildRuntimeImage.command,
  run: async (s, options) => {
    let noCache = (options as { noCache?: unknown } | undefined)?.noCache;
    if (typeof noCache !== 'boolean') {
      const cached: vscode.QuickPickItem = { label: 'Rebuild', detail: 'Reuses the layers that did not change. Takes seconds to minutes.' };
      const scratch: vscode.QuickPickItem = {
        label: 'Rebuild from Scratch',
        detail: 'Downloads everything again (no cache), for example to get the newest coding agents. Takes a few minutes.',
      };
      const pick = await vscode.window.showQuickPick([cached, scratch], { title: 'Rebuild the Toolbox runtime image' });
      if (!pick) return;
      noCache = pick === scratch;
    }
    const summary = await vscode.window.withProgress(
      { location: vscode.ProgressLocation.Notification, title: 'Toolbox: rebuilding the runtime image', cancellable: true },
      (progress, token) =>
        withPhaseProgress(
          progress,
          token,
          (line) => s.log.info(line),
          (reporter, signal) => s.backend.rebuildRuntimeImage({ noCache: noCache === true }, reporter, signal),
        ),
    );
    if (!summary) {
      s.log.info('Rebuilding the runtime image was cancelled; the previous image stays in use.');
      void vscode.window.showInformationMessage('The rebuild was cancelled. The previous runtime image stays in use.');
      return;
    }
    s.log.info(`Rebuilt the runtime image ${summary.tag}.`);
    const removed = summary.pruned.length ? ` Removed ${summary.pruned.length} old image${summary.pruned.length === 1 ? '' : 's'}.` : '';
    const kept = summary.inUse.length
      ? ` Kept ${summary.inUse.length} old image${summary.inUse.length === 1 ? '' : 's'} that a container still uses; recreate the container to move it to the new one.`
      : '';
    void vscode.window.showInformationMessage(
      plainText(`The Toolbox runtime image was rebuilt. New shells use it.${removed}${kept}`, 'message'),
    );
  },
};
