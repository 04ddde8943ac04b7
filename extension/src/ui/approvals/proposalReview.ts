/**
 * Proposals from containers (bridge/propose.ts; docs/decisions/0044-proposals-for-protected-paths.md):
 * each one announced in a notification, reviewed as a diff of two read-only documents of this
 * provider (the host file as it was read, the proposed text; never a file the container can
 * write), and written only when the user clicks Apply. Text from the container (its name, the
 * path) is shown as plain text (ui/plainText.ts).
 */
import * as vscode from 'vscode';
import type { ApplyOutcome, Proposal, ProposalAnswer } from '../../backend/api/editor';
import { PROPOSAL_LIMITS } from '../../contract/shims';
import { PROPOSAL_SCHEME } from '../../contract/manifest';
import { inline, plainText } from '../plainText';

interface Pending {
  id: string;
  proposal: Proposal;
  /** The host file's text when the review opened (the diff's left side). */
  current?: string;
}

type Side = 'current' | 'proposed';

/** The diff side's URI: toolbox-proposal:/<id>/<side>/<path> (the path gives the editor its language). */
export function proposalUri(id: string, side: Side, path: string): vscode.Uri {
  return vscode.Uri.from({ scheme: PROPOSAL_SCHEME, path: `/${id}/${side}/${path}` });
}

/** The proposal id in a URI of this scheme, or undefined. */
export function proposalIdOf(uri: unknown): string | undefined {
  if (!(uri instanceof vscode.Uri) || uri.scheme !== PROPOSAL_SCHEME) return undefined;
  return /^\/([0-9a-z]+)\//.exec(uri.path)?.[1];
}

export class ProposalReview implements vscode.TextDocumentContentProvider, vscode.Disposable {
  private readonly pending = new Map<string, Pending>();
  private next = 0;
  private readonly changed = new vscode.EventEmitter<vscode.Uri>();
  readonly onDidChange = this.changed.event;
  private readonly registration: vscode.Disposable;

  constructor(private readonly log: vscode.LogOutputChannel) {
    this.registration = vscode.workspace.registerTextDocumentContentProvider(PROPOSAL_SCHEME, this);
  }

  dispose(): void {
    this.registration.dispose();
    this.changed.dispose();
    this.pending.clear();
  }

  /** The bridge's EditorActions.propose: takes a checked proposal, announces it, answers at once. */
  propose(proposal: Proposal): ProposalAnswer {
    const mine = [...this.pending.values()].filter((p) => p.proposal.container === proposal.container);
    if (mine.some((p) => p.proposal.hostPath === proposal.hostPath)) {
      return { accepted: false, reason: 'a proposal for this path is already waiting for the user; wait for their answer.' };
    }
    if (mine.length >= PROPOSAL_LIMITS.pendingPerContainer) {
      return {
        accepted: false,
        reason: `${mine.length} proposals from this container are already waiting for the user; wait for their answers.`,
      };
    }
    this.next += 1;
    const id = this.next.toString(36);
    this.pending.set(id, { id, proposal });
    this.log.info(`Proposal ${id} from ${proposal.container}: ${proposal.path} (${Buffer.byteLength(proposal.content)} bytes).`);
    void this.announce(id);
    return { accepted: true };
  }

  /** The proposals waiting for the user, oldest first. */
  waiting(): Array<{ id: string; container: string; path: string }> {
    return [...this.pending.values()].map((p) => ({ id: p.id, container: p.proposal.container, path: p.proposal.path }));
  }

  /** Asks which waiting proposal to act on; undefined when none waits or the user cancels. */
  async pick(verb: 'Apply' | 'Reject' | 'Review'): Promise<string | undefined> {
    const items = this.waiting().map((p) => ({
      id: p.id,
      label: plainText(p.path, 'label'),
      description: plainText(p.container, 'label'),
    }));
    if (items.length === 0) {
      void vscode.window.showInformationMessage('No proposed changes are waiting.');
      return undefined;
    }
    const picked = await vscode.window.showQuickPick(items, {
      placeHolder:
        verb === 'Apply'
          ? 'Apply which proposed change?'
          : verb === 'Reject'
            ? 'Reject which proposed change?'
            : 'Review which proposed change?',
    });
    return picked?.id;
  }

