/**
 * The model the views and the status bar render, and the one owner of its timers. Docker is
 * only asked while someone looks: a Toolbox view is visible, or this window has opened a shell
 * (the status bar must see drift then). Docker events trigger a debounced refresh; a slow poll
 * is the safety net for a missed event. No runtime vscode import, so it is unit-tested with a
 * stand-in backend (test/unit/refresh.test.ts).
 */
import type * as vscode from 'vscode';
import type { ConfigService, PeerSetting, Snapshot, ViewService } from '../../backend/api';
import { type ProximoSummary } from './model';
import { findDrift, type DriftFinding } from '../containers/driftFindings';
import { errorActions, errorText, type ErrorAction } from '../../contract/errors';

export interface ToolboxState {
  snapshot?: Snapshot;
  proximo?: ProximoSummary;
  error?: string;
  /** The fixes the error offers (contract/errors.ts), one button or tree row each. */
  errorActions?: readonly ErrorAction[];
  /** Window folders and whether each wants peer messaging now. */
  wantPeer: Map<string, boolean>;
  /** Window folders' peer-messaging setting and where it comes from (the Peer Messaging view shows it). */
  peerSettings?: Map<string, PeerSetting>;
  findings: DriftFinding[];
  /** True until the first refresh finished. */
  loading: boolean;
  /** When the snapshot was started (ms since the epoch): anything opened later may be missing. */
  takenAt: number;
  /** Containers this window is stopping, by name: shown as stopping until the engine says so. */
  stopping?: ReadonlySet<string>;
  /** Agent worktrees this window is removing, by path: their rows show it until they are gone. */
  removing?: ReadonlySet<string>;
}

export const EVENT_DEBOUNCE_MS = 100;
/** Events resume with `since` after a reconnect, so the poll only guards against the unforeseen. */
export const SAFETY_POLL_MS = 5 * 60_000;

/** The log lines the refresh manager writes (the Toolbox output channel in the extension). */
export type RefreshLog = Pick<vscode.LogOutputChannel, 'warn' | 'error'>;

export class RefreshManager implements vscode.Disposable {
  private readonly listeners = new Set<(state: ToolboxState) => void>();
  /** Fires with the new state after every refresh (vscode.Event's shape). */
  readonly onDidChange = (listener: (state: ToolboxState) => void): vscode.Disposable => {
    this.listeners.add(listener);
    return { dispose: () => void this.listeners.delete(listener) };
  };
  private current: ToolboxState = { wantPeer: new Map(), peerSettings: new Map(), findings: [], loading: true, takenAt: 0 };
  private readonly visibleViews = new Set<string>();
  private shellsOpened = false;
  private debounce: NodeJS.Timeout | undefined;
  private poll: NodeJS.Timeout | undefined;
  private events: vscode.Disposable | undefined;
  private startingEvents = false;
  private running: Promise<void> | undefined;
  private again = false;
  private disposed = false;

  constructor(
    private readonly backend: ViewService & Pick<ConfigService, 'peerSetting' | 'seccompSetting'>,
    private readonly folders: () => string[],
    private readonly log: RefreshLog,
    /** The user's home, to shorten paths in drift details. */
    private readonly home = '',
  ) {}

  get state(): ToolboxState {
    return this.current;
  }

  /** Whether Docker may be asked at all right now. */
  get live(): boolean {
    return this.visibleViews.size > 0 || this.shellsOpened;
  }

  setViewVisible(viewId: string, visible: boolean): void {
    const wasLive = this.live;
    if (visible) this.visibleViews.add(viewId);
    else this.visibleViews.delete(viewId);
    this.liveChanged(wasLive);
  }

  /** A shell was opened in this window: keep the drift check running from now on. */
  noteShellOpened(): void {
    const wasLive = this.live;
    this.shellsOpened = true;
    this.liveChanged(wasLive);
    this.refreshSoon();
  }

  private liveChanged(wasLive: boolean): void {
    if (this.live && !wasLive) {
      this.refreshSoon(0);
      this.startWatching();
    } else if (!this.live && wasLive) {
      this.stopWatching();
    }
  }

  /** Debounced refresh; a no-op while nobody looks. */
  refreshSoon(delay = EVENT_DEBOUNCE_MS): void {
    if (!this.live || this.disposed) return;
    if (this.debounce) clearTimeout(this.debounce);
    this.debounce = setTimeout(() => {
      this.debounce = undefined;
      void this.refreshNow();
    }, delay);
  }

