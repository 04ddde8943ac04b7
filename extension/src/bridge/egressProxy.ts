/**
 * The host's egress proxy for one container under a policy (issue 30,
 * docs/decisions/0056-egress-through-a-host-proxy.md). The container has no network but its
 * loopback; its forwarder (EGRESS.forwarder) relays each TCP connection made to 127.0.0.1:3128 to
 * this unix socket. Here, on the host, every connection is decided (`decide`: the policy of
 * plan/egress.ts, the user's answer in `ask` mode), its name resolved, the addresses checked
 * (`checkResolved`: no rebinding onto the host) and exactly the address checked is connected to.
 *
 * One socket speaks three client protocols, told apart by the first byte: HTTP CONNECT (what
 * HTTPS_PROXY clients send), plain HTTP in absolute form (HTTP_PROXY for http:// URLs), SOCKS5
 * (ALL_PROXY=socks5h://). After CONNECT and SOCKS5 the client's first bytes are looked at, so an
 * allowed name on a shared front (a CDN) cannot be used to reach another name behind it: to a
 * name they must be a TLS ClientHello naming that name (SNI) or an SSH identification (git over
 * SSH, where no other name can be asked for); to an IP literal a ClientHello may name no host but
 * never another, and any other protocol passes. Then the two sockets are spliced with
 * back-pressure (pipe) and the bytes counted for the log.
 *
 * Raw sockets rather than node:http: CONNECT, absolute-form requests and SOCKS5 share the
 * socket, and the only HTTP this file parses is one request head (bridge/egressWire.ts), bounded
 * in size, header count and time as the Docker endpoint's (engine/dockerEndpoint/server.ts) is. Every
 * socket has an 'error' handler; nothing a client sends can throw out of here.
 */
import { randomBytes } from 'node:crypto';
import { promises as dns } from 'node:dns';
import { chmodSync, lstatSync, renameSync, rmSync, unlinkSync } from 'node:fs';
import { connect, createServer, type Server, type Socket } from 'node:net';
import { networkInterfaces } from 'node:os';
import { basename, dirname, join } from 'node:path';
import { EGRESS_LIMITS } from '../contract/egress';
import {
  checkResolved,
  decideDestination,
  deniedMessage,
  formatDestination,
  formatEgressRule,
  isAlwaysDenied,
  normalizeDestinationHost,
  type EgressDestination,
  type EgressLogEntry,
  type EgressMode,
  type EgressRule,
} from '../plan/egress';
import {
  ChunkedEnd,
  headerValues,
  parseAbsoluteHttp,
  parseClientHello,
  parseRequestHead,
  parseSocksGreeting,
  parseSocksRequest,
  sshIdentification,
  socksReply,
  splitAuthority,
  SOCKS,
  textResponse,
  type RequestHead,
} from './egressWire';

export type EgressVia = EgressLogEntry['via'];
export type EgressDecision = { allow: true; rule?: EgressRule } | { allow: false; reason: string };
export type EgressLimits = { -readonly [K in keyof typeof EGRESS_LIMITS]: number };

export interface EgressProxyOptions {
  /** Listens here (the caller made the directory, 0700); the socket file is made 0600. */
  socketPath: string;
  /** The verdict for one destination; may wait (ask mode) — `signal` aborts when the client goes away. */
  decide(dest: EgressDestination, via: EgressVia, signal: AbortSignal): Promise<EgressDecision>;
  /** The folder's mode now, for the refusal's sentence (deniedMessage); absent: the sentence names no mode. */
  mode?(): EgressMode;
  /** Default: dns.promises.lookup(host, { all: true, verbatim: true }) addresses. */
  lookup?(host: string): Promise<string[]>;
  /** Default: every address of os.networkInterfaces(). */
  hostAddresses?(): string[];
  /**
   * Opens the TCP connection to the checked address (default net.connect). Tests reach a loopback
   * origin by a public-looking address through it, since a name that resolves to loopback is refused.
   */
  dial?(address: string, port: number): Socket;
  /** Called once per connection when its verdict is reached, with the entry the proxy then keeps updating in place (address, bytesUp, bytesDown). */
  onConnection(entry: EgressLogEntry): void;
  /** Called when a connection's entry is final (endedAt set). */
  onEnd(entry: EgressLogEntry): void;
  limits?: Partial<EgressLimits>;
}

