/**
 * Open Toolbox Shell, backend side, as gather → plan → act. `prepare` gathers every fact it plans
 * from (the folder's config, the user's settings for it, proximo, the image's tag), then plans the
 * shell (planShell: the request, the container's name, the title, the preview of its mounts; no
 * Docker, no file written). The prepared shell's `open` serves what the container reaches before
 * its create (the bridge, the Docker endpoint's directory, egress), plans the create spec once,
 * serves what that plan mounts, runs the engine's open flow with the image step, and hands back
 * what a terminal needs: the command and a `start` that runs one shell, held by the container's
 * holder when it can be.
 */
import { basename } from 'node:path';
import { isDeepStrictEqual } from 'node:util';
import type * as vscode from 'vscode';
import type { ConfigFs } from '../config/files';
import { issuesForOpen } from '../config/openIssues';
import { AGENTS } from '../contract/image';
import { CONTAINER } from '../contract/upstream';
import { ENV } from '../contract/shims';
import type { HostFacts, ObjectNames } from '../contract/types';
import { startShellExec } from '../engine/exec';
import { ensureImage, imageStartsHolder } from '../engine/image';
import type { EngineContext } from '../engine/context';
import { openContainer, type OpenResult } from '../engine/open';
import { holderAddress, startHeldSession } from '../engine/sessions';
import { openDriftNotice } from '../plan/drift';
import { DOCKER_SOCK_MOUNT } from '../plan/mounts';
import { namedShellFolder } from '../plan/namedShell';
import { profileProblem } from '../plan/profiles';
import { parsePublishSpecs } from '../plan/publish';
import { dockerEndpointMounted, planSession, previewSession, sessionContainerName, sessionProtections } from '../plan/session';
import type { ProtectionPlan } from '../plan/protect';
import type { PlannedMount, SessionPlan, SessionRequest } from '../plan/types';
import { agentLaunchCommand, worktreeAgentProblem } from '../plan/worktree';
import { detectProximo } from '../proximo/facts';
import type { PreparedShell, SessionProgress, SessionRecord, ShellCommand, ShellRequest, ShellSession, TerminalSize } from './api';
import { writableSources, type BridgeRegistry } from './bridges';
import type { EngineConnector } from './connection';
import type { ScopedDockerEndpoints } from './dockerEndpoints';
import type { EgressPolicies } from './egress';
import { egressPortsOf } from './egressPorts';
import { lstatKind, type FolderConfig } from './folderConfig';
import type { RuntimeImages } from './images';
import type { HeldSessions } from './sessions';

export interface ShellOpenerDeps {
  names: ObjectNames;
  host: () => HostFacts;
  log: Pick<vscode.LogOutputChannel, 'info' | 'warn'>;
  config: FolderConfig;
  connector: EngineConnector;
  bridges: BridgeRegistry;
  images: RuntimeImages;
  sessions: HeldSessions;
  /** The containers' scoped Docker endpoints; none: the docker-sock mount as configured. */
  dockerEndpoints?: ScopedDockerEndpoints;
  /** The folder's egress policy and each container's proxy (backend/egress.ts); absent: every container is `open`. */
  egress?: EgressPolicies;
}

/** Every toolbox shell's terminal type, as VS Code's integrated terminal renders it. */
const SHELL_ENV = ['TERM=xterm-256color', 'COLORTERM=truecolor'];

/**
 * The shell's environment: the terminal type, and the plan's SHELL again, so that a shell in a
 * container created before the plan set SHELL (or by the CLI, which sets none) has it too.
 */
function shellEnv(create: { Env: string[] }): string[] {
  const shell = create.Env.find((e) => e.startsWith(`${ENV.shell}=`));
  return shell === undefined ? SHELL_ENV : [...SHELL_ENV, shell];
}

/** Everything an open plans from: two prepares with equal plans open the same container. */
export interface ShellPlan {
  request: SessionRequest;
  /** The protected paths as the host has them now (a worktree's checkout changes them). */
  protection?: ProtectionPlan;
  title: string;
  /** The agent the first shell starts, if any. */
  first?: string;
  warnings: string[];
  notices: string[];
}

