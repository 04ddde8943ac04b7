/**
 * The HTTP handler shared by every bridge listener (a workspace's unix socket, the hub's loopback
 * TCP port). It runs the gate in order — connection cap 503, Host 403, browser Origin 403, route
 * 404, method 405, token 401, Content-Type 415, bucket 429, body 413/400, route concurrency 503 —
 * then hands the parsed JSON to the route. The token is checked before a byte of the body is
 * read. Error bodies are plain text.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import { AGENT_HOOK_LIMITS } from '../contract/agentHook';
import { REQUEST_CONTENT_TYPE, ROUTES, SERVER_TIMEOUTS_MS } from '../contract/shims';
import { agentEventRoute, approvalRoute } from './agentHooks';
import { credentialRoute } from './credential';
import { editRoute } from './edit';
import { bearerToken, isAllowedHostHeader, matchToken } from './gate';
import { HEALTHZ_BODY, isChallenge, BRIDGE_PROBE } from './healthz';
import { openRoute } from './open';
import { proposeRoute } from './propose';
import { proximoRoute } from './proximo';
import { soundRoute } from './sound';
import type { BridgeLog, Transport } from './log';
import type { Route, RouteDeps, RouteResult, WorkspaceBinding } from './route';

/**
 * Requests of one workspace a route runs at the same time; the next one is answered 503 (busy)
 * without starting anything. /proximo and /credential each run a host process per request;
 * /open runs one at a time, so a container cannot stack up VS Code's "open this website?" dialogs.
 */
export const CONCURRENCY_LIMITS = {
  open: 1,
  edit: 4,
  proximo: 4,
  credential: 4,
  sound: 1,
  propose: 1,
  /** Sub-agents may ask at once; AGENT_HOOK_LIMITS.pendingPerContainer caps what waits. */
  approval: AGENT_HOOK_LIMITS.pendingPerContainer,
  agentEvent: 4,
} as const;

/**
 * Open connections one listener keeps per workspace: a workspace's unix socket, or one peer
 * address on the shared loopback port (which also caps its total). A connection over the cap
 * gets a 503 and is closed within half a second; at most `refusing` of those are kept open at
 * once (the rest are closed on accept), so a flood cannot pile up file descriptors.
 */
export const CONNECTION_LIMITS = {
  perWorkspace: 32,
  tcpTotal: 128,
  refusing: 16,
} as const;

export const BRIDGE_ROUTES: readonly Route[] = [
  openRoute,
  editRoute,
  proximoRoute,
  credentialRoute,
  soundRoute,
  proposeRoute,
  approvalRoute,
  agentEventRoute,
];
const ROUTE_BY_PATH = new Map(BRIDGE_ROUTES.map((r) => [r.path, r]));
const CONCURRENCY_BY_PATH = new Map<string, number>([
  [ROUTES.open, CONCURRENCY_LIMITS.open],
  [ROUTES.edit, CONCURRENCY_LIMITS.edit],
  [ROUTES.proximo, CONCURRENCY_LIMITS.proximo],
  [ROUTES.credential, CONCURRENCY_LIMITS.credential],
  [ROUTES.sound, CONCURRENCY_LIMITS.sound],
  [ROUTES.propose, CONCURRENCY_LIMITS.propose],
  [ROUTES.approval, CONCURRENCY_LIMITS.approval],
  [ROUTES.agentEvent, CONCURRENCY_LIMITS.agentEvent],
]);
/** The route name logged for a connection refused before any request was read. */
export const CONNECTION_ROUTE = '(connection)';

/** What one listener serves: which tokens it accepts and which port its Host header must name. */
export interface ListenerScope {
  transport: Transport;
  /** The TCP port (for the Host check); undefined for a unix socket. */
  port(): number | undefined;
  workspaces(): Iterable<WorkspaceBinding>;
  /** The /healthz proof for a challenge (unix listeners of this hub only, see healthz.ts). */
  prove?(challenge: string): string;
}

type BodyRead = { body: Buffer } | { status: 400 | 413; message: string };

function readBody(req: IncomingMessage, limit: number): Promise<BodyRead> {
  const declared = req.headers['content-length'];
  if (declared !== undefined && Number(declared) > limit) {
    return Promise.resolve({ status: 413, message: `The request body is over the ${limit}-byte limit for this route.` });
  }
  return new Promise((resolve) => {
    const chunks: Buffer[] = [];
    let size = 0;
    let done = false;
    req.on('data', (chunk: Buffer) => {
      if (done) return;
      size += chunk.length;
      if (size > limit) {
        done = true;
        resolve({ status: 413, message: `The request body is over the ${limit}-byte limit for this route.` });
        return;
      }
      chunks.push(chunk);
    });
    req.on('end', () => {
      if (!done) resolve({ body: Buffer.concat(chunks) });
      done = true;
    });
    req.on('error', () => {
      if (!done) resolve({ status: 400, message: 'The request body could not be read.' });
      done = true;
    });
  });
}