export interface EgressProxy {
  /** Stops listening, ends every open connection (and aborts every pending decision), removes the socket file. */
  close(): Promise<void>;
  /** Client connections open now (those over the cap, being refused, not counted). */
  connections(): number;
}

/** How long a connection over the cap may take to send the request that gets the 503; at most REFUSING such at once. */
const REFUSAL_GRACE_MS = 500;
const REFUSING = 16;
/** After a refusal is written, how long the client may take to read it and close. */
const LINGER_MS = 2_000;
const DENIED_HEADER = { 'X-Toolbox-Egress': 'denied' };
/** Request headers that describe our hop with the client, never sent on (plus those Connection names). */
const HOP_BY_HOP = new Set(['connection', 'keep-alive', 'proxy-connection', 'proxy-authorization', 'proxy-authenticate', 'te', 'upgrade']);

const noop = (): void => undefined;

async function defaultLookup(host: string): Promise<string[]> {
  return (await dns.lookup(host, { all: true, verbatim: true })).map((a) => a.address);
}

function defaultHostAddresses(): string[] {
  return Object.values(networkInterfaces()).flatMap((list) => (list ?? []).map((i) => i.address));
}

/** Ends a socket after `data`, reading and dropping what the client still sends so the answer is not reset away. */
function endWith(socket: Socket, data: Buffer): void {
  if (socket.destroyed) return;
  socket.end(data);
  socket.resume();
  const timer = setTimeout(() => socket.destroy(), LINGER_MS).unref();
  socket.once('close', () => clearTimeout(timer));
}

type Read<T> = { value: T; buf: Buffer } | 'timeout' | 'closed';

/**
 * Reads from `socket` until `parse` answers (anything but 'incomplete'), the client ends, or
 * `deadline` (ms since the epoch of performance) passes. The socket is paused again after.
 */
function readUntil<T>(socket: Socket, initial: Buffer, parse: (buf: Buffer) => T | 'incomplete', deadline: number): Promise<Read<T>> {
  const first = initial.length > 0 ? parse(initial) : 'incomplete';
  if (first !== 'incomplete') return Promise.resolve({ value: first, buf: initial });
  return new Promise((resolve) => {
    let buf = initial;
    const finish = (result: Read<T>): void => {
      clearTimeout(timer);
      socket.off('data', onData);
      socket.off('end', onGone);
      socket.off('close', onGone);
      socket.pause();
      resolve(result);
    };
    const onData = (chunk: Buffer): void => {
      buf = buf.length === 0 ? chunk : Buffer.concat([buf, chunk]);
      const value = parse(buf);
      if (value !== 'incomplete') finish({ value, buf });
    };
    const onGone = (): void => finish('closed');
    const timer = setTimeout(() => finish('timeout'), Math.max(0, deadline - performance.now()));
    socket.on('data', onData);
    socket.once('end', onGone);
    socket.once('close', onGone);
    socket.resume();
  });
}

/**
 * While the verdict is awaited: keeps reading the client (so its going away is seen, and `abort`
 * called), holding what it sends, at most `max` bytes before pausing. `take` stops and hands the
 * held bytes back.
 */
function watch(socket: Socket, abort: () => void, max: number): { take(): Buffer } {
  const chunks: Buffer[] = [];
  let size = 0;
  const onData = (chunk: Buffer): void => {
    chunks.push(chunk);
    size += chunk.length;
    if (size > max) socket.pause();
  };
  socket.on('data', onData);
  socket.once('end', abort);
  socket.once('close', abort);
  if (socket.readableEnded || socket.destroyed) abort();
  socket.resume();
  return {
    take() {
      socket.off('data', onData);
      socket.off('end', abort);
      socket.off('close', abort);
      socket.pause();
      return chunks.length === 1 ? (chunks[0] as Buffer) : Buffer.concat(chunks);
    },
  };
}

