/**
 * The host's egress proxy (issue 30, extension/src/bridge/egressProxy.ts) as a container's
 * forwarder reaches it: a real proxy on a unix socket in a temp dir, real origin servers on
 * loopback (plain HTTP and TLS), the policy of plan/egress.ts as `decide`. Each case asserts what
 * the client gets, what the origin saw and what the log holds.
 */
import assert from 'node:assert/strict';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { createServer as createHttpServer, type IncomingMessage, type Server as HttpServer } from 'node:http';
import { connect, createServer, type AddressInfo, type Server, type Socket } from 'node:net';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { connect as tlsConnect, createServer as createTlsServer, type Server as TlsServer } from 'node:tls';
import { startEgressProxy, type EgressDecision, type EgressProxy, type EgressProxyOptions } from '../../extension/src/bridge/egressProxy';
import {
  decideDestination,
  deniedMessage,
  parseEgressRule,
  type EgressDestination,
  type EgressLogEntry,
  type EgressMode,
  type EgressRule,
} from '../../extension/src/plan/egress';
import { makeTlsFiles } from '../support/tls';
import { readHttpHead } from '../support/httpHead';

/** A public-looking address the tests' `dial` maps to the loopback origin (a name resolving to loopback is refused). */
const FAKE_PUBLIC = '93.184.216.34';

interface Rig {
  socketPath: string;
  proxy: EgressProxy;
  connections: EgressLogEntry[];
  ended: EgressLogEntry[];
  decided: EgressDestination[];
  lookups: string[];
  /** The next entry to end (already ended ones first). */
  nextEnd(): Promise<EgressLogEntry>;
}

let root: string;
const rigs: EgressProxy[] = [];

const rules = (...texts: string[]): EgressRule[] =>
  texts.map((t) => {
    const r = parseEgressRule(t, 'user');
    if ('error' in r) throw new Error(r.error);
    return r;
  });

async function startRig(
  policy: { mode: EgressMode; rules: EgressRule[] },
  extra: Partial<EgressProxyOptions> & { names?: Record<string, string[]>; dialTo?: number } = {},
): Promise<Rig> {
  const dir = mkdtempSync(join(root, 'p-'));
  const socketPath = join(dir, 'egress.sock');
  const connections: EgressLogEntry[] = [];
  const ended: EgressLogEntry[] = [];
  const decided: EgressDestination[] = [];
  const lookups: string[] = [];
  let waiting: Array<(e: EgressLogEntry) => void> = [];
  let taken = 0;
  const proxy = await startEgressProxy({
    socketPath,
    mode: () => policy.mode,
    decide: async (dest): Promise<EgressDecision> => {
      decided.push(dest);
      const v = decideDestination(policy, dest);
      if (v.kind === 'allow') return { allow: true, ...(v.rule ? { rule: v.rule } : {}) };
      return { allow: false, reason: v.kind === 'deny' ? v.reason : 'nobody answered' };
    },
    lookup: async (host) => {
      lookups.push(host);
      const found = extra.names?.[host];
      if (found === undefined) throw Object.assign(new Error(`getaddrinfo ENOTFOUND ${host}`), { code: 'ENOTFOUND' });
      return found;
    },
    hostAddresses: () => ['127.0.0.1', '::1', '192.168.77.5'],
    dial: (address, port) =>
      connect({ host: address === FAKE_PUBLIC ? '127.0.0.1' : address, port: extra.dialTo ?? port, allowHalfOpen: true }),
    onConnection: (e) => void connections.push(e),
    onEnd: (e) => {
      ended.push(e);
      const w = waiting;
      waiting = [];
      for (const f of w) f(e);
    },
    ...extra,
  });
  rigs.push(proxy);
  return {
    socketPath,
    proxy,
    connections,
    ended,
    decided,
    lookups,
    nextEnd: () =>
      taken < ended.length
        ? Promise.resolve(ended[taken++] as EgressLogEntry)
        : new Promise((resolve) => waiting.push((e) => (taken++, resolve(e)))),
  };
}

