/**
 * The session planner: a SessionRequest plus host facts in, the exact ContainerCreate body out
 * (after upstream `sessionplan.Plan`). Pure: no fs, no process.env, no clock — everything it
 * needs arrives as an argument, so every field below is unit-tested without a daemon.
 */
import { CONTAINER, HOST_DOCKER_INTERNAL, HOST_GATEWAY, LABELS } from '../contract/upstream';
import { DOCKER_ENDPOINT } from '../contract/dockerEndpoint';
import { EGRESS, EGRESS_PROXY_ENV } from '../contract/egress';
import { ENV } from '../contract/shims';
import { EXTENSION_VERSION } from '../contract/manifest';
import { SESSION_PROTOCOL } from '../contract/image';
import { SECCOMP_UNCONFINED_OPT, PEER_RUN_LABEL_VALUES } from './drift';
import { agentHomes, DOCKER_ENDPOINT_MOUNT, flattenBinds, planMounts, validateWorkspaceBindPath, workspaceMirror } from './mounts';
import { planProtections, PROTECTED_PATHS_LABEL_VALUE, type ProtectionPlan } from './protect';
import { DEFAULT_PUBLISH_HOST_IP } from './publish';
import { absoluteWorkspace, cleanPath, containerHostname, namedShellName, workspaceContainerName, workspaceSlug } from './naming';
import { worktreeGitDir } from './worktree';
import type { HostFacts, ObjectNames, PortSpec, SeccompProfile } from '../contract/types';
import type { ContainerCreateSpec, PlannedMount, SessionPlan, SessionRequest } from './types';

export interface PlannedSession {
  plan: SessionPlan;
  /** Things the user should know but that do not stop the shell (a missing Docker socket…). */
  warnings: string[];
  /** Worth one line in the log, once per window (plan/mounts.ts retiredDataNotes). */
  notes: string[];
}

/**
 * The plan an open would make before its bridge serves (the bridge's mounts stubbed): what the
 * bridge may open and which protected paths the container gets are known from its other mounts.
 */
export function previewSession(req: Omit<SessionRequest, 'bridge'>, host: HostFacts): SessionPlan {
  return planSession({ ...req, bridge: { stateDir: '/bridge-preview', runDir: '/bridge-preview/run' } }, host).plan;
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
    ...(req.dockerEndpoint !== undefined ? { dockerEndpoint: req.dockerEndpoint } : {}),
  });

  if (req.worktreeRoot !== undefined) mp.mounts.push(worktreeGitMount(req.worktreeRoot));
  // Last: nested in the folder's binds (and the main .git's), which the engine mounts first.
  const protection = sessionProtections(req, host);
  if (protection) mp.mounts.push(...protection.mounts);

  if (req.egress !== undefined) mp.mounts.push(egressMount(req.egress));
  // Under an egress policy the engine publishes nothing (a container without a network has no
  // ports to publish): the host relays them into the container's loopback (backend/egress.ts).
  const ports = req.egress === undefined ? portBindings(req.ports ?? []) : undefined;
  const dockerSocketMounted = mp.mounts.some((m) => m.target === CONTAINER.dockerSocket);

  const create: ContainerCreateSpec = {
    name,
    // Upstream sets none, so its prompt shows the container id (docs/decisions/0012-container-host-name-and-shell.md).
    Hostname: containerHostname(name),
    Image: req.image,
    Cmd: shellCmd,
    Env: sessionEnv(req, host, workspace, mp.workingDir, agentHomes(mp.mounts), shellCmd, dockerEndpointMounted(mp.mounts)),
    User: `${host.uid}:${host.gid}`,
    WorkingDir: mp.workingDir,
    Tty: true,
    OpenStdin: true,
    // The interactive shell is an exec of the same command; the container's own stdin stays detached.
    AttachStdin: false,
    // Upstream sets no labels and identity stays by name; this one is informational only (the
    // tree shows which folder a container belongs to). Nothing looks containers up by it.
    // LABELS.peerRun records a per-run peer override, so drift judges the container by what its
    // own open asked for (plan/drift.ts, ui/containers/driftFindings.ts findDrift).
    Labels: {
      [LABELS.workspace]: workspace,
      // Which account's credentials it has, for the views (informational, as the workspace label).
      ...(profile !== undefined ? { [LABELS.profile]: profile } : {}),
      ...(req.peerOverride ? { [LABELS.peerRun]: req.peer ? PEER_RUN_LABEL_VALUES.on : PEER_RUN_LABEL_VALUES.off } : {}),
      ...(protection
        ? { [LABELS.protectedPaths]: PROTECTED_PATHS_LABEL_VALUE, [LABELS.protectedIdentities]: JSON.stringify(protection.identities) }
        : {}),
      ...(req.egress !== undefined ? { [LABELS.egress]: EGRESS.enforcedLabel } : {}),
      ...(req.egress !== undefined && req.ports?.length ? { [LABELS.egressPorts]: JSON.stringify(req.ports) } : {}),
    },
    ...(ports ? { ExposedPorts: ports.exposed } : {}),
    HostConfig: {
      Binds: flattenBinds(mp.mounts),
      // No network but loopback under an egress policy: names of the host's mean nothing there.
      ExtraHosts: req.egress === undefined ? extraHosts(req) : [],
      ...(req.egress !== undefined ? { NetworkMode: 'none' } : {}),
      SecurityOpt: securityOpt(req.seccomp),
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
      ...(protection ? { placeholders: protection.placeholders } : {}),
      create,
      shellCmd,
    },
    warnings: mp.warnings,
    notes: mp.notes,
  };
}

