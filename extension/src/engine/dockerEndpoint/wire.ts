/**
 * The HTTP/1.1 details of the Docker endpoint (engine/dockerEndpoint/server.ts) that are not Node's job:
 * the checks a request head must pass before the policy sees it, which headers cross to the
 * engine and back, errors in the Engine API's own shape, and the engine's answer to a hijack
 * read off the wire. No I/O but what the caller hands in.
 */
import type { IncomingHttpHeaders, OutgoingHttpHeaders } from 'node:http';
import { rawResponse } from '../../plan/rawResponse';

/** What a refusal carries: the status, the sentence the Docker CLI prints, the rule that refused. */
export interface Refusal {
  status: number;
  message: string;
  rule: string;
}

export interface HeadLimits {
  maxHeaders: number;
  maxTargetBytes: number;
}

/**
 * Hop-by-hop headers (RFC 9110 7.6.1, plus the pre-standard Keep-Alive and Proxy-Connection):
 * they describe one connection, ours with the client, and never cross to the engine. Framing
 * (Content-Length, Transfer-Encoding) is set again by whoever writes the next hop; `Expect` was
 * answered here (100 Continue once the policy let the request through).
 */
const HOP_BY_HOP = new Set([
  'connection',
  'keep-alive',
  'proxy-connection',
  'proxy-authenticate',
  'proxy-authorization',
  'te',
  'trailer',
  'transfer-encoding',
  'upgrade',
  'expect',
  'content-length',
]);

/** The header names a Connection header lists: hop-by-hop too, whatever they are called. */
function connectionTokens(values: readonly string[] | undefined): Set<string> {
  const out = new Set<string>();
  for (const v of values ?? []) {
    for (const t of v.split(',')) {
      const name = t.trim().toLowerCase();
      if (name !== '') out.add(name);
    }
  }
  return out;
}

/**
 * The end-to-end headers of a message (Node's `headersDistinct`: every value of every name),
 * without the hop-by-hop ones and those its Connection header names. A name seen once stays a
 * string, so Node writes it as one line.
 */
export function endToEndHeaders(distinct: Readonly<Record<string, string | readonly string[] | undefined>>): OutgoingHttpHeaders {
  const all = (v: string | readonly string[] | undefined): readonly string[] | undefined => (typeof v === 'string' ? [v] : v);
  const listed = connectionTokens(all(distinct['connection']));
  const out: OutgoingHttpHeaders = {};
  for (const [key, value] of Object.entries(distinct)) {
    const name = key.toLowerCase();
    const values = all(value);
    if (values === undefined || HOP_BY_HOP.has(name) || listed.has(name)) continue;
    out[name] = values.length === 1 ? (values[0] as string) : [...values];
  }
  return out;
}

/**
 * Refuses a request head that must not reach the policy or the engine. Node's parser (llhttp, in
 * its strict mode: the endpoint sets insecureHTTPParser false) already refuses Transfer-Encoding
 * with Content-Length, two Content-Lengths, an obs-fold and bare LFs; this repeats the framing
 * checks on the raw headers, so a parser leniency in some Node release cannot let a request whose
 * end the engine would see elsewhere through (request smuggling). Pure.
 */
export function checkRequestHead(
  req: { url?: string | undefined; rawHeaders: readonly string[] },
  limits: HeadLimits,
): Refusal | undefined {
  const url = req.url ?? '';
  if (!url.startsWith('/')) {
    return { status: 400, rule: 'request-target', message: 'The request target must be a path (origin-form, as Docker clients send it).' };
  }
  if (Buffer.byteLength(url) > limits.maxTargetBytes) {
    return {
      status: 414,
      rule: 'request-target',
      message: `The request target is over the ${limits.maxTargetBytes}-byte limit of this Docker endpoint.`,
    };
  }
  const count = req.rawHeaders.length / 2;
  if (count > limits.maxHeaders) {
    return { status: 431, rule: 'headers', message: `The request has ${count} headers, over the limit of ${limits.maxHeaders}.` };
  }
  const lengths: string[] = [];
  const encodings: string[] = [];
  for (let i = 0; i + 1 < req.rawHeaders.length; i += 2) {
    const name = (req.rawHeaders[i] as string).toLowerCase();
    const value = req.rawHeaders[i + 1] as string;
    if (/[\0\r\n]/.test(value)) return framing('a header value holds a control character');
    if (name === 'content-length') lengths.push(value.trim());
    else if (name === 'transfer-encoding') encodings.push(value.trim().toLowerCase());
  }
  if (lengths.length > 1) return framing('it has more than one Content-Length');
  if (lengths.length === 1 && !/^[0-9]{1,15}$/.test(lengths[0] as string)) return framing('its Content-Length is not a number');
  if (encodings.length > 0 && lengths.length > 0) return framing('it has both Transfer-Encoding and Content-Length');
  if (encodings.length > 1 || (encodings.length === 1 && encodings[0] !== 'chunked')) {
    return framing('its Transfer-Encoding is not exactly "chunked"');
  }
  return undefined;
}

