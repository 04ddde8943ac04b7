/**
 * Run Doctor's document (issue 31, item 3): one read-only virtual document (scheme
 * `toolbox-doctor`) showing the last report the backend rendered (plan/doctor.ts
 * renderDoctorReport). Plain text: a document shows text, it runs nothing, and every outside part
 * sits on a line of its own check (docs/decisions/0040-outside-text-is-plain-text.md).
 */
import * as vscode from 'vscode';
import type { DoctorResult, DoctorService } from '../../backend/api';
import { plainText } from '../plainText';

export const DOCTOR_SCHEME = 'toolbox-doctor';

export class DoctorDocuments implements vscode.TextDocumentContentProvider, vscode.Disposable {
  private readonly changed = new vscode.EventEmitter<vscode.Uri>();
  readonly onDidChange = this.changed.event;
  private readonly registration: vscode.Disposable;
  private report = 'Toolbox Doctor has not run in this window yet: run Toolbox: Run Doctor.\n';

  constructor() {
    this.registration = vscode.workspace.registerTextDocumentContentProvider(DOCTOR_SCHEME, this);
  }

  readonly uri = vscode.Uri.from({ scheme: DOCTOR_SCHEME, path: '/Toolbox Doctor.txt' });

  provideTextDocumentContent(): string {
    return this.report;
  }

  /** Shows `report` (opening the document, or bringing it up to date). */
  async show(report: string): Promise<void> {
    this.report = report;
    if (vscode.workspace.textDocuments.some((d) => d.uri.toString() === this.uri.toString())) this.changed.fire(this.uri);
    const doc = await vscode.workspace.openTextDocument(this.uri);
    await vscode.window.showTextDocument(doc, { preview: false });
  }

  dispose(): void {
    this.registration.dispose();
    this.changed.dispose();
  }
}

/** Runs the doctor under a progress notification (each probe is bounded by the backend: it ends). */
export function doctorWithProgress(backend: DoctorService, folders: readonly string[], title: string): Thenable<DoctorResult> {
  return vscode.window.withProgress(
    { location: vscode.ProgressLocation.Notification, title: plainText(title, 'message'), cancellable: false },
    (progress) =>
      backend.doctor({
        folders,
        vscodeVersion: vscode.version,
        onStep: (message) => progress.report({ message: plainText(message, 'message') }),
      }),
  );
}