/**
 * The protected paths an open of `req` binds read-only, with their placeholders (plan/protect.ts);
 * undefined when toolbox.protectedPaths is off. The folder is seen at /workspace and its mirror.
 */
export function sessionProtections(req: SessionRequest, host: HostFacts): ProtectionPlan | undefined {
  if (!req.protectedPaths) return undefined;
  const workspace = sessionWorkspace(req.workspace);
  return planProtections({
    workspace,
    targets: [...new Set([CONTAINER.workspace, workspaceMirror(workspace) ?? CONTAINER.workspace])],
    ...(req.worktreeRoot !== undefined ? { worktreeRoot: absoluteWorkspace(req.worktreeRoot) } : {}),
    facts: host,
  });
}

/** The main repository's `.git`, read-write at its own path (upstream applyWorktreeSession). */
function worktreeGitMount(root: string): PlannedMount {
  const gitDir = worktreeGitDir(absoluteWorkspace(root));
  validateWorkspaceBindPath(gitDir);
  return { name: 'worktree-git', source: gitDir, target: gitDir, readonly: false, type: 'bind', createIfMissing: false };
}

/**
 * Codex's bubblewrap sandbox needs user namespaces, which Docker's default seccomp profile
 * blocks: unconfined, as upstream always does since its per-tool switches (tools.codex) were
 * removed; `toolbox.seccomp: default` keeps Docker's profile
 * (docs/decisions/0024-seccomp-unconfined-with-an-opt-out.md).
 */
export function securityOpt(profile: SeccompProfile | undefined): string[] {
  return profile === 'default' ? [] : [SECCOMP_UNCONFINED_OPT];
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
  host: HostFacts,
  workspace: string,
  workingDir: string,
  homes: { agentHome?: string; codexHome?: string },
  shellCmd: string[],
  dockerEndpoint: boolean,
): string[] {
  const env = [`${ENV.hostWorkspace}=${workspace}`, `${ENV.pwd}=${workingDir}`, `${ENV.remoteControlPrefix}=${workspaceSlug(workspace)}`];
  // 2. SDD vars (TOOLBOX_SDD_*): not emitted — the extension has no `sdd:` support yet.
  // 3. TOOLBOX_LOOPBACK_BRIDGE_*: only for the CLI's loopback-bridge flag, which we do not offer.
  // 4. identityEnv: the release that created the container, under our own name (TOOLBOX_CLI_VERSION
  //    would claim a CLI release); TOOLBOX_IMAGE_DIGEST is stamped in by the engine once the image
  //    step knows it (withImageDigest, engine/open.ts), right after the version, as upstream.
  env.push(`${ENV.vscodeVersion}=${EXTENSION_VERSION}`);
  // 5. hostPlatformEnv: the host's OS and architecture in Go's spelling, for builds that target the host.
  env.push(`${ENV.hostOs}=${goos(host.platform)}`);
  if (host.arch !== undefined) env.push(`${ENV.hostArch}=${goarch(host.arch)}`);
  if (req.config.managedStatusline === false) env.push(`${ENV.managedStatusline}=0`);
  if (req.proximo !== undefined) {
    env.push(`${ENV.nodeExtraCaCerts}=${CONTAINER.proximoCa}`, `${ENV.proximoCa}=${CONTAINER.proximoCa}`);
  }
  if (homes.agentHome !== undefined) env.push(`${ENV.hostAgentHome}=${homes.agentHome}`);
  if (homes.codexHome !== undefined) env.push(`${ENV.hostCodexHome}=${homes.codexHome}`);
  // The scoped Docker endpoint (issue 27): the docker CLI, Compose and Testcontainers find it by
  // DOCKER_HOST; Testcontainers reaches what it starts by the host's name (in ExtraHosts with the
  // bridge) rather than by inspecting the default bridge network, which the endpoint refuses
  // (docs/decisions/0047).
  if (dockerEndpoint) env.push(`${ENV.dockerHost}=unix://${DOCKER_ENDPOINT.containerSocket}`);
  if (dockerEndpoint && req.config.bridge !== false && req.egress === undefined) {
    env.push(`${ENV.testcontainersHostOverride}=${HOST_DOCKER_INTERNAL}`);
  }
  if (req.egress !== undefined) env.push(...egressEnv());

  const user: Record<string, string> = { ...req.config.env, ...namedShellEnv(req) };
  // Not upstream's: docker exec sets no SHELL, and programs that start "the user's shell" (an
  // agent's shell tool, tmux, vim's :shell) need it. The user's own `env: SHELL` wins.
  if (!(ENV.shell in user)) env.push(`${ENV.shell}=${shellCmd[0]}`);
  // Not upstream's either: where the runtime image's entrypoint starts the session holder
  // (docs/decisions/0032-session-holder-started-with-the-container.md).
  if (req.heldSessions) env.push(`${ENV.sessionSocket}=${holderContainerSocket(req.bridge !== undefined)}`);
  for (const key of Object.keys(user).sort()) env.push(`${key}=${user[key]}`);
  return env;
}

