import * as vscode from 'vscode';
import { describePortSpec, parsePublishSpecs, splitPublishList } from '../../plan/publish';
import { pickFolder } from '../folders';
import type { ToolboxCommand } from '../commands/toolboxCommand';

/** Input box text: upstream's own examples (its `-p` help). */
const PLACEHOLDER = '8080:8080, 127.0.0.1:9229:9229, 5353/udp';

/**
 * `toolbox shell -p …`: opens the folder's container publishing these ports, each written as for
 * `docker run -p` and checked as the user types with the parser the backend uses. As upstream,
 * the ports do not change which container opens: a new container publishes them, and a running
 * one that does not is reported (drift), with the fix. A second argument (a list, or the text)
 * skips the input box, for keybindings and automation.
 */
export const openShellWithPorts: ToolboxCommand = {
  id: 'toolbox.openShellWithPorts',
  run: async (s, arg, preset) => {
    const folder = await pickFolder(arg);
    if (!folder) return undefined;
    let specs: string[];
    if (Array.isArray(preset) || typeof preset === 'string') {
      specs = Array.isArray(preset) ? preset.map(String) : splitPublishList(preset);
      parsePublishSpecs(specs); // throws upstream's message for a spec it refuses
    } else {
      const text = await vscode.window.showInputBox({
        title: 'Open Toolbox Shell with Ports',
        prompt:
          'Ports to publish, as for docker run -p: [host IP:]host port:container port[/udp], separated by commas. ' +
          'Without a host IP a port is reachable from this machine only (127.0.0.1).',
        placeHolder: PLACEHOLDER,
        ignoreFocusOut: true,
        validateInput: validatePorts,
      });
      if (text === undefined) return undefined;
      specs = splitPublishList(text);
    }
    if (specs.length === 0) return undefined;
    const shell = await s.shells.openTerminal({ folder, ports: specs });
    if (shell) s.refresh.noteShellOpened();
    return shell;
  },
};

/** Live validation: upstream's refusal, or what will be published. */
export function validatePorts(text: string): string | vscode.InputBoxValidationMessage | undefined {
  const specs = splitPublishList(text);
  if (specs.length === 0) return 'Type at least one port, such as 8080:8080.';
  try {
    const mappings = parsePublishSpecs(specs);
    const shown = mappings.slice(0, 4).map(describePortSpec).join(', ');
    const more = mappings.length > 4 ? ` and ${mappings.length - 4} more` : '';
    return { message: `Publishes ${shown}${more}.`, severity: vscode.InputBoxValidationSeverity.Info };
  } catch (err) {
    return `${capitalize((err as Error).message)}. Write a port as 8080, 8080:80 or 127.0.0.1:8080:80, optionally with /udp.`;
  }
}

function capitalize(s: string): string {
  return s.charAt(0).toUpperCase() + s.slice(1);
}
