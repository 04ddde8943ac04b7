/**
 * Open Connection Log's document (issue 30): a read-only virtual document per container (scheme
 * `toolbox-egress`) listing every connection this window's egress proxy saw for it, one line each
 * (ui/egress/egressText.ts egressLogDocument). Open documents follow new connections. Plain text: a
 * document shows text, it runs nothing, and every outside part sits on its entry's line
 * (docs/decisions/0040-outside-text-is-plain-text.md).
 */
import * as vscode from 'vscode';
import type { EgressService } from '../../backend/api';
import { egressLogDocument } from './egressText';

export const EGRESS_LOG_SCHEME = 'toolbox-egress';

export class EgressLogDocuments implements vscode.TextDocumentContentProvider, vscode.Disposable {
  private readonly changed = new vscode.EventEmitter<vscode.Uri>();
  readonly onDidChange = this.changed.event;
  private readonly registration: vscode.Disposable;

  constructor(private readonly backend: Pick<EgressService, 'egressLog'>) {
    this.registration = vscode.workspace.registerTextDocumentContentProvider(EGRESS_LOG_SCHEME, this);
  }

  /** The container's document: its name in the tab's title, the name itself in the query. */
  uriFor(container: string): vscode.Uri {
    const query = new URLSearchParams({ container }).toString();
    return vscode.Uri.from({ scheme: EGRESS_LOG_SCHEME, path: `/Connections ${container.replace(/[^A-Za-z0-9._-]/g, '_')}.txt`, query });
  }

  provideTextDocumentContent(uri: vscode.Uri): string {
    const container = new URLSearchParams(uri.query).get('container');
    if (container === null) return 'Not a Toolbox connection log.\n';
    return egressLogDocument(container, this.backend.egressLog(container));
  }

  /** Opens (or brings up to date and shows) a container's document. */
  async show(container: string): Promise<void> {
    const uri = this.uriFor(container);
    if (vscode.workspace.textDocuments.some((d) => d.uri.toString() === uri.toString())) this.changed.fire(uri);
    const doc = await vscode.workspace.openTextDocument(uri);
    await vscode.window.showTextDocument(doc, { preview: false });
  }

  /** Every open log document reads the log again (new connections arrived). */
  refreshAll(): void {
    for (const doc of vscode.workspace.textDocuments) if (doc.uri.scheme === EGRESS_LOG_SCHEME) this.changed.fire(doc.uri);
  }

  dispose(): void {
    this.registration.dispose();
    this.changed.dispose();
  }
}
