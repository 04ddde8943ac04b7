/**
 * The session planner: a SessionRequest plus host facts in, the exact ContainerCreate body out
 * (after upstream `sessionplan.Plan`). Pure: no fs, no process.env, no clock — everything it
 * needs arrives as an argument, so every field below is unit-tested without a daemon.
 */
import { AGENTS, CONTAINER, ENV, HOST_DOCKER_INTERNAL, HOST_GATEWAY, LABELS, PEER_RUN_LABEL_VALUES } from '../contract/constants';
import { agentHomes, flattenBinds, planMounts, validateWorkspaceBindPath } from './mounts';
import { absoluteWorkspace, cleanPath, containerHostname, namedShellName, workspaceContainerName, workspaceSlug } from './naming';
import type { HostFacts, ObjectNames, PortSpec } from '../contract/types';
import type { ContainerCreateSpec, SessionPlan, SessionRequest } from './types';

/** Ports publish on loopback unless the spec names a host IP (upstream defaultHostIP). */
const DEFAULT_PORT_HOST_IP = '127.0.0.1';

export interface PlannedSession {
  plan: SessionPlan;
  /** Things the user should know but that do not stop the shell (a missing Docker socket…). */
  warnings: string[];
}

export function planSession(req: SessionRequest, host: HostFacts): PlannedSession {
  const workspace = sessionWorkspace(req.workspace);
  const profile = profileOf(req);
  const shellCmd = shellCommand();
  const name = containerName({ ...req, profile }, workspace);

  const mp = planMounts({
    workspace,
    home: cleanPath(host.home),
    pathExists: (p) => host.pathExists(p),
    mountsRoot: req.config.mountsRoot,
    profile,
    share: req.share,
    userMounts: req.config.mounts,
    inheritHostAuth: req.config.inheritHostAuth,
    peer: req.peer,
    bridge: req.bridge,
    proximo: req.proximo,
    names: req.names,
  });

  const ports = portBindings(req.ports ?? []);
  const dockerSocketMounted = mp.mounts.some((m) => m.target === CONTAINER.dockerSocket);

  const create: ContainerCreateSpec = {
    name,
    // Upstream sets none, so its prompt shows the container id (docs/decisions/0012-container-host-name-and-shell.md).
    Hostname: containerHostname(name),
    Image: req.image,
    Cmd: shellCmd,
    Env: sessionEnv(req, workspace, mp.workingDir, agentHomes(mp.mounts), shellCmd),
    User: `${host.uid}:${host.gid}`,
    WorkingDir: mp.workingDir,
    Tty: true,
    OpenStdin: true,
    // The interactive shell is an exec of the same command; the container's own stdin stays detached.
    AttachStdin: false,
    // Upstream sets no labels and identity stays by name; this one is informational only (the
    // tree shows which folder a container belongs to). Nothing looks containers up by it.
    // LABELS.peerRun records a per-run peer override, so drift judges the container by what its
    // own open asked for (plan/drift.ts, ui/model.ts findDrift).
    Labels: {
      [LABELS.workspace]: workspace,
      ...(req.peerOverride ? { [LABELS.peerRun]: req.peer ? PEER_RUN_LABEL_VALUES.on : PEER_RUN_LABEL_VALUES.off } : {}),
    },
    ...(ports ? { ExposedPorts: ports.exposed } : {}),
    HostConfig: {
      Binds: flattenBinds(mp.mounts),
      ExtraHosts: extraHosts(req),
      // Codex's bubblewrap sandbox needs user namespaces, which Docker's default seccomp blocks.
      // Always, as upstream since its per-tool switches (tools.codex) were removed.
      SecurityOpt: ['seccomp=unconfined'],
      ...(req.peer ? { PidMode: `container:${req.names.anchor}` } : {}),
      ...(ports ? { PortBindings: ports.bindings } : {}),
      AutoRemove: true,
      ...(dockerSocketMounted ? { GroupAdd: dockerSocketGroups(host.dockerSocketGid) } : {}),
    },
  };

  return {
    plan: {
      name,
      workspace,
      peer: req.peer,
      mounts: mp.mounts,
      ensureDirs: mp.ensureDirs,
      create,
      shellCmd,
    },
    warnings: mp.warnings,
  };
}

/**
 * The groups that let the container user reach a mounted Docker socket, as upstream
 * (`dockeridentity`): "0", because Docker Desktop shows the socket as root:root inside the
 * container whatever the host's ownership, then the host socket's own group (Linux: docker) when
 * it is known and not root.
 */
export function dockerSocketGroups(socketGid: number | undefined): string[] {
  return socketGid === undefined || socketGid === 0 ? ['0'] : ['0', String(socketGid)];
}

/** `/bin/zsh`, the one shell (the config schema refuses any other; `tools:` no longer switches it off). */
function shellCommand(): string[] {
  return [CONTAINER.shell];
}

/**
 * The command of a terminal that starts an agent: the agent in an interactive shell (its rc file
 * read, as when the user types it), and the shell itself when the agent exits, so the terminal
 * and its session stay.
 */
export function agentCommand(shellCmd: readonly string[], agent: keyof typeof AGENTS): string[] {
  const shell = shellCmd[0] ?? CONTAINER.shell;
  return [shell, '-ic', `${AGENTS[agent].command}; exec ${shell}`];
}

