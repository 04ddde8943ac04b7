/**
 * One BridgeHub per extension host. Each workspace (container) gets its own state dir, token and
 * unix socket; all of them share one loopback TCP listener that tells workspaces apart by token.
 *
 * Why this split: the unix socket has to be per workspace anyway — its directory is bind-mounted
 * into that workspace's container only — so it accepts only its own workspace's token. The TCP
 * port (for engines that cannot mount a host socket) is the same for every container, so one
 * listener that picks the workspace by token (docs/decisions/0002-bridge-per-workspace.md)
 * costs one port instead of one per window. A token can only be read from its own
 * workspace's state dir, so a container cannot act as another workspace over TCP.
 */
import { randomBytes } from 'node:crypto';
import { chmodSync, lstatSync, mkdirSync, readFileSync, renameSync, rmSync, statSync, unlinkSync, watch, type FSWatcher } from 'node:fs';
import type { Server } from 'node:http';
import { join } from 'node:path';
import { BRIDGE_DEFAULT_PORT, BRIDGE_PORT_COUNT } from '../contract/manifest';
import { BRIDGE_FILES } from '../contract/shims';
import { REFUSAL_LOG, aggregateRefusals, type RefusalLog, type RefusalLogOptions } from './refusals';
import { BRIDGE_SWEEP, sweepStaleSockets, type SweepLimits } from './sweep';
import type { BridgeMount } from '../contract/types';
import { CredentialAuthority, GrantState, type ConsentPrompt, type KeyValueState } from './credentialConsent';
import { TokenBucket } from './gate';
import { healthzProof, probeBridge, type ProbeLimits, BRIDGE_PROBE } from './healthz';
import type { BucketRates, EditorActions, LoginCallbackForwarder, RouteDeps, WorkspaceBinding } from './route';
import type { BridgeLog } from './log';
import { createBridgeServer, type ListenerScope } from './server';
import { stopSound } from './sound';
import {
  assertSocketPathFits,
  chooseRunDir,
  ensureHubKey,
  ensurePrivateDir,
  ensureToken,
  removePortFile,
  workspaceStateDir,
  type RunDirChoice,
  writePortFile,
} from './state';

/**
 * A window that reuses another window's bridge for a workspace probes it every `intervalMs` (and
 * whenever its run dir changes), and serves the workspace itself once it is gone; `jitterMs`
 * bounds the random pause before it binds. Two such windows take BRIDGE_FILES.takeoverLock in
 * turn, so only one binds; a lock older than `lockStaleMs` is one a killed window left.
 */
const BRIDGE_TAKEOVER = {
  intervalMs: 2_000,
  jitterMs: 250,
  lockStaleMs: 10_000,
} as const;

/**
 * Token buckets: open, edit and proximo share one; credential and sound have their own (upstream's
 * budgets); propose has a slow one of its own, since each proposal is a notification the user sees;
 * the agent hooks' two routes share a fast one.
 */
export const RATE_LIMITS = {
  shared: { perSecond: 10, burst: 5 },
  credential: { perSecond: 30, burst: 15 },
  sound: { perSecond: 10, burst: 5 },
  propose: { perSecond: 0.2, burst: 3 },
  /** /approval and /agent-event: an agent running tools quickly reports each one (docs/decisions/0050). */
  agent: { perSecond: 20, burst: 40 },
} as const;

