/**
 * Opening a workspace's container (upstream runplan): inspect, then connect to a running one,
 * start a stopped one, or create it — with the peer-messaging objects set up alongside, a
 * degraded create when they fail, and drift warnings when an existing container no longer
 * matches the plan.
 */
import type Docker from 'dockerode';
import { mkdir, readdir, readFile, readlink } from 'node:fs/promises';
import { createServer } from 'node:net';
import { CONTAINER } from '../contract/constants';
import { driftWarning, missingSocketVolume, peerSetupWarning, pidModeDrift, type InspectedMount } from '../plan/drift';
import type { ObjectNames } from '../contract/types';
import type { SessionPlan } from '../plan/types';
import { clause, engineMessage, isConflict, isNotFound, isNotModified, throwIfAborted } from './errors';
import { ensureAnchor, ensureSocketVolume, inspectAfterConflict, parseUser, waitUntilGone, type SetupContext } from './peer';

export interface OpenContext extends SetupContext {
  /** Creates a host directory (mode 0700 when new). The one filesystem side effect of an open. */
  ensureDir?: (path: string) => Promise<void>;
}

export interface OpenSessionOptions {
  /** Makes the image available (build, pull, preflight); called on the create path only. */
  ensureImage: (image: string) => Promise<void>;
  progress?: (step: string) => void;
  signal?: AbortSignal;
  /** Replaces the socket volume's ownership command (tests make it fail). */
  volumeInitCommand?: string;
}

export type OpenAction = 'connect' | 'start' | 'create';

export interface OpenResult {
  id: string;
  name: string;
  action: OpenAction;
  /** The container is in the anchor's PID namespace and mounts the socket volume. */
  peerActive: boolean;
  warnings: string[];
  drift: Drift[];
}

export type DriftKind = 'pid-joined-but-planned-off' | 'pid-planned-on-but-outside' | 'missing-socket-volume' | 'missing-port';

export interface Drift {
  kind: DriftKind;
  container: string;
  message: string;
}

const PEER_WARNING_PREFIX = 'peer messaging: ';

export async function openSession(ctx: OpenContext, plan: SessionPlan, opts: OpenSessionOptions): Promise<OpenResult> {
  const step = (text: string) => {
    opts.progress?.(text);
    ctx.log?.(text);
  };
  step(`Looking for the container ${plan.name}`);
  let info = await inspectContainer(ctx.docker, plan.name);
  if (info?.State.Status === 'removing') {
    step(`Waiting for Docker to finish removing ${plan.name}`);
    await waitUntilGone(ctx.docker, plan.name);
    info = undefined;
  }
  throwIfAborted(opts.signal);
  return info ? reattach(ctx, plan, info, opts, step) : create(ctx, plan, opts, step);
}

/** The container's inspect data, or undefined on a real not-found. */
async function inspectContainer(docker: Docker, name: string): Promise<Docker.ContainerInspectInfo | undefined> {
  try {
    const info = await docker.getContainer(name).inspect();
    return info.Id ? info : undefined;
  } catch (err) {
    if (isNotFound(err)) return undefined;
    throw new Error(`Could not inspect the container ${name}: ${clause(engineMessage(err))}. Check that Docker is healthy and try again.`, {
      cause: err,
    });
  }
}

async function reattach(
  ctx: OpenContext,
  plan: SessionPlan,
  info: Docker.ContainerInspectInfo,
  opts: OpenSessionOptions,
  step: (text: string) => void,
): Promise<OpenResult> {
  const { docker } = ctx;
  const warnings: string[] = [];
  const container = docker.getContainer(info.Id);
  let action: OpenAction = 'connect';
  if (info.State.Paused) {
    step(`Resuming the paused container ${plan.name}`);
    await container.unpause().catch((err: unknown) => {
      if (!isNotModified(err)) throw new Error(`Could not resume the container ${plan.name}: ${clause(engineMessage(err))}.`);
    });
  } else if (!info.State.Running) {
    action = 'start';
    const storedPid = info.HostConfig.PidMode ?? '';
    if (plan.peer || storedPid.startsWith('container:')) {
      step('Setting up peer messaging');
      // The container cannot start while the namespace it joins is down; the volume is checked
      // again because `docker volume rm` may have removed it since the container was made.
      const failure = await setUpPeer(ctx, plan, opts, { volume: plan.peer });
      if (failure) warnings.push(peerSetupWarning(failure));
    }
    step(`Starting the container ${plan.name}`);
    try {
      await container.start();
    } catch (err) {
      if (!isNotModified(err)) throw startFailure(plan.name, err, storedPid);
    }
  }
  // The warm path (a running container) is what every shell after the first takes: its checks
  // are independent reads, so they run side by side, and the inspect above is still current.
  const [volumeFailure, current, anchorId] = await Promise.all([
    action === 'connect' && plan.peer ? setUpPeer(ctx, plan, opts, { anchor: false, volume: true }) : undefined,
    action === 'connect' && !info.State.Paused ? info : inspectContainer(docker, info.Id),
    resolveAnchorId(ctx),
  ]);
  if (volumeFailure) warnings.push(`${PEER_WARNING_PREFIX}${volumeFailure}`);
  const drift = driftAgainstPlan(current ?? info, plan, ctx.names, anchorId);
  warnings.push(...warningsFor(drift));
  return {
    id: info.Id,
    name: plan.name,
    action,
    peerActive: peerActiveIn(current ?? info, ctx.names, anchorId),
    warnings,
    drift,
  };
}

