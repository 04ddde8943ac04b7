/**
 * Reading dockerode errors. dockerode rejects with an Error carrying `statusCode` and the
 * engine's JSON body (`json.message`); node's socket errors carry `code` instead.
 */

export function statusOf(err: unknown): number | undefined {
  const code = (err as { statusCode?: unknown } | undefined)?.statusCode;
  return typeof code === 'number' ? code : undefined;
}

/**
 * A real "no such object" answer from the engine, never a transport failure: 404, or Podman's
 * 500 for a container caught half-removed ("container <id> does not exist in database: no such
 * container"), which a concurrent open meets while another removes its volume initialiser (a CI
 * run of the peer test met it).
 */
export function isNotFound(err: unknown): boolean {
  const status = statusOf(err);
  return status === 404 || (status === 500 && /\bno such container\b/.test(engineMessage(err)));
}

/**
 * A name already taken: Docker answers 409; Podman (4.x) answers 500 with "… is already in use"
 * for a container name (docs/engines.md), so a concurrent open would otherwise lose its race.
 */
export function isConflict(err: unknown): boolean {
  const status = statusOf(err);
  return status === 409 || (status === 500 && /\bis already in use\b/.test(engineMessage(err)));
}

/**
 * Podman refuses to remove a container whose namespaces others joined, even exited ones ("has
 * dependent containers which must be removed before it"); Docker removes it (docs/engines.md).
 */
export function hasDependents(err: unknown): boolean {
  return statusOf(err) === 500 && /\bhas dependent containers\b/.test(engineMessage(err));
}

/** Podman's answer to creating a volume that exists ("volume already exists"); Docker returns the volume. */
export function isVolumeTaken(err: unknown): boolean {
  const status = statusOf(err);
  return (status === 409 || status === 500) && /\bvolume already exists\b/.test(engineMessage(err));
}

/** 304 from start/stop: the container already is in the requested state. */
export function isNotModified(err: unknown): boolean {
  return statusOf(err) === 304;
}

/** The engine's own words for an error, without dockerode's "(HTTP code …)" wrapper. */
export function engineMessage(err: unknown): string {
  if (err === null || err === undefined) return 'unknown error';
  const e = err as { json?: unknown; message?: unknown; reason?: unknown };
  const json = e.json as { message?: unknown } | Buffer | string | undefined;
  if (json && typeof json === 'object' && !Buffer.isBuffer(json) && typeof json.message === 'string') {
    return json.message.trim();
  }
  if (typeof json === 'string' && json.trim() !== '') return json.trim();
  if (Buffer.isBuffer(json) && json.length > 0) return json.toString('utf8').trim();
  if (typeof e.message === 'string' && e.message !== '') {
    // dockerode's "(HTTP code 500) server error - <engine text>" when it kept no JSON body.
    return e.message.replace(/^\(HTTP code \d+\) [^-]*- /, '').trim();
  }
  return String(err);
}

/** Strips a trailing period so a message can be embedded in a sentence. */
export function clause(text: string): string {
  return text.trim().replace(/[.\s]+$/, '');
}

/** Throws the signal's reason (an AbortError) when the caller has given up. */
export function throwIfAborted(signal: AbortSignal | undefined): void {
  if (signal?.aborted) {
    throw abortError(signal);
  }
}

export function abortError(signal: AbortSignal): Error {
  const reason: unknown = signal.reason;
  if (reason instanceof Error) return reason;
  const err = new Error('The operation was cancelled.');
  err.name = 'AbortError';
  return err;
}

export function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