/** Whether two prepares would open the same container the same way. */
export function samePlan(a: ShellPlan, b: ShellPlan): boolean {
  return isDeepStrictEqual(a, b);
}

/** What prepare reads before it plans: every fact from settings, the folder's config and the host. */
interface ShellFacts {
  host: HostFacts;
  resolved: Awaited<ReturnType<FolderConfig['read']>>;
  pendingConfig: ReturnType<FolderConfig['pendingProjectConfig']>;
  proximo: SessionRequest['proximo'];
  /** Our image's build args, when the config names no image of its own; its tag hashes them with the build context. */
  ownImageBuildArgs: Record<string, string> | undefined;
  ownImageTag: string | undefined;
  profile: ReturnType<FolderConfig['folderProfile']>;
  seccomp: SessionRequest['seccomp'];
  protectedPaths: SessionRequest['protectedPaths'];
  heldSessions: SessionRequest['heldSessions'];
}

/** What prepare planned: the request, the terminal's title, the first shell's command, what the bridge may open. */
interface PlannedShell {
  request: SessionRequest;
  ownImageBuildArgs: Record<string, string> | undefined;
  title: string;
  /** The agent the first shell starts, if any, and how its command is made (a worktree's task may still be typed). */
  first?: string;
  firstCommand?: () => Promise<string[]>;
  /** What the bridge may open and which agent homes proximo may use: the container's other mounts. */
  previewMounts: PlannedMount[];
  protection?: ProtectionPlan;
}

/** The engine and the endpoints an open serves before its create: the bridge, the Docker endpoint, egress. */
interface Served {
  engineId: string;
  bridge: Awaited<ReturnType<BridgeRegistry['serve']>> | undefined;
  connection: Awaited<ReturnType<EngineConnector['connected']>>;
  dockerEndpoint: ReturnType<NonNullable<ShellOpenerDeps['dockerEndpoints']>['plannedDir']> | undefined;
  egressMode: string;
  egress: ReturnType<EgressPolicies['dir']> | undefined;
}

export class ShellOpener {
  /** Custom images the preflight already checked (by image id), for this window's lifetime. */
  private readonly checkedImages = new Map<string, string[]>();
  /** Plan notes already logged in this window (each is said once). */
  private readonly notesLogged = new Set<string>();

  constructor(private readonly deps: ShellOpenerDeps) {}

  async prepareShell(shell: ShellRequest): Promise<PreparedShell> {
    return (await this.prepare(shell)).prepared;
  }

  /**
   * prepareShell, with what it plans from; `configFs` reads a New Agent Worktree's checkout to
   * come. Gathers every fact, plans from them, and hands back the open.
   */
  async prepare(shell: ShellRequest, configFs?: ConfigFs): Promise<{ prepared: PreparedShell; plan: ShellPlan }> {
    const facts = await this.gather(shell, configFs);
    // A broken project .toolbox.yaml (or TOOLBOX_* variable) stops the open here, naming file:line and the fix.
    const { warnings, notices, unknownKeys } = issuesForOpen(facts.resolved.issues, facts.host.home);
    this.logProjectConfig(shell.folder, facts);
    const planned = planShell(shell, facts, this.deps.names);
    const prepared: PreparedShell = {
      container: sessionContainerName(planned.request),
      title: planned.title,
      warnings,
      notices,
      unknownKeys,
      projectFileIgnored: facts.resolved.projectFileIgnored,
      ...(facts.pendingConfig ? { pendingConfig: facts.pendingConfig } : {}),
      // The window folder, not a named shell's configured path: held shells come back per window folder (ui/shells/sessionStore.ts).
      open: (progress, signal) => this.open(planned, progress, signal, shell.folder),
    };
    const { request, protection, title, first } = planned;
    return {
      prepared,
      plan: { request, ...(protection ? { protection } : {}), title, ...(first !== undefined ? { first } : {}), warnings, notices },
    };
  }

