import * as vscode from 'vscode';
import { publishedPortUrl, type PublishedPort } from '../../plan/publish';
import type { ToolboxCommand } from '../commands/toolboxCommand';

/**
 * Open in Browser on a published port in the Workspaces view: the port's address on this host,
 * through asExternalUri so a remote window (SSH, code-server) opens it where the user is.
 */
export const openPortInBrowser: ToolboxCommand = {
  id: 'toolbox.openPortInBrowser',
  run: async (_s, node) => {
    const port = (node as { port?: PublishedPort } | undefined)?.port;
    if (!port || port.protocol !== 'tcp') {
      throw new Error('Open in Browser works on a published TCP port: pick one under a container in the Toolbox view.');
    }
    const local = vscode.Uri.parse(publishedPortUrl(port), true);
    const external = await vscode.env.asExternalUri(local);
    return vscode.env.openExternal(external);
  },
};
