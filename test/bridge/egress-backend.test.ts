/**
 * The window's egress policies (issue 30, extension/src/backend/egress.ts,
 * docs/decisions/0056-egress-through-a-host-proxy.md) driven as a container's forwarder drives
 * them: a real EgressPolicies serving a real proxy on a unix socket in a temp dir, a stand-in for
 * the settings (read again at every connection), a config the test chooses and a scripted
 * prompter. Every case sends HTTP CONNECT requests over the socket to a loopback echo origin (an
 * IP literal: askable in `ask` mode, allowed by an explicit `127.0.0.1:<port>` rule) and asserts
 * what the client gets, what the prompter was asked and what the log and the counters hold.
 *
 * "Settle": a CONNECT to 169.254.169.254 (always refused, never decided) on a new connection,
 * answered 403 once the proxy has read everything sent before it was opened, so a test knows a
 * connection it started has reached the policy before it answers a question.
 */
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { connect, createServer, type AddressInfo, type Server, type Socket } from 'node:net';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { connect as tlsConnect } from 'node:tls';
import type { EgressChoice, EgressPrompter, EgressQuestion } from '../../extension/src/backend/api/egress';
import { EgressPolicies, type EgressDeps } from '../../extension/src/backend/egress';
import type { EgressConfig } from '../../extension/src/config/model';
import { EGRESS, EGRESS_LIMITS } from '../../extension/src/contract/egress';
import { LABELS } from '../../extension/src/contract/upstream';
import type { EgressLogEntry, EgressMode } from '../../extension/src/plan/egress';
import type { FolderEgress } from '../../extension/src/plan/egressPolicy';
import { standInSettings } from '../support/settings';
import { readHttpHead } from '../support/httpHead';

const ENGINE = 'unix:///var/run/docker.sock';
const ENFORCED = { [LABELS.egress]: EGRESS.enforcedLabel };
/** A public-looking address the name resolves to; `dial` takes it to the loopback echo origin. */
const FAKE_PUBLIC = '93.184.216.34';

let root: string;
let echo: Server;
let echoPort: number;
/** A loopback port nothing listens on (bound then closed): never connected to, only asked about. */
let deadPort: number;

/** What the stand-in settings return for the folder; edited by the tests between connections. */
interface SettingsState {
  userMode?: EgressMode;
  folder?: FolderEgress;
}

interface Call {
  question: EgressQuestion;
  signal: AbortSignal;
  answer(choice: EgressChoice): void;
  fail(error: Error): void;
}

/**
 * The prompter as a script: each question is kept with its signal until the test answers it. Like
 * the window's (ui/egress/egressInbox.ts) it answers `deny` when the signal aborts, unless `ignoreAbort`.
 */
class ScriptedPrompter implements EgressPrompter {
  readonly calls: Call[] = [];
  constructor(private readonly ignoreAbort = false) {}
  ask(question: EgressQuestion, signal: AbortSignal): Promise<EgressChoice> {
    return new Promise((resolve, reject) => {
      this.calls.push({ question, signal, answer: resolve, fail: reject });
      if (!this.ignoreAbort) signal.addEventListener('abort', () => resolve('deny'), { once: true });
    });
  }
}

interface Rig {
  policies: EgressPolicies;
  state: SettingsState;
  prompter: ScriptedPrompter;
  folder: string;
  container: string;
  socketPath: string;
  warnings: string[];
  /** What the policies wrote to the log at info level (each refusal, in words). */
  infos: string[];
}

const rigs: EgressPolicies[] = [];
let serial = 0;

