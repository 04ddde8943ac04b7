/**
 * The host side of the session holder (images/runtime/toolbox-session): shells that live in the
 * container, not in the exec stream that shows them, so a window can go away and come back.
 *
 * Two transports reach a holder. On a local engine its socket sits in the bind-mounted bridge run
 * dir and the host connects to it directly (no exec at all: that is what makes a warm open and
 * the terminal's throughput cheap). Elsewhere (a VM-backed or remote engine, a container without
 * the run dir) a small exec pipes the same protocol. Everything that comes back is the
 * container's: the greeting is checked before we write a byte, every frame is size-bounded, and
 * every wait has a deadline.
 */
import { EventEmitter } from 'node:events';
import { lstat } from 'node:fs/promises';
import { connect } from 'node:net';
import { Duplex } from 'node:stream';
import type Docker from 'dockerode';
import { CONTAINER } from '../contract/upstream';
import { SESSION_PROTOCOL } from '../contract/image';
import { judgeHolder, type HolderProof } from '../plan/holderProof';
import { holderContainerSocket } from '../plan/session';
import { clause, engineMessage } from './errors';
import { demux } from './containers';
import { collectExecOutput, execByteStream, type ShellExec } from './exec';

const F = SESSION_PROTOCOL.frames;
const MAGIC = Buffer.from(SESSION_PROTOCOL.magic);

/** How long each step may take before the holder counts as unreachable or stalled. */
export const SESSION_TIMEOUTS_MS = {
  connect: 2_000,
  greeting: 2_000,
  reply: 10_000,
  /** A ping goes out this often on an attached session… */
  ping: 15_000,
  /** …and a connection that answers nothing for this long is stalled. */
  stalled: 30_000,
  /** While the holder is being started, its run-dir socket is tried this often from the host. */
  startPoll: 4,
  /**
   * How long the host waits on the run-dir socket for a holder the container's entrypoint starts
   * (ENV.sessionSocket) before it starts one by an exec all the same.
   */
  startedByContainer: 3_000,
} as const;

/** Where a container's holder listens, as the container and (when reachable) the host see it. */
export interface HolderAddress {
  /** The socket path inside the container. */
  containerSocket: string;
  /** The same socket through the bind-mounted run dir on this host; absent when not mounted. */
  hostSocket?: string;
  /** The container user the holder runs as (uid:gid). */
  user: string;
}

/** A way to open one byte stream to the holder. */
export interface HolderTransport {
  readonly kind: 'socket' | 'exec';
  open(): Promise<Duplex>;
}

export class HolderUnavailableError extends Error {
  constructor(
    message: string,
    /** The holder answered that it has no session of that id (it ended, or never was there). */
    readonly noSession = false,
  ) {
    super(message);
    this.name = 'HolderUnavailableError';
  }
}

/** The holder's refusal of an attach names no session of its own (images/runtime/toolbox-session `fail`). */
function refusesUnknownSession(message: string): boolean {
  return message.startsWith('no session ');
}

/** The host path of the socket when the bridge run dir is mounted (engine/open's plan knows it). */
export function holderAddress(runDirHostPath: string | undefined, user: string): HolderAddress {
  const containerSocket = holderContainerSocket(runDirHostPath !== undefined);
  return runDirHostPath ? { containerSocket, hostSocket: `${runDirHostPath}/${SESSION_PROTOCOL.socket}`, user } : { containerSocket, user };
}

/**
 * A direct connection to the socket in the run dir. The dir is container-writable, so the path
 * must be a socket itself, not a link to one of the host's; the greeting check below then makes
 * sure whatever answers speaks our protocol before anything is written to it.
 */
export function socketTransport(path: string): HolderTransport {
  return {
    kind: 'socket',
    open: async () => {
      const st = await lstat(path).catch(() => undefined);
      if (!st?.isSocket()) throw new HolderUnavailableError(`no session holder socket at ${path}`);
      // A full listen backlog answers EAGAIN at once: a burst of clients retries briefly.
      for (let attempt = 0; ; attempt++) {
        try {
          return await connectOnce(path);
        } catch (err) {
          if (!/EAGAIN/.test((err as Error).message) || attempt >= 20) throw err;
          await new Promise((r) => setTimeout(r, 10 * (attempt + 1)));
        }
      }
    },
  };
}

