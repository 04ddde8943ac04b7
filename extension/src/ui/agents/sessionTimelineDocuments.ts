/**
 * Show Session Timeline's document (issue 28): a read-only virtual document per session
 * (scheme `toolbox-timeline`) listing what its agent did, `HH:MM:SS  kind  text`, then the usage of
 * each session of its container and the container's total (ui/agents/agentTimeline.ts timelineDocument).
 * Open documents follow new entries. Plain text: a document shows text, it runs nothing, and
 * every entry is one line (docs/decisions/0040-outside-text-is-plain-text.md).
 */
import * as vscode from 'vscode';
import { timelineDocument, type AgentTimeline } from './agentTimeline';

export const TIMELINE_SCHEME = 'toolbox-timeline';

export class SessionTimelineDocuments implements vscode.TextDocumentContentProvider, vscode.Disposable {
  private readonly changed = new vscode.EventEmitter<vscode.Uri>();
  readonly onDidChange = this.changed.event;
  private readonly registration: vscode.Disposable;

  constructor(private readonly timeline: AgentTimeline) {
    this.registration = vscode.workspace.registerTextDocumentContentProvider(TIMELINE_SCHEME, this);
  }

  /** The session's document: the session in the tab's name, the container and session in the query. */
  uriFor(container: string, sessionId: string): vscode.Uri {
    const query = new URLSearchParams({ container, session: sessionId }).toString();
    const name = `Timeline ${sessionId.replace(/[^A-Za-z0-9._-]/g, '_').slice(0, 60)}.txt`;
    return vscode.Uri.from({ scheme: TIMELINE_SCHEME, path: `/${container.replace(/[^A-Za-z0-9._-]/g, '_')}/${name}`, query });
  }

  provideTextDocumentContent(uri: vscode.Uri): string {
    const query = new URLSearchParams(uri.query);
    const container = query.get('container');
    const session = query.get('session');
    if (container === null || session === null) return 'Not a Toolbox session timeline.\n';
    return timelineDocument(this.timeline, container, session);
  }

  /** Opens (or brings up to date and shows) a session's document. */
  async show(container: string, sessionId: string): Promise<void> {
    const uri = this.uriFor(container, sessionId);
    if (vscode.workspace.textDocuments.some((d) => d.uri.toString() === uri.toString())) this.changed.fire(uri);
    const doc = await vscode.workspace.openTextDocument(uri);
    await vscode.window.showTextDocument(doc, { preview: false });
  }

  /** Every open timeline document reads the timeline again (new entries arrived). */
  refreshAll(): void {
    for (const doc of vscode.workspace.textDocuments) if (doc.uri.scheme === TIMELINE_SCHEME) this.changed.fire(doc.uri);
  }

  dispose(): void {
    this.registration.dispose();
    this.changed.dispose();
  }
}
