import * as vscode from 'vscode';
import { pickFolder } from '../folders';
import type { ShellLauncher } from './shellLauncher';

/** The terminal profile `toolbox.shell` (the terminal's + menu): a Toolbox shell for the folder picked. */
export function shellProfileProvider(shells: ShellLauncher): vscode.TerminalProfileProvider {
  return {
    provideTerminalProfile: async () => {
      const folder = await pickFolder();
      if (!folder) return undefined;
      const options = await shells.profileOptions({ folder });
      return options ? new vscode.TerminalProfile(options) : undefined;
    },
  };
}