function startFailure(name: string, err: unknown, storedPid: string): Error {
  const why = clause(engineMessage(err));
  if (storedPid.startsWith('container:')) {
    return new Error(
      `The container ${name} could not start: ${why}. It joins the PID namespace of a container that is gone or ` +
        `stopped; stop it with \`toolbox stop ${name}\`, then start the shell again.`,
    );
  }
  return new Error(`The container ${name} could not start: ${why}. Stop it with \`toolbox stop ${name}\`, then start the shell again.`);
}

async function create(ctx: OpenContext, plan: SessionPlan, opts: OpenSessionOptions, step: (text: string) => void): Promise<OpenResult> {
  const { docker } = ctx;
  step('Checking that the planned ports are free');
  try {
    await checkPortsFree(ctx, plan);
  } catch (err) {
    // The port may be held by this very container, created by a concurrent open just now.
    const now = await inspectContainer(docker, plan.name);
    if (now) return reattach(ctx, plan, now, opts, step);
    throw err;
  }
  step(`Preparing the image ${plan.create.Image}`);
  await opts.ensureImage(plan.create.Image);
  throwIfAborted(opts.signal);

  const ensureDir = ctx.ensureDir ?? defaultEnsureDir;
  const dirs = Promise.all(plan.ensureDirs.map((dir) => ensureDir(dir)));
  let peerFailure: string | undefined;
  if (plan.peer) {
    step('Setting up peer messaging');
    peerFailure = await setUpPeer(ctx, plan, opts, { volume: true });
  }
  try {
    await dirs;
  } catch (err) {
    throw new Error(`Could not create a directory to mount into ${plan.name}: ${clause(engineMessage(err))}.`, { cause: err });
  }
  throwIfAborted(opts.signal);

  const warnings: string[] = [];
  const body = peerFailure ? withoutPeer(plan.create, ctx.names) : plan.create;
  if (peerFailure) warnings.push(peerSetupWarning(peerFailure));

  step(`Creating the container ${plan.name}`);
  let id: string;
  try {
    id = (await docker.createContainer(body as Docker.ContainerCreateOptions)).id;
  } catch (err) {
    if (isConflict(err)) {
      // Another open of the same workspace won the race: attach to its container.
      return reattach(ctx, plan, await inspectAfterConflict(docker, plan.name), opts, step);
    }
    throw new Error(`Could not create the container ${plan.name}: ${clause(engineMessage(err))}.`, { cause: err });
  }
  step(`Starting the container ${plan.name}`);
  try {
    await docker.getContainer(id).start();
  } catch (err) {
    if (!isNotModified(err)) {
      // Left in place, a container that cannot start would be reattached to on every open.
      await docker
        .getContainer(id)
        .remove({ force: true })
        .catch(() => undefined);
      throw new Error(
        `The container ${plan.name} was created but could not start: ${clause(engineMessage(err))}. ` +
          `It has been removed; fix the cause and open the shell again.`,
        { cause: err },
      );
    }
  }
  return { id, name: plan.name, action: 'create', peerActive: plan.peer && !peerFailure, warnings, drift: [] };
}

async function defaultEnsureDir(path: string): Promise<void> {
  await mkdir(path, { recursive: true, mode: 0o700 });
}

