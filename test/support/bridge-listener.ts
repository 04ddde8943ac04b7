/**
 * A stand-in for the host bridge in shim tests: node:http on a unix socket and/or on an
 * ephemeral 127.0.0.1 port, recording every request exactly as it arrived and answering with
 * whatever the test says. It implements no bridge rules; the tests assert what the shims sent.
 */
import { chownSync } from 'node:fs';
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

export type Transport = 'unix' | 'tcp';

export interface RecordedRequest {
  transport: Transport;
  method: string;
  url: string;
  authorization: string | undefined;
  contentType: string | undefined;
  body: string;
}

export interface BridgeReply {
  status: number;
  /** A string is sent as text/plain, anything else as JSON. */
  body?: unknown;
  /** Never answer (the connection stays open until the listener closes). */
  hang?: boolean;
  /** Answer after this many milliseconds (a user who takes a while to decide). */
  delayMs?: number;
}

export interface BridgeListenerOptions {
  /** Listen on this unix socket path (chowned to `owner` when given). */
  socketPath?: string;
  owner?: { uid: number; gid: number };
  /** Listen on 127.0.0.1 at an ephemeral port. */
  tcp?: boolean;
  reply: (req: RecordedRequest) => BridgeReply;
}

export interface BridgeListener {
  requests: RecordedRequest[];
  /** The TCP port, when listening on TCP. */
  port: number | undefined;
  close(): Promise<void>;
}

function readBody(req: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
    req.on('error', reject);
  });
}

function serve(transport: Transport, options: BridgeListenerOptions, requests: RecordedRequest[]): Server {
  return createServer((req, res) => {
    void readBody(req).then(async (body) => {
      const recorded: RecordedRequest = {
        transport,
        method: req.method ?? '',
        url: req.url ?? '',
        authorization: req.headers.authorization,
        contentType: req.headers['content-type'],
        body,
      };
      requests.push(recorded);
      const reply = options.reply(recorded);
      if (reply.hang) return;
      if (reply.delayMs !== undefined) await new Promise((r) => setTimeout(r, reply.delayMs));
      if (reply.body === undefined) {
        res.writeHead(reply.status).end();
      } else if (typeof reply.body === 'string') {
        res.writeHead(reply.status, { 'Content-Type': 'text/plain; charset=utf-8' }).end(reply.body);
      } else {
        res.writeHead(reply.status, { 'Content-Type': 'application/json' }).end(JSON.stringify(reply.body));
      }
    });
  });
}

function listen(server: Server, target: string | { host: string; port: number }): Promise<void> {
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    const done = () => {
      server.off('error', reject);
      resolve();
    };
    if (typeof target === 'string') server.listen(target, done);
    else server.listen(target.port, target.host, done);
  });
}

function closeServer(server: Server): Promise<void> {
  return new Promise((resolve) => {
    server.closeAllConnections();
    server.close(() => resolve());
  });
}

export async function startBridgeListener(options: BridgeListenerOptions): Promise<BridgeListener> {
  const requests: RecordedRequest[] = [];
  const servers: Server[] = [];
  let port: number | undefined;
  try {
    if (options.socketPath) {
      const server = serve('unix', options, requests);
      await listen(server, options.socketPath);
      servers.push(server);
      if (options.owner) chownSync(options.socketPath, options.owner.uid, options.owner.gid);
    }
    if (options.tcp) {
      const server = serve('tcp', options, requests);
      await listen(server, { host: '127.0.0.1', port: 0 });
      servers.push(server);
      port = (server.address() as AddressInfo).port;
    }
  } catch (err) {
    await Promise.all(servers.map(closeServer));
    throw err;
  }
  return { requests, port, close: () => Promise.all(servers.map(closeServer)).then(() => undefined) };
}

/** A 127.0.0.1 port nothing listens on (bound, then released). */
export async function closedLoopbackPort(): Promise<number> {
  const server = createServer();
  await listen(server, { host: '127.0.0.1', port: 0 });
  const { port } = server.address() as AddressInfo;
  await closeServer(server);
  return port;
}