/** SOCKS5 reply code for a connect error. */
function socksCode(code: string): number {
  if (code === 'ECONNREFUSED') return SOCKS.reply.refused;
  if (code === 'ENETUNREACH') return SOCKS.reply.netUnreachable;
  return SOCKS.reply.hostUnreachable;
}

type Opened =
  | { kind: 'open'; upstream: Socket; entry: EgressLogEntry; held: Buffer }
  | { kind: 'denied'; message: string }
  | { kind: 'failed'; code: string; message: string }
  | { kind: 'gone' };

/** Starts the proxy: listening on `socketPath` (0600) when the promise resolves. */
export async function startEgressProxy(options: EgressProxyOptions): Promise<EgressProxy> {
  const limits: EgressLimits = { ...EGRESS_LIMITS, ...options.limits };
  const lookup = options.lookup ?? defaultLookup;
  const hostAddresses = options.hostAddresses ?? defaultHostAddresses;
  const dial = options.dial ?? ((host: string, port: number) => connect({ host, port, allowHalfOpen: true, noDelay: true }));
  const clients = new Set<Socket>();
  const sockets = new Set<Socket>();
  const pending = new Set<AbortController>();
  let refusing = 0;
  let closing = false;

  const track = (socket: Socket): void => {
    socket.on('error', noop);
    sockets.add(socket);
    socket.once('close', () => sockets.delete(socket));
  };
  const mode = (): EgressMode | undefined => {
    try {
      return options.mode?.();
    } catch {
      return undefined;
    }
  };
  const report = (fn: (entry: EgressLogEntry) => void, entry: EgressLogEntry): void => {
    try {
      fn(entry);
    } catch {
      // A listener's failure is not the connection's.
    }
  };

  /** Entry creation and its single end. */
  const newEntry = (dest: EgressDestination, via: EgressVia): EgressLogEntry => ({
    at: Date.now(),
    host: dest.host,
    port: dest.port,
    via,
    verdict: 'denied',
    reason: '',
    bytesUp: 0,
    bytesDown: 0,
  });
  const ended = new WeakSet<EgressLogEntry>();
  const end = (entry: EgressLogEntry): void => {
    if (ended.has(entry)) return;
    ended.add(entry);
    entry.endedAt = Date.now();
    report(options.onEnd, entry);
  };
  const deny = (entry: EgressLogEntry, reason: string, fixable: boolean): string => {
    const message = deniedMessage(mode(), entry, reason, { fixable });
    entry.verdict = 'denied';
    entry.reason = message;
    return message;
  };

  /**
   * The verdict, the lookup, the resolved check and the connect, for one destination (host
   * already normalised). Reports the entry once the verdict is reached; ends it unless open.
   */
  async function open(client: Socket, dest: EgressDestination, literal: boolean, via: EgressVia, initial: Buffer): Promise<Opened> {
    const entry = newEntry(dest, via);
    const controller = new AbortController();
    pending.add(controller);
    const held = watch(client, () => controller.abort(), limits.maxHeaderBytes + limits.helloBytes);
    const gone = (): Opened => {
      held.take();
      return { kind: 'gone' };
    };
    try {
      let decision: EgressDecision;
      if (isAlwaysDenied(dest.host)) {
        const verdict = decideDestination({ mode: 'allowlist', rules: [] }, dest);
        decision = { allow: false, reason: verdict.kind === 'deny' ? verdict.reason : 'no container may reach it' };
      } else {
        try {
          decision = await untilAborted(options.decide(dest, via, controller.signal), controller.signal);
        } catch {
          decision = { allow: false, reason: 'the policy could not be decided' };
        }
      }
      if (controller.signal.aborted || closing) return gone();
      if (!decision.allow) {
        const message = deny(entry, decision.reason, !isAlwaysDenied(dest.host));
        report(options.onConnection, entry);
        end(entry);
        held.take();
        return { kind: 'denied', message };
      }
      entry.verdict = 'allowed';
      entry.reason = decision.rule ? `${formatEgressRule(decision.rule)} (${decision.rule.source})` : 'allowed';

      const started = performance.now();
      let address: string;
      if (literal) {
        address = dest.host;
      } else {
        let addresses: string[];
        try {
          addresses = await withDeadline(lookup(dest.host), started + limits.connectMs, controller.signal);
        } catch (error) {
          if (controller.signal.aborted || closing) return gone();
          return failed(entry, held, errorCode(error, 'ENOTFOUND'), `could not resolve ${dest.host}`);
        }
        if (addresses.length === 0) return failed(entry, held, 'ENOTFOUND', `could not resolve ${dest.host}`);
        const checked = checkResolved(dest, true, addresses, safeHostAddresses(hostAddresses));
        if ('reason' in checked) {
          const message = deny(entry, checked.reason, false);
          report(options.onConnection, entry);
          end(entry);
          held.take();
          return { kind: 'denied', message };
        }
        address = checked.address;
      }
      entry.address = address;
      report(options.onConnection, entry);
      let upstream: Socket;
      try {
        upstream = await connectTo(address, dest.port, started + limits.connectMs, controller.signal);
      } catch (error) {
        if (controller.signal.aborted || closing) {
          end(entry);
          return gone();
        }
        return failed(entry, held, errorCode(error, 'ECONNABORTED'), `could not connect to ${formatDestination(dest)}`, true);
      }
      track(upstream);
      const rest = held.take();
      return { kind: 'open', upstream, entry, held: initial.length === 0 ? rest : Buffer.concat([initial, rest]) };
    } finally {
      pending.delete(controller);
    }
  }

  function failed(entry: EgressLogEntry, held: { take(): Buffer }, code: string, what: string, reported = false): Opened {
    entry.reason = `${entry.reason}; ${what} (${code})`;
    if (!reported) report(options.onConnection, entry);
    end(entry);
    held.take();
    return { kind: 'failed', code, message: `The egress proxy ${what} (${code}).` };
  }

  function connectTo(address: string, port: number, deadline: number, signal: AbortSignal): Promise<Socket> {
    return new Promise((resolve, reject) => {
      const upstream = dial(address, port);
      const fail = (error: Error): void => {
        clearTimeout(timer);
        signal.removeEventListener('abort', onAbort);
        upstream.destroy();
        reject(error);
      };
      const onAbort = (): void => fail(Object.assign(new Error('aborted'), { code: 'ECONNABORTED' }));
      const timer = setTimeout(
        () => fail(Object.assign(new Error('timed out'), { code: 'ETIMEDOUT' })),
        Math.max(0, deadline - performance.now()),
      );
      signal.addEventListener('abort', onAbort, { once: true });
      upstream.once('error', fail);
      upstream.once('connect', () => {
        clearTimeout(timer);
        signal.removeEventListener('abort', onAbort);
        upstream.off('error', fail);
        resolve(upstream);
      });
    });
  }

  /**
   * The destination's bytes to the client, counted; either side closing closes both, and the
   * entry ends when both have.
   */
  function downstream(client: Socket, upstream: Socket, entry: EgressLogEntry): void {
    let closed = 0;
    const onClose = (): void => {
      closed += 1;
      client.destroy();
      upstream.destroy();
      if (closed === 2) end(entry);
    };
    client.once('close', onClose);
    upstream.once('close', onClose);
    upstream.on('data', (chunk: Buffer) => {
      entry.bytesDown += chunk.length;
    });
    upstream.pipe(client);
  }

  /**
   * Splices an opened connection: the destination's bytes flow to the client at once; the
   * client's first bytes are looked at first. A TLS ClientHello (first byte 0x16) must arrive
   * whole within helloMs and name no other host than `dest`; to a name (`literal` false) it must
   * name it, and anything but a ClientHello must be an SSH identification (helloMs too). To an IP
   * literal anything else is forwarded as it is. The entry ends when both sockets have closed.
   */
  function splice(client: Socket, opened: Extract<Opened, { kind: 'open' }>, dest: EgressDestination, literal: boolean): void {
    const { upstream, entry } = opened;
    downstream(client, upstream, entry);
    const forward = (first: Buffer): void => {
      if (client.destroyed) return;
      if (first.length > 0) {
        entry.bytesUp += first.length;
        upstream.write(first);
      }
      client.on('data', (chunk: Buffer) => {
        entry.bytesUp += chunk.length;
      });
      client.pipe(upstream);
    };
    const cut = (reason: string): void => {
      deny(entry, reason, false);
      client.destroy();
      upstream.destroy();
    };
    const deadline = (): number => performance.now() + limits.helloMs;
    const late = (what: string): string => `${what} did not arrive within ${Math.round(limits.helloMs / 1000)} s`;
    const inspect = (first: Buffer): void => {
      if (first[0] !== 0x16) {
        if (literal) return forward(first);
        // Plain HTTP here could name any host behind the address in its Host header, request by request.
        void readUntil(client, first, sshIdentification, deadline()).then((read) => {
          if (read === 'closed') return void client.destroy();
          if (read === 'timeout') return cut(late('the SSH identification'));
          if (!read.value) return cut('its first bytes are neither a TLS ClientHello naming it (SNI) nor SSH');
          forward(read.buf);
        });
        return;
      }
      void readUntil(client, first, (b) => parseClientHello(b, limits.helloBytes), deadline()).then((read) => {
        if (read === 'closed') return void client.destroy();
        if (read === 'timeout') return cut(late('the TLS ClientHello'));
        if (read.value === 'invalid') return cut('the TLS ClientHello could not be read');
        const sni = read.value.sni;
        if (sni === undefined) {
          // Without SNI the front picks the host (its default, or a later Host header): only an IP literal may omit it.
          if (!literal) return cut('its TLS ClientHello names no host (SNI)');
        } else {
          const named = normalizeDestinationHost(sni);
          if ('error' in named) return cut('TLS names a host that is not a valid name (SNI)');
          // Both normalised: case and a trailing dot are ignored; an IP-literal CONNECT admits only its own literal.
          if (named.host !== dest.host) {
            return cut(`TLS names another host (SNI ${named.host})`);
          }
        }
        forward(read.buf);
      });
    };
    if (opened.held.length > 0) {
      inspect(opened.held);
      return;
    }
    // A client that half-closes before sending anything: the destination is told (pipe would have).
    const onEnd = (): void => {
      client.off('data', onFirst);
      upstream.end();
    };
    const onFirst = (chunk: Buffer): void => {
      client.off('data', onFirst);
      client.off('end', onEnd);
      client.pause();
      inspect(chunk);
    };
    client.on('data', onFirst);
    client.once('end', onEnd);
    client.resume();
  }

  /** The destination a client named, normalised, or the sentence of a 400. */
  function destination(host: string, port: number): { dest: EgressDestination; literal: boolean } | { error: string } {
    if (host.length > limits.maxHostChars) return { error: `The host name is longer than ${limits.maxHostChars} characters.` };
    const d = normalizeDestinationHost(host);
    if ('error' in d) return d;
    return { dest: { host: d.host, port }, literal: d.literal !== undefined };
  }

  async function serveConnect(client: Socket, head: RequestHead, rest: Buffer): Promise<void> {
    const authority = splitAuthority(head.target);
    if (authority === undefined) return endWith(client, textResponse(400, 'CONNECT needs host:port (with a port from 1 to 65535).'));
    const d = destination(authority.host, authority.port);
    if ('error' in d) return endWith(client, textResponse(400, d.error));
    const opened = await open(client, d.dest, d.literal, 'connect', rest);
    if (opened.kind === 'gone') return void client.destroy();
    if (opened.kind === 'denied') return endWith(client, textResponse(403, opened.message, DENIED_HEADER));
    if (opened.kind === 'failed') return endWith(client, textResponse(502, opened.message));
    client.write('HTTP/1.1 200 Connection Established\r\n\r\n');
    splice(client, opened, d.dest, d.literal);
  }

  async function servePlain(client: Socket, head: RequestHead, rest: Buffer): Promise<void> {
    const url = parseAbsoluteHttp(head.target);
    if (url === undefined) {
      return endWith(client, textResponse(400, 'This is an egress proxy: send CONNECT or an absolute URL (http://host/path).'));
    }
    if ('error' in url) return endWith(client, textResponse(400, url.error));
    const authority = splitAuthority(url.authority, 80);
    if (authority === undefined) return endWith(client, textResponse(400, "The URL's host or port cannot be read."));
    const d = destination(authority.host, authority.port);
    if ('error' in d) return endWith(client, textResponse(400, d.error));
    const hosts = headerValues(head, 'host');
    if (hosts.length > 1) return endWith(client, textResponse(400, 'The request has more than one Host header.'));
    if (hosts.length === 1) {
      const named = splitAuthority(hosts[0] as string, 80);
      const h = named === undefined ? undefined : normalizeDestinationHost(named.host);
      if (named === undefined || h === undefined || 'error' in h)
        return endWith(client, textResponse(400, 'The Host header does not name a valid host.'));
      if (h.host !== d.dest.host || named.port !== d.dest.port) {
        const said = formatDestination({ host: h.host, port: named.port });
        return endWith(client, textResponse(400, `The Host header names ${said}, not the URL's ${formatDestination(d.dest)}.`));
      }
    }
    const lengths = headerValues(head, 'content-length');
    const encodings = headerValues(head, 'transfer-encoding');
    if (lengths.length > 1 || (lengths.length === 1 && !/^[0-9]{1,15}$/.test(lengths[0] as string))) {
      return endWith(client, textResponse(400, "The request's Content-Length is not one number."));
    }
    if (encodings.length > 0 && (lengths.length > 0 || encodings.length > 1 || (encodings[0] as string).toLowerCase() !== 'chunked')) {
      return endWith(
        client,
        textResponse(400, "The request's framing is ambiguous (Transfer-Encoding must be exactly chunked, without Content-Length)."),
      );
    }
    const opened = await open(client, d.dest, d.literal, 'http', rest);
    if (opened.kind === 'gone') return void client.destroy();
    if (opened.kind === 'denied') return endWith(client, textResponse(403, opened.message, DENIED_HEADER));
    if (opened.kind === 'failed') return endWith(client, textResponse(502, opened.message));
    const { upstream, entry } = opened;
    downstream(client, upstream, entry);

    const listed = new Set(
      headerValues(head, 'connection').flatMap((v) =>
        v
          .split(',')
          .map((t) => t.trim().toLowerCase())
          .filter((t) => t !== ''),
      ),
    );
    const lines = [`${head.method} ${url.path} ${head.version}`];
    if (hosts.length === 0)
      lines.push(`Host: ${authority.port === 80 ? formatDestination(d.dest).replace(/:80$/, '') : formatDestination(d.dest)}`);
    for (const [name, value] of head.headers) {
      const lower = name.toLowerCase();
      if (!HOP_BY_HOP.has(lower) && !listed.has(lower)) lines.push(`${name}: ${value}`);
    }
    lines.push('Connection: close', '', '');
    const headBytes = Buffer.from(lines.join('\r\n'), 'latin1');
    entry.bytesUp += headBytes.length;
    upstream.write(headBytes);

    // The body, exactly as framed; what the client sends after it is not read (one request per connection).
    const chunked = encodings.length > 0 ? new ChunkedEnd() : undefined;
    let left = chunked ? Infinity : Number(lengths[0] ?? 0);
    const push = (chunk: Buffer): boolean => {
      const n = chunked ? chunked.feed(chunk) : Math.min(left, chunk.length);
      if (n < 0) {
        client.destroy();
        return false;
      }
      left -= chunked ? 0 : n;
      if (n > 0) {
        entry.bytesUp += n;
        if (!upstream.write(n === chunk.length ? chunk : chunk.subarray(0, n))) {
          client.pause();
          upstream.once('drain', () => client.resume());
        }
      }
      return chunked ? !chunked.done : left > 0;
    };
    const held = opened.held;
    if (held.length > 0 && !push(held)) return;
    if (chunked ? chunked.done : left <= 0) return;
    const onData = (chunk: Buffer): void => {
      if (!push(chunk)) client.off('data', onData);
    };
    client.on('data', onData);
    client.resume();
  }

  async function serveSocks(client: Socket, initial: Buffer, deadline: number): Promise<void> {
    const greeting = await readUntil(client, initial, parseSocksGreeting, deadline);
    if (greeting === 'closed' || greeting === 'timeout' || greeting.value === 'invalid') return void client.destroy();
    if (!greeting.value.methods.includes(SOCKS.noAuth)) {
      return endWith(client, Buffer.from([SOCKS.version, SOCKS.noAcceptable]));
    }
    client.write(Buffer.from([SOCKS.version, SOCKS.noAuth]));
    const request = await readUntil(client, greeting.buf.subarray(greeting.value.length), parseSocksRequest, deadline);
    if (request === 'closed' || request === 'timeout' || request.value === 'invalid') return void client.destroy();
    const req = request.value;
    if (req.kind === 'bad-atyp') return endWith(client, socksReply(SOCKS.reply.atyp));
    if (req.cmd !== SOCKS.cmdConnect) return endWith(client, socksReply(SOCKS.reply.cmd));
    if (req.port === 0) return endWith(client, socksReply(SOCKS.reply.failure));
    const d = destination(req.host, req.port);
    if ('error' in d) return endWith(client, socksReply(SOCKS.reply.failure));
    const opened = await open(client, d.dest, d.literal, 'socks', request.buf.subarray(req.length));
    if (opened.kind === 'gone') return void client.destroy();
    if (opened.kind === 'denied') return endWith(client, socksReply(SOCKS.reply.notAllowed));
    if (opened.kind === 'failed') return endWith(client, socksReply(socksCode(opened.code)));
    client.write(socksReply(SOCKS.reply.ok));
    splice(client, opened, d.dest, d.literal);
  }

  async function serve(client: Socket): Promise<void> {
    const deadline = performance.now() + limits.headersMs;
    const first = await readUntil(client, Buffer.alloc(0), (b) => (b.length > 0 ? b[0] : 'incomplete'), deadline);
    if (first === 'closed') return void client.destroy();
    if (first === 'timeout') return endWith(client, textResponse(408, timeoutMessage()));
    if (first.value === SOCKS.version) return serveSocks(client, first.buf, deadline);
    if (first.value === 0x04) return void client.destroy();
    const head = await readUntil(client, first.buf, (b) => parseRequestHead(b, limits), deadline);
    if (head === 'closed') return void client.destroy();
    if (head === 'timeout') return endWith(client, textResponse(408, timeoutMessage()));
    if ('status' in head.value) return endWith(client, textResponse(head.value.status, head.value.message));
    const rest = head.buf.subarray(head.value.length);
    if (head.value.method.toUpperCase() === 'CONNECT') return serveConnect(client, head.value, rest);
    return servePlain(client, head.value, rest);
  }
  const timeoutMessage = (): string => `The request head did not arrive within ${Math.round(limits.headersMs / 1000)} s.`;

  function refuseOverCap(socket: Socket): void {
    if (refusing >= REFUSING) return void socket.destroy();
    refusing += 1;
    const grace = setTimeout(() => socket.destroy(), REFUSAL_GRACE_MS).unref();
    socket.once('close', () => {
      refusing -= 1;
      clearTimeout(grace);
    });
    socket.once('data', (chunk: Buffer) => {
      const message = `Too many open connections through the egress proxy (the limit is ${limits.maxConnections}); close some and retry.`;
      endWith(
        socket,
        chunk[0] === SOCKS.version ? Buffer.from([SOCKS.version, SOCKS.noAcceptable]) : textResponse(503, message, { 'Retry-After': '1' }),
      );
    });
  }

  const server: Server = createServer({ allowHalfOpen: true }, (socket) => {
    track(socket);
    if (closing) return void socket.destroy();
    if (clients.size >= limits.maxConnections) return refuseOverCap(socket);
    clients.add(socket);
    socket.once('close', () => clients.delete(socket));
    serve(socket).catch(() => socket.destroy());
  });
  server.on('error', noop);

  const ino = await bindSocket(server, options.socketPath);
  let closed: Promise<void> | undefined;
  return {
    connections: () => clients.size,
    close() {
      closed ??= new Promise<void>((resolve) => {
        closing = true;
        server.close(() => resolve());
        for (const controller of pending) controller.abort();
        for (const socket of sockets) socket.destroy();
        try {
          const st = lstatSync(options.socketPath, { throwIfNoEntry: false });
          if (st !== undefined && st.isSocket() && st.ino === ino) unlinkSync(options.socketPath);
        } catch {
          // Already gone.
        }
      });
      return closed;
    },
  };
}