export interface BridgeHubOptions extends EditorActions {
  /** The host home: state lives under `<home>/.toolbox/toolbox/vscode/`. */
  home: string;
  log?: BridgeLog;
  /** Environment for host commands and the XDG_RUNTIME_DIR choice; default process.env. */
  env?: NodeJS.ProcessEnv;
  uid?: number;
  platform?: NodeJS.Platform;
  /** Parent of the `toolbox-<uid>` run dirs when XDG_RUNTIME_DIR is unusable; default /tmp. */
  tmpRoot?: string;
  /** Preferred loopback port; falls back to an ephemeral one when taken. */
  port?: number;
  rateLimits?: BucketRates;
  /** Clock for the token buckets, in ms. */
  now?: () => number;
  /** Dirs searched for proximo after PATH (tests). */
  proximoFallbackDirs?: string[];
  /** How refused requests are aggregated in the log; default REFUSAL_LOG. */
  refusalLog?: RefusalLogOptions;
  /** Bounds of the liveness probe of an existing socket; default BRIDGE_PROBE. */
  probeLimits?: ProbeLimits;
  /** How a window that reuses another's bridge watches for it to go; default BRIDGE_TAKEOVER. */
  takeover?: { intervalMs: number; jitterMs: number; lockStaleMs?: number };
  /** Bounds of the sweep of stale sockets at start (sweep.ts); default BRIDGE_SWEEP. */
  sweepLimits?: SweepLimits;
  /**
   * Consent for /credential: where grants persist (default: memory, this hub's lifetime) and who
   * asks the user (default: no one, so only the folder's own remote hosts are served).
   */
  credentialConsent?: CredentialConsentOptions;
  /** /open's login callbacks (issue 29); absent: none are forwarded. */
  forwardLoginCallback?: LoginCallbackForwarder;
  /** How long /open waits for the user's answer; default OPEN_LIMITS_MS.confirm (tests shorten it). */
  openConfirmMs?: number;
}

export interface CredentialConsentOptions {
  state?: KeyValueState;
  prompt?: ConsentPrompt;
  /** Default CREDENTIAL_LIMITS_MS.consent (tests shorten it). */
  consentTimeoutMs?: number;
}

/** A served workspace is its container name on its engine. */
function servedKey(r: WorkspaceRegistration): string {
  return r.engine === undefined ? r.key : `${r.key}\n${r.engine}`;
}

export interface WorkspaceRegistration {
  /** The container name. */
  key: string;
  /**
   * The engine that runs the container (its endpoint, engine/client.ts): the same name on two
   * engines is two workspaces with two run dirs (docs/decisions/0043). Absent in registrations
   * recorded before it was kept: the run dir of the name alone.
   */
  engine?: string;
  workspaceFolder: string;
  /**
   * The checkout whose `.git/config` names the folder's remotes, when it is not the folder itself
   * (an agent worktree's `.git` is a pointer file; its remotes are the main repository's).
   */
  gitRepository?: string;
  /**
   * Host paths /edit may open besides the workspace folder: the container's own bind-mount
   * sources (plan/mounts.ts editRoots), never a whole mounts root.
   */
  mountsRoots: string[];
  /** Host paths the container can write (its read-write mount sources), once known. */
  writableRoots?: string[];
  proximoEnabled: boolean;
  /** HOME / CODEX_HOME for `proximo skill`: the container's agent homes; no other is accepted. */
  defaultAgentHome: string;
  defaultCodexHome: string;
}

export interface WorkspaceBridge extends BridgeMount {
  socketPath: string;
  /** The loopback TCP port named in the state dir's port file, when known. */
  port?: number;
  /** True when another process (window, upstream daemon) already serves this state dir. */
  reused: boolean;
}

interface WorkspaceEntry {
  binding?: WorkspaceBinding;
  ready: Promise<WorkspaceBridge>;
  /** The latest registration (a later ensureWorkspace may update it while the start is pending). */
  registration: WorkspaceRegistration;
  /** Set once we bound the socket ourselves (so dispose unlinks it). */
  server?: Server;
  socketPath?: string;
  /** The inode we bound at socketPath: dispose unlinks only that one. */
  socketIno?: number;
  stateDir?: string;
  /** While another window serves this workspace: ends the watch that takes over when it goes. */
  stopTakeover?: () => void;
}

/**
 * The loopback ports the bridge tries, in order, before an ephemeral one: the configured port
 * alone, else the range package.json keeps out of port forwarding (contract/manifest.ts
 * BRIDGE_PORT_COUNT).
 */
export function bridgePortCandidates(configured?: number): number[] {
  if (configured !== undefined) return [configured];
  return Array.from({ length: BRIDGE_PORT_COUNT }, (_, i) => BRIDGE_DEFAULT_PORT + i);
}

function closeServer(server: Server): Promise<void> {
  return new Promise((resolve) => {
    server.close(() => resolve());
    server.closeAllConnections();
  });
}

function listen(server: Server, target: string | number): Promise<void> {
  return new Promise((resolve, reject) => {
    const onError = (error: Error): void => reject(error);
    server.once('error', onError);
    const done = (): void => {
      server.off('error', onError);
      resolve();
    };
    if (typeof target === 'string') server.listen(target, done);
    else server.listen(target, '127.0.0.1', done);
  });
}

