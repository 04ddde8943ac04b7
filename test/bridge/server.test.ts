import assert from 'node:assert/strict';
import { existsSync, lstatSync, mkdirSync, readFileSync, readdirSync, rmSync, statSync } from 'node:fs';
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { createServer, type Server } from 'node:net';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { BridgeHub, RATE_LIMITS, takeoverLock } from '../../extension/src/bridge/hub';
import { TOKEN_BYTES } from '../../extension/src/contract/shims';
import { workspaceStateDir } from '../../extension/src/bridge/state';
import { call, makeTempRoot, recorder, rigForSuite, startRig, tcpTarget, unixTarget, type Rig, type Target } from './support';

const ok = (url = 'http://a.example/'): { url: string } => ({ url });

/**
 * Resolves when the hub logs that it took over a bridge another window served; rejects after 10 s.
 * The deadline also keeps the event loop alive: the hub's watch and interval do not.
 */
function takeoverNotice(rec: ReturnType<typeof recorder>): { promise: Promise<void> } {
  let resolve!: () => void;
  let reject!: (error: Error) => void;
  const promise = new Promise<void>((res, rej) => ((resolve = res), (reject = rej)));
  const deadline = setTimeout(
    () => reject(new Error(`no takeover within 10 s; the hub logged: ${JSON.stringify(rec.events.filter((e) => 'message' in e))}`)),
    10_000,
  );
  void promise.then(
    () => clearTimeout(deadline),
    () => undefined,
  );
  const log = rec.log!;
  rec.log = (event) => {
    log(event);
    if ('message' in event && /is gone; this window serves it now/.test(event.message)) resolve();
  };
  return { promise };
}