async function startRig(
  options: {
    config?: EgressConfig;
    state?: SettingsState;
    prompter?: ScriptedPrompter;
    limits?: NonNullable<EgressDeps['proxy']>['limits'];
    proxy?: Omit<NonNullable<EgressDeps['proxy']>, 'limits'>;
  } = {},
): Promise<Rig> {
  const tmpRoot = mkdtempSync(join(root, 'r-'));
  const state: SettingsState = options.state ?? {};
  const prompter = options.prompter ?? new ScriptedPrompter();
  const folder = join(tmpRoot, 'proj');
  const warnings: string[] = [];
  const infos: string[] = [];
  const policies = new EgressPolicies({
    // protectedPaths off: no git remotes are read (the folder has none anyway).
    settings: standInSettings({ egress: () => ({ ...state }), protectedPaths: () => false }),
    log: { info: (line: string) => void infos.push(line), warn: (line: string) => void warnings.push(line) },
    configFor: async () => options.config,
    prompter,
    host: { tmpRoot },
    proxy: { hostAddresses: () => ['127.0.0.1', '::1'], ...options.proxy, ...(options.limits ? { limits: options.limits } : {}) },
  });
  rigs.push(policies);
  const container = `tbeb-c${++serial}`;
  await policies.serve(ENGINE, container, folder, undefined);
  return {
    policies,
    state,
    prompter,
    folder,
    container,
    socketPath: join(policies.dir(ENGINE, container), EGRESS.socket),
    warnings,
    infos,
  };
}

interface Pending {
  socket: Socket;
  /** The answer's head (status line and headers), and the bytes after it; rejects if closed before one. */
  answer: Promise<{ status: number; head: string; rest: Buffer }>;
}

/** Opens the proxy socket and sends a CONNECT for `authority`; the answer comes later. */
function startConnect(socketPath: string, authority: string): Pending {
  const socket = connect(socketPath);
  const answer = readHttpHead(socket, { pause: true }).then(({ head: bytes, rest }) => {
    const head = bytes.toString('latin1');
    return { status: Number(/^HTTP\/1\.[01] (\d{3})/.exec(head)?.[1] ?? 0), head, rest };
  });
  // A test that closes it while waiting does not await this.
  answer.catch(() => undefined);
  socket.write(`CONNECT ${authority} HTTP/1.1\r\nHost: ${authority}\r\n\r\n`);
  return { socket, answer };
}

/** A CONNECT's status; the socket is closed after (a refusal's body read first). */
async function statusOf(socketPath: string, authority: string): Promise<{ status: number; body: string }> {
  const p = startConnect(socketPath, authority);
  const { status, rest } = await p.answer;
  const body = status === 200 ? '' : Buffer.concat([rest, await readToEnd(p.socket)]).toString('utf8');
  p.socket.destroy();
  return { status, body };
}

function readToEnd(s: Socket): Promise<Buffer> {
  return new Promise((resolve) => {
    const chunks: Buffer[] = [];
    s.on('data', (c: Buffer) => chunks.push(c));
    s.on('error', () => undefined);
    s.on('close', () => resolve(Buffer.concat(chunks)));
    s.resume();
  });
}

/** After a 200: one round trip through the tunnel to the echo origin. */
function roundTrip(s: Socket, text: string): Promise<string> {
  return new Promise((resolve, reject) => {
    let got = '';
    const onData = (c: Buffer): void => {
      got += c.toString('utf8');
      if (got.length >= text.length) {
        s.off('data', onData);
        resolve(got);
      }
    };
    s.on('data', onData);
    s.once('error', reject);
    s.resume();
    s.write(text);
  });
}

/** The proxy has read everything sent on connections opened before this one (see the header). */
async function settle(socketPath: string): Promise<void> {
  const { status } = await statusOf(socketPath, '169.254.169.254:80');
  assert.equal(status, 403);
}

/** Waits, turn by turn, until `cond` holds (bounded: about 5 s). */
async function until(cond: () => boolean, what = 'condition'): Promise<void> {
  const deadline = Date.now() + 5_000;
  while (!cond() && Date.now() < deadline) await new Promise((r) => setTimeout(r, 2));
  assert.ok(cond(), `${what} never held`);
}

/** A connection attempt to a socket path: resolves with the error code, or 'connected'. */
function tryConnect(socketPath: string): Promise<string> {
  return new Promise((resolve) => {
    const s = connect(socketPath);
    s.once('connect', () => {
      s.destroy();
      resolve('connected');
    });
    s.once('error', (e: NodeJS.ErrnoException) => resolve(e.code ?? 'error'));
  });
}

