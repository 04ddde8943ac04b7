/**
 * Login callbacks on the real engine (issue 29, docs/decisions/0053-login-callbacks-forwarded-per-login.md):
 * a stand-in callback server (test/fixtures/login-callback-server.py) listens on the container's
 * own 127.0.0.1:<port>, as `codex login` does; the shell runs `xdg-open` with a codex-like
 * authorize URL whose redirect_uri is http://localhost:<port>/auth/callback; the bridge forwards
 * the port before the (recorded) browser opens, and an HTTP GET from the host to
 * 127.0.0.1:<port>/auth/callback?code=x&state=y reaches the server in the container, which
 * answers (a redirect, then its success page) and records the query in the folder. Also: Forward
 * a Login Port… for a login that only prints its URL, nothing listening yet, the refusals (one
 * port, one container; a port the host holds; a container that is not running), and the forward
 * closing by itself once the callback is over.
 */
import assert from 'node:assert/strict';
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { request } from 'node:http';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { LoginForwardEvent, StartedShell } from '../../extension/src/backend/api';
import { objectNames } from '../../extension/src/contract/objects';
import { testBackend, type TestBackend } from '../support/backend';
import { docker, removeNamespaceObjects } from '../support/docker';
import { ensureTestRuntimeImage, repoRoot } from '../support/image';
import { freePort, tryConnect } from '../support/ports';
import { screen } from '../support/screen';

const FIXTURE = join(repoRoot(), 'test', 'fixtures', 'login-callback-server.py');
const OPEN_CONFIRM_MS = 3_000;

/** One GET from the host to 127.0.0.1:<port><path>: status, Location and body (or the error's code). */
function get(port: number, path: string): Promise<{ status: number; location?: string; body: string } | { error: string }> {
  return new Promise((resolve) => {
    const req = request({ host: '127.0.0.1', port, path, timeout: 15_000 }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () =>
        resolve({ status: res.statusCode ?? 0, location: res.headers.location, body: Buffer.concat(chunks).toString('utf8') }),
      );
    });
    req.on('error', (err: NodeJS.ErrnoException) => resolve({ error: err.code ?? err.message }));
    req.on('timeout', () => req.destroy(new Error('timeout')));
    req.end();
  });
}

