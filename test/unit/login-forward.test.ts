/**
 * engine/loginForward.ts (issue 29): the host side of a login callback forward, with a stand-in
 * relay that connects to a loopback server of the test's own (the real relay, an exec into a
 * container, is in test/engine/login-forward.test.ts). Bytes pass untouched; the forward listens on
 * 127.0.0.1 only, closes once an answered connection is over and nothing is open, when its time
 * is up, at the connection cap; a taken port is refused in words.
 */
import assert from 'node:assert/strict';
import { connect, createServer, type Server, type Socket } from 'node:net';
import { networkInterfaces } from 'node:os';
import { after, before, describe, it } from 'node:test';
import { LoginForward, LoginPortError } from '../../extension/src/engine/loginForward';
import { freePort } from '../support/ports';

/** A loopback server standing in for the login CLI in the container: `answer` decides what it does with a connection. */
async function standIn(answer: (socket: Socket) => void): Promise<{ server: Server; port: number }> {
  const server = createServer(answer);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { server, port: (server.address() as { port: number }).port };
}

/** One HTTP/1.0-style exchange through the forward: sends `request`, returns every byte until the far side closes. */
function exchange(port: number, request: Buffer): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    const s = connect(port, '127.0.0.1', () => s.write(request));
    s.on('data', (c: Buffer) => chunks.push(c));
    s.on('error', reject);
    s.on('close', () => resolve(Buffer.concat(chunks)));
  });
}

const relayTo = (port: number) => () =>
  new Promise<Socket>((resolve, reject) => {
    const s = connect(port, '127.0.0.1', () => resolve(s));
    s.once('error', reject);
  });

