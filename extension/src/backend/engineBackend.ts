/**
 * The real ToolboxBackend: config → plan → engine, wired to VS Code settings and workspace
 * trust. The engine connection is made on first use, never at activation.
 */
import { lstatSync, promises as fsp } from 'node:fs';
import { hostname } from 'node:os';
import { basename, dirname, join, resolve } from 'node:path';
import * as vscode from 'vscode';
import {
  findProjectConfig,
  loadConfig,
  nodeConfigFs,
  pinUserPeerMessaging,
  processOwner,
  withProjectFile,
  writeConfigFile,
  type ConfigFs,
} from '../config/files';
import { applyTurnOff, setPeerMessaging, setShellPath } from '../config/edit';
import { formatIssue, parseConfigFile } from '../config/parse';
import { explicitSetting, explicitSettingScope, type SettingScope } from '../config/resolve';
import { PEER_MESSAGING_ENV } from '../config/env';
import { issuesForOpen } from '../config/openIssues';
import { configProblems, type ConfigProblem } from '../config/diagnostics';
import { renderResolvedConfig } from '../config/showConfig';
import { connectEngine, describeConnection, describeSource, probeEngines, type EngineConnection } from '../engine/client';
import { raceAbort } from '../engine/containers';
import { startShellExec } from '../engine/exec';
import { ensureImage, imageStartsHolder } from '../engine/image';
import { extraCaCerts, publishedRuntimeImageRef, runtimeImageTag } from '../engine/imageBuild';
import { rebuildRuntimeImage } from '../engine/imageRebuild';
import type { EngineContext } from '../engine/context';
import { listOwnedContainers, listToolboxContainers, removeIfIdle, stopAll, stopContainer } from '../engine/lifecycle';
import {
  attachHeldSession,
  holderAddress,
  HolderUnavailableError,
  killHeldSession,
  listHeldSessions,
  reachHolder,
  SessionEndedError,
  socketTransport,
  startHeldSession,
  type HolderAddress,
  type HolderTransport,
} from '../engine/sessions';
import { inboxSocketPresence, inspectPeerState, readAgentSessions } from '../engine/peerState';
import { concernsOurObjects, watchEngineEvents } from '../engine/events';
import { openContainer } from '../engine/open';
import { engineLocality, remoteFolderRefusal, type EngineLocality } from '../engine/remote';
import { throwIfAborted } from '../engine/errors';
import {
  AGENTS,
  CONTAINER,
  ENV,
  HOST,
  HOST_DOCKER_INTERNAL,
  RUNTIME_IMAGE_TEST_REPO,
  SECCOMP_PROFILES,
  SETTINGS,
} from '../contract/constants';
import { missingSocketVolume, openDriftNotice, peerRunOf } from '../plan/drift';
import { agentHomes, editRoots, patchableMountNames, validateWorkspaceBindPath } from '../plan/mounts';
import { cleanPath, namedShellName } from '../plan/naming';
import { listConfiguredShells, namedShellFolder, shellKeyIn, type PathKind } from '../plan/namedShell';
import { parsePublishSpecs, publishedPorts } from '../plan/publish';
import { planSession, sessionContainerName } from '../plan/session';
import { workspaceContainerName } from '../plan/naming';
import { agentLaunchCommand, describeShellCommand, worktreeAgentProblem } from '../plan/worktree';
import {
  addWorktree,
  checkWorktreeCreate,
  makeWorktreeFolder,
  fileAtRef,
  listWorktrees,
  pruneMerged,
  removalRisk,
  removeWorktree,
  repositoryRoot,
  resolveWorktree,
  rollbackCreate,
  syncWorktree,
  worktreeChanges,
  fileAtCommit,
} from '../host/worktree';
import { hostReach, reachTitle, tildePath, turnOffChange, type HostReach } from '../plan/posture';
import { peerReach } from '../plan/peerReach';
import { BridgeHub, type CredentialConsentOptions, type WorkspaceRegistration } from '../bridge/hub';
import { describeBridgeEvent } from '../bridge/log';
import type { EditorActions } from '../bridge/route';
import type { BridgeMount, HostFacts, ObjectNames, SeccompProfile } from '../contract/types';
import type { PlannedMount, SessionRequest } from '../plan/types';
import { detectProximo } from '../proximo/facts';
import { findProximoBinary } from '../proximo/binary';
import type {
  AgentWorktreeChanges,
  AgentWorktreePruned,
  AgentWorktreeRef,
  AgentWorktreeRemoved,
  AgentWorktreeRisk,
  AgentWorktreeSummary,
  AgentWorktreeOpened,
  AgentWorktreeRequest,
  ContainerKind,
  ContainerSummary,
  EngineChoice,
  NamedShellCreatePlan,
  NamedShellEntry,
  PeerSetting,
  PeerSettingSource,
  PreparedShell,
  SeccompSetting,
  RebuildSummary,
  SessionProgress,
  SessionRecord,
  ShellCommand,
  ShellRequest,
  ShellSession,
  Snapshot,
  StartedShell,
  TerminalSize,
  ToolboxBackend,
  TurnOffPlan,
} from './api';
import { SessionGoneError } from './api';

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
/** How long a New Agent Worktree made while its task was typed waits for it before it is removed again. */
const TASK_WAIT_MS = 30 * 60_000;

/** A project .toolbox.yaml's text before an edit (undefined when empty); a file we may not read throws. */
async function readProjectFile(path: string, home: string): Promise<string | undefined> {
  const read = await nodeConfigFs.read(path, processOwner());
  if (read.kind === 'refused') throw new Error(`${tildePath(path, home)} ${read.why}`);
  return read.kind === 'text' ? read.text : undefined;
}

/** What is at `path`, a final symlink not followed (upstream's named-shell check uses Lstat). */
function lstatKind(path: string): PathKind {
  try {
    const st = lstatSync(path);
    return st.isSymbolicLink() ? 'symlink' : st.isDirectory() ? 'directory' : 'file';
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return 'missing';
    throw new Error(`stat ${path}: ${(err as Error).message}`, { cause: err });
  }
}

/** The holder's answer that the session is over, as the SessionGoneError the UI reports once. */
function throwIfSessionGone(err: Error, record: SessionRecord): void {
  if (err instanceof SessionEndedError) {
    throw new SessionGoneError(
      `The shell "${record.title}" in ${record.container} ended while the window was closed (exit code ${err.exitCode}).`,
    );
  }
  if (err instanceof HolderUnavailableError && /no session/.test(err.message)) {
    throw new SessionGoneError(`The shell "${record.title}" in ${record.container} is gone (${err.message}).`);
  }
}

/**
 * The shell's environment: the terminal type, and the plan's SHELL again, so that a shell in a
 * container created before the plan set SHELL (or by the CLI, which sets none) has it too.
 */
