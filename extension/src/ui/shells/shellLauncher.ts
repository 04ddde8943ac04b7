/**
 * Opening a toolbox shell: one call prepares it (config read, container named), then its open()
 * runs under a cancellable progress notification (build log to the output channel) and hands
 * back what the terminal needs.
 *
 * Held shells (the container's session holder keeps them) are recorded in the window's workspace
 * state: when the window comes back (reload, restart, extension host crash) the launcher attaches
 * to each again and recreates its terminal, same name and order. Closing a terminal by hand ends
 * its session; the window going away only detaches.
 */
import * as vscode from 'vscode';
import { errorCode } from '../../contract/errors';
import { COMMAND_LABELS } from '../../contract/manifest';
import { plainText } from '../plainText';
import type {
  AgentWorktreeRequest,
  PreparedShell,
  SessionRecord,
  ShellRequest,
  ShellSession,
  StartedShell,
  ShellService,
  WorktreeService,
} from '../../backend/api';

/** Makes the prepared shell and its session under the launcher's progress (New Agent Worktree). */
type Producer = (
  progress: vscode.Progress<{ message?: string }>,
  token: vscode.CancellationToken,
) => Promise<{ prepared: PreparedShell; session: ShellSession; folder?: string } | undefined>;
import { basename } from 'node:path';
import type { PendingConfigPrompt } from '../config/pendingConfigPrompt';
import type { UnknownKeyNotice } from '../config/unknownKeyNotice';
import { numberedTitle } from './numberedTitle';
import { withPhaseProgress } from '../progress';
import type { SessionStore } from './sessionStore';
import { ToolboxShellPty, type ShellEnd } from './toolboxShellPty';
import { terminalName, type AgentKind, type AgentStatus } from '../agents/agentState';

export interface OpenedShell {
  container: string;
  containerId: string;
  folder: string;
  /** Undefined until VS Code has created the terminal (profile terminals are made by VS Code). */
  terminal: vscode.Terminal;
  pty: ToolboxShellPty;
  /** When the shell was opened (ms since the epoch). */
  openedAt: number;
  /** The engine endpoint its container lives on; absent for a record from an older version. */
  engine?: string;
  /** The held session behind the terminal, once started; absent for a plain exec. */
  record?: SessionRecord;
}

interface Tracked extends Omit<OpenedShell, 'terminal'> {
  /** This window's own id for the terminal (the tree's rows and the nudge's Focus name it). */
  key: number;
  terminal?: vscode.Terminal;
  ended: boolean;
  /** The terminal's name (numbered when this window has another shell of the same name). */
  title?: string;
  /** Opened here to run an agent (Start Claude Code / Codex, New Agent Worktree), not reattached. */
  launching?: boolean;
  /** When that agent's session started (ms since the epoch). */
  launchedAt?: number;
  /** The host folders mounted as the agents' homes in its container. */
  agentHomes?: { claude?: string; codex?: string };
}

/** A Toolbox terminal of this window and what its session is doing (the tree, the nudge, the status bar). */
export interface AgentTerminal {
  key: number;
  container: string;
  /** The terminal's name without the state the tab adds. */
  title: string;
  /** The held session behind it, when there is one (its row in the tree is that shell's). */
  sessionId?: string;
  status: AgentStatus;
  terminal?: vscode.Terminal;
  /** When the agent this window launched in it started (ms since the epoch); absent for a shell or a reattached session. */
  launchedAt?: number;
  /** The host folder mounted as that agent's home, when one is. */
  agentHome?: string;
}

export interface ReattachOutcome {
  reattached: number;
  /** Sessions that could not come back, one sentence each (said once; their records are dropped). */
  gone: string[];
  /** Sessions that could not be reached now (the engine is down): their records are kept. */
  failed: string[];
  /**
   * When the last reattached terminal was opened by VS Code and showed its first output (its
   * screen), as performance.now(); undefined when one showed nothing within REATTACH_SCREEN_WAIT_MS.
   */
  screensShown: Promise<{ opened: number; shown: number } | undefined>;
}

