/**
 * The Docker endpoint's hijacks (engine/dockerEndpoint/server.ts): attach, exec start and BuildKit's
 * `/session` and `/grpc`, which Node hands over as upgrade requests. The gate sees the head (and
 * the small body when it asks), the request goes to the engine on a connection of its own, and
 * only once the engine has taken the connection over (101, or a raw stream) are the two sockets
 * spliced, both ways, byte for byte.
 *
 * A `/grpc` the gate refuses is answered in gRPC instead (engine/dockerEndpoint/grpc.ts), so that
 * docker buildx shows the refusal.
 *
 * Until then, nothing the client sends after the request's body reaches the engine: held, then
 * dropped if the engine answered anything else (an error, mostly), after which both connections
 * end. So a second request hidden behind a hijack request never reaches the engine unseen.
 *
 * Half-close is kept: the client's end of stdin (`docker exec -i`, `docker run -i` with piped
 * input) is passed to the engine as a FIN on its connection, the process then sees EOF, and its
 * remaining output still flows back until the engine closes, so the CLI exits with the process.
 */
import type { IncomingMessage } from 'node:http';
import { connect as netConnect, type Socket } from 'node:net';
import { connect as tlsConnect } from 'node:tls';
import type { EndpointUpstream, HijackContext } from './types';
import { askBody, askGate } from './forward';
import { isGrpcUpgrade, refuseAsGrpc } from './grpc';
import {
  bodyFraming,
  checkRequestHead,
  endToEndHeaders,
  hijackRequestHead,
  isHijacked,
  loggedPath,
  parseResponseHead,
  rawErrorResponse,
  type Refusal,
  upgradedHead,
} from './wire';

/** The endpoint's stats (engine/dockerEndpoint/server.ts) but `open`, which the server counts itself. */
/**
 * The bytes a socket sends before the splice, bounded. `take` waits for a number of them; `stop`
 * hands back what came and leaves the socket paused for a pipe.
 */
class Inbox {
  private chunks: Buffer[] = [];
  private size = 0;
  ended = false;
  overflow = false;
  private wake: (() => void) | undefined;
  private readonly onData = (chunk: Buffer): void => {
    this.size += chunk.length;
    this.chunks.push(chunk);
    // Past the bound the socket waits (back-pressure) rather than losing what it sent.
    if (this.size > this.max) {
      this.overflow = true;
      this.socket.pause();
    }
    this.wake?.();
  };
  private readonly onEnd = (): void => {
    this.ended = true;
    this.wake?.();
  };

  constructor(
    private readonly socket: Socket,
    first: Buffer,
    private readonly max: number,
  ) {
    if (first.length > 0) this.onData(first);
    socket.on('data', this.onData);
    socket.once('end', this.onEnd);
    socket.once('close', this.onEnd);
    socket.resume();
  }

  get bytes(): Buffer {
    if (this.chunks.length > 1) this.chunks = [Buffer.concat(this.chunks)];
    return this.chunks[0] ?? Buffer.alloc(0);
  }

  /** Waits until `ready(bytes)` holds, the socket ends, the bound is passed, or `ms` pass. */
  until(ready: (bytes: Buffer) => boolean, ms: number): Promise<'ready' | 'ended' | 'overflow' | 'timeout'> {
    return new Promise((resolve) => {
      const timer = setTimeout(() => settle('timeout'), ms);
      const settle = (outcome: 'ready' | 'ended' | 'overflow' | 'timeout'): void => {
        clearTimeout(timer);
        this.wake = undefined;
        resolve(outcome);
      };
      const check = (): void => {
        if (ready(this.bytes)) settle('ready');
        else if (this.overflow) settle('overflow');
        else if (this.ended) settle('ended');
      };
      this.wake = check;
      check();
    });
  }

  /** Drops the first `n` bytes (consumed by the caller). */
  consume(n: number): Buffer {
    const all = this.bytes;
    this.chunks = [all.subarray(n)];
    this.size = all.length - n;
    return all.subarray(0, n);
  }

