/**
 * The egress policy's questions answered from the editor (issue 30,
 * docs/decisions/0056-egress-through-a-host-proxy.md). The backend holds a connection of a
 * container in `ask` mode to a host no rule allows and calls `ask` here; the question waits in the
 * inbox (ui/egress/egressInbox.ts) while a warning notification says which container wants which
 * host:port, with Allow Once, Allow for This Folder and Deny. The status bar counts the questions
 * waiting (ui/views/statusBars.ts EgressStatusBar) and Show Connection Questions… picks one of them, so a
 * closed notification can still be answered.
 *
 * Never an allow without the user's click: dismissed, aborted (the program gave up, the backend's
 * time ran out) or closed is `deny`. Allow for This Folder writes `host:port` into the folder's
 * entry of toolbox.egressForFolder in the User settings before the connection goes on, and never
 * anything into the folder (its .vscode/ or .toolbox.yaml), which the container can write; when
 * the write fails the error is shown and the connection is allowed once. Every text of a question
 * came from a container and is shown plain (ui/egress/egressText.ts, docs/decisions/0040).
 */
import * as vscode from 'vscode';
import type { EgressChoice, EgressPrompter, EgressQuestion } from '../../backend/api/egress';
import { SETTINGS } from '../../contract/manifest';
import { destination, egressMessage, egressPickItem } from './egressText';
import { settingWithAllow, type EgressInbox } from './egressInbox';
import { inline, plainText } from '../plainText';

/** The notification's buttons, and the answer picks' words. */
export const EGRESS_BUTTONS = {
  once: 'Allow Once',
  folder: 'Allow for This Folder',
  deny: 'Deny',
} as const;

/** Said in the status bar when a click reaches a question that has left. */
export const EGRESS_ALREADY_ANSWERED = 'That connection question was already answered';

export class EgressQuestions implements EgressPrompter, vscode.Disposable {
  /** Questions whose Allow for This Folder is being written: a second click waits for the first. */
  private readonly writing = new Set<string>();

  constructor(
    private readonly inbox: EgressInbox,
    private readonly log: Pick<vscode.LogOutputChannel, 'info' | 'warn' | 'error'>,
  ) {}

  /** EgressPrompter.ask: the connection waits for the user (or the signal, or the window closing). */
  async ask(question: EgressQuestion, signal: AbortSignal): Promise<EgressChoice> {
    const what = `${question.container} wants ${destination(question.host, question.port)} (folder ${question.folder})`;
    const waiting = this.inbox.ask(question, signal);
    if (this.inbox.get(question.id) === question) {
      this.log.info(`Connection question ${question.id}: ${what}`);
      void this.notify(question);
    }
    const choice = await waiting;
    this.log.info(`Connection question ${question.id}: ${choice}.`);
    return choice;
  }

  /**
   * The user's answer from a button or a pick. `folder` writes the rule first; when that fails the
   * error is shown and the connection is allowed once. False (and a status bar note) when the
   * question has left.
   */
  async answer(id: string, choice: EgressChoice): Promise<boolean> {
    const question = this.inbox.get(id);
    if (question === undefined || this.writing.has(id)) {
      if (question === undefined) this.alreadyAnswered(id);
      return false;
    }
    if (choice !== 'folder') return this.settle(id, choice);
    this.writing.add(id);
    try {
      await this.allowForFolder(question);
      return this.settle(id, 'folder');
    } catch (err) {
      const message = err instanceof Error ? err.message : String(err);
      this.log.error(`Could not add ${destination(question.host, question.port)} to ${SETTINGS.egressForFolder}: ${message}`);
      void vscode.window.showErrorMessage(
        plainText(
          `Could not add ${inline(destination(question.host, question.port), 300)} to ${SETTINGS.egressForFolder} in your User settings, so the connection was allowed once: ${inline(message)}`,
          'message',
        ),
      );
      return this.settle(id, 'once');
    } finally {
      this.writing.delete(id);
    }
  }

