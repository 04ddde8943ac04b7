/**
 * The HTTP handler shared by every bridge listener (a workspace's unix socket, the hub's loopback
 * TCP port). It runs the upstream gate in order — Host, route, method 405, token 401, bucket 429,
 * body 413/400 — then hands the parsed JSON to the route. Error bodies are plain text.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { ROUTES, SERVER_TIMEOUTS_MS } from '../contract/constants';
import { credentialRoute } from './credential';
import { editRoute } from './edit';
import { bearerToken, isAllowedHostHeader, matchToken } from './gate';
import { HEALTHZ_BODY } from './healthz';
import { openRoute } from './open';
import { proximoRoute } from './proximo';
import type { Route, RouteDeps, RouteResult, WorkspaceBinding } from './route';

export const BRIDGE_ROUTES: readonly Route[] = [openRoute, editRoute, proximoRoute, credentialRoute];
const ROUTE_BY_PATH = new Map(BRIDGE_ROUTES.map((r) => [r.path, r]));

export type Transport = 'unix' | 'tcp';

export interface RequestLogEntry {
  kind: 'request';
  transport: Transport;
  route: string;
  status: number;
  durationMs: number;
  /** The workspace key, once the token identified it. */
  workspace?: string;
  /** The refusal or failure reason; never set for /credential. */
  detail?: string;
}

export type BridgeEvent = RequestLogEntry | { kind: 'info' | 'warn'; message: string };
export type BridgeLog = (event: BridgeEvent) => void;

/** What one listener serves: which tokens it accepts and which port its Host header must name. */
export interface ListenerScope {
  transport: Transport;
  /** The TCP port (for the Host check); undefined for a unix socket. */
  port(): number | undefined;
  workspaces(): Iterable<WorkspaceBinding>;
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

async function serve(req: IncomingMessage, res: ServerResponse, scope: ListenerScope, deps: RouteDeps): Promise<Outcome> {
  if (!isAllowedHostHeader(req.headers.host, scope.port())) {
    sendText(res, 403, 'Refused: the Host header is not one the toolbox shims send (DNS rebinding protection).');
    return { status: 403, detail: `host ${JSON.stringify(req.headers.host ?? '')}` };
  }
  const path = (req.url ?? '').split('?')[0] as string;
  if (path === ROUTES.healthz) {
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
  const result: RouteResult = await route.handle(json, workspace, deps);
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

/** A node:http server with upstream's timeouts; the caller listens on a socket or a port. */
export function createBridgeServer(scope: ListenerScope, deps: RouteDeps, log: BridgeLog): Server {
  const server = createServer({ connectionsCheckingInterval: 1_000, requestTimeout: SERVER_TIMEOUTS_MS.read }, (req, res) => {
    const started = performance.now();
    const path = (req.url ?? '').split('?')[0]?.slice(0, 100) ?? '';
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
  return server;
}