function framing(why: string): Refusal {
  return { status: 400, rule: 'framing', message: `The request's framing is ambiguous (${why}); it was not forwarded.` };
}

/** How a request says where its body ends. Call only on a head checkRequestHead let through. */
export function bodyFraming(headers: IncomingHttpHeaders): { kind: 'none' } | { kind: 'length'; bytes: number } | { kind: 'chunked' } {
  if (headers['transfer-encoding'] !== undefined) return { kind: 'chunked' };
  const declared = headers['content-length'];
  if (declared === undefined) return { kind: 'none' };
  const bytes = Number(declared);
  return bytes > 0 ? { kind: 'length', bytes } : { kind: 'none' };
}

/** An Engine API error body: `{"message": …}`, which the Docker CLI prints as "Error response from daemon: …". */
export function errorBody(message: string): Buffer {
  return Buffer.from(`${JSON.stringify({ message })}\n`, 'utf8');
}

/** A whole error response for a socket Node no longer writes to (a refused hijack, a bad head). */
export function rawErrorResponse(status: number, message: string, extra: Record<string, string> = {}): Buffer {
  return rawResponse(status, 'application/json', errorBody(message), extra);
}

/**
 * The request head written to the engine for a hijack: the policy's target, the end-to-end
 * headers, the upgrade pair, and `close`, so the engine ends the connection after any answer
 * that is not a hijack and nothing the client sends later can be read there as a new request.
 * HTTP/1.1 needs a Host (Docker answers 400 without one): `host` when the headers have none, as
 * Node's client adds one to the ordinary requests (a gate that names the headers leaves it out).
 */
export function hijackRequestHead(
  method: string,
  target: string,
  headers: OutgoingHttpHeaders,
  upgrade: string,
  bodyBytes: number,
  host = 'localhost',
): Buffer {
  const lines = [`${method} ${target} HTTP/1.1`];
  if (!Object.keys(headers).some((name) => name.toLowerCase() === 'host')) lines.push(`host: ${host}`);
  for (const [name, value] of Object.entries(headers)) {
    for (const v of Array.isArray(value) ? value : [value]) {
      if (v !== undefined) lines.push(`${name}: ${String(v)}`);
    }
  }
  if (bodyBytes > 0) lines.push(`content-length: ${bodyBytes}`);
  lines.push(`connection: Upgrade, close`, `upgrade: ${upgrade}`, '', '');
  return Buffer.from(lines.join('\r\n'), 'latin1');
}

export interface ResponseHead {
  status: number;
  contentType: string;
  /** Bytes of the head, its blank line included. */
  length: number;
}

/**
 * The engine's answer to a hijack request, once `buffer` holds its whole head: undefined while it
 * does not yet, 'invalid' when it is not an HTTP/1.x response head. Pure.
 */
export function parseResponseHead(buffer: Buffer): ResponseHead | 'invalid' | undefined {
  const end = buffer.indexOf('\r\n\r\n');
  if (end < 0) return undefined;
  const lines = buffer.subarray(0, end).toString('latin1').split('\r\n');
  const status = /^HTTP\/1\.[01] ([0-9]{3})(?: |$)/.exec(lines[0] ?? '');
  if (!status) return 'invalid';
  let contentType = '';
  for (const line of lines.slice(1)) {
    const colon = line.indexOf(':');
    if (colon > 0 && line.slice(0, colon).trim().toLowerCase() === 'content-type')
      contentType = line
        .slice(colon + 1)
        .trim()
        .toLowerCase();
  }
  return { status: Number(status[1]), contentType, length: end + 4 };
}

/**
 * Whether the engine took the connection over: 101 (a client that asked to upgrade, as every
 * Docker client does), or 200 with one of the raw stream types the daemon answers with when it
 * hijacks without an upgrade (older clients). Anything else is an ordinary answer, an error
 * mostly, after which the connection ends. Pure.
 */
export function isHijacked(head: ResponseHead): boolean {
  if (head.status === 101) return true;
  return (
    head.status === 200 &&
    (head.contentType.startsWith('application/vnd.docker.raw-stream') ||
      head.contentType.startsWith('application/vnd.docker.multiplexed-stream'))
  );
}

/** The 101 a client that asked to upgrade expects, for an engine that hijacked with a 200 (Docker's own words for it). */
export function upgradedHead(head: ResponseHead, upgrade: string): Buffer {
  const type = head.contentType !== '' ? [`Content-Type: ${head.contentType}`] : [];
  return Buffer.from(['HTTP/1.1 101 UPGRADED', ...type, 'Connection: Upgrade', `Upgrade: ${upgrade}`, '', ''].join('\r\n'), 'latin1');
}

/** The path of a target for the log: no query string (build arguments can hold secrets), bounded. */
export function loggedPath(target: string | undefined): string {
  return (target ?? '').split('?')[0]?.slice(0, 200) ?? '';
}