  /** Every fact prepare plans from: the folder's config, the user's settings for it, proximo, the image. */
  private async gather(shell: ShellRequest, configFs?: ConfigFs): Promise<ShellFacts> {
    const host = this.deps.host();
    // What the project side asks beyond the user's own config applies only once approved (docs/decisions/0041).
    const resolved = await this.deps.config.read(shell.folder, configFs, shell.worktree?.root);
    const config = resolved.config;
    const proximo =
      config.proximo === false ? undefined : await detectProximo({ home: host.home, env: process.env, log: (m) => this.deps.log.info(m) });
    // Our image's tag hashes the build context and the build args: work it out once per open.
    const ownImageBuildArgs = config.image === undefined ? this.deps.images.buildArgs() : undefined;
    return {
      host,
      resolved,
      pendingConfig: this.deps.config.pendingProjectConfig(shell.folder, resolved),
      proximo,
      ownImageBuildArgs,
      ownImageTag: ownImageBuildArgs ? this.deps.images.tag(ownImageBuildArgs) : undefined,
      // The profile: this run's, else the folder's in the user's settings (never a project file; docs/decisions/0054).
      profile: shell.profile ?? this.deps.config.folderProfile(shell.folder),
      seccomp: (await this.deps.config.seccompSetting(shell.folder)).profile,
      protectedPaths: this.deps.config.protectedPaths(),
      heldSessions: this.deps.sessions.persist(),
    };
  }

  private logProjectConfig(folder: string, facts: ShellFacts): void {
    if (facts.pendingConfig) {
      this.deps.log.warn(
        `The project configuration of ${folder} asks for more than your own config gives; not applied until you approve it: ${facts.pendingConfig.items.join('; ')}`,
      );
    } else if (facts.resolved.widening?.approved) {
      this.deps.log.info(`Applying what the project configuration of ${folder} asks beyond your own config, as you approved.`);
    }
  }

  /** Serve what the container will reach, plan its create spec, create or start it, and hand back its shell. */
  private async open(planned: PlannedShell, progress: SessionProgress, signal: AbortSignal, windowFolder: string): Promise<ShellSession> {
    const served = await this.serveBeforeCreate(planned, progress);
    const plan = this.planContainer(planned, served);
    await this.serveForPlan(planned, served, plan, progress);
    const engine = await this.deps.connector.engine();
    const opened = await this.createContainer(engine, planned, served, plan, progress, signal);
    return this.shellSession(engine, planned, served, plan, opened, progress, windowFolder);
  }

  /** The engine, then the bridge (keyed by the container's name, its mounts part of the plan), the Docker endpoint's directory and egress. */
  private async serveBeforeCreate(planned: PlannedShell, progress: SessionProgress): Promise<Served> {
    const { request } = planned;
    const name = sessionContainerName(request);
    // A folder on this machine cannot be mounted by an engine on another: say so before the bridge or anything else starts.
    progress.step('Connecting to Docker');
    await this.deps.connector.refuseIfRemote(request.workspace);
    // The engine's identity: the same name on another engine or context is another run dir (docs/decisions/0043).
    const engineId = (await this.deps.connector.connected()).endpoint.endpoint;
    // A shell closed just now may be taking this container with it, and the placeholders of its
    // protected paths (engine/lifecycle.ts stopContainer): the plans below read the folder after that.
    await this.deps.sessions.settled(name);
    // What the bridge may open and which agent homes proximo skill may use come from the
    // container's other mounts: a preview plan (bridge mounts stubbed) tells them before it starts.
    if (request.config.bridge !== false) progress.step('Starting the bridge for the container');
    const bridge =
      request.config.bridge === false
        ? undefined
        : await this.deps.bridges.serve(
            name,
            engineId,
            request.workspace,
            request.proximo !== undefined,
            planned.previewMounts,
            request.worktreeRoot,
          );
    // The container's own Docker endpoint in the docker-sock mount's place (issue 27), served
    // before the create: its directory is bound into the container.
    const connection = await this.deps.connector.connected();
    const dockerEndpoint = this.deps.dockerEndpoints?.plannedDir(request.workspace, name, connection);
    // The folder's egress policy (issue 30): under `ask` or `allowlist` the container gets no
    // network, only its proxy's directory (docs/decisions/0056-egress-through-a-host-proxy.md).
    const egressMode = this.deps.egress ? await this.deps.egress.mode(request.workspace, request.worktreeRoot) : 'open';
    const egress = egressMode === 'open' ? undefined : this.deps.egress!.dir(engineId, name);
    return { engineId, bridge, connection, dockerEndpoint, egressMode, egress };
  }

