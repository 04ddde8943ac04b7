import * as vscode from 'vscode';
import { plainText } from '../plainText';
import type { EngineChoice } from '../../backend/api';
import { COMMAND_LABELS, SETTINGS } from '../../contract/manifest';
import type { ToolboxCommand } from '../commands/toolboxCommand';

interface EnginePick extends vscode.QuickPickItem {
  choice?: EngineChoice;
  clear?: boolean;
}

/** The quick pick rows: reachable engines first (in probe order), then the ones that cannot be used. */
export function engineItems(choices: readonly EngineChoice[], settingValue: string): EnginePick[] {
  const usable = choices.filter((c) => !c.problem);
  const broken = choices.filter((c) => c.problem);
  const row = (c: EngineChoice): EnginePick => ({
    label: `${c.current ? '$(check) ' : ''}${plainText(c.endpoint, 'iconLabel')}`,
    description: plainText(c.problem ? `${c.source}: cannot be used` : `${c.version ?? ''}, ${c.source}`, 'iconLabel'),
    ...(c.problem ? { detail: plainText(c.problem, 'iconLabel') } : {}),
    choice: c,
  });
  const items: EnginePick[] = usable.map(row);
  if (broken.length > 0) items.push({ label: 'Not reachable', kind: vscode.QuickPickItemKind.Separator }, ...broken.map(row));
  if (settingValue.trim() !== '') {
    items.push(
      { label: '', kind: vscode.QuickPickItemKind.Separator },
      { label: 'Clear the setting', description: 'use DOCKER_HOST, the Docker context, or the usual sockets', clear: true },
    );
  }
  return items;
}

/**
 * Toolbox: Select Engine… lists the configured endpoint and the usual sockets, each asked with a
 * short timeout, and writes the chosen one into toolbox.dockerHost (User settings: the setting has
 * the window scope, docs/decisions/0015-docker-host-window-scope.md).
 */
export const selectEngine: ToolboxCommand = {
  id: COMMAND_LABELS.selectEngine.command,
  run: async (s) => {
    const config = vscode.workspace.getConfiguration('toolbox');
    // The user's value: the backend ignores a workspace one (backend/settings.ts).
    const current = config.inspect<string>('dockerHost')?.globalValue ?? '';
    const choices = await vscode.window.withProgress(
      { location: vscode.ProgressLocation.Window, title: 'Looking for Docker engines…' },
      () => s.backend.engineChoices(),
    );
    const picked = await vscode.window.showQuickPick(engineItems(choices, current), {
      title: 'Select the Docker engine Toolbox uses',
      placeHolder: choices.some((c) => !c.problem) ? 'Pick an engine; it is saved in the toolbox.dockerHost setting' : 'No engine answered',
      matchOnDescription: true,
      matchOnDetail: true,
    });
    if (!picked) return;
    if (picked.clear) {
      await config.update(SETTINGS.dockerHost.replace(/^toolbox\./, ''), undefined, vscode.ConfigurationTarget.Global);
      void vscode.window.showInformationMessage('Toolbox no longer has an engine set and finds one as the docker CLI does.');
      return;
    }
    const choice = picked.choice;
    if (!choice) return;
    if (choice.problem) {
      const answer = await vscode.window.showWarningMessage(
        plainText(`The engine at ${choice.endpoint} cannot be used now (${choice.problem}). Use it anyway?`, 'message'),
        'Use It',
      );
      if (answer !== 'Use It') return;
    }
    await config.update(SETTINGS.dockerHost.replace(/^toolbox\./, ''), choice.endpoint, vscode.ConfigurationTarget.Global);
    // The configuration listener in extension.ts drops the connection and refreshes the views.
    s.log.info(`Select Engine: toolbox.dockerHost set to ${choice.endpoint} (${choice.source}).`);
  },
};