function connectOnce(path: string): Promise<Duplex> {
  return new Promise<Duplex>((resolve, reject) => {
    const sock = connect(path);
    const timer = setTimeout(() => {
      sock.destroy();
      reject(new HolderUnavailableError(`the session holder at ${path} did not accept within ${SESSION_TIMEOUTS_MS.connect} ms`));
    }, SESSION_TIMEOUTS_MS.connect);
    sock.once('connect', () => {
      clearTimeout(timer);
      sock.setNoDelay(true);
      resolve(sock);
    });
    sock.once('error', (err) => {
      clearTimeout(timer);
      reject(new HolderUnavailableError(`cannot connect to the session holder at ${path}: ${err.message}`));
    });
  });
}

/** The same protocol through `toolbox-session connect` in an exec (any engine, any distance). */
export function execTransport(docker: Docker, containerId: string, address: HolderAddress): HolderTransport {
  return {
    kind: 'exec',
    open: async () => {
      const exec = await docker.getContainer(containerId).exec({
        Cmd: ['python3', CONTAINER.sessionHolder, 'connect', '--socket', address.containerSocket],
        User: address.user,
        AttachStdin: true,
        AttachStdout: true,
        AttachStderr: true,
        Tty: false,
      });
      const raw = (await exec.start({ hijack: true, stdin: true })) as Duplex;
      return execByteStream(docker, raw);
    },
  };
}

// ---------------------------------------------------------------------------------------------
// One connection: greeting, then frames

type FrameType = (typeof F)[keyof typeof F];

interface Frame {
  type: string;
  payload: Buffer;
}

/**
 * Reads the greeting, then frames. Emits 'frame', and 'close' once with the reason it ended
 * (undefined: closed by us). Nothing is written before the greeting has been read in full.
 */
class HolderConnection extends EventEmitter {
  private buffer: Buffer = Buffer.alloc(0);
  private greeted = false;
  private closed = false;
  /** Why the connection ended, once it has (undefined while open, or when we closed it). */
  closeReason: Error | undefined;
  readonly ready: Promise<void>;

  constructor(private readonly stream: Duplex) {
    super();
    this.ready = new Promise<void>((resolve, reject) => {
      const timer = setTimeout(
        () => this.close(new HolderUnavailableError(`no session holder greeting within ${SESSION_TIMEOUTS_MS.greeting} ms`)),
        SESSION_TIMEOUTS_MS.greeting,
      );
      this.once('greeted', () => {
        clearTimeout(timer);
        resolve();
      });
      this.once('close', (reason?: Error) => {
        clearTimeout(timer);
        reject(reason ?? new HolderUnavailableError('the session holder closed the connection before greeting'));
      });
    });
    this.ready.catch(() => undefined);
    stream.on('data', (chunk: Buffer) => this.onData(chunk));
    stream.once('error', (err: Error) =>
      this.close(new HolderUnavailableError(`the connection to the session holder failed: ${err.message}`)),
    );
    stream.once('end', () => this.close(new HolderUnavailableError('the session holder closed the connection')));
    stream.once('close', () => this.close(new HolderUnavailableError('the connection to the session holder was lost')));
  }

  private onData(chunk: Buffer): void {
    if (this.closed) return;
    this.buffer = this.buffer.length ? Buffer.concat([this.buffer, chunk]) : chunk;
    if (!this.greeted) {
      const have = Math.min(this.buffer.length, MAGIC.length);
      if (!this.buffer.subarray(0, have).equals(MAGIC.subarray(0, have))) {
        this.close(new HolderUnavailableError('whatever answers on the holder socket is not a session holder'));
        return;
      }
      if (this.buffer.length < MAGIC.length) return;
      this.buffer = this.buffer.subarray(MAGIC.length);
      this.greeted = true;
      this.emit('greeted');
    }
    while (this.buffer.length >= 5 && !this.closed) {
      const length = this.buffer.readUInt32BE(1);
      if (length > SESSION_PROTOCOL.maxFrame) {
        this.close(
          new HolderUnavailableError(`the session holder sent a frame of ${length} bytes (the limit is ${SESSION_PROTOCOL.maxFrame})`),
        );
        return;
      }
      if (this.buffer.length < 5 + length) return;
      const frame: Frame = { type: String.fromCharCode(this.buffer[0] as number), payload: this.buffer.subarray(5, 5 + length) };
      this.buffer = this.buffer.subarray(5 + length);
      this.emit('frame', frame);
    }
  }