function shellEnv(create: { Env: string[] }): string[] {
  const shell = create.Env.find((e) => e.startsWith(`${ENV.shell}=`));
  return shell === undefined ? SHELL_ENV : [...SHELL_ENV, shell];
}

export class EngineBackend implements ToolboxBackend, vscode.Disposable {
  private connection: Promise<EngineConnection> | undefined;
  /** Whether the connected engine is on another machine (asked once per connection). */
  private locality: Promise<EngineLocality> | undefined;
  /** Custom images the preflight already checked (by image id), for this window's lifetime. */
  private readonly checkedImages = new Map<string, string[]>();
  /** What each prepared shell plans from (prepareShell), so a New Agent Worktree can tell its configuration changed. */
  private readonly planKeys = new WeakMap<PreparedShell, string>();
  /** How each container's session holder was reached (by container id), for this window. */
  private readonly transports = new Map<string, HolderTransport>();
  /** Containers whose shells were said to run as plain execs (said once per window). */
  private readonly plainNoticeGiven = new Set<string>();
  /** A container's pending "remove it if idle" check (by name): an open waits for it. */
  private readonly endings = new Map<string, Promise<unknown>>();
  /** The bridge registration of each container this window planned, by container name. */
  private readonly registrations = new Map<string, WorkspaceRegistration>();

  constructor(private readonly deps: EngineBackendDeps) {}

  get names(): ObjectNames {
    return this.deps.names;
  }

  /** One connection per window, retried after a failure (Retry in the tree calls us again). */
  private async connectedEngine(): Promise<EngineContext> {
    if (!this.connection) {
      const setting = vscode.workspace.getConfiguration('toolbox').get<string>('dockerHost') ?? '';
      const connection = connectEngine({ setting, env: process.env, home: this.deps.host().home });
      this.connection = connection;
      this.locality = undefined;
      connection.then(
        (c) => this.deps.log.info(`Connected to ${describeConnection(c)}, API ${c.apiVersion}.`),
        () => {
          if (this.connection === connection) this.connection = undefined;
        },
      );
    }
    const { docker } = await this.connection;
    return { docker, names: this.deps.names };
  }

  async engineChoices(): Promise<EngineChoice[]> {
    const setting = vscode.workspace.getConfiguration('toolbox').get<string>('dockerHost') ?? '';
    const current = await this.connection?.catch(() => undefined);
    const probes = await probeEngines({ setting, env: process.env, home: this.deps.host().home });
    return probes.map((p) => ({
      endpoint: p.endpoint.endpoint,
      source: describeSource(p.endpoint.source),
      ...(p.version ? { version: `${p.product ?? 'Docker'} ${p.version} (API ${p.apiVersion ?? '?'})` } : {}),
      ...(p.problem ? { problem: p.problem } : {}),
      current: current?.endpoint.endpoint === p.endpoint.endpoint,
    }));
  }

  /** Forget the connection when the endpoint setting changes (shells running over it go on). */
  resetConnection(): void {
    this.closeConnection({ whenIdle: true });
  }

  private closeConnection(options?: { whenIdle?: boolean }): void {
    const old = this.connection;
    this.connection = undefined;
    this.locality = undefined;
    old?.then((c) => c.close(options)).catch(() => undefined);
  }

  /**
   * Whether the engine is on another machine: for ssh:// and tcp:// endpoints, its GET /info
   * Name against os.hostname() (engine/remote.ts). Asked once per connection.
   */
  private async engineLocality(): Promise<EngineLocality> {
    const { docker } = await this.connectedEngine();
    const connection = await this.connection!;
    if (!this.locality) {
      const endpoint = connection.endpoint;
      this.locality = (
        endpoint.options.socketPath !== undefined
          ? Promise.resolve(undefined)
          : docker.info().then((i: { Name?: unknown }) => (typeof i.Name === 'string' ? i.Name : undefined))
      ).then((name) => {
        const locality = engineLocality(endpoint, name, hostname());
        if (locality.remote) this.deps.log.info(`The engine at ${endpoint.endpoint} runs on ${locality.engineHost}, not on this machine.`);
        return locality;
      });
      this.locality.catch(() => (this.locality = undefined));
    }
    return this.locality;
  }

  /**
   * Refuses, before anything is made, an open of a folder on this machine while the engine runs
   * on another (docs/decisions/0035-remote-engine-refuses-local-folders.md).
   */
  private async refuseIfEngineRemote(folder: string): Promise<void> {
    const locality = await this.engineLocality();
    if (!locality.remote) return;
    const { endpoint } = await this.connection!;
    throw new Error(remoteFolderRefusal(folder, endpoint.endpoint, locality));
  }

  private async readConfig(folder: string, fs?: ConfigFs) {
    const host = this.deps.host();
    const scoped = vscode.workspace.getConfiguration('toolbox', vscode.Uri.file(folder));
    const trusted = vscode.workspace.isTrusted;
    // Only a value the user set counts; the default must not hide peer_messaging in .toolbox.yaml.
    const peerMessaging = explicitSetting(scoped.inspect<boolean>('peerMessaging'), trusted);
    return loadConfig({ folder, home: host.home, env: process.env, settings: { peerMessaging }, trusted, ...(fs ? { fs } : {}) });
  }

  async resolvedConfigText(folder: string): Promise<string> {
    const resolved = await this.readConfig(folder);
    const scope = this.peerSettingScope(folder);
    return renderResolvedConfig(resolved, {
      folder,
      home: this.deps.host().home,
      settingScopes: scope ? { [SETTINGS.peerMessaging]: scope } : {},
    });
  }

  async configProblems(file: string, text: string): Promise<ConfigProblem[]> {
    return configProblems(text, file, { home: this.deps.host().home, knownMounts: patchableMountNames() });
  }

  /**
   * The folder's `toolbox.seccomp` (no .toolbox.yaml key: upstream has none). Workspace and folder
   * values count only in a trusted workspace, as for peerMessaging; anything unknown is the default.
   */
  private seccompFor(folder: string): SeccompProfile {
    return this.readSeccompSetting(folder).profile;
  }

  async seccompSetting(folder: string): Promise<SeccompSetting> {
    return this.readSeccompSetting(folder);
  }

  private readSeccompSetting(folder: string): SeccompSetting {
    const inspected = vscode.workspace.getConfiguration('toolbox', vscode.Uri.file(folder)).inspect<string>('seccomp');
    const trusted = vscode.workspace.isTrusted;
    const value = explicitSetting(inspected, trusted);
    if (!(SECCOMP_PROFILES as readonly string[]).includes(value ?? '')) return { profile: 'unconfined' };
    const scope = explicitSettingScope(inspected, trusted);
    // In a single-folder window the workspace settings are the folder's .vscode/settings.json.
    const where = scope === 'workspace' && !vscode.workspace.workspaceFile ? 'folder' : scope;
    return { profile: value as SeccompProfile, ...(where ? { scope: where } : {}) };
  }

