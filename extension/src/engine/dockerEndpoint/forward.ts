/**
 * The Docker endpoint's ordinary requests (engine/dockerEndpoint/server.ts): everything but the hijacks.
 * The gate sees the head; a body it asks for is read, bounded in size and time, and handed to it;
 * then the request goes to the engine on a kept-alive connection, and the answer comes back as it
 * streams, each hop framed by Node (chunked where the length is not known), with back-pressure
 * both ways and an abort passed on from either side.
 */
import { request as httpRequest, type Agent, type ClientRequest, type IncomingMessage, type ServerResponse } from 'node:http';
import { request as httpsRequest } from 'node:https';
import type { Socket } from 'node:net';
import { pipeline } from 'node:stream';
import type { EndpointEvent, EndpointGate, EndpointRequestHead, GateForward, GateHead, HijackContext } from './types';
import { bodyFraming, checkRequestHead, endToEndHeaders, errorBody, loggedPath, type Refusal } from './wire';

export interface EndpointContext extends HijackContext {
  agent: Agent;
  /**
   * Connections answered with `Connection: close` (a refusal, a failure). A request the client
   * pipelined behind such an answer is never forwarded: its answer could not be written.
   */
  closingAfterAnswer: WeakSet<Socket>;
}

/** Answers with an Engine API error and closes the connection after it. */
export function send(ctx: EndpointContext, res: ServerResponse, status: number, message: string, extra: Record<string, string> = {}): void {
  if (res.socket) ctx.closingAfterAnswer.add(res.socket);
  if (res.headersSent || res.destroyed) return;
  const body = errorBody(message);
  res.writeHead(status, { 'Content-Type': 'application/json', 'Content-Length': body.length, Connection: 'close', ...extra });
  res.end(body);
}

function upstreamRequest(ctx: EndpointContext, options: { method: string; path: string; headers: Record<string, unknown> }): ClientRequest {
  const up = ctx.upstream;
  const base = { ...options, agent: ctx.agent, headers: options.headers as Record<string, string | string[]> };
  if ('socketPath' in up) return httpRequest({ ...base, socketPath: up.socketPath });
  if (up.tls) return httpsRequest({ ...base, host: up.host, port: up.port, ...up.tls });
  return httpRequest({ ...base, host: up.host, port: up.port });
}

type BodyRead = { body: Buffer } | Refusal;

/** Reads a body the gate asked for: at most `max` bytes, within `ms`, however it is framed. */
function readBoundedBody(req: IncomingMessage, max: number, ms: number): Promise<BodyRead> {
  const framing = bodyFraming(req.headers);
  const tooLarge: Refusal = { status: 413, rule: 'body-size', message: `The request body is over the ${max}-byte limit for this request.` };
  if (framing.kind === 'none') return Promise.resolve({ body: Buffer.alloc(0) });
  if (framing.kind === 'length' && framing.bytes > max) return Promise.resolve(tooLarge);
  return new Promise((resolve) => {
    const chunks: Buffer[] = [];
    let size = 0;
    let done = false;
    const finish = (result: BodyRead): void => {
      if (done) return;
      done = true;
      clearTimeout(timer);
      req.off('data', onData);
      resolve(result);
    };
    const timer = setTimeout(
      () => finish({ status: 408, rule: 'body-timeout', message: `The request body did not arrive within ${Math.round(ms / 1000)} s.` }),
      ms,
    );
    const onData = (chunk: Buffer): void => {
      size += chunk.length;
      if (size > max) finish(tooLarge);
      else chunks.push(chunk);
    };
    req.on('data', onData);
    req.once('end', () => finish({ body: Buffer.concat(chunks) }));
    req.once('error', () => finish({ status: 400, rule: 'body', message: 'The request body could not be read.' }));
  });
}

/** Hands the engine's JSON answer to the gate's onResponse, without holding the stream up. */
function watchResponse(ures: IncomingMessage, gate: GateForward, ctx: EndpointContext): void {
  const onResponse = gate.onResponse;
  if (onResponse === undefined) return;
  const status = ures.statusCode ?? 0;
  const max = ctx.limits.responseJsonBytes;
  const declared = ures.headers['content-length'];
  const json = /^application\/json\b/i.test(ures.headers['content-type'] ?? '');
  const empty = status === 204 || status === 304 || declared === '0';
  if (!empty && (!json || (declared !== undefined && Number(declared) > max))) return;
  const chunks: Buffer[] = [];
  let size = 0;
  ures.on('data', (chunk: Buffer) => {
    size += chunk.length;
    if (size <= max) chunks.push(chunk);
  });
  ures.once('end', () => {
    if (size > max || (!json && size > 0)) return;
    try {
      onResponse(status, size === 0 ? undefined : Buffer.concat(chunks));
    } catch (error) {
      ctx.log({ kind: 'warn', message: `The Docker endpoint's policy failed on an answer: ${(error as Error).message}` });
    }
  });
}

/** How long a streamed answer's bytes may wait to be written together, and how many may. */
const GATHER = { ms: 2, bytes: 64 * 1024 } as const;