/** How long reattachAll's screensShown waits for every terminal's first output. */
const REATTACH_SCREEN_WAIT_MS = 10_000;

export class ShellLauncher implements vscode.Disposable {
  private readonly tracked: Tracked[] = [];
  private readonly changed = new vscode.EventEmitter<void>();
  /** Fires after a container was opened or a shell started or ended (the views refresh on it). */
  readonly onDidOpen = this.changed.event;
  private readonly agentChanged = new vscode.EventEmitter<AgentTerminal>();
  /** Fires when a terminal's session changes state (working, needs you, idle, ended). */
  readonly onDidChangeAgent = this.agentChanged.event;
  private nextKey = 1;
  /** The engine endpoint of the last container list (closeGone); undefined before the first. */
  private endpoint: string | undefined;
  private readonly subscriptions: vscode.Disposable[] = [];
  /** Containers whose shells were said not to survive a reload, in this window. */
  private readonly plainNoticeShown = new Set<string>();

  constructor(
    private readonly backend: ShellService & Pick<WorktreeService, 'createAgentWorktree'>,
    private readonly store: SessionStore,
    private readonly log: vscode.LogOutputChannel,
    /** Asks about what a project config wanted beyond the user's own and did not get (ui/config/pendingConfigPrompt.ts). */
    private readonly pendingConfig?: Pick<PendingConfigPrompt, 'offer'>,
    /** Says once which config keys mean nothing (a typo keeps the default; ui/config/unknownKeyNotice.ts). */
    private readonly unknownKeys?: Pick<UnknownKeyNotice, 'offer'>,
  ) {
    this.subscriptions.push(
      vscode.window.onDidOpenTerminal((t) => {
        const pty = (t.creationOptions as vscode.ExtensionTerminalOptions).pty;
        const entry = this.tracked.find((o) => o.pty === pty);
        if (entry && !entry.terminal) entry.terminal = t;
      }),
      vscode.window.onDidCloseTerminal((t) => this.terminalClosed(t)),
    );
  }

  get shells(): readonly OpenedShell[] {
    return this.tracked.filter((o): o is Tracked & OpenedShell => o.terminal !== undefined);
  }

  /** Every terminal of this window with its session's state, in the order they were opened. */
  agentTerminals(): AgentTerminal[] {
    return this.tracked.map((o) => this.agentTerminal(o));
  }

  private agentTerminal(o: Tracked): AgentTerminal {
    const status = o.pty.agentStatus;
    const home = o.agentHomes?.[status.agent === 'codex' ? 'codex' : 'claude'];
    return {
      key: o.key,
      container: o.container,
      title: o.title ?? o.container,
      ...(o.record ? { sessionId: o.record.sessionId } : {}),
      status,
      ...(o.terminal ? { terminal: o.terminal } : {}),
      ...(o.launchedAt !== undefined ? { launchedAt: o.launchedAt } : {}),
      ...(home ? { agentHome: home } : {}),
    };
  }

  /** The user brought a terminal to the front: its session's "needs you" has been seen (ui/agents/agentNudge.ts decides when). */
  focused(terminal: vscode.Terminal): void {
    this.tracked.find((o) => o.terminal === terminal)?.pty.focused();
  }

  /** This window's key for a Toolbox terminal, or undefined for any other terminal. */
  keyOf(terminal: vscode.Terminal): number | undefined {
    return this.tracked.find((o) => o.terminal === terminal)?.key;
  }

  /** When the user last typed into that terminal (ms since the epoch; -Infinity when never). */
  lastInputAt(key: number): number {
    return this.tracked.find((o) => o.key === key)?.pty.lastInputAt ?? Number.NEGATIVE_INFINITY;
  }

  /** Shows and focuses a terminal by its key (what it asked for is then seen); false when it is gone. */
  focus(key: number): boolean {
    const entry = this.tracked.find((o) => o.key === key);
    entry?.terminal?.show(false);
    // Already the active terminal (the user was in an editor), VS Code fires no change: seen here.
    if (entry?.terminal) entry.pty.focused();
    return entry?.terminal !== undefined;
  }

