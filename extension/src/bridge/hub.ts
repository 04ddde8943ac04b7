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
import { readFileSync } from 'node:fs';
import { chmod } from 'node:fs/promises';
import type { Server } from 'node:http';
import { join } from 'node:path';
import { BRIDGE_DEFAULT_PORT, BRIDGE_FILES, RATE_LIMITS } from '../contract/constants';
import type { BridgeMount } from '../contract/types';
import { TokenBucket } from './gate';
import { probeHealthz } from './healthz';
import type { BucketRates, EditorActions, RouteDeps, WorkspaceBinding } from './route';
import { createBridgeServer, type BridgeLog, type ListenerScope } from './server';
import {
  assertSocketPathFits,
  chooseRunDir,
  ensurePrivateDir,
  ensureToken,
  removePortFile,
  unlinkSocket,
  workspaceStateDir,
  writePortFile,
} from './state';

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
}

export interface WorkspaceRegistration {
  /** The container name. */
  key: string;
  workspaceFolder: string;
  /** Host roots /edit may open besides the workspace folder. */
  mountsRoots: string[];
  proximoEnabled: boolean;
  /** Default HOME / CODEX_HOME for `proximo skill` (the mounts root and its .codex). */
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
  /** Set once we bound the socket ourselves (so dispose unlinks it). */
  server?: Server;
  socketPath?: string;
  stateDir?: string;
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
  private readonly deps: RouteDeps;
  private readonly log: BridgeLog;

  constructor(private readonly options: BridgeHubOptions) {
    this.log = options.log ?? (() => undefined);
    this.deps = {
      home: options.home,
      env: options.env ?? process.env,
      openInEditor: options.openInEditor,
      openExternal: options.openExternal,
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
    const existing = this.workspaces.get(registration.key);
    if (existing !== undefined) {
      if (existing.binding !== undefined) Object.assign(existing.binding, this.settingsOf(registration));
      return existing.ready;
    }
    const entry = {} as WorkspaceEntry;
    entry.ready = this.startWorkspace(registration, entry);
    this.workspaces.set(registration.key, entry);
    entry.ready.catch(() => this.workspaces.delete(registration.key));
    return entry.ready;
  }

  private settingsOf(r: WorkspaceRegistration): Omit<WorkspaceBinding, 'key' | 'token' | 'buckets'> {
    return {
      workspaceFolder: r.workspaceFolder,
      mountsRoots: [...r.mountsRoots],
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
    ensurePrivateDir(choice.parent, uid);
    ensurePrivateDir(choice.runDir, uid);

    // Another window, or the toolbox CLI's daemon, may already serve this state dir: use it.
    for (const socketPath of [choice.socketPath, join(stateDir, BRIDGE_FILES.runDir, BRIDGE_FILES.socket)]) {
      if (await probeHealthz(socketPath)) {
        this.log({
          kind: 'info',
          message:
            `A bridge is already serving ${stateDir} on ${socketPath} (another VS Code window or the toolbox ` +
            `CLI's daemon); workspace ${registration.key} uses it instead of starting a second one.`,
        });
        const runDir = join(socketPath, '..');
        return { stateDir, runDir, socketPath, port: readPortFile(stateDir), reused: true };
      }
    }

    const rates = this.options.rateLimits ?? RATE_LIMITS;
    const now = this.options.now ?? Date.now;
    const binding: WorkspaceBinding = {
      key: registration.key,
      token,
      ...this.settingsOf(registration),
      buckets: { shared: new TokenBucket(rates.shared, now), credential: new TokenBucket(rates.credential, now) },
    };

    assertSocketPathFits(choice.socketPath, platform);
    unlinkSocket(choice.socketPath); // stale: nothing answered on it
    const scope: ListenerScope = { transport: 'unix', port: () => undefined, workspaces: () => [binding] };
    const server = createBridgeServer(scope, this.deps, this.log);
    try {
      await listen(server, choice.socketPath);
      await chmod(choice.socketPath, 0o600);
    } catch (error) {
      await closeServer(server);
      throw new Error(`The bridge could not listen on ${choice.socketPath}: ${(error as Error).message}`, { cause: error });
    }
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
      const preferred = this.options.port ?? BRIDGE_DEFAULT_PORT;
      try {
        await listen(server, preferred);
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code !== 'EADDRINUSE') throw error;
        this.log({ kind: 'info', message: `127.0.0.1:${preferred} is taken; the bridge uses an ephemeral loopback port.` });
        await listen(server, 0);
      }
      const address = server.address();
      if (address === null || typeof address === 'string') throw new Error('The bridge TCP listener has no port.');
      this.tcpPort = address.port;
      return { server, port: address.port };
    })();
    return this.tcp.then((t) => t.port);
  }

  private *boundWorkspaces(): Iterable<WorkspaceBinding> {
    for (const entry of this.workspaces.values()) if (entry.binding !== undefined) yield entry.binding;
  }

  /** Closes every listener, unlinks our sockets and port files. Tokens stay (never rotated). */
  async dispose(): Promise<void> {
    this.disposed = true;
    const entries = [...this.workspaces.values()];
    this.workspaces.clear();
    await Promise.all(entries.map((e) => e.ready.catch(() => undefined)));
    await Promise.all(
      entries.map(async (entry) => {
        if (entry.server === undefined) return;
        await closeServer(entry.server);
        try {
          if (entry.socketPath !== undefined) unlinkSocket(entry.socketPath);
        } catch (error) {
          this.log({ kind: 'warn', message: (error as Error).message });
        }
        if (entry.stateDir !== undefined && this.tcpPort !== undefined) removePortFile(entry.stateDir, this.tcpPort);
      }),
    );
    if (this.tcp !== undefined) {
      const tcp = await this.tcp.catch(() => undefined);
      if (tcp !== undefined) await closeServer(tcp.server);
    }
  }
}
