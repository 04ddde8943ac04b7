/**
 * The /credential decision (extension/src/bridge/credentialConsent.ts) without a bridge or git:
 * default-allowed remote hosts, persisted grants, once versus always, deny memory, the consent
 * timeout, one prompt at a time, and a log line per decision that names the host only.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { CREDENTIAL_LIMITS_MS } from '../../extension/src/contract/shims';
import {
  CredentialAuthority,
  GrantState,
  memoryState,
  type ConsentAnswer,
  type ConsentPrompt,
  type ConsentQuestion,
  type CredentialRequestInfo,
} from '../../extension/src/bridge/credentialConsent';

const FOLDER = '/home/u/proj';

interface Harness {
  authority: CredentialAuthority;
  grants: GrantState;
  asked: ConsentQuestion[];
  signals: AbortSignal[];
  logs: Array<{ level: string; message: string }>;
  /** Answers the oldest open prompt. */
  answer(a: ConsentAnswer | undefined): void;
  open(): number;
  clock: { now: number };
}

function harness(opts: { remotes?: string[]; prompt?: false; consentTimeoutMs?: number; answer?: ConsentAnswer } = {}): Harness {
  const asked: ConsentQuestion[] = [];
  const signals: AbortSignal[] = [];
  const resolvers: Array<(a: ConsentAnswer | undefined) => void> = [];
  const logs: Array<{ level: string; message: string }> = [];
  const clock = { now: 1_000_000 };
  const grants = new GrantState(memoryState());
  const prompt: ConsentPrompt = (question, signal) => {
    asked.push(question);
    signals.push(signal);
    if (opts.answer !== undefined) return Promise.resolve(opts.answer);
    return new Promise((resolve) => resolvers.push(resolve));
  };
  const authority = new CredentialAuthority({
    grants,
    prompt: opts.prompt === false ? undefined : prompt,
    log: (level, message) => logs.push({ level, message }),
    consentTimeoutMs: opts.consentTimeoutMs ?? 5_000,
    now: () => clock.now,
    readRemotes: () => Promise.resolve({ hosts: opts.remotes ?? [] }),
  });
  return {
    authority,
    grants,
    asked,
    signals,
    logs,
    clock,
    answer: (a) => resolvers.shift()?.(a),
    open: () => resolvers.length,
  };
}

const req = (host: string, op: CredentialRequestInfo['op'] = 'get', folder = FOLDER): CredentialRequestInfo => ({
  container: 'toolbox-proj-1234abcd',
  folder,
  op,
  host,
});