/**
 * Copies an answer's body to the client, gathering what arrives within GATHER.ms (or up to
 * GATHER.bytes) into one write. The engine frames a stream finely (`docker logs` sends each line
 * as a chunk of its own, about 110 bytes, and writes it at once), so writing each as it came cost
 * a chunk header and a system call per line: `docker logs` of 100 MiB took 1.4 times as long as
 * on the engine's socket (bench/dockerEndpoint.ts). A line of `docker logs -f` waits at most
 * GATHER.ms.
 */
function relay(from: IncomingMessage, to: ServerResponse): void {
  let pending: Buffer[] = [];
  let size = 0;
  let timer: NodeJS.Timeout | undefined;
  let ended = false;
  const flush = (): void => {
    if (timer !== undefined) clearTimeout(timer);
    timer = undefined;
    if (size > 0 && !to.destroyed) {
      const data = pending.length === 1 ? (pending[0] as Buffer) : Buffer.concat(pending, size);
      pending = [];
      size = 0;
      if (!to.write(data)) {
        from.pause();
        to.once('drain', () => from.resume());
      }
    }
    if (ended) to.end();
  };
  from.on('data', (chunk: Buffer) => {
    pending.push(chunk);
    size += chunk.length;
    if (size >= GATHER.bytes) flush();
    else timer ??= setTimeout(flush, GATHER.ms);
  });
  from.once('end', () => {
    ended = true;
    flush();
  });
  // The engine failed mid-answer: the client must not take a cut body for a whole one.
  from.once('aborted', () => to.destroy());
  from.once('error', () => to.destroy());
  to.once('close', () => {
    if (timer !== undefined) clearTimeout(timer);
    from.destroy();
  });
}

/** Reads the engine's whole answer, bounded, and sends the client the gate's rewrite of it. */
function rewrite(
  ctx: EndpointContext,
  ures: IncomingMessage,
  res: ServerResponse,
  verdict: GateForward,
  response: NonNullable<GateForward['response']>,
): void {
  const status = ures.statusCode ?? 502;
  const fail = (why: string): void => {
    ctx.counters.upstreamErrors += 1;
    send(ctx, res, 502, `The engine's answer to this request could not be passed on: ${why}.`);
    ures.destroy();
  };
  if (!/^application\/json\b/i.test(ures.headers['content-type'] ?? '') && status !== 204) return fail('it is not JSON');
  const chunks: Buffer[] = [];
  let size = 0;
  ures.on('data', (chunk: Buffer) => {
    size += chunk.length;
    if (size > response.maxBytes) fail(`it is over ${response.maxBytes} bytes`);
    else chunks.push(chunk);
  });
  ures.once('end', () => {
    if (size > response.maxBytes) return;
    let body: Buffer;
    try {
      body = response.rewrite(status, Buffer.concat(chunks));
    } catch (error) {
      ctx.log({ kind: 'warn', message: `The Docker endpoint's policy failed on an answer: ${(error as Error).message}` });
      return fail("the endpoint's policy failed on it");
    }
    const headers = endToEndHeaders(ures.headersDistinct);
    if (status !== 204 && status !== 304) headers['content-length'] = String(body.length);
    res.writeHead(status, ures.statusMessage, headers);
    res.end(status === 204 || status === 304 ? undefined : body);
    try {
      verdict.onResponse?.(status, body.length > 0 ? body : undefined);
    } catch (error) {
      ctx.log({ kind: 'warn', message: `The Docker endpoint's policy failed on an answer: ${(error as Error).message}` });
    }
  });
  ures.once('aborted', () => res.destroy());
}

/** How much of a refused request's body is drained, and for how long, before the answer: past either the answer goes anyway. */
export const REFUSAL_DRAIN = { bytes: 8 * 1024 * 1024, ms: 2_000 } as const;

function drainThen(req: IncomingMessage, answer: () => void): void {
  if (req.complete || req.readableEnded || bodyFraming(req.headers).kind === 'none') {
    req.resume();
    answer();
    return;
  }
  let bytes = 0;
  let done = false;
  const finish = (): void => {
    if (done) return;
    done = true;
    clearTimeout(timer);
    req.off('data', count);
    answer();
  };
  const count = (chunk: Buffer): void => {
    bytes += chunk.length;
    if (bytes > REFUSAL_DRAIN.bytes) finish();
  };
  const timer = setTimeout(finish, REFUSAL_DRAIN.ms);
  req.on('data', count);
  req.once('end', finish);
  req.once('close', finish);
  req.once('error', finish);
  req.resume();
}

