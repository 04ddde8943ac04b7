/**
 * A live feed of the engine's container and volume events that outlives the connection it rides
 * on: when the stream ends or breaks (engine restarted, socket gone) it reconnects with
 * exponential back-off and asks the engine for everything since the last event it saw, so a
 * model built on top of it misses nothing across the gap.
 */
import type Docker from 'dockerode';
import { z } from 'zod';
import { LABELS } from '../contract/upstream';
import { bareName } from '../contract/objects';
import type { ObjectNames } from '../contract/types';

export interface EngineEvent {
  type: 'container' | 'volume';
  /** Docker's action word: `create`, `start`, `die`, `destroy`, `mount`, `exec_start: …`. */
  action: string;
  /** Container id, or the volume name for volume events. */
  id: string;
  /** Container name (no leading `/`) or volume name, when the engine reports one. */
  name: string | undefined;
  /** The actor's attributes: for a container, its labels plus `name`, `image` and the like. */
  attributes: Record<string, string>;
  /** When the engine recorded the event, in milliseconds since the epoch. */
  time: number;
  /** The engine's nanosecond timestamp, as a decimal string (exact; used for `since`). */
  timeNano: string;
}

export type EngineFeedState = 'connected' | 'reconnecting' | 'stopped';

export interface WatchEngineEventsOptions {
  connect: () => Promise<Docker>;
  onEvent: (e: EngineEvent) => void;
  onStateChange?: (s: EngineFeedState, err?: Error) => void;
  backoffMs?: { initial: number; max: number };
}

const DEFAULT_BACKOFF = { initial: 250, max: 5_000 };

const RawEventSchema = z.object({
  Type: z.enum(['container', 'volume']),
  Action: z.string().min(1),
  Actor: z.object({
    ID: z.string(),
    Attributes: z.record(z.string(), z.string()).optional(),
  }),
  time: z.number(),
  timeNano: z.number().optional(),
});

/**
 * Parses one line of the engine's event stream; undefined for anything that is not a
 * container or volume event we can use (a malformed line must not end the feed).
 */
export function parseEngineEvent(line: string): EngineEvent | undefined {
  let json: unknown;
  try {
    json = JSON.parse(line);
  } catch {
    return undefined;
  }
  const parsed = RawEventSchema.safeParse(json);
  if (!parsed.success) return undefined;
  const { Type, Action, Actor, time, timeNano } = parsed.data;
  // timeNano exceeds 2^53, so JSON.parse has rounded it: take the exact digits from the line.
  const exact = /"timeNano"\s*:\s*(\d+)/.exec(line)?.[1];
  const nanos = exact !== undefined ? BigInt(exact) : timeNano !== undefined ? BigInt(Math.round(timeNano)) : BigInt(time) * 1_000_000_000n;
  const attrName = Actor.Attributes?.name;
  return {
    type: Type,
    action: Action,
    id: Actor.ID,
    name: attrName !== undefined && attrName !== '' ? bareName(attrName) : Type === 'volume' ? Actor.ID : undefined,
    attributes: Actor.Attributes ?? {},
    time: Number(nanos / 1_000_000n),
    timeNano: nanos.toString(),
  };
}

/**
 * Whether an event is about one of our objects: the socket volume, or a container that is ours
 * by name grammar and labels (contract/objects.ts). An event without a name may be about
 * anything, so it counts (a refresh costs one list).
 */
export function concernsOurObjects(e: EngineEvent, names: ObjectNames): boolean {
  if (e.name === undefined) return true;
  if (e.type === 'volume') return e.name === names.socketVolume;
  // A container a workspace container started through its Docker endpoint: the tree lists it under its parent.
  if (e.attributes?.[LABELS.dockerOwner] !== undefined) return true;
  return names.isOurs(e.name, e.attributes);
}

/** `since` in the engine's `seconds.nanoseconds` form. */
function sinceParam(timeNano: string): string {
  const n = BigInt(timeNano);
  return `${n / 1_000_000_000n}.${(n % 1_000_000_000n).toString().padStart(9, '0')}`;
}

function eventKey(e: EngineEvent): string {
  return `${e.timeNano}|${e.type}|${e.action}|${e.id}`;
}