describe('bridge server: transports, files and the gate', () => {
  let rig: Rig;
  rigForSuite((started) => (rig = started));

  it('writes a 0600 token of 32 random bytes in hex plus a newline, a 0644 port file and a 0600 socket in a 0700 run dir', () => {
    const tokenFile = join(rig.bridge.stateDir, 'token');
    assert.match(readFileSync(tokenFile, 'utf8'), new RegExp(`^[0-9a-f]{${TOKEN_BYTES * 2}}\\n$`));
    assert.equal(statSync(tokenFile).mode & 0o777, 0o600);
    const portFile = join(rig.bridge.stateDir, 'port');
    assert.equal(readFileSync(portFile, 'utf8'), `${rig.hub.port}\n`);
    assert.equal(statSync(portFile).mode & 0o777, 0o644);
    assert.ok(lstatSync(rig.bridge.socketPath).isSocket());
    assert.equal(lstatSync(rig.bridge.socketPath).mode & 0o777, 0o600);
    assert.equal(statSync(rig.bridge.runDir).mode & 0o777, 0o700);
    assert.ok(statSync(join(rig.bridge.stateDir, 'run')).isDirectory(), 'the run/ mount point exists in the read-only state dir');
    assert.equal(rig.bridge.stateDir, join(rig.home, '.toolbox', 'toolbox', 'vscode', rig.registration.key));
    assert.match(rig.bridge.runDir, new RegExp(`^${rig.tmpRoot}/toolbox-\\d+/[0-9a-f]{8}$`));
  });

  for (const [name, target] of [
    ['unix socket', (r: Rig): Target => unixTarget(r)],
    ['loopback TCP', (r: Rig): Target => tcpTarget(r)],
  ] as const) {
    describe(`over the ${name}`, () => {
      it('answers /healthz to any method without a token', async () => {
        for (const method of ['GET', 'POST', 'HEAD']) {
          const reply = await call(target(rig), '/healthz', { method });
          assert.equal(reply.status, 200);
          if (method !== 'HEAD') assert.deepEqual(JSON.parse(reply.text), { status: 'ok' });
        }
      });

      it('serves an authorised /open with 204 and calls openExternal', async () => {
        const url = `https://example.com/${name.replace(' ', '-')}`;
        const reply = await call(target(rig), '/open', { token: rig.token, body: ok(url) });
        assert.equal(reply.status, 204);
        assert.ok(rig.recorded.urls.includes(url));
      });

      it('refuses a method other than POST with 405', async () => {
        const reply = await call(target(rig), '/open', { method: 'GET', token: rig.token });
        assert.equal(reply.status, 405);
        assert.equal(reply.headers.allow, 'POST');
      });

      it('refuses a missing, wrong or short token with 401 before reading the body', async () => {
        const wrong = rig.token.replace(/^./, (c) => (c === 'a' ? 'b' : 'a'));
        for (const token of [null, wrong, rig.token.slice(0, 10), `${rig.token}00`]) {
          const reply = await call(target(rig), '/open', { token, body: ok() });
          assert.equal(reply.status, 401, `token ${String(token)}`);
        }
        const basic = await call(target(rig), '/open', { headers: { Authorization: `Basic ${rig.token}` }, body: ok() });
        assert.equal(basic.status, 401);
      });

      it('refuses an oversized body with a wrong token with 401, not 413: the token is checked before the body is read', async () => {
        const wrong = 'f'.repeat(64);
        const big = JSON.stringify(ok()) + ' '.repeat(1024 * 1024);
        for (const route of ['/open', '/edit', '/proximo', '/credential']) {
          for (const chunked of [false, true]) {
            const reply = await call(target(rig), route, { token: wrong, body: big, chunked });
            assert.equal(reply.status, 401, `${route}${chunked ? ' chunked' : ''}`);
          }
        }
      });

      it('refuses malformed JSON, a non-object body and unknown fields with 400 naming the problem', async () => {
        const malformed = await call(target(rig), '/open', { token: rig.token, body: '{"url": ' });
        assert.equal(malformed.status, 400);
        assert.match(malformed.text, /not valid JSON/);
        const array = await call(target(rig), '/open', { token: rig.token, body: [1, 2] });
        assert.equal(array.status, 400);
        const extra = await call(target(rig), '/open', { token: rig.token, body: { url: 'http://a.example/', shell: 'rm -rf /' } });
        assert.equal(extra.status, 400);
        assert.match(extra.text, /unknown field "shell"/);
        const wrongType = await call(target(rig), '/open', { token: rig.token, body: { url: 42 } });
        assert.equal(wrongType.status, 400);
        assert.match(wrongType.text, /field "url"/);
      });

      it('answers 404 for a route it does not have', async () => {
        assert.equal((await call(target(rig), '/beep', { token: rig.token, body: {} })).status, 404);
      });
    });
  }

  it("refuses Host headers other than the shims' (DNS rebinding) on both transports", async () => {
    const port = rig.hub.port as number;
    const urls = rig.recorded.urls.length;
    for (const host of [`evil.example:${port}`, 'evil.example', `localhost:${port + 1}`, 'localhost']) {
      const reply = await call(tcpTarget(rig), '/open', { token: rig.token, body: ok(), host });
      assert.equal(reply.status, 403, `TCP Host ${host}`);
    }
    // node:http itself answers 400 to an HTTP/1.1 request without a Host header.
    assert.equal((await call(tcpTarget(rig), '/open', { token: rig.token, body: ok(), host: null })).status, 400);
    assert.equal(rig.recorded.urls.length, urls, 'no refused request reached openExternal');
    for (const host of ['evil.example', 'localhost:80', `localhost:${port}`]) {
      const reply = await call(unixTarget(rig), '/healthz', { host });
      assert.equal(reply.status, 403, `unix Host ${host}`);
    }
    for (const host of [`host.docker.internal:${port}`, `LOCALHOST:${port}`, `127.0.0.1:${port}`]) {
      assert.equal((await call(tcpTarget(rig), '/healthz', { host })).status, 200, `TCP Host ${host}`);
    }
  });

  it('logs a request with route, status and duration', async () => {
    const own = await startRig();
    after(() => own.cleanup());
    await call(unixTarget(own), '/open', { token: own.token, body: { url: 'file:///etc/passwd' } });
    const entry = own.recorded.events.find((e) => e.kind === 'request');
    assert.ok(entry && entry.kind === 'request');
    assert.equal(entry.route, '/open');
    assert.equal(entry.status, 400);
    assert.equal(entry.transport, 'unix');
    assert.equal(typeof entry.durationMs, 'number');
    assert.match(entry.detail ?? '', /scheme "file"/);
  });

  it('keeps serving after a burst of 200 concurrent authorised requests: exactly the burst passes, the rest is 429 (or 503 over the connection cap)', async () => {
    // The clock stands still, so the bucket cannot refill during the burst.
    const burstRig = await startRig({ hub: { rateLimits: RATE_LIMITS, now: () => 1_000 } });
    try {
      const replies = await Promise.all(
        Array.from({ length: 200 }, (_, i) =>
          call(i % 2 ? unixTarget(burstRig) : tcpTarget(burstRig), '/open', { token: burstRig.token, body: ok(`http://a.example/${i}`) }),
        ),
      );
      const count = (status: number): number => replies.filter((r) => r.status === status).length;
      assert.equal(count(204) + count(429) + count(503), 200, JSON.stringify([...new Set(replies.map((r) => r.status))]));
      assert.equal(count(204), 5, 'the burst of the shared bucket, no more and no less');
      assert.ok(count(429) > 0);
      assert.equal(burstRig.recorded.urls.length, 5);
      assert.equal((await call(unixTarget(burstRig), '/healthz')).status, 200);
      assert.equal((await call(tcpTarget(burstRig), '/healthz')).status, 200);
    } finally {
      await burstRig.cleanup();
    }
  });
});

