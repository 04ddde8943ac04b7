/**
 * Show Resolved Configuration's document (issue 15, item 14): a read-only virtual YAML document
 * per folder (scheme `toolbox-config`) whose text the backend renders (config/showConfig.ts):
 * every key, its value, and the layer that set it. It updates when a .toolbox.yaml is saved or a
 * Toolbox setting changes.
 */
import { basename } from 'node:path';
import * as vscode from 'vscode';
import type { ToolboxBackend } from '../../backend/api';

export const RESOLVED_CONFIG_SCHEME = 'toolbox-config';

export class ResolvedConfigDocuments implements vscode.TextDocumentContentProvider, vscode.Disposable {
  private readonly changed = new vscode.EventEmitter<vscode.Uri>();
  readonly onDidChange = this.changed.event;
  private readonly registration: vscode.Disposable;

  constructor(private readonly backend: Pick<ToolboxBackend, 'resolvedConfigText'>) {
    this.registration = vscode.workspace.registerTextDocumentContentProvider(RESOLVED_CONFIG_SCHEME, this);
  }

  /** The folder's document: its name in the tab, the folder's path in the query. */
  uriFor(folder: string): vscode.Uri {
    return vscode.Uri.from({ scheme: RESOLVED_CONFIG_SCHEME, path: `/Resolved configuration of ${basename(folder)}.yaml`, query: folder });
  }

  async provideTextDocumentContent(uri: vscode.Uri): Promise<string> {
    const folder = uri.query;
    try {
      return await this.backend.resolvedConfigText(folder);
    } catch (err) {
      return `# Toolbox could not read the configuration of ${folder}: ${(err as Error).message}\n`;
    }
  }

  /** Opens (or brings up to date and shows) the folder's document. */
  async show(folder: string): Promise<void> {
    const uri = this.uriFor(folder);
    if (vscode.workspace.textDocuments.some((d) => d.uri.toString() === uri.toString())) this.changed.fire(uri);
    const doc = await vscode.workspace.openTextDocument(uri);
    await vscode.window.showTextDocument(doc, { preview: false });
  }

  /** Every open resolved-configuration document reads the configuration again. */
  refreshAll(): void {
    for (const doc of vscode.workspace.textDocuments) if (doc.uri.scheme === RESOLVED_CONFIG_SCHEME) this.changed.fire(doc.uri);
  }

  dispose(): void {
    this.registration.dispose();
    this.changed.dispose();
  }
}
