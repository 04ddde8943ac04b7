/**
 * Opening a session's container (upstream runplan): inspect, then connect to a running one,
 * start a stopped one, or create it — with the peer-messaging objects set up alongside, a
 * degraded create when they fail, and drift warnings (plan/drift.ts) when an existing container
 * no longer matches the plan.
 */
import { mkdir } from 'node:fs/promises';
import type Docker from 'dockerode';
import {
  driftAgainstPlan,
  observedPeerState,
  peerDrift,
  peerSetupWarning,
  PEER_MESSAGE_PREFIX,
  storedPidMode,
  warningsFor,
  type Drift,
} from '../plan/drift';
import { withIdentities } from '../plan/protect';
import { withImageDigest, withoutPeer } from '../plan/session';
import type { SessionPlan } from '../plan/types';
import { createAdapted } from './compat';
import { inspectAfterConflict, inspectContainer, parseUser, waitUntilGone } from './containers';
import type { EngineContext } from './context';
import { clause, engineMessage, isConflict, isNotFound, isNotModified, throwIfAborted } from './errors';
import { ensureAnchor, ensureSocketVolume } from './peer';
import {
  claimPlaceholders,
  makePlaceholders,
  placeholderCandidates,
  placeholderIdentities,
  removeUnusedPlaceholders,
} from './placeholders';
import { checkPortsFree } from './ports';