  async peerWanted(folder: string): Promise<boolean> {
    return (await this.readConfig(folder)).config.peerMessaging;
  }

  /** Where the folder's toolbox.peerMessaging value was set, when the user set one. */
  private peerSettingScope(folder: string): SettingScope | undefined {
    const scoped = vscode.workspace.getConfiguration('toolbox', vscode.Uri.file(folder));
    const scope = explicitSettingScope(scoped.inspect<boolean>('peerMessaging'), vscode.workspace.isTrusted);
    // In a single-folder window the workspace settings are the folder's .vscode/settings.json.
    return scope === 'workspace' && !vscode.workspace.workspaceFile ? 'folder' : scope;
  }

  async peerSetting(folder: string): Promise<PeerSetting> {
    const home = this.deps.host().home;
    const resolved = await this.readConfig(folder);
    const trusted = vscode.workspace.isTrusted;
    const projectFile = findProjectConfig(folder, home);
    let source: PeerSettingSource;
    switch (resolved.peerMessagingFrom) {
      case 'default':
        source = { from: 'default' };
        break;
      case 'user-file':
        source = { from: 'user-file', file: join(home, HOST.userConfig) };
        break;
      case 'project-file':
        source = { from: 'project-file', file: projectFile ?? join(folder, HOST.projectConfig) };
        break;
      case 'env':
        source = { from: 'env', variable: PEER_MESSAGING_ENV };
        break;
      case 'setting':
        source = { from: 'setting', scope: this.peerSettingScope(folder) ?? 'user' };
        break;
    }
    return { on: resolved.config.peerMessaging, source, ...(projectFile ? { projectFile } : {}), projectFileUsable: trusted };
  }

  async writeProjectPeerMessaging(folder: string, on: boolean): Promise<string> {
    const home = this.deps.host().home;
    if (!vscode.workspace.isTrusted) {
      throw new Error(
        'This workspace is not trusted, so its .toolbox.yaml is ignored. Trust the workspace first (Workspaces: Manage Workspace Trust).',
      );
    }
    const existing = findProjectConfig(folder, home);
    const file = existing ?? join(folder, HOST.projectConfig);
    const before = existing === undefined ? undefined : await readProjectFile(existing, home);
    let text: string;
    try {
      text = setPeerMessaging(before ?? '', on, 'Peer messaging for this folder, set in the Toolbox view (the toolbox CLI reads it too).');
    } catch (err) {
      throw new Error(`${tildePath(file, home)} was not changed: ${(err as Error).message}.`, { cause: err });
    }
    const check = parseConfigFile(text, file, { home }).issues.find((i) => i.severity === 'error');
    if (check) throw new Error(`The edit would break ${tildePath(file, home)} (${formatIssue(check, home)}); nothing was written.`);
    await writeConfigFile(file, text, before);
    this.deps.log.info(`Peer messaging ${on ? 'on' : 'off'} for ${folder}: wrote peer_messaging: ${on} into ${file}.`);
    return file;
  }

  async namedShells(folder: string): Promise<NamedShellEntry[]> {
    const resolved = await this.readConfig(folder);
    return listConfiguredShells(resolved.config.shells);
  }

  async prepareNamedShellCreate(folder: string, name: string, path: string): Promise<NamedShellCreatePlan> {
    const home = this.deps.host().home;
    // The CLI's name rules (throws its refusal), then an absolute path Docker can bind.
    namedShellName(name, { peer: false }, this.deps.names);
    // The shell would be refused on an engine on another machine: say so before writing anything
    // (with no engine at all the entry is still worth writing, so only a known remote one stops it).
    const locality = await this.engineLocality().catch((): EngineLocality => ({ remote: false }));
    if (locality.remote) throw new Error(remoteFolderRefusal(path.trim() || folder, (await this.connection!).endpoint.endpoint, locality));
    const wanted = path.trim();
    if (!wanted.startsWith('/')) throw new Error(`The folder "${wanted}" is not an absolute path. Give its full path, starting with /.`);
    const target = cleanPath(wanted);
    validateWorkspaceBindPath(target);
    const kind = lstatKind(target);
    if (kind === 'symlink') {
      throw new Error(`${target} is a symbolic link; the toolbox CLI refuses those for a named shell. Give the folder it points to.`);
    }
    if (kind === 'file') throw new Error(`${target} is a file, not a folder.`);
    const file = join(home, HOST.userConfig);
    const read = await nodeConfigFs.read(file, processOwner());
    if (read.kind === 'refused') throw new Error(`${tildePath(file, home)} ${read.why}`);
    const exists = read.kind !== 'missing';
    const before = read.kind === 'text' ? read.text : undefined;
    let edit: { text: string; key: string };
    try {
      edit = setShellPath(exists ? (before ?? '') : undefined, (keys) => shellKeyIn(keys, name), target);
    } catch (err) {
      throw new Error(`${tildePath(file, home)} was not changed: ${(err as Error).message}.`, { cause: err });
    }
    const check = parseConfigFile(edit.text, file, { home }).issues.find((i) => i.severity === 'error');
    if (check) throw new Error(`The edit would break ${tildePath(file, home)} (${formatIssue(check, home)}); nothing was written.`);
    return {
      file,
      creates: !exists,
      key: edit.key,
      path: target,
      block: `shells:\n  ${edit.key}:\n    path: ${target}`,
      createsFolder: kind === 'missing',
      apply: async () => {
        // The folder first: ~/.toolbox.yaml never names a folder that could not be made.
        if (kind === 'missing') await fsp.mkdir(target, { recursive: true, mode: 0o755 });
        await writeConfigFile(file, edit.text, before);
        this.deps.log.info(`Named shell "${edit.key}" (${folder}): wrote shells.${edit.key}.path: ${target} into ${file}.`);
      },
    };
  }

  async pinUserPeerMessaging(on: boolean): Promise<string> {
    const file = await pinUserPeerMessaging(
      this.deps.host().home,
      on,
      'Peer messaging, pinned from Toolbox for VS Code so the toolbox CLI and the editor open the same containers.',
    );
    this.deps.log.info(
      `Peer messaging pinned ${on ? 'on' : 'off'} for both the CLI and the editor: wrote peer_messaging: ${on} into ${file}.`,
    );
    return file;
  }

  async prepareShell(shell: ShellRequest): Promise<PreparedShell> {
    return this.prepareShellWith(shell);
  }