describe('login callbacks forwarded into a real container (issue 29)', () => {
  const names = objectNames(`tbxl${Math.random().toString(16).slice(2, 8)}`);
  let home: string;
  let folder: string;
  let backend: TestBackend;
  const events: LoginForwardEvent[] = [];
  const opened: string[] = [];
  /** What the stand-in for VS Code's openExternal does with a URL; a case may leave its question unanswered. */
  let openExternal = (url: string): Promise<boolean> | void => void opened.push(url);
  let shell: StartedShell;
  let run: (command: string, until?: RegExp) => Promise<string>;
  let container = '';

  /** Resolves with the first event `match` accepts, among those seen and those to come. */
  const waitForEvent = async (match: (e: LoginForwardEvent) => boolean, timeoutMs = 60_000): Promise<LoginForwardEvent> => {
    for (const end = Date.now() + timeoutMs; ;) {
      const found = events.find(match);
      if (found) return found;
      if (Date.now() > end) throw new Error(`no such login forward event; seen: ${JSON.stringify(events)}`);
      await new Promise((r) => setTimeout(r, 100));
    }
  };

  before(async () => {
    const image = await ensureTestRuntimeImage();
    home = mkdtempSync(join(tmpdir(), 'tbxl-login-'));
    writeFileSync(join(home, '.toolbox.yaml'), `image: ${image}\npeer_messaging: false\n`);
    folder = join(home, 'project');
    mkdirSync(folder);
    copyFileSync(FIXTURE, join(folder, 'login-server.py'));
    backend = testBackend(names, home, {
      editor: { openInEditor: () => undefined, openUntitled: () => undefined, openExternal: (url) => openExternal(url) },
      onLoginForward: (event) => void events.push(event),
      // Short, so a question left unanswered ends within the test (VS Code's is OPEN_LIMITS_MS.confirm).
      openConfirmMs: OPEN_CONFIRM_MS,
    });
    const prepared = await backend.prepareShell({ folder });
    container = prepared.container;
    const session = await prepared.open({ log: () => undefined, step: () => undefined }, new AbortController().signal);
    shell = await session.start({ cols: 220, rows: 50 });
    const out = screen({
      onDidWrite: (listener: (text: string) => void) => shell.stream.on('data', (d: Buffer) => listener(d.toString('utf8'))),
    });
    let step = 0;
    run = async (command, until) => {
      step += 1;
      const from = out.text.length;
      shell.stream.write(`${command}; echo "step${step} exit $?"\r`);
      await out.waitFor(until ?? new RegExp(`step${step} exit (\\d+)`));
      return out.text.slice(from);
    };
  });

  after(async () => {
    backend?.dispose();
    await removeNamespaceObjects(docker(), names).catch(() => undefined);
    rmSync(home, { recursive: true, force: true });
  });

  it('a codex-style login completes from the host: xdg-open forwards the port, the host GET reaches the server in the container', async () => {
    const port = await freePort();
    // The server answers on the container's loopback only, in the background of the shell.
    await run(`python3 login-server.py ${port} got.txt > server.log 2>&1 &`);
    await run(`until grep -q LISTENING server.log; do sleep 0.1; done`);
    // Before any forward the host's port is closed.
    assert.deepEqual(await get(port, '/auth/callback?code=early'), { error: 'ECONNREFUSED' });

    const redirect = encodeURIComponent(`http://localhost:${port}/auth/callback`);
    const url = `https://auth.openai.com/oauth/authorize?response_type=code&client_id=app_test&redirect_uri=${redirect}&scope=openid&state=y`;
    const text = await run(`xdg-open '${url}'; echo "OPEN_EXIT=$?"`, /OPEN_EXIT=(\d+)/);
    assert.match(text, /OPEN_EXIT=0/);
    assert.deepEqual(opened, [url], 'the browser got the URL as the container sent it');
    const openedEvent = await waitForEvent((e) => e.kind === 'opened' && e.forward.port === port);
    assert.equal(openedEvent.kind === 'opened' && openedEvent.forward.container, container);
    assert.deepEqual(
      backend.loginForwards().map((f) => [f.port, f.container, f.origin]),
      [[port, container, 'url']],
    );

    // The browser comes back from the provider: the callback, then the page it redirects to.
    const started = performance.now();
    const callback = await get(port, '/auth/callback?code=x&state=y');
    const ms = Math.round(performance.now() - started);
    assert.ok('status' in callback, JSON.stringify(callback));
    assert.equal(callback.status, 302);
    assert.equal(callback.location, '/success');
    const success = await get(port, '/success');
    assert.ok('status' in success, JSON.stringify(success));
    assert.equal(success.status, 200);
    assert.equal(success.body, 'Signed in to the stand-in. You can close this page.\n');
    assert.equal(readFileSync(join(folder, 'got.txt'), 'utf8'), 'code=x&state=y\n', 'the server in the container got the query');
    console.log(`  callback through the forward answered in ${ms} ms`);

    // The login is over: the forward closes by itself, and the port with it.
    const closed = await waitForEvent((e) => e.kind === 'closed' && e.forward.port === port, 60_000);
    assert.equal(closed.kind === 'closed' && closed.end, 'answered');
    assert.deepEqual(backend.loginForwards(), []);
    assert.deepEqual(await get(port, '/success'), { error: 'ECONNREFUSED' });
  });

  it("closes the forward once VS Code's question goes unanswered: the port refuses connections right after", async () => {
    const port = await freePort();
    let asked!: () => void;
    const question = new Promise<void>((resolve) => (asked = resolve));
    openExternal = (url) => {
      opened.push(url);
      asked();
      return new Promise<boolean>(() => undefined);
    };
    try {
      const redirect = encodeURIComponent(`http://localhost:${port}/auth/callback`);
      const url = `https://auth.openai.com/oauth/authorize?response_type=code&client_id=app_test&redirect_uri=${redirect}&state=q`;
      const ran = run(`xdg-open '${url}'; echo "OPEN3_EXIT=$?"`, /OPEN3_EXIT=(\d+)/);
      await question;
      // While VS Code asks, the port is forwarded.
      assert.deepEqual(
        backend.loginForwards().map((f) => [f.port, f.container, f.origin]),
        [[port, container, 'url']],
      );
      assert.equal(await tryConnect(port), 'connected');
      const text = await ran;
      assert.match(text, /Nobody answered VS Code's question about opening the URL within 3 s/);
      assert.match(text, /OPEN3_EXIT=0/);
      // The question ended unanswered: the forward is gone at once, not at the end of its 10 minutes.
      assert.equal(await tryConnect(port), 'ECONNREFUSED');
      assert.deepEqual(backend.loginForwards(), []);
      const closed = await waitForEvent((e) => e.kind === 'closed' && e.forward.port === port);
      assert.equal(closed.kind === 'closed' && closed.end, 'stopped');
    } finally {
      openExternal = (url) => void opened.push(url);
      // A forward left up would hold the port for the next cases.
      await backend.stopLoginForward(port);
    }
  });

  it('Forward a Login Port… for a login that only prints its URL; nothing listening yet closes the connection', async () => {
    const port = await freePort();
    const info = await backend.forwardLoginPort(container, port);
    assert.equal(info.port, port);
    assert.equal(info.origin, 'command');
    // Nothing listens in the container yet: the connection ends without an answer.
    const early = await get(port, '/auth/callback?code=early');
    assert.ok('error' in early, JSON.stringify(early));
    // The login starts, the browser comes back.
    rmSync(join(folder, 'got.txt'), { force: true });
    await run(`python3 login-server.py ${port} got.txt > server2.log 2>&1 &`);
    await run(`until grep -q LISTENING server2.log; do sleep 0.1; done`);
    const callback = await get(port, '/auth/callback?code=printed&state=z');
    assert.ok('status' in callback && callback.status === 302, JSON.stringify(callback));
    assert.equal(readFileSync(join(folder, 'got.txt'), 'utf8'), 'code=printed&state=z\n');
    await backend.stopLoginForward(port);
    assert.deepEqual(backend.loginForwards(), []);
    const stopped = await waitForEvent((e) => e.kind === 'closed' && e.forward.port === port && e.end === 'stopped');
    assert.ok(stopped);
    // The server is still waiting for /success: end it.
    await run(`kill %1 2>/dev/null; wait 2>/dev/null; true`);
  });

  it('refuses what the host must not do, in words', async () => {
    // A port another program on the host holds.
    const held = createServer();
    await new Promise<void>((r) => held.listen(0, '127.0.0.1', r));
    const heldPort = (held.address() as { port: number }).port;
    try {
      await assert.rejects(backend.forwardLoginPort(container, heldPort), (err: Error) => {
        assert.equal(
          err.message,
          `Port ${heldPort} on this host is already in use by another program, so the login callback cannot reach ${container}.`,
        );
        return true;
      });
    } finally {
      held.close();
    }
    // Privileged ports and the bridge's range.
    await assert.rejects(backend.forwardLoginPort(container, 443), /Port 443 is not forwarded: only ports 1024–65535 are forwarded\./);
    // One port, one container: another container cannot take a port forwarded to this one.
    const port = await freePort();
    await backend.forwardLoginPort(container, port);
    const other = `${names.prefix}-other-0123abcd`;
    await assert.rejects(backend.forwardLoginPort(other, port), new RegExp(`already forwards a login callback to ${container}`));
    // A name that is not ours, and one of ours that does not run.
    await backend.stopLoginForward(port);
    await assert.rejects(backend.forwardLoginPort('someone-elses', port), /someone-elses is not a Toolbox container\./);
    await assert.rejects(backend.forwardLoginPort(other, port), new RegExp(`${other} is not running`));
    assert.deepEqual(backend.loginForwards(), []);
    // A URL the container opens with a callback the host holds: the browser still opens, the user is told.
    const held2 = createServer();
    await new Promise<void>((r) => held2.listen(0, '127.0.0.1', r));
    const held2Port = (held2.address() as { port: number }).port;
    try {
      const url = `https://idp.example/authorize?redirect_uri=${encodeURIComponent(`http://127.0.0.1:${held2Port}/cb`)}`;
      const text = await run(`xdg-open '${url}'; echo "OPEN2_EXIT=$?"`, /OPEN2_EXIT=(\d+)/);
      assert.match(text, /OPEN2_EXIT=0/);
      assert.equal(opened.at(-1), url);
      const failed = await waitForEvent((e) => e.kind === 'failed' && e.port === held2Port);
      assert.equal(failed.kind === 'failed' && failed.container, container);
    } finally {
      held2.close();
    }
    assert.equal(existsSync(join(folder, 'got.txt')), true);
  });
});