  /**
   * This window's terminal of a held session (an agent's question names its container and the
   * session it runs in), else the first open terminal of that container; undefined when none.
   */
  terminalFor(container: string, sessionId?: string): number | undefined {
    const open = this.tracked.filter((o) => o.container === container && o.terminal !== undefined && !o.ended);
    return (open.find((o) => sessionId !== undefined && o.record?.sessionId === sessionId) ?? open[0])?.key;
  }

  /** Plans and opens the container, then a terminal; undefined when cancelled. */
  async openTerminal(request: ShellRequest): Promise<OpenedShell | undefined> {
    const prepared = await this.prepare(request);
    if (!prepared) return undefined;
    const terminal = vscode.window.createTerminal({
      name: plainText(prepared.title, 'iconLabel'),
      pty: prepared.pty,
      iconPath: new vscode.ThemeIcon('package'),
    });
    // The new shell takes the focus: the user asked for it and types next.
    terminal.show(false);
    prepared.entry.terminal = terminal;
    this.changed.fire();
    return prepared.entry as OpenedShell;
  }

  /**
   * New Agent Worktree: the backend creates the worktree and its container with the agent
   * started (or nothing at all), then this opens the agent's terminal like any Toolbox shell.
   */
  async openAgentWorktree(request: AgentWorktreeRequest): Promise<(OpenedShell & { notes: string[]; path: string }) | undefined> {
    let notes: string[] = [];
    let path = request.folder;
    const prepared = await this.prepare({ folder: request.folder }, async (progress, token) => {
      progress.report({ message: plainText(`Creating the worktree for ${request.branch}`, 'message') });
      const made = await withPhaseProgress(
        progress,
        token,
        (line) => this.log.info(line),
        (reporter, signal) => this.backend.createAgentWorktree(request, reporter, signal),
      );
      if (!made) return undefined;
      notes = made.notes;
      path = made.path;
      return { prepared: made.prepared, session: made.session, folder: made.path };
    });
    if (!prepared) return undefined;
    const terminal = vscode.window.createTerminal({
      name: plainText(prepared.title, 'iconLabel'),
      pty: prepared.pty,
      iconPath: new vscode.ThemeIcon('robot'),
    });
    terminal.show(false);
    prepared.entry.terminal = terminal;
    this.changed.fire();
    return Object.assign(prepared.entry as OpenedShell, { notes, path });
  }

  /** For the terminal profile dropdown: VS Code creates the terminal from our options. */
  async profileOptions(request: ShellRequest): Promise<vscode.ExtensionTerminalOptions | undefined> {
    const prepared = await this.prepare(request);
    if (!prepared) return undefined;
    this.changed.fire();
    return { name: plainText(prepared.title, 'iconLabel'), pty: prepared.pty, iconPath: new vscode.ThemeIcon('package') };
  }

  /**
   * Brings back this window's held shells after a reload. The terminals are created at once, in
   * the recorded order, so VS Code makes them while the backend loads and the holders answer;
   * each shows its screen as soon as its session is attached. A session that ended or whose
   * container is gone is reported (once) and forgotten, and its terminal closes unseen.
   */
  async reattachAll(folders: readonly string[]): Promise<ReattachOutcome> {
    const records = this.store.forFolders(folders);
    const outcome: ReattachOutcome = { reattached: 0, gone: [], failed: [], screensShown: Promise.resolve(undefined) };
    if (records.length === 0) return outcome;
    const attaching = records.map((r) => this.backend.reattachShell(r));
    const entries = records.map((record, i) => this.createTerminal(record, attaching[i]!));
    const attached = await Promise.allSettled(attaching);
    const ptys: ToolboxShellPty[] = [];
    attached.forEach((result, i) => {
      const record = records[i]!;
      const entry = entries[i]!;
      if (result.status === 'fulfilled') {
        ptys.push(entry.pty);
        outcome.reattached++;
        return;
      }
      // Not a shell the user closed: forget the terminal before it goes, so its session is kept.
      this.tracked.splice(this.tracked.indexOf(entry), 1);
      entry.pty.discard();
      entry.terminal?.dispose();
      if (errorCode(result.reason) === 'session-gone') {
        void this.store.remove(record);
        outcome.gone.push((result.reason as Error).message);
      } else {
        outcome.failed.push(`${record.title}: ${(result.reason as Error).message}`);
      }
    });
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<undefined>((resolve) => (timer = setTimeout(() => resolve(undefined), REATTACH_SCREEN_WAIT_MS)));
    const allShown = Promise.all(ptys.map((p) => p.firstOutput)).then((times) => ({
      opened: Math.max(...ptys.map((p) => p.openedAt ?? Number.NaN)),
      shown: Math.max(...times),
    }));
    outcome.screensShown = Promise.race([allShown, timeout]).finally(() => clearTimeout(timer));
    if (outcome.reattached > 0) {
      // The last one opened comes to the front, as it was before the reload (focus stays put).
      this.tracked.at(-1)?.terminal?.show(true);
      this.changed.fire();
    }
    return outcome;
  }