/** The plan mounts the scoped Docker endpoint's directory (plan/mounts.ts withDockerEndpoint). */
export function dockerEndpointMounted(mounts: readonly PlannedMount[]): boolean {
  return mounts.some((m) => m.name === DOCKER_ENDPOINT_MOUNT && m.target === DOCKER_ENDPOINT.containerDir);
}

/**
 * The session holder's socket inside the container: in the bridge run dir when it is mounted
 * (the host then reaches it directly), else in a container-only directory (reached by an exec).
 */
export function holderContainerSocket(runDirMounted: boolean): string {
  return `${runDirMounted ? CONTAINER.bridgeRunDir : CONTAINER.sessionFallbackDir}/${SESSION_PROTOCOL.socket}`;
}

/** Node's platform name in Go's GOOS spelling (what upstream's TOOLBOX_HOST_OS carries). */
export function goos(platform: string): string {
  const names: Record<string, string> = { win32: 'windows', sunos: 'solaris', cygwin: 'windows' };
  return names[platform] ?? platform;
}

/** Node's architecture name in Go's GOARCH spelling (what upstream's TOOLBOX_HOST_ARCH carries). */
export function goarch(arch: string): string {
  const names: Record<string, string> = { x64: 'amd64', ia32: '386', x32: '386', mipsel: 'mipsle', ppc64: 'ppc64le' };
  return names[arch] ?? arch;
}

/**
 * The create env with the image digest set (upstream sessionplan.WithImageDigest): an existing
 * entry is replaced, or dropped when the digest is unknown; otherwise it goes right after the
 * version entry, where upstream's identityEnv puts it.
 */
export function withImageDigest(env: readonly string[], digest: string | undefined): string[] {
  const key = `${ENV.imageDigest}=`;
  const out: string[] = [];
  let placed = false;
  for (const entry of env) {
    if (entry.startsWith(key)) {
      if (digest && !placed) {
        out.push(key + digest);
        placed = true;
      }
      continue;
    }
    out.push(entry);
    if (!placed && digest && entry.startsWith(`${ENV.vscodeVersion}=`)) {
      out.push(key + digest);
      placed = true;
    }
  }
  return out;
}

/** The named shell's `env:` overlay. YAML keys arrive as written; viper lowercases them. */
function namedShellEnv(req: SessionRequest): Record<string, string> {
  if (req.namedShell === undefined) return {};
  const want = req.namedShell.trim().toLowerCase();
  const key = Object.keys(req.config.shells).find((k) => k === req.namedShell || k.trim().toLowerCase() === want);
  return key === undefined ? {} : req.config.shells[key].env;
}

/** The egress proxy's directory, read-only: the container connects to its socket and cannot replace it. */
function egressMount(dir: string): PlannedMount {
  return { name: 'egress', source: cleanPath(dir), target: EGRESS.containerDir, readonly: true, type: 'bind', createIfMissing: false };
}

/**
 * Under an egress policy: where the forwarder listens (its socket for the entrypoint, the proxy
 * variables for programs, both spellings), loopback left direct, and Node told to honour them.
 */
function egressEnv(): string[] {
  const proxy = `http://127.0.0.1:${EGRESS.proxyPort}`;
  return [
    `${ENV.egressSocket}=${EGRESS.containerSocket}`,
    ...EGRESS_PROXY_ENV.proxy.map((k) => `${k}=${proxy}`),
    ...EGRESS_PROXY_ENV.noProxy.map((k) => `${k}=${EGRESS_PROXY_ENV.noProxyValue}`),
    `${EGRESS_PROXY_ENV.nodeUseEnvProxy}=1`,
  ];
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
    (bindings[key] ??= []).push({ HostIp: p.hostIp ?? DEFAULT_PUBLISH_HOST_IP, HostPort: p.hostPort });
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