function safeHostAddresses(get: () => string[]): string[] {
  try {
    return get();
  } catch {
    return [];
  }
}

function errorCode(error: unknown, fallback: string): string {
  const code = (error as NodeJS.ErrnoException | undefined)?.code;
  return typeof code === 'string' && /^[A-Z0-9_]{1,32}$/.test(code) ? code : fallback;
}

/** `promise`, or a denial as soon as `signal` aborts (a decision still pending then is not waited for). */
function untilAborted(promise: Promise<EgressDecision>, signal: AbortSignal): Promise<EgressDecision> {
  if (signal.aborted) return Promise.resolve({ allow: false, reason: 'the client went away' });
  return new Promise((resolve, reject) => {
    const onAbort = (): void => resolve({ allow: false, reason: 'the client went away' });
    signal.addEventListener('abort', onAbort, { once: true });
    promise.then(
      (value) => {
        signal.removeEventListener('abort', onAbort);
        resolve(value);
      },
      (error: unknown) => {
        signal.removeEventListener('abort', onAbort);
        reject(error instanceof Error ? error : new Error(String(error)));
      },
    );
  });
}

function withDeadline<T>(promise: Promise<T>, deadline: number, signal: AbortSignal): Promise<T> {
  return new Promise((resolve, reject) => {
    const done = (): void => {
      clearTimeout(timer);
      signal.removeEventListener('abort', onAbort);
    };
    const onAbort = (): void => {
      done();
      reject(Object.assign(new Error('aborted'), { code: 'ECONNABORTED' }));
    };
    const timer = setTimeout(
      () => {
        done();
        reject(Object.assign(new Error('timed out'), { code: 'ETIMEDOUT' }));
      },
      Math.max(0, deadline - performance.now()),
    );
    signal.addEventListener('abort', onAbort, { once: true });
    promise.then(
      (value) => {
        done();
        resolve(value);
      },
      (error: unknown) => {
        done();
        reject(error instanceof Error ? error : new Error(String(error)));
      },
    );
  });
}

/**
 * Listens on a fresh name in the socket's directory (the caller's, 0700), makes it 0600 there and
 * renames it into place: a client never finds the path with another mode, and a socket left by
 * an earlier window is replaced in one step (as bridge/hub.ts and engine/dockerEndpoint/socket.ts do).
 */
async function bindSocket(server: Server, socketPath: string): Promise<number> {
  const staging = join(dirname(socketPath), `.${randomBytes(6).toString('hex')}.${basename(socketPath)}`);
  try {
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(staging, () => {
        server.off('error', reject);
        resolve();
      });
    });
    chmodSync(staging, 0o600);
    renameSync(staging, socketPath);
  } catch (error) {
    server.close();
    throw new Error(`The egress proxy could not listen on ${socketPath}: ${(error as Error).message}`, { cause: error });
  } finally {
    rmSync(staging, { force: true });
  }
  return lstatSync(socketPath).ino;
}