  /** prepareShell, reading the configuration through `configFs` (a New Agent Worktree's checkout to come). */
  private async prepareShellWith(shell: ShellRequest, configFs?: ConfigFs): Promise<PreparedShell> {
    const host = this.deps.host();
    const resolved = await this.readConfig(shell.folder, configFs);
    // A broken project .toolbox.yaml (or TOOLBOX_* variable) stops the open here, naming file:line and the fix.
    const { warnings, notices } = issuesForOpen(resolved.issues, host.home);
    const config = resolved.config;
    // A named shell works in its configured path, whatever folder asked (upstream cmd/shell_named.go);
    // the name's own rules first, then the lookup (plan/namedShell.ts refuses with upstream's text).
    let workspace = shell.folder;
    if (shell.namedShell !== undefined && shell.namedShell.trim() !== '') {
      workspace = namedShellFolder(shell.namedShell, config.shells, host.home, lstatKind, this.deps.names);
    }
    const proximo =
      config.proximo === false ? undefined : await detectProximo({ home: host.home, env: process.env, log: (m) => this.deps.log.info(m) });
    // Our image's tag hashes the build context and the build args: work it out once per open.
    const ownImageBuildArgs = config.image === undefined ? this.imageBuildArgs() : undefined;
    const request: SessionRequest = {
      workspace,
      config,
      peer: shell.peer ?? config.peerMessaging,
      peerOverride: shell.peer !== undefined,
      namedShell: shell.namedShell,
      seccomp: this.seccompFor(shell.folder),
      ...(shell.ports?.length ? { ports: parsePublishSpecs(shell.ports) } : {}),
      proximo,
      image: ownImageBuildArgs ? runtimeImageTag(this.deps.extensionPath, ownImageBuildArgs, this.deps.imageRepo) : config.image!,
      names: this.deps.names,
      heldSessions: this.persistSessions(),
    };
    // The first shell's command, made when that shell starts: a worktree's task may still be typed.
    let firstCommand: (() => Promise<string[]>) | undefined;
    let first: string | undefined;
    if (shell.worktree) {
      // The agent key, as upstream's worktree create: claude unless set; only claude or codex.
      const agent = config.agent ?? 'claude';
      const problem = worktreeAgentProblem(agent);
      if (problem) throw new Error(problem);
      request.worktreeRoot = shell.worktree.root;
      const prompt = shell.worktree.prompt;
      firstCommand = async () => agentLaunchCommand(agent, await prompt);
      first = agent;
    } else if (shell.agent) {
      // Start Claude Code / Start Codex: the agent first, an interactive shell when it exits.
      const command = agentLaunchCommand(AGENTS[shell.agent].command, undefined);
      firstCommand = async () => command;
      first = shell.agent;
    }
    const container = sessionContainerName(request);
    // The terminal's name says which folder it works in (the UI numbers a second one).
    const base = shell.namedShell ? `Toolbox: ${shell.namedShell}` : `Toolbox: ${basename(shell.folder) || container}`;
    const title = shell.agent ? `${base} · ${AGENTS[shell.agent].name}` : base;
    const prepared: PreparedShell = {
      container,
      title,
      warnings,
      notices,
      projectFileIgnored: resolved.projectFileIgnored,
      // The window folder, not a named shell's configured path: held shells come back per window folder (ui/sessionStore.ts).
      open: (progress, signal) => this.openShell(request, ownImageBuildArgs, title, progress, signal, shell.folder, firstCommand),
    };
    // Everything the open plans from: two prepares with the same key open the same container.
    this.planKeys.set(prepared, JSON.stringify({ ...request, names: request.names.prefix, title, first, warnings, notices }));
    return prepared;
  }

  /** The bridge (keyed by the container's name, its mounts part of the plan), the plan, then the engine. */
  private async openShell(
    request: SessionRequest,
    ownImageBuildArgs: Record<string, string> | undefined,
    title: string,
    progress: SessionProgress,
    signal: AbortSignal,
    windowFolder: string = request.workspace,
    firstCommand?: () => Promise<string[]>,
  ): Promise<ShellSession> {
    const host = this.deps.host();
    const name = sessionContainerName(request);
    // A folder on this machine cannot be mounted by an engine on another: say so before the bridge or anything else starts.
    progress.step('Connecting to Docker');
    await this.refuseIfEngineRemote(request.workspace);
    // What the bridge may open and which agent homes proximo skill may use come from the
    // container's other mounts: a preview plan (bridge mounts stubbed) tells them before it starts.
    if (request.config.bridge !== false) progress.step('Starting the bridge for the container');
    const bridge =
      request.config.bridge === false
        ? undefined
        : await this.bridge(
            name,
            request.workspace,
            host.home,
            request.proximo !== undefined,
            planSession({ ...request, bridge: { stateDir: '/bridge-preview', runDir: '/bridge-preview/run' } }, host).plan.mounts,
            request.worktreeRoot,
          );
    const { plan, warnings: planWarnings } = planSession({ ...request, bridge }, host);
    // /credential never runs git config from what the container can write: tell the bridge.
    await this.updateWritableRoots(
      plan.name,
      plan.mounts.filter((m) => m.type === 'bind' && !m.readonly).map((m) => m.source),
    );
    for (const w of planWarnings) this.deps.log.warn(w);
    const engine = await this.connectedEngine();
    const ctx = { ...engine, log: (line: string) => progress.log(line) };
    // A shell closed just now may be taking this container with it: open after that, not during.
    await this.endings.get(name);
    const opened = await openContainer(ctx, plan, {
      ensureImage: () =>
        ensureImage(ctx, {
          ref: plan.create.Image,
          pull: request.config.pull,
          ours: ownImageBuildArgs !== undefined,
          publishedRef: this.runtimeImagePullRef(plan.create.Image, request.config.registryMirror),
          contextRoot: this.deps.extensionPath,
          buildArgs: ownImageBuildArgs,
          onLog: (line: string) => progress.log(line),
          onProgress: (p) => progress.step(p.message, p.percent),
          signal,
          checkedImages: this.checkedImages,
        }),
      progress: (message: string) => progress.step(message),
      signal,
    });
    const command: ShellCommand = {
      cmd: plan.shellCmd,
      user: plan.create.User,
      workdir: plan.create.WorkingDir,
      env: shellEnv(plan.create),
    };
    const { docker } = engine;
    const holder = holderAddress(bridge?.runDir, plan.create.User);
    // A container made just now from an image whose entrypoint starts the holder (decision 0032):
    // the host waits for it on the socket instead of starting one by an exec.
    const startedByContainer =
      opened.action === 'create' &&
      plan.create.Env.some((e) => e.startsWith(`${ENV.sessionSocket}=`)) &&
      (await imageStartsHolder(docker, plan.create.Image));
    const held = await this.heldTransport(opened.id, opened.name, holder, progress, startedByContainer);
    // An agent worktree's first shell runs the agent; every later one is a plain shell.
    let pending = firstCommand;
    const nextCmd = async (): Promise<string[]> => {
      // Taken before the wait: a second start never gets the agent too.
      const make = pending;
      pending = undefined;
      return make ? await make() : command.cmd;
    };
    const plain = async ({ cols, rows }: TerminalSize) =>
      startShellExec(docker, opened.id, { ...command, cmd: await nextCmd(), cols, rows });
    return {
      id: opened.id,
      name: opened.name,
      action: opened.action,
      peerActive: opened.peerActive,
      // Drift messages are already among the warnings (the engine picks the one to show): the
      // log keeps upstream's words, the user reads what differs and the fix.
      warnings: opened.warnings.map((w) => {
        const drift = opened.drift.find((d) => d.message === w);
        if (!drift) return w;
        this.deps.log.warn(w);
        return openDriftNotice(drift, this.deps.names);
      }),
      command,
      persistence: 'transport' in held ? { held: true, transport: held.transport.kind } : { held: false, reason: held.reason },
      start:
        'transport' in held
          ? async ({ cols, rows }) => {
              const cmd = await nextCmd();
              const session = await startHeldSession(held.transport, {
                cmd,
                env: command.env,
                cwd: command.workdir,
                cols,
                rows,
                title,
                // A spare is started with the same command: never a second agent.
                spare: cmd === command.cmd,
              });
              const record: SessionRecord = {
                folder: windowFolder,
                container: opened.name,
                containerId: opened.id,
                sessionId: session.id,
                title,
                holder,
                cols,
                rows,
                openedAt: Date.now(),
              };
              return Object.assign(session, { record });
            }
          : plain,
    };
  }