  send(type: FrameType, payload: Buffer | string = Buffer.alloc(0)): boolean {
    if (this.closed || !this.greeted) return false;
    const body = typeof payload === 'string' ? Buffer.from(payload) : payload;
    const head = Buffer.allocUnsafe(5);
    head.write(type, 0, 'latin1');
    head.writeUInt32BE(body.length, 1);
    return this.stream.write(body.length ? Buffer.concat([head, body]) : head);
  }

  sendJson(type: FrameType, value: unknown): boolean {
    return this.send(type, JSON.stringify(value));
  }

  get writable(): Duplex {
    return this.stream;
  }

  get isClosed(): boolean {
    return this.closed;
  }

  close(reason?: Error): void {
    if (this.closed) return;
    this.closed = true;
    this.closeReason = reason;
    this.stream.destroy();
    this.emit('close', reason);
  }
}

async function openConnection(transport: HolderTransport): Promise<HolderConnection> {
  const conn = new HolderConnection(await transport.open());
  await conn.ready;
  // Whatever arrived with the greeting has been read already: it may have ended the connection.
  if (conn.isClosed) throw conn.closeReason ?? new HolderUnavailableError('the session holder closed the connection');
  return conn;
}

/** A JSON payload from the holder, bounded by the frame limit already; anything else is an error. */
function parseJson(frame: Frame): Record<string, unknown> {
  try {
    const value: unknown = JSON.parse(frame.payload.toString('utf8'));
    if (value && typeof value === 'object' && !Array.isArray(value)) return value as Record<string, unknown>;
  } catch {
    // fall through
  }
  throw new HolderUnavailableError(`the session holder sent a malformed ${frame.type} frame`);
}

/** Sends a hello and returns the first info frame (list, kill), then closes. */
async function request(transport: HolderTransport, hello: Record<string, unknown>): Promise<Record<string, unknown>> {
  const conn = await openConnection(transport);
  try {
    return await new Promise<Record<string, unknown>>((resolve, reject) => {
      const timer = setTimeout(
        () => reject(new HolderUnavailableError(`the session holder did not answer within ${SESSION_TIMEOUTS_MS.reply} ms`)),
        SESSION_TIMEOUTS_MS.reply,
      );
      conn.on('frame', (frame: Frame) => {
        clearTimeout(timer);
        try {
          const body = parseJson(frame);
          if (frame.type === F.error)
            reject(
              new HolderUnavailableError(
                `the session holder refused: ${String(body.message)}`,
                refusesUnknownSession(String(body.message)),
              ),
            );
          else resolve(body);
        } catch (err) {
          reject(err as Error);
        }
      });
      conn.once('close', (reason?: Error) => {
        clearTimeout(timer);
        reject(reason ?? new HolderUnavailableError('the session holder closed the connection'));
      });
      conn.sendJson(F.hello, hello);
    });
  } finally {
    conn.close();
  }
}

// ---------------------------------------------------------------------------------------------
// Sessions

/** A session as the holder lists it. */
export interface HeldSessionInfo {
  id: string;
  pid: number;
  cmd: string[] | null;
  title: string | null;
  /** ms since the epoch, by the container's clock. */
  started: number;
  attached: number;
  ended: boolean;
  exitCode: number | null;
}