  /** The create spec, from the request and what was served; its warnings and notes logged (each note once a window). */
  private planContainer(planned: PlannedShell, served: Served): SessionPlan {
    const { request } = planned;
    const { bridge, dockerEndpoint, egress, egressMode } = served;
    // The host's own Docker socket (raw-socket, or an engine the endpoint cannot serve) would let the
    // container start a container with the host's network: under a policy it is not mounted.
    const withoutRawSocket =
      egress !== undefined && dockerEndpoint === undefined
        ? { ...request.config, mounts: [...request.config.mounts, { name: DOCKER_SOCK_MOUNT, disabled: true }] }
        : request.config;
    const {
      plan,
      warnings: planWarnings,
      notes,
    } = planSession(
      { ...request, config: withoutRawSocket, bridge, ...(dockerEndpoint ? { dockerEndpoint } : {}), ...(egress ? { egress } : {}) },
      this.deps.host(),
    );
    if (withoutRawSocket !== request.config && request.config.mounts.every((m) => !(m.name === DOCKER_SOCK_MOUNT && m.disabled))) {
      this.deps.log.warn(
        `${plan.name}: no Docker in the container. Under the folder's egress policy (${egressMode}) the host's Docker socket is not mounted: ` +
          "a container started through it could have the host's network. The scoped endpoint (toolbox.dockerEndpoint: scoped, a local engine) keeps Docker under the policy.",
      );
    }
    for (const w of planWarnings) this.deps.log.warn(w);
    for (const n of notes) {
      if (this.notesLogged.has(n)) continue;
      this.notesLogged.add(n);
      this.deps.log.info(n);
    }
    return plan;
  }

  /** What the plan decided to mount: the bridge's writable roots, the Docker endpoint, the egress proxy. */
  private async serveForPlan(planned: PlannedShell, served: Served, plan: SessionPlan, progress: SessionProgress): Promise<void> {
    await this.deps.bridges.addWritableRoots(plan.name, served.engineId, writableSources(plan.mounts));
    if (served.dockerEndpoint !== undefined && dockerEndpointMounted(plan.mounts)) {
      progress.step('Starting the Docker endpoint for the container');
      await this.deps.dockerEndpoints!.serveForPlan(served.connection, plan);
    }
    if (served.egress !== undefined) {
      progress.step(`Starting the egress proxy for the container (${served.egressMode})`);
      await this.deps.egress!.serve(served.engineId, plan.name, planned.request.workspace, plan.create.User);
    }
  }

  /** The engine's open flow (find, create or start, the image step first); under egress, the ports it relays. */
  private async createContainer(
    engine: EngineContext,
    planned: PlannedShell,
    served: Served,
    plan: SessionPlan,
    progress: SessionProgress,
    signal: AbortSignal,
  ): Promise<OpenResult> {
    const { request, ownImageBuildArgs } = planned;
    const ctx = { ...engine, log: (line: string) => progress.log(line) };
    const images = this.deps.images;
    const opened = await openContainer(ctx, plan, {
      ensureImage: () =>
        ensureImage(ctx, {
          ref: plan.create.Image,
          pull: request.config.pull,
          ours: ownImageBuildArgs !== undefined,
          publishedRef: images.pullRef(plan.create.Image, request.config.registryMirror),
          contextRoot: images.contextRoot,
          buildArgs: ownImageBuildArgs,
          onLog: (line: string) => progress.log(line),
          onProgress: (p) => progress.step(p.message, p.percent),
          signal,
          checkedImages: this.checkedImages,
        }),
      progress: (message: string) => progress.step(message),
      signal,
    });
    if (served.egress !== undefined) {
      // No engine network: the host relays the ports this container was created to publish.
      const labels = (await engine.docker.getContainer(opened.id).inspect()).Config?.Labels;
      await this.deps.egress!.ports.relay(engine.docker, opened.id, opened.name, egressPortsOf(labels));
    }
    return opened;
  }