  /** Refreshes now (Refresh and Retry commands); waits for a running refresh to finish first. */
  async refreshNow(): Promise<void> {
    if (this.disposed) return;
    if (this.running) {
      this.again = true;
      return this.running;
    }
    this.running = this.load().finally(() => {
      this.running = undefined;
      if (this.again) {
        this.again = false;
        void this.refreshNow();
      }
    });
    if (!this.events && this.live) this.startWatching();
    return this.running;
  }

  /**
   * Marks a container as being stopped by this window (or not any more): the views show it as
   * stopping until the engine's answer, and it keeps no Stop action meanwhile.
   */
  setStopping(name: string, stopping: boolean): void {
    this.current = { ...this.current, stopping: toggled(this.current.stopping, name, stopping) };
    this.emit();
  }

  /** Marks an agent worktree as being removed by this window (or not any more): its row says so. */
  setRemoving(path: string, removing: boolean): void {
    this.current = { ...this.current, removing: toggled(this.current.removing, path, removing) };
    this.emit();
  }

  private emit(): void {
    if (!this.disposed) for (const listener of [...this.listeners]) listener(this.current);
  }

  private async load(): Promise<void> {
    const folders = this.folders();
    const takenAt = Date.now();
    // proximo is looked up on this host, without Docker: its view has something to say either way.
    const proximo = this.backend.proximo().catch(() => undefined);
    try {
      const [snapshot, wants, seccomp] = await Promise.all([
        this.backend.snapshot(),
        Promise.all(folders.map(async (f) => [f, await this.backend.peerSetting(f).catch(() => undefined)] as const)),
        // toolbox.seccomp is a VS Code setting, read without Docker; the profile each container runs
        // with came with the snapshot's one inspect per container, so seccomp drift costs no engine call.
        Promise.all(folders.map(async (f) => [f, await this.backend.seccompSetting(f).catch(() => undefined)] as const)),
      ]);
      // A folder whose config cannot be read is judged by the default (on), as before.
      const peerSettings = new Map(wants.flatMap(([f, s]) => (s ? [[f, s] as const] : [])));
      const wantPeer = new Map(wants.map(([f, s]) => [f, s?.on ?? true] as const));
      const findings = findDrift(
        snapshot.containers,
        snapshot.anchor.id,
        new Map(wants.map(([f, s]) => [f, s ?? true] as const)),
        this.backend.names,
        this.home,
        new Map(seccomp.flatMap(([f, s]) => (s ? [[f, s] as const] : []))),
      );
      this.current = {
        snapshot,
        proximo: await proximo,
        wantPeer,
        peerSettings,
        findings,
        loading: false,
        takenAt,
        stopping: this.current.stopping,
        removing: this.current.removing,
      };
    } catch (err) {
      const message = errorText(err);
      this.log.error(`Refreshing Toolbox failed: ${message}`);
      this.current = {
        ...this.current,
        proximo: (await proximo) ?? this.current.proximo,
        error: message,
        errorActions: errorActions(err),
        loading: false,
      };
      this.stopWatching();
    }
    this.emit();
  }

  private startWatching(): void {
    if (this.events || this.startingEvents || this.disposed) return;
    this.startingEvents = true;
    this.backend
      .watchEvents(
        () => this.refreshSoon(),
        (err) => {
          this.log.warn(`Docker events stopped: ${err.message}; falling back to a slow poll.`);
          this.events?.dispose();
          this.events = undefined;
        },
      )
      .then(
        (d) => {
          if (!this.live || this.disposed) d.dispose();
          else this.events = d;
        },
        (err: Error) => this.log.warn(`Could not watch Docker events: ${err.message}`),
      )
      .finally(() => (this.startingEvents = false));
    if (!this.poll) this.poll = setInterval(() => this.refreshSoon(0), SAFETY_POLL_MS);
  }

  private stopWatching(): void {
    this.events?.dispose();
    this.events = undefined;
    if (this.poll) clearInterval(this.poll);
    this.poll = undefined;
  }

  dispose(): void {
    this.disposed = true;
    if (this.debounce) clearTimeout(this.debounce);
    this.stopWatching();
    this.listeners.clear();
  }
}

/** `set` with `item` in or out, as a new set. */
function toggled(set: ReadonlySet<string> | undefined, item: string, on: boolean): ReadonlySet<string> {
  const next = new Set(set ?? []);
  if (on) next.add(item);
  else next.delete(item);
  return next;
}
