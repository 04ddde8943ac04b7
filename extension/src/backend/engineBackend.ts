/**
 * The real ToolboxBackend: config → plan → engine, wired to VS Code settings and workspace
 * trust. The engine connection is made on first use, never at activation.
 */
import { join } from 'node:path';
import * as vscode from 'vscode';
import { loadConfig } from '../config/files';
import { formatIssue } from '../config/parse';
import { explicitSetting } from '../config/resolve';
import { connectEngine, type EngineConnection } from '../engine/client';
import { startShellExec } from '../engine/exec';
import { ensureImage } from '../engine/image';
import { extraCaCerts, runtimeImageTag } from '../engine/imageBuild';
import type { EngineContext } from '../engine/context';
import { listOwnedContainers, listToolboxContainers, stopAll, stopContainer } from '../engine/lifecycle';
import { inspectPeerState, readAgentSessions } from '../engine/peerState';
import { watchEngineEvents } from '../engine/events';
import { openContainer } from '../engine/open';
import { CONTAINER, ENV, HOST, HOST_DOCKER_INTERNAL } from '../contract/constants';
import { missingSocketVolume } from '../plan/drift';
import { planSession, sessionContainerName } from '../plan/session';
import { BridgeHub, type WorkspaceRegistration } from '../bridge/hub';
import { describeBridgeEvent } from '../bridge/log';
import type { EditorActions } from '../bridge/route';
import type { BridgeMount, HostFacts, ObjectNames } from '../contract/types';
import type { SessionRequest } from '../plan/types';
import { detectProximo } from '../proximo/facts';
import { findProximoBinary } from '../proximo/binary';
import type {
  ContainerKind,
  ContainerSummary,
  PreparedShell,
  SessionProgress,
  ShellCommand,
  ShellRequest,
  ShellSession,
  Snapshot,
  ToolboxBackend,
} from './api';

export interface EngineBackendDeps {
  names: ObjectNames;
  host: () => HostFacts;
  /** Directory holding images/runtime and shims: the runtime image's build context. */
  extensionPath: string;
  /** Extra image build args (tests: TOOLBOX_VSCODE_BUILD_ARGS, JSON). */
  buildArgs: Record<string, string>;
  /** Repository our runtime image is tagged in (tests use their own). */
  imageRepo?: string;
  log: vscode.LogOutputChannel;
  /** Serves the bridge for one container (BridgeHub.ensureWorkspace). */
  bridgeFor?: (registration: WorkspaceRegistration) => Promise<BridgeMount>;
}

/** Every toolbox shell's terminal type, as VS Code's integrated terminal renders it. */
const SHELL_ENV = ['TERM=xterm-256color', 'COLORTERM=truecolor'];

export class EngineBackend implements ToolboxBackend, vscode.Disposable {
  private connection: Promise<EngineConnection> | undefined;
  /** Custom images the preflight already checked (by image id), for this window's lifetime. */
  private readonly checkedImages = new Map<string, string[]>();

  constructor(private readonly deps: EngineBackendDeps) {}

  get names(): ObjectNames {
    return this.deps.names;
  }

  /** One connection per window, retried after a failure (Retry in the tree calls us again). */
  private async connectedEngine(): Promise<EngineContext> {
    if (!this.connection) {
      const setting = vscode.workspace.getConfiguration('toolbox').get<string>('dockerHost') ?? '';
      this.connection = connectEngine({ setting, env: process.env, home: this.deps.host().home });
      this.connection.then(
        (c) => this.deps.log.info(`Connected to Docker ${c.version} (API ${c.apiVersion}) at ${c.endpoint.endpoint}.`),
        () => (this.connection = undefined),
      );
    }
    const { docker } = await this.connection;
    return { docker, names: this.deps.names };
  }

  /** Forget the connection when the endpoint setting changes. */
  resetConnection(): void {
    this.connection = undefined;
  }

  private async readConfig(folder: string) {
    const host = this.deps.host();
    const scoped = vscode.workspace.getConfiguration('toolbox', vscode.Uri.file(folder));
    const trusted = vscode.workspace.isTrusted;
    // Only a value the user set counts; the default must not hide peer_messaging in .toolbox.yaml.
    const peerMessaging = explicitSetting(scoped.inspect<boolean>('peerMessaging'), trusted);
    return loadConfig({ folder, home: host.home, env: process.env, settings: { peerMessaging }, trusted });
  }

  async peerWanted(folder: string): Promise<boolean> {
    return (await this.readConfig(folder)).config.peerMessaging;
  }