  /** The answer pick for one question, or first a pick of the questions waiting (oldest first). */
  async showQuestions(id?: string): Promise<void> {
    let question: EgressQuestion | undefined;
    if (id !== undefined) {
      question = this.inbox.get(id);
      if (question === undefined) {
        this.alreadyAnswered(id);
        return;
      }
    } else {
      const pending = this.inbox.pending();
      if (pending.length === 0) {
        void vscode.window.showInformationMessage('No connection questions are waiting.');
        return;
      }
      const picked = await vscode.window.showQuickPick(
        pending.map((q) => ({ ...egressPickItem(q), id: q.id })),
        { placeHolder: 'Answer which connection question? (oldest first)', matchOnDescription: true, matchOnDetail: true },
      );
      if (picked === undefined) return;
      question = this.inbox.get(picked.id);
      if (question === undefined) {
        this.alreadyAnswered(picked.id);
        return;
      }
    }
    type Row = vscode.QuickPickItem & { choice: EgressChoice };
    const rows: Row[] = [
      { label: `$(check) ${EGRESS_BUTTONS.once}`, description: 'this connection; the next one asks again', choice: 'once' },
      {
        label: `$(check-all) ${EGRESS_BUTTONS.folder}`,
        description: plainText(
          `adds ${destination(question.host, question.port)} to ${SETTINGS.egressForFolder} in your User settings`,
          'iconLabel',
        ),
        choice: 'folder',
      },
      { label: `$(close) ${EGRESS_BUTTONS.deny}`, description: 'the program is told the egress policy refused it', choice: 'deny' },
    ];
    const picked = await vscode.window.showQuickPick(rows, {
      title: plainText(egressMessage(question), 'iconLabel'),
      placeHolder: 'Your answer',
    });
    if (picked !== undefined) await this.answer(question.id, picked.choice);
  }

  /** Adds `host:port` to the folder's `allow` in the User settings (never the folder's own files). */
  private async allowForFolder(question: EgressQuestion): Promise<void> {
    const rule = destination(question.host, question.port);
    const config = vscode.workspace.getConfiguration();
    const current = config.inspect<unknown>(SETTINGS.egressForFolder)?.globalValue;
    const { value, unchanged } = settingWithAllow(current, question.folder, rule);
    if (unchanged) return;
    await config.update(SETTINGS.egressForFolder, value, vscode.ConfigurationTarget.Global);
    this.log.info(`Added ${rule} to ${SETTINGS.egressForFolder} for ${question.folder} (User settings).`);
  }

  private settle(id: string, choice: EgressChoice): boolean {
    if (this.inbox.answer(id, choice)) return true;
    this.alreadyAnswered(id);
    return false;
  }

  /** The notification of a new question; dismissed, the connection is denied. */
  private async notify(question: EgressQuestion): Promise<void> {
    const choice = await vscode.window.showWarningMessage(
      plainText(egressMessage(question), 'message'),
      EGRESS_BUTTONS.once,
      EGRESS_BUTTONS.folder,
      EGRESS_BUTTONS.deny,
    );
    if (choice === EGRESS_BUTTONS.once) await this.answer(question.id, 'once');
    else if (choice === EGRESS_BUTTONS.folder) await this.answer(question.id, 'folder');
    else if (choice === EGRESS_BUTTONS.deny) await this.answer(question.id, 'deny');
    // Closed with ×: a deny, unless the question has left already (answered from the pick) or an
    // Allow for This Folder from the pick is being written.
    else if (this.inbox.get(question.id) !== undefined && !this.writing.has(question.id)) this.inbox.answer(question.id, 'deny');
  }

  private alreadyAnswered(id: string): void {
    const how = this.inbox.howLeft(id);
    vscode.window.setStatusBarMessage(how === undefined ? EGRESS_ALREADY_ANSWERED : `${EGRESS_ALREADY_ANSWERED}: ${how}`, 6000);
  }

  dispose(): void {
    // The inbox is the composition root's (it denies every waiting question when disposed).
  }
}
