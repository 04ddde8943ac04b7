/**
 * The two shared objects peer messaging needs (docs/decisions/0001-peer-messaging-on-by-default.md):
 * the anchor container holding the PID namespace, and the socket volume owned by the host user.
 */
import type Docker from 'dockerode';
import { CONTAINER } from '../contract/upstream';
import { PEER_MESSAGE_PREFIX } from '../plan/drift';
import { createAdapted } from './compat';
import { inspectAfterConflict, logTail, raceAbort, subscribeWait, waitUntilGone } from './containers';
import type { EngineContext } from './context';
import { clause, engineMessage, hasDependents, isConflict, isNotFound, isNotModified, isVolumeTaken, throwIfAborted } from './errors';

/** The anchor's entrypoint: a bare sleep under tini, which reaps whatever joins the namespace. */
export const ANCHOR_ENTRYPOINT: readonly string[] = [CONTAINER.tini, '-g', '--', 'sleep'];
export const ANCHOR_CMD: readonly string[] = ['infinity'];

/** Container states in which a container cannot be holding anything. */
const INERT_STATES = new Set(['created', 'exited', 'dead']);

/**
 * Makes sure the anchor runs and returns its id. Inspect → running: use it; stopped: start it;
 * absent: create it. A stale anchor (other entrypoint) is replaced only when nothing relies on it.
 */
export async function ensureAnchor(ctx: EngineContext, image: string): Promise<string> {
  const { docker, names } = ctx;
  let info: Docker.ContainerInspectInfo | undefined;
  try {
    info = await docker.getContainer(names.anchor).inspect();
  } catch (err) {
    if (!isNotFound(err)) {
      throw new Error(`Could not inspect the anchor container ${names.anchor}: ${clause(engineMessage(err))}.`, { cause: err });
    }
  }
  if (info && info.State.Status === 'removing') {
    await waitUntilGone(docker, names.anchor);
    info = undefined;
  }
  if (info && isStaleAnchor(info)) {
    const running = info.State.Running;
    if (!running || !(await namespaceHeld(ctx, info.Id))) {
      ctx.log?.(`${PEER_MESSAGE_PREFIX}replacing the stale anchor ${names.anchor} (entrypoint ${JSON.stringify(info.Config.Entrypoint)})`);
      const removed = await docker
        .getContainer(info.Id)
        .remove({ force: true })
        .then(() => true)
        .catch((err: unknown) => {
          // Podman keeps it while any container joined it, even an exited one: it still holds a namespace.
          if (hasDependents(err)) return false;
          throw err;
        });
      if (removed) info = undefined;
      else ctx.log?.(`${PEER_MESSAGE_PREFIX}the engine keeps the stale anchor ${names.anchor} while containers joined it; using it`);
    } else {
      ctx.log?.(`${PEER_MESSAGE_PREFIX}the anchor ${names.anchor} is stale but other containers share its namespace; keeping it`);
    }
  }
  if (info) {
    if (!info.State.Running) await startAnchor(ctx, info.Id, false);
    return info.Id;
  }
  return createAnchor(ctx, image);
}

function isStaleAnchor(info: Docker.ContainerInspectInfo): boolean {
  const entrypoint = info.Config.Entrypoint;
  const actual = Array.isArray(entrypoint) ? entrypoint : entrypoint ? [entrypoint] : [];
  return actual.length !== ANCHOR_ENTRYPOINT.length || actual.some((part, i) => part !== ANCHOR_ENTRYPOINT[i]);
}

/**
 * True when some container of ours that may be running joins the anchor's namespace. Any error
 * answers "held": replacing an anchor in use would cut every member off from its peers.
 */
async function namespaceHeld(ctx: EngineContext, anchorId: string): Promise<boolean> {
  const { docker, names } = ctx;
  try {
    const listed = await docker.listContainers({ all: true, filters: { name: [names.prefix] } });
    const candidates = listed.filter(
      (c) => c.Id !== anchorId && !INERT_STATES.has(c.State) && c.Names.some((n) => names.isOurs(n, c.Labels)),
    );
    for (const c of candidates) {
      const detail = await docker.getContainer(c.Id).inspect();
      if (!INERT_STATES.has(detail.State.Status) && detail.HostConfig.PidMode === `container:${anchorId}`) return true;
    }
    return false;
  } catch (err) {
    ctx.log?.(`${PEER_MESSAGE_PREFIX}could not tell whether the anchor is in use (${clause(engineMessage(err))}); keeping it`);
    return true;
  }
}

async function createAnchor(ctx: EngineContext, image: string): Promise<string> {
  const { docker, names } = ctx;
  let id: string;
  try {
    const created = await createAdapted(docker, {
      name: names.anchor,
      Image: image,
      Entrypoint: [...ANCHOR_ENTRYPOINT],
      Cmd: [...ANCHOR_CMD],
      // It only holds a PID namespace: no network to set up, nothing to fail on a broken bridge.
      HostConfig: { AutoRemove: false, NetworkMode: 'none' },
    });
    id = created.id;
  } catch (err) {
    if (!isConflict(err)) {
      throw new Error(`Could not create the anchor container ${names.anchor}: ${clause(engineMessage(err))}.`, { cause: err });
    }
    // Someone else created it at the same moment: use theirs.
    const theirs = await inspectAfterConflict(docker, names.anchor);
    if (!theirs.State.Running) await startAnchor(ctx, theirs.Id, false);
    return theirs.Id;
  }
  ctx.log?.(`${PEER_MESSAGE_PREFIX}created the anchor ${names.anchor}`);
  await startAnchor(ctx, id, true);
  return id;
}

