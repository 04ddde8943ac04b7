/**
 * The bytes the egress proxy (bridge/egressProxy.ts) reads from a container, parsed without I/O:
 * an HTTP/1.x request head (CONNECT or an absolute-form request), a SOCKS5 greeting and request
 * (RFC 1928), a TLS ClientHello's server name (RFC 8446 4.1.2, RFC 6066 3), the start of an SSH
 * identification (RFC 4253 4.2), and the end of a chunked body. Each parser takes what has arrived so far and says `incomplete` until it can
 * answer; none reads past its limits, and none throws on hostile bytes.
 */
import { rawResponse } from '../plan/rawResponse';

export interface HeadLimits {
  maxHeaderBytes: number;
  maxHeaders: number;
}

export interface RequestHead {
  method: string;
  target: string;
  /** `HTTP/1.1` or `HTTP/1.0`. */
  version: string;
  /** In order, names as sent. */
  headers: Array<[name: string, value: string]>;
  /** Bytes of the head, its blank line included. */
  length: number;
}

export type HeadRefusal = { status: 400 | 431; message: string };

const TOKEN = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/;

/** The request head at the start of `buf`, `incomplete` while it has not all arrived, or a refusal. */
export function parseRequestHead(buf: Buffer, limits: HeadLimits): RequestHead | HeadRefusal | 'incomplete' {
  const end = buf.indexOf('\r\n\r\n');
  if (end < 0 || end + 4 > limits.maxHeaderBytes) {
    if (end >= 0 || buf.length > limits.maxHeaderBytes) {
      return { status: 431, message: `The request head is over the ${limits.maxHeaderBytes}-byte limit of this proxy.` };
    }
    return 'incomplete';
  }
  const text = buf.subarray(0, end).toString('latin1');
  if (/[\0\n\r]/.test(text.replace(/\r\n/g, ''))) return bad('a bare CR, LF or NUL');
  const lines = text.split('\r\n');
  const request = /^([A-Za-z]+) (\S+) (HTTP\/1\.[01])$/.exec(lines[0] ?? '');
  if (!request) return bad('its request line is not "METHOD target HTTP/1.1"');
  if (lines.length - 1 > limits.maxHeaders) {
    return { status: 431, message: `The request has ${lines.length - 1} headers, over the limit of ${limits.maxHeaders}.` };
  }
  const headers: Array<[string, string]> = [];
  for (const line of lines.slice(1)) {
    const colon = line.indexOf(':');
    const name = colon > 0 ? line.slice(0, colon) : '';
    if (!TOKEN.test(name)) return bad('a header line is not "Name: value"');
    const value = line.slice(colon + 1).replace(/^[ \t]+|[ \t]+$/g, '');
    // eslint-disable-next-line no-control-regex
    if (/[\x00-\x08\x0a-\x1f\x7f]/.test(value)) return bad('a header value holds a control character');
    headers.push([name, value]);
  }
  return { method: request[1] as string, target: request[2] as string, version: request[3] as string, headers, length: end + 4 };
}

const bad = (why: string): HeadRefusal => ({ status: 400, message: `The request is not valid HTTP/1.1 (${why}).` });

/** Every value of a header, by case-insensitive name. */
export function headerValues(head: Pick<RequestHead, 'headers'>, name: string): string[] {
  const want = name.toLowerCase();
  return head.headers.filter(([n]) => n.toLowerCase() === want).map(([, v]) => v);
}

/** `host:port` (CONNECT's authority-form; `[v6]:port`): the host still unchecked. */
export function splitAuthority(authority: string, defaultPort?: number): { host: string; port: number } | undefined {
  let host: string;
  let portText: string | undefined;
  if (authority.startsWith('[')) {
    const close = authority.indexOf(']');
    if (close < 0) return undefined;
    host = authority.slice(1, close);
    const rest = authority.slice(close + 1);
    if (rest !== '' && !rest.startsWith(':')) return undefined;
    portText = rest === '' ? undefined : rest.slice(1);
  } else {
    const colon = authority.lastIndexOf(':');
    if (colon >= 0 && authority.indexOf(':') !== colon) return undefined;
    host = colon >= 0 ? authority.slice(0, colon) : authority;
    portText = colon >= 0 ? authority.slice(colon + 1) : undefined;
  }
  if (portText === undefined) return defaultPort === undefined ? undefined : { host, port: defaultPort };
  if (!/^[0-9]{1,5}$/.test(portText)) return undefined;
  const port = Number(portText);
  return port >= 1 && port <= 65535 ? { host, port } : undefined;
}