function send(res: ServerResponse, status: number, body: string, contentType: string, close = false): void {
  if (res.headersSent || res.destroyed) return;
  const data = Buffer.from(body, 'utf8');
  res.writeHead(status, {
    'Content-Type': contentType,
    'Content-Length': data.length,
    ...(close ? { Connection: 'close' } : {}),
  });
  res.end(data);
}

const sendText = (res: ServerResponse, status: number, message: string, close = false): void =>
  send(res, status, `${message}\n`, 'text/plain; charset=utf-8', close);

interface Outcome {
  status: number;
  workspace?: string;
  detail?: string;
}

/** True when the Content-Type header names the JSON media type (parameters such as charset allowed). */
export function isJsonContentType(header: string | undefined): boolean {
  return (header ?? '').split(';')[0]?.trim().toLowerCase() === REQUEST_CONTENT_TYPE;
}

async function serve(req: IncomingMessage, res: ServerResponse, scope: ListenerScope, deps: RouteDeps): Promise<Outcome> {
  if (!isAllowedHostHeader(req.headers.host, scope.port())) {
    sendText(res, 403, 'Refused: the Host header is not one the toolbox shims send (DNS rebinding protection).');
    return { status: 403, detail: `host ${JSON.stringify(req.headers.host ?? '')}` };
  }
  if (req.headers.origin !== undefined) {
    sendText(res, 403, 'Refused: the request carries a browser Origin header; the bridge only serves the toolbox shims.');
    return { status: 403, detail: 'browser Origin header' };
  }
  const path = (req.url ?? '').split('?')[0] as string;
  if (path === ROUTES.healthz) {
    const challenge = req.headers[BRIDGE_PROBE.challengeHeader];
    if (scope.prove !== undefined && isChallenge(challenge)) res.setHeader(BRIDGE_PROBE.proofHeader, scope.prove(challenge));
    send(res, 200, HEALTHZ_BODY, 'application/json');
    return { status: 200 };
  }
  const route = ROUTE_BY_PATH.get(path);
  if (route === undefined) {
    sendText(res, 404, `No bridge route ${path}.`);
    return { status: 404 };
  }
  if (req.method !== 'POST') {
    res.setHeader('Allow', 'POST');
    sendText(res, 405, `${route.path} only accepts POST.`);
    return { status: 405 };
  }
  const workspace = matchToken(bearerToken(req.headers.authorization), scope.workspaces());
  if (workspace === undefined) {
    sendText(res, 401, 'Missing or wrong bridge token.');
    return { status: 401 };
  }
  const ws = workspace.key;
  if (!isJsonContentType(req.headers['content-type'])) {
    sendText(res, 415, `${route.path} only accepts a JSON body sent with Content-Type: ${REQUEST_CONTENT_TYPE}.`, true);
    return { status: 415, workspace: ws };
  }
  if (!workspace.buckets[route.bucket].take()) {
    sendText(res, 429, 'Too many requests; slow down and retry.');
    return { status: 429, workspace: ws };
  }
  const read = await readBody(req, route.bodyLimit);
  if ('status' in read) {
    // Stop reading: the rest of an oversized body is discarded and the connection closed.
    sendText(res, read.status, read.message, true);
    req.resume();
    return { status: read.status, workspace: ws };
  }
  let json: unknown;
  try {
    json = JSON.parse(read.body.toString('utf8'));
  } catch {
    sendText(res, 400, 'The request body is not valid JSON.');
    return { status: 400, workspace: ws, detail: 'malformed JSON' };
  }
  // Held until the route's work (a host process included) has finished, not until the client
  // hangs up, so the cap bounds what actually runs on the host.
  const limit = CONCURRENCY_BY_PATH.get(route.path) ?? 1;
  const running = workspace.inFlight.get(route.path) ?? 0;
  if (running >= limit) {
    res.setHeader('Retry-After', '1');
    sendText(
      res,
      503,
      `Busy: ${route.path} is already handling ${running} ${running === 1 ? 'request' : 'requests'} from this workspace (the limit is ${limit}); wait for ${running === 1 ? 'it' : 'one'} to finish and retry.`,
    );
    return { status: 503, workspace: ws, detail: `${route.path} concurrency limit ${limit} reached` };
  }
  workspace.inFlight.set(route.path, running + 1);
  // The client hanging up before the answer is written (an agent hook the user answered in the
  // terminal instead) is the route's to know.
  const hangUp = new AbortController();
  const onClose = () => {
    if (!res.writableFinished) hangUp.abort();
  };
  res.once('close', onClose);
  let result: RouteResult;
  try {
    result = await route.handle(json, workspace, deps, hangUp.signal);
  } finally {
    res.off('close', onClose);
    workspace.inFlight.set(route.path, (workspace.inFlight.get(route.path) ?? 1) - 1);
  }
  if (result.status === 204) {
    res.writeHead(204).end();
    return { status: 204, workspace: ws };
  }
  if (result.status === 200) {
    send(res, 200, JSON.stringify(result.json), 'application/json');
    return { status: 200, workspace: ws };
  }
  sendText(res, result.status, result.message);
  return { status: result.status, workspace: ws, ...(route.logDetail ? { detail: result.message } : {}) };
}