  /** What a terminal needs: the shell's command, and a `start` that runs one, held by the container's holder when it can be. */
  private async shellSession(
    engine: EngineContext,
    planned: PlannedShell,
    served: Served,
    plan: SessionPlan,
    opened: OpenResult,
    progress: SessionProgress,
    windowFolder: string,
  ): Promise<ShellSession> {
    const { title } = planned;
    const { engineId, bridge } = served;
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
    const held = await this.deps.sessions.transport(opened.id, opened.name, holder, progress, startedByContainer);
    // An agent worktree's first shell runs the agent; every later one is a plain shell.
    let pending = planned.firstCommand;
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
      engine: engineId,
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
      agentHomes: mountedAgentHomes(plan.mounts),
      persistence: 'transport' in held ? { held: true, transport: held.transport.kind } : held,
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
                engine: engineId,
                cols,
                rows,
                openedAt: Date.now(),
              };
              const bridged = this.deps.bridges.registration(opened.name, engineId);
              if (bridged) record.bridge = bridged;
              void this.deps.sessions.keepFromCliTeardown(opened.id, opened.name, holder);
              return Object.assign(session, { record });
            }
          : plain,
    };
  }
}

/**
 * The plan of a shell from the facts gathered (no I/O but the named shell's lstat): the session
 * request, the terminal's title, the first shell's command, the preview of its mounts and the
 * protected paths. Throws what refuses the open (a named shell, a profile, a worktree's agent, a
 * link among the protected paths).
 */
function planShell(shell: ShellRequest, facts: ShellFacts, names: ObjectNames): PlannedShell {
  const { host, resolved, profile } = facts;
  const config = resolved.config;
  // A named shell works in its configured path, whatever folder asked (upstream cmd/shell_named.go);
  // the name's own rules first, then the lookup (plan/namedShell.ts refuses with upstream's text).
  let workspace = shell.folder;
  if (shell.namedShell !== undefined && shell.namedShell.trim() !== '') {
    workspace = namedShellFolder(shell.namedShell, config.shells, host.home, lstatKind, names);
  }
  const profileProblemText = profileProblem(profile, 'the profile chosen');
  if (profileProblemText !== undefined) throw new Error(profileProblemText);
  const request: SessionRequest = {
    workspace,
    config,
    ...(profile.profile !== undefined ? { profile: profile.profile, share: profile.share } : {}),
    peer: shell.peer ?? config.peerMessaging,
    peerOverride: shell.peer !== undefined,
    namedShell: shell.namedShell,
    seccomp: facts.seccomp,
    protectedPaths: facts.protectedPaths,
    ...(shell.ports?.length ? { ports: parsePublishSpecs(shell.ports) } : {}),
    proximo: facts.proximo,
    image: facts.ownImageTag ?? config.image!,
    names,
    heldSessions: facts.heldSessions,
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
  // The terminal's name says which folder it works in (the UI numbers a second one), short enough
  // for a tab at the default width; the Toolbox icon says whose terminal it is (issue 26, item 12).
  const folderName = shell.namedShell ? shell.namedShell : basename(shell.folder) || container;
  // A profile's terminal says whose credentials it has: `proj · work`.
  const base = profile.profile !== undefined ? `${folderName} · ${profile.profile}` : folderName;
  const title = shell.agent ? `${base} · ${AGENTS[shell.agent].name}` : base;
  // Planned here too: a symbolic link among them refuses the open before anything starts.
  const protection = sessionProtections(request, host);
  return {
    request,
    ownImageBuildArgs: facts.ownImageBuildArgs,
    title,
    ...(first !== undefined ? { first } : {}),
    ...(firstCommand ? { firstCommand } : {}),
    previewMounts: request.config.bridge === false ? [] : previewSession(request, host).mounts,
    ...(protection ? { protection } : {}),
  };
}

/** The host folders bound at the agents' homes in the container, when they are bound. */
function mountedAgentHomes(mounts: readonly PlannedMount[]): { claude?: string; codex?: string } {
  const at = (dir: string) => mounts.find((m) => m.type === 'bind' && m.target === `${CONTAINER.home}/${dir}`)?.source;
  const claude = at('.claude');
  const codex = at('.codex');
  return { ...(claude ? { claude } : {}), ...(codex ? { codex } : {}) };
}