/**
 * Sets up the anchor and/or the socket volume concurrently. Returns why it failed (for the
 * warning), undefined when all is well. Cancellation is rethrown, never degraded.
 */
async function setUpPeer(
  ctx: OpenContext,
  plan: SessionPlan,
  opts: OpenSessionOptions,
  want: { anchor?: boolean; volume: boolean },
): Promise<string | undefined> {
  const image = plan.create.Image;
  const steps: Promise<unknown>[] = [];
  if (want.anchor !== false) steps.push(ensureAnchor(ctx, image));
  if (want.volume) {
    const user = parseUser(plan.create.User);
    steps.push(
      user
        ? ensureSocketVolume(ctx, image, user.uid, user.gid, { signal: opts.signal, initCommand: opts.volumeInitCommand })
        : Promise.reject(
            new Error(`the container user "${plan.create.User}" is not a numeric uid:gid, so the socket volume cannot be given to it`),
          ),
    );
  }
  const results = await Promise.allSettled(steps);
  throwIfAborted(opts.signal);
  const failed = results.find((r): r is PromiseRejectedResult => r.status === 'rejected');
  if (!failed) return undefined;
  const reason = failed.reason instanceof Error ? failed.reason.message : String(failed.reason);
  ctx.log?.(`${PEER_WARNING_PREFIX}${reason}`);
  return clause(reason);
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

// ---------------------------------------------------------------------------------------------
// Drift

/** Re-checks an existing container against a plan (the UI calls this after a settings change). */
export async function checkDrift(ctx: SetupContext, name: string, plan: SessionPlan): Promise<Drift[]> {
  const info = await inspectContainer(ctx.docker, name);
  if (!info) return [];
  return driftAgainstPlan(info, plan, ctx.names, await resolveAnchorId(ctx));
}

/**
 * The anchor's id: Docker stores `container:<id>` for the `container:<name>` it is handed.
 * undefined when there is no anchor or it cannot be inspected (then only a verbatim match counts).
 */
async function resolveAnchorId(ctx: SetupContext): Promise<string | undefined> {
  try {
    return (await ctx.docker.getContainer(ctx.names.anchor).inspect()).Id;
  } catch (err) {
    if (!isNotFound(err)) ctx.log?.(`${PEER_WARNING_PREFIX}could not inspect ${ctx.names.anchor}: ${clause(engineMessage(err))}`);
    return undefined;
  }
}

/** The parts of an inspected container the drift check reads. */
export interface InspectedForDrift {
  HostConfig: { PidMode?: string; PortBindings?: unknown };
  Mounts?: InspectedMount[];
}

function peerActiveIn(info: InspectedForDrift, names: ObjectNames, anchorId: string | undefined): boolean {
  return pidModeDrift(info.HostConfig.PidMode ?? '', true, anchorId, names) === undefined && !missingSocketVolume(info.Mounts, names);
}

/** Pure: how an inspected container differs from the plan, namespace first, then ports. */
export function driftAgainstPlan(info: InspectedForDrift, plan: SessionPlan, names: ObjectNames, anchorId: string | undefined): Drift[] {
  const container = plan.name;
  const drift: Drift[] = [];
  const pid = pidModeDrift(info.HostConfig.PidMode ?? '', plan.peer, anchorId, names);
  if (pid) {
    drift.push({ kind: `pid-${pid.kind}`, container, message: driftWarning(pid.kind, container, names) });
  }
  if (plan.peer && missingSocketVolume(info.Mounts, names)) {
    drift.push({ kind: 'missing-socket-volume', container, message: driftWarning('missing-socket-volume', container, names) });
  }
  const published = (info.HostConfig.PortBindings ?? {}) as Record<string, Array<{ HostIp?: string; HostPort?: string }> | null>;
  for (const p of plannedPorts(plan)) {
    const bound = (published[p.key] ?? []).some((b) => b.HostPort === String(p.hostPort));
    if (!bound) {
      drift.push({
        kind: 'missing-port',
        container,
        message:
          `${container} does not publish port ${p.hostIp}:${p.hostPort} (container port ${p.key}) that this workspace asks for ` +
          `— stop it with \`toolbox stop ${container}\` or the Toolbox: Stop Container command, then open the shell again`,
      });
    }
  }
  return drift;
}

/** One namespace warning (the first), then every port warning. */
export function warningsFor(drift: Drift[]): string[] {
  const peer = drift.find((d) => d.kind !== 'missing-port');
  return [...(peer ? [peer.message] : []), ...drift.filter((d) => d.kind === 'missing-port').map((d) => d.message)];
}

// ---------------------------------------------------------------------------------------------
// Ports

interface PlannedPort {
  key: string;
  hostIp: string;
  hostPort: number;
  protocol: string;
}

function plannedPorts(plan: SessionPlan): PlannedPort[] {
  const out: PlannedPort[] = [];
  for (const [key, bindings] of Object.entries(plan.create.HostConfig.PortBindings ?? {})) {
    const protocol = key.split('/')[1] ?? 'tcp';
    for (const b of bindings) {
      const hostPort = Number(b.HostPort);
      if (Number.isInteger(hostPort) && hostPort > 0) out.push({ key, hostIp: b.HostIp || '127.0.0.1', hostPort, protocol });
    }
  }
  return out;
}

/**
 * Pre-flight for the create path: a planned host port published by another container, or held
 * by a process on this machine, fails the open with the name of whoever holds it.
 */
async function checkPortsFree(ctx: SetupContext, plan: SessionPlan): Promise<void> {
  const ports = plannedPorts(plan);
  if (ports.length === 0) return;
  const running = await ctx.docker.listContainers();
  for (const p of ports) {
    const holder = running.find((c) =>
      (c.Ports ?? []).some((cp) => cp.PublicPort === p.hostPort && (cp.Type ?? 'tcp') === p.protocol && ipsOverlap(cp.IP, p.hostIp)),
    );
    if (holder) {
      const holderName = (holder.Names[0] ?? holder.Id).replace(/^\//, '');
      if (holderName === plan.name) continue;
      const stop = ctx.names.isOurs(holderName) ? `\`toolbox stop ${holderName}\`` : `\`docker stop ${holderName}\``;
      throw new Error(
        `Port ${p.hostIp}:${p.hostPort} is already published by the container ${holderName}. ` +
          `Stop it with ${stop}, or choose another port for this workspace.`,
      );
    }
    if (p.protocol !== 'tcp') continue;
    const inUse = await tcpPortInUse(p.hostIp, p.hostPort);
    if (inUse) {
      const owner = await describePortOwner(p.hostPort);
      throw new Error(
        `Port ${p.hostIp}:${p.hostPort} is already in use on this machine${owner ? ` by ${owner}` : ''}. ` +
          `Stop ${owner ? 'it' : 'whatever holds it'}, or choose another port for this workspace.`,
      );
    }
  }
}

function ipsOverlap(published: string | undefined, planned: string): boolean {
  const any = (ip: string | undefined) => !ip || ip === '0.0.0.0' || ip === '::';
  return any(published) || any(planned) || published === planned;
}

function tcpPortInUse(host: string, port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const server = createServer();
    server.once('error', (err: NodeJS.ErrnoException) => resolve(err.code === 'EADDRINUSE' || err.code === 'EACCES'));
    server.listen({ host, port, exclusive: true }, () => server.close(() => resolve(false)));
  });
}