/** How long a connection over the cap may take to send the request that gets the 503. */
const REFUSAL_GRACE_MS = 500;

/**
 * Caps the open connections of a listener: a workspace's unix socket as a whole; the shared TCP
 * port per peer address (each container has its own) and in total. A connection over the cap is
 * marked: the handler answers its request with a 503 and closes it, and it is destroyed after
 * REFUSAL_GRACE_MS whatever it sends. Only CONNECTION_LIMITS.refusing such connections are kept
 * at once; past that they are closed on accept. So a flood of idle connections holds at most
 * perWorkspace + refusing descriptors, instead of one each until the header timeout.
 */
function capConnections(server: Server, scope: ListenerScope, log: BridgeLog): (socket: Socket) => number | undefined {
  const perPeer = new Map<string, number>();
  const refusedAt = new WeakMap<Socket, number>();
  let total = 0;
  let refusing = 0;
  server.prependListener('connection', (socket: Socket) => {
    const peer = scope.transport === 'tcp' ? (socket.remoteAddress ?? '?') : 'unix';
    const mine = perPeer.get(peer) ?? 0;
    const limit =
      mine >= CONNECTION_LIMITS.perWorkspace
        ? CONNECTION_LIMITS.perWorkspace
        : total >= CONNECTION_LIMITS.tcpTotal
          ? CONNECTION_LIMITS.tcpTotal
          : 0;
    if (limit > 0) {
      socket.on('error', () => undefined);
      if (refusing >= CONNECTION_LIMITS.refusing) {
        socket.destroy();
        log({
          kind: 'request',
          transport: scope.transport,
          route: CONNECTION_ROUTE,
          status: 503,
          durationMs: 0,
          detail: 'closed on accept',
        });
        return;
      }
      refusing += 1;
      refusedAt.set(socket, limit);
      const grace = setTimeout(() => socket.destroy(), REFUSAL_GRACE_MS).unref();
      socket.once('close', () => {
        refusing -= 1;
        clearTimeout(grace);
      });
      return;
    }
    perPeer.set(peer, mine + 1);
    total += 1;
    socket.once('close', () => {
      total -= 1;
      const left = (perPeer.get(peer) ?? 1) - 1;
      if (left > 0) perPeer.set(peer, left);
      else perPeer.delete(peer);
    });
  });
  return (socket) => refusedAt.get(socket);
}

/** A node:http server with upstream's timeouts; the caller listens on a socket or a port. */
export function createBridgeServer(scope: ListenerScope, deps: RouteDeps, log: BridgeLog): Server {
  const server = createServer({ connectionsCheckingInterval: 1_000, requestTimeout: SERVER_TIMEOUTS_MS.read }, (req, res) => {
    const started = performance.now();
    const path = (req.url ?? '').split('?')[0]?.slice(0, 100) ?? '';
    const overCap = connectionRefused(req.socket);
    if (overCap !== undefined) {
      res.setHeader('Retry-After', '1');
      sendText(res, 503, `Too many open connections to the bridge (the limit is ${overCap}); close some and retry.`, true);
      log({ kind: 'request', transport: scope.transport, route: CONNECTION_ROUTE, status: 503, durationMs: 0, detail: 'connection limit' });
      return;
    }
    const route = ROUTE_BY_PATH.get(path);
    // The response must be written by the route's run limit plus the write timeout.
    const deadline = setTimeout(() => res.destroy(), (route?.runLimitMs ?? 0) + SERVER_TIMEOUTS_MS.write);
    res.on('close', () => clearTimeout(deadline));
    void serve(req, res, scope, deps)
      .catch((error: Error): Outcome => {
        sendText(res, 500, 'The bridge failed to handle the request.');
        return { status: 500, detail: error.message };
      })
      .then((outcome) => {
        log({
          kind: 'request',
          transport: scope.transport,
          route: path,
          status: outcome.status,
          durationMs: Math.round(performance.now() - started),
          ...(outcome.workspace !== undefined ? { workspace: outcome.workspace } : {}),
          ...(outcome.detail !== undefined ? { detail: outcome.detail } : {}),
        });
      });
  });
  server.headersTimeout = SERVER_TIMEOUTS_MS.header;
  server.keepAliveTimeout = SERVER_TIMEOUTS_MS.idle;
  const connectionRefused = capConnections(server, scope, log);
  return server;
}