describe('bridge body limits, pinned in bytes', () => {
  let rig: Rig;
  rigForSuite((started) => (rig = started));

  // Literal numbers on purpose: a test reading BODY_LIMITS would follow any change to it.
  const cases: Array<[string, number, unknown, number]> = [
    ['/open', 9216, ok(), 204],
    ['/edit', 9216, { editor: 'code', path: '/nowhere' }, 400],
    ['/proximo', 16384, { command: 'not-a-verb' }, 400],
    ['/credential', 65536, { op: 'get', input: 'not the protocol' }, 400],
  ];
  for (const [route, limit, body, atLimitStatus] of cases) {
    it(`${route}: a ${limit}-byte body is read, ${limit + 1} bytes are refused with 413`, async () => {
      const base = JSON.stringify(body);
      const atLimit = base + ' '.repeat(limit - base.length);
      assert.equal(Buffer.byteLength(atLimit), limit);
      assert.equal((await call(unixTarget(rig), route, { token: rig.token, body: atLimit })).status, atLimitStatus);
      const over = `${atLimit} `;
      for (const chunked of [false, true]) {
        const reply = await call(unixTarget(rig), route, { token: rig.token, body: over, chunked });
        assert.equal(reply.status, 413, `${route}${chunked ? ' chunked' : ''}`);
        assert.match(reply.text, new RegExp(`over the ${limit}-byte limit`));
      }
    });
  }
});

