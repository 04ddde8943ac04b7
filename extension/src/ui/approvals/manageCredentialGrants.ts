import * as vscode from 'vscode';
import { plainText } from '../plainText';
import type { ToolboxCommand } from '../commands/toolboxCommand';

interface GrantItem extends vscode.QuickPickItem {
  folder?: string;
  host?: string;
}

/**
 * Lists, per folder, the hosts whose git credentials its containers get without asking (the
 * folder's remote hosts recorded when it was first opened, and the "Always for this folder"
 * grants) and revokes the ones picked: the next request for such a host asks again.
 */
export const manageCredentialGrants: ToolboxCommand = {
  id: 'toolbox.manageCredentialGrants',
  run: async (s) => {
    const items: GrantItem[] = [];
    for (const entry of s.credentialGrants.list()) {
      const row = (host: string, description: string): GrantItem => ({
        label: plainText(host, 'iconLabel'),
        description: plainText(description, 'iconLabel'),
        folder: entry.folder,
        host,
      });
      const rows: GrantItem[] = [
        ...entry.granted.map((host) => row(host, 'allowed by you')),
        ...(entry.remoteHosts ?? []).filter((host) => !entry.granted.includes(host)).map((host) => row(host, 'a git remote of the folder')),
      ];
      if (rows.length === 0) continue;
      items.push({ label: plainText(entry.folder, 'iconLabel'), kind: vscode.QuickPickItemKind.Separator }, ...rows);
    }
    if (items.length === 0) {
      void vscode.window.showInformationMessage(
        'Toolbox: no folder has git credential grants. Containers get credentials without asking only for the git remotes a folder had when it was first opened, and for hosts you allow with "Always for this folder".',
      );
      return;
    }
    const picked = await vscode.window.showQuickPick(items, {
      title: 'Git credentials toolbox containers get without asking',
      placeHolder: 'Select the hosts to revoke, then press Enter',
      canPickMany: true,
      matchOnDescription: true,
    });
    if (!picked || picked.length === 0) return;
    for (const item of picked) {
      if (item.folder === undefined || item.host === undefined) continue;
      await s.credentialGrants.revoke(item.folder, item.host);
      s.log.info(`git credentials: revoked ${item.host} for folder ${item.folder}; the next request for it asks again.`);
    }
    void vscode.window.showInformationMessage(
      plainText(
        `Toolbox: revoked ${picked.map((i) => i.host).join(', ')}. Containers will ask before they get credentials for ${picked.length === 1 ? 'it' : 'them'}.`,
        'message',
      ),
    );
  },
};