/**
 * Listens on a fresh socket in `privateDir` (the run dirs' parent, which no container can reach),
 * sets its mode there, then renames it to `socketPath` in the container-writable run dir. Nothing
 * is ever chmodded by a path the container could swap for a symlink, and whatever the container
 * left at `socketPath` is replaced in one step. Returns the bound socket's inode.
 */
async function bindInto(server: Server, privateDir: string, socketPath: string, platform: NodeJS.Platform): Promise<number> {
  const staging = join(privateDir, `.${randomBytes(6).toString('hex')}.sock`);
  assertSocketPathFits(staging, platform);
  try {
    await listen(server, staging);
    chmodSync(staging, 0o600);
    renameSync(staging, socketPath);
  } finally {
    rmSync(staging, { force: true });
  }
  return lstatSync(socketPath).ino;
}

/** Unlinks the socket we bound, unless something else has taken its place since. */
function unlinkOwnSocket(socketPath: string, ino: number | undefined): void {
  const st = lstatSync(socketPath, { throwIfNoEntry: false });
  if (st !== undefined && st.isSocket() && st.ino === ino) unlinkSync(socketPath);
}

function readPortFile(stateDir: string): number | undefined {
  try {
    const port = Number(readFileSync(join(stateDir, BRIDGE_FILES.port), 'utf8').trim());
    return Number.isInteger(port) && port > 0 ? port : undefined;
  } catch {
    return undefined;
  }
}

export class BridgeHub {
  private readonly workspaces = new Map<string, WorkspaceEntry>();
  private tcp?: Promise<{ server: Server; port: number }>;
  private tcpPort: number | undefined;
  private disposed = false;
  /** The sweep of stale sockets, once per run-dir parent (sweep.ts). */
  private readonly sweeps = new Map<string, Promise<void>>();
  private readonly deps: RouteDeps;
  private readonly refusals: RefusalLog;
  private readonly log: BridgeLog;
  /** Who may have git credentials; shared by every workspace of this hub. */
  readonly credentials: CredentialAuthority;

  constructor(private readonly options: BridgeHubOptions) {
    this.refusals = aggregateRefusals(options.log ?? (() => undefined), options.refusalLog ?? REFUSAL_LOG);
    this.log = this.refusals.log;
    const consent = options.credentialConsent ?? {};
    this.credentials = new CredentialAuthority({
      grants: new GrantState(consent.state),
      prompt: consent.prompt,
      consentTimeoutMs: consent.consentTimeoutMs,
      log: (kind, message) => this.log({ kind, message }),
    });
    this.deps = {
      credentials: this.credentials,
      home: options.home,
      env: options.env ?? process.env,
      openInEditor: options.openInEditor,
      openUntitled: options.openUntitled,
      openExternal: options.openExternal,
      propose: options.propose,
      askApproval: options.askApproval,
      agentEvent: options.agentEvent,
      forwardLoginCallback: options.forwardLoginCallback,
      openConfirmMs: options.openConfirmMs,
      proximoFallbackDirs: options.proximoFallbackDirs,
    };
  }

  /** The shared loopback TCP port, once started. */
  get port(): number | undefined {
    return this.tcpPort;
  }

  /** Registers a workspace (idempotent: later calls update its settings) and serves it. */
  ensureWorkspace(registration: WorkspaceRegistration): Promise<WorkspaceBridge> {
    if (this.disposed) return Promise.reject(new Error('The bridge has been shut down (the extension is deactivating).'));
    const id = servedKey(registration);
    const existing = this.workspaces.get(id);
    if (existing !== undefined) {
      existing.registration = registration;
      if (existing.binding !== undefined) Object.assign(existing.binding, this.settingsOf(registration));
      return existing.ready;
    }
    const entry = { registration } as WorkspaceEntry;
    entry.ready = this.startWorkspace(registration, entry);
    this.workspaces.set(id, entry);
    entry.ready.catch(() => this.workspaces.delete(id));
    return entry.ready;
  }

