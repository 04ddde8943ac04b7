import * as vscode from 'vscode';
import { SETTINGS } from '../../contract/manifest';
import { asToolboxError, errorActions, errorText } from '../../contract/errors';
import { plainText } from '../plainText';
import { openRefusedGitFile } from '../worktrees/openRefusedGitFile';
import { selectEngine } from './selectEngine';

/**
 * An error notification with Show Log, and Open Setting first when the toolbox.dockerHost
 * setting can fix it (the engine could not be reached), Select Engine… when another engine can
 * (the engine is on another machine). `extra` buttons come before them.
 */
export async function showEngineError(err: unknown, log: vscode.LogOutputChannel, ...extra: string[]): Promise<string | undefined> {
  const openSetting = 'Open Setting';
  const selectEngineButton = 'Select Engine…';
  const openFile = 'Open File';
  const actions = errorActions(err);
  const file = actions.includes('open-file') ? asToolboxError(err)?.file : undefined;
  const buttons = [
    ...extra,
    ...(file !== undefined ? [openFile] : []),
    ...(actions.includes('select-engine') ? [selectEngineButton] : []),
    ...(actions.includes('open-docker-host-setting') ? [openSetting] : []),
    'Show Log',
  ];
  // Engine and git texts reach the user here: plain text, never a link (docs/decisions/0040-outside-text-is-plain-text.md).
  const answer = await vscode.window.showErrorMessage(plainText(errorText(err), 'message'), ...buttons);
  if (answer === openSetting) await vscode.commands.executeCommand('workbench.action.openSettings', SETTINGS.dockerHost);
  else if (answer === selectEngineButton) await vscode.commands.executeCommand(selectEngine.id);
  else if (answer === openFile) await vscode.commands.executeCommand(openRefusedGitFile.id, { file });
  else if (answer === 'Show Log') log.show(true);
  return answer;
}