export function watchEngineEvents(opts: WatchEngineEventsOptions): { dispose(): void } {
  const backoff = opts.backoffMs ?? DEFAULT_BACKOFF;
  let disposed = false;
  let delay = backoff.initial;
  let timer: NodeJS.Timeout | undefined;
  let abort: AbortController | undefined;
  let state: EngineFeedState | undefined;
  // `since` is inclusive, so the events at the last timestamp come again after a reconnect:
  // remember which ones were already delivered.
  let lastNano: string | undefined;
  // Where a reconnect resumes when no event has arrived yet: the first connect's local "now".
  let firstConnectedNano: string | undefined;
  let seenAtLast = new Set<string>();

  const setState = (s: EngineFeedState, err?: Error) => {
    if (s === state) return;
    state = s;
    try {
      opts.onStateChange?.(s, err);
    } catch {
      // A listener's bug must not stop the feed.
    }
  };

  const deliver = (e: EngineEvent) => {
    const t = BigInt(e.timeNano);
    if (lastNano !== undefined) {
      const last = BigInt(lastNano);
      if (t < last || (t === last && seenAtLast.has(eventKey(e)))) return;
      if (t > last) seenAtLast = new Set();
    }
    lastNano = e.timeNano;
    seenAtLast.add(eventKey(e));
    try {
      opts.onEvent(e);
    } catch {
      // Same as above: one failing consumer must not end the subscription.
    }
  };

  const scheduleReconnect = (err: Error) => {
    if (disposed || timer !== undefined) return;
    setState('reconnecting', err);
    const wait = delay;
    delay = Math.min(delay * 2, backoff.max);
    timer = setTimeout(() => {
      timer = undefined;
      void connectOnce();
    }, wait);
  };

  const connectOnce = async () => {
    if (disposed) return;
    const controller = new AbortController();
    abort = controller;
    let stream: NodeJS.ReadableStream;
    try {
      const docker = await opts.connect();
      if (disposed) return;
      const resumeFrom = lastNano ?? firstConnectedNano;
      const since = resumeFrom !== undefined ? sinceParam(resumeFrom) : undefined;
      const query = { filters: { type: ['container', 'volume'] }, abortSignal: controller.signal, ...(since ? { since } : {}) };
      stream = await docker.getEvents(query as unknown as Docker.GetEventsOptions);
    } catch (err) {
      if (!disposed && abort === controller) scheduleReconnect(asError(err, 'Could not subscribe to Docker events'));
      return;
    }
    if (disposed || abort !== controller) {
      destroy(stream);
      return;
    }
    delay = backoff.initial;
    firstConnectedNano ??= (BigInt(Date.now()) * 1_000_000n).toString();
    setState('connected');
    // Decode as UTF-8 across chunk boundaries before splitting into lines.
    stream.setEncoding('utf8');
    let buffered = '';
    let ended = false;
    const onEnd = (err?: unknown) => {
      if (ended) return;
      ended = true;
      destroy(stream);
      if (!disposed && abort === controller) {
        scheduleReconnect(asError(err, 'The Docker event stream ended (was the engine restarted?)'));
      }
    };
    stream.on('data', (chunk: string) => {
      buffered += chunk;
      let nl: number;
      while ((nl = buffered.indexOf('\n')) >= 0) {
        const line = buffered.slice(0, nl).trim();
        buffered = buffered.slice(nl + 1);
        if (line === '') continue;
        const event = parseEngineEvent(line);
        if (event) deliver(event);
      }
    });
    stream.on('end', () => onEnd());
    stream.on('close', () => onEnd());
    stream.on('error', (err: unknown) => onEnd(err));
  };

  void connectOnce();

  return {
    dispose() {
      if (disposed) return;
      disposed = true;
      if (timer !== undefined) clearTimeout(timer);
      timer = undefined;
      abort?.abort();
      abort = undefined;
      setState('stopped');
    },
  };
}

function destroy(stream: NodeJS.ReadableStream): void {
  (stream as NodeJS.ReadableStream & { destroy?: () => void }).destroy?.();
}

function asError(err: unknown, fallback: string): Error {
  if (err instanceof Error) return err;
  return new Error(err === undefined ? fallback : `${fallback}: ${String(err)}`);
}
