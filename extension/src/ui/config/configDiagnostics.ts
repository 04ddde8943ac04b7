/**
 * The Problems panel for `.toolbox.yaml` and `~/.toolbox.yaml` (issue 15, item 13): each open
 * one is checked when it opens, when it is saved, and at activation, by the backend's
 * `configProblems` (config/diagnostics.ts, the parser an open uses). The backend bundle loads only
 * when such a file is open, so a window without one pays nothing but the listeners. Works
 * without the YAML extension; with it, `schemas/toolbox.schema.json` adds completion and hover.
 */
import { existsSync } from 'node:fs';
import { basename } from 'node:path';
import * as vscode from 'vscode';
import type { ToolboxBackend } from '../../backend/api';
import type { ConfigProblem } from '../../config/diagnostics';
import { HOST } from '../../contract/upstream';
import { quickFixTitle } from './unknownKeys';

/** The Problems panel's source name and the collection's. */
export const DIAGNOSTIC_SOURCE = 'toolbox';

/** A diagnostic that has a fix: where, what it says (to match the one VS Code hands back), what to write. */
interface Fix {
  range: vscode.Range;
  message: string;
  replacement: string;
}

export function isToolboxConfigFile(uri: vscode.Uri): boolean {
  return uri.scheme === 'file' && (basename(uri.fsPath) === HOST.projectConfig || basename(uri.fsPath) === HOST.userConfig);
}

export class ConfigDiagnostics implements vscode.Disposable {
  private readonly collection = vscode.languages.createDiagnosticCollection(DIAGNOSTIC_SOURCE);
  private readonly disposables: vscode.Disposable[];
  /** The latest check per file: an older answer that arrives late is dropped. */
  private readonly latest = new Map<string, number>();
  /** The fixes of each file's current diagnostics, by URI. */
  private readonly fixes = new Map<string, Fix[]>();
  private checks = 0;

  constructor(
    private readonly backend: Pick<ToolboxBackend, 'configProblems'>,
    private readonly log: vscode.LogOutputChannel,
    /** Called after a config file was saved (the resolved-configuration view refreshes). */
    private readonly onSaved: () => void = () => undefined,
  ) {
    const watcher = vscode.workspace.createFileSystemWatcher(`**/${HOST.projectConfig}`, true, true, false);
    this.disposables = [
      this.collection,
      watcher,
      watcher.onDidDelete((uri) => this.forget(uri)),
      vscode.workspace.onDidDeleteFiles((e) => e.files.forEach((uri) => this.forget(uri))),
      vscode.workspace.onDidOpenTextDocument((doc) => void this.check(doc)),
      // "Did you mean" as a quick fix (issue 26, item 10): the lightbulb or Ctrl+. writes the key it meant.
      vscode.languages.registerCodeActionsProvider(
        { scheme: 'file', pattern: `**/${HOST.projectConfig}` },
        { provideCodeActions: (doc, _range, context) => this.quickFixes(doc, context) },
        { providedCodeActionKinds: [vscode.CodeActionKind.QuickFix] },
      ),
      vscode.workspace.onDidSaveTextDocument((doc) => {
        if (!isToolboxConfigFile(doc.uri)) return;
        void this.check(doc);
        this.onSaved();
      }),
      // A closed file keeps its problems (they are still in it), unless it is gone.
      vscode.workspace.onDidCloseTextDocument((doc) => {
        if (isToolboxConfigFile(doc.uri) && !existsSync(doc.uri.fsPath)) this.forget(doc.uri);
      }),
    ];
    for (const doc of vscode.workspace.textDocuments) void this.check(doc);
  }

  async check(doc: vscode.TextDocument): Promise<void> {
    if (!isToolboxConfigFile(doc.uri)) return;
    const key = doc.uri.toString();
    const id = ++this.checks;
    this.latest.set(key, id);
    try {
      const problems = await this.backend.configProblems(doc.uri.fsPath, doc.getText());
      if (this.latest.get(key) !== id) return;
      const diagnostics = problems.map((p) => toDiagnostic(doc, p));
      this.fixes.set(
        key,
        problems.flatMap((p, i) =>
          p.replacement === undefined
            ? []
            : [{ range: diagnostics[i]!.range, message: diagnostics[i]!.message, replacement: p.replacement }],
        ),
      );
      this.collection.set(doc.uri, diagnostics);
    } catch (err) {
      this.log.warn(`Could not check ${doc.uri.fsPath}: ${(err as Error).message}`);
    }
  }

  /** The quick fixes for the Toolbox diagnostics VS Code asks about: each writes the name it probably meant. */
  quickFixes(doc: vscode.TextDocument, context: vscode.CodeActionContext): vscode.CodeAction[] {
    const fixes = this.fixes.get(doc.uri.toString()) ?? [];
    const actions: vscode.CodeAction[] = [];
    for (const diagnostic of context.diagnostics) {
      if (diagnostic.source !== DIAGNOSTIC_SOURCE) continue;
      const fix = fixes.find((f) => f.range.isEqual(diagnostic.range) && f.message === diagnostic.message);
      if (fix === undefined) continue;
      const action = new vscode.CodeAction(quickFixTitle(fix.replacement), vscode.CodeActionKind.QuickFix);
      action.edit = new vscode.WorkspaceEdit();
      action.edit.replace(doc.uri, fix.range, fix.replacement);
      action.diagnostics = [diagnostic];
      action.isPreferred = true;
      actions.push(action);
    }
    return actions;
  }

  private forget(uri: vscode.Uri): void {
    this.latest.delete(uri.toString());
    this.fixes.delete(uri.toString());
    this.collection.delete(uri);
  }

  dispose(): void {
    for (const d of this.disposables) d.dispose();
  }
}

function toDiagnostic(doc: vscode.TextDocument, p: ConfigProblem): vscode.Diagnostic {
  const line = (n: number) => Math.min(Math.max(n - 1, 0), Math.max(doc.lineCount - 1, 0));
  const start = line(p.span.line);
  const end = line(p.span.endLine);
  const endLength = doc.lineAt(end).text.length;
  const range = new vscode.Range(start, p.span.column - 1, end, Math.min(p.span.endColumn - 1, endLength));
  const severity = p.severity === 'error' ? vscode.DiagnosticSeverity.Error : vscode.DiagnosticSeverity.Warning;
  const diagnostic = new vscode.Diagnostic(range, p.message, severity);
  diagnostic.source = DIAGNOSTIC_SOURCE;
  return diagnostic;
}