  private settingsOf(r: WorkspaceRegistration): Omit<WorkspaceBinding, 'key' | 'token' | 'buckets' | 'inFlight'> {
    return {
      workspaceFolder: r.workspaceFolder,
      mountsRoots: [...r.mountsRoots],
      ...(r.writableRoots !== undefined ? { writableRoots: [...r.writableRoots] } : {}),
      proximoEnabled: r.proximoEnabled,
      defaultAgentHome: r.defaultAgentHome,
      defaultCodexHome: r.defaultCodexHome,
    };
  }

  private async startWorkspace(registration: WorkspaceRegistration, entry: WorkspaceEntry): Promise<WorkspaceBridge> {
    const uid = this.options.uid ?? process.getuid?.() ?? -1;
    const platform = this.options.platform ?? process.platform;
    const env = this.options.env ?? process.env;
    const stateDir = workspaceStateDir(this.options.home, registration.key);
    const choice = chooseRunDir({
      key: registration.key,
      ...(registration.engine !== undefined ? { engine: registration.engine } : {}),
      uid,
      platform,
      xdgRuntimeDir: env.XDG_RUNTIME_DIR,
      tmpRoot: this.options.tmpRoot ?? '/tmp',
    });
    ensurePrivateDir(stateDir, uid);
    // The run dir is mounted at bridgeRunDir, inside the read-only state dir mount: Docker cannot
    // create that mount point in a read-only bind, so the empty `run/` must exist on the host.
    ensurePrivateDir(join(stateDir, BRIDGE_FILES.runDir), uid);
    const token = ensureToken(stateDir);
    // Before the container can run: the folder's remote hosts as they are now.
    await this.credentials.noteWorkspace(registration.workspaceFolder, registration.gitRepository);
    ensurePrivateDir(choice.parent, uid);
    ensurePrivateDir(choice.runDir, uid);
    const key = ensureHubKey(choice.parent, uid);
    await this.sweepOnce(choice.parent);

    // Another window may already serve this workspace: use it, but only once it proved it holds
    // the hub key. The run dir is writable from the container, so anything else answering there
    // is the container's (or a crashed window's stale socket) and is replaced below.
    const found = await probeBridge(choice.socketPath, key, this.options.probeLimits ?? BRIDGE_PROBE);
    if (found.kind === 'ours') {
      this.log({
        kind: 'info',
        message:
          `A bridge is already serving ${stateDir} on ${choice.socketPath} (another VS Code window); ` +
          `workspace ${registration.key} uses it instead of starting a second one.`,
      });
      this.watchForTakeover(entry, choice, stateDir, key, token);
      return { stateDir, runDir: choice.runDir, socketPath: choice.socketPath, port: readPortFile(stateDir), reused: true };
    }
    if (found.kind === 'foreign') {
      this.log({
        kind: 'warn',
        message:
          `Something other than a Toolbox bridge listens on ${choice.socketPath} (${found.why}); that directory is ` +
          `writable from the container, so it is not trusted. The bridge for ${registration.key} replaces it.`,
      });
    }
    return this.serveOwn(entry, choice, stateDir, key, token);
  }

  /**
   * While another window serves this workspace, watches that it still does: at once when
   * something changes in the run dir (a window that shuts down unlinks its socket first), and every
   * `intervalMs` for one that was killed and left its socket behind. When the probe no longer
   * finds one of ours there, this window binds its own, so the shims of a container whose serving
   * window went away (a reload, a closed second window) reach this one.
   */
  private watchForTakeover(entry: WorkspaceEntry, choice: RunDirChoice, stateDir: string, key: Buffer, token: string): void {
    const limits = this.options.takeover ?? BRIDGE_TAKEOVER;
    const probeLimits = this.options.probeLimits ?? BRIDGE_PROBE;
    let checking = false;
    let stopped = false;
    let failures = 0;
    const gone = async (): Promise<boolean> => (await probeBridge(choice.socketPath, key, probeLimits)).kind !== 'ours';
    const check = async (): Promise<void> => {
      if (checking || stopped || this.disposed) return;
      checking = true;
      try {
        if (!(await gone())) return;
        // Two windows that reused the same bridge both see it go. They take the state dir's lock
        // in turn (a random pause first, so they seldom meet there), and each looks again once it
        // holds it: the first binds, the second finds its bridge and keeps watching that one.
        await new Promise((resolve) => setTimeout(resolve, Math.random() * limits.jitterMs));
        const release = takeoverLock(stateDir, limits.lockStaleMs ?? BRIDGE_TAKEOVER.lockStaleMs);
        if (release === undefined) return; // another window is taking over: the next look sees it
        try {
          if (stopped || this.disposed || !(await gone())) return;
          await this.serveOwn(entry, choice, stateDir, key, token);
        } finally {
          release();
        }
        stop();
        this.log({
          kind: 'info',
          message: `The window that served the bridge for ${entry.registration.key} is gone; this window serves it now.`,
        });
      } catch (error) {
        if (failures++ === 0) {
          this.log({
            kind: 'warn',
            message: `Could not take over the bridge for ${entry.registration.key} (${(error as Error).message}); trying again.`,
          });
        }
      } finally {
        checking = false;
      }
    };
    const timer = setInterval(() => void check(), limits.intervalMs);
    timer.unref();
    let watcher: FSWatcher | undefined;
    try {
      // The run dir is writable from the container, so its events only ever trigger a probe,
      // one at a time; what the probe finds decides.
      watcher = watch(choice.runDir, { persistent: false }, () => void check());
      watcher.on('error', () => watcher?.close());
    } catch {
      // No watch (a full inotify table): the interval alone.
    }
    const stop = (): void => {
      stopped = true;
      clearInterval(timer);
      watcher?.close();
      entry.stopTakeover = undefined;
    };
    entry.stopTakeover = stop;
  }

