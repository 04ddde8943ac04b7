/**
 * Issue 27, the pure parts of the per-container Docker endpoint: where its socket lives
 * (plan/dockerEndpoint/socket.ts), the request-head checks, header hygiene and hijack answers of
 * engine/dockerEndpoint/wire.ts, and the socket's owner read from a container's user
 * (engine/dockerEndpoint/served.ts); and, byte for byte, what the endpoint writes towards the engine,
 * recorded by a plain socket server in the engine's place (it parses nothing: it only shows what
 * arrives). The endpoint against the real engine is test/engine/docker-endpoint.test.ts.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { connect as http2Connect } from 'node:http2';
import { connect, createServer, type Server } from 'node:net';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { chooseRunDir, maxSocketPathBytes, workspaceRunId } from '../../extension/src/bridge/state';
import { DOCKER_ENDPOINT } from '../../extension/src/contract/dockerEndpoint';
import { startDockerEndpoint, type DockerEndpoint, type GateHead } from '../../extension/src/engine/dockerEndpoint/server';
import { ownerFromUser } from '../../extension/src/engine/dockerEndpoint/served';
import { grpcMessage, grpcRefusalFrame, isGrpcUpgrade } from '../../extension/src/engine/dockerEndpoint/grpc';
import {
  bodyFraming,
  checkRequestHead,
  endToEndHeaders,
  hijackRequestHead,
  isHijacked,
  loggedPath,
  parseResponseHead,
  rawErrorResponse,
  upgradedHead,
} from '../../extension/src/engine/dockerEndpoint/wire';
import {
  endpointRunId,
  maxEndpointSocketBytes,
  planEndpointSocket,
  type EndpointSocketInput,
} from '../../extension/src/plan/dockerEndpoint/socket';
import { readHttpHead } from '../support/httpHead';

const DOCKER = 'unix:///var/run/docker.sock';
const PODMAN = 'unix:///run/podman/podman.sock';
const NAME = 'toolbox-alpha-1a2b3c4d';
const base: EndpointSocketInput = { engine: DOCKER, container: NAME, uid: 1000, platform: 'linux', tmpRoot: '/tmp' };

describe('planEndpointSocket', () => {
  it('is deterministic per engine endpoint and container name', () => {
    const a = planEndpointSocket(base);
    assert.deepEqual(planEndpointSocket(base), a);
    assert.deepEqual(
      planEndpointSocket({ ...base, container: `/${NAME}` }),
      a,
      'the Engine API spelling of the name is the same container',
    );
    assert.notEqual(planEndpointSocket({ ...base, engine: PODMAN }).dir, a.dir, 'the same name on another engine is another endpoint');
    assert.notEqual(planEndpointSocket({ ...base, container: 'toolbox-beta-1a2b3c4d' }).dir, a.dir);
    assert.equal(a.dir, `/tmp/toolbox-1000/${DOCKER_ENDPOINT.dirPrefix}${endpointRunId(DOCKER, NAME)}`);
    assert.equal(a.socketPath, `${a.dir}/${DOCKER_ENDPOINT.socket}`);
  });

  it('sits next to the bridge run dir: same parent, same run id (docs/decisions/0043)', () => {
    for (const xdgRuntimeDir of [undefined, '/run/user/1000']) {
      for (const engine of [DOCKER, PODMAN, 'ssh://me@box']) {
        const bridge = chooseRunDir({ key: NAME, engine, uid: 1000, platform: 'linux', tmpRoot: '/tmp', xdgRuntimeDir });
        const plan = planEndpointSocket({ ...base, engine, xdgRuntimeDir });
        assert.equal(plan.parent, bridge.parent);
        assert.equal(endpointRunId(engine, NAME), workspaceRunId(NAME, engine));
        assert.equal(plan.dir, `${bridge.parent}/docker-${workspaceRunId(NAME, engine)}`);
      }
    }
    for (const platform of ['linux', 'darwin', 'freebsd'] as const)
      assert.equal(maxEndpointSocketBytes(platform), maxSocketPathBytes(platform));
  });

  it('prefers an absolute XDG_RUNTIME_DIR, and falls back to /tmp when it is relative or too long', () => {
    assert.equal(planEndpointSocket({ ...base, xdgRuntimeDir: '/run/user/1000' }).parent, '/run/user/1000/toolbox');
    assert.equal(planEndpointSocket({ ...base, xdgRuntimeDir: 'run/user' }).parent, '/tmp/toolbox-1000');
    const long = `/${'x'.repeat(90)}`;
    assert.equal(planEndpointSocket({ ...base, xdgRuntimeDir: long }).parent, '/tmp/toolbox-1000');
    assert.throws(() => planEndpointSocket({ ...base, tmpRoot: long }), /over the 107-byte unix socket limit/);
    assert.throws(() => planEndpointSocket({ ...base, tmpRoot: `/${'x'.repeat(70)}`, platform: 'darwin' }), /103-byte/);
  });

  it('gives the container the directory, read-only, and DOCKER_HOST inside it', () => {
    const plan = planEndpointSocket(base);
    assert.deepEqual(plan.mount, { source: plan.dir, target: DOCKER_ENDPOINT.containerDir, readonly: true });
    assert.equal(plan.env, `DOCKER_HOST=unix://${DOCKER_ENDPOINT.containerDir}/${DOCKER_ENDPOINT.socket}`);
    assert.equal(DOCKER_ENDPOINT.containerSocket, `${DOCKER_ENDPOINT.containerDir}/${DOCKER_ENDPOINT.socket}`);
  });

  it('refuses an empty engine or name', () => {
    assert.throws(() => planEndpointSocket({ ...base, engine: ' ' }), /empty/);
    assert.throws(() => planEndpointSocket({ ...base, container: '/' }), /empty/);
  });
});

const limits = { maxHeaders: 10, maxTargetBytes: 64 };
const head = (rawHeaders: string[], url = '/v1.41/containers/json') => checkRequestHead({ url, rawHeaders }, limits);

describe('checkRequestHead', () => {
  it('lets an ordinary request through', () => {
    assert.equal(head(['Host', 'docker', 'User-Agent', 'Docker-Client/28.2.2']), undefined);
    assert.equal(head(['Host', 'd', 'Content-Length', '12']), undefined);
    assert.equal(head(['Host', 'd', 'Transfer-Encoding', 'Chunked']), undefined);
  });

  it('refuses ambiguous framing (request smuggling)', () => {
    const cases: Array<[string[], RegExp]> = [
      [['Content-Length', '3', 'Transfer-Encoding', 'chunked'], /both Transfer-Encoding and Content-Length/],
      [['Content-Length', '3', 'content-length', '3'], /more than one Content-Length/],
      [['Content-Length', '+3'], /not a number/],
      [['Content-Length', '3, 3'], /not a number/],
      [['Transfer-Encoding', 'chunked', 'Transfer-Encoding', 'chunked'], /not exactly "chunked"/],
      [['Transfer-Encoding', 'gzip, chunked'], /not exactly "chunked"/],
      [['X-A', 'a\r\nContent-Length: 5'], /control character/],
    ];
    for (const [raw, why] of cases) {
      const r = head(['Host', 'd', ...raw]);
      assert.equal(r?.status, 400, JSON.stringify(raw));
      assert.equal(r?.rule, 'framing');
      assert.match(r?.message ?? '', why);
    }
  });

  it('refuses a target that is not a path, a long target and too many headers', () => {
    assert.equal(head([], 'http://evil/v1.41/containers/json')?.rule, 'request-target');
    assert.equal(head([], '*')?.status, 400);
    assert.equal(head([], `/${'a'.repeat(64)}`)?.status, 414);
    assert.equal(head(Array.from({ length: 22 }, (_, i) => (i % 2 ? 'v' : `X-${i}`)))?.status, 431);
    assert.equal(head(Array.from({ length: 20 }, (_, i) => (i % 2 ? 'v' : `X-${i}`))), undefined, 'exactly the limit is allowed');
  });

  it('reads the framing of a checked head', () => {
    assert.deepEqual(bodyFraming({}), { kind: 'none' });
    assert.deepEqual(bodyFraming({ 'content-length': '0' }), { kind: 'none' });
    assert.deepEqual(bodyFraming({ 'content-length': '42' }), { kind: 'length', bytes: 42 });
    assert.deepEqual(bodyFraming({ 'transfer-encoding': 'chunked' }), { kind: 'chunked' });
  });
});

describe('endToEndHeaders', () => {
  it('drops hop-by-hop headers, those Connection names, and the framing', () => {
    const out = endToEndHeaders({
      host: ['docker'],
      connection: ['keep-alive, X-Secret', 'Upgrade'],
      'x-secret': ['1'],
      'keep-alive': ['timeout=5'],
      'proxy-authorization': ['Basic eA=='],
      'proxy-connection': ['keep-alive'],
      te: ['trailers'],
      trailer: ['X-T'],
      upgrade: ['tcp'],
      expect: ['100-continue'],
      'transfer-encoding': ['chunked'],
      'content-length': ['3'],
      'x-registry-auth': ['e30='],
      'x-many': ['a', 'b'],
    });
    assert.deepEqual(out, { host: 'docker', 'x-registry-auth': 'e30=', 'x-many': ['a', 'b'] });
  });
});

describe('hijack answers', () => {
  it('reads the engine’s answer head only once it is whole', () => {
    assert.equal(parseResponseHead(Buffer.from('HTTP/1.1 101 UPGRADED\r\nContent-Type: application/vnd.docker.raw-stream\r\n')), undefined);
    const head = parseResponseHead(Buffer.from('HTTP/1.1 101 UPGRADED\r\nContent-Type: application/vnd.docker.raw-stream\r\n\r\nout'));
    assert.deepEqual(head, { status: 101, contentType: 'application/vnd.docker.raw-stream', length: 74 });
    assert.equal(parseResponseHead(Buffer.from('SSH-2.0-x\r\n\r\n')), 'invalid');
  });

  it('counts 101, and 200 with a raw or multiplexed stream, as a hijack; nothing else', () => {
    const h = (status: number, contentType: string) => isHijacked({ status, contentType, length: 0 });
    assert.equal(h(101, ''), true);
    assert.equal(h(200, 'application/vnd.docker.raw-stream'), true);
    assert.equal(h(200, 'application/vnd.docker.multiplexed-stream'), true);
    assert.equal(h(200, 'application/json'), false);
    assert.equal(h(404, 'application/vnd.docker.raw-stream'), false);
  });

  it('asks the engine to close after any answer that is not a hijack', () => {
    const text = hijackRequestHead(
      'POST',
      '/v1.41/exec/abc/start',
      { host: 'docker', 'content-type': 'application/json' },
      'tcp',
      27,
    ).toString();
    assert.equal(
      text,
      'POST /v1.41/exec/abc/start HTTP/1.1\r\nhost: docker\r\ncontent-type: application/json\r\ncontent-length: 27\r\n' +
        'connection: Upgrade, close\r\nupgrade: tcp\r\n\r\n',
    );
  });

  it('turns an engine’s 200 hijack into the 101 the client asked for (Podman 4.3)', () => {
    const head = parseResponseHead(Buffer.from('HTTP/1.1 200 OK\r\nContent-Type: application/vnd.docker.raw-stream\r\n\r\n'));
    assert.ok(head !== undefined && head !== 'invalid' && isHijacked(head));
    assert.equal(
      upgradedHead(head, 'tcp').toString(),
      'HTTP/1.1 101 UPGRADED\r\nContent-Type: application/vnd.docker.raw-stream\r\nConnection: Upgrade\r\nUpgrade: tcp\r\n\r\n',
    );
  });

  it('gives a hijack a Host when the gate’s headers have none (Docker answers 400 without one)', () => {
    const text = hijackRequestHead('POST', '/v1.41/containers/c/attach?stream=1', { 'user-agent': 'x' }, 'tcp', 0).toString();
    assert.equal(
      text,
      'POST /v1.41/containers/c/attach?stream=1 HTTP/1.1\r\nhost: localhost\r\nuser-agent: x\r\nconnection: Upgrade, close\r\nupgrade: tcp\r\n\r\n',
    );
    assert.match(hijackRequestHead('POST', '/session', {}, 'h2c', 0, 'engine:2376').toString(), /\r\nhost: engine:2376\r\n/);
    assert.doesNotMatch(hijackRequestHead('POST', '/session', { Host: 'd' }, 'h2c', 0).toString(), /host: localhost/);
  });

  it('writes errors as the Engine API does, which the Docker CLI prints', () => {
    const text = rawErrorResponse(403, 'refused "here"').toString();
    assert.match(text, /^HTTP\/1\.1 403 Forbidden\r\nContent-Type: application\/json\r\nContent-Length: 31\r\nConnection: close\r\n\r\n/);
    assert.deepEqual(JSON.parse(text.split('\r\n\r\n')[1] as string), { message: 'refused "here"' });
  });

  it('logs a path without its query (build arguments can hold secrets)', () => {
    assert.equal(loggedPath('/v1.41/build?buildargs=%7B%22TOKEN%22%3A%22s%22%7D'), '/v1.41/build');
    assert.equal(loggedPath(`/${'a'.repeat(300)}`).length, 200);
  });
});

describe('a refused /grpc in gRPC (engine/dockerEndpoint/grpc.ts)', () => {
  it('is taken for /grpc asking for h2c only', () => {
    assert.equal(isGrpcUpgrade('/grpc', 'h2c'), true);
    assert.equal(isGrpcUpgrade('/v1.47/grpc', 'H2C'), true);
    for (const [url, upgrade] of [
      ['/grpc', 'tcp'],
      ['/grpc', undefined],
      ['/session', 'h2c'],
      ['/v1.47/grpc/x', 'h2c'],
      ['/x/grpc', 'h2c'],
    ] as const)
      assert.equal(isGrpcUpgrade(url, upgrade), false, `${url} ${upgrade}`);
  });
  it('percent-encodes grpc-message as gRPC does: % and every byte outside printable ASCII', () => {
    assert.equal(grpcMessage('Use DOCKER_BUILDKIT=0 (100%) … ok'), 'Use DOCKER_BUILDKIT=0 (100%25) %E2%80%A6 ok');
  });
  it('writes a trailers-only answer as one HEADERS frame that ends its stream', () => {
    const f = grpcRefusalFrame(3, 'no');
    assert.equal(f.readUIntBE(0, 3), f.length - 9);
    assert.deepEqual([f[3], f[4], f.readUInt32BE(5)], [0x1, 0x5, 3]);
    assert.equal(f[9], 0x88, ':status 200 from the static table');
    assert.ok(f.includes(Buffer.from('grpc-status\x017', 'latin1')));
  });
});

describe('ownerFromUser', () => {
  it('reads uid:gid, a lone uid, and nothing from a user name', () => {
    assert.deepEqual(ownerFromUser('1000:1001', 5), { uid: 1000, gid: 1001 });
    assert.deepEqual(ownerFromUser('1000', 5), { uid: 1000, gid: 5 });
    assert.equal(ownerFromUser('toolbox', 5), undefined);
    assert.equal(ownerFromUser('', 5), undefined);
    assert.equal(ownerFromUser(undefined, 5), undefined);
  });
});

/** Whether `text` holds a whole request: its head and the body its framing announces. */
function wholeRequest(text: string): boolean {
  const end = text.indexOf('\r\n\r\n');
  if (end < 0) return false;
  const head = text.slice(0, end).toLowerCase();
  const length = /\r\ncontent-length: *(\d+)/.exec(head);
  if (length) return text.length - end - 4 >= Number(length[1]);
  if (/\r\ntransfer-encoding: *chunked/.test(head)) return text.endsWith('\r\n0\r\n\r\n');
  return true;
}

