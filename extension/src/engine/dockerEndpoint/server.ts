/**
 * A Docker Engine API endpoint for one workspace container (issue 27): a unix socket on the host,
 * mounted into the container instead of the host's Docker socket, that forwards a request to the
 * real engine (Docker, or Podman's compat API) only once a gate has seen its head, and its body
 * when the gate asks for it. The gate is the policy (plan/dockerEndpoint/policy.ts); this file knows no rule.
 *
 * Built on node:http rather than raw sockets. Its parser (llhttp, strict) already refuses what
 * request smuggling needs, bounds the head (`maxHeaderSize`) and times it out (`headersTimeout`),
 * and keeps framing right both ways: chunked uploads (`docker build`'s context, `docker load`) and
 * chunked answers (`docker logs -f`, `/events`, pull progress) stream through as they come,
 * re-framed per hop, with back-pressure. Only the hijacks leave it: attach, exec start and
 * BuildKit's `/session` and `/grpc` arrive as upgrade requests, and after the engine's 101 the two
 * sockets are spliced byte for byte (engine/dockerEndpoint/hijack.ts). Raw sockets would mean a
 * second HTTP/1.1 parser of our own for both directions, the riskiest code to get right here.
 *
 * `requestTimeout` is 0: a request may last as long as its stream (`docker logs -f`, `/events`,
 * `docker wait`, an interactive exec). Slow and idle clients are bounded instead by the header
 * timeout, the keep-alive idle timeout, a deadline on bodies the gate reads, and a cap on open
 * connections, each in DOCKER_ENDPOINT_LIMITS.
 */