  /** Opens a terminal on a held session of a container (the tree's Attach, or a reattach). */
  async attach(record: SessionRecord): Promise<OpenedShell> {
    const shell = await this.backend.reattachShell(record);
    const entry = this.createTerminal(record, shell);
    entry.terminal?.show();
    this.changed.fire();
    return entry as OpenedShell;
  }

  /** A terminal on a held session; `shell` may still be attaching (its terminal waits for it). */
  private createTerminal(record: SessionRecord, attaching: StartedShell | Promise<StartedShell>): Tracked {
    const pty = this.newPty(
      record.container,
      async (size) => {
        const shell = await attaching;
        await shell.resize(size.cols, size.rows);
        return shell;
      },
      undefined,
      record.agent === 'claude' || record.agent === 'codex' ? record.agent : undefined,
    );
    const entry: Tracked = {
      key: this.nextKey++,
      container: record.container,
      containerId: record.containerId,
      engine: record.engine,
      folder: record.folder,
      pty,
      openedAt: Date.now(),
      record,
      ended: false,
      title: record.title,
    };
    this.track(entry);
    entry.terminal = vscode.window.createTerminal({
      name: plainText(record.title, 'iconLabel'),
      pty,
      iconPath: new vscode.ThemeIcon('package'),
    });
    return entry;
  }

  private newPty(
    container: string,
    start: (size: { cols: number; rows: number }) => Promise<StartedShell>,
    notice?: string,
    agent?: AgentKind,
  ) {
    let pty: ToolboxShellPty | undefined = undefined;
    pty = new ToolboxShellPty({
      container,
      start,
      notice,
      agent,
      log: this.log,
      reconnect: async () => {
        const record = this.tracked.find((o) => o.pty === pty)?.record;
        if (!record) throw new Error('no session to reattach to');
        return this.backend.reattachShell(record);
      },
    });
    return pty;
  }

  /** Follows a terminal's shell: records a held session when it starts, forgets it when it ends. */
  private track(entry: Tracked): void {
    this.tracked.push(entry);
    entry.pty.onDidStart((shell) => {
      // The agent launched here starts with its session (not again when a dropped connection is reattached).
      if (entry.launching && entry.launchedAt === undefined) entry.launchedAt = Date.now();
      if (shell.record && !entry.record) {
        // Recorded under the terminal's (numbered) name, so a reload brings back the same names.
        const agent = entry.pty.agentStatus.agent;
        entry.record = {
          ...shell.record,
          ...(entry.title ? { title: entry.title } : {}),
          ...(agent !== 'shell' ? { agent } : {}),
        };
        void this.store.add(entry.record);
      }
      // The holder's list changed, and no Docker event says so: the views refresh on this.
      this.changed.fire();
    });
    entry.pty.onDidEnd((how) => this.shellEnded(entry, how));
    let named = entry.title;
    entry.pty.onDidChangeAgent((status) => {
      // The tab says when the session needs you (VS Code lets a pseudoterminal change its name, not its icon).
      const name = entry.title ? terminalName(entry.title, status) : undefined;
      if (name && name !== named && status.state !== 'ended') {
        named = name;
        entry.pty.rename(plainText(name, 'iconLabel'));
      }
      // A reload brings the agent back with its session (a title may name it after the start).
      if (entry.record && status.agent !== 'shell' && entry.record.agent !== status.agent) {
        entry.record = { ...entry.record, agent: status.agent };
        void this.store.add(entry.record);
      }
      this.agentChanged.fire(this.agentTerminal(entry));
    });
    entry.pty.onDidAskReopen(() => void vscode.commands.executeCommand(COMMAND_LABELS.openShell.command, vscode.Uri.file(entry.folder)));
  }