  /** Binds this window's own socket for the workspace (and the shared TCP listener), and writes its port. */
  private async serveOwn(
    entry: WorkspaceEntry,
    choice: RunDirChoice,
    stateDir: string,
    key: Buffer,
    token: string,
  ): Promise<WorkspaceBridge> {
    const registration = entry.registration;
    const platform = this.options.platform ?? process.platform;
    const rates = this.options.rateLimits ?? RATE_LIMITS;
    const now = this.options.now ?? Date.now;
    const binding: WorkspaceBinding = {
      key: registration.key,
      token,
      ...this.settingsOf(entry.registration),
      buckets: {
        shared: new TokenBucket(rates.shared, now),
        credential: new TokenBucket(rates.credential, now),
        sound: new TokenBucket(rates.sound, now),
        propose: new TokenBucket(rates.propose, now),
        agent: new TokenBucket(rates.agent, now),
      },
      inFlight: new Map(),
    };

    assertSocketPathFits(choice.socketPath, platform);
    const scope: ListenerScope = {
      transport: 'unix',
      port: () => undefined,
      workspaces: () => [binding],
      prove: (challenge) => healthzProof(key, choice.socketPath, challenge),
    };
    const server = createBridgeServer(scope, this.deps, this.log);
    let socketIno: number;
    try {
      socketIno = await bindInto(server, choice.parent, choice.socketPath, platform);
    } catch (error) {
      await closeServer(server);
      throw new Error(`The bridge could not listen on ${choice.socketPath}: ${(error as Error).message}`, { cause: error });
    }
    if (this.disposed) {
      // A takeover that bound while the window shut down: nothing of it may stay behind.
      await closeServer(server);
      unlinkOwnSocket(choice.socketPath, socketIno);
      throw new Error('The bridge has been shut down (the extension is deactivating).');
    }
    entry.socketIno = socketIno;
    entry.server = server;
    entry.socketPath = choice.socketPath;
    entry.stateDir = stateDir;
    entry.binding = binding;

    const port = await this.ensureTcp();
    writePortFile(stateDir, port);
    this.log({ kind: 'info', message: `Bridge for ${registration.key} listening on ${choice.socketPath} and 127.0.0.1:${port}.` });
    return { stateDir, runDir: choice.runDir, socketPath: choice.socketPath, port, reused: false };
  }