describe('bridge rate limits', () => {
  it('pins the buckets: shared 10/s with a burst of 5, credential 30/s with a burst of 15, sound 10/s with a burst of 5, propose one per 5 s with a burst of 3, the agent hooks 20/s with a burst of 40', () => {
    assert.deepEqual(RATE_LIMITS, {
      shared: { perSecond: 10, burst: 5 },
      credential: { perSecond: 30, burst: 15 },
      sound: { perSecond: 10, burst: 5 },
      propose: { perSecond: 0.2, burst: 3 },
      agent: { perSecond: 20, burst: 40 },
    });
  });

  it('refills the bucket over time: after the burst, a tenth of a second buys one request and a second the whole burst', async () => {
    let clock = 1_000;
    const rig = await startRig({ hub: { rateLimits: RATE_LIMITS, now: () => clock } });
    try {
      const open = async (): Promise<number> => (await call(unixTarget(rig), '/open', { token: rig.token, body: ok() })).status;
      const burst = async (n: number): Promise<number[]> => {
        const out: number[] = [];
        for (let i = 0; i < n; i++) out.push(await open());
        return out;
      };
      assert.deepEqual(await burst(6), [204, 204, 204, 204, 204, 429]);
      assert.deepEqual(await burst(3), [429, 429, 429], 'no time passed, nothing refilled');
      clock += 100;
      assert.deepEqual(await burst(2), [204, 429], '100 ms at 10/s is one request');
      clock += 1_000;
      assert.deepEqual(await burst(6), [204, 204, 204, 204, 204, 429], 'a second refills the burst, and no more than the burst');
      clock += 60_000;
      assert.deepEqual(await burst(6), [204, 204, 204, 204, 204, 429], 'a long pause still caps at the burst');
    } finally {
      await rig.cleanup();
    }
  });

  it("allows the shared bucket's burst, then answers 429, while /credential has its own bucket", async () => {
    const rig = await startRig({ hub: { rateLimits: RATE_LIMITS, now: () => 1_000 } });
    try {
      const statuses: number[] = [];
      for (let i = 0; i < RATE_LIMITS.shared.burst + 1; i++) {
        statuses.push((await call(unixTarget(rig), '/open', { token: rig.token, body: ok() })).status);
      }
      assert.deepEqual(statuses, [...Array(RATE_LIMITS.shared.burst).fill(204), 429]);
      // /edit and /proximo share the bucket; /credential does not.
      assert.equal((await call(unixTarget(rig), '/edit', { token: rig.token, body: { editor: 'code', path: rig.workspace } })).status, 429);
      const credential = await call(unixTarget(rig), '/credential', { token: rig.token, body: { op: 'get', input: 'bogus' } });
      assert.equal(credential.status, 400);
    } finally {
      await rig.cleanup();
    }
  });
});