import { Agent, createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { Agent as HttpsAgent } from 'node:https';
import type { Socket } from 'node:net';
import { DOCKER_ENDPOINT_LIMITS } from '../../contract/dockerEndpoint';
import { send, serve, type EndpointContext } from './forward';
import { handleHijack } from './hijack';
import { bindEndpointSocket, unlinkOwnSocket, type SocketOwner } from './socket';
import type { EndpointEvent, EndpointGate, EndpointLimits, EndpointStats, EndpointUpstream } from './types';
import { loggedPath, rawErrorResponse } from './wire';

export type {
  EndpointEvent,
  EndpointGate,
  EndpointLimits,
  EndpointRequestHead,
  EndpointStats,
  EndpointTls,
  EndpointUpstream,
  GateForward,
  GateHead,
  GateRefusal,
} from './types';

export interface DockerEndpointOptions {
  socketPath: string;
  upstream: EndpointUpstream;
  gate: EndpointGate;
  log(event: EndpointEvent): void;
  /** The container user as the host sees it; default this process's user (see dockerEndpoint/socket.ts). */
  owner?: SocketOwner;
  /** Tests shorten the timeouts. */
  limits?: Partial<EndpointLimits>;
}

export interface DockerEndpoint {
  readonly socketPath: string;
  stats(): EndpointStats;
  /** Stops listening, ends every connection (hijacks too) and removes the socket if it is still ours. */
  close(): Promise<void>;
}

/** Shared with the hijack path: the endpoint's state one request needs. */
/** How long a connection over the cap may take to send the request that gets the 503. */
const REFUSAL_GRACE_MS = 500;

/**
 * Caps the open connections. A connection past `maxConnections` is marked: its request is answered
 * 503 and it is closed, and it is destroyed after REFUSAL_GRACE_MS whatever it sends. Past
 * `refusing` such at once, connections are closed on accept. Node's parser still reads a marked
 * connection's request, so every handler asks `overCap` first: nothing of it reaches the gate or
 * the engine.
 */
function capConnections(server: ReturnType<typeof createServer>, ctx: EndpointContext): (socket: Socket) => boolean {
  const marked = new WeakSet<Socket>();
  let refusing = 0;
  server.prependListener('connection', (socket: Socket) => {
    socket.on('error', () => undefined);
    if (ctx.sockets.size < ctx.limits.maxConnections) {
      ctx.sockets.add(socket);
      socket.once('close', () => ctx.sockets.delete(socket));
      return;
    }
    ctx.counters.overCap += 1;
    if (refusing >= ctx.limits.refusing) {
      socket.destroy();
      return;
    }
    refusing += 1;
    marked.add(socket);
    const grace = setTimeout(() => socket.destroy(), REFUSAL_GRACE_MS).unref();
    socket.once('close', () => {
      refusing -= 1;
      clearTimeout(grace);
    });
  });
  return (socket) => marked.has(socket);
}

const overCapMessage = (limit: number): string =>
  `Too many open connections to this Docker endpoint (the limit is ${limit}); close some and retry.`;

/** Starts the endpoint: listening on `socketPath` (0600 for `owner`) when the promise resolves. */
export async function startDockerEndpoint(options: DockerEndpointOptions): Promise<DockerEndpoint> {
  const limits: EndpointLimits = { ...DOCKER_ENDPOINT_LIMITS, ...options.limits };
  const keepAlive = { keepAlive: true, maxFreeSockets: 4 };
  const agent = 'tls' in options.upstream && options.upstream.tls ? new HttpsAgent(keepAlive) : new Agent(keepAlive);
  const ctx: EndpointContext = {
    gate: options.gate,
    agent,
    upstream: options.upstream,
    limits,
    log: options.log,
    sockets: new Set(),
    upstreams: new Set(),
    closingAfterAnswer: new WeakSet(),
    closing: false,
    counters: { overCap: 0, requests: 0, refused: 0, hijacks: 0, hijacksOpen: 0, upstreamErrors: 0 },
    endSocket(socket, response) {
      socket.end(response);
      // Whatever the client still sends is read and dropped, so closing does not reset the answer away.
      socket.resume();
      const timer = setTimeout(() => socket.destroy(), 2_000).unref();
      socket.once('close', () => clearTimeout(timer));
    },
  };
  const server = createServer({
    maxHeaderSize: limits.maxHeaderBytes,
    headersTimeout: limits.headersMs,
    requestTimeout: 0,
    keepAliveTimeout: limits.idleMs,
    connectionsCheckingInterval: Math.max(100, Math.min(1_000, Math.floor(limits.headersMs / 4))),
    insecureHTTPParser: false,
    noDelay: true,
  });
  // One more than allowed, so a request with too many is seen whole and refused, not cut short.
  server.maxHeadersCount = limits.maxHeaders + 1;
  server.timeout = 0;
  const overCap = capConnections(server, ctx);

  /**
   * Node emits a pipelined request as soon as it is parsed, while the one before may still be at
   * the gate; each connection's requests are therefore taken one at a time, in order, as HTTP/1.1
   * answers them. So a request behind a refusal (which closes the connection) is never forwarded.
   */
  const turns = new WeakMap<Socket, Promise<void>>();
  const onRequest = (expectContinue: boolean) => (req: IncomingMessage, res: ServerResponse) => {
    const started = performance.now();
    ctx.counters.requests += 1;
    const note: { rule?: string } = {};
    res.once('close', () =>
      ctx.log({
        kind: 'request',
        method: req.method ?? '',
        path: loggedPath(req.url),
        // 499: the client went away before an answer began (nginx's word for it).
        status: res.headersSent ? res.statusCode : 499,
        durationMs: Math.round(performance.now() - started),
        ...(note.rule !== undefined ? { rule: note.rule } : {}),
      }),
    );
    const socket = req.socket;
    const previous = turns.get(socket) ?? Promise.resolve();
    turns.set(
      socket,
      new Promise<void>((resolve) => {
        const done = (): void => {
          socket.off('close', done);
          resolve();
        };
        res.once('close', done);
        socket.once('close', done);
      }),
    );
    void previous.then(() => {
      if (overCap(socket)) {
        note.rule = 'connections';
        send(ctx, res, 503, overCapMessage(limits.maxConnections), { 'Retry-After': '1' });
      } else if (ctx.closingAfterAnswer.has(socket) || socket.destroyed) {
        // Behind an answer that closed the connection: left unanswered, as the client was told.
        note.rule = 'after-close';
        req.resume();
      } else {
        serve(ctx, req, res, expectContinue, note).catch((error: Error) => {
          ctx.log({ kind: 'warn', message: `The Docker endpoint failed on ${req.method} ${loggedPath(req.url)}: ${error.message}` });
          send(ctx, res, 500, 'The Docker endpoint failed on this request.');
        });
      }
    });
  };
  server.on('request', onRequest(false));
  server.on('checkContinue', onRequest(true));
  server.on('upgrade', (req: IncomingMessage, socket: Socket, head: Buffer) => {
    ctx.counters.requests += 1;
    if (overCap(socket)) ctx.endSocket(socket, rawErrorResponse(503, overCapMessage(limits.maxConnections), { 'Retry-After': '1' }));
    else void handleHijack(ctx, req, socket, head);
  });
  server.on('connect', (req: IncomingMessage, socket: Socket) => {
    ctx.counters.refused += 1;
    ctx.endSocket(socket, rawErrorResponse(405, 'CONNECT is not part of the Docker Engine API.'));
    ctx.log({ kind: 'request', method: 'CONNECT', path: loggedPath(req.url), status: 405, durationMs: 0, rule: 'method' });
  });
  server.on('clientError', (error: NodeJS.ErrnoException, socket: Socket) => {
    ctx.counters.refused += 1;
    const [status, why] =
      error.code === 'HPE_HEADER_OVERFLOW'
        ? [431, `The request head is over the ${limits.maxHeaderBytes}-byte limit of this Docker endpoint.`]
        : error.code === 'ERR_HTTP_REQUEST_TIMEOUT'
          ? [408, `The request head did not arrive within ${Math.round(limits.headersMs / 1000)} s.`]
          : [400, `The request is not valid HTTP/1.1 (${error.code ?? error.message}); it was not forwarded.`];
    ctx.log({ kind: 'request', method: '', path: '', status, durationMs: 0, rule: 'parse', detail: error.code ?? error.message });
    if (socket.writable && error.code !== 'ECONNRESET') ctx.endSocket(socket, rawErrorResponse(status, why));
    else socket.destroy();
  });

  let ino: number;
  try {
    ino = await bindEndpointSocket(server, options.socketPath, options.owner);
  } catch (error) {
    server.close();
    agent.destroy();
    throw new Error(`The Docker endpoint could not listen on ${options.socketPath}: ${(error as Error).message}`, { cause: error });
  }
  options.log({ kind: 'info', message: `Docker endpoint listening on ${options.socketPath}.` });

  let closed: Promise<void> | undefined;
  return {
    socketPath: options.socketPath,
    stats: () => ({ open: ctx.sockets.size, ...ctx.counters }),
    close() {
      closed ??= new Promise<void>((resolve) => {
        ctx.closing = true;
        server.close(() => resolve());
        for (const socket of [...ctx.sockets, ...ctx.upstreams]) socket.destroy();
        agent.destroy();
        try {
          unlinkOwnSocket(options.socketPath, ino);
        } catch {
          // Already gone.
        }
      });
      return closed;
    },
  };
}