function sessionInfo(value: Record<string, unknown>): HeldSessionInfo {
  const str = (v: unknown) => (typeof v === 'string' ? v.slice(0, 256) : null);
  const num = (v: unknown) => (typeof v === 'number' && Number.isFinite(v) ? v : 0);
  return {
    id: str(value.id) ?? '',
    pid: num(value.pid),
    cmd: Array.isArray(value.cmd) ? value.cmd.slice(0, 64).map((c) => String(c).slice(0, 1024)) : null,
    title: str(value.title),
    started: num(value.started),
    attached: num(value.attached),
    ended: value.ended === true,
    exitCode: typeof value.exitCode === 'number' ? value.exitCode : null,
  };
}

export async function listHeldSessions(transport: HolderTransport): Promise<HeldSessionInfo[]> {
  const body = await request(transport, { op: 'list' });
  const list = Array.isArray(body.sessions) ? body.sessions.slice(0, 256) : [];
  return list.filter((s): s is Record<string, unknown> => !!s && typeof s === 'object').map(sessionInfo);
}

/**
 * Which container the holder says it serves, judged against the id the engine gave
 * (plan/holderProof.ts). A holder from an image older than the check refuses the op: unproven.
 * Failing to reach the holder at all is an error, as for any other request.
 */
export async function proveHolder(transport: HolderTransport, containerId: string): Promise<HolderProof> {
  let body: Record<string, unknown>;
  try {
    body = await request(transport, { op: 'whoami' });
  } catch (err) {
    if (err instanceof HolderUnavailableError && /^the session holder refused: unknown op/.test(err.message)) return { kind: 'unproven' };
    throw err;
  }
  return judgeHolder(containerId, body.container);
}

/**
 * Whether the holder keeps a sentinel running (its `whoami` says `held`): true or false from a
 * holder that knows the op, undefined from an older one (which cannot hold at all).
 */
export async function holderHeld(transport: HolderTransport): Promise<boolean | undefined> {
  const body = await request(transport, { op: 'whoami' });
  return typeof body.held === 'boolean' ? body.held : undefined;
}

/**
 * Starts the sentinel (docs/decisions/0051): `toolbox-session hold` as a detached exec, running
 * while the holder has a live session, so the upstream CLI's exit check (any running exec keeps
 * the container) counts the editor's held shells as it counts its own. A second one, or one with
 * nothing to hold, exits at once. Our own idle check ignores it (it runs the holder program).
 */
export async function startSessionSentinel(docker: Docker, containerId: string, address: HolderAddress): Promise<void> {
  const exec = await docker.getContainer(containerId).exec({
    Cmd: ['python3', '-S', CONTAINER.sessionHolder, 'hold', '--socket', address.containerSocket],
    User: address.user,
    AttachStdin: false,
    AttachStdout: true,
    AttachStderr: true,
    Tty: false,
  });
  // Attached, then let go: the process runs on. Not `Detach: true`, whose exec Podman 4.3 keeps
  // reporting as running after it exited (measured), which would keep the container forever by
  // the CLI's rule; an attached exec's end is recorded by both engines.
  const stream = (await exec.start({ hijack: true, stdin: false })) as Duplex;
  stream.on('error', () => undefined);
  stream.destroy();
}

/** Ends a session (SIGHUP to its process group, SIGKILL after a grace period). */
export async function killHeldSession(transport: HolderTransport, id: string): Promise<void> {
  await request(transport, { op: 'kill', id });
}

/** A shell in the holder, attached: the terminal reads and writes it like an exec. */
export interface HeldSession extends ShellExec {
  readonly id: string;
  readonly pid: number;
  /** Ends the session itself (the terminal was closed by the user). */
  kill(): Promise<void>;
}

export interface NewSessionSpec {
  cmd: string[];
  env: string[];
  cwd: string;
  cols: number;
  rows: number;
  title?: string;
  /** Keep one more shell like this one started, so the next open takes it at once. */
  spare?: boolean;
}

export function startHeldSession(transport: HolderTransport, spec: NewSessionSpec): Promise<HeldSession> {
  return attachTo(transport, { op: 'new', ...spec });
}