  async prepareShell(shell: ShellRequest): Promise<PreparedShell> {
    const host = this.deps.host();
    const resolved = await this.readConfig(shell.folder);
    const warnings: string[] = [];
    for (const issue of resolved.issues) {
      const text = formatIssue(issue, host.home);
      if (issue.severity === 'error') throw new Error(text);
      warnings.push(text);
    }
    const config = resolved.config;
    const proximo =
      config.proximo === false ? undefined : await detectProximo({ home: host.home, env: process.env, log: (m) => this.deps.log.info(m) });
    // Our image's tag hashes the build context and the build args: work it out once per open.
    const ownImageBuildArgs = config.image === undefined ? this.imageBuildArgs() : undefined;
    const request: SessionRequest = {
      workspace: shell.folder,
      config,
      peer: shell.peer ?? config.peerMessaging,
      namedShell: shell.namedShell,
      proximo,
      image: ownImageBuildArgs ? runtimeImageTag(this.deps.extensionPath, ownImageBuildArgs, this.deps.imageRepo) : config.image!,
      names: this.deps.names,
    };
    const container = sessionContainerName(request);
    return {
      container,
      title: shell.namedShell ? `Toolbox: ${shell.namedShell}` : `Toolbox: ${container}`,
      warnings,
      projectFileIgnored: resolved.projectFileIgnored,
      open: (progress, signal) => this.openShell(request, ownImageBuildArgs, progress, signal),
    };
  }

  /** The bridge (keyed by the container's name, its mounts part of the plan), the plan, then the engine. */
  private async openShell(
    request: SessionRequest,
    ownImageBuildArgs: Record<string, string> | undefined,
    progress: SessionProgress,
    signal: AbortSignal,
  ): Promise<ShellSession> {
    const host = this.deps.host();
    const name = sessionContainerName(request);
    const bridge =
      request.config.bridge === false ? undefined : await this.bridge(name, request.workspace, host.home, request.proximo !== undefined);
    const { plan, warnings: planWarnings } = planSession({ ...request, bridge }, host);
    for (const w of planWarnings) this.deps.log.warn(w);
    const engine = await this.connectedEngine();
    const ctx = { ...engine, log: (line: string) => progress.log(line) };
    const opened = await openContainer(ctx, plan, {
      ensureImage: () =>
        ensureImage(ctx, {
          ref: plan.create.Image,
          pull: request.config.pull,
          ours: ownImageBuildArgs !== undefined,
          contextRoot: this.deps.extensionPath,
          buildArgs: ownImageBuildArgs,
          onLog: (line: string) => progress.log(line),
          signal,
          checkedImages: this.checkedImages,
        }),
      progress: (message: string) => progress.step(message),
      signal,
    });
    const command: ShellCommand = { cmd: plan.shellCmd, user: plan.create.User, workdir: plan.create.WorkingDir, env: SHELL_ENV };
    return {
      id: opened.id,
      name: opened.name,
      action: opened.action,
      peerActive: opened.peerActive,
      // Drift messages are already among the warnings (the engine picks the one to show).
      warnings: opened.warnings,
      command,
      start: ({ cols, rows }) => startShellExec(engine.docker, opened.id, { ...command, cols, rows }),
    };
  }

  /** The bridge for one container; a bridge that cannot start costs the shell its shims, not the shell. */
  private async bridge(key: string, folder: string, home: string, proximoEnabled: boolean): Promise<BridgeMount | undefined> {
    if (!this.deps.bridgeFor) return undefined;
    const root = join(home, HOST.mountsRoot);
    try {
      const b = await this.deps.bridgeFor({
        key,
        workspaceFolder: folder,
        mountsRoots: [root],
        proximoEnabled,
        defaultAgentHome: root,
        defaultCodexHome: join(root, '.codex'),
      });
      return { stateDir: b.stateDir, runDir: b.runDir };
    } catch (err) {
      this.deps.log.warn(
        `The bridge for ${key} could not start (${(err as Error).message}); the shell opens without it, so code, xdg-open and git credentials inside it will not reach this window.`,
      );
      return undefined;
    }
  }

  /**
   * Build args of our runtime image: the configured ones, plus the certificate authorities the
   * user added, so the build's downloads work behind a TLS-intercepting proxy: those in
   * ~/.toolbox/certs (upstream's certs dir) and, on Linux, the host's locally added ones
   * (/usr/local/share/ca-certificates, where such a proxy's CA is installed). A changed
   * certificate changes the tag and so rebuilds the image.
   */
  private imageBuildArgs(): Record<string, string> {
    const dirs = [join(this.deps.host().home, HOST.mountsRoot, 'certs')];
    if (process.platform === 'linux') dirs.push(HOST.localCaDir);
    const certs = dirs.map((d) => extraCaCerts(d, (line) => this.deps.log.warn(line))).filter((c) => c !== undefined);
    return certs.length ? { ...this.deps.buildArgs, EXTRA_CA_CERTS: certs.join('\n') } : this.deps.buildArgs;
  }