  /**
   * How this container's shells are held: its holder through the run dir socket or an exec, or
   * nothing (the setting is off, or the image has no holder: say why once per container).
   */
  private async heldTransport(
    containerId: string,
    name: string,
    holder: HolderAddress,
    progress: SessionProgress,
    startedByContainer = false,
  ): Promise<{ transport: HolderTransport } | { reason: string }> {
    if (!this.persistSessions()) return { reason: 'toolbox.sessions.persist is off' };
    const cached = this.transports.get(containerId);
    if (cached) return { transport: cached };
    try {
      const transport = await reachHolder((await this.connectedEngine()).docker, containerId, holder, { startedByContainer });
      this.transports.set(containerId, transport);
      return { transport };
    } catch (err) {
      const reason = err instanceof HolderUnavailableError ? err.message : `the session holder failed: ${(err as Error).message}`;
      if (!this.plainNoticeGiven.has(containerId)) {
        this.plainNoticeGiven.add(containerId);
        progress.log(`Shells in ${name} run as plain execs and will not survive a window reload (${reason}).`);
      }
      return { reason };
    }
  }

  private persistSessions(): boolean {
    return vscode.workspace.getConfiguration('toolbox').get<boolean>('sessions.persist') ?? true;
  }

  async reattachShell(record: SessionRecord): Promise<StartedShell> {
    // A holder that answers on its run-dir socket is alive, and so is its container: attach with
    // no engine call at all (after a reload the engine connection is not even made yet).
    const direct = record.holder.hostSocket ? socketTransport(record.holder.hostSocket) : undefined;
    if (direct && !this.transports.has(record.containerId)) {
      const session = await attachHeldSession(direct, record.sessionId, { cols: record.cols, rows: record.rows }).catch((err: Error) => {
        throwIfSessionGone(err, record);
        return undefined; // nobody listens there: the engine says whether the container is gone
      });
      if (session) {
        this.transports.set(record.containerId, direct);
        return Object.assign(session, { record });
      }
    }
    return this.reattachThroughEngine(record);
  }

  private async reattachThroughEngine(record: SessionRecord): Promise<StartedShell> {
    const { docker } = await this.connectedEngine();
    // Only the engine's own answer says the container is gone (404, or not running); an engine
    // that cannot be asked (restarting, asleep) is an error the terminal retries.
    const running = await docker
      .getContainer(record.containerId)
      .inspect()
      .then((i) => i.State.Running)
      .catch((err: { statusCode?: number }) => {
        if (err.statusCode === 404) return false;
        throw err;
      });
    if (!running) throw new SessionGoneError(`${record.container} is no longer running, so the shell "${record.title}" ended with it.`);
    try {
      const transport = this.transports.get(record.containerId) ?? (await reachHolder(docker, record.containerId, record.holder));
      this.transports.set(record.containerId, transport);
      const session = await attachHeldSession(transport, record.sessionId, { cols: record.cols, rows: record.rows });
      return Object.assign(session, { record });
    } catch (err) {
      throwIfSessionGone(err as Error, record);
      throw err;
    }
  }

  async endShell(record: SessionRecord): Promise<void> {
    const { docker } = await this.connectedEngine();
    const ending = (async () => {
      const transport = this.transports.get(record.containerId) ?? (await reachHolder(docker, record.containerId, record.holder));
      await killHeldSession(transport, record.sessionId);
    })();
    this.endings.set(
      record.container,
      ending.catch(() => undefined),
    );
    await ending;
    // SIGHUP first; the holder reaps it within its grace period.
    await this.shellEnded({ id: record.containerId, name: record.container, holder: record.holder }, 4_000);
  }

  async shellEnded(container: { id: string; name: string; holder?: HolderAddress }, settleMs = 0): Promise<void> {
    const ctx = await this.connectedEngine();
    const transport = this.transports.get(container.id);
    const live = async () => {
      if (!transport) return 0;
      const deadline = Date.now() + settleMs;
      for (;;) {
        const n = (await listHeldSessions(transport)).filter((s) => !s.ended).length;
        if (n === 0 || Date.now() >= deadline) return n;
        await new Promise((r) => setTimeout(r, 100));
      }
    };
    const ending = removeIfIdle(ctx, container.name, live);
    this.endings.set(
      container.name,
      ending.catch(() => undefined),
    );
    const outcome = await ending.finally(() => this.endings.delete(container.name));
    if (outcome === 'removed') {
      this.transports.delete(container.id);
      this.deps.log.info(`${container.name}: its last shell ended, so the container was removed (as the toolbox CLI does).`);
    }
  }

  /** The bridge for one container; a bridge that cannot start costs the shell its shims, not the shell. */
  private async bridge(
    key: string,
    folder: string,
    home: string,
    proximoEnabled: boolean,
    mounts: PlannedMount[],
    gitRepository?: string,
  ): Promise<BridgeMount | undefined> {
    if (!this.deps.bridgeFor) return undefined;
    const root = join(home, HOST.mountsRoot);
    const homes = agentHomes(mounts);
    try {
      const registration: WorkspaceRegistration = {
        key,
        workspaceFolder: folder,
        ...(gitRepository !== undefined ? { gitRepository } : {}),
        mountsRoots: editRoots(mounts),
        // Known before the bridge answers: the plan's read-write mounts, and those of a container
        // that already runs (created by an older plan, or by the CLI), which may have more.
        writableRoots: [
          ...new Set([
            ...mounts.filter((m) => m.type === 'bind' && !m.readonly).map((m) => m.source),
            ...(await this.existingWritableBinds(key)),
          ]),
        ],
        proximoEnabled,
        defaultAgentHome: homes.agentHome ?? root,
        defaultCodexHome: homes.codexHome ?? join(root, '.codex'),
      };
      const b = await this.deps.bridgeFor(registration);
      this.registrations.set(key, registration);
      return { stateDir: b.stateDir, runDir: b.runDir };
    } catch (err) {
      this.deps.log.warn(
        `The bridge for ${key} could not start (${(err as Error).message}); the shell opens without it, so code, xdg-open and git credentials inside it will not reach this window.`,
      );
      return undefined;
    }
  }