describe('egress policies (backend/egress.ts) through a real proxy socket', () => {
  before(async () => {
    root = mkdtempSync('/tmp/tbeb-');
    echo = createServer((s) => {
      s.on('error', () => undefined);
      s.pipe(s);
    });
    echoPort = await new Promise<number>((resolve) => echo.listen(0, '127.0.0.1', () => resolve((echo.address() as AddressInfo).port)));
    const probe = createServer();
    deadPort = await new Promise<number>((resolve) => probe.listen(0, '127.0.0.1', () => resolve((probe.address() as AddressInfo).port)));
    await new Promise((r) => probe.close(r));
  });

  after(async () => {
    await Promise.all(rigs.map((p) => p.dispose()));
    await new Promise((r) => echo.close(r));
    rmSync(root, { recursive: true, force: true });
  });

  it("allowlist: a rule's destination goes through, any other is refused with 403, and nobody is asked", async () => {
    const rig = await startRig({ config: { mode: 'allowlist', defaults: false, allow: [`127.0.0.1:${echoPort}`] } });
    const ok = startConnect(rig.socketPath, `127.0.0.1:${echoPort}`);
    assert.equal((await ok.answer).status, 200);
    assert.equal(await roundTrip(ok.socket, 'ping'), 'ping');
    ok.socket.destroy();

    const refused = await statusOf(rig.socketPath, `127.0.0.1:${deadPort}`);
    assert.equal(refused.status, 403);
    assert.match(refused.body, /allowlist/);
    const byName = await statusOf(rig.socketPath, 'example.com:443');
    assert.equal(byName.status, 403);
    assert.equal(rig.prompter.calls.length, 0, 'allowlist mode never asks');

    await until(() => rig.policies.egressLog(rig.container).every((e) => e.endedAt !== undefined), 'every entry ended');
    const log = rig.policies.egressLog(rig.container);
    assert.deepEqual(
      log.map((e) => [e.host, e.port, e.verdict]),
      [
        ['127.0.0.1', echoPort, 'allowed'],
        ['127.0.0.1', deadPort, 'denied'],
        ['example.com', 443, 'denied'],
      ],
    );
    const first = log[0];
    assert.ok(first);
    assert.equal(first.bytesUp, 4);
    assert.equal(first.bytesDown, 4);
    assert.match(first.reason, new RegExp(`127\\.0\\.0\\.1:${echoPort}`), 'the allowing rule is named');
    assert.deepEqual(rig.policies.summary(ENGINE, rig.container, ENFORCED), {
      mode: 'allowlist',
      enforced: true,
      served: true,
      allowed: 1,
      denied: 2,
      asking: 0,
    });
  });

  it('a connection let through and then cut by the proxy (a ClientHello naming no host) is counted and logged as a refusal', async () => {
    const rig = await startRig({
      config: { mode: 'allowlist', defaults: false, allow: [`origin.test:${echoPort}`] },
      // A public-looking address for the name, dialled on loopback (a name resolving to loopback is refused).
      proxy: {
        lookup: async () => [FAKE_PUBLIC],
        dial: (address, port) => connect({ host: address === FAKE_PUBLIC ? '127.0.0.1' : address, port, allowHalfOpen: true }),
      },
    });
    const cut = startConnect(rig.socketPath, `origin.test:${echoPort}`);
    assert.equal((await cut.answer).status, 200);
    // Given no name, Node's TLS client sends no server_name extension.
    const secure = tlsConnect({ socket: cut.socket, rejectUnauthorized: false });
    const outcome = await new Promise<string>((resolve) => {
      secure.once('secureConnect', () => resolve('connected'));
      secure.once('error', (e: NodeJS.ErrnoException) => resolve(e.code ?? e.message));
      secure.once('close', () => resolve('closed'));
    });
    assert.notEqual(outcome, 'connected');
    await until(() => rig.policies.egressLog(rig.container).every((e) => e.endedAt !== undefined), 'the entry ended');
    const log = rig.policies.egressLog(rig.container);
    assert.deepEqual(
      log.map((e) => [e.host, e.port, e.verdict, e.bytesUp]),
      [['origin.test', echoPort, 'denied', 0]],
    );
    const reason = (log[0] as EgressLogEntry).reason;
    assert.match(reason, /^Toolbox egress policy \(allowlist\) refused origin\.test:\d+: its TLS ClientHello names no host \(SNI\)\./);
    assert.deepEqual(
      rig.infos.filter((line) => line.startsWith('Egress of ')),
      [`Egress of ${rig.container}: ${reason}`],
      'logged as every refusal is',
    );
    assert.deepEqual(rig.policies.summary(ENGINE, rig.container, ENFORCED), {
      mode: 'allowlist',
      enforced: true,
      served: true,
      allowed: 0,
      denied: 1,
      asking: 0,
    });
  });

  it('ask: two connections to one destination make one question; `once` lets both through and the next one asks again', async () => {
    const rig = await startRig({ config: { defaults: false }, state: { userMode: 'ask' } });
    const dest = `127.0.0.1:${echoPort}`;
    const a = startConnect(rig.socketPath, dest);
    const b = startConnect(rig.socketPath, dest);
    await until(() => rig.prompter.calls.length === 1, 'the question');
    await settle(rig.socketPath);
    assert.equal(rig.prompter.calls.length, 1, 'one question for both connections');
    const call = rig.prompter.calls[0];
    assert.ok(call);
    assert.deepEqual(
      { ...call.question, id: undefined },
      { id: undefined, container: rig.container, folder: rig.folder, host: '127.0.0.1', port: echoPort },
    );
    assert.equal(rig.policies.summary(ENGINE, rig.container, ENFORCED)?.asking, 1);
    call.answer('once');
    const [ra, rb] = await Promise.all([a.answer, b.answer]);
    assert.equal(ra.status, 200);
    assert.equal(rb.status, 200);
    assert.equal(await roundTrip(a.socket, 'from a'), 'from a');
    assert.equal(await roundTrip(b.socket, 'from b'), 'from b');
    a.socket.destroy();
    b.socket.destroy();
    assert.equal(call.signal.aborted, false, 'an answered question is not aborted');
    assert.equal(rig.policies.summary(ENGINE, rig.container, ENFORCED)?.asking, 0);

    const c = startConnect(rig.socketPath, dest);
    await until(() => rig.prompter.calls.length === 2, 'a second question after `once`');
    assert.notEqual(rig.prompter.calls[1]?.question.id, call.question.id, 'a new question');
    rig.prompter.calls[1]?.answer('deny');
    assert.equal((await c.answer).status, 403);
    c.socket.destroy();
  });

  it('ask: `folder` is remembered in the window at once, without the setting being written back', async () => {
    const rig = await startRig({ config: { defaults: false }, state: { userMode: 'ask' } });
    const dest = `127.0.0.1:${echoPort}`;
    const a = startConnect(rig.socketPath, dest);
    await until(() => rig.prompter.calls.length === 1, 'the question');
    rig.prompter.calls[0]?.answer('folder');
    assert.equal((await a.answer).status, 200);
    a.socket.destroy();

    assert.deepEqual(rig.state, { userMode: 'ask' }, 'the stand-in settings were not changed');
    const next = startConnect(rig.socketPath, dest);
    assert.equal((await next.answer).status, 200, 'the next connection goes through');
    assert.equal(await roundTrip(next.socket, 'again'), 'again');
    next.socket.destroy();
    assert.equal(rig.prompter.calls.length, 1, 'without asking');
    const last = rig.policies.egressLog(rig.container).at(-1);
    assert.equal(last?.verdict, 'allowed');
    assert.match(last?.reason ?? '', /folder/, 'allowed by the folder rule the answer made');

    // The answer is for this destination only.
    const other = startConnect(rig.socketPath, `127.0.0.1:${deadPort}`);
    await until(() => rig.prompter.calls.length === 2, 'a question about another port');
    rig.prompter.calls[1]?.answer('deny');
    assert.equal((await other.answer).status, 403);
    other.socket.destroy();
  });

  it('ask: `deny` and a prompter that throws both refuse with 403', async () => {
    const rig = await startRig({ config: { mode: 'ask', defaults: false } });
    const dest = `127.0.0.1:${echoPort}`;
    const denied = startConnect(rig.socketPath, dest);
    await until(() => rig.prompter.calls.length === 1, 'the first question');
    rig.prompter.calls[0]?.answer('deny');
    const first = await denied.answer;
    assert.equal(first.status, 403);
    denied.socket.destroy();

    const thrown = startConnect(rig.socketPath, dest);
    await until(() => rig.prompter.calls.length === 2, 'the second question');
    rig.prompter.calls[1]?.fail(new Error('the window is gone'));
    assert.equal((await thrown.answer).status, 403);
    thrown.socket.destroy();

    const log = rig.policies.egressLog(rig.container);
    assert.deepEqual(
      log.map((e) => e.verdict),
      ['denied', 'denied'],
    );
    for (const e of log) assert.match(e.reason, /denied in VS Code, or not answered in time/);
    assert.equal(rig.policies.summary(ENGINE, rig.container, ENFORCED)?.asking, 0);
  });

  it('ask: no answer within askMs refuses with 403 and aborts the question', async () => {
    const rig = await startRig({ config: { mode: 'ask', defaults: false }, limits: { askMs: 150 } });
    const waiting = startConnect(rig.socketPath, `127.0.0.1:${echoPort}`);
    await until(() => rig.prompter.calls.length === 1, 'the question');
    const started = Date.now();
    assert.equal((await waiting.answer).status, 403);
    assert.ok(Date.now() - started < 4_000);
    waiting.socket.destroy();
    assert.equal(rig.prompter.calls[0]?.signal.aborted, true, 'the prompter was told the question must go');
    await until(() => rig.policies.summary(ENGINE, rig.container, ENFORCED)?.asking === 0, 'no question left');
  });

  // Its own time-out: before the backend ended a question itself, this connection waited for ever.
  it('ask: no answer within askMs refuses even when the prompter never settles', { timeout: 5_000 }, async () => {
    const rig = await startRig({ config: { mode: 'ask', defaults: false }, prompter: new ScriptedPrompter(true), limits: { askMs: 150 } });
    const waiting = startConnect(rig.socketPath, `127.0.0.1:${echoPort}`);
    await until(() => rig.prompter.calls.length === 1, 'the question');
    assert.equal((await waiting.answer).status, 403);
    waiting.socket.destroy();
    assert.equal(rig.prompter.calls[0]?.signal.aborted, true);
    // The question's slot is free again: the next connection asks anew.
    assert.equal(rig.policies.summary(ENGINE, rig.container, ENFORCED)?.asking, 0);
    const next = startConnect(rig.socketPath, `127.0.0.1:${echoPort}`);
    await until(() => rig.prompter.calls.length === 2, 'a new question');
    next.socket.destroy();
  });

  it('ask: the question goes only when every connection waiting on it has closed', async () => {
    const rig = await startRig({ config: { mode: 'ask', defaults: false } });
    const dest = `127.0.0.1:${echoPort}`;
    const a = startConnect(rig.socketPath, dest);
    const b = startConnect(rig.socketPath, dest);
    await until(() => rig.prompter.calls.length === 1, 'the question');
    await settle(rig.socketPath);
    const call = rig.prompter.calls[0];
    assert.ok(call);

    a.socket.destroy();
    await settle(rig.socketPath);
    assert.equal(call.signal.aborted, false, 'one connection still waits');
    assert.equal(rig.policies.summary(ENGINE, rig.container, ENFORCED)?.asking, 1);

    b.socket.destroy();
    await until(() => call.signal.aborted, 'the question aborted once both left');
    await until(() => rig.policies.summary(ENGINE, rig.container, ENFORCED)?.asking === 0, 'no question left');
    assert.equal(rig.prompter.calls.length, 1);
    // A connection that went away is not in the log.
    assert.deepEqual(
      rig.policies.egressLog(rig.container).map((e) => e.host),
      ['169.254.169.254', '169.254.169.254'],
    );
  });

  it(`ask: past ${EGRESS_LIMITS.maxQuestions} questions at once, a new destination is refused without asking`, async () => {
    const rig = await startRig({ config: { mode: 'ask', defaults: false } });
    const max = EGRESS_LIMITS.maxQuestions;
    const asked = Array.from({ length: max }, (_, i) => startConnect(rig.socketPath, `127.0.0.1:${30_000 + i}`));
    await until(() => rig.prompter.calls.length === max, `${max} questions`);
    assert.equal(rig.policies.summary(ENGINE, rig.container, ENFORCED)?.asking, max);

    const extra = await Promise.all([statusOf(rig.socketPath, '127.0.0.1:31000'), statusOf(rig.socketPath, '127.0.0.1:31001')]);
    assert.deepEqual(
      extra.map((r) => r.status),
      [403, 403],
    );
    // One more connection to a destination already asked about waits on that question.
    const joined = startConnect(rig.socketPath, '127.0.0.1:30000');
    await settle(rig.socketPath);
    assert.equal(rig.prompter.calls.length, max, 'no question for the extra ones');

    rig.prompter.calls[0]?.answer('deny');
    for (const call of rig.prompter.calls.slice(1)) call.answer('deny');
    const statuses = await Promise.all([...asked, joined].map((p) => p.answer.then((r) => r.status)));
    assert.deepEqual(
      statuses,
      Array.from({ length: max + 1 }, () => 403),
    );
    for (const p of [...asked, joined]) p.socket.destroy();

    // The slots are free again.
    const again = startConnect(rig.socketPath, '127.0.0.1:31000');
    await until(() => rig.prompter.calls.length === max + 1, 'a question once the others were answered');
    rig.prompter.calls[max]?.answer('deny');
    assert.equal((await again.answer).status, 403);
    again.socket.destroy();
  });

  it('settings edited between connections count at the next one, without serving again', async () => {
    const rig = await startRig({ config: { defaults: false }, state: { userMode: 'allowlist' } });
    const dest = `127.0.0.1:${echoPort}`;
    assert.equal((await statusOf(rig.socketPath, dest)).status, 403);
    assert.equal(rig.policies.summary(ENGINE, rig.container, ENFORCED)?.mode, 'allowlist');

    rig.state.folder = { allow: [dest] };
    const allowed = startConnect(rig.socketPath, dest);
    assert.equal((await allowed.answer).status, 200, 'a rule added to the folder entry');
    allowed.socket.destroy();

    rig.state.userMode = 'ask';
    assert.equal(rig.policies.summary(ENGINE, rig.container, ENFORCED)?.mode, 'ask');
    assert.equal((await statusOf(rig.socketPath, dest)).status, 200, 'the folder rule still allows it in ask mode');
    const asked = startConnect(rig.socketPath, `127.0.0.1:${deadPort}`);
    await until(() => rig.prompter.calls.length === 1, 'ask mode asks');
    rig.prompter.calls[0]?.answer('deny');
    assert.equal((await asked.answer).status, 403);
    asked.socket.destroy();

    // Back to `open`: a container created under a policy keeps one (it is asked about).
    rig.state.userMode = undefined;
    rig.state.folder = { allow: [] };
    assert.equal(rig.policies.summary(ENGINE, rig.container, ENFORCED)?.mode, 'ask');
    const stillAsked = startConnect(rig.socketPath, dest);
    await until(() => rig.prompter.calls.length === 2, 'still asked after the folder went open');
    rig.prompter.calls[1]?.answer('deny');
    assert.equal((await stillAsked.answer).status, 403);
    stillAsked.socket.destroy();
    assert.deepEqual(
      rig.policies.egressLog(rig.container).map((e) => e.verdict),
      ['denied', 'allowed', 'allowed', 'denied', 'denied'],
    );
  });

  it(`the log keeps the newest ${EGRESS_LIMITS.logEntries} entries; the counters keep counting`, async () => {
    const rig = await startRig({ config: { mode: 'allowlist', defaults: false } });
    const total = EGRESS_LIMITS.logEntries + 20;
    for (let i = 0; i < total; i += 50) {
      const batch = Array.from({ length: Math.min(50, total - i) }, (_, j) => statusOf(rig.socketPath, `127.0.0.1:${20_000 + i + j}`));
      for (const r of await Promise.all(batch)) assert.equal(r.status, 403);
    }
    const log = rig.policies.egressLog(rig.container);
    assert.equal(log.length, EGRESS_LIMITS.logEntries);
    const ports = new Set(log.map((e) => e.port));
    assert.equal(ports.size, EGRESS_LIMITS.logEntries);
    for (let i = 0; i < 20; i++) assert.ok(!ports.has(20_000 + i), `the oldest (${20_000 + i}) went`);
    for (let i = 20; i < total; i++) assert.ok(ports.has(20_000 + i), `a newer one (${20_000 + i}) stayed`);
    assert.ok(
      log.every((e, i) => i === 0 || e.at >= (log[i - 1]?.at ?? 0)),
      'oldest first',
    );
    assert.equal(rig.policies.summary(ENGINE, rig.container, ENFORCED)?.denied, total);
    // A copy: the caller cannot change the log.
    log.length = 0;
    assert.equal(rig.policies.egressLog(rig.container).length, EGRESS_LIMITS.logEntries);
  });

  it('onDidChangeEgress coalesces a burst, names the container, and stops for a disposed listener', async () => {
    const rig = await startRig({ config: { mode: 'allowlist', defaults: false } });
    const events: string[] = [];
    const sub = rig.policies.onDidChangeEgress((container) => void events.push(container));
    // Five refused connections: ten changes (each logged, then ended).
    await Promise.all(Array.from({ length: 5 }, (_, i) => statusOf(rig.socketPath, `127.0.0.1:${21_000 + i}`)));
    await until(() => rig.policies.egressLog(rig.container).filter((e) => e.endedAt !== undefined).length === 5, 'the burst logged');
    await until(() => events.length >= 1, 'a change event');
    // No timing is asserted: however the burst falls across the throttle's windows, it makes fewer events than changes.
    assert.ok(events.length < 10, `coalesced: ${events.length} events for 10 changes`);
    assert.deepEqual([...new Set(events)], [rig.container]);

    sub.dispose();
    const before = events.length;
    assert.equal((await statusOf(rig.socketPath, '127.0.0.1:21101')).status, 403);
    await until(
      () => rig.policies.egressLog(rig.container).filter((e) => e.endedAt !== undefined).length === 6,
      'the last connection logged',
    );
    // The throttle's window (250 ms) has passed once a fresh listener hears of a later change.
    const late: string[] = [];
    const probe = rig.policies.onDidChangeEgress((c) => void late.push(c));
    assert.equal((await statusOf(rig.socketPath, '127.0.0.1:21102')).status, 403);
    await until(() => late.length >= 1, 'the probe hears a change');
    probe.dispose();
    assert.equal(events.length, before, 'a disposed listener is not called');
  });

  it('summary: mode, enforced, served and the counters', async () => {
    const rig = await startRig({ config: { mode: 'allowlist', defaults: false, allow: [`127.0.0.1:${echoPort}`] } });
    const ok = startConnect(rig.socketPath, `127.0.0.1:${echoPort}`);
    assert.equal((await ok.answer).status, 200);
    ok.socket.destroy();
    assert.equal((await statusOf(rig.socketPath, `127.0.0.1:${deadPort}`)).status, 403);
    assert.deepEqual(rig.policies.summary(ENGINE, `/${rig.container}`, {}), {
      mode: 'allowlist',
      enforced: false,
      served: true,
      allowed: 1,
      denied: 1,
      asking: 0,
    });

    // Not served here: the folder's mode as last read, or nothing for an open one.
    assert.equal(rig.policies.summary(ENGINE, 'elsewhere', {}), undefined);
    assert.equal(rig.policies.summary(ENGINE, 'elsewhere', null, join(root, 'unread')), undefined);
    assert.deepEqual(rig.policies.summary(ENGINE, 'elsewhere', ENFORCED), {
      mode: 'open',
      enforced: true,
      served: false,
      allowed: 0,
      denied: 0,
      asking: 0,
    });
    assert.deepEqual(rig.policies.summary(ENGINE, 'sibling', undefined, rig.folder), {
      mode: 'allowlist',
      enforced: false,
      served: false,
      allowed: 0,
      denied: 0,
      asking: 0,
    });
  });

  it("endpointEgress: nothing for an open folder; a policy's mode and the registries a rule allows", async () => {
    const state: SettingsState = {};
    const rig = await startRig({ config: { defaults: false, allow: ['registry.example:443', `127.0.0.1:${echoPort}`] }, state });
    // The served container's folder is `open` now, but the container keeps a policy.
    const served = rig.policies.endpointEgress(rig.folder, rig.container);
    assert.equal(served?.mode, 'ask');
    assert.equal(served?.registryAllowed('registry.example', 443), true);
    assert.equal(served?.registryAllowed('registry.example', 5000), false);
    assert.equal(served?.registryAllowed('registry-1.docker.io', 443), false, 'no rule, and pulls are never asked about');
    assert.equal(served?.registryAllowed('127.0.0.1', echoPort), true);

    // A container not served, of a folder whose settings say nothing: open.
    const openFolder = join(root, 'open-folder');
    assert.equal(rig.policies.endpointEgress(openFolder, 'not-served'), undefined);

    // The same folder under a policy in the settings: read again at each request.
    state.userMode = 'allowlist';
    const other = rig.policies.endpointEgress(rig.folder, 'not-served');
    assert.equal(other?.mode, 'allowlist');
    assert.equal(other?.registryAllowed('registry.example', 443), true);
    assert.equal(other?.registryAllowed('other.example', 443), false);
    state.folder = { allow: ['other.example:443'] };
    assert.equal(other?.registryAllowed('other.example', 443), true, 'a rule added later counts at the next request');
  });

  it('release() stops serving: the socket refuses, and its directory goes when the container is gone', async () => {
    const rig = await startRig({ config: { mode: 'allowlist', defaults: false } });
    assert.equal(await tryConnect(rig.socketPath), 'connected');
    // Serving twice keeps the first proxy.
    await rig.policies.serve(ENGINE, rig.container, rig.folder, undefined);
    assert.equal((await statusOf(rig.socketPath, `127.0.0.1:${deadPort}`)).status, 403);

    await rig.policies.release(ENGINE, rig.container, false);
    assert.notEqual(await tryConnect(rig.socketPath), 'connected');
    assert.equal(rig.policies.summary(ENGINE, rig.container, ENFORCED)?.served, false);
    assert.ok(existsSync(rig.policies.dir(ENGINE, rig.container)), 'kept while the container exists');
    await rig.policies.release(ENGINE, rig.container, true);
    assert.ok(!existsSync(rig.policies.dir(ENGINE, rig.container)), 'removed once it is gone');
  });

  it('release() while a question waits aborts it and closes the waiting connection', async () => {
    const rig = await startRig({ config: { mode: 'ask', defaults: false } });
    const waiting = startConnect(rig.socketPath, `127.0.0.1:${echoPort}`);
    await until(() => rig.prompter.calls.length === 1, 'the question');
    await rig.policies.release(ENGINE, rig.container, false);
    assert.equal(rig.prompter.calls[0]?.signal.aborted, true);
    await assert.rejects(waiting.answer, /closed before an answer/);
  });

  it('dispose() closes every socket, aborts waiting questions and refuses to serve again', async () => {
    const rig = await startRig({ config: { mode: 'ask', defaults: false } });
    const second = `tbeb-c${++serial}`;
    await rig.policies.serve(ENGINE, second, rig.folder, undefined);
    const secondSocket = join(rig.policies.dir(ENGINE, second), EGRESS.socket);
    assert.equal(await tryConnect(secondSocket), 'connected');
    const waiting = startConnect(rig.socketPath, `127.0.0.1:${echoPort}`);
    await until(() => rig.prompter.calls.length === 1, 'the question');

    await rig.policies.dispose();
    assert.equal(rig.prompter.calls[0]?.signal.aborted, true);
    await assert.rejects(waiting.answer, /closed before an answer/);
    assert.notEqual(await tryConnect(rig.socketPath), 'connected');
    assert.notEqual(await tryConnect(secondSocket), 'connected');
    await assert.rejects(rig.policies.serve(ENGINE, 'late', rig.folder, undefined), /shut down/);
  });
});