/** Opens the proxy socket, writes `bytes`, reads until the proxy closes. */
function exchange(socketPath: string, bytes: Buffer | string): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const s = connect(socketPath);
    const chunks: Buffer[] = [];
    s.on('data', (c: Buffer) => chunks.push(c));
    s.on('error', reject);
    s.on('close', () => resolve(Buffer.concat(chunks)));
    s.write(bytes);
  });
}

/** CONNECT through the proxy: the socket once the answer's head arrived, the head, and any bytes after it. */
function connectThrough(socketPath: string, authority: string): Promise<{ socket: Socket; head: string; rest: Buffer }> {
  const s = connect(socketPath);
  const answer = readHttpHead(s, { pause: true });
  s.write(`CONNECT ${authority} HTTP/1.1\r\nHost: ${authority}\r\n\r\n`);
  return answer.then(({ head, rest }) => ({ socket: s, head: head.toString('latin1'), rest }));
}

function readAll(s: Socket, initial: Buffer = Buffer.alloc(0)): Promise<Buffer> {
  return new Promise((resolve) => {
    const chunks: Buffer[] = [initial];
    s.on('data', (c: Buffer) => chunks.push(c));
    s.on('error', () => undefined);
    s.on('close', () => resolve(Buffer.concat(chunks)));
    s.resume();
  });
}

const split = (answer: Buffer): { head: string; body: string } => {
  const end = answer.indexOf('\r\n\r\n');
  return { head: answer.subarray(0, end).toString('latin1'), body: answer.subarray(end + 4).toString('utf8') };
};

/** Waits, turn by turn, until `cond` holds (bounded). */
async function until(cond: () => boolean): Promise<void> {
  for (let i = 0; i < 10_000 && !cond(); i++) await new Promise((r) => setImmediate(r));
  assert.ok(cond(), 'condition never held');
}

function listening<T extends Server | HttpServer | TlsServer>(server: T): Promise<number> {
  return new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve((server.address() as AddressInfo).port)));
}