  provideTextDocumentContent(uri: vscode.Uri): string {
    const m = /^\/([0-9a-z]+)\/(current|proposed)\//.exec(uri.path);
    const entry = m ? this.pending.get(m[1]) : undefined;
    if (entry === undefined) return '';
    return m![2] === 'proposed' ? entry.proposal.content : (entry.current ?? '');
  }

  private async announce(id: string): Promise<void> {
    const entry = this.pending.get(id);
    if (entry === undefined) return;
    const { container, path } = entry.proposal;
    const answer = await vscode.window.showInformationMessage(
      `The agent in ${inline(container)} proposes a change to ${inline(path)}.`,
      { detail: 'Nothing is written unless you apply it.' },
      'Review',
      'Reject',
    );
    if (answer === 'Review') await this.review(id);
    else if (answer === 'Reject') this.reject(id);
    // Dismissed: it stays waiting (Toolbox: Review Proposals… lists it).
  }

  /** Opens the diff (host file as it is now ↔ proposed), then asks Apply or Reject. */
  async review(id: string): Promise<void> {
    const entry = this.pending.get(id);
    if (entry === undefined) return;
    const { container, path } = entry.proposal;
    try {
      entry.current = await entry.proposal.current();
    } catch (err) {
      entry.current = '';
      this.log.warn(`Proposal ${id}: the host file could not be read for the diff: ${(err as Error).message}`);
    }
    const left = proposalUri(id, 'current', path);
    const right = proposalUri(id, 'proposed', path);
    this.changed.fire(left);
    this.changed.fire(right);
    await vscode.commands.executeCommand(
      'vscode.diff',
      left,
      right,
      `${inline(path, 120)} (on this host ↔ proposed by ${inline(container, 60)})`,
      {
        preview: false,
      },
    );
    const answer = await vscode.window.showInformationMessage(
      `Apply the change the agent in ${inline(container)} proposes to ${inline(path)}?`,
      'Apply',
      'Reject',
    );
    if (answer === 'Apply') await this.apply(id);
    else if (answer === 'Reject') this.reject(id);
  }

  /** Writes the proposal to the host file (bridge/propose.ts applyProposal checks the path again). */
  async apply(id: string): Promise<void> {
    const entry = this.pending.get(id);
    if (entry === undefined) return;
    this.pending.delete(id);
    const { container, path } = entry.proposal;
    let outcome: ApplyOutcome;
    try {
      outcome = await entry.proposal.apply();
    } catch (err) {
      this.log.error(`Proposal ${id} (${path}) was not applied: ${(err as Error).message}`);
      void vscode.window.showErrorMessage(plainText((err as Error).message, 'message'));
      return;
    }
    this.log.info(`Proposal ${id} from ${container}: ${path} applied (${outcome}).`);
    await this.closeDiff(id);
    if (outcome === 'replaced-placeholder') {
      void vscode.window.showWarningMessage(
        `Applied: ${inline(path)} was written. It did not exist before, so the container ${inline(container)} is not protected from changing it until it is opened again (Stop Container, then Open Toolbox Shell).`,
      );
    } else {
      void vscode.window.showInformationMessage(`Applied: ${inline(path)} was written.`);
    }
  }

  /** Drops the proposal; nothing is written. */
  reject(id: string): void {
    const entry = this.pending.get(id);
    if (entry === undefined) return;
    this.pending.delete(id);
    this.log.info(`Proposal ${id} from ${entry.proposal.container}: ${entry.proposal.path} rejected.`);
    void this.closeDiff(id);
  }

  private async closeDiff(id: string): Promise<void> {
    const tabs = vscode.window.tabGroups.all.flatMap((g) => g.tabs);
    const mine = tabs.filter((t) => {
      const input = t.input;
      const uri = input instanceof vscode.TabInputTextDiff ? input.modified : input instanceof vscode.TabInputText ? input.uri : undefined;
      return proposalIdOf(uri) === id;
    });
    if (mine.length > 0) await vscode.window.tabGroups.close(mine);
  }
}