/** Linux only, best effort: `<command> (pid N)` for the process listening on a TCP port. */
async function describePortOwner(port: number): Promise<string | undefined> {
  if (process.platform !== 'linux') return undefined;
  try {
    const inodes = new Set<string>();
    for (const table of ['/proc/net/tcp', '/proc/net/tcp6']) {
      const text = await readFile(table, 'utf8').catch(() => '');
      for (const line of text.split('\n').slice(1)) {
        const cols = line.trim().split(/\s+/);
        const local = cols[1];
        if (!local || cols[3] !== '0A') continue; // 0A = LISTEN
        if (parseInt(local.split(':')[1] ?? '', 16) === port && cols[9]) inodes.add(cols[9]);
      }
    }
    if (inodes.size === 0) return undefined;
    for (const pid of (await readdir('/proc')).filter((d) => /^\d+$/.test(d))) {
      const fds = await readdir(`/proc/${pid}/fd`).catch(() => [] as string[]);
      for (const fd of fds) {
        const target = await readlink(`/proc/${pid}/fd/${fd}`).catch(() => '');
        const m = /^socket:\[(\d+)\]$/.exec(target);
        if (m && inodes.has(m[1] as string)) {
          const comm = (await readFile(`/proc/${pid}/comm`, 'utf8').catch(() => '')).trim();
          return `${comm || 'a process'} (pid ${pid})`;
        }
      }
    }
  } catch {
    // Diagnostics only.
  }
  return undefined;
}
