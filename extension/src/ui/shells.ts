/**
 * Opening a toolbox shell: plan the folder's container, make it exist (with a cancellable
 * progress notification, build log to the output channel), then attach a terminal to it.
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

  private async prepare(request: ShellRequest) {
    const prepared = await this.backend.planShell(request);
    const { resolved, plan, warnings } = prepared;
    for (const problem of prepared.problems) {
      if (problem.error) throw new Error(problem.text);
      this.log.warn(problem.text);
    }
    if (resolved.projectFileIgnored) {
      void vscode.window.showWarningMessage(
        'Toolbox is in limited mode: this workspace is not trusted, so its .toolbox.yaml was ignored. Trust the workspace to use it.',
      );
    }
    for (const w of warnings) this.log.warn(w);
    const opened = await vscode.window.withProgress(
      { location: vscode.ProgressLocation.Notification, title: `Toolbox: ${plan.name}`, cancellable: true },
      async (progress, token) => {
        const abort = new AbortController();
        const sub = token.onCancellationRequested(() => abort.abort());
        try {
          return await this.backend.openSession(
            prepared,
            {
              step: (message) => {
                progress.report({ message });
              },
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
    if (!opened) return undefined;
    this.log.info(`${opened.action}: ${opened.name} (${opened.id.slice(0, 12)}) for ${request.folder}`);
    for (const w of opened.warnings) {
      this.log.warn(w);
      void vscode.window.showWarningMessage(w);
    }
    const pty = new ToolboxShellPty({
      container: opened.name,
      cmd: plan.shellCmd,
      user: plan.create.User,
      workdir: plan.create.WorkingDir,
      env: ['TERM=xterm-256color', 'COLORTERM=truecolor'],
      start: await this.backend.shellStarter(opened.id),
      log: this.log,
    });
    const title = request.namedShell ? `Toolbox: ${request.namedShell}` : `Toolbox: ${plan.name}`;
    return { title, pty, info: { container: opened.name, containerId: opened.id, folder: request.folder } };
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
