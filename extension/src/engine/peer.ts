/**
 * The two shared objects peer messaging needs (ADR peer-messaging, upstream §8): the anchor
 * container holding the PID namespace, and the socket volume owned by the host user.
 */
import type Docker from 'dockerode';
import { CONTAINER } from '../contract/constants';
import type { ObjectNames } from '../contract/types';
import { abortError, clause, engineMessage, isConflict, isNotFound, isNotModified, sleep, throwIfAborted } from './errors';

/** What the engine-side setup steps need: the client, the namespace's names, a log sink. */
export interface SetupContext {
  docker: Docker;
  names: ObjectNames;
  log?(line: string): void;
}

/** The anchor's entrypoint: a bare sleep under tini, which reaps whatever joins the namespace. */
export const ANCHOR_ENTRYPOINT: readonly string[] = [CONTAINER.tini, '-g', '--', 'sleep'];
export const ANCHOR_CMD: readonly string[] = ['infinity'];

/** Container states in which a container cannot be holding anything. */
const INERT_STATES = new Set(['created', 'exited', 'dead']);

/**
 * Makes sure the anchor runs and returns its id. Inspect → running: use it; stopped: start it;
 * absent: create it. A stale anchor (other entrypoint) is replaced only when nothing relies on it.
 */
export async function ensureAnchor(ctx: SetupContext, image: string): Promise<string> {
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
      ctx.log?.(`peer messaging: replacing the stale anchor ${names.anchor} (entrypoint ${JSON.stringify(info.Config.Entrypoint)})`);
      await docker.getContainer(info.Id).remove({ force: true });
      info = undefined;
    } else {
      ctx.log?.(`peer messaging: the anchor ${names.anchor} is stale but other containers share its namespace; keeping it`);
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
async function namespaceHeld(ctx: SetupContext, anchorId: string): Promise<boolean> {
  const { docker, names } = ctx;
  try {
    const listed = await docker.listContainers({ all: true, filters: { name: [names.prefix] } });
    const candidates = listed.filter((c) => c.Id !== anchorId && !INERT_STATES.has(c.State) && c.Names.some((n) => names.isOurs(n)));
    for (const c of candidates) {
      const detail = await docker.getContainer(c.Id).inspect();
      if (!INERT_STATES.has(detail.State.Status) && detail.HostConfig.PidMode === `container:${anchorId}`) return true;
    }
    return false;
  } catch (err) {
    ctx.log?.(`peer messaging: could not tell whether the anchor is in use (${clause(engineMessage(err))}); keeping it`);
    return true;
  }
}

async function createAnchor(ctx: SetupContext, image: string): Promise<string> {
  const { docker, names } = ctx;
  let id: string;
  try {
    const created = await docker.createContainer({
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
  ctx.log?.(`peer messaging: created the anchor ${names.anchor}`);
  await startAnchor(ctx, id, true);
  return id;
}

async function startAnchor(ctx: SetupContext, id: string, createdByUs: boolean): Promise<void> {
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

/**
 * Inspects the container that won a name conflict. Docker reserves the name before the
 * container is registered, so for a moment after a 409 the winner is not yet inspectable.
 */
export async function inspectAfterConflict(docker: Docker, name: string, timeoutMs = 5_000): Promise<Docker.ContainerInspectInfo> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    try {
      return await docker.getContainer(name).inspect();
    } catch (err) {
      if (!isNotFound(err) || Date.now() >= deadline) {
        throw new Error(
          `Another process created the container ${name} at the same moment, but it cannot be inspected: ${clause(engineMessage(err))}. Try again.`,
          { cause: err },
        );
      }
    }
    await sleep(100);
  }
}

/** Polls until a container (one Docker is removing, or another process's initialiser) is gone. */
export async function waitUntilGone(docker: Docker, name: string, timeoutMs = 10_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    try {
      await docker.getContainer(name).inspect();
    } catch (err) {
      if (isNotFound(err)) return;
      throw err;
    }
    await sleep(200);
  }
  throw new Error(
    `The container ${name} is still there after ${Math.round(timeoutMs / 1000)} s of waiting for it to go. ` +
      `Wait until Docker has removed it (or remove it yourself), then try again.`,
  );
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
  ctx: SetupContext,
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
    throw new Error(`Could not create the volume ${volume}: ${clause(engineMessage(err))}.`, { cause: err });
  }
  ctx.log?.(`peer messaging: created the volume ${volume}; setting its owner to ${uid}:${gid}`);
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
async function runVolumeInit(ctx: SetupContext, image: string, uid: number, gid: number, opts: SocketVolumeOptions): Promise<void> {
  const { docker, names } = ctx;
  const dir = CONTAINER.peerSocketDir;
  const command = opts.initCommand ?? `chown ${uid}:${gid} ${dir} && chmod 0700 ${dir}`;
  let container: Docker.Container;
  try {
    container = await docker.createContainer({
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
      if (!isNotFound(err)) ctx.log?.(`peer messaging: could not remove ${names.socketVolumeInit}: ${engineMessage(err)}`);
    });
  }
}

export interface WaitResult {
  StatusCode: number;
  Error?: { Message?: string } | null;
}

/**
 * Registers a wait with the engine and resolves once the engine has accepted it (it flushes
 * the response headers before waiting); the returned promise settles when the condition holds.
 * dockerode's own wait() cannot tell when the subscription is in place.
 */
export async function subscribeWait(
  docker: Docker,
  id: string,
  condition: 'next-exit' | 'not-running' | 'removed',
): Promise<{ exited: Promise<WaitResult> }> {
  const stream = await new Promise<NodeJS.ReadableStream>((resolve, reject) => {
    docker.modem.dial(
      {
        path: `/containers/${id}/wait?`,
        method: 'POST',
        isStream: true,
        statusCodes: { 200: true, 400: 'bad parameter', 404: 'no such container', 500: 'server error' },
        options: { condition },
      },
      (err: unknown, s: unknown) => (err ? reject(err) : resolve(s as NodeJS.ReadableStream)),
    );
  });
  const exited = new Promise<WaitResult>((resolve, reject) => {
    const chunks: Buffer[] = [];
    stream.on('data', (c: Buffer) => chunks.push(c));
    stream.on('error', reject);
    stream.on('end', () => {
      try {
        resolve(JSON.parse(Buffer.concat(chunks).toString('utf8')) as WaitResult);
      } catch {
        reject(new Error('the engine ended the wait without an exit status'));
      }
    });
  });
  exited.catch(() => undefined);
  return { exited };
}

function raceAbort<T>(promise: Promise<T>, signal: AbortSignal | undefined, timeoutMs: number): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`did not finish within ${Math.round(timeoutMs / 1000)} s`)), timeoutMs);
    const onAbort = () => reject(abortError(signal as AbortSignal));
    if (signal?.aborted) onAbort();
    signal?.addEventListener('abort', onAbort, { once: true });
    promise.then(resolve, reject).finally(() => {
      clearTimeout(timer);
      signal?.removeEventListener('abort', onAbort);
    });
  });
}

