/**
 * One login callback forward (issue 29, docs/decisions/0053-login-callbacks-forwarded-per-login.md):
 * the host listens on 127.0.0.1:<port> and relays every connection it accepts, bytes untouched,
 * through `relay` (engine/loginRelay.ts: an exec that connects to the container's own
 * 127.0.0.1:<port>). Bounded: 127.0.0.1 only, LOGIN_FORWARD's lifetime, connections at once and
 * in all; it closes by itself once a connection the container answered has ended and nothing has
 * been open for `idleAfterAnswerMs` (the callback, and the page it redirects to, are over).
 */
import { createServer, type Server, type Socket } from 'node:net';
import type { Duplex } from 'node:stream';
import { LOGIN_FORWARD } from '../contract/constants';

export type LoginForwardLimits = Record<'lifetimeMs' | 'idleAfterAnswerMs' | 'maxConcurrent' | 'maxConnections', number>;

/** Why a forward closed, in words for the user ("the login completed", …). */
export type LoginForwardEnd = 'answered' | 'timed-out' | 'stopped' | 'connections' | 'failed';

export interface LoginForwardOptions {
  port: number;
  /** The container the connections reach (a label here: `relay` decides where they go). */
  container: string;
  /** One connection to the container's 127.0.0.1:<port>. */
  relay: () => Promise<Duplex>;
  limits?: Partial<LoginForwardLimits>;
  /** Called once, when the forward has closed. */
  onClose?: (end: LoginForwardEnd) => void;
  log?: (line: string) => void;
}

/** The host port could not be listened on: taken by another program, or refused. */
export class LoginPortError extends Error {
  constructor(
    readonly port: number,
    readonly code: string | undefined,
    message: string,
  ) {
    super(message);
    this.name = 'LoginPortError';
  }
}

export class LoginForward {
  readonly port: number;
  readonly container: string;
  readonly openedAt = Date.now();
  private closesAtMs: number;
  private readonly limits: LoginForwardLimits;
  private readonly sockets = new Set<Socket>();
  private accepted = 0;
  private answered = 0;
  private lifetimeTimer: NodeJS.Timeout | undefined;
  private idleTimer: NodeJS.Timeout | undefined;
  private ended: LoginForwardEnd | undefined;
  private readonly closedPromise: Promise<LoginForwardEnd>;
  private resolveClosed!: (end: LoginForwardEnd) => void;

  private constructor(
    private readonly server: Server,
    private readonly options: LoginForwardOptions,
  ) {
    this.port = options.port;
    this.container = options.container;
    this.limits = { ...pickLimits(LOGIN_FORWARD), ...options.limits };
    this.closesAtMs = this.openedAt + this.limits.lifetimeMs;
    this.closedPromise = new Promise((resolve) => (this.resolveClosed = resolve));
    this.armLifetime();
  }

  /** Listens on 127.0.0.1:<port>; rejects with a LoginPortError when the host will not have it. */
  static async start(options: LoginForwardOptions): Promise<LoginForward> {
    const server = createServer({ pauseOnConnect: true });
    await new Promise<void>((resolve, reject) => {
      server.once('error', (err: NodeJS.ErrnoException) => {
        const taken = err.code === 'EADDRINUSE';
        reject(
          new LoginPortError(
            options.port,
            err.code,
            taken
              ? `Port ${options.port} on this host is already in use by another program, so the login callback cannot reach ${options.container}.`
              : `Could not listen on 127.0.0.1:${options.port} for the login callback: ${err.message}`,
          ),
        );
      });
      // Loopback only, whatever the container asked: never another interface.
      server.listen({ host: '127.0.0.1', port: options.port, exclusive: true }, () => resolve());
    });
    const forward = new LoginForward(server, options);
    server.removeAllListeners('error');
    server.on('error', (err) => {
      options.log?.(`Login callback on port ${options.port}: the listener failed: ${err.message}`);
      void forward.close('failed');
    });
    server.on('connection', (socket) => forward.accept(socket));
    return forward;
  }

  /** When it closes at the latest (ms since the epoch). */
  get closesAt(): number {
    return this.closesAtMs;
  }

  /** Connections relayed so far, and how many of them the container answered. */
  get counts(): { accepted: number; answered: number; open: number } {
    return { accepted: this.accepted, answered: this.answered, open: this.sockets.size };
  }

  /** Resolves with why it closed. */
  get closed(): Promise<LoginForwardEnd> {
    return this.closedPromise;
  }

  get isOpen(): boolean {
    return this.ended === undefined;
  }

  /** Asked for again (the same login opened its URL again): the lifetime starts over. */
  renew(): void {
    if (this.ended !== undefined) return;
    this.closesAtMs = Date.now() + this.limits.lifetimeMs;
    this.armLifetime();
  }

  /** Stops listening and ends every relayed connection. */
  async close(end: LoginForwardEnd = 'stopped'): Promise<void> {
    if (this.ended !== undefined) return;
    this.ended = end;
    clearTimeout(this.lifetimeTimer);
    clearTimeout(this.idleTimer);
    for (const socket of this.sockets) socket.destroy();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
    this.options.log?.(`Login callback on port ${this.port} to ${this.container}: closed (${end}).`);
    this.resolveClosed(end);
    this.options.onClose?.(end);
  }

  private armLifetime(): void {
    clearTimeout(this.lifetimeTimer);
    this.lifetimeTimer = setTimeout(() => void this.close('timed-out'), Math.max(0, this.closesAtMs - Date.now()));
    this.lifetimeTimer.unref();
  }

  private accept(socket: Socket): void {
    if (this.ended !== undefined || this.sockets.size >= this.limits.maxConcurrent) {
      socket.destroy();
      return;
    }
    this.accepted += 1;
    this.sockets.add(socket);
    clearTimeout(this.idleTimer);
    let gotAnswer = false;
    let relay: Duplex | undefined;
    const done = () => {
      if (!this.sockets.delete(socket)) return;
      relay?.destroy();
      if (gotAnswer) this.answered += 1;
      if (this.ended !== undefined) return;
      if (this.accepted >= this.limits.maxConnections && this.sockets.size === 0) {
        void this.close(this.answered > 0 ? 'answered' : 'connections');
        return;
      }
      if (this.answered > 0 && this.sockets.size === 0) {
        this.idleTimer = setTimeout(() => void this.close('answered'), this.limits.idleAfterAnswerMs);
        this.idleTimer.unref();
      }
    };
    socket.once('close', done);
    socket.on('error', () => socket.destroy());
    this.options.relay().then(
      (stream) => {
        relay = stream;
        if (socket.destroyed) {
          stream.destroy();
          return;
        }
        stream.on('data', (chunk: Buffer) => {
          if (chunk.length > 0) gotAnswer = true;
        });
        stream.on('error', () => socket.destroy());
        socket.on('end', () => stream.end());
        stream.on('end', () => socket.end());
        // Bytes pass untouched both ways, with back-pressure.
        stream.pipe(socket, { end: false });
        socket.pipe(stream, { end: false });
        socket.resume();
      },
      (err: Error) => {
        this.options.log?.(`Login callback on port ${this.port}: could not reach ${this.container}: ${err.message}`);
        socket.destroy();
      },
    );
  }
}

function pickLimits(all: typeof LOGIN_FORWARD): LoginForwardLimits {
  return {
    lifetimeMs: all.lifetimeMs,
    idleAfterAnswerMs: all.idleAfterAnswerMs,
    maxConcurrent: all.maxConcurrent,
    maxConnections: all.maxConnections,
  };
}