/** The data of a chunked body. */
function dechunk(body: string): string {
  let out = '';
  for (let rest = body; ;) {
    const eol = rest.indexOf('\r\n');
    const size = parseInt(rest.slice(0, eol), 16);
    if (!(size > 0)) return out;
    out += rest.slice(eol + 2, eol + 2 + size);
    rest = rest.slice(eol + 2 + size + 2);
  }
}

describe('what reaches the engine side', () => {
  const dir = mkdtempSync('/tmp/tbxu-endpoint-');
  const farSocket = join(dir, 'far.sock');
  const received: string[] = [];
  let answer = 'HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 2\r\n\r\n{}';
  let verdict: (target: string) => GateHead | Promise<GateHead> = (target) => ({ kind: 'forward', target, upgrade: false });
  let closeAfterAnswer = false;
  let far: Server;
  let endpoint: DockerEndpoint;

  before(async () => {
    far = createServer((conn) => {
      let text = '';
      conn.on('data', (d: Buffer) => {
        text += d.toString('latin1');
        if (!wholeRequest(text)) return;
        received.push(text);
        text = '';
        conn.write(answer);
        // An engine that hijacked without an upgrade ends its raw stream by closing.
        if (closeAfterAnswer) conn.end();
      });
    });
    await new Promise<void>((r) => far.listen(farSocket, r));
    endpoint = await startDockerEndpoint({
      socketPath: join(dir, 'ep', 'docker.sock'),
      upstream: { socketPath: farSocket },
      gate: { head: async (req) => verdict(req.target) },
      log: () => undefined,
    });
  });

  after(async () => {
    await endpoint.close();
    far.close();
    rmSync(dir, { recursive: true, force: true });
  });

  /** Writes `request` to the endpoint and resolves with the first whole answer head (and what followed). */
  function ask(request: string, opts: { untilStatus?: number } = {}): Promise<string> {
    return new Promise((resolve, reject) => {
      const socket = connect(endpoint.socketPath);
      let text = '';
      socket.on('data', (d: Buffer) => {
        text += d.toString('latin1');
        const status = Number(/^HTTP\/1\.1 (\d{3})/.exec(text)?.[1]);
        if (text.includes('\r\n\r\n') && (opts.untilStatus === undefined || status === opts.untilStatus)) {
          socket.destroy();
          resolve(text);
        }
      });
      socket.on('error', reject);
      socket.on('close', () => reject(new Error(`closed after ${JSON.stringify(text)}`)));
      socket.write(request);
    });
  }
  const lastHead = () => (received[received.length - 1] ?? '').split('\r\n\r\n')[0]!.toLowerCase();

  it('drops hop-by-hop headers and those the client’s Connection names', async () => {
    const reply = await ask(
      'GET /v1.41/containers/json HTTP/1.1\r\nHost: docker\r\nConnection: keep-alive, X-Secret\r\nX-Secret: s\r\n' +
        'Keep-Alive: timeout=99\r\nProxy-Authorization: Basic eA==\r\nTE: trailers\r\nX-Registry-Auth: e30=\r\n\r\n',
    );
    assert.match(reply, /^HTTP\/1\.1 200/);
    const head = lastHead();
    assert.match(head, /^get \/v1\.41\/containers\/json http\/1\.1\r\n/);
    assert.match(head, /\r\nhost: docker/);
    assert.match(head, /\r\nx-registry-auth: e30=/);
    for (const gone of ['x-secret', 'timeout=99', 'proxy-authorization', '\r\nte:']) assert.ok(!head.includes(gone), gone);
  });

  it('sends only the gate’s headers and target when the gate names them', async () => {
    verdict = () => ({ kind: 'forward', target: '/v1.41/containers/json?filters=%7B%7D', upgrade: false, headers: { 'x-only': 'yes' } });
    await ask('GET /v1.41/containers/json?all=1 HTTP/1.1\r\nHost: docker\r\nUser-Agent: ua\r\nX-Registry-Auth: e30=\r\n\r\n');
    const head = lastHead();
    assert.match(head, /^get \/v1\.41\/containers\/json\?filters=%7b%7d http\/1\.1\r\n/);
    assert.match(head, /\r\nx-only: yes/);
    assert.ok(!head.includes('user-agent') && !head.includes('x-registry-auth'));
  });

  it('sends a body the gate rewrote with its own length, and a chunked body chunked', async () => {
    const rewritten = '{"Image":"x","Labels":{"a":"b"}}';
    verdict = (target) => ({
      kind: 'forward',
      target,
      upgrade: false,
      body: { maxBytes: 1024, check: async () => ({ kind: 'forward', body: Buffer.from(rewritten) }) },
    });
    await ask(
      'POST /v1.41/containers/create HTTP/1.1\r\nHost: d\r\nContent-Type: application/json\r\nContent-Length: 13\r\n\r\n{"Image":"x"}',
    );
    const last = received[received.length - 1] ?? '';
    assert.match(last.toLowerCase(), new RegExp(`\\r\\ncontent-length: ${rewritten.length}\\r\\n`));
    assert.ok(last.endsWith(`\r\n\r\n${rewritten}`));
    verdict = (target) => ({ kind: 'forward', target, upgrade: false });
    await ask('POST /v1.41/build HTTP/1.1\r\nHost: d\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabc\r\n2\r\nde\r\n0\r\n\r\n');
    const build = received[received.length - 1] ?? '';
    assert.match(build.toLowerCase(), /\r\ntransfer-encoding: chunked\r\n/);
    assert.ok(!/\r\ncontent-length/i.test(build));
    assert.equal(dechunk(build.slice(build.indexOf('\r\n\r\n') + 4)), 'abcde');
  });

  it('says 100 Continue only once the gate let the request through, and never forwards Expect', async () => {
    let released = 0;
    verdict = async (target) => {
      await new Promise((r) => setTimeout(r, 200));
      released = performance.now();
      return { kind: 'forward', target, upgrade: false };
    };
    const t0 = performance.now();
    let continued = 0;
    const reply = await new Promise<string>((resolve, reject) => {
      const socket = connect(endpoint.socketPath);
      let text = '';
      socket.on('data', (d: Buffer) => {
        text += d.toString('latin1');
        if (continued === 0 && text.startsWith('HTTP/1.1 100 Continue\r\n\r\n')) {
          continued = performance.now();
          socket.write('{}');
        }
        if (/\r\n\r\nHTTP\/1\.1 200 OK\r\n[^]*\r\n\r\n\{\}$/.test(text)) {
          socket.destroy();
          resolve(text);
        }
      });
      socket.on('error', reject);
      socket.write('POST /v1.41/containers/x/start HTTP/1.1\r\nHost: d\r\nExpect: 100-continue\r\nContent-Length: 2\r\n\r\n');
    });
    assert.match(reply, /^HTTP\/1\.1 100 Continue/);
    assert.ok(released > t0 + 150 && continued >= released, 'the gate answered first');
    assert.ok(!lastHead().includes('expect'), lastHead());
    assert.ok(received[received.length - 1]?.endsWith('\r\n\r\n{}'));
    verdict = (target) => ({ kind: 'forward', target, upgrade: false });
  });

  it('sends a hijack asked without upgrade headers as an ordinary request, and relays the raw stream until the engine closes (dockerode’s exec start)', async () => {
    const checked = '{"Detach":false,"Tty":false}';
    verdict = (target) => ({
      kind: 'forward',
      target,
      upgrade: true,
      headers: { 'content-type': 'application/json' },
      body: { maxBytes: 1024, check: async () => ({ kind: 'forward', body: Buffer.from(checked) }) },
    });
    const frame = '\x01\x00\x00\x00\x00\x00\x00\x03out';
    answer = `HTTP/1.1 200 OK\r\nContent-Type: application/vnd.docker.raw-stream\r\n\r\n${frame}`;
    closeAfterAnswer = true;
    try {
      const sent = '{"stdin":true,"Detach":false,"Tty":false}';
      const reply = await new Promise<string>((resolve, reject) => {
        const socket = connect(endpoint.socketPath);
        let text = '';
        socket.on('data', (d: Buffer) => {
          text += d.toString('latin1');
          // The whole relayed body: a chunked one ends with its last chunk.
          if (text.endsWith('\r\n0\r\n\r\n')) {
            socket.destroy();
            resolve(text);
          }
        });
        socket.on('error', reject);
        socket.on('close', () => resolve(text));
        socket.write(
          `POST /v1.41/exec/e1/start HTTP/1.1\r\nHost: d\r\nContent-Type: application/json\r\nContent-Length: ${sent.length}\r\n\r\n${sent}`,
        );
      });
      assert.match(reply, /^HTTP\/1\.1 200 OK\r\n/);
      assert.match(reply.toLowerCase(), /\r\ncontent-type: application\/vnd\.docker\.raw-stream\r\n/);
      assert.equal(dechunk(reply.slice(reply.indexOf('\r\n\r\n') + 4)), frame, 'the stream came back whole');
      const last = received[received.length - 1] ?? '';
      assert.match(last, /^POST \/v1\.41\/exec\/e1\/start HTTP\/1\.1\r\n/);
      assert.ok(!/\r\n(connection: upgrade|upgrade:)/i.test(last), 'no upgrade asked of the engine');
      assert.ok(last.endsWith(`\r\n\r\n${checked}`), 'the gate’s body, not the client’s');
    } finally {
      closeAfterAnswer = false;
      answer = 'HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 2\r\n\r\n{}';
      verdict = (target) => ({ kind: 'forward', target, upgrade: false });
    }
  });

  it('answers a refused /grpc upgrade in gRPC, which buildx shows (PERMISSION_DENIED and the sentence), and sends the engine nothing', async () => {
    const before = received.length;
    verdict = () => ({
      kind: 'refuse',
      status: 403,
      rule: 'buildkit-grpc',
      message: 'No BuildKit API here … use DOCKER_BUILDKIT=0 (100%)',
    });
    const socket = connect(endpoint.socketPath);
    const answered = readHttpHead(socket, { pause: true });
    socket.write('POST /v1.47/grpc HTTP/1.1\r\nHost: d\r\nConnection: Upgrade\r\nUpgrade: h2c\r\n\r\n');
    const { head: upgraded, rest } = await answered;
    socket.unshift(rest);
    assert.match(upgraded.toString('latin1'), /^HTTP\/1\.1 101 /);
    // Node's own HTTP/2 client over the upgraded connection, as grpc-go is over buildx's.
    const h2 = http2Connect('http://d', { createConnection: () => socket });
    const answers = await Promise.all(
      ['/moby.buildkit.v1.Control/ListWorkers', '/moby.buildkit.v1.Control/Solve'].map(
        (path) =>
          new Promise<Record<string, unknown>>((resolve, reject) => {
            const stream = h2.request({ ':method': 'POST', ':path': path, 'content-type': 'application/grpc', te: 'trailers' });
            stream.on('response', (headers) => resolve(headers as Record<string, unknown>));
            stream.on('error', reject);
            stream.end(Buffer.from([0, 0, 0, 0, 0]));
          }),
      ),
    );
    h2.close();
    for (const headers of answers) {
      assert.equal(headers[':status'], 200);
      assert.equal(headers['content-type'], 'application/grpc');
      assert.equal(headers['grpc-status'], '7');
      assert.equal(decodeURIComponent(String(headers['grpc-message'])), 'No BuildKit API here … use DOCKER_BUILDKIT=0 (100%)');
    }
    assert.equal(received.length, before, 'nothing reached the engine');
    // Without the upgrade to h2c it is an ordinary refusal.
    assert.match(await ask('POST /v1.47/grpc HTTP/1.1\r\nHost: d\r\nContent-Length: 0\r\n\r\n'), /^HTTP\/1\.1 403/);
    assert.equal(received.length, before, 'nothing reached the engine');
    verdict = (target) => ({ kind: 'forward', target, upgrade: false });
  });

  it('does not pass on an answer the gate must rewrite but cannot read', async () => {
    answer = 'HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nContent-Length: 2\r\n\r\nhi';
    verdict = (target) => ({ kind: 'forward', target, upgrade: false, response: { maxBytes: 1024, rewrite: (_s, b) => b } });
    const reply = await ask('GET /v1.41/info HTTP/1.1\r\nHost: d\r\n\r\n');
    assert.match(reply, /^HTTP\/1\.1 502/);
    answer = `HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 20\r\n\r\n{"DockerRootDir":""}`;
    verdict = (target) => ({ kind: 'forward', target, upgrade: false, response: { maxBytes: 8, rewrite: (_s, b) => b } });
    assert.match(await ask('GET /v1.41/info HTTP/1.1\r\nHost: d\r\n\r\n'), /^HTTP\/1\.1 502/);
  });
});
