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
import { listOwnedContainers, listToolboxContainers, stopAll, stopContainer, type EngineContext } from '../engine/lifecycle';
import { inspectPeerState, readAgentSessions } from '../engine/peerState';
import { watchEngineEvents } from '../engine/events';
import { openSession } from '../engine/workspace';
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
import type { FolderPlan, OpenedSession, SessionProgress, ShellRequest, Snapshot, ToolboxBackend } from './api';
import type { ContainerKind, ContainerSummary } from '../ui/model';
import type { ShellStarter } from '../ui/terminal';

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

export class EngineBackend implements ToolboxBackend, vscode.Disposable {
  private connection: Promise<EngineConnection> | undefined;
  /** Custom images the preflight already checked (by image id), for this window's lifetime. */
  private readonly checkedImages = new Map<string, string[]>();

  constructor(private readonly deps: EngineBackendDeps) {}

  get names(): ObjectNames {
    return this.deps.names;
  }

  /** One connection per window, retried after a failure (Retry in the tree calls us again). */
  private async engine(): Promise<EngineContext> {
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

  private async config(folder: string) {
    const host = this.deps.host();
    const scoped = vscode.workspace.getConfiguration('toolbox', vscode.Uri.file(folder));
    const trusted = vscode.workspace.isTrusted;
    // Only a value the user set counts; the default must not hide peer_messaging in .toolbox.yaml.
    const peerMessaging = explicitSetting(scoped.inspect<boolean>('peerMessaging'), trusted);
    return loadConfig({ folder, home: host.home, env: process.env, settings: { peerMessaging }, trusted });
  }

  async peerWanted(folder: string): Promise<boolean> {
    return (await this.config(folder)).config.peerMessaging;
  }

  async planShell(shell: ShellRequest): Promise<FolderPlan> {
    const host = this.deps.host();
    const resolved = await this.config(shell.folder);
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
    // The bridge is keyed by the container's name, and its mounts are part of the plan.
    const bridge =
      config.bridge === false
        ? undefined
        : await this.bridge(sessionContainerName(request), shell.folder, host.home, proximo !== undefined);
    const { plan, warnings } = planSession({ ...request, bridge }, host);
    const problems = resolved.issues.map((i) => ({ error: i.severity === 'error', text: formatIssue(i, host.home) }));
    return { resolved, problems, plan, warnings, ownImageBuildArgs };
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

  async openSession(prepared: FolderPlan, progress: SessionProgress, signal: AbortSignal): Promise<OpenedSession> {
    const plan = prepared.plan;
    const engine = await this.engine();
    const ctx = { ...engine, log: (line: string) => progress.log(line), checkedImages: this.checkedImages };
    const result = await openSession(ctx, plan, {
      ensureImage: () =>
        ensureImage(ctx, {
          ref: plan.create.Image,
          pull: prepared.resolved.config.pull,
          ours: prepared.ownImageBuildArgs !== undefined,
          contextRoot: this.deps.extensionPath,
          buildArgs: prepared.ownImageBuildArgs,
          onLog: (line: string) => progress.log(line),
          signal,
        }),
      progress: (message: string) => progress.step(message),
      signal,
    });
    return {
      id: result.id,
      name: result.name,
      action: result.action,
      peerActive: result.peerActive,
      // Drift messages are already among the warnings (the engine picks the one to show).
      warnings: result.warnings,
    };
  }

  async shellStarter(containerId: string): Promise<ShellStarter> {
    const { docker } = await this.engine();
    return (options) => startShellExec(docker, containerId, options);
  }

  async snapshot(): Promise<Snapshot> {
    const ctx = await this.engine();
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
    await stopContainer(await this.engine(), name);
  }

  async stopAll(): Promise<string[]> {
    return stopAll(await this.engine());
  }

  async watchEvents(onEvent: () => void, onError: (err: Error) => void): Promise<vscode.Disposable> {
    const { docker } = await this.engine();
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