describe('bridge hub lifecycle', () => {
  it('falls back to an ephemeral loopback port when the preferred one is taken', async () => {
    const blocker: Server = createServer();
    await new Promise<void>((r) => blocker.listen(0, '127.0.0.1', r));
    const taken = (blocker.address() as { port: number }).port;
    const rig = await startRig({ hub: { port: taken } });
    try {
      assert.notEqual(rig.hub.port, taken);
      assert.equal(readFileSync(join(rig.bridge.stateDir, 'port'), 'utf8'), `${rig.hub.port}\n`);
      assert.equal((await call(tcpTarget(rig), '/healthz')).status, 200);
      assert.ok(rig.recorded.events.some((e) => e.kind === 'info' && e.message.includes('is taken')));
    } finally {
      await rig.cleanup();
      blocker.close();
    }
  });

  it('multiplexes workspaces on the TCP port by token, while each unix socket accepts only its own token', async () => {
    const rig = await startRig();
    try {
      const otherWs = join(rig.root, 'ws2');
      mkdirSync(otherWs);
      const other = await rig.hub.ensureWorkspace({ ...rig.registration, key: `${rig.registration.key}-b`, workspaceFolder: otherWs });
      const otherToken = readFileSync(join(other.stateDir, 'token'), 'utf8').trim();
      assert.notEqual(otherToken, rig.token);
      assert.notEqual(other.socketPath, rig.bridge.socketPath);
      assert.equal(other.port, rig.hub.port);
      // The second workspace's token opens files of its own folder over TCP, not of the first one.
      const own = await call(tcpTarget(rig), '/edit', { token: otherToken, body: { editor: 'code', path: otherWs } });
      assert.equal(own.status, 204);
      const foreign = await call(tcpTarget(rig), '/edit', { token: otherToken, body: { editor: 'code', path: rig.workspace } });
      assert.equal(foreign.status, 400);
      assert.equal((await call({ socketPath: rig.bridge.socketPath }, '/open', { token: otherToken, body: ok() })).status, 401);
      assert.equal((await call({ socketPath: other.socketPath }, '/open', { token: otherToken, body: ok() })).status, 204);
    } finally {
      await rig.cleanup();
    }
  });

  it('on dispose closes the listeners, unlinks the socket and the port file, and keeps the token for the next start', async () => {
    const rig = await startRig();
    try {
      const { socketPath, stateDir } = rig.bridge;
      const port = rig.hub.port as number;
      await rig.hub.dispose();
      assert.equal(existsSync(socketPath), false);
      assert.equal(existsSync(join(stateDir, 'port')), false);
      assert.equal(readFileSync(join(stateDir, 'token'), 'utf8').trim(), rig.token);
      await assert.rejects(call({ port }, '/healthz'));
      await assert.rejects(rig.hub.ensureWorkspace(rig.registration), /shut down/);

      const again = new BridgeHub({ home: rig.home, tmpRoot: rig.tmpRoot, port: 0, ...recorder() });
      rig.extraHubs.push(again);
      const bridge = await again.ensureWorkspace(rig.registration);
      assert.equal(bridge.socketPath, socketPath);
      assert.equal(readFileSync(join(stateDir, 'token'), 'utf8').trim(), rig.token);
      assert.equal((await call({ socketPath }, '/open', { token: rig.token, body: ok() })).status, 204);
    } finally {
      await rig.cleanup();
    }
  });

  it('replaces a stale socket file nobody answers on', async () => {
    const rig = await startRig();
    try {
      // Simulate a crashed window: the listener is gone but the socket file remains.
      const staleHub = new BridgeHub({ home: rig.home, tmpRoot: rig.tmpRoot, port: 0, ...recorder() });
      rig.extraHubs.push(staleHub);
      await rig.hub.dispose();
      const { spawnSync } = await import('node:child_process');
      const made = spawnSync('python3', [
        '-c',
        `import socket; s=socket.socket(socket.AF_UNIX); s.bind(${JSON.stringify(rig.bridge.socketPath)})`,
      ]);
      assert.equal(made.status, 0, String(made.stderr));
      assert.ok(lstatSync(rig.bridge.socketPath).isSocket());
      const bridge = await staleHub.ensureWorkspace(rig.registration);
      assert.equal(bridge.reused, false);
      assert.equal((await call({ socketPath: bridge.socketPath }, '/healthz')).status, 200);
    } finally {
      await rig.cleanup();
    }
  });

  it('reuses a bridge that already serves the same state dir instead of fighting it, and says so', async () => {
    const rig = await startRig();
    try {
      const second = recorder();
      const hub2 = new BridgeHub({ home: rig.home, tmpRoot: rig.tmpRoot, port: 0, ...second });
      rig.extraHubs.push(hub2);
      const bridge = await hub2.ensureWorkspace(rig.registration);
      assert.equal(bridge.reused, true);
      assert.equal(bridge.socketPath, rig.bridge.socketPath);
      assert.equal(bridge.port, rig.hub.port);
      assert.equal(hub2.port, undefined, 'the second hub starts no listener of its own');
      assert.ok(second.events.some((e) => e.kind === 'info' && /already serving/.test(e.message)));
      await hub2.dispose();
      // Disposing the reusing hub leaves the live bridge alone.
      assert.ok(lstatSync(rig.bridge.socketPath).isSocket());
      assert.equal((await call(unixTarget(rig), '/open', { token: rig.token, body: ok('http://reuse.example/') })).status, 204);
      assert.ok(rig.recorded.urls.includes('http://reuse.example/'));
    } finally {
      await rig.cleanup();
    }
  });

  it('takes over when the window it reused shuts down, so the shims reach this window (a reload)', async () => {
    const rig = await startRig();
    try {
      const second = recorder();
      const served = takeoverNotice(second);
      // A long interval: the run dir's change (the leaving window unlinks its socket) is what acts.
      const hub2 = new BridgeHub({
        home: rig.home,
        tmpRoot: rig.tmpRoot,
        port: 0,
        ...second,
        takeover: { intervalMs: 600_000, jitterMs: 0 },
      });
      rig.extraHubs.push(hub2);
      assert.equal((await hub2.ensureWorkspace(rig.registration)).reused, true);
      await rig.hub.dispose();
      await served.promise;
      assert.equal(readFileSync(join(rig.bridge.stateDir, 'port'), 'utf8').trim(), String(hub2.port));
      assert.equal((await call(unixTarget(rig), '/open', { token: rig.token, body: ok('http://after.example/') })).status, 204);
      assert.equal((await call({ port: hub2.port! }, '/open', { token: rig.token, body: ok('http://tcp.example/') })).status, 204);
      assert.deepEqual(second.urls, ['http://after.example/', 'http://tcp.example/']);
    } finally {
      await rig.cleanup();
    }
  });

  it('takes over from a window that was killed and left its socket behind', async () => {
    const root = makeTempRoot();
    const home = join(root, 'home');
    const tmpRoot = join(root, 't');
    for (const dir of [home, tmpRoot, join(root, 'ws')]) mkdirSync(dir, { recursive: true });
    const registration = {
      key: `tbbtest-${root.slice(-6)}`,
      workspaceFolder: join(root, 'ws'),
      mountsRoots: [],
      proximoEnabled: true,
      defaultAgentHome: home,
      defaultCodexHome: home,
    };
    // The serving window is another process, killed with SIGKILL: no dispose, its socket stays.
    const hubModule = join(__dirname, '../../extension/src/bridge/hub.js');
    const child = spawn(
      process.execPath,
      [
        '-e',
        `const { BridgeHub } = require(${JSON.stringify(hubModule)});
         new BridgeHub({ home: ${JSON.stringify(home)}, tmpRoot: ${JSON.stringify(tmpRoot)}, port: 0 })
           .ensureWorkspace(${JSON.stringify(registration)}).then((b) => console.log(b.socketPath));`,
      ],
      { stdio: ['ignore', 'pipe', 'inherit'] },
    );
    const exited = once(child, 'exit');
    const second = recorder();
    const served = takeoverNotice(second);
    const hub2 = new BridgeHub({ home, tmpRoot, port: 0, ...second, takeover: { intervalMs: 50, jitterMs: 0 } });
    try {
      const [line] = (await once(child.stdout!, 'data')) as [Buffer];
      const socketPath = line.toString().trim();
      assert.equal((await hub2.ensureWorkspace(registration)).reused, true);
      child.kill('SIGKILL');
      await exited;
      assert.ok(lstatSync(socketPath).isSocket(), 'the killed window left its socket');
      await served.promise;
      const token = readFileSync(join(workspaceStateDir(home, registration.key), 'token'), 'utf8').trim();
      assert.equal((await call({ socketPath }, '/open', { token, body: ok('http://killed.example/') })).status, 204);
      assert.deepEqual(second.urls, ['http://killed.example/']);
    } finally {
      child.kill('SIGKILL');
      await hub2.dispose();
      rmSync(root, { recursive: true, force: true });
    }
  });

  it('lets one of two windows that reused the same bridge take it over; the other keeps watching and takes over when that one goes', async () => {
    const rig = await startRig();
    try {
      const notices: string[] = [];
      const hubs = ['second', 'third'].map((name) => {
        const rec = recorder();
        const log = rec.log!;
        rec.log = (event) => {
          log(event);
          if ('message' in event && /is gone; this window serves it now/.test(event.message)) notices.push(name);
        };
        // No pause before the lock: the two meet there every time.
        const hub = new BridgeHub({ home: rig.home, tmpRoot: rig.tmpRoot, port: 0, ...rec, takeover: { intervalMs: 50, jitterMs: 0 } });
        rig.extraHubs.push(hub);
        return { name, rec, hub };
      });
      for (const h of hubs) assert.equal((await h.hub.ensureWorkspace(rig.registration)).reused, true);
      await rig.hub.dispose();
      const until = async (what: string, done: () => boolean): Promise<void> => {
        for (const end = Date.now() + 10_000; !done(); await new Promise((r) => setTimeout(r, 20))) {
          if (Date.now() > end) throw new Error(`${what} within 10 s (notices: ${JSON.stringify(notices)})`);
        }
      };
      await until('no takeover', () => notices.length > 0);
      const winner = hubs.find((h) => h.name === notices[0])!;
      const loser = hubs.find((h) => h !== winner)!;
      // The other window's next look finds the winner's bridge (its probe reaches it) and stays a reuser.
      const probed = () => winner.rec.events.some((e) => e.kind === 'request' && e.route === '/healthz');
      await until('the other window never probed the new bridge', probed);
      assert.deepEqual(notices, [winner.name], 'only one window took over');
      assert.equal(loser.hub.port, undefined, 'the other window binds nothing');
      assert.equal(readFileSync(join(rig.bridge.stateDir, 'port'), 'utf8').trim(), String(winner.hub.port));
      assert.equal((await call(unixTarget(rig), '/open', { token: rig.token, body: ok('http://winner.example/') })).status, 204);
      assert.deepEqual(winner.rec.urls, ['http://winner.example/']);
      // When the winner goes too, the one still watching takes over.
      await winner.hub.dispose();
      await until('the second takeover', () => notices.length === 2);
      assert.deepEqual(notices, [winner.name, loser.name]);
      assert.equal((await call(unixTarget(rig), '/open', { token: rig.token, body: ok('http://loser.example/') })).status, 204);
      assert.deepEqual(loser.rec.urls, ['http://loser.example/']);
    } finally {
      await rig.cleanup();
    }
  });

  it('takeover lock: one holder at a time, free once released, and a stale one (a killed window) is taken', () => {
    const dir = makeTempRoot();
    try {
      const release = takeoverLock(dir, 10_000);
      assert.ok(release, 'the first window takes it');
      assert.equal(takeoverLock(dir, 10_000), undefined, 'a second window does not while it is held');
      release();
      const again = takeoverLock(dir, 10_000);
      assert.ok(again, 'free once released');
      assert.ok(
        takeoverLock(dir, 10_000, () => Date.now() + 10_001),
        'held longer than the stale limit: taken',
      );
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('prefers a short XDG_RUNTIME_DIR for the run dir', async () => {
    const xdg = makeTempRoot();
    const rig = await startRig({ hub: { env: { PATH: process.env.PATH, XDG_RUNTIME_DIR: xdg } } });
    try {
      assert.ok(rig.bridge.runDir.startsWith(join(xdg, 'toolbox') + '/'));
      assert.equal((await call(unixTarget(rig), '/healthz')).status, 200);
    } finally {
      await rig.cleanup();
      rmSync(xdg, { recursive: true, force: true });
    }
  });

  it('refuses a socket path over the AF_UNIX limit with a clear error and binds nothing truncated', async () => {
    const root = makeTempRoot();
    const longRoot = join(root, 'x'.repeat(60), 'y'.repeat(60));
    mkdirSync(longRoot, { recursive: true });
    const hub = new BridgeHub({ home: join(root, 'home'), tmpRoot: longRoot, env: {}, port: 0, ...recorder() });
    try {
      await assert.rejects(
        hub.ensureWorkspace({
          key: 'tbbtest-long',
          workspaceFolder: root,
          mountsRoots: [],
          proximoEnabled: false,
          defaultAgentHome: root,
          defaultCodexHome: root,
        }),
        (error: Error) => {
          assert.match(error.message, /over the 107-byte unix socket limit/);
          assert.ok(error.message.includes(join(longRoot, `toolbox-${process.getuid?.()}`)), error.message);
          return true;
        },
      );
      assert.deepEqual(readdirSync(longRoot), []);
      assert.equal(hub.port, undefined);
    } finally {
      await hub.dispose();
      rmSync(root, { recursive: true, force: true });
    }
  });
});