export interface OpenContainerOptions {
  /**
   * Makes the image available (build, pull, preflight); called on the create path only. Answers
   * the image's repo digest when it has one (the container's TOOLBOX_IMAGE_DIGEST).
   */
  ensureImage: (image: string) => Promise<string | undefined | void>;
  /** Creates a host directory (mode 0700 when new). The one filesystem side effect of an open. */
  ensureDir?: (path: string) => Promise<void>;
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

/** Connects to, starts or creates the plan's container, setting up what it needs on the way. */
export async function openContainer(ctx: EngineContext, plan: SessionPlan, opts: OpenContainerOptions): Promise<OpenResult> {
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

async function reattach(
  ctx: EngineContext,
  plan: SessionPlan,
  info: Docker.ContainerInspectInfo,
  opts: OpenContainerOptions,
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
    const storedPid = storedPidMode(info.HostConfig.PidMode);
    if (plan.peer || storedPid.startsWith('container:')) {
      step('Setting up peer messaging');
      // The container cannot start while the namespace it joins is down; the volume is checked
      // again because `docker volume rm` may have removed it since the container was made.
      const failure = await setUpPeer(ctx, plan, opts, { volume: plan.peer });
      if (failure) warnings.push(peerSetupWarning(failure));
    }
    // Its placeholders may have been removed since it stopped: the engine would make them as root.
    const mounted = new Set(placeholderCandidates(info.Mounts));
    await makePlaceholders(
      (plan.placeholders ?? []).filter((p) => mounted.has(p.path)),
      parseUser(info.Config.User ?? ''),
    );
    step(`Starting the container ${plan.name}`);
    try {
      await container.start();
    } catch (err) {
      if (!isNotModified(err)) throw startFailure(plan.name, err, storedPid);
    }
  }
  // The warm path (a running container) is what every shell after the first takes: its checks
  // are independent reads, so they run side by side, and the inspect above is still current.
  const [volumeFailure, current, anchorId, placeholdersNow] = await Promise.all([
    action === 'connect' && plan.peer ? setUpPeer(ctx, plan, opts, { anchor: false, volume: true }) : undefined,
    action === 'connect' && !info.State.Paused ? info : inspectContainer(docker, info.Id),
    resolveAnchorId(ctx),
    // What is at each placeholder's path now: a plan made before they were there (an open that
    // lost the create to another) would take them for removed.
    placeholderIdentities(plan.placeholders ?? []),
  ]);
  if (volumeFailure) warnings.push(`${PEER_MESSAGE_PREFIX}${volumeFailure}`);
  const planNow = { ...plan, create: { ...plan.create, Labels: withIdentities(plan.create.Labels, placeholdersNow) } };
  const drift = driftAgainstPlan(current ?? info, planNow, ctx.names, anchorId);
  warnings.push(...warningsFor(drift));
  return {
    id: info.Id,
    name: plan.name,
    action,
    peerActive: peerActiveIn(current ?? info, ctx, anchorId),
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

async function create(
  ctx: EngineContext,
  plan: SessionPlan,
  opts: OpenContainerOptions,
  step: (text: string) => void,
): Promise<OpenResult> {
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
  const digest = (await opts.ensureImage(plan.create.Image)) ?? undefined;
  throwIfAborted(opts.signal);

  const ensureDir = opts.ensureDir ?? defaultEnsureDir;
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
  const owner = parseUser(plan.create.User);
  let placeholders: string[];
  let identities: Record<string, string>;
  // Until the container exists (and so lists them as mounted), no sweep takes its placeholders.
  const release = claimPlaceholders((plan.placeholders ?? []).map((p) => p.path));
  try {
    placeholders = await makePlaceholders(plan.placeholders ?? [], owner);
    // The container records which placeholder it binds, as for every protected path: one the host
    // replaces or removes meanwhile (a `git submodule add` over `.gitmodules`) is drift.
    identities = await placeholderIdentities(plan.placeholders ?? []);
  } catch (err) {
    release();
    throw new Error(`Could not protect ${plan.name}'s folder: ${clause(engineMessage(err))}.`, { cause: err });
  }
  // A container that is not made after all leaves no placeholder behind.
  const unmake = () => removeUnusedPlaceholders(ctx, placeholders, owner);

  const warnings: string[] = [];
  const planned = { ...plan.create, Env: withImageDigest(plan.create.Env, digest), Labels: withIdentities(plan.create.Labels, identities) };
  const body = peerFailure ? withoutPeer(planned, ctx.names) : planned;
  if (peerFailure) warnings.push(peerSetupWarning(peerFailure));

  step(`Creating the container ${plan.name}`);
  let id: string;
  try {
    id = (await createAdapted(docker, body as Docker.ContainerCreateOptions)).id;
  } catch (err) {
    release();
    if (isConflict(err)) {
      // Another open of the same workspace won the race: attach to its container.
      return reattach(ctx, plan, await inspectAfterConflict(docker, plan.name), opts, step);
    }
    await unmake();
    throw new Error(`Could not create the container ${plan.name}: ${clause(engineMessage(err))}.`, { cause: err });
  }
  // Created: the engine lists its binds now, which keeps every sweep off its placeholders.
  release();
  step(`Starting the container ${plan.name}`);
  try {
    const bound = new Set(plan.mounts.filter((m) => m.type === 'bind').map((m) => m.source));
    await startThroughReplacedFiles(docker.getContainer(id), bound);
  } catch (err) {
    if (!isNotModified(err)) {
      // Left in place, a container that cannot start would be reattached to on every open.
      await docker
        .getContainer(id)
        .remove({ force: true })
        .catch(() => undefined);
      await unmake();
      throw new Error(
        `The container ${plan.name} was created but could not start: ${clause(engineMessage(err))}. ` +
          `It has been removed; fix the cause and open the shell again.`,
        { cause: err },
      );
    }
  }
  return { id, name: plan.name, action: 'create', peerActive: plan.peer && !peerFailure, warnings, drift: [] };
}

/** How often a start is tried again when a bound file was replaced while it was being mounted. */
const START_ATTEMPTS = 4;

/**
 * The bound file the engine's start failed on because it was replaced while the runtime mounted
 * it, when that is the failure: runc opens the mount target and mounts through
 * /proc/self/fd/N, and a file that git replaced by rename in between (`git config` writes
 * .git/config.lock, then renames it over .git/config) is gone from that descriptor: "error
 * mounting "<path>" to rootfs at "<path>": … no such file or directory". Only a path the body
 * binds counts; the message is engine text, matched and never run.
 */
export function replacedBindOf(message: string, sources: ReadonlySet<string>): string | undefined {
  const m = /error mounting "([^"]+)" to rootfs at "[^"]*".*no such file or directory/s.exec(message);
  return m && sources.has(m[1]!) ? m[1] : undefined;
}

/**
 * Starts a created container, again when a bound file (a protected path read-only in it,
 * plan/protect.ts) was replaced on the host while the runtime mounted it: New Agent Worktree
 * starts the container while host git writes the repository's config (backend/worktrees.ts), and
 * the start lost that race (found by `npm run bench worktree`). A failed start leaves the container
 * created, and a second start mounts the file that is there now.
 */
async function startThroughReplacedFiles(container: Docker.Container, sources: ReadonlySet<string>): Promise<void> {
  for (let attempt = 1; ; attempt++) {
    try {
      await container.start();
      return;
    } catch (err) {
      if (attempt >= START_ATTEMPTS || isNotModified(err) || replacedBindOf(engineMessage(err), sources) === undefined) throw err;
      await new Promise((resolve) => setTimeout(resolve, 20 * attempt));
    }
  }
}

async function defaultEnsureDir(path: string): Promise<void> {
  await mkdir(path, { recursive: true, mode: 0o700 });
}

/**
 * Sets up the anchor and/or the socket volume concurrently. Returns why it failed (for the
 * warning), undefined when all is well. Cancellation is rethrown, never degraded.
 */
async function setUpPeer(
  ctx: EngineContext,
  plan: SessionPlan,
  opts: OpenContainerOptions,
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
  ctx.log?.(`${PEER_MESSAGE_PREFIX}${reason}`);
  return clause(reason);
}

/**
 * The anchor's id: Docker stores `container:<id>` for the `container:<name>` it is handed.
 * undefined when there is no anchor or it cannot be inspected (then only a verbatim match counts).
 */
async function resolveAnchorId(ctx: EngineContext): Promise<string | undefined> {
  try {
    return (await ctx.docker.getContainer(ctx.names.anchor).inspect()).Id;
  } catch (err) {
    if (!isNotFound(err)) ctx.log?.(`${PEER_MESSAGE_PREFIX}could not inspect ${ctx.names.anchor}: ${clause(engineMessage(err))}`);
    return undefined;
  }
}

/** In the anchor's PID namespace and mounting the socket volume: the same rule as drift, with peer planned on. */
function peerActiveIn(info: Docker.ContainerInspectInfo, ctx: EngineContext, anchorId: string | undefined): boolean {
  return peerDrift(observedPeerState(info, ctx.names), true, anchorId, ctx.names) === undefined;
}
