/**
 * A VS Code terminal over one shell in a toolbox container: a session in the container's holder
 * (it outlives this window) or a plain TTY exec. The shell starts in open(), where VS Code first
 * tells us the terminal's size, so its first frame is drawn at that size.
 *
 * Closing the terminal only detaches from a held session here; whether that ends the session
 * (the user closed it) or keeps it (the window is going away) is the launcher's call, which
 * knows why the terminal closed (ui/shells/shellLauncher.ts).
 */
import { StringDecoder } from 'node:string_decoder';
import * as vscode from 'vscode';
import { errorCode } from '../../contract/errors';
import type { StartedShell, TerminalSize } from '../../backend/api';
import { AgentStateTracker, type AgentKind, type AgentStatus } from '../agents/agentState';
import { AgentStreamRecognizer } from '../agents/agentStream';
import { ReplayQueryFilter } from './replayQueryFilter';

export interface ShellTerminalOptions {
  /** Container name, for messages. */
  container: string;
  /** Starts (or, after a reload, hands over the already attached) shell at the terminal's size. */
  start: (size: TerminalSize) => Promise<StartedShell>;
  /** For a held session whose connection dropped: attach again without replaying history. */
  reconnect?: (size: TerminalSize) => Promise<StartedShell>;
  /** A line shown before the shell's first output (e.g. that it will not survive a reload). */
  notice?: string;
  /** The agent the terminal was opened to run, when known (otherwise a shell, until its title says). */
  agent?: AgentKind;
  /** False: no recogniser at all (bench/agentState.ts measures the terminal with and without it). */
  observe?: boolean;
  log: vscode.LogOutputChannel;
}

/** How much recent output a terminal keeps for the test API (not the scrollback). */
const TRANSCRIPT_LIMIT = 64 * 1024;
/** How long a lost connection to a held session is retried before the terminal gives up. */
const RECONNECT_FOR_MS = 60_000;

/** The exit line VS Code users know from tasks; shown whenever a shell ends. */
export function exitLine(code: number): string {
  return `[process exited with code ${code}]`;
}

/** How a terminal's shell ended, for the launcher: by itself, or with its container. */
export type ShellEnd = { kind: 'exited'; code: number } | { kind: 'gone'; reason: string };

export class ToolboxShellPty implements vscode.Pseudoterminal, vscode.Disposable {
  private readonly writeEmitter = new vscode.EventEmitter<string>();
  private readonly closeEmitter = new vscode.EventEmitter<number | void>();
  private readonly startedEmitter = new vscode.EventEmitter<StartedShell>();
  private readonly endedEmitter = new vscode.EventEmitter<ShellEnd>();
  private readonly reopenEmitter = new vscode.EventEmitter<void>();
  readonly onDidWrite = this.writeEmitter.event;
  readonly onDidClose = this.closeEmitter.event;
  /** The shell is running (a held one carries its record). */
  readonly onDidStart = this.startedEmitter.event;
  /** The shell ended by itself or with its container (not when the terminal was closed). */
  readonly onDidEnd = this.endedEmitter.event;
  /** The user asked for a new shell after this one's container went away. */
  readonly onDidAskReopen = this.reopenEmitter.event;
  private readonly agentEmitter = new vscode.EventEmitter<AgentStatus>();
  /** The session's state changed (working, needs you, idle, ended), from its stream and the user's keys. */
  readonly onDidChangeAgent = this.agentEmitter.event;
  private readonly nameEmitter = new vscode.EventEmitter<string>();
  /** VS Code renames the terminal's tab on this (its icon and colour are fixed at creation). */
  readonly onDidChangeName = this.nameEmitter.event;
  private readonly agent: AgentStateTracker;
  /** Reads the signals in the output; it never changes a byte (ui/agents/agentStream.ts). */
  private readonly recognizer: AgentStreamRecognizer;
  /** The recogniser is reading replayed history (see feed()). */
  private replaying = false;
  private exec: StartedShell | undefined;
  private size: TerminalSize = { cols: 80, rows: 24 };
  private sized = false;
  /** Keystrokes typed before the shell started (or while reconnecting); written once it runs. */
  private earlyInput: string[] = [];
  private ended = false;
  private offerReopen = false;
  private closed = false;
  /** Recent output chunks, newest last, about TRANSCRIPT_LIMIT characters in all. */
  private recent: string[] = [];
  private recentLength = 0;
  private decoder = new StringDecoder('utf8');
  private shownFirst!: () => void;
  /**
   * Settles when the shell's first output reached the terminal (for a reattached session: its
   * current screen, which the holder sends first), at that moment's performance.now().
   */
  readonly firstOutput = new Promise<number>((resolve) => (this.shownFirst = () => resolve(performance.now())));
  /** performance.now() when VS Code opened the terminal (called open()). */
  openedAt: number | undefined;