/** An absolute-form `http://authority/path?query` target: its authority and the origin-form target. */
export function parseAbsoluteHttp(target: string): { authority: string; path: string } | { error: string } | undefined {
  const scheme = /^([a-zA-Z][a-zA-Z0-9+.-]*):\/\//.exec(target);
  if (!scheme) return undefined;
  if ((scheme[1] as string).toLowerCase() !== 'http') {
    return { error: 'Only http:// URLs are proxied as plain requests; for https:// and anything else, send CONNECT.' };
  }
  const rest = target.slice(scheme[0].length);
  const end = rest.search(/[/?#]/);
  const authority = end < 0 ? rest : rest.slice(0, end);
  if (authority.includes('@')) return { error: 'The URL carries credentials (user@host); the proxy does not pass them on.' };
  let path = end < 0 ? '/' : rest.slice(end);
  if (path.includes('#')) path = path.slice(0, path.indexOf('#'));
  if (path.startsWith('?')) path = `/${path}`;
  return { authority, path };
}

/** A raw HTTP answer for the proxy's own refusals: plain text, then the connection closes. */
export function textResponse(status: number, message: string, extra: Record<string, string> = {}): Buffer {
  return rawResponse(status, 'text/plain; charset=utf-8', Buffer.from(`${message}\n`, 'utf8'), extra);
}

// ---------------------------------------------------------------------------------------------
// SOCKS5

export const SOCKS = {
  version: 5,
  noAuth: 0x00,
  noAcceptable: 0xff,
  cmdConnect: 0x01,
  reply: { ok: 0x00, failure: 0x01, notAllowed: 0x02, netUnreachable: 0x03, hostUnreachable: 0x04, refused: 0x05, cmd: 0x07, atyp: 0x08 },
} as const;

/** The greeting: version 5, its methods. */
export function parseSocksGreeting(buf: Buffer): { methods: number[]; length: number } | 'incomplete' | 'invalid' {
  if (buf.length < 2) return 'incomplete';
  if (buf[0] !== SOCKS.version || buf[1] === 0) return 'invalid';
  const n = buf[1] as number;
  if (buf.length < 2 + n) return 'incomplete';
  return { methods: [...buf.subarray(2, 2 + n)], length: 2 + n };
}

export type SocksRequest =
  { kind: 'request'; cmd: number; host: string; atyp: 'domain' | 'ipv4' | 'ipv6'; port: number; length: number } | { kind: 'bad-atyp' };

/** The request after the greeting: command, address, port. The host is as sent (a domain still unchecked). */
export function parseSocksRequest(buf: Buffer): SocksRequest | 'incomplete' | 'invalid' {
  if (buf.length < 5) return 'incomplete';
  if (buf[0] !== SOCKS.version || buf[2] !== 0) return 'invalid';
  const cmd = buf[1] as number;
  const atyp = buf[3] as number;
  let host: string;
  let at: number;
  let kind: 'domain' | 'ipv4' | 'ipv6';
  if (atyp === 0x01) {
    if (buf.length < 10) return 'incomplete';
    host = [...buf.subarray(4, 8)].join('.');
    at = 8;
    kind = 'ipv4';
  } else if (atyp === 0x04) {
    if (buf.length < 22) return 'incomplete';
    const groups: string[] = [];
    for (let i = 0; i < 8; i++) groups.push(buf.readUInt16BE(4 + 2 * i).toString(16));
    host = groups.join(':');
    at = 20;
    kind = 'ipv6';
  } else if (atyp === 0x03) {
    const n = buf[4] as number;
    if (buf.length < 5 + n + 2) return 'incomplete';
    host = buf.subarray(5, 5 + n).toString('latin1');
    at = 5 + n;
    kind = 'domain';
  } else {
    return { kind: 'bad-atyp' };
  }
  return { kind: 'request', cmd, host, atyp: kind, port: buf.readUInt16BE(at), length: at + 2 };
}

/** A SOCKS5 reply; the bound address is always 0.0.0.0:0 (the host's own address is none of the container's business). */
export function socksReply(code: number): Buffer {
  return Buffer.from([SOCKS.version, code, 0, 0x01, 0, 0, 0, 0, 0, 0]);
}

// ---------------------------------------------------------------------------------------------
// TLS ClientHello

/**
 * The server name of the ClientHello at the start of `buf` (`sni` undefined when it names none),
 * `incomplete` while it has not all arrived, `invalid` when the bytes are not a ClientHello. The
 * handshake may span several records. `maxBytes` bounds what is read: past it, `invalid`.
 */
export function parseClientHello(buf: Buffer, maxBytes: number): { sni?: string } | 'incomplete' | 'invalid' {
  const parts: Buffer[] = [];
  let have = 0;
  let need = -1;
  for (let off = 0; ;) {
    if (buf.length < off + 5) return buf.length >= maxBytes ? 'invalid' : 'incomplete';
    if (buf[off] !== 0x16 || buf[off + 1] !== 3) return 'invalid';
    const len = buf.readUInt16BE(off + 3);
    if (len === 0 || len > 16384 || off + 5 + len > maxBytes) return 'invalid';
    if (buf.length < off + 5 + len) return 'incomplete';
    parts.push(buf.subarray(off + 5, off + 5 + len));
    have += len;
    off += 5 + len;
    const hs = parts.length === 1 ? (parts[0] as Buffer) : Buffer.concat(parts);
    if (need < 0 && hs.length >= 4) {
      if (hs[0] !== 0x01) return 'invalid';
      need = 4 + ((hs[1] as number) << 16) + ((hs[2] as number) << 8) + (hs[3] as number);
      if (need > maxBytes) return 'invalid';
    }
    if (need >= 0 && have >= need) return helloServerName(hs.subarray(4, need));
  }
}

function helloServerName(body: Buffer): { sni?: string } | 'invalid' {
  // version (2), random (32), session id, cipher suites, compression methods, extensions.
  let p = 34;
  const skip = (lenBytes: 1 | 2): boolean => {
    if (p + lenBytes > body.length) return false;
    const n = lenBytes === 1 ? (body[p] as number) : body.readUInt16BE(p);
    p += lenBytes + n;
    return p <= body.length;
  };
  if (!skip(1) || !skip(2) || !skip(1)) return 'invalid';
  if (p === body.length) return {};
  if (p + 2 > body.length) return 'invalid';
  const extEnd = p + 2 + body.readUInt16BE(p);
  if (extEnd > body.length) return 'invalid';
  p += 2;
  let sni: string | undefined;
  while (p + 4 <= extEnd) {
    const type = body.readUInt16BE(p);
    const len = body.readUInt16BE(p + 2);
    const data = p + 4;
    if (data + len > extEnd) return 'invalid';
    if (type === 0) {
      if (sni !== undefined || len < 2) return 'invalid';
      const listEnd = data + 2 + body.readUInt16BE(data);
      if (listEnd > data + len) return 'invalid';
      for (let q = data + 2; q + 3 <= listEnd;) {
        const nameType = body[q] as number;
        const n = body.readUInt16BE(q + 1);
        if (q + 3 + n > listEnd) return 'invalid';
        if (nameType === 0) {
          // Two host names in one ClientHello: which one the server uses is its own choice.
          if (sni !== undefined) return 'invalid';
          sni = body.subarray(q + 3, q + 3 + n).toString('latin1');
        }
        q += 3 + n;
      }
      if (sni === undefined) return 'invalid';
    }
    p = data + len;
  }
  if (p !== extEnd) return 'invalid';
  return sni === undefined ? {} : { sni };
}

// ---------------------------------------------------------------------------------------------
// SSH identification

const SSH_IDS = ['SSH-2.0-', 'SSH-1.99-'].map((id) => Buffer.from(id, 'latin1'));

/** Whether `buf` starts as a client's SSH identification string does (`SSH-2.0-`, `SSH-1.99-`); `incomplete` while it may. */
export function sshIdentification(buf: Buffer): boolean | 'incomplete' {
  for (const id of SSH_IDS) {
    const n = Math.min(buf.length, id.length);
    if (buf.subarray(0, n).equals(id.subarray(0, n))) return n === id.length ? true : 'incomplete';
  }
  return false;
}

// ---------------------------------------------------------------------------------------------
// Chunked request bodies

/**
 * Finds where a chunked body ends, fed its bytes in order: `feed` returns how many bytes of the
 * chunk belong to the body (all of them until the end, then fewer), or -1 when the framing is
 * wrong. `done` once the last chunk and its trailers have passed. Chunk sizes and lines are bounded.
 */
export class ChunkedEnd {
  private state: 'size' | 'data' | 'data-cr' | 'data-lf' | 'trailer' = 'size';
  private line = '';
  private left = 0;
  done = false;

  feed(chunk: Buffer): number {
    for (let i = 0; i < chunk.length;) {
      if (this.done) return i;
      if (this.state === 'data') {
        const take = Math.min(this.left, chunk.length - i);
        this.left -= take;
        i += take;
        if (this.left === 0) this.state = 'data-cr';
        continue;
      }
      const c = chunk[i++] as number;
      if (this.state === 'data-cr') {
        if (c !== 0x0d) return -1;
        this.state = 'data-lf';
      } else if (this.state === 'data-lf') {
        if (c !== 0x0a) return -1;
        this.state = 'size';
      } else if (c === 0x0a) {
        if (!this.line.endsWith('\r')) return -1;
        const line = this.line.slice(0, -1);
        this.line = '';
        if (this.state === 'trailer') {
          if (line === '') this.done = true;
          continue;
        }
        const size = /^([0-9a-fA-F]{1,12})[ \t]*(?:;.*)?$/.exec(line);
        if (!size) return -1;
        this.left = parseInt(size[1] as string, 16);
        this.state = this.left === 0 ? 'trailer' : 'data';
      } else {
        this.line += String.fromCharCode(c);
        if (this.line.length > 4096) return -1;
      }
    }
    return chunk.length;
  }
}
