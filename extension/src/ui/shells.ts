/**
 * Opening a toolbox shell: one call prepares it (config read, container named), then its open()
 * runs under a cancellable progress notification (build log to the output channel) and hands
 * back what the terminal needs.
 */
import * as vscode from 'vscode';
import type { ToolboxBackend, ShellRequest } from '../backend/api';
import { ToolboxShellPty } from './terminal';

export interface OpenedShell {
  container: string;
  containerId: string;
  folder: string;
  terminal: vscode.Terminal;
  pty: ToolboxShellPty;
  /** When the shell was opened (ms since the epoch). */
  openedAt: number;
}

export class ShellLauncher implements vscode.Disposable {
  private readonly opened: OpenedShell[] = [];
  private readonly changed = new vscode.EventEmitter<void>();
  /** Fires after a container was opened (views and the drift check refresh on it). */
  readonly onDidOpen = this.changed.event;
  private readonly subscriptions: vscode.Disposable[] = [];

  constructor(
    private readonly backend: ToolboxBackend,
    private readonly log: vscode.LogOutputChannel,
  ) {
    this.subscriptions.push(
      vscode.window.onDidCloseTerminal((t) => {
        const i = this.opened.findIndex((o) => o.terminal === t);
        if (i >= 0) this.opened.splice(i, 1);
      }),
    );
  }

  get shells(): readonly OpenedShell[] {
    return this.opened;
  }

  /** Plans and opens the container, then a terminal; undefined when cancelled. */
  async openTerminal(request: ShellRequest): Promise<OpenedShell | undefined> {
    const prepared = await this.prepare(request);
    if (!prepared) return undefined;
    const terminal = vscode.window.createTerminal({
      name: prepared.title,
      pty: prepared.pty,
      iconPath: new vscode.ThemeIcon('package'),
    });
    terminal.show();
    const shell: OpenedShell = { ...prepared.info, terminal, pty: prepared.pty, openedAt: Date.now() };
    this.opened.push(shell);
    this.changed.fire();
    return shell;
  }

  /** For the terminal profile dropdown: VS Code creates the terminal from our options. */
  async profileOptions(request: ShellRequest): Promise<vscode.ExtensionTerminalOptions | undefined> {
    const prepared = await this.prepare(request);
    if (!prepared) return undefined;
    this.changed.fire();
    return { name: prepared.title, pty: prepared.pty, iconPath: new vscode.ThemeIcon('package') };
  }

  /** The one round trip into the backend: prepare (config, name), then open with progress. */
  private async prepare(request: ShellRequest) {
    const prepared = await this.backend.prepareShell(request);
    for (const w of prepared.warnings) this.log.warn(w);
    if (prepared.projectFileIgnored) {
      void vscode.window.showWarningMessage(
        'Toolbox is in limited mode: this workspace is not trusted, so its .toolbox.yaml was ignored. Trust the workspace to use it.',
      );
    }
    const session = await vscode.window.withProgress(
      { location: vscode.ProgressLocation.Notification, title: `Toolbox: ${prepared.container}`, cancellable: true },
      async (progress, token) => {
        const abort = new AbortController();
        const sub = token.onCancellationRequested(() => abort.abort());
        try {
          return await prepared.open(
            {
              step: (message) => progress.report({ message }),
              log: (text) => {
                for (const line of text.split('\n')) if (line.trim()) this.log.info(line.trimEnd());
              },
            },
            abort.signal,
          );
        } catch (err) {
          if (abort.signal.aborted) return undefined;
          throw err;
        } finally {
          sub.dispose();
        }
      },
    );
    if (!session) return undefined;
    this.log.info(`${session.action}: ${session.name} (${session.id.slice(0, 12)}) for ${request.folder}`);
    for (const w of session.warnings) {
      this.log.warn(w);
      void vscode.window.showWarningMessage(w);
    }
    const pty = new ToolboxShellPty({ container: session.name, start: session.start, log: this.log });
    return { title: prepared.title, pty, info: { container: session.name, containerId: session.id, folder: request.folder } };
  }

  /**
   * Ends the terminals whose container is no longer running. Docker does not always close an
   * exec's stream when its container stops (a container in a shared PID namespace keeps it
   * open), so the container list, not the stream, decides. Only shells opened before the list
   * was taken are judged by it.
   */
  closeGone(running: ReadonlySet<string>, takenAt: number): void {
    for (const shell of this.opened) {
      if (shell.openedAt < takenAt && !running.has(shell.containerId)) shell.pty.containerStopped();
    }
  }

  dispose(): void {
    this.changed.dispose();
    for (const s of this.subscriptions) s.dispose();
  }
}