export async function serve(
  ctx: EndpointContext,
  req: IncomingMessage,
  res: ServerResponse,
  expectContinue: boolean,
  note: { rule?: string },
): Promise<void> {
  const refuse = (r: Refusal): void => {
    ctx.counters.refused += 1;
    note.rule = r.rule;
    // The unread rest of the body is drained (within bounds) before the answer, which closes the
    // connection (Connection: close): a client still writing its body (docker build's context)
    // would otherwise meet a closed socket and show a broken pipe instead of the refusal.
    drainThen(req, () => send(ctx, res, r.status, r.message));
  };
  const pre = checkRequestHead(req, ctx.limits);
  if (pre) return refuse(pre);
  const verdict = await askGate(ctx.gate, ctx.log, { method: req.method ?? '', target: req.url ?? '', headers: req.headersDistinct });
  if (verdict.kind === 'refuse') return refuse(verdict);
  // A hijack route asked without the upgrade headers (dockerode's exec start, which Testcontainers
  // runs for its wait strategy) goes as an ordinary request: the engine then answers
  // 200 with a raw stream until it closes, relayed as a body, and the client can send no input.
  // Nothing but the request itself, with the body the gate checked, reaches the engine's
  // connection; bytes the client sends next are the next request, which the gate sees.
  let body: Buffer | undefined;
  if (verdict.body) {
    if (expectContinue) res.writeContinue();
    const read = await readBoundedBody(req, verdict.body.maxBytes, ctx.limits.bodyMs);
    if (!('body' in read)) return refuse(read);
    const checked = await askBody(verdict.body, ctx.log, read.body);
    if (checked.kind === 'refuse') return refuse(checked);
    body = checked.body;
  } else if (expectContinue) {
    res.writeContinue();
  }
  forward(ctx, req, res, verdict, body);
}

function forward(ctx: EndpointContext, req: IncomingMessage, res: ServerResponse, verdict: GateForward, body: Buffer | undefined): void {
  const headers: Record<string, unknown> = endToEndHeaders(verdict.headers ?? req.headersDistinct);
  // The framing is set again for this hop, never copied: a body the gate read goes with its own length.
  const framing = bodyFraming(req.headers);
  if (body !== undefined) {
    if (body.length > 0 || framing.kind !== 'none') headers['content-length'] = String(body.length);
  } else if (framing.kind === 'chunked') headers['transfer-encoding'] = 'chunked';
  else if (framing.kind === 'length') headers['content-length'] = String(framing.bytes);
  const up = upstreamRequest(ctx, { method: req.method ?? 'GET', path: verdict.target, headers });
  up.on('response', (ures) => {
    const status = ures.statusCode ?? 502;
    if (status === 101) {
      ures.destroy();
      ctx.counters.upstreamErrors += 1;
      send(ctx, res, 502, 'The Docker engine switched protocols on a request that did not ask to.');
      return;
    }
    if (verdict.response) return rewrite(ctx, ures, res, verdict, verdict.response);
    const headers = endToEndHeaders(ures.headersDistinct);
    const length = ures.headers['content-length'];
    if (length !== undefined) headers['content-length'] = length;
    res.writeHead(status, ures.statusMessage, headers);
    // A stream's head now, not with its first byte: `docker logs -f` of a quiet container, `/events`, `docker wait`.
    if (length === undefined) res.flushHeaders();
    watchResponse(ures, verdict, ctx);
    relay(ures, res);
  });
  let clientGone = false;
  up.on('error', (error) => {
    // An answer already given in full (or the client gone) has nothing left to fail.
    if (clientGone || res.writableEnded) return;
    ctx.counters.upstreamErrors += 1;
    if (res.headersSent) res.destroy();
    else send(ctx, res, 502, `The Docker engine behind this endpoint did not answer: ${error.message}`);
  });
  res.on('close', () => {
    if (res.writableFinished) return;
    clientGone = true;
    up.destroy();
  });
  if (body !== undefined) up.end(body);
  else if (framing.kind === 'none') up.end();
  else pipeline(req, up, () => undefined);
}

/**
 * The gate's verdict on a request head, for the forwarding and the hijack paths alike: the gate's
 * refusal, a refusal when the gate failed or gave a target that is not a path, or the forward.
 */
export async function askGate(gate: EndpointGate, log: (event: EndpointEvent) => void, head: EndpointRequestHead): Promise<GateHead> {
  let verdict: GateHead;
  try {
    verdict = await gate.head(head);
  } catch (error) {
    log({
      kind: 'warn',
      message: `The Docker endpoint's policy failed on ${head.method} ${loggedPath(head.target)}: ${(error as Error).message}`,
    });
    return {
      kind: 'refuse',
      status: 500,
      rule: 'gate-failed',
      message: "The endpoint's policy failed on this request; it was not forwarded.",
    };
  }
  if (verdict.kind === 'refuse' || verdict.target.startsWith('/')) return verdict;
  return {
    kind: 'refuse',
    status: 500,
    rule: 'gate-failed',
    message: "The endpoint's policy gave a target that is not a path; the request was not forwarded.",
  };
}

/** The gate's verdict on a body it asked to read, or a refusal when its check failed. */
export async function askBody(
  spec: NonNullable<GateForward['body']>,
  log: (event: EndpointEvent) => void,
  body: Buffer,
): Promise<Awaited<ReturnType<NonNullable<GateForward['body']>['check']>>> {
  try {
    return await spec.check(body);
  } catch (error) {
    log({ kind: 'warn', message: `The Docker endpoint's policy failed on a body: ${(error as Error).message}` });
    return {
      kind: 'refuse',
      status: 500,
      rule: 'gate-failed',
      message: "The endpoint's policy failed on this request's body; it was not forwarded.",
    };
  }
}