export function attachHeldSession(
  transport: HolderTransport,
  id: string,
  size: { cols: number; rows: number },
  replay = true,
): Promise<HeldSession> {
  return attachTo(transport, { op: 'attach', id, cols: size.cols, rows: size.rows, replay });
}

/** A session that had ended before it could be attached. */
export class SessionEndedError extends Error {
  constructor(
    readonly sessionId: string,
    readonly exitCode: number,
  ) {
    super(`The session ${sessionId} ended with exit code ${exitCode}.`);
    this.name = 'SessionEndedError';
  }
}

async function attachTo(transport: HolderTransport, hello: Record<string, unknown>): Promise<HeldSession> {
  const conn = await openConnection(transport);
  const output = new Duplex({
    read() {
      conn.writable.resume();
    },
    write(chunk: Buffer, _enc, done) {
      conn.send(F.data, chunk);
      done();
    },
  });
  let resolveExit!: (code: number) => void;
  let rejectExit!: (err: Error) => void;
  const exitCode = new Promise<number>((resolve, reject) => {
    resolveExit = resolve;
    rejectExit = reject;
  });
  exitCode.catch(() => undefined);
  let lastHeard = Date.now();
  const ping = setInterval(() => {
    if (Date.now() - lastHeard > SESSION_TIMEOUTS_MS.stalled) {
      conn.close(new HolderUnavailableError(`the session holder has not answered for ${SESSION_TIMEOUTS_MS.stalled / 1000} s`));
    } else {
      conn.send(F.ping);
    }
  }, SESSION_TIMEOUTS_MS.ping);
  ping.unref();

  const info = await new Promise<Record<string, unknown>>((resolve, reject) => {
    const timer = setTimeout(
      () => reject(new HolderUnavailableError(`the session holder did not answer within ${SESSION_TIMEOUTS_MS.reply} ms`)),
      SESSION_TIMEOUTS_MS.reply,
    );
    let started = false;
    conn.on('frame', (frame: Frame) => {
      lastHeard = Date.now();
      try {
        if (frame.type === F.data) {
          if (!output.push(Buffer.from(frame.payload))) conn.writable.pause();
        } else if (frame.type === F.info && !started) {
          started = true;
          clearTimeout(timer);
          const body = parseJson(frame);
          if (body.ended === true) {
            reject(new SessionEndedError(String(body.id ?? hello.id ?? ''), typeof body.exitCode === 'number' ? body.exitCode : 1));
            conn.close();
          } else {
            resolve(body);
          }
        } else if (frame.type === F.exit) {
          const body = parseJson(frame);
          const code = typeof body.exitCode === 'number' ? body.exitCode : 1;
          if (!started) {
            clearTimeout(timer);
            reject(new SessionEndedError(String(hello.id ?? ''), code));
          }
          resolveExit(code);
          output.push(null);
          conn.close();
        } else if (frame.type === F.error) {
          const said = String(parseJson(frame).message);
          const message = `the session holder refused: ${clause(said)}`;
          clearTimeout(timer);
          reject(new HolderUnavailableError(message, refusesUnknownSession(said)));
          rejectExit(new HolderUnavailableError(message, refusesUnknownSession(said)));
          conn.close();
        }
      } catch (err) {
        conn.close(err as Error);
      }
    });
    conn.once('close', (reason?: Error) => {
      clearInterval(ping);
      clearTimeout(timer);
      const error = reason ?? new HolderUnavailableError('detached');
      reject(error);
      rejectExit(error);
      if (!output.readableEnded) output.push(null);
    });
    conn.sendJson(F.hello, hello);
  });
  const session = sessionInfo(info);
  // The holder says how much of the first output is replayed history (an older holder does not:
  // none). It comes in one data frame, so never more than a frame holds.
  const claimed = info.replayBytes;
  const replayBytes =
    typeof claimed === 'number' && Number.isSafeInteger(claimed) && claimed > 0 ? Math.min(claimed, SESSION_PROTOCOL.maxFrame) : 0;
  return {
    id: session.id,
    pid: session.pid,
    replayBytes,
    stream: output,
    exitCode,
    resize: async (cols: number, rows: number) => {
      conn.sendJson(F.resize, { cols, rows });
    },
    dispose: () => conn.close(),
    kill: async () => {
      conn.close();
      await killHeldSession(transport, session.id);
    },
  };
}