  /** The host sources of the read-write binds of the container with this name, if it exists. */
  private async existingWritableBinds(name: string): Promise<string[]> {
    try {
      const { docker } = await this.connectedEngine();
      const info = await docker.getContainer(name).inspect();
      return (info.Mounts ?? []).filter((m) => m.Type === 'bind' && m.RW).map((m) => m.Source);
    } catch {
      return []; // no such container yet (or no engine: then no container runs either)
    }
  }

  /**
   * Adds host paths the container can write to its bridge registration (idempotent: the hub
   * updates the settings of a served workspace). Paths only accumulate: a reattached container
   * keeps the read-write mounts it was created with even when the plan no longer has them.
   */
  private async updateWritableRoots(key: string, paths: string[]): Promise<void> {
    const registration = this.registrations.get(key);
    if (!registration || !this.deps.bridgeFor) return;
    registration.writableRoots = [...new Set([...(registration.writableRoots ?? []), ...paths])];
    await this.deps.bridgeFor(registration).catch(() => undefined);
  }

  /**
   * Where our runtime image may be pulled from before it is built (issue #14), or undefined when
   * the toolbox.runtimeImage.pull setting is off.
   */
  private runtimeImagePullRef(localTag: string, registryMirror: string | undefined): string | undefined {
    const pull = vscode.workspace.getConfiguration('toolbox').get<boolean>('runtimeImage.pull', true);
    return pull ? publishedRuntimeImageRef(localTag, registryMirror) : undefined;
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
    const connection = await this.connection;
    // One list (and one inspect per container) serves both the shells and the peer state.
    const owned = listOwnedContainers(ctx);
    const [listed, peer, locality] = await Promise.all([
      listToolboxContainers(ctx, owned),
      inspectPeerState(ctx, owned),
      this.engineLocality().catch((): EngineLocality => ({ remote: false })),
    ]);
    // A remote engine's run dirs are paths on its machine: no holder socket of theirs is here.
    const containers = await Promise.all(
      listed.map((c) => (locality.remote ? Promise.resolve(this.describe(c)) : this.withHeldShells(this.describe(c), c.detail))),
    );
    const claudeHome = join(this.deps.host().home, HOST.mountsRoot, '.claude');
    const sessions = await readAgentSessions(claudeHome).catch(() => []);
    return {
      containers,
      anchor: { name: ctx.names.anchor, id: peer.anchor.id, state: peer.anchor.state },
      volume: { name: ctx.names.socketVolume, exists: peer.volume.exists, owner: peer.volume.owner, mode: peer.volume.mode },
      members: peer.members,
      // The machine first for a remote engine: the view's description is cut at its width.
      ...(connection
        ? {
            engine: locality.remote
              ? `Docker ${connection.version} on the machine ${locality.engineHost}, at ${connection.endpoint.endpoint} (${describeSource(connection.endpoint.source)})`
              : describeConnection(connection),
          }
        : {}),
      sessions: await Promise.all(
        sessions.map(async (s) => {
          const facts = containers.map((c) => ({ name: c.name, workspace: c.workspace, running: c.state === 'running', member: c.peer }));
          const r = peerReach(s, facts, await inboxSocketPresence(peer.volume, s.messagingSocketPath));
          return { pid: s.pid, name: s.name ?? s.sessionId, cwd: s.cwd, container: r.container, reach: r.state, why: r.why };
        }),
      ),
    };
  }

  /**
   * The shells a running container's holder keeps, when its socket is reachable from this host
   * (the run dir is mounted and the engine is local). Never starts a holder, never execs: a
   * refresh stays one list and one inspect per container, plus one local connection each.
   */
  private async withHeldShells(
    summary: ContainerSummary,
    detail: { Config?: { User?: string }; Mounts?: Array<{ Source?: string; Destination: string }> },
  ): Promise<ContainerSummary> {
    if (summary.state !== 'running') return summary;
    const runDir = (detail.Mounts ?? []).find((m) => m.Destination === CONTAINER.bridgeRunDir)?.Source;
    if (!runDir) return summary;
    const holder = holderAddress(runDir, detail.Config?.User ?? '');
    try {
      const listed = await listHeldSessions(socketTransport(holder.hostSocket!));
      const shells = listed
        .filter((s) => !s.ended)
        .map((s) => ({
          id: s.id,
          pid: s.pid,
          command: describeShellCommand(s.cmd ?? []),
          title: s.title ?? undefined,
          started: s.started,
          attached: s.attached,
        }));
      return { ...summary, holder, shells };
    } catch {
      return summary;
    }
  }

  /** Adds what the list endpoint lacks (mounts, env, extra hosts) from the inspect data. */
  private describe(c: Awaited<ReturnType<typeof listToolboxContainers>>[number]): ContainerSummary {
    const names = this.deps.names;
    const kind: ContainerKind = names.kindOf(c.name) ?? 'workspace';
    const info = c.detail;
    const env = info.Config?.Env ?? [];
    const key = `${ENV.hostWorkspace}=`;
    const ws = env.find((e) => e.startsWith(key))?.slice(key.length);
    const hosts = ((info.HostConfig?.ExtraHosts ?? []) as string[])
      .map((h: string) => h.split(':')[0] ?? h)
      .filter((h) => h !== HOST_DOCKER_INTERNAL);
    const peerRun = peerRunOf(info.Config?.Labels);
    return {
      id: c.id,
      name: c.name,
      state: c.state,
      status: c.status,
      startedAt: startedAt(info.State?.StartedAt),
      image: c.image,
      kind,
      pidMode: c.pidMode,
      peer: c.peer,
      ...(peerRun !== undefined ? { peerRun } : {}),
      seccomp: c.seccomp,
      workspace: c.workspace ?? ws,
      mountsSocketVolume: !missingSocketVolume(info.Mounts, names),
      proximoCa: (info.Mounts ?? []).some((m) => m.Destination === CONTAINER.proximoCa),
      proximoHosts: hosts,
      reach: hostReach(info.Mounts, this.deps.host().home),
      ports: publishedPorts(info.State?.Running ? info.NetworkSettings?.Ports : undefined, info.HostConfig?.PortBindings),
    };
  }