describe('LoginForward', () => {
  let echo: { server: Server; port: number };
  before(async () => {
    // Answers every request with "got: " and the bytes it read, then closes (as a callback server does).
    echo = await standIn((socket) => {
      socket.once('data', (chunk: Buffer) => socket.end(Buffer.concat([Buffer.from('got: '), chunk])));
    });
  });
  after(() => echo.server.close());

  it('relays bytes untouched both ways, on 127.0.0.1 only, and closes once the answered callback is over', async () => {
    const port = await freePort();
    const ends: string[] = [];
    const forward = await LoginForward.start({
      port,
      container: 'tbxt-c',
      relay: relayTo(echo.port),
      limits: { idleAfterAnswerMs: 200 },
      onClose: (end) => ends.push(end),
    });
    const binary = Buffer.from(Array.from({ length: 256 }, (_, i) => i));
    const request = Buffer.concat([Buffer.from('GET /auth/callback?code=x&state=y HTTP/1.0\r\n\r\n'), binary]);
    const reply = await exchange(port, request);
    assert.deepEqual(reply, Buffer.concat([Buffer.from('got: '), request]));
    assert.equal(forward.isOpen, true, 'still open right after the callback (the page it redirects to may follow)');
    const started = Date.now();
    assert.equal(await forward.closed, 'answered');
    assert.ok(Date.now() - started >= 150, 'closed after the idle time, not at once');
    assert.deepEqual(ends, ['answered']);
    assert.deepEqual(forward.counts, { accepted: 1, answered: 1, open: 0 });
    // Nothing listens there any more.
    await assert.rejects(exchange(port, Buffer.from('x')).then((b) => (b.length === 0 ? Promise.reject(new Error('closed')) : b)));
  });

  it('a second connection before the idle time keeps it open (the redirect to the success page)', async () => {
    const port = await freePort();
    const forward = await LoginForward.start({ port, container: 'c', relay: relayTo(echo.port), limits: { idleAfterAnswerMs: 400 } });
    await exchange(port, Buffer.from('GET /auth/callback HTTP/1.0\r\n\r\n'));
    await new Promise((r) => setTimeout(r, 150));
    const second = await exchange(port, Buffer.from('GET /success HTTP/1.0\r\n\r\n'));
    assert.match(second.toString(), /^got: GET \/success/);
    assert.equal(await forward.closed, 'answered');
    assert.equal(forward.counts.answered, 2);
  });

  it('listens on 127.0.0.1, not on every interface', async (t) => {
    const outside = Object.values(networkInterfaces())
      .flat()
      .find((i) => i !== undefined && i.family === 'IPv4' && !i.internal)?.address;
    if (outside === undefined) {
      t.skip('this machine has no non-loopback IPv4 address to try');
      return;
    }
    const port = await freePort();
    const forward = await LoginForward.start({ port, container: 'c', relay: relayTo(echo.port) });
    try {
      assert.match((await exchange(port, Buffer.from('ping'))).toString(), /^got: ping/);
      const reached = await new Promise<boolean>((resolve) => {
        const s = connect(port, outside, () => {
          s.destroy();
          resolve(true);
        });
        s.once('error', () => resolve(false));
      });
      assert.equal(reached, false, `port ${port} answered on ${outside}`);
    } finally {
      await forward.close();
    }
  });

  it('refuses a port another program holds, in words naming the port and the container', async () => {
    const held = await standIn(() => undefined);
    try {
      await assert.rejects(
        LoginForward.start({ port: held.port, container: 'tbxt-box', relay: relayTo(echo.port) }),
        (err: unknown) =>
          err instanceof LoginPortError &&
          err.code === 'EADDRINUSE' &&
          err.message ===
            `Port ${held.port} on this host is already in use by another program, so the login callback cannot reach tbxt-box.`,
      );
    } finally {
      held.server.close();
    }
  });

  it('closes when its time is up, even with nothing answered', async () => {
    const port = await freePort();
    const forward = await LoginForward.start({ port, container: 'c', relay: relayTo(echo.port), limits: { lifetimeMs: 150 } });
    assert.equal(await forward.closed, 'timed-out');
  });

  it('renew() starts the time over', async () => {
    const port = await freePort();
    const forward = await LoginForward.start({ port, container: 'c', relay: relayTo(echo.port), limits: { lifetimeMs: 300 } });
    const first = forward.closesAt;
    await new Promise((r) => setTimeout(r, 200));
    forward.renew();
    assert.ok(forward.closesAt >= first + 150);
    const started = Date.now();
    assert.equal(await forward.closed, 'timed-out');
    assert.ok(Date.now() - started >= 200, 'the renewed time, not the first');
  });

  it('a relay that cannot reach the container ends the connection and counts no answer', async () => {
    const port = await freePort();
    const dead = await freePort();
    const forward = await LoginForward.start({ port, container: 'c', relay: relayTo(dead), limits: { idleAfterAnswerMs: 50 } });
    try {
      // Closed or reset, with nothing from the container.
      const reply = await exchange(port, Buffer.from('GET / HTTP/1.0\r\n\r\n')).catch((err: NodeJS.ErrnoException) => {
        assert.equal(err.code, 'ECONNRESET');
        return Buffer.alloc(0);
      });
      assert.equal(reply.length, 0);
      assert.deepEqual(forward.counts, { accepted: 1, answered: 0, open: 0 });
      await new Promise((r) => setTimeout(r, 150));
      assert.equal(forward.isOpen, true, 'nothing answered: it waits for the login');
    } finally {
      await forward.close();
    }
  });

  it('holds at most maxConcurrent connections at once and closes after maxConnections', async () => {
    const held: Socket[] = [];
    const silent = await standIn((s) => held.push(s));
    const port = await freePort();
    const forward = await LoginForward.start({
      port,
      container: 'c',
      relay: relayTo(silent.port),
      limits: { maxConcurrent: 2, maxConnections: 3, idleAfterAnswerMs: 10_000 },
    });
    try {
      const open = (): Promise<Socket> =>
        new Promise((resolve) => {
          const s = connect(port, '127.0.0.1', () => resolve(s));
          s.on('error', () => undefined);
        });
      const a = await open();
      const b = await open();
      const c = await open();
      // The third is closed at once, without a relay.
      await new Promise<void>((resolve) => c.once('close', () => resolve()));
      assert.equal(forward.counts.accepted, 2);
      a.destroy();
      await new Promise((r) => setTimeout(r, 50));
      const d = await open();
      assert.equal(forward.counts.accepted, 3);
      b.destroy();
      d.destroy();
      assert.equal(await forward.closed, 'connections');
    } finally {
      for (const s of held) s.destroy();
      silent.server.close();
    }
  });

  it('stop closes the open connections', async () => {
    const held: Socket[] = [];
    const silent = await standIn((s) => held.push(s));
    const port = await freePort();
    const forward = await LoginForward.start({ port, container: 'c', relay: relayTo(silent.port) });
    const s = connect(port, '127.0.0.1');
    s.on('error', () => undefined);
    await new Promise<void>((r) => s.once('connect', () => r()));
    const closed = new Promise<void>((r) => s.once('close', () => r()));
    await forward.close('stopped');
    await closed;
    assert.equal(await forward.closed, 'stopped');
    for (const h of held) h.destroy();
    silent.server.close();
  });
});