  /** Stops collecting: the socket is paused, what came is returned. */
  stop(): { rest: Buffer; ended: boolean } {
    this.socket.pause();
    this.socket.off('data', this.onData);
    this.socket.off('end', this.onEnd);
    this.socket.off('close', this.onEnd);
    return { rest: this.bytes, ended: this.ended };
  }

  /** Reads and drops whatever else comes. */
  discard(): void {
    this.stop();
    this.socket.on('data', () => undefined);
    this.socket.resume();
  }
}

function connectUpstream(upstream: EndpointUpstream): Socket {
  if ('socketPath' in upstream) return netConnect({ path: upstream.socketPath, allowHalfOpen: true });
  const tcp = netConnect({ host: upstream.host, port: upstream.port, allowHalfOpen: true, noDelay: true });
  if (!upstream.tls) return tcp;
  // tls.connect takes no allowHalfOpen; over a half-open TCP socket the client's end still reaches the engine.
  return tlsConnect({ socket: tcp, servername: upstream.host, ...upstream.tls });
}

/** Pipes both ways; when either socket is closed, both are. */
function splice(
  client: Socket,
  up: Socket,
  clientRest: { rest: Buffer; ended: boolean },
  upRest: { rest: Buffer; ended: boolean },
  onClose: () => void,
): void {
  let closed = false;
  const finish = (): void => {
    if (closed) return;
    closed = true;
    client.destroy();
    up.destroy();
    onClose();
  };
  client.once('close', finish);
  up.once('close', finish);
  if (client.destroyed || up.destroyed) return finish();
  if (clientRest.rest.length > 0) up.write(clientRest.rest);
  if (upRest.rest.length > 0) client.write(upRest.rest);
  if (clientRest.ended) up.end();
  else client.pipe(up);
  if (upRest.ended) client.end();
  else up.pipe(client);
}