  async prepareTurnOff(folder: string, reach: HostReach): Promise<TurnOffPlan> {
    const home = this.deps.host().home;
    const what = reachTitle(reach, home);
    if (!vscode.workspace.isTrusted) {
      throw new Error(
        `This workspace is not trusted, so its .toolbox.yaml is ignored and cannot turn off the ${what}. Trust the workspace (Workspaces: Manage Workspace Trust), or turn it off for every folder in ~/.toolbox.yaml.`,
      );
    }
    const resolved = await this.readConfig(folder);
    const broken = resolved.issues.find((i) => i.severity === 'error');
    if (broken) throw new Error(`Fix the configuration first: ${formatIssue(broken, home)}`);
    const change = turnOffChange(reach, resolved.config);
    if (typeof change === 'string') throw new Error(change);
    const existing = findProjectConfig(folder, home);
    const file = existing ?? join(folder, HOST.projectConfig);
    const before = existing === undefined ? undefined : await readProjectFile(existing, home);
    const note = `${what} (${tildePath(reach.source, home)}) turned off in the Toolbox view.`;
    const edit = applyTurnOff(before ?? '', change, resolved.config, note, `~/${HOST.userConfig}`);
    const check = parseConfigFile(edit.text, file, { home }).issues.find((i) => i.severity === 'error');
    if (check) throw new Error(`The edit would break ${tildePath(file, home)} (${formatIssue(check, home)}); nothing was written.`);
    const dir = dirname(file);
    return {
      file,
      creates: before === undefined,
      sharedWith: dir !== resolve(folder) ? dir : undefined,
      alreadyOff: edit.alreadyOff,
      apply: async () => {
        if (!edit.alreadyOff) await writeConfigFile(file, edit.text, before);
      },
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

  async createAgentWorktree(
    request: AgentWorktreeRequest,
    progress: SessionProgress,
    signal: AbortSignal,
  ): Promise<AgentWorktreeOpened | undefined> {
    // The agent is checked before anything is created: a wrong one would only fail at the end.
    const { config } = await this.readConfig(request.folder);
    const problem = worktreeAgentProblem(config.agent ?? 'claude');
    if (problem) throw new Error(problem);
    // Nor on an engine on another machine, which could not mount the worktree: before the worktree is made.
    progress.step('Connecting to Docker');
    await this.refuseIfEngineRemote(request.folder);
    progress.step(`Creating the worktree for ${request.branch}`);
    const options = {
      folder: request.folder,
      branch: request.branch,
      base: request.base,
      noFetch: request.noFetch,
      seed: config.worktreeSeed,
      log: (line: string) => progress.log(line),
    };
    const checked = await checkWorktreeCreate(options);
    // The container needs its bind sources, not the checkout: once the refusals pass, the empty
    // folder is made, and the container starts while git fetches, adds (in place, into that
    // folder) and seeds (docs/decisions/0032-session-holder-started-with-the-container.md).
    // Planned from the .toolbox.yaml the checkout will bring, as git has it now (checked again below).
    const projectFile = join(checked.path, HOST.projectConfig);
    const [madeParent, projectText] = await Promise.all([
      makeWorktreeFolder(checked.path),
      fileAtRef(checked, request.noFetch ? checked.base : `origin/${checked.base}`, HOST.projectConfig),
    ]);
    const shellRequest: ShellRequest = { folder: checked.path, worktree: { root: checked.root, prompt: request.prompt } };
    const opening = new AbortController();
    const cancel = () => opening.abort(signal.reason);
    signal.addEventListener('abort', cancel, { once: true });
    if (signal.aborted) cancel();
    let container: string | undefined;
    const early = (async () => {
      const prepared = await this.prepareShellWith(shellRequest, withProjectFile(projectFile, projectText));
      container = prepared.container;
      return { prepared, session: await prepared.open(progress, opening.signal) };
    })();
    // A refusal (fetch, add) stops the open at its next step: the container is not wanted.
    const adding = addWorktree(checked, options).catch((err: unknown) => {
      opening.abort();
      throw err;
    });
    const [added, box] = await Promise.allSettled([adding, early]);
    signal.removeEventListener('abort', cancel);
    // A container this create made holds nothing of the user's yet: it goes without a grace period.
    const ours = box.status === 'rejected' || box.value.session.action === 'create';
    if (added.status === 'rejected') {
      // As before the container started alongside: the refusal as it was, nothing left behind.
      if (container !== undefined) await this.dropContainer(container, ours).catch(() => undefined);
      await fsp.rm(checked.path, { recursive: true, force: true }).catch(() => undefined);
      if (madeParent !== undefined) await fsp.rmdir(madeParent).catch(() => undefined);
      throw added.reason;
    }
    const made = added.value;
    for (const note of made.notes) progress.log(note);
    // Nothing half-created: the container (if one was made), the worktree, its branch and base.
    const undo = async () => {
      if (container !== undefined) await this.dropContainer(container, ours).catch(() => undefined);
      await rollbackCreate(made.root, made.branch, made.path);
    };
    try {
      if (box.status === 'rejected') throw box.reason;
      throwIfAborted(signal);
      // The task may still be being typed: the worktree and its container are made meanwhile, so
      // the agent starts as soon as it is given. No task (the question cancelled) removes them again.
      if (typeof request.prompt === 'object') {
        progress.step('Ready: waiting for the task');
        if ((await raceAbort(request.prompt, signal, TASK_WAIT_MS)) === undefined) {
          await undo();
          progress.log(`Cancelled: the worktree ${made.branch} and its container were removed again.`);
          return undefined;
        }
      }
      // The open read the configuration before the checkout; the one the checkout (and the seed)
      // brought decides. The same plan keeps the container; another starts it again.
      const prepared = await this.prepareShell(shellRequest);
      if (this.planKeys.get(prepared) === this.planKeys.get(box.value.prepared)) return { ...made, prepared, session: box.value.session };
      progress.log(`The worktree's own configuration differs from the one ${container} was started with, so it starts again with it.`);
      await this.dropContainer(box.value.prepared.container, ours);
      container = prepared.container;
      const session = await prepared.open(progress, signal);
      return { ...made, prepared, session };
    } catch (err) {
      await undo();
      const why = err instanceof Error ? err.message : String(err);
      throw new Error(
        `${why} The worktree ${made.branch} was removed again, so nothing is left behind; fix the cause and create it again.`,
        {
          cause: err,
        },
      );
    }
  }

  /** Stops a container; one this create made (`now`) is killed at once, as it holds nothing of the user's. */
  private async dropContainer(name: string, now: boolean): Promise<void> {
    await stopContainer(await this.connectedEngine(), name, now ? { graceSeconds: 0 } : {});
  }

  async agentWorktrees(folders: readonly string[]): Promise<AgentWorktreeSummary[]> {
    const roots = new Set<string>();
    for (const f of folders) {
      const root = await repositoryRoot(f).catch(() => undefined);
      if (root !== undefined) roots.add(root);
    }
    const lists = await Promise.all([...roots].map((r) => listWorktrees(r).catch(() => [])));
    const worktrees = lists.flat();
    if (worktrees.length === 0) return [];
    // Container state by name, best effort: the view still lists worktrees when Docker is down.
    const byName = new Map<string, string>();
    try {
      const { docker } = await this.connectedEngine();
      for (const c of await docker.listContainers({ all: true })) for (const n of c.Names) byName.set(n.replace(/^\//, ''), c.State);
    } catch {
      // No engine: no container states.
    }
    return worktrees.map((w) => {
      const name = worktreeContainerNames(w.path, this.deps.names).find((n) => byName.has(n));
      return { ...w, ...(name !== undefined ? { container: { name, state: byName.get(name)! } } : {}) };
    });
  }

  async agentWorktreeRisk(ref: AgentWorktreeRef): Promise<AgentWorktreeRisk> {
    return removalRisk(ref.root, ref.branch);
  }

  async removeAgentWorktree(ref: AgentWorktreeRef, options: { force: boolean; deleteRemote: boolean }): Promise<AgentWorktreeRemoved> {
    const wt = await resolveWorktree(ref.root, ref.branch);
    if (!options.force) {
      // The refusal for uncommitted changes comes before the container is touched.
      const risk = await removalRisk(ref.root, ref.branch);
      if (risk.dirtyFiles.length > 0) {
        throw new Error(
          `The worktree of ${ref.branch} has uncommitted changes. Commit (or stash) them first, or remove it with Force, which discards them.`,
        );
      }
    }
    await this.stopWorktreeContainers(wt.path);
    const out = await removeWorktree({ folder: ref.root, branch: ref.branch, force: options.force, deleteRemote: options.deleteRemote });
    this.deps.log.info(`Removed the agent worktree ${ref.branch} (${out.path})${out.branchDeleted ? ' and its branch' : ''}.`);
    return out;
  }

  async syncAgentWorktree(ref: AgentWorktreeRef, log: (line: string) => void): Promise<{ base: string; resumed: boolean }> {
    const out = await syncWorktree({ folder: ref.root, branch: ref.branch, log });
    return { base: out.base, resumed: out.resumed };
  }

  async agentWorktreeChanges(ref: AgentWorktreeRef): Promise<AgentWorktreeChanges> {
    return worktreeChanges(ref.root, ref.branch);
  }

  async agentWorktreeFileAt(worktreePath: string, commit: string, file: string): Promise<string> {
    return fileAtCommit(worktreePath, commit, file);
  }

  async pruneAgentWorktrees(folder: string, log: (line: string) => void): Promise<AgentWorktreePruned> {
    return pruneMerged({ folder, log, beforeRemove: (path) => this.stopWorktreeContainers(path) });
  }

  /** Stops the worktree's container under either name the CLI or the extension gives it (peer on or off). */
  private async stopWorktreeContainers(path: string): Promise<void> {
    let engine: EngineContext;
    try {
      engine = await this.connectedEngine();
    } catch (err) {
      this.deps.log.warn(`Could not reach Docker to stop the container of ${path}: ${(err as Error).message}`);
      return;
    }
    for (const name of worktreeContainerNames(path, this.deps.names)) {
      await stopContainer(engine, name).catch((err: Error) => this.deps.log.warn(`Could not stop ${name}: ${err.message}`));
    }
  }

  async rebuildRuntimeImage(options: { noCache: boolean }, progress: SessionProgress, signal: AbortSignal): Promise<RebuildSummary> {
    const buildArgs = this.imageBuildArgs();
    const tag = runtimeImageTag(this.deps.extensionPath, buildArgs, this.deps.imageRepo);
    const { docker } = await this.connectedEngine();
    progress.log(`Rebuilding the toolbox runtime image ${tag}${options.noCache ? ' without the layer cache' : ''}…`);
    const result = await rebuildRuntimeImage(docker, {
      contextRoot: this.deps.extensionPath,
      tag,
      buildArgs,
      noCache: options.noCache,
      // Concurrent test runs share the test repository: a test rebuild prunes only what it replaced.
      pruneOtherTags: this.deps.imageRepo !== RUNTIME_IMAGE_TEST_REPO,
      onLog: (line) => progress.log(line),
      onProgress: (p) => progress.step(p.message, p.percent),
      signal,
    });
    return { tag, pruned: result.pruned, inUse: result.inUse };
  }

  async stopAllTargets(): Promise<string[]> {
    const ctx = await this.connectedEngine();
    const names = (await listOwnedContainers(ctx)).map((c) => c.name);
    return [...names.filter((n) => n !== ctx.names.anchor).sort(), ...names.filter((n) => n === ctx.names.anchor)];
  }

  async stopAll(only?: readonly string[]): Promise<string[]> {
    return stopAll(await this.connectedEngine(), { only: only && new Set(only) });
  }

  async watchEvents(onEvent: () => void, onError: (err: Error) => void): Promise<vscode.Disposable> {
    await this.connectedEngine();
    const names = this.deps.names;
    const watch = watchEngineEvents({
      // A reconnect (after the feed dropped) asks for the engine in use now, not the first one.
      connect: async () => (await this.connectedEngine()).docker,
      onEvent: (e) => {
        if (concernsOurObjects(e, names)) onEvent();
      },
      onStateChange: (state, err) => {
        if (err) onError(err);
        if (state === 'connected') onEvent();
      },
    });
    return { dispose: () => watch.dispose() };
  }

  dispose(): void {
    this.closeConnection();
  }
}

export interface CreateEngineBackendOptions extends Omit<EngineBackendDeps, 'bridgeFor'> {
  /** The bridge's /edit and /open land in this window. */
  editor: EditorActions;
  /** Git credential consent: the prompt and where grants persist (ui/credentialConsent.ts). */
  credentialConsent?: CredentialConsentOptions;
}

/**
 * The backend with its bridge hub. The hub listens only once a shell needs it, and is shut
 * down with the backend.
 */
export function createEngineBackend(options: CreateEngineBackendOptions): EngineBackend & vscode.Disposable {
  let hub: BridgeHub | undefined;
  const { editor, credentialConsent, ...deps } = options;
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
        openUntitled: editor.openUntitled,
        openExternal: editor.openExternal,
        credentialConsent,
      })).ensureWorkspace(registration),
  });
  const dispose = backend.dispose.bind(backend);
  backend.dispose = () => {
    dispose();
    void hub?.dispose();
  };
  return backend;
}

/** The engine's State.StartedAt as ms since the epoch; undefined for Docker's zero time or junk. */
function startedAt(text: string | undefined): number | undefined {
  const ms = text ? Date.parse(text) : NaN;
  return Number.isFinite(ms) && ms > 0 ? ms : undefined;
}

/** The names a worktree's container has: the path-scoped workspace name, peer on and off. */
function worktreeContainerNames(path: string, names: ObjectNames): string[] {
  return [workspaceContainerName(path, { peer: true }, names), workspaceContainerName(path, { peer: false }, names)];
}