  /** The shell ended by itself: forget its session, and apply upstream's rule to its container. */
  private shellEnded(entry: Tracked, how: ShellEnd): void {
    entry.ended = true;
    this.changed.fire();
    if (entry.record) void this.store.remove(entry.record);
    if (how.kind !== 'exited') return;
    this.backend
      .shellEnded({ id: entry.containerId, name: entry.container, holder: entry.record?.holder })
      .catch((err: Error) => this.log.warn(`Could not check whether ${entry.container} is still in use: ${err.message}`));
  }

  /**
   * The user closed a terminal: end its held session (and maybe its container). The window
   * shutting down closes terminals too, with another reason: then the session stays.
   */
  private terminalClosed(t: vscode.Terminal): void {
    const i = this.tracked.findIndex((o) => o.terminal === t);
    if (i < 0) return;
    const [entry] = this.tracked.splice(i, 1);
    if (!entry?.record || entry.ended || t.exitStatus?.reason !== vscode.TerminalExitReason.User) return;
    const record = entry.record;
    void this.store.remove(record);
    this.backend
      .endShell(record)
      .then(() => this.log.info(`Ended the shell "${record.title}" in ${record.container} (its terminal was closed).`))
      .catch((err: Error) => this.log.warn(`Could not end the shell "${record.title}" in ${record.container}: ${err.message}`));
  }

  /**
   * The one round trip into the backend: prepare (config, name), then open, all under one
   * progress notification from the first step (the first open also loads the backend and may
   * build the image: the user sees something happen at once).
   */
  private async prepare(request: ShellRequest, produce?: Producer) {
    const opened = await vscode.window.withProgress(
      {
        location: vscode.ProgressLocation.Notification,
        title: plainText(`Toolbox: ${basename(request.folder)}`, 'message'),
        cancellable: true,
      },
      async (progress, token) => {
        if (produce) return produce(progress, token);
        progress.report({ message: "Reading the folder's settings" });
        const prepared = await this.backend.prepareShell(request);
        for (const w of prepared.warnings) this.log.warn(w);
        for (const n of prepared.notices) void vscode.window.showWarningMessage(plainText(`Toolbox: ${n}`, 'message'));
        void this.unknownKeys?.offer(request.folder, prepared.unknownKeys ?? []);
        if (prepared.projectFileIgnored) {
          void vscode.window.showWarningMessage(
            'Toolbox is in limited mode: this workspace is not trusted, so its .toolbox.yaml was ignored. Trust the workspace to use it.',
          );
        }
        if (token.isCancellationRequested) return undefined;
        const session = await withPhaseProgress(
          progress,
          token,
          (line) => this.log.info(line),
          (reporter, signal) => prepared.open(reporter, signal),
        );
        return session && { prepared, session };
      },
    );
    if (!opened) return undefined;
    const { prepared, session } = opened;
    if (prepared.pendingConfig) this.pendingConfig?.offer(prepared.pendingConfig);
    if (opened.folder !== undefined) request = { ...request, folder: opened.folder };
    this.log.info(`${session.action}: ${session.name} (${session.id.slice(0, 12)}) for ${request.folder}`);
    for (const w of session.warnings) {
      this.log.warn(w);
      void vscode.window.showWarningMessage(plainText(w, 'message'));
    }
    let notice: string | undefined;
    const persistence = session.persistence;
    if (!persistence.held && !this.plainNoticeShown.has(session.id) && !persistence.off) {
      this.plainNoticeShown.add(session.id);
      notice = `This shell will not survive a window reload: ${persistence.reason}.`;
    }
    const pty = this.newPty(session.name, session.start, notice, request.agent);
    const title = numberedTitle(prepared.title, this.takenTitles());
    const entry: Tracked = {
      key: this.nextKey++,
      container: session.name,
      containerId: session.id,
      engine: session.engine,
      folder: request.folder,
      pty,
      openedAt: Date.now(),
      ended: false,
      title,
      launching: request.agent !== undefined || produce !== undefined,
      ...(session.agentHomes ? { agentHomes: session.agentHomes } : {}),
    };
    this.track(entry);
    return { title, pty, entry };
  }