  /** Starts the shared loopback listener once: the preferred port, else an ephemeral one. */
  private ensureTcp(): Promise<number> {
    this.tcp ??= (async () => {
      const scope: ListenerScope = {
        transport: 'tcp',
        port: () => this.tcpPort,
        workspaces: () => this.boundWorkspaces(),
      };
      const server = createBridgeServer(scope, this.deps, this.log);
      const candidates = bridgePortCandidates(this.options.port);
      let bound = false;
      for (const port of candidates) {
        try {
          await listen(server, port);
          bound = true;
          break;
        } catch (error) {
          if ((error as NodeJS.ErrnoException).code !== 'EADDRINUSE') throw error;
        }
      }
      if (!bound) {
        this.log({
          kind: 'info',
          message:
            `127.0.0.1:${candidates[0]}${candidates.length > 1 ? `-${candidates[candidates.length - 1]}` : ''} is taken; the bridge uses ` +
            'an ephemeral loopback port, which a remote window may list in its Ports view.',
        });
        await listen(server, 0);
      }
      const address = server.address();
      if (address === null || typeof address === 'string') throw new Error('The bridge TCP listener has no port.');
      this.tcpPort = address.port;
      return { server, port: address.port };
    })();
    return this.tcp.then((t) => t.port);
  }

  /** Removes the sockets that windows gone without shutting down left under `parent`, once. */
  private sweepOnce(parent: string): Promise<void> {
    let sweep = this.sweeps.get(parent);
    if (sweep === undefined) {
      sweep = sweepStaleSockets(parent, this.options.sweepLimits ?? BRIDGE_SWEEP).then(
        (removed) => {
          if (removed.length > 0) {
            this.log({
              kind: 'info',
              message: `Removed ${removed.length} stale bridge socket(s) that no window listens on any more: ${removed.join(', ')}.`,
            });
          }
        },
        (error: Error) => this.log({ kind: 'warn', message: `Could not sweep stale bridge sockets in ${parent}: ${error.message}` }),
      );
      this.sweeps.set(parent, sweep);
    }
    return sweep;
  }

  /** Unlinks the socket this hub bound for `entry` and its port file, if they are still ours. */
  private releaseFiles(entry: WorkspaceEntry): void {
    try {
      if (entry.socketPath !== undefined && entry.socketIno !== undefined) unlinkOwnSocket(entry.socketPath, entry.socketIno);
    } catch (error) {
      this.log({ kind: 'warn', message: (error as Error).message });
    }
    if (entry.stateDir !== undefined && this.tcpPort !== undefined) removePortFile(entry.stateDir, this.tcpPort);
  }

  private *boundWorkspaces(): Iterable<WorkspaceBinding> {
    for (const entry of this.workspaces.values()) if (entry.binding !== undefined) yield entry.binding;
  }

  /**
   * Closes every listener, unlinks our sockets and port files. Tokens stay (never rotated). The
   * files go first, synchronously, before anything is awaited: the extension host may be killed
   * before a shutdown that waits finishes, and a socket left behind looks like a bridge to the
   * shims (the next hub sweeps such leftovers, sweep.ts).
   */
  async dispose(): Promise<void> {
    this.disposed = true;
    // A sound a container asked for does not outlive the window.
    stopSound();
    const entries = [...this.workspaces.values()];
    this.workspaces.clear();
    for (const entry of entries) entry.stopTakeover?.();
    for (const entry of entries) this.releaseFiles(entry);
    await Promise.all(entries.map((e) => e.ready.catch(() => undefined)));
    await Promise.all(
      entries.map(async (entry) => {
        if (entry.server === undefined) return;
        await closeServer(entry.server);
        // A start that was still running above has bound its socket since.
        this.releaseFiles(entry);
      }),
    );
    if (this.tcp !== undefined) {
      const tcp = await this.tcp.catch(() => undefined);
      if (tcp !== undefined) await closeServer(tcp.server);
    }
    this.credentials.flushRefusals();
    this.refusals.flush();
  }
}

/**
 * Takes the workspace's takeover lock (a directory in its state dir, which no container can
 * write): the release, or undefined while another window holds it. A lock older than `staleMs` is
 * one a window killed mid-takeover left, and is taken over.
 */
export function takeoverLock(stateDir: string, staleMs: number, now: () => number = Date.now): (() => void) | undefined {
  const path = join(stateDir, BRIDGE_FILES.takeoverLock);
  for (let attempt = 0; attempt < 2; attempt++) {
    try {
      mkdirSync(path, { mode: 0o700 });
      return () => rmSync(path, { recursive: true, force: true });
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
      let age: number;
      try {
        age = now() - statSync(path).mtimeMs;
      } catch {
        continue; // released between the two calls: try again
      }
      if (age < staleMs) return undefined;
      rmSync(path, { recursive: true, force: true });
    }
  }
  return undefined;
}