  constructor(private readonly options: ShellTerminalOptions) {
    this.agent = new AgentStateTracker(options.agent, (status) => this.agentEmitter.fire(status));
    this.recognizer = new AgentStreamRecognizer((signal) => this.agent.signal(signal, this.replaying));
  }

  /** What the session is doing now, as far as its stream says. */
  get agentStatus(): AgentStatus {
    return this.agent.current;
  }

  /** When the user last typed here (ms since the epoch; -Infinity when never). */
  get lastInputAt(): number {
    return this.agent.lastInputAt;
  }

  /** The user brought this terminal to the front (ui/shells/shellLauncher.ts): a "needs you" has been seen. */
  focused(): void {
    this.agent.focused();
  }

  /** Renames the terminal's tab (VS Code keeps the name it was created with until this). */
  rename(name: string): void {
    if (!this.closed) this.nameEmitter.fire(name);
  }

  /** Recent output, newest last (tests read the shell's answers from here). */
  get transcript(): string {
    return this.recent.join('').slice(-TRANSCRIPT_LIMIT);
  }

  /** The running shell, once started. */
  get shell(): StartedShell | undefined {
    return this.exec;
  }

  open(initialDimensions: vscode.TerminalDimensions | undefined): void {
    this.openedAt = performance.now();
    if (initialDimensions) this.size = { cols: initialDimensions.columns, rows: initialDimensions.rows };
    if (this.options.notice) this.show(`\x1b[2m${this.options.notice}\x1b[0m\r\n`);
    void this.run(this.options.start);
  }