  async snapshot(): Promise<Snapshot> {
    const ctx = await this.connectedEngine();
    // One list (and one inspect per container) serves both the shells and the peer state.
    const owned = listOwnedContainers(ctx);
    const [listed, peer] = await Promise.all([listToolboxContainers(ctx, owned), inspectPeerState(ctx, owned)]);
    const containers = listed.map((c) => this.describe(c));
    const claudeHome = join(this.deps.host().home, HOST.mountsRoot, '.claude');
    const sessions = await readAgentSessions(claudeHome).catch(() => []);
    return {
      containers,
      anchor: { name: ctx.names.anchor, id: peer.anchor.id, state: peer.anchor.state },
      volume: { name: ctx.names.socketVolume, exists: peer.volume.exists, owner: peer.volume.owner, mode: peer.volume.mode },
      members: peer.members,
      sessions: sessions.map((s) => ({ pid: s.pid, name: s.name ?? s.sessionId, cwd: s.cwd })),
    };
  }

  /** Adds what the list endpoint lacks (mounts, env, extra hosts) from the inspect data. */
  private describe(c: Awaited<ReturnType<typeof listToolboxContainers>>[number]): ContainerSummary {
    const names = this.deps.names;
    const kind: ContainerKind = c.name === names.prefix ? 'legacy' : c.name.startsWith(`${names.prefix}-named-`) ? 'named' : 'workspace';
    const info = c.detail;
    const env = info.Config?.Env ?? [];
    const key = `${ENV.hostWorkspace}=`;
    const ws = env.find((e) => e.startsWith(key))?.slice(key.length);
    const hosts = ((info.HostConfig?.ExtraHosts ?? []) as string[])
      .map((h: string) => h.split(':')[0] ?? h)
      .filter((h) => h !== HOST_DOCKER_INTERNAL);
    return {
      id: c.id,
      name: c.name,
      state: c.state,
      status: c.status,
      image: c.image,
      kind,
      pidMode: c.pidMode,
      peer: c.peer,
      workspace: c.workspace ?? ws,
      mountsSocketVolume: !missingSocketVolume(info.Mounts, names),
      proximoCa: (info.Mounts ?? []).some((m) => m.Destination === CONTAINER.proximoCa),
      proximoHosts: hosts,
    };
  }

  async proximo() {
    const host = this.deps.host();
    const binary = findProximoBinary({ pathEnv: process.env.PATH, home: host.home });
    const facts = await detectProximo({ home: host.home, env: process.env });
    return { installed: binary !== undefined, binary, caPath: facts?.caPath, hosts: facts?.hosts ?? [] };
  }

  async stopContainer(name: string): Promise<void> {
    await stopContainer(await this.connectedEngine(), name);
  }

  async stopAll(): Promise<string[]> {
    return stopAll(await this.connectedEngine());
  }

  async watchEvents(onEvent: () => void, onError: (err: Error) => void): Promise<vscode.Disposable> {
    const { docker } = await this.connectedEngine();
    const names = this.deps.names;
    const watch = watchEngineEvents({
      connect: async () => docker,
      onEvent: (e) => {
        if (e.name === undefined || names.isOurs(e.name)) onEvent();
      },
      onStateChange: (state, err) => {
        if (err) onError(err);
        if (state === 'connected') onEvent();
      },
    });
    return { dispose: () => watch.dispose() };
  }

  dispose(): void {
    this.connection = undefined;
  }
}

export interface CreateEngineBackendOptions extends Omit<EngineBackendDeps, 'bridgeFor'> {
  /** The bridge's /edit and /open land in this window. */
  editor: EditorActions;
}

/**
 * The backend with its bridge hub. The hub listens only once a shell needs it, and is shut
 * down with the backend.
 */
export function createEngineBackend(options: CreateEngineBackendOptions): EngineBackend & vscode.Disposable {
  let hub: BridgeHub | undefined;
  const { editor, ...deps } = options;
  const backend = new EngineBackend({
    ...deps,
    bridgeFor: (registration) =>
      (hub ??= new BridgeHub({
        home: deps.host().home,
        log: (event) => {
          const { level, text } = describeBridgeEvent(event);
          deps.log[level](text);
        },
        openInEditor: editor.openInEditor,
        openExternal: editor.openExternal,
      })).ensureWorkspace(registration),
  });
  const dispose = backend.dispose.bind(backend);
  backend.dispose = () => {
    dispose();
    void hub?.dispose();
  };
  return backend;
}
