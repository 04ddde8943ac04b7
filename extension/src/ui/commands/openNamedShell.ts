import * as vscode from 'vscode';
import { namedShellName } from '../../plan/naming';
import { pickFolder } from '../folders';
import type { ToolboxCommand } from './types';

/**
 * `toolbox shell --name <n>`: a container of its own, validated with the planner's name rules.
 * A second argument (a name) skips the input box, for keybindings and automation.
 */
export const openNamedShell: ToolboxCommand = {
  id: 'toolbox.openNamedShell',
  run: async (s, arg, presetName) => {
    const folder = await pickFolder(arg);
    if (!folder) return undefined;
    const peer = await s.backend.peerWanted(folder);
    const containerFor = (value: string) => namedShellName(value, { peer }, s.backend.names);
    let name: string | undefined;
    if (typeof presetName === 'string') {
      containerFor(presetName); // throws the planner's message for a name it refuses
      name = presetName;
    } else {
      name = await vscode.window.showInputBox({
        title: 'Open Toolbox Shell by Name',
        prompt: 'A name for the shell; it gets its own container (toolbox shell --name).',
        placeHolder: 'infra',
        validateInput: (value) => {
          try {
            return { message: `Container ${containerFor(value)}`, severity: vscode.InputBoxValidationSeverity.Info };
          } catch (err) {
            return (err as Error).message;
          }
        },
      });
    }
    if (name === undefined) return undefined;
    const shell = await s.shells.openTerminal({ folder, namedShell: name });
    if (shell) s.refresh.noteShellOpened();
    return shell;
  },
};