  private async run(start: (size: TerminalSize) => Promise<StartedShell>): Promise<void> {
    const o = this.options;
    let exec: StartedShell;
    try {
      exec = await start(this.size);
    } catch (err) {
      if (this.closed) return; // discarded or closed while it was starting: nobody to tell
      const message = `Could not start a shell in ${o.container}: ${(err as Error).message}`;
      o.log.error(message);
      this.show(`\r\n${message}\r\nPress any key to close this terminal.\r\n`);
      this.ended = true;
      this.agent.end();
      return;
    }
    if (this.closed) {
      exec.dispose();
      return;
    }
    this.exec = exec;
    exec.stream.once('data', () => this.shownFirst());
    const observe = this.options.observe !== false;
    // A held session attached again starts with its replayed history: read, but not as new (agentState.ts signal()).
    // Its queries to the terminal are dropped from what is shown, so xterm.js never answers them again (replayQueryFilter.ts).
    let replayLeft = exec.replayBytes ?? 0;
    const replay = new ReplayQueryFilter();
    exec.stream.on('data', (chunk: Buffer) => {
      if (replayLeft > 0) {
        const head = chunk.length <= replayLeft ? chunk : chunk.subarray(0, replayLeft);
        replayLeft -= head.length;
        const shown = replay.push(head);
        this.show(this.decoder.write(replayLeft === 0 ? Buffer.concat([shown, replay.end()]) : shown));
        if (observe) {
          this.replaying = true;
          try {
            this.recognizer.feed(head);
          } finally {
            this.replaying = false;
          }
        }
        if (head.length === chunk.length) return;
        chunk = chunk.subarray(head.length);
      }
      this.show(this.decoder.write(chunk));
      if (observe) this.recognizer.feed(chunk);
    });
    // A held session was attached at its recorded size; a plain exec already started at this one.
    if (this.sized || exec.record) void exec.resize(this.size.cols, this.size.rows).catch(() => undefined);
    for (const data of this.earlyInput) exec.stream.write(data);
    this.earlyInput = [];
    this.startedEmitter.fire(exec);
    exec.exitCode.then(
      (code) => this.finish(code),
      (err: unknown) => void this.lost(exec, err as Error),
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
    if (this.closed) return;
    this.ended = true;
    this.agent.end(code);
    this.show(this.decoder.end());
    this.options.log.info(`Shell in ${this.options.container} exited with code ${code}.`);
    this.endedEmitter.fire({ kind: 'exited', code });
    if (code === 0) {
      this.end(0);
      return;
    }
    this.show(`\r\n${exitLine(code)}\r\nPress any key to close this terminal.\r\n`);
  }

  /**
   * The shell's stream ended without an exit code: for a held session the connection dropped
   * (engine restart, sleep), so attach again for a while; otherwise its container went away.
   */
  private async lost(exec: StartedShell, err: Error): Promise<void> {
    if (this.closed || this.ended || exec !== this.exec) return;
    const reconnect = this.options.reconnect;
    if (!exec.record || !reconnect) {
      this.containerGone(err.message);
      return;
    }
    this.exec = undefined;
    this.options.log.warn(`Lost the connection to the shell in ${this.options.container} (${err.message}); reattaching.`);
    this.show(`\r\n\x1b[2m[connection to ${this.options.container} lost; reattaching…]\x1b[0m\r\n`);
    const deadline = Date.now() + RECONNECT_FOR_MS;
    for (let delay = 250; !this.closed; delay = Math.min(delay * 2, 5_000)) {
      try {
        const again = await reconnect(this.size);
        this.decoder = new StringDecoder('utf8');
        this.show(`\x1b[2m[reattached]\x1b[0m\r\n`);
        await this.run(async () => again);
        return;
      } catch (retryErr) {
        const gone = errorCode(retryErr) === 'session-gone';
        if (gone || Date.now() + delay > deadline) {
          this.containerGone((retryErr as Error).message);
          return;
        }
        await new Promise((r) => setTimeout(r, delay));
      }
    }
  }

  /** The container list says the container is gone: end this shell even if its stream lingers. */
  containerStopped(): void {
    if (this.closed || this.ended) return;
    this.containerGone('the container is no longer running');
  }

  /** The user stopped the container (Stop Container, Stop All, a drift fix): close, as a local shell would. */
  stoppedByUser(): void {
    if (this.closed) return;
    this.show(`\r\n[${this.options.container} was stopped]\r\n`);
    this.ended = true;
    this.agent.end();
    this.end(undefined);
  }

  /** The shell's container was stopped or removed: say so once, and offer a new shell. */
  private containerGone(reason: string): void {
    if (this.closed || this.ended) return;
    this.ended = true;
    this.agent.end();
    this.offerReopen = true;
    this.exec?.dispose();
    this.options.log.info(`Shell in ${this.options.container} ended: ${reason}`);
    this.endedEmitter.fire({ kind: 'gone', reason });
    this.show(
      `\r\n[${this.options.container} is gone: ${reason}]\r\nPress Enter to open a new shell, any other key to close this terminal.\r\n`,
    );
  }

  handleInput(data: string): void {
    if (this.ended) {
      if (this.offerReopen && data === '\r') this.reopenEmitter.fire();
      this.end(undefined);
      return;
    }
    this.agent.input(data);
    // Raw TTY: Ctrl-C (\x03) and Ctrl-D (\x04) reach the shell as the kernel's line discipline expects.
    if (this.exec) this.exec.stream.write(data);
    else this.earlyInput.push(data);
  }

  setDimensions(dimensions: vscode.TerminalDimensions): void {
    this.size = { cols: dimensions.columns, rows: dimensions.rows };
    this.sized = true;
    if (this.exec) void this.exec.resize(dimensions.columns, dimensions.rows).catch(() => undefined);
  }

  private end(code: number | undefined): void {
    if (this.closed) return;
    this.closed = true;
    this.closeEmitter.fire(code);
    this.dispose();
  }

  /** Closes the terminal without a word: its shell never came (a reattach found it gone). */
  discard(): void {
    this.end(undefined);
  }

  /** VS Code calls close() when the terminal is closed: detach (the launcher decides the rest). */
  close(): void {
    this.closed = true;
    this.dispose();
  }

  dispose(): void {
    this.exec?.dispose();
    this.writeEmitter.dispose();
    this.closeEmitter.dispose();
    this.startedEmitter.dispose();
    this.endedEmitter.dispose();
    this.reopenEmitter.dispose();
    this.agentEmitter.dispose();
    this.nameEmitter.dispose();
  }
}
