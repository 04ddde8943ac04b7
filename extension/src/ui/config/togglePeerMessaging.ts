import { dirname, join, resolve } from 'node:path';
import * as vscode from 'vscode';
import { plainText } from '../plainText';
import { readHostFacts } from '../../backend/hostFacts';
import { tildePath } from '../../plan/posture';
import { pickFolder } from '../folders';
import { projectFileOverriddenBy } from '../views/model';
import type { ToolboxCommand } from '../commands/toolboxCommand';
import { COMMAND_LABELS } from '../../contract/manifest';

/**
 * Turns peer messaging the other way for a folder, after asking where to write it: the folder's
 * .vscode/settings.json (toolbox.peerMessaging, VS Code only) or the project's .toolbox.yaml
 * (peer_messaging:, which the toolbox CLI reads too). Says where it wrote. It applies to the
 * next shell; a running container with the other setting is then shown as drifted.
 */
export const togglePeerMessaging: ToolboxCommand = {
  id: COMMAND_LABELS.togglePeerMessaging.command,
  run: async (s, arg) => {
    const folder = await pickFolder(arg);
    if (!folder) return;
    const setting = await s.backend.peerSetting(folder);
    const next = !setting.on;
    const word = next ? 'on' : 'off';
    if (!setting.projectFileUsable) {
      throw new Error(
        'This workspace is not trusted, so Toolbox ignores its .vscode/settings.json and .toolbox.yaml. Trust the workspace (Workspaces: Manage Workspace Trust), or set toolbox.peerMessaging in your user settings.',
      );
    }
    const home = readHostFacts(process.env).home;
    const settingsFile = join(folder, '.vscode', 'settings.json');
    const projectFile = setting.projectFile ?? join(folder, '.toolbox.yaml');
    const shown = (file: string) => vscode.workspace.asRelativePath(file, false);
    // Writing .toolbox.yaml would change nothing when something above it decides: not offered then.
    const overridden = projectFileOverriddenBy(setting.source);
    const inSettings: vscode.QuickPickItem = {
      label: `$(settings-gear) ${plainText(shown(settingsFile), 'iconLabel')}`,
      description: 'VS Code only',
      detail: plainText(`Sets "toolbox.peerMessaging": ${next} for this folder. The toolbox CLI ignores it.`, 'iconLabel'),
    };
    const inYaml: vscode.QuickPickItem = {
      label: `$(file) ${plainText(tildePath(shown(projectFile), home), 'iconLabel')}`,
      description: 'VS Code and the toolbox CLI',
      detail: plainText(
        setting.source.from === 'setting'
          ? `Sets peer_messaging: ${next} there and removes the folder's toolbox.peerMessaging setting, which would win.`
          : setting.projectFile && dirname(setting.projectFile) !== resolve(folder)
            ? `Sets peer_messaging: ${next} there, for every folder under ${tildePath(dirname(setting.projectFile), home)}.`
            : `Sets peer_messaging: ${next} ${setting.projectFile ? 'in this file' : 'in a new file'}; commit it to share it.`,
        'iconLabel',
      ),
    };
    const picked = await vscode.window.showQuickPick(overridden ? [inSettings] : [inSettings, inYaml], {
      title: plainText(`Turn peer messaging ${word} for this folder`, 'iconLabel'),
      placeHolder: overridden
        ? `Where to write it (${plainText(overridden, 'message')}, which wins over .toolbox.yaml)`
        : 'Where to write it? It applies to the next shell.',
    });
    if (!picked) return;
    const config = vscode.workspace.getConfiguration('toolbox', vscode.Uri.file(folder));
    let written: string;
    if (picked === inYaml) {
      written = await s.backend.writeProjectPeerMessaging(folder, next);
      if (setting.source.from === 'setting') {
        await config.update('peerMessaging', undefined, vscode.ConfigurationTarget.WorkspaceFolder);
        if (!vscode.workspace.workspaceFile) await config.update('peerMessaging', undefined, vscode.ConfigurationTarget.Workspace);
      }
    } else {
      await config.update('peerMessaging', next, vscode.ConfigurationTarget.WorkspaceFolder);
      written = settingsFile;
    }
    s.log.info(`Peer messaging ${word} for ${folder}: written to ${written}; it applies to the next shell.`);
    await s.refresh.refreshNow();
    const open = 'Open File';
    const answer = await vscode.window.showInformationMessage(
      plainText(
        `Peer messaging is now ${word} for this folder (written to ${shown(written)}). It applies to the next shell; ` +
          'a running container with the other setting is marked in the status bar.',
        'message',
      ),
      open,
    );
    if (answer === open) await vscode.window.showTextDocument(vscode.Uri.file(written));
  },
};
