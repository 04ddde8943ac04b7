/**
 * The host side of the session holder against sockets that are not (honest) holders. The socket
 * lives in a container-writable directory, so the container decides what answers there: a link
 * to one of the host's sockets, a server that never greets, one that greets wrong, one that sends
 * a frame of gigabytes. Each is refused, bounded in time and memory, and — before the greeting —
 * never receives a byte from us.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, symlinkSync } from 'node:fs';
import { createServer, type Server, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { SESSION_PROTOCOL } from '../../extension/src/contract/image';
import { HolderUnavailableError, listHeldSessions, socketTransport, startHeldSession } from '../../extension/src/engine/sessions';

const MAGIC = Buffer.from(SESSION_PROTOCOL.magic);

function frame(type: string, payload: Buffer | string = ''): Buffer {
  const body = Buffer.from(payload);
  const head = Buffer.alloc(5);
  head.write(type, 0, 'latin1');
  head.writeUInt32BE(body.length, 1);
  return Buffer.concat([head, body]);
}

interface Fake {
  path: string;
  /** Bytes each connection received from the client. */
  received: Buffer[];
  server: Server;
}

describe('session holder client against hostile sockets', () => {
  let dir: string;
  const servers: Server[] = [];

  before(() => {
    dir = mkdtempSync(join(tmpdir(), 'tbxt-holder-'));
  });
  after(async () => {
    await Promise.all(servers.map((s) => new Promise((r) => s.close(r))));
    rmSync(dir, { recursive: true, force: true });
  });

  async function fake(name: string, onConnection: (sock: Socket) => void): Promise<Fake> {
    const path = join(dir, name);
    const received: Buffer[] = [];
    const server = createServer((sock) => {
      const got: Buffer[] = [];
      received.push(Buffer.alloc(0));
      const index = received.length - 1;
      sock.on('data', (c) => {
        got.push(c);
        received[index] = Buffer.concat(got);
      });
      sock.on('error', () => undefined);
      onConnection(sock);
    });
    servers.push(server);
    await new Promise<void>((r) => server.listen(path, r));
    return { path, received, server };
  }

  const spec = { cmd: ['sh'], env: [], cwd: '/', cols: 80, rows: 24 };

  it('refuses a link in place of the socket, even one to a live socket', async () => {
    const real = await fake('real.sock', (sock) => sock.write(MAGIC));
    const link = join(dir, 'link.sock');
    symlinkSync(real.path, link);
    await assert.rejects(startHeldSession(socketTransport(link), spec), HolderUnavailableError);
    assert.equal(real.received.length, 0, 'nothing connected through the link');
  });

  it('writes nothing to a socket that does not greet, and gives up within the greeting deadline', async () => {
    const silent = await fake('silent.sock', () => undefined);
    const started = Date.now();
    await assert.rejects(listHeldSessions(socketTransport(silent.path)), /no session holder greeting/);
    const took = Date.now() - started;
    assert.ok(took < 5_000, `gave up after ${took} ms`);
    assert.deepEqual(silent.received, [Buffer.alloc(0)], 'not a byte was written to it');
  });

  it('writes nothing to a server that greets with something else (an HTTP server, say)', async () => {
    const http = await fake('http.sock', (sock) => sock.write('HTTP/1.1 400 Bad Request\r\n\r\n'));
    await assert.rejects(listHeldSessions(socketTransport(http.path)), /not a session holder/);
    assert.equal(Buffer.concat(http.received).length, 0);
  });

  it('drops a holder that announces a frame over the limit, without buffering it', async () => {
    const greedy = await fake('greedy.sock', (sock) => {
      sock.write(MAGIC);
      const head = Buffer.alloc(5);
      head.write('I', 0, 'latin1');
      head.writeUInt32BE(0xffffffff, 1);
      sock.write(head);
      // Then keep streaming: the client must have closed by now, not be collecting 4 GiB.
      const junk = Buffer.alloc(1 << 16, 0x41);
      const pump = () => {
        if (!sock.destroyed && sock.write(junk)) setImmediate(pump);
      };
      pump();
    });
    await assert.rejects(listHeldSessions(socketTransport(greedy.path)), /frame of 4294967295 bytes/);
  });

  it('refuses malformed JSON in an info frame', async () => {
    const garbled = await fake('garbled.sock', (sock) => {
      sock.write(MAGIC);
      sock.once('data', () => sock.write(frame('I', '{not json')));
    });
    await assert.rejects(listHeldSessions(socketTransport(garbled.path)), /malformed I frame/);
  });

  it('bounds what it keeps of a session list (ids and commands are truncated)', async () => {
    const long = 'x'.repeat(10_000);
    const chatty = await fake('chatty.sock', (sock) => {
      sock.write(MAGIC);
      sock.once('data', () => {
        const sessions = Array.from({ length: 1000 }, (_, i) => ({ id: `${long}${i}`, pid: i, cmd: [long], started: 0 }));
        sock.write(frame('I', JSON.stringify({ sessions }).slice(0, SESSION_PROTOCOL.maxFrame - 10)));
      });
    });
    // The payload above was cut to stay under the frame limit, so it is not valid JSON: refused.
    await assert.rejects(listHeldSessions(socketTransport(chatty.path)), /malformed/);
    const fits = await fake('fits.sock', (sock) => {
      sock.write(MAGIC);
      sock.once('data', () => {
        const sessions = Array.from({ length: 40 }, (_, i) => ({ id: `${long}${i}`, pid: i, cmd: [long], started: 0 }));
        sock.write(frame('I', JSON.stringify({ sessions })));
      });
    });
    const list = await listHeldSessions(socketTransport(fits.path));
    assert.equal(list.length, 40);
    assert.ok(list.every((s) => s.id.length <= 256 && (s.cmd?.[0]?.length ?? 0) <= 1024));
  });

  it('speaks the protocol to an honest holder: hello first, input as data frames', async () => {
    const honest = await fake('honest.sock', (sock) => {
      sock.write(MAGIC);
      sock.once('data', () => {
        sock.write(frame('I', JSON.stringify({ id: 's1', pid: 42, started: 1 })));
        sock.write(frame('D', 'hello'));
      });
    });
    const session = await startHeldSession(socketTransport(honest.path), spec);
    assert.equal(session.id, 's1');
    assert.equal(session.pid, 42);
    const first = await new Promise<Buffer>((r) => session.stream.once('data', r));
    assert.equal(first.toString(), 'hello');
    session.stream.write('ls\r');
    await new Promise((r) => setTimeout(r, 50));
    session.dispose();
    const sent = Buffer.concat(honest.received);
    assert.equal(sent.subarray(0, 1).toString(), 'H');
    const helloLength = sent.readUInt32BE(1);
    assert.deepEqual(JSON.parse(sent.subarray(5, 5 + helloLength).toString()), { op: 'new', ...spec });
    assert.deepEqual(sent.subarray(5 + helloLength), frame('D', 'ls\r'));
  });
});
