import * as vscode from 'vscode';
import { LOGIN_FORWARD } from '../../contract/constants';
import { LOGIN_PRESETS } from '../../contract/upstream';
import { parseLoginPort, presetPorts } from '../../plan/loginCallback';
import { forwardSentence } from './loginForwardText';
import { plainText } from '../plainText';
import type { TreeNode } from '../views/treeNodes';
import type { ToolboxCommand } from '../commands/toolboxCommand';

/**
 * Forward a Login Port… (issue 29, docs/decisions/0053): for a login that prints its URL instead
 * of opening it (a URL it opens through xdg-open is forwarded by itself). The container: the tree
 * row's, a string argument, or one picked from the running ones; the port: one of upstream's
 * `--oauth` presets by tool name (LOGIN_PRESETS), a port of a preset's range, or any port typed.
 * `{ container, port }` as the argument skips both questions (tests, keybindings).
 */
export const forwardLoginPort: ToolboxCommand = {
  id: 'toolbox.forwardLoginPort',
  run: async (s, arg) => {
    const given = arg as { container?: unknown; port?: unknown } | TreeNode | string | undefined;
    let name =
      typeof given === 'string'
        ? given
        : ((given as TreeNode | undefined)?.container?.name ??
          (typeof (given as { container?: unknown })?.container === 'string' ? (given as { container: string }).container : undefined));
    if (name === undefined) {
      const running = (await s.backend.snapshot()).containers.filter(
        (c) => c.state === 'running' && (c.kind === 'workspace' || c.kind === 'named'),
      );
      if (running.length === 0) {
        void vscode.window.showInformationMessage('No toolbox containers are running: open a Toolbox shell first.');
        return undefined;
      }
      const picked =
        running.length === 1
          ? running[0]
          : await vscode.window
              .showQuickPick(
                running.map((c) => ({ label: plainText(c.name, 'iconLabel'), description: plainText(c.workspace ?? '', 'iconLabel'), c })),
                { placeHolder: 'Which container is the login running in?' },
              )
              .then((p) => p?.c);
      if (picked === undefined) return undefined;
      name = picked.name;
    }
    const container = name;
    let port = typeof (given as { port?: unknown })?.port === 'number' ? (given as { port: number }).port : undefined;
    if (port === undefined) port = await askPort();
    if (port === undefined) return undefined;
    const info = await s.backend.forwardLoginPort(container, port);
    const minutes = Math.round(LOGIN_FORWARD.lifetimeMs / 60_000);
    void vscode.window.showInformationMessage(
      plainText(`${forwardSentence(info)} for up to ${minutes} minutes: open the login URL in the browser now.`, 'message'),
    );
    return info;
  },
};

async function askPort(): Promise<number | undefined> {
  const other = { label: 'Another port…', description: 'the port in the URL the login printed', ports: undefined };
  const rows = [
    ...LOGIN_PRESETS.map((p) => ({
      label: plainText(p.tool, 'iconLabel'),
      description: plainText(`port ${presetPorts(p)}`, 'iconLabel'),
      ports: p.ports,
    })),
    other,
  ];
  const picked = await vscode.window.showQuickPick(rows, {
    placeHolder: 'Which login? (the port its callback listens on inside the container)',
  });
  if (picked === undefined) return undefined;
  if (picked.ports !== undefined && picked.ports[0] === picked.ports[1]) return picked.ports[0];
  const text = await vscode.window.showInputBox({
    prompt: plainText(
      picked.ports === undefined
        ? 'The port of the login callback: the number after "localhost:" in the redirect_uri of the URL the login printed.'
        : `The port the login printed (between ${picked.ports[0]} and ${picked.ports[1]}).`,
      'message',
    ),
    value: picked.ports === undefined ? '' : String(picked.ports[0]),
    validateInput: (value) => {
      const parsed = parseLoginPort(value);
      return 'refusal' in parsed ? parsed.refusal : undefined;
    },
  });
  if (text === undefined) return undefined;
  const parsed = parseLoginPort(text);
  return 'port' in parsed ? parsed.port : undefined;
}