/** The last lines a stopped container wrote, stdout and stderr merged, on one line. */
export async function logTail(container: Docker.Container, lines = 10): Promise<string> {
  try {
    const raw = (await container.logs({ stdout: true, stderr: true, tail: lines, follow: false })) as unknown as Buffer;
    return demux(raw)
      .trim()
      .split('\n')
      .map((l) => l.trim())
      .filter(Boolean)
      .join(' / ');
  } catch {
    return '';
  }
}

/** Strips Docker's 8-byte stream headers from a non-TTY log buffer. */
export function demux(buf: Buffer): string {
  const out: Buffer[] = [];
  let i = 0;
  while (i + 8 <= buf.length && (buf[i] === 1 || buf[i] === 2 || buf[i] === 0) && buf[i + 1] === 0) {
    const size = buf.readUInt32BE(i + 4);
    out.push(buf.subarray(i + 8, i + 8 + size));
    i += 8 + size;
  }
  if (i === 0) return buf.toString('utf8');
  return Buffer.concat(out).toString('utf8');
}

/** Parses a `uid:gid` User field; undefined for names or a missing part. */
export function parseUser(user: string): { uid: number; gid: number } | undefined {
  const m = /^(\d+):(\d+)$/.exec(user.trim());
  return m ? { uid: Number(m[1]), gid: Number(m[2]) } : undefined;
}
