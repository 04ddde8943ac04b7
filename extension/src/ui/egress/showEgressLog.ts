import * as vscode from 'vscode';
import { COMMAND_LABELS } from '../../contract/manifest';
import { plainText } from '../plainText';
import type { ToolboxCommand } from '../commands/toolboxCommand';

/** The container a command was run on: a network row of the Workspaces view (its node), or its name (the "earlier" row's click). */
export function egressContainerOf(arg: unknown): string | undefined {
  if (typeof arg === 'string') return arg;
  if (arg !== null && typeof arg === 'object') {
    const name = (arg as { egressContainer?: unknown }).egressContainer;
    if (typeof name === 'string') return name;
  }
  return undefined;
}

/**
 * A container's connection log as a read-only document (issue 30, ui/egress/egressLogDocuments.ts): from its
 * network row, or from the palette with a pick of the containers under an egress policy.
 */
export const showEgressLog: ToolboxCommand = {
  id: COMMAND_LABELS.showEgressLog.command,
  run: async (s, arg) => {
    let container = egressContainerOf(arg);
    if (container === undefined) {
      const containers = (s.refresh.state.snapshot?.containers ?? []).filter((c) => c.egress !== undefined);
      if (containers.length === 0) {
        void vscode.window.showInformationMessage(
          'No Toolbox container is under an egress policy (toolbox.egress.mode or toolbox.egressForFolder set to ask or allowlist), so there is no connection log to show.',
        );
        return;
      }
      const picked = await vscode.window.showQuickPick(
        containers.map((c) => ({
          label: plainText(c.name, 'iconLabel'),
          description: plainText(
            `${c.egress!.mode}${c.egress!.enforced ? '' : ' (not applied yet)'} · ${c.egress!.allowed} allowed · ${c.egress!.denied} denied`,
            'iconLabel',
          ),
          detail: c.workspace !== undefined ? plainText(c.workspace, 'iconLabel') : undefined,
          name: c.name,
        })),
        { placeHolder: 'Show the connection log of which container?', matchOnDescription: true, matchOnDetail: true },
      );
      if (picked === undefined) return;
      container = picked.name;
    }
    await s.egressDocs.show(container);
  },
};