export async function handleHijack(ctx: HijackContext, req: IncomingMessage, client: Socket, head: Buffer): Promise<void> {
  const started = performance.now();
  const method = req.method ?? '';
  let hijacked = false;
  const log = (status: number, rule?: string, detail?: string): void =>
    ctx.log({
      kind: 'request',
      method,
      path: loggedPath(req.url),
      status,
      durationMs: Math.round(performance.now() - started),
      hijack: hijacked,
      ...(rule !== undefined ? { rule } : {}),
      ...(detail !== undefined ? { detail } : {}),
    });
  client.on('error', () => undefined);
  const refuse = (r: Refusal): void => {
    ctx.counters.refused += 1;
    inbox.discard();
    ctx.endSocket(client, rawErrorResponse(r.status, r.message));
    log(r.status, r.rule);
  };
  // Bytes after the head are the body, then (after a hijack) the client's stream: held until then.
  const inbox = new Inbox(client, head, ctx.limits.upgradeBodyBytes + ctx.limits.maxHeaderBytes);

  const pre = checkRequestHead(req, ctx.limits);
  if (pre) return refuse(pre);
  const framing = bodyFraming(req.headers);
  if (framing.kind === 'chunked') {
    return refuse({
      status: 400,
      rule: 'framing',
      message: 'A request that takes the connection over must send its body with a Content-Length.',
    });
  }
  const verdict = await askGate(ctx.gate, ctx.log, { method, target: req.url ?? '', headers: req.headersDistinct });
  if (verdict.kind === 'refuse' && isGrpcUpgrade(req.url, req.headers.upgrade)) {
    // buildx shows no HTTP error body for /grpc, and takes one for "no BuildKit here": answered in gRPC.
    ctx.counters.refused += 1;
    refuseAsGrpc(client, inbox.stop().rest, verdict.message, () => undefined);
    return log(verdict.status, verdict.rule);
  }
  if (verdict.kind === 'refuse') return refuse(verdict);

  if (!verdict.upgrade) {
    // Spliced, its answer would pass untouched: no onResponse, no rewrite (an /info scrubbed by the gate).
    return refuse({
      status: 400,
      rule: 'upgrade-not-taken',
      message: `${loggedPath(req.url)} does not take the connection over; send it without the Upgrade header.`,
    });
  }
  const declared = framing.kind === 'length' ? framing.bytes : 0;
  const max = verdict.body?.maxBytes ?? ctx.limits.upgradeBodyBytes;
  if (declared > max)
    return refuse({ status: 413, rule: 'body-size', message: `The request body is over the ${max}-byte limit for this request.` });
  const arrived = await inbox.until((b) => b.length >= declared, ctx.limits.bodyMs);
  if (arrived !== 'ready') {
    return refuse(
      arrived === 'timeout'
        ? {
            status: 408,
            rule: 'body-timeout',
            message: `The request body did not arrive within ${Math.round(ctx.limits.bodyMs / 1000)} s.`,
          }
        : { status: 400, rule: 'body', message: 'The request body could not be read.' },
    );
  }
  let body = inbox.consume(declared);
  if (verdict.body) {
    const checked = await askBody(verdict.body, ctx.log, Buffer.from(body));
    if (checked.kind === 'refuse') return refuse(checked);
    body = checked.body;
  }
  if (ctx.closing || client.destroyed) return;

  const up = connectUpstream(ctx.upstream);
  ctx.upstreams.add(up);
  up.once('close', () => ctx.upstreams.delete(up));
  let upError: Error | undefined;
  up.on('error', (error) => (upError = error));
  // A client that leaves while the engine has not answered takes the engine's connection with it.
  client.once('close', () => up.destroy());
  if (client.destroyed) up.destroy();
  const upgradeHeader = req.headers.upgrade ?? 'tcp';
  const upstreamHost = 'socketPath' in ctx.upstream ? 'localhost' : `${ctx.upstream.host}:${ctx.upstream.port}`;
  up.write(
    hijackRequestHead(
      method,
      verdict.target,
      endToEndHeaders(verdict.headers ?? req.headersDistinct),
      upgradeHeader,
      body.length,
      upstreamHost,
    ),
  );
  if (body.length > 0) up.write(body);

  const answer = new Inbox(up, Buffer.alloc(0), ctx.limits.maxHeaderBytes);
  const got = await answer.until((b) => parseResponseHead(b) !== undefined, ctx.limits.upstreamHeadMs);
  const parsed = parseResponseHead(answer.bytes);
  if (got !== 'ready' || parsed === undefined || parsed === 'invalid') {
    ctx.counters.upstreamErrors += 1;
    const why =
      upError?.message ?? (got === 'timeout' ? `no answer within ${Math.round(ctx.limits.upstreamHeadMs / 1000)} s` : 'no valid answer');
    answer.stop();
    up.destroy();
    return refuse({ status: 502, rule: 'upstream', message: `The Docker engine behind this endpoint did not answer: ${why}.` });
  }

  if (isHijacked(parsed)) {
    hijacked = true;
    ctx.counters.hijacks += 1;
    ctx.counters.hijacksOpen += 1;
    const upRest = answer.stop();
    // Podman (4.3) takes `Connection: Upgrade, close` for no upgrade and hijacks with a 200; the
    // client asked to upgrade, and the docker CLI (28) refuses anything but 101.
    if (parsed.status === 200) upRest.rest = Buffer.concat([upgradedHead(parsed, upgradeHeader), upRest.rest.subarray(parsed.length)]);
    splice(client, up, inbox.stop(), upRest, () => {
      ctx.counters.hijacksOpen -= 1;
      log(parsed.status);
    });
    return;
  }
  // An ordinary answer: passed on as the engine wrote it; the engine closes after it (the request
  // said `close`), and what the client sent after its body is dropped, never forwarded.
  inbox.discard();
  const rest = answer.stop();
  client.write(rest.rest);
  log(parsed.status);
  if (rest.ended) client.end();
  else up.pipe(client);
}
