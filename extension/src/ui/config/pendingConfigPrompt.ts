/**
 * What a project's config asks beyond the user's own, left out of the open that found it
 * (backend PreparedShell.pendingConfig; docs/decisions/0041-project-config-narrows-only.md): a
 * notification naming the keys (fixed names, no text from the file) with Review…, Approve for
 * This Folder and Keep Refused. Review… opens a read-only plain-text document (scheme
 * `toolbox-pending`) of what it would add, each value from the file quoted and bounded by the
 * backend. Approve stores the consent for exactly that change (backend.approveProjectConfig)
 * and opens nothing: the folder's next container gets it. Keep Refused is remembered for this
 * window, so the same change is only logged again until the window reloads. Every sink goes
 * through ui/plainText.ts (docs/decisions/0040-outside-text-is-plain-text.md).
 */
import { basename } from 'node:path';
import * as vscode from 'vscode';
import type { ConfigService, PendingProjectConfig } from '../../backend/api';
import { plainText } from '../plainText';

export const PENDING_CONFIG_SCHEME = 'toolbox-pending';

export const PENDING_CHOICES = {
  review: 'Review…',
  approve: 'Approve for This Folder',
  keep: 'Keep Refused',
} as const;

/** "The project's .toolbox.yaml asks …", naming where it was asked and the keys, never a value from the file. */
export function pendingMessage(pending: Pick<PendingProjectConfig, 'sources' | 'keys'>): string {
  const where = pending.sources.length > 0 ? pending.sources.join(' and ') : '.toolbox.yaml';
  const verb = pending.sources.length > 1 ? 'ask' : 'asks';
  return (
    `The project's ${where} ${verb} for more than your own config gives: ${pending.keys.join(', ')}. ` +
    'It was left out of this container; Review… shows what it would add.'
  );
}

/** The review document: plain text, each line from the backend (values quoted and bounded there). */
export function pendingReview(pending: PendingProjectConfig): string {
  return [
    `What the project configuration of ${pending.folder} asks beyond your own config`,
    `(${pending.sources.join(', ')}). Not applied until you approve it for this folder.`,
    'Values from the file are quoted; long ones are cut.',
    '',
    ...pending.items.map((line) => `+ ${line}`),
    '',
    'Approve for This Folder applies exactly this to the next container of the folder; any change',
    'to it asks again. Keep Refused opens the folder without it. The approval is kept in VS Code,',
    'outside the folder, where its container cannot write.',
    '',
  ].join('\n');
}

export class PendingConfigPrompt implements vscode.TextDocumentContentProvider, vscode.Disposable {
  private readonly texts = new Map<string, string>();
  /** Changes being asked about now, or kept refused in this window: `folder\0hash`. */
  private readonly asking = new Set<string>();
  private readonly refused = new Set<string>();
  private readonly registration: vscode.Disposable;

  constructor(
    private readonly backend: Pick<ConfigService, 'approveProjectConfig'>,
    private readonly log: Pick<vscode.LogOutputChannel, 'info' | 'warn'>,
  ) {
    this.registration = vscode.workspace.registerTextDocumentContentProvider(PENDING_CONFIG_SCHEME, this);
  }

  provideTextDocumentContent(uri: vscode.Uri): string {
    return this.texts.get(uri.toString()) ?? 'This review is no longer available; open the shell again to see the change.\n';
  }

  /** Asks about `pending` unless it is being asked already or was kept refused in this window. */
  offer(pending: PendingProjectConfig): void {
    const key = `${pending.folder}\0${pending.hash}`;
    if (this.refused.has(key)) {
      this.log.info(`${basename(pending.folder)}: what the project configuration asks beyond yours stays refused, as you chose.`);
      return;
    }
    if (this.asking.has(key)) return;
    this.asking.add(key);
    this.ask(pending)
      .catch((err: Error) => this.log.warn(`Could not record your answer about ${pending.folder}'s configuration: ${err.message}`))
      .finally(() => this.asking.delete(key));
  }

  private async ask(pending: PendingProjectConfig): Promise<void> {
    let answer = await vscode.window.showWarningMessage(
      plainText(pendingMessage(pending), 'message'),
      PENDING_CHOICES.review,
      PENDING_CHOICES.approve,
      PENDING_CHOICES.keep,
    );
    if (answer === PENDING_CHOICES.review) {
      await this.review(pending);
      answer = await vscode.window.showWarningMessage(
        plainText(
          `Approve what the project configuration of ${basename(pending.folder)} asks for (${pending.keys.join(', ')})?`,
          'message',
        ),
        PENDING_CHOICES.approve,
        PENDING_CHOICES.keep,
      );
    }
    if (answer === PENDING_CHOICES.approve) {
      await this.backend.approveProjectConfig(pending.folder, pending.hash);
      void vscode.window.showInformationMessage(
        plainText(
          `Approved for ${basename(pending.folder)}: its next container gets it. The running one keeps what it has until it is recreated.`,
          'message',
        ),
      );
    } else if (answer === PENDING_CHOICES.keep) {
      this.refused.add(`${pending.folder}\0${pending.hash}`);
      this.log.info(`${basename(pending.folder)}: kept refused what the project configuration asks beyond yours.`);
    }
  }

  private async review(pending: PendingProjectConfig): Promise<void> {
    const uri = vscode.Uri.from({
      scheme: PENDING_CONFIG_SCHEME,
      path: `/Asked by the project of ${basename(pending.folder)}.txt`,
      query: pending.hash,
    });
    this.texts.set(uri.toString(), pendingReview(pending));
    const doc = await vscode.workspace.openTextDocument(uri);
    await vscode.window.showTextDocument(doc, { preview: true });
  }

  dispose(): void {
    this.registration.dispose();
    this.texts.clear();
  }
}
