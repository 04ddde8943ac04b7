import * as vscode from 'vscode';
import { namedShellName } from '../../plan/naming';
import { pickFolder } from '../folders';
import type { ToolboxCommand } from './types';

/** `toolbox shell --name <n>`: a container of its own, validated with the planner's name rules. */
export const openNamedShell: ToolboxCommand = {
  id: 'toolbox.openNamedShell',
  run: async (s, arg) => {
    const folder = await pickFolder(arg);
    if (!folder) return undefined;
    const name = await vscode.window.showInputBox({
      title: 'Open Named Toolbox Shell',
      prompt: 'A name for the shell; it gets its own container (toolbox shell --name).',
      placeHolder: 'infra',
      validateInput: (value) => {
        try {
          const container = namedShellName(value, { peer: false }, s.backend.names);
          return { message: `Container ${container}`, severity: vscode.InputBoxValidationSeverity.Info };
        } catch (err) {
          return (err as Error).message;
        }
      },
    });
    if (name === undefined) return undefined;
    const shell = await s.shells.openTerminal({ folder, namedShell: name });
    if (shell) s.refresh.noteShellOpened();
    return shell;
  },
};
