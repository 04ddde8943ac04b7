import * as vscode from 'vscode';
import { plainText } from '../plainText';

/**
 * A modal confirmation for something that cannot be undone (stopping a container ends its
 * shells). VS Code makes the first button that is not the close affordance the default, so the
 * safe button comes first: Enter keeps things as they are, and Escape is the built-in Cancel.
 * True only when the user picked `action`.
 */
export async function confirmDestructive(message: string, detail: string, action: string, keep = 'Keep Running'): Promise<boolean> {
  const keepItem: vscode.MessageItem = { title: keep };
  const actionItem: vscode.MessageItem = { title: action };
  const answer = await vscode.window.showWarningMessage(
    plainText(message, 'message'),
    { modal: true, detail: plainText(detail, 'detail') },
    keepItem,
    actionItem,
  );
  return answer === actionItem;
}

/** `{ confirmed: true }` as a command argument skips the confirmation (keybindings, automation, tests). */
export function isConfirmed(options: unknown): boolean {
  return (options as { confirmed?: unknown } | undefined)?.confirmed === true;
}
