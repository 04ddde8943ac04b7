/**
 * Generic container helpers every engine module uses: inspect with a real not-found, wait for a
 * name to be free, subscribe to a wait before start, read a stopped container's last lines.
 */
import type Docker from 'dockerode';
import { abortError, clause, engineMessage, isNotFound, sleep } from './errors';

/** The container's inspect data, or undefined on a real not-found. */
export async function inspectContainer(docker: Docker, name: string): Promise<Docker.ContainerInspectInfo | undefined> {
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

/** Settles with the promise, or rejects on abort or after timeoutMs. */
export function raceAbort<T>(promise: Promise<T>, signal: AbortSignal | undefined, timeoutMs: number): Promise<T> {
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