async function startAnchor(ctx: EngineContext, id: string, createdByUs: boolean): Promise<void> {
  try {
    await ctx.docker.getContainer(id).start();
  } catch (err) {
    if (isNotModified(err)) return;
    if (createdByUs) {
      // A freshly created anchor that cannot start is useless; leaving it would make every later
      // open try to start it again instead of creating a working one.
      await ctx.docker
        .getContainer(id)
        .remove({ force: true })
        .catch(() => undefined);
    }
    throw new Error(`The anchor container ${ctx.names.anchor} could not start: ${clause(engineMessage(err))}.`, { cause: err });
  }
}

export interface SocketVolumeOptions {
  signal?: AbortSignal;
  /** Replaces the ownership command; tests use it to make the initialiser fail. */
  initCommand?: string;
  /** How long the initialiser may run. */
  timeoutMs?: number;
}

/**
 * Makes sure the socket volume exists and, when this call creates it, is owned by uid:gid with
 * mode 0700. Only a real not-found means absent: guessing absence on a transient error would
 * create (and on a failing init, remove) a volume live sessions are using.
 */
export async function ensureSocketVolume(
  ctx: EngineContext,
  image: string,
  uid: number,
  gid: number,
  opts: SocketVolumeOptions = {},
): Promise<void> {
  const { docker, names } = ctx;
  const volume = names.socketVolume;
  if (await volumeExists(docker, volume)) return;
  throwIfAborted(opts.signal);
  try {
    await docker.createVolume({ Name: volume });
  } catch (err) {
    // Docker answers a create of an existing volume with that volume; Podman with an error.
    // Either way another open made it a moment ago, and the initialiser below settles who owns it.
    if (!isVolumeTaken(err)) throw new Error(`Could not create the volume ${volume}: ${clause(engineMessage(err))}.`, { cause: err });
  }
  ctx.log?.(`${PEER_MESSAGE_PREFIX}created the volume ${volume}; setting its owner to ${uid}:${gid}`);
  let initError: Error;
  try {
    await runVolumeInit(ctx, image, uid, gid, opts);
    return;
  } catch (err) {
    initError = err instanceof Error ? err : new Error(String(err));
  }
  // A volume left root-owned would pass the exists check forever and break every session's
  // socket directory silently, so a failed init takes the volume with it.
  try {
    await docker.getVolume(volume).remove({ force: true });
  } catch (err) {
    if (!isNotFound(err)) {
      throw new Error(
        `${clause(initError.message)}; the volume ${volume} could not be removed either ` +
          `(${clause(engineMessage(err))}). Remove it with \`docker volume rm ${volume}\` before the next shell.`,
        { cause: err },
      );
    }
  }
  throw new Error(`${clause(initError.message)}; the volume ${volume} was removed again so the next shell starts clean.`);
}

async function volumeExists(docker: Docker, volume: string): Promise<boolean> {
  try {
    await docker.getVolume(volume).inspect();
    return true;
  } catch (err) {
    if (isNotFound(err)) return false;
    throw new Error(`Could not inspect the volume ${volume}: ${clause(engineMessage(err))}. Check that Docker is healthy and try again.`, {
      cause: err,
    });
  }
}

/** Runs the root initialiser once; it is always removed, even when the caller gave up. */
async function runVolumeInit(ctx: EngineContext, image: string, uid: number, gid: number, opts: SocketVolumeOptions): Promise<void> {
  const { docker, names } = ctx;
  const dir = CONTAINER.peerSocketDir;
  const command = opts.initCommand ?? `chown ${uid}:${gid} ${dir} && chmod 0700 ${dir}`;
  let container: Docker.Container;
  try {
    // On rootless Podman in the user's own id mapping, as the shells that will use the volume.
    container = await createAdapted(docker, {
      name: names.socketVolumeInit,
      Image: image,
      User: '0:0',
      Entrypoint: ['sh', '-c'],
      Cmd: [command],
      HostConfig: { Binds: [`${names.socketVolume}:${dir}`], AutoRemove: false, NetworkMode: 'none' },
    });
  } catch (err) {
    if (isConflict(err)) {
      // Another open is initialising the same volume right now: let it finish, then trust it.
      await waitUntilGone(docker, names.socketVolumeInit, opts.timeoutMs ?? 30_000);
      if (await volumeExists(docker, names.socketVolume)) return;
      throw new Error(`Another toolbox process tried to set up the volume ${names.socketVolume} at the same time and failed.`, {
        cause: err,
      });
    }
    throw new Error(`Could not create the volume initialiser ${names.socketVolumeInit}: ${clause(engineMessage(err))}.`, { cause: err });
  }
  try {
    // Subscribed before start (next-exit: a created container already counts as not running),
    // and only once the engine has confirmed the subscription, so a fast exit cannot slip past.
    const { exited } = await subscribeWait(docker, container.id, 'next-exit');
    await container.start();
    const result = await raceAbort(exited, opts.signal, opts.timeoutMs ?? 60_000);
    if (result.StatusCode !== 0) {
      const tail = await logTail(container);
      throw new Error(
        `The initialiser of the volume ${names.socketVolume} exited with code ${result.StatusCode}` + (tail ? ` (${tail})` : ''),
      );
    }
  } catch (err) {
    if ((err as Error).name === 'AbortError') throw err;
    if (err instanceof Error && err.message.startsWith('The initialiser')) throw err;
    throw new Error(`The initialiser of the volume ${names.socketVolume} could not run: ${clause(engineMessage(err))}`, { cause: err });
  } finally {
    await container.remove({ force: true }).catch((err: unknown) => {
      if (!isNotFound(err)) ctx.log?.(`${PEER_MESSAGE_PREFIX}could not remove ${names.socketVolumeInit}: ${engineMessage(err)}`);
    });
  }
}