describe('egress proxy', () => {
  const BIG = Buffer.alloc(300_000, 'x');
  let http: HttpServer;
  let httpPort: number;
  const seen: Array<{ method: string; url: string; headers: IncomingMessage['headers']; body: string }> = [];
  let tls: TlsServer;
  let tlsPort: number;
  let tlsHandshakes = 0;
  let tlsBytes = 0;
  let raw: Server;
  let rawPort: number;
  let rawAccepted = 0;

  before(async () => {
    root = mkdtempSync('/tmp/tbe-');
    http = createHttpServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        seen.push({ method: req.method ?? '', url: req.url ?? '', headers: req.headers, body: Buffer.concat(chunks).toString() });
        if (req.url === '/big') res.end(BIG);
        else res.end(`hello ${req.method} ${req.url}`);
      });
    });
    httpPort = await listening(http);
    const certs = makeTlsFiles(join(root, 'tls'));
    tls = createTlsServer({ key: readFileSync(certs.server.key), cert: readFileSync(certs.server.cert) }, (s) => {
      tlsHandshakes += 1;
      s.on('data', (c: Buffer) => {
        tlsBytes += c.length;
        s.write(Buffer.concat([Buffer.from('echo:'), c]));
      });
      s.on('error', () => undefined);
    });
    tls.on('connection', (s: Socket) => s.on('data', (c: Buffer) => (tlsBytes += c.length)));
    tlsPort = await listening(tls);
    raw = createServer((s) => {
      rawAccepted += 1;
      s.on('error', () => undefined);
      s.end('SSH-2.0-origin\r\n');
    });
    rawPort = await listening(raw);
  });

  after(async () => {
    await Promise.all(rigs.map((p) => p.close()));
    http.close();
    tls.close();
    raw.close();
    rmSync(root, { recursive: true, force: true });
  });

  it('listens on a 0600 socket, lets an allowed CONNECT through and logs the bytes both ways', async () => {
    const rig = await startRig({ mode: 'allowlist', rules: rules(`127.0.0.1:${httpPort}`) });
    assert.equal(statSync(rig.socketPath).mode & 0o777, 0o600);
    const { socket, head, rest } = await connectThrough(rig.socketPath, `127.0.0.1:${httpPort}`);
    assert.equal(head, 'HTTP/1.1 200 Connection Established');
    const request = `GET /big HTTP/1.1\r\nHost: 127.0.0.1:${httpPort}\r\nConnection: close\r\n\r\n`;
    socket.write(request);
    const answer = await readAll(socket, rest);
    assert.ok(answer.includes(BIG), 'the whole body came through');
    const entry = await rig.nextEnd();
    assert.equal(entry.verdict, 'allowed');
    assert.equal(entry.via, 'connect');
    assert.equal(entry.host, '127.0.0.1');
    assert.equal(entry.address, '127.0.0.1');
    assert.equal(entry.reason, `127.0.0.1:${httpPort} (user)`);
    assert.equal(entry.bytesUp, Buffer.byteLength(request));
    assert.equal(entry.bytesDown, answer.length);
    assert.ok(entry.endedAt !== undefined && entry.endedAt >= entry.at);
    assert.equal(rig.connections[0], entry, 'the entry reported at the verdict is the one updated in place');
    assert.deepEqual(rig.lookups, [], 'a literal is not looked up');
  });

  it('forwards the first bytes of a protocol that is not TLS as they are (SSH over CONNECT)', async () => {
    const rig = await startRig({ mode: 'allowlist', rules: rules(`127.0.0.1:${rawPort}`) });
    const { socket, rest } = await connectThrough(rig.socketPath, `127.0.0.1:${rawPort}`);
    socket.write('SSH-2.0-client\r\n');
    const answer = await readAll(socket, rest);
    assert.equal(answer.toString(), 'SSH-2.0-origin\r\n');
    assert.equal((await rig.nextEnd()).verdict, 'allowed');
  });

  it('passes on a close before the first byte, so both sides end and the entry with them', async () => {
    const quiet = createServer((s) => s.on('error', () => undefined).resume());
    const quietPort = await listening(quiet);
    const rig = await startRig({ mode: 'allowlist', rules: rules(`127.0.0.1:${quietPort}`) });
    const { socket } = await connectThrough(rig.socketPath, `127.0.0.1:${quietPort}`);
    socket.removeAllListeners('close');
    socket.destroy();
    const entry = await rig.nextEnd();
    assert.equal(entry.verdict, 'allowed');
    assert.equal(entry.bytesUp, 0);
    await until(() => rig.proxy.connections() === 0);
    quiet.close();
  });

  it('refuses a denied CONNECT with a 403 naming the policy, without looking the name up', async () => {
    const rig = await startRig({ mode: 'allowlist', rules: [] }, { names: { 'example.com': [FAKE_PUBLIC] } });
    const answer = await exchange(rig.socketPath, 'CONNECT Example.COM.:443 HTTP/1.1\r\nHost: example.com:443\r\n\r\n');
    const { head, body } = split(answer);
    const expected = deniedMessage('allowlist', { host: 'example.com', port: 443 }, "not in the folder's allowlist");
    assert.match(head, /^HTTP\/1\.1 403 Forbidden\r\n/);
    assert.match(head, /\r\nContent-Type: text\/plain; charset=utf-8\r\n/);
    assert.match(head, /\r\nX-Toolbox-Egress: denied\r\n/);
    assert.equal(body, `${expected}\n`);
    assert.match(body, /^Toolbox egress policy \(allowlist\) refused example\.com:443: not in the folder's allowlist\./);
    assert.deepEqual(rig.lookups, []);
    const entry = await rig.nextEnd();
    assert.equal(entry.verdict, 'denied');
    assert.equal(entry.reason, expected);
  });

  it('refuses an allowed name that resolves to loopback or to the host itself (rebinding)', async () => {
    const rig = await startRig(
      { mode: 'allowlist', rules: rules('localhost', 'intranet.test') },
      { names: { localhost: ['127.0.0.1', '::1'], 'intranet.test': ['192.168.77.5'] } },
    );
    const before = rawAccepted;
    const loop = split(await exchange(rig.socketPath, `CONNECT localhost:${rawPort} HTTP/1.1\r\n\r\n`));
    assert.match(loop.head, /^HTTP\/1\.1 403 /);
    assert.match(loop.body, /localhost resolves to 127\.0\.0\.1, a loopback address.*DNS rebinding/);
    const own = split(await exchange(rig.socketPath, `CONNECT intranet.test:${rawPort} HTTP/1.1\r\n\r\n`));
    assert.match(own.body, /192\.168\.77\.5, an address of this host/);
    assert.doesNotMatch(own.body, /Allow it from VS Code/, 'no rule can fix rebinding');
    assert.equal(rawAccepted, before, 'the origin was never connected to');
    assert.deepEqual(rig.lookups, ['localhost', 'intranet.test']);
    assert.equal((await rig.nextEnd()).verdict, 'denied');
  });

  it('refuses cloud metadata (169.254.169.254) even with a rule, without asking', async () => {
    const rig = await startRig({ mode: 'ask', rules: rules('169.254.169.254', '[::ffff:169.254.169.254]') });
    for (const target of ['169.254.169.254:80', '[::ffff:a9fe:a9fe]:80']) {
      const { head, body } = split(await exchange(rig.socketPath, `CONNECT ${target} HTTP/1.1\r\n\r\n`));
      assert.match(head, /^HTTP\/1\.1 403 /);
      assert.match(body, /169\.254\.169\.254 is a link-local address/);
    }
    const plain = split(
      await exchange(rig.socketPath, 'GET http://169.254.169.254/latest/meta-data/ HTTP/1.1\r\nHost: 169.254.169.254\r\n\r\n'),
    );
    assert.match(plain.head, /^HTTP\/1\.1 403 /);
    assert.deepEqual(rig.decided, [], 'decide (and so the user) was never asked');
  });

  it('lets TLS through whose ClientHello names no other host', async () => {
    const rig = await startRig({ mode: 'allowlist', rules: rules(`127.0.0.1:${tlsPort}`) });
    const { socket } = await connectThrough(rig.socketPath, `127.0.0.1:${tlsPort}`);
    const secure = tlsConnect({ socket, rejectUnauthorized: false });
    await new Promise<void>((resolve, reject) => secure.once('secureConnect', resolve).once('error', reject));
    secure.write('ping');
    const echoed = await new Promise<string>((resolve) => secure.once('data', (c: Buffer) => resolve(c.toString())));
    assert.equal(echoed, 'echo:ping');
    secure.end();
    const entry = await rig.nextEnd();
    assert.equal(entry.verdict, 'allowed');
    assert.ok(entry.bytesUp > 0 && entry.bytesDown > 0);
  });

  it('cuts a CONNECT whose TLS ClientHello names another host (SNI) and logs it denied', async () => {
    const rig = await startRig({ mode: 'allowlist', rules: rules(`127.0.0.1:${tlsPort}`) });
    const handshakes = tlsHandshakes;
    const bytes = tlsBytes;
    const { socket } = await connectThrough(rig.socketPath, `127.0.0.1:${tlsPort}`);
    const secure = tlsConnect({ socket, servername: 'Evil.Example', rejectUnauthorized: false });
    const outcome = await new Promise<string>((resolve) => {
      secure.once('secureConnect', () => resolve('connected'));
      secure.once('error', (e: NodeJS.ErrnoException) => resolve(e.code ?? e.message));
      secure.once('close', () => resolve('closed'));
    });
    assert.notEqual(outcome, 'connected');
    const entry = await rig.nextEnd();
    assert.equal(entry.verdict, 'denied');
    assert.match(entry.reason, /TLS names another host \(SNI evil\.example\)/);
    assert.equal(entry.bytesUp, 0, 'not a byte of the ClientHello reached the origin');
    assert.equal(tlsHandshakes, handshakes);
    assert.equal(tlsBytes, bytes);
  });

  /** TLS over a CONNECT already answered: 'connected', or how the handshake ended. */
  function handshake(socket: Socket, servername?: string): Promise<{ outcome: string; secure: ReturnType<typeof tlsConnect> }> {
    const secure = tlsConnect({ socket, rejectUnauthorized: false, ...(servername !== undefined ? { servername } : {}) });
    return new Promise((resolve) => {
      secure.once('secureConnect', () => resolve({ outcome: 'connected', secure }));
      secure.once('error', (e: NodeJS.ErrnoException) => resolve({ outcome: e.code ?? e.message, secure }));
      secure.once('close', () => resolve({ outcome: 'closed', secure }));
    });
  }

  it('lets TLS to a name through when its ClientHello names that name (SNI)', async () => {
    const rig = await startRig({ mode: 'allowlist', rules: rules(`origin.test:${tlsPort}`) }, { names: { 'origin.test': [FAKE_PUBLIC] } });
    const { socket, head } = await connectThrough(rig.socketPath, `origin.test:${tlsPort}`);
    assert.equal(head, 'HTTP/1.1 200 Connection Established');
    const { outcome, secure } = await handshake(socket, 'Origin.Test');
    assert.equal(outcome, 'connected');
    secure.write('ping');
    assert.equal(await new Promise<string>((resolve) => secure.once('data', (c: Buffer) => resolve(c.toString()))), 'echo:ping');
    secure.end();
    const entry = await rig.nextEnd();
    assert.equal(entry.verdict, 'allowed');
    assert.equal(entry.address, FAKE_PUBLIC);
  });

  it('cuts a CONNECT to a name whose TLS ClientHello names no host (no SNI) and logs it denied', async () => {
    const rig = await startRig({ mode: 'allowlist', rules: rules(`origin.test:${tlsPort}`) }, { names: { 'origin.test': [FAKE_PUBLIC] } });
    const handshakes = tlsHandshakes;
    const bytes = tlsBytes;
    const { socket, head } = await connectThrough(rig.socketPath, `origin.test:${tlsPort}`);
    assert.equal(head, 'HTTP/1.1 200 Connection Established', 'the name itself is allowed');
    // Node sends no server_name extension when it is given no name (as for an IP address).
    const { outcome } = await handshake(socket);
    assert.notEqual(outcome, 'connected');
    const entry = await rig.nextEnd();
    assert.equal(entry.verdict, 'denied');
    assert.equal(
      entry.reason,
      deniedMessage('allowlist', { host: 'origin.test', port: tlsPort }, 'its TLS ClientHello names no host (SNI)', { fixable: false }),
    );
    assert.equal(entry.bytesUp, 0, 'not a byte of the ClientHello reached the origin');
    assert.equal(tlsHandshakes, handshakes);
    assert.equal(tlsBytes, bytes);
    assert.equal(rig.connections[0], entry, 'the entry reported at the verdict is the one that ends denied');
  });

  it('cuts a CONNECT to a name whose first bytes are neither TLS nor SSH (plain HTTP naming another Host)', async () => {
    const rig = await startRig({ mode: 'allowlist', rules: rules(`origin.test:${httpPort}`) }, { names: { 'origin.test': [FAKE_PUBLIC] } });
    const requests = seen.length;
    const { socket, rest } = await connectThrough(rig.socketPath, `origin.test:${httpPort}`);
    socket.write('GET / HTTP/1.1\r\nHost: evil.example\r\nConnection: close\r\n\r\n');
    assert.equal((await readAll(socket, rest)).length, 0, 'no answer came back');
    const entry = await rig.nextEnd();
    assert.equal(entry.verdict, 'denied');
    assert.match(entry.reason, /refused origin\.test:\d+: its first bytes are neither a TLS ClientHello naming it \(SNI\) nor SSH\./);
    assert.equal(entry.bytesUp, 0);
    assert.equal(seen.length, requests, 'the origin saw no request');
  });

  it('forwards SSH over a CONNECT to a name (git over SSH)', async () => {
    const rig = await startRig({ mode: 'allowlist', rules: rules(`git.test:${rawPort}`) }, { names: { 'git.test': [FAKE_PUBLIC] } });
    const { socket, rest } = await connectThrough(rig.socketPath, `git.test:${rawPort}`);
    socket.removeAllListeners('close');
    socket.write('SSH-');
    const answer = readAll(socket, rest);
    socket.write('2.0-client\r\n');
    assert.equal((await answer).toString(), 'SSH-2.0-origin\r\n');
    const entry = await rig.nextEnd();
    assert.equal(entry.verdict, 'allowed');
    assert.equal(entry.bytesUp, 'SSH-2.0-client\r\n'.length);
  });

  it('answers 431 to a head over the byte or header limits', async () => {
    const rig = await startRig({ mode: 'allowlist', rules: [] });
    const huge = split(await exchange(rig.socketPath, `GET http://a.test/ HTTP/1.1\r\nX-Big: ${'a'.repeat(20_000)}\r\n\r\n`));
    assert.match(huge.head, /^HTTP\/1\.1 431 /);
    assert.match(huge.body, /16384-byte limit/);
    const many = Array.from({ length: 70 }, (_, i) => `X-${i}: v\r\n`).join('');
    const count = split(await exchange(rig.socketPath, `GET http://a.test/ HTTP/1.1\r\n${many}\r\n`));
    assert.match(count.head, /^HTTP\/1\.1 431 /);
    assert.match(count.body, /70 headers, over the limit of 64/);
    assert.deepEqual(rig.decided, []);
  });

  it('answers 408 and closes when the head does not arrive in time (slowloris)', async () => {
    const rig = await startRig({ mode: 'allowlist', rules: [] }, { limits: { headersMs: 150 } });
    const answer = await exchange(rig.socketPath, 'CONNECT example.com:443 HTTP/1.1\r\nX-Slow: ');
    assert.match(split(answer).head, /^HTTP\/1\.1 408 /);
    assert.deepEqual(rig.decided, []);
  });

  it('answers 503 past maxConnections', async () => {
    const rig = await startRig({ mode: 'allowlist', rules: [] }, { limits: { maxConnections: 2 } });
    const held = [connect(rig.socketPath), connect(rig.socketPath)];
    for (const s of held) s.on('error', () => undefined).write('CONNECT a');
    await until(() => rig.proxy.connections() === 2);
    const { head, body } = split(await exchange(rig.socketPath, 'CONNECT example.com:443 HTTP/1.1\r\n\r\n'));
    assert.match(head, /^HTTP\/1\.1 503 /);
    assert.match(body, /limit is 2/);
    for (const s of held) s.destroy();
    await until(() => rig.proxy.connections() === 0);
  });

  it('forwards an absolute-form request in origin form, without the proxy headers, body and all', async () => {
    const rig = await startRig({ mode: 'allowlist', rules: rules(`127.0.0.1:${httpPort}`) });
    const request =
      `POST http://127.0.0.1:${httpPort}/form?x=1 HTTP/1.1\r\nHost: 127.0.0.1:${httpPort}\r\nProxy-Authorization: Basic c2VjcmV0\r\n` +
      `Proxy-Connection: keep-alive\r\nContent-Length: 5\r\n\r\nhelloGET /second HTTP/1.1\r\nHost: elsewhere\r\n\r\n`;
    const answer = await exchange(rig.socketPath, request);
    const { head, body } = split(answer);
    assert.match(head, /^HTTP\/1\.1 200 /);
    assert.equal(body, 'hello POST /form?x=1');
    const got = seen.at(-1)!;
    assert.equal(got.url, '/form?x=1');
    assert.equal(got.body, 'hello');
    assert.equal(got.headers['proxy-authorization'], undefined);
    assert.equal(got.headers['proxy-connection'], undefined);
    assert.equal(got.headers.connection, 'close');
    assert.ok(!seen.some((s) => s.url === '/second'), 'bytes after the body are not a second request');
    const entry = await rig.nextEnd();
    assert.equal(entry.via, 'http');
    assert.equal(entry.verdict, 'allowed');
    assert.equal(entry.bytesDown, answer.length);
  });

  it('forwards a chunked body to its end and nothing after it', async () => {
    const rig = await startRig({ mode: 'allowlist', rules: rules(`127.0.0.1:${httpPort}`) });
    const answer = await exchange(
      rig.socketPath,
      `PUT http://127.0.0.1:${httpPort}/up HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabc\r\n2;x=y\r\nde\r\n0\r\n\r\nGARBAGE`,
    );
    assert.equal(split(answer).body, 'hello PUT /up');
    assert.equal(seen.at(-1)!.body, 'abcde');
  });

  it('refuses a Host header that names another host, origin-form requests and other schemes with 400', async () => {
    const rig = await startRig({ mode: 'allowlist', rules: rules(`127.0.0.1:${httpPort}`) });
    const mismatch = split(await exchange(rig.socketPath, `GET http://127.0.0.1:${httpPort}/ HTTP/1.1\r\nHost: Evil.example\r\n\r\n`));
    assert.match(mismatch.head, /^HTTP\/1\.1 400 /);
    assert.equal(mismatch.body, `The Host header names evil.example:80, not the URL's 127.0.0.1:${httpPort}.\n`);
    const origin = split(await exchange(rig.socketPath, 'GET / HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n'));
    assert.match(origin.head, /^HTTP\/1\.1 400 /);
    assert.match(origin.body, /this is an egress proxy: send CONNECT or an absolute URL/i);
    const https = split(await exchange(rig.socketPath, `GET https://127.0.0.1:${httpPort}/ HTTP/1.1\r\n\r\n`));
    assert.match(https.head, /^HTTP\/1\.1 400 /);
    const invalid = split(await exchange(rig.socketPath, `CONNECT ${'a'.repeat(300)}.com:443 HTTP/1.1\r\n\r\n`));
    assert.match(invalid.head, /^HTTP\/1\.1 400 /);
    assert.match(invalid.body, /longer than 253/);
    assert.deepEqual(rig.decided, []);
  });

  it('answers 502 with a sentence when the destination does not resolve or refuses', async () => {
    const rig = await startRig({ mode: 'allowlist', rules: rules('nowhere.test', '127.0.0.1:1') });
    const nx = split(await exchange(rig.socketPath, 'CONNECT nowhere.test:443 HTTP/1.1\r\n\r\n'));
    assert.match(nx.head, /^HTTP\/1\.1 502 /);
    assert.equal(nx.body, 'The egress proxy could not resolve nowhere.test (ENOTFOUND).\n');
    const refused = split(await exchange(rig.socketPath, 'CONNECT 127.0.0.1:1 HTTP/1.1\r\n\r\n'));
    assert.match(refused.head, /^HTTP\/1\.1 502 /);
    assert.match(refused.body, /could not connect to 127\.0\.0\.1:1 \(ECONNREFUSED\)/);
  });

  describe('SOCKS5', () => {
    /** Greeting, then a CONNECT (or `cmd`) to a domain; the reply code, and the socket after it. */
    function socks(socketPath: string, domain: string, port: number, cmd = 1): Promise<{ code: number; socket: Socket; rest: Buffer }> {
      return new Promise((resolve, reject) => {
        const s = connect(socketPath);
        let buf = Buffer.alloc(0);
        let greeted = false;
        s.on('error', reject);
        s.on('data', (c: Buffer) => {
          buf = Buffer.concat([buf, c]);
          if (!greeted && buf.length >= 2) {
            assert.deepEqual([...buf.subarray(0, 2)], [5, 0]);
            greeted = true;
            buf = buf.subarray(2);
            const name = Buffer.from(domain, 'latin1');
            s.write(Buffer.concat([Buffer.from([5, cmd, 0, 3, name.length]), name, Buffer.from([port >> 8, port & 0xff])]));
          }
          if (greeted && buf.length >= 10) {
            s.removeAllListeners('data');
            s.pause();
            resolve({ code: buf[1] as number, socket: s, rest: buf.subarray(10) });
          }
        });
        s.on('close', () => reject(new Error('closed before a reply')));
        s.write(Buffer.from([5, 1, 0]));
      });
    }

    it('connects to an allowed domain and splices', async () => {
      const rig = await startRig({ mode: 'allowlist', rules: rules(`svc.test:${rawPort}`) }, { names: { 'svc.test': [FAKE_PUBLIC] } });
      const { code, socket, rest } = await socks(rig.socketPath, 'SVC.test', rawPort);
      assert.equal(code, 0);
      socket.removeAllListeners('close');
      socket.write('SSH-2.0-client\r\n');
      assert.equal((await readAll(socket, rest)).toString(), 'SSH-2.0-origin\r\n');
      const entry = await rig.nextEnd();
      assert.equal(entry.via, 'socks');
      assert.equal(entry.host, 'svc.test');
      assert.equal(entry.address, FAKE_PUBLIC);
      assert.equal(entry.bytesDown, 'SSH-2.0-origin\r\n'.length);
    });

    it('answers 0x02 to a denied domain and 0x07 to UDP ASSOCIATE', async () => {
      const rig = await startRig({ mode: 'allowlist', rules: [] }, { names: { 'svc.test': [FAKE_PUBLIC] } });
      const denied = await socks(rig.socketPath, 'svc.test', 443);
      assert.equal(denied.code, 0x02);
      denied.socket.destroy();
      assert.equal((await rig.nextEnd()).verdict, 'denied');
      const udp = await socks(rig.socketPath, 'svc.test', 443, 3);
      assert.equal(udp.code, 0x07);
      udp.socket.destroy();
      assert.equal(rig.decided.length, 1, 'UDP ASSOCIATE never reached the policy');
    });

    it('closes on SOCKS4 and on a greeting without the no-auth method', async () => {
      const rig = await startRig({ mode: 'allowlist', rules: [] });
      assert.equal((await exchange(rig.socketPath, Buffer.from([4, 1, 0, 80, 127, 0, 0, 1, 0]))).length, 0);
      assert.deepEqual([...(await exchange(rig.socketPath, Buffer.from([5, 1, 2])))], [5, 0xff]);
    });
  });

  it('aborts the pending decision when the client goes away while asked', async () => {
    let signal: AbortSignal | undefined;
    let asked!: () => void;
    const wasAsked = new Promise<void>((r) => (asked = r));
    const rig = await startRig(
      { mode: 'ask', rules: [] },
      {
        decide: (_dest, _via, s) => {
          signal = s;
          asked();
          return new Promise<EgressDecision>(() => undefined);
        },
      },
    );
    const client = connect(rig.socketPath);
    client.on('error', () => undefined);
    client.write('CONNECT example.com:443 HTTP/1.1\r\n\r\n');
    await wasAsked;
    assert.equal(signal?.aborted, false);
    const aborted = new Promise<void>((r) => signal!.addEventListener('abort', () => r()));
    client.destroy();
    await aborted;
    assert.equal(signal?.aborted, true);
    await until(() => rig.proxy.connections() === 0);
  });

  it('close() ends open connections and removes the socket file', async () => {
    const dir = join(root, 'closing');
    mkdirSync(dir);
    const rig = await startRig({ mode: 'allowlist', rules: rules(`127.0.0.1:${rawPort}`) });
    // An open tunnel (the origin waits for nothing: it already answered), and a client mid-head.
    const hold = createServer((s) => s.on('error', () => undefined));
    const holdPort = await listening(hold);
    const rig2 = await startRig({ mode: 'allowlist', rules: rules(`127.0.0.1:${holdPort}`) });
    const { socket } = await connectThrough(rig2.socketPath, `127.0.0.1:${holdPort}`);
    const idle = connect(rig2.socketPath).on('error', () => undefined);
    idle.write('CONNECT a');
    await until(() => rig2.proxy.connections() === 2);
    const closedTunnel = new Promise<void>((r) => socket.once('close', () => r()).resume());
    const closedIdle = new Promise<void>((r) => idle.once('close', () => r()));
    await rig2.proxy.close();
    await Promise.all([closedTunnel, closedIdle]);
    assert.equal(existsSync(rig2.socketPath), false);
    const entry = await rig2.nextEnd();
    assert.equal(entry.verdict, 'allowed');
    assert.ok(entry.endedAt !== undefined);
    const refused = await new Promise<string>((resolve) =>
      connect(rig2.socketPath).on('error', (e: NodeJS.ErrnoException) => resolve(e.code ?? '')),
    );
    assert.equal(refused, 'ENOENT');
    assert.equal(existsSync(rig.socketPath), true, 'another proxy is untouched');
    hold.close();
  });
});
