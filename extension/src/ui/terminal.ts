/**
 * A VS Code terminal over one TTY exec in a toolbox container. The exec starts in open(), where
 * VS Code first tells us the terminal's size, so the shell's first frame is drawn at that size.
 */
import { StringDecoder } from 'node:string_decoder';
import * as vscode from 'vscode';
import type { ShellSession } from '../backend/api';
import type { ShellExec } from '../engine/exec';

export interface ShellTerminalOptions {
  /** Container name, for messages. */
  container: string;
  /** Starts the shell's exec at the terminal's size (the backend bound it to the container). */
  start: ShellSession['start'];
  log: vscode.LogOutputChannel;
}

/** How much recent output a terminal keeps for the test API (not the scrollback). */
const TRANSCRIPT_LIMIT = 64 * 1024;

/** The exit line VS Code users know from tasks; shown whenever a shell ends. */
export function exitLine(code: number): string {
  return `[process exited with code ${code}]`;
}

export class ToolboxShellPty implements vscode.Pseudoterminal, vscode.Disposable {
  private readonly writeEmitter = new vscode.EventEmitter<string>();
  private readonly closeEmitter = new vscode.EventEmitter<number | void>();
  readonly onDidWrite = this.writeEmitter.event;
  readonly onDidClose = this.closeEmitter.event;
  private exec: ShellExec | undefined;
  private pending: vscode.TerminalDimensions | undefined;
  /** Keystrokes typed before the exec started; written once it has. */
  private earlyInput: string[] = [];
  private ended = false;
  private closed = false;
  /** Recent output chunks, newest last, about TRANSCRIPT_LIMIT characters in all. */
  private recent: string[] = [];
  private recentLength = 0;
  private readonly decoder = new StringDecoder('utf8');

  constructor(private readonly options: ShellTerminalOptions) {}

  /** Recent output, newest last (tests read the shell's answers from here). */
  get transcript(): string {
    return this.recent.join('').slice(-TRANSCRIPT_LIMIT);
  }

  open(initialDimensions: vscode.TerminalDimensions | undefined): void {
    const cols = initialDimensions?.columns ?? 80;
    const rows = initialDimensions?.rows ?? 24;
    void this.start(cols, rows);
  }

  private async start(cols: number, rows: number): Promise<void> {
    const o = this.options;
    try {
      this.exec = await o.start({ cols, rows });
    } catch (err) {
      const message = `Could not start a shell in ${o.container}: ${(err as Error).message}`;
      o.log.error(message);
      this.show(`\r\n${message}\r\nPress any key to close this terminal.\r\n`);
      this.ended = true;
      return;
    }
    const exec = this.exec;
    exec.stream.on('data', (chunk: Buffer) => this.show(this.decoder.write(chunk)));
    if (this.pending) void exec.resize(this.pending.columns, this.pending.rows).catch(() => undefined);
    for (const data of this.earlyInput) exec.stream.write(data);
    this.earlyInput = [];
    exec.exitCode.then(
      (code) => this.finish(code),
      (err: unknown) => this.containerGone(err),
    );
  }

  private show(text: string): void {
    if (!text) return;
    // Chunks are kept as they come and dropped from the front: no copying on the hot path.
    this.recent.push(text);
    this.recentLength += text.length;
    while (this.recentLength - this.recent[0]!.length >= TRANSCRIPT_LIMIT) this.recentLength -= this.recent.shift()!.length;
    this.writeEmitter.fire(text);
  }

  /** A clean exit closes the terminal like a local shell; any other code stays until a key. */
  private finish(code: number): void {
    this.ended = true;
    this.show(this.decoder.end());
    this.options.log.info(`Shell in ${this.options.container} exited with code ${code}.`);
    if (code === 0) {
      this.end(0);
      return;
    }
    this.show(`\r\n${exitLine(code)}\r\nPress any key to close this terminal.\r\n`);
  }

  /** The container list says the container is gone: end this shell even if its stream lingers. */
  containerStopped(): void {
    if (this.closed) return;
    this.containerGone(new Error('the container is no longer running'));
  }

  /** The container was stopped or removed under the shell: say so and close. */
  private containerGone(err: unknown): void {
    if (this.closed) return;
    this.ended = true;
    this.options.log.info(`Shell in ${this.options.container} ended: ${(err as Error).message}`);
    this.show(`\r\n[${this.options.container} is gone]\r\n`);
    this.end(undefined);
  }

  handleInput(data: string): void {
    if (this.ended) {
      this.end(undefined);
      return;
    }
    // Raw TTY: Ctrl-C (\x03) and Ctrl-D (\x04) reach the shell as the kernel's line discipline expects.
    if (this.exec) this.exec.stream.write(data);
    else this.earlyInput.push(data);
  }

  setDimensions(dimensions: vscode.TerminalDimensions): void {
    if (!this.exec) {
      this.pending = dimensions;
      return;
    }
    void this.exec.resize(dimensions.columns, dimensions.rows).catch(() => undefined);
  }

  private end(code: number | undefined): void {
    if (this.closed) return;
    this.closed = true;
    this.closeEmitter.fire(code);
    this.dispose();
  }

  /** VS Code calls close() when the user kills the terminal: end our exec with it. */
  close(): void {
    this.closed = true;
    this.dispose();
  }

  dispose(): void {
    this.exec?.dispose();
    this.writeEmitter.dispose();
    this.closeEmitter.dispose();
  }
}
