/**
 * The VS Code side of git credential consent (the decision itself is bridge/credentialConsent.ts):
 * the modal question the bridge asks through, and the grant state kept in globalState, keyed by
 * folder, so "Always for this folder" survives reloads and is shared by every window.
 */
import * as vscode from 'vscode';
import { inline, plainText } from '../plainText';
import type { ConsentAnswer, ConsentQuestion } from '../../backend/api/editor';
import { GrantState } from '../../backend/api/editor';

/** Grants and recorded remote hosts, in the extension's globalState. */
export function credentialGrantState(context: vscode.ExtensionContext): GrantState {
  return new GrantState(context.globalState);
}

interface ConsentItem extends vscode.MessageItem {
  answer: ConsentAnswer;
}

export const CONSENT_CHOICES = {
  once: 'Allow once',
  always: 'Always for this folder',
  deny: 'Deny',
} as const;

/** The prompt's first line (also what the UI test looks for). */
export function consentMessage(question: Pick<ConsentQuestion, 'container' | 'host'>): string {
  return plainText(`The container ${question.container} asks for your git credentials for host ${question.host}`, 'message');
}

/**
 * A modal dialog: it names the container, the host and the folder, and answers Deny (the default
 * button), Allow once or Always for this folder; Cancel or Escape dismisses it, which refuses the
 * request without remembering a denial. VS Code cannot close a modal from code, so when
 * the request stopped waiting (`signal`) before the user answered, the answer still counts for
 * later (an Always is saved) and a short note says the request itself was already refused.
 */
export async function askCredentialConsent(question: ConsentQuestion, signal: AbortSignal): Promise<ConsentAnswer | undefined> {
  // Deny first: the default button, so an Enter meant for the terminal never gives credentials
  // away. (Marked as the close affordance it would lose that place; VS Code adds a Cancel button,
  // which refuses too.)
  const items: ConsentItem[] = [
    { title: CONSENT_CHOICES.deny, answer: 'deny' },
    { title: CONSENT_CHOICES.once, answer: 'once' },
    { title: CONSENT_CHOICES.always, answer: 'always' },
  ];
  const seconds = Math.round(question.timeoutMs / 1000);
  const host = inline(question.host);
  const detail = [
    `Folder: ${inline(question.folder)}`,
    '',
    `${host} is not a git remote of this folder, so the container needs your consent to receive the password or token your host's git has for it.`,
    `Allow once answers this request only. Always for this folder remembers ${host} for this folder (revoke it with "Toolbox: Manage Git Credential Grants…").`,
    `Without an answer within ${seconds} s the request is refused.`,
  ].join('\n');
  const picked = await vscode.window.showWarningMessage(
    plainText(consentMessage(question), 'message'),
    { modal: true, detail: plainText(detail, 'detail') },
    ...items,
  );
  const answer = picked?.answer;
  if (signal.aborted && (answer === 'once' || answer === 'always')) {
    const saved = answer === 'always' ? `${question.host} is now allowed for this folder, but the` : 'The';
    void vscode.window.showInformationMessage(
      plainText(
        `${saved} request from ${question.container} had already been refused (no answer within ${seconds} s). Run the git command again.`,
        'message',
      ),
    );
  }
  return answer;
}