/** A named shell when one with a usable name is asked for, else the workspace container. */
/**
 * The container a request resolves to, without planning the rest: callers that must key
 * something by it first (the bridge) ask this, then plan once.
 */
export function sessionContainerName(req: SessionRequest): string {
  return containerName({ ...req, profile: profileOf(req) }, sessionWorkspace(req.workspace));
}

/** The clean absolute folder path, refused when Docker could not bind it (upstream workspace.Resolve). */
function sessionWorkspace(p: string): string {
  const workspace = absoluteWorkspace(p);
  validateWorkspaceBindPath(workspace);
  return workspace;
}

/** An empty profile means none (the CLI never passes one); anything else is validated. */
function profileOf(req: SessionRequest): string | undefined {
  return req.profile === '' ? undefined : req.profile;
}

function containerName(req: SessionRequest, workspace: string): string {
  if (req.namedShell !== undefined && req.namedShell.trim() !== '') {
    return namedShellName(req.namedShell, { profile: req.profile, peer: req.peer }, req.names);
  }
  return workspaceContainerName(workspace, { profile: req.profile, share: req.share, peer: req.peer }, req.names);
}

/**
 * The container env in upstream's order (its internal/sessionplan). Steps we do not emit are
 * kept as comments, so a step upstream adds has an obvious place here.
 */
function sessionEnv(
  req: SessionRequest,
  workspace: string,
  workingDir: string,
  homes: { agentHome?: string; codexHome?: string },
  shellCmd: string[],
): string[] {
  const env = [`${ENV.hostWorkspace}=${workspace}`, `${ENV.pwd}=${workingDir}`, `${ENV.remoteControlPrefix}=${workspaceSlug(workspace)}`];
  // 2. SDD vars (TOOLBOX_SDD_*): not emitted — the extension has no `sdd:` support yet.
  // 3. TOOLBOX_LOOPBACK_BRIDGE_*: only for the CLI's loopback-bridge flag, which we do not offer.
  // 4. TOOLBOX_CLI_VERSION / TOOLBOX_IMAGE_DIGEST: not emitted — they tell the in-container
  //    update poller which CLI release is running, and the extension is not a CLI release.
  if (req.config.managedStatusline === false) env.push(`${ENV.managedStatusline}=0`);
  if (req.proximo !== undefined) {
    env.push(`${ENV.nodeExtraCaCerts}=${CONTAINER.proximoCa}`, `${ENV.proximoCa}=${CONTAINER.proximoCa}`);
  }
  if (homes.agentHome !== undefined) env.push(`${ENV.hostAgentHome}=${homes.agentHome}`);
  if (homes.codexHome !== undefined) env.push(`${ENV.hostCodexHome}=${homes.codexHome}`);

  const user: Record<string, string> = { ...req.config.env, ...namedShellEnv(req) };
  // Not upstream's: docker exec sets no SHELL, and programs that start "the user's shell" (an
  // agent's shell tool, tmux, vim's :shell) need it. The user's own `env: SHELL` wins.
  if (!(ENV.shell in user)) env.push(`${ENV.shell}=${shellCmd[0]}`);
  for (const key of Object.keys(user).sort()) env.push(`${key}=${user[key]}`);
  return env;
}

/** The named shell's `env:` overlay. YAML keys arrive as written; viper lowercases them. */
function namedShellEnv(req: SessionRequest): Record<string, string> {
  if (req.namedShell === undefined) return {};
  const want = req.namedShell.trim().toLowerCase();
  const key = Object.keys(req.config.shells).find((k) => k === req.namedShell || k.trim().toLowerCase() === want);
  return key === undefined ? {} : req.config.shells[key].env;
}

function extraHosts(req: SessionRequest): string[] {
  const hosts: string[] = [];
  if (req.config.bridge !== false) hosts.push(`${HOST_DOCKER_INTERNAL}:${HOST_GATEWAY}`);
  for (const h of new Set(req.proximo?.hosts ?? [])) hosts.push(`${h}:${HOST_GATEWAY}`);
  return hosts;
}

function portBindings(ports: PortSpec[]):
  | {
      exposed: Record<string, Record<string, never>>;
      bindings: Record<string, Array<{ HostIp: string; HostPort: string }>>;
    }
  | undefined {
  if (ports.length === 0) return undefined;
  const exposed: Record<string, Record<string, never>> = {};
  const bindings: Record<string, Array<{ HostIp: string; HostPort: string }>> = {};
  for (const p of ports) {
    const key = `${p.containerPort}/${p.protocol ?? 'tcp'}`;
    exposed[key] = {};
    (bindings[key] ??= []).push({ HostIp: p.hostIp ?? DEFAULT_PORT_HOST_IP, HostPort: String(p.hostPort) });
  }
  return { exposed, bindings };
}

/** The create body without the namespace and without the socket-volume bind. */
export function withoutPeer<T extends SessionPlan['create']>(spec: T, names: ObjectNames): T {
  const socketBind = `${names.socketVolume}:${CONTAINER.peerSocketDir}`;
  const { PidMode: _dropped, ...hostConfig } = spec.HostConfig;
  void _dropped;
  return {
    ...spec,
    HostConfig: {
      ...hostConfig,
      Binds: spec.HostConfig.Binds.filter((b) => b !== socketBind && !b.startsWith(`${socketBind}:`)),
    },
  };
}