  /** The names of this window's Toolbox terminals (open, or about to be). */
  private takenTitles(): string[] {
    // The title, not the tab's name now: the tab adds the session's state to it.
    return this.tracked.flatMap((o) => (o.title ? [o.title] : o.terminal ? [o.terminal.name] : []));
  }

  /**
   * Ends the terminals whose container is no longer running. Docker does not always close an
   * exec's stream when its container stops (a container in a shared PID namespace keeps it
   * open), so the container list, not the stream, decides. Only shells opened before the list
   * was taken are judged by it, and only those on the engine it was read from: after an engine
   * switch, a shell in another engine's container (of the same name, too) is not gone because
   * this engine does not list it (issue 26, item 3).
   */
  closeGone(running: ReadonlySet<string>, takenAt: number, endpoint: string | undefined): void {
    this.endpoint = endpoint;
    for (const shell of this.tracked) {
      if (this.onCurrentEngine(shell) && shell.openedAt < takenAt && !running.has(shell.containerId)) shell.pty.containerStopped();
    }
  }

  /**
   * Whether a shell's container is on the engine in use: names are per engine, so a Stop or a
   * list of this engine speaks of its own container of that name only. Unknown (an older record,
   * no list yet) counts as this engine's, as before engines were told apart.
   */
  private onCurrentEngine(shell: Tracked): boolean {
    return shell.engine === undefined || this.endpoint === undefined || shell.engine === this.endpoint;
  }

  /** A held shell is being ended from the tree: its terminals in this window close first. */
  closeTerminalsOfSession(record: Pick<SessionRecord, 'containerId' | 'sessionId'>): void {
    for (const shell of [...this.tracked]) {
      if (shell.record?.containerId === record.containerId && shell.record.sessionId === record.sessionId) {
        shell.ended = true;
        void this.store.remove(shell.record);
        shell.pty.stoppedByUser();
      }
    }
  }

  /** This window's terminals whose shell in `container` still runs: their names and held sessions. */
  liveTerminals(container: string): Array<{ name: string; sessionId?: string }> {
    return this.tracked
      .filter((o) => o.container === container && !o.ended && o.terminal && this.onCurrentEngine(o))
      .map((o) => ({ name: o.title ?? o.terminal!.name, sessionId: o.record?.sessionId }));
  }

  /** The user stopped these containers: their terminals close (no offer to reopen). */
  closeTerminalsOf(containers: readonly string[]): void {
    this.closeTerminalsWhere((shell) => containers.includes(shell.container) && this.onCurrentEngine(shell));
  }

  /** A folder went away (an agent worktree removed): the terminals working in it close, never reopened elsewhere. */
  closeTerminalsIn(folder: string): void {
    this.closeTerminalsWhere((shell) => shell.folder === folder);
  }

  private closeTerminalsWhere(matches: (shell: Tracked) => boolean): void {
    for (const shell of [...this.tracked]) {
      if (matches(shell)) {
        shell.ended = true;
        if (shell.record) void this.store.remove(shell.record);
        shell.pty.stoppedByUser();
      }
    }
  }

  dispose(): void {
    this.changed.dispose();
    this.agentChanged.dispose();
    for (const s of this.subscriptions) s.dispose();
  }
}