/**
 * Starts the holder in the container unless one already answers (idempotent, ~one exec).
 * Throws HolderUnavailableError when the image has no holder or python3.
 */
export async function ensureHolder(docker: Docker, containerId: string, address: HolderAddress): Promise<void> {
  const exec = await docker.getContainer(containerId).exec({
    Cmd: [
      'sh',
      '-c',
      `[ -f ${CONTAINER.sessionHolder} ] || exit 127; exec python3 -S ${CONTAINER.sessionHolder} ensure --socket "$1"`,
      'sh',
      address.containerSocket,
    ],
    User: address.user,
    AttachStdout: true,
    AttachStderr: true,
    Tty: false,
  });
  const stream = (await exec.start({ hijack: true, stdin: false })) as Duplex;
  const { output } = await collectExecOutput(stream, SESSION_TIMEOUTS_MS.reply);
  const info = await exec.inspect().catch((err: unknown) => {
    throw new HolderUnavailableError(`could not read how the session holder started: ${clause(engineMessage(err))}`);
  });
  if (info.ExitCode === 127) throw new HolderUnavailableError('the container image has no session holder');
  if (info.ExitCode !== 0) {
    const said = demux(output).trim().slice(0, 300);
    throw new HolderUnavailableError(`the session holder did not start (exit ${info.ExitCode ?? 'unknown'}${said ? `: ${said}` : ''})`);
  }
}

/**
 * The fastest transport that reaches this container's holder, starting the holder when none
 * answers: the run dir's socket from the host, else an exec. Throws HolderUnavailableError when
 * the container cannot hold sessions (its image has no holder).
 *
 * `startedByContainer`: the container was just created with ENV.sessionSocket from an image whose
 * entrypoint starts the holder (RUNTIME_IMAGE_LABELS.holderAtStart), so the run-dir socket is
 * waited for first; the exec that starts one is only the fallback (an older container, a holder
 * that died, no run dir on this host). The holder's `ensure` is serialised in the container, so
 * the two never start a second holder.
 */
export async function reachHolder(
  docker: Docker,
  containerId: string,
  address: HolderAddress,
  opts: { startedByContainer?: boolean } = {},
): Promise<HolderTransport> {
  const direct = address.hostSocket ? socketTransport(address.hostSocket) : undefined;
  if (direct && (await greets(direct))) return direct;
  if (direct && opts.startedByContainer) {
    const deadline = Date.now() + SESSION_TIMEOUTS_MS.startedByContainer;
    if (await greetsBefore(direct, () => Date.now() >= deadline)) return direct;
  }
  const viaExec = execTransport(docker, containerId, address);
  const ensured = ensureHolder(docker, containerId, address);
  if (direct) {
    // The run-dir socket greets as soon as the holder listens, before the exec that started it
    // has ended and been inspected: a greeting there is the same proof the end of the exec gives.
    let settled = false;
    const outcome = ensured.then(() => false).finally(() => (settled = true));
    outcome.catch(() => undefined);
    const greeted = greetsBefore(direct, () => settled);
    // A failed start (no holder in the image) rejects here, as it did before.
    if (await Promise.race([greeted, outcome])) return direct;
  }
  await ensured;
  if (direct && (await greets(direct))) return direct;
  return viaExec;
}

/** Tries the socket every SESSION_TIMEOUTS_MS.startPoll until it greets (true) or `stop` says so (false). */
async function greetsBefore(transport: HolderTransport, stop: () => boolean): Promise<boolean> {
  while (!stop()) {
    await new Promise((resolve) => setTimeout(resolve, SESSION_TIMEOUTS_MS.startPoll));
    if (await greets(transport)) return true;
  }
  return false;
}

async function greets(transport: HolderTransport): Promise<boolean> {
  try {
    (await openConnection(transport)).close();
    return true;
  } catch {
    return false;
  }
}