const tick = () => new Promise((r) => setImmediate(r));
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe('CredentialAuthority', () => {
  it("allows the folder's remote hosts for every op without asking, and records them once", async () => {
    const h = harness({ remotes: ['github.com', 'git.corp:8443'] });
    await h.authority.noteWorkspace(FOLDER);
    for (const op of ['get', 'store', 'erase'] as const) {
      assert.equal(await h.authority.authorize(req('github.com', op)), 'allow');
      assert.equal(await h.authority.authorize(req('git.corp:8443', op)), 'allow');
    }
    assert.equal(h.asked.length, 0);
    assert.deepEqual(h.grants.get(FOLDER)?.remoteHosts, ['git.corp:8443', 'github.com']);
    // Another folder has nothing allowed.
    assert.equal(await h.authority.authorize(req('github.com', 'get', '/home/u/other')), 'deny');
  });

  it('keeps the first record: a remote the container adds later is an other host', async () => {
    let remotes = ['github.com'];
    const grants = new GrantState(memoryState());
    const asked: string[] = [];
    const make = () =>
      new CredentialAuthority({
        grants,
        prompt: (q) => {
          asked.push(q.host);
          return Promise.resolve('deny');
        },
        log: () => undefined,
        readRemotes: () => Promise.resolve({ hosts: remotes }),
      });
    await make().noteWorkspace(FOLDER);
    remotes = ['github.com', 'evil.example'];
    // A later registration (a reload, another container of the folder) reads nothing new.
    const later = make();
    await later.noteWorkspace(FOLDER);
    assert.deepEqual(grants.get(FOLDER)?.remoteHosts, ['github.com']);
    assert.equal(await later.authorize(req('evil.example')), 'deny');
    assert.deepEqual(asked, ['evil.example']);
  });

  it('asks for any other host; Deny refuses and is remembered for denyMemory, then it asks again', async () => {
    const h = harness({ answer: 'deny' });
    await h.authority.noteWorkspace(FOLDER);
    assert.equal(await h.authority.authorize(req('evil.example')), 'deny');
    assert.deepEqual(
      h.asked.map((q) => ({ container: q.container, folder: q.folder, host: q.host, op: q.op })),
      [{ container: 'toolbox-proj-1234abcd', folder: FOLDER, host: 'evil.example', op: 'get' }],
    );
    await tick();
    assert.equal(await h.authority.authorize(req('evil.example')), 'deny');
    assert.equal(h.asked.length, 1, 'a denied host is not asked again right away');
    h.clock.now += CREDENTIAL_LIMITS_MS.denyMemory + 1;
    assert.equal(await h.authority.authorize(req('evil.example')), 'deny');
    assert.equal(h.asked.length, 2);
  });

  it('Allow once allows the waiting request only; Always saves a grant for the folder', async () => {
    const once = harness({ answer: 'once' });
    assert.equal(await once.authority.authorize(req('gitlab.example')), 'allow');
    assert.equal(await once.authority.authorize(req('gitlab.example')), 'allow');
    assert.equal(once.asked.length, 2, 'once means this request: the next one asks again');
    assert.equal(once.grants.get(FOLDER)?.granted.length ?? 0, 0);
    // Once does not open store/erase.
    assert.equal(await once.authority.authorize(req('gitlab.example', 'erase')), 'deny');

    const always = harness({ answer: 'always' });
    assert.equal(await always.authority.authorize(req('gitlab.example')), 'allow');
    await tick();
    assert.deepEqual(always.grants.get(FOLDER)?.granted, ['gitlab.example']);
    for (const op of ['get', 'store', 'erase'] as const) assert.equal(await always.authority.authorize(req('gitlab.example', op)), 'allow');
    assert.equal(always.asked.length, 1);
    await always.grants.revoke(FOLDER, 'gitlab.example');
    assert.equal(await always.authority.authorize(req('gitlab.example', 'store')), 'deny');
  });

  it('never asks for store or erase of a host that is not allowed', async () => {
    const h = harness({ answer: 'always' });
    assert.equal(await h.authority.authorize(req('evil.example', 'store')), 'deny');
    assert.equal(await h.authority.authorize(req('evil.example', 'erase')), 'deny');
    assert.equal(h.asked.length, 0);
  });

  it('refuses every other host when there is no one to ask', async () => {
    const h = harness({ prompt: false });
    assert.equal(await h.authority.authorize(req('evil.example')), 'deny');
    assert.match(h.logs.at(-1)?.message ?? '', /refused evil\.example .*no one to ask/);
  });

  it('refuses when no answer comes within the consent time, aborts the prompt, and still saves a late Always', async () => {
    const h = harness({ consentTimeoutMs: 150 });
    const started = Date.now();
    assert.equal(await h.authority.authorize(req('slow.example')), 'deny');
    const took = Date.now() - started;
    assert.ok(took >= 140 && took < 1_000, `refused after ${took} ms`);
    assert.equal(h.signals[0]?.aborted, true, 'the prompt learns nobody waits any more');
    assert.match(h.logs.at(-1)?.message ?? '', /refused slow\.example .*the user did not answer within 0\.15 s/);
    h.answer('always');
    await tick();
    await tick();
    assert.deepEqual(h.grants.get(FOLDER)?.granted, ['slow.example']);
    assert.match(h.logs.at(-1)?.message ?? '', /granted slow\.example always .*after the request had stopped waiting/);
    assert.equal(await h.authority.authorize(req('slow.example')), 'allow');
  });

  it('the default consent time is the contract constant', async () => {
    const prompt: ConsentPrompt = (q) => Promise.resolve(q.timeoutMs === CREDENTIAL_LIMITS_MS.consent ? 'once' : 'deny');
    const authority = new CredentialAuthority({ grants: new GrantState(), prompt, log: () => undefined });
    assert.equal(await authority.authorize(req('x.example')), 'allow');
  });

  it('asks one question per folder: the same host shares it, another host of the folder is refused until it is answered', async () => {
    const h = harness({ consentTimeoutMs: 100 });
    const a1 = h.authority.authorize(req('a.example'));
    const a2 = h.authority.authorize(req('a.example'));
    assert.equal(await h.authority.authorize(req('b.example')), 'deny');
    assert.match(h.logs.at(-1)?.message ?? '', /refused b\.example .*a question about a\.example for this folder is still open/);
    await tick();
    assert.deepEqual(
      h.asked.map((q) => q.host),
      ['a.example'],
    );
    assert.deepEqual(await Promise.all([a1, a2]), ['deny', 'deny']); // nobody answered in time
    // The unanswered prompt is still on screen: still no second question from this folder.
    assert.equal(await h.authority.authorize(req('b.example')), 'deny');
    assert.equal(h.asked.length, 1);
    h.answer(undefined);
    await tick();
    await tick();
    const b = h.authority.authorize(req('b.example'));
    await tick();
    await tick();
    assert.deepEqual(
      h.asked.map((q) => q.host),
      ['a.example', 'b.example'],
    );
    h.answer('once');
    assert.equal(await b, 'allow');
  });

  it('shows one prompt at a time across folders: the next folder waits its turn', async () => {
    const h = harness();
    const a = h.authority.authorize(req('a.example', 'get', '/w/one'));
    const b = h.authority.authorize(req('b.example', 'get', '/w/two'));
    await tick();
    assert.deepEqual(
      h.asked.map((q) => q.host),
      ['a.example'],
    );
    h.answer('once');
    assert.equal(await a, 'allow');
    await tick();
    assert.deepEqual(
      h.asked.map((q) => q.host),
      ['a.example', 'b.example'],
    );
    h.answer('deny');
    assert.equal(await b, 'deny');
  });

  it('never shows a queued prompt whose request stopped waiting', async () => {
    const h = harness({ consentTimeoutMs: 100 });
    const a1 = h.authority.authorize(req('a.example', 'get', '/w/one'));
    await sleep(30);
    const b = h.authority.authorize(req('b.example', 'get', '/w/two'));
    await sleep(30);
    const a2 = h.authority.authorize(req('a.example', 'get', '/w/one')); // keeps a's prompt wanted past b's deadline
    assert.deepEqual(await Promise.all([a1, b, a2]), ['deny', 'deny', 'deny']);
    await tick();
    assert.deepEqual(
      h.asked.map((q) => q.host),
      ['a.example'],
    );
    // b is asked afresh next time, not answered by the dead turn.
    const again = h.authority.authorize(req('b.example', 'get', '/w/two'));
    await tick();
    await tick();
    assert.deepEqual(
      h.asked.map((q) => q.host),
      ['a.example', 'b.example'],
    );
    h.answer(undefined); // a's prompt, still on screen, closed at last
    h.answer('once');
    assert.equal(await again, 'allow');
  });

  it('lets the next question through once nobody waits for an open prompt (which may stay on screen)', async () => {
    const h = harness({ consentTimeoutMs: 100 });
    const a = h.authority.authorize(req('a.example', 'get', '/w/one'));
    await sleep(50);
    const b = h.authority.authorize(req('b.example', 'get', '/w/two'));
    assert.equal(await a, 'deny');
    await tick();
    assert.deepEqual(
      h.asked.map((q) => q.host),
      ['a.example', 'b.example'],
    );
    h.answer(undefined); // a's prompt, closed late
    h.answer('once');
    assert.equal(await b, 'allow');
  });

  it('logs one line per decision with the host, never anything else from the request', async () => {
    const h = harness({ answer: 'deny', remotes: ['github.com'] });
    await h.authority.noteWorkspace(FOLDER);
    const before = h.logs.length;
    await h.authority.authorize(req('github.com'));
    assert.equal(h.logs.length, before, 'a default allowance is not logged here (the request log has it)');
    await h.authority.authorize(req('evil.example'));
    await h.authority.authorize(req('evil.example', 'store'));
    const lines = h.logs.slice(before);
    assert.equal(lines.length, 2);
    for (const l of lines)
      assert.match(
        l.message,
        /^git credentials: refused evil\.example \((get|store), container toolbox-proj-1234abcd, folder \/home\/u\/proj\): /,
      );
  });
});

describe('GrantState', () => {
  it('persists through its KeyValueState and lists, grants and revokes per folder', async () => {
    const state = memoryState();
    const one = new GrantState(state);
    await one.recordRemoteHosts('/w/a/', ['github.com']);
    await one.grant('/w/a', 'gitlab.example');
    await one.grant('/w/b', 'x.example');
    const two = new GrantState(state);
    assert.deepEqual(two.list(), [
      { folder: '/w/a', remoteHosts: ['github.com'], granted: ['gitlab.example'] },
      { folder: '/w/b', granted: ['x.example'] },
    ]);
    assert.ok(two.allows('/w/a', 'github.com'));
    await two.revoke('/w/a', 'github.com');
    assert.equal(one.allows('/w/a', 'github.com'), false, 'a revoked remote host needs consent again');
    assert.ok(one.allows('/w/a', 'gitlab.example'));
  });
});

describe('CredentialAuthority refusal log', () => {
  it('logs refusals one by one up to the limit per interval, then one summary line by host', async () => {
    const logs: string[] = [];
    const authority = new CredentialAuthority({
      grants: new GrantState(),
      log: (_level, message) => logs.push(message),
      refusalLog: { intervalMs: 60_000, lines: 3 },
    });
    for (let i = 0; i < 50; i++) await authority.authorize(req(i % 2 ? 'a.example' : 'b.example', 'store'));
    assert.equal(logs.length, 3);
    authority.flushRefusals();
    assert.equal(logs.length, 4);
    assert.equal(logs[3], 'git credentials: 47 more refusals, not logged one by one: 24 × a.example, 23 × b.example.');
    await authority.authorize(req('c.example', 'store'));
    assert.equal(logs.length, 5, 'a new interval logs again');
    authority.flushRefusals();
  });
});
