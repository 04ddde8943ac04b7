/**
 * Issue 11, finding 2: /credential is a broker with consent. Against the real bridge and real git
 * (credential.helper store in a temp HOME holding entries for the workspace's remote host and for
 * two unrelated hosts): the remote host works without asking; any other host asks, and a denial,
 * a dismissal or no answer leaves the store untouched; store and erase never reach the store for a
 * host that is not allowed; a grant persists in the injected state and can be revoked.
 */
import assert from 'node:assert/strict';
import { appendFileSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, beforeEach, describe, it } from 'node:test';
import { GrantState, memoryState, type ConsentAnswer, type ConsentQuestion } from '../../extension/src/bridge/credentialConsent';
import { call, startRig, unixTarget, type Rig } from './support';

const REMOTE_SECRET = 'remote-s3cret-4411';
const GITHUB_SECRET = 'github-s3cret-0c7e';
const INTERNAL_SECRET = 'internal-s3cret-a9d0';
const CI_SECRET = 'ci-s3cret-5be1';
const CONSENT_MS = 400;

describe('/credential asks before credentials leave (issue 11, finding 2)', () => {
  let rig: Rig;
  let store: string;
  const state = memoryState();
  const asked: ConsentQuestion[] = [];
  /** What the next prompt answers; 'never' leaves it open (closeOpenPrompt closes it). */
  let nextAnswer: ConsentAnswer | undefined | 'never' = 'deny';
  let closeOpenPrompt: (answer: ConsentAnswer | undefined) => void = () => undefined;

  before(async () => {
    rig = await startRig({
      prepare({ root, home, workspace }) {
        store = join(root, 'git-credentials');
        writeFileSync(
          store,
          [
            `https://alice:${REMOTE_SECRET}@git.example`,
            `https://alice:${GITHUB_SECRET}@github.com`,
            `https://svc:${INTERNAL_SECRET}@internal.corp:8443`,
            `https://ci:${CI_SECRET}@ci.example`,
            '',
          ].join('\n'),
          { mode: 0o600 },
        );
        writeFileSync(join(home, '.gitconfig'), `[credential]\n\thelper = store --file ${store}\n`);
        mkdirSync(join(workspace, '.git'));
        writeFileSync(join(workspace, '.git', 'config'), '[remote "origin"]\n\turl = git@git.example:team/repo.git\n');
      },
      hub: ({ home }) => ({
        env: { PATH: process.env.PATH, HOME: home, GIT_CONFIG_NOSYSTEM: '1' },
        credentialConsent: {
          state,
          consentTimeoutMs: CONSENT_MS,
          prompt: (question) => {
            asked.push(question);
            const answer = nextAnswer;
            return answer === 'never' ? new Promise((resolve) => (closeOpenPrompt = resolve)) : Promise.resolve(answer);
          },
        },
      }),
    });
  });
  after(async () => {
    await rig.cleanup();
  });
  beforeEach(() => {
    asked.length = 0;
    nextAnswer = 'deny';
  });

  const credential = (op: string, input: string) => call(unixTarget(rig), '/credential', { token: rig.token, body: { op, input } });
  const storeText = () => readFileSync(store, 'utf8');
  const logLines = () => rig.recorded.events.flatMap((e) => (e.kind === 'request' ? [] : [e.message]));

  it("gives the workspace's remote host its credential without asking", async () => {
    const reply = await credential('get', 'protocol=https\nhost=git.example\n');
    assert.equal(reply.status, 200, reply.text);
    assert.match(reply.text, new RegExp(REMOTE_SECRET));
    assert.equal(reply.text.includes(GITHUB_SECRET), false);
    assert.equal(asked.length, 0);
  });

  it('asks for another host, and Deny refuses it with the store untouched', async () => {
    const before = storeText();
    const reply = await credential('get', 'protocol=https\nhost=github.com\n');
    assert.equal(reply.status, 403, reply.text);
    assert.equal(reply.text.includes(GITHUB_SECRET), false);
    assert.deepEqual(
      asked.map((q) => [q.container, q.folder, q.host, q.op, q.timeoutMs]),
      [[rig.registration.key, rig.workspace, 'github.com', 'get', CONSENT_MS]],
    );
    assert.equal(storeText(), before);
    assert.match(reply.text, /^The host refused git credentials for github\.com to this container: the user denied it\.\n$/);
    assert.ok(logLines().some((l) => /^git credentials: refused github\.com \(get, .*\): the user denied it\.$/.test(l)));
    // Denied: not asked again right away.
    assert.equal((await credential('get', 'protocol=https\nhost=github.com\n')).status, 403);
    assert.equal(asked.length, 1);
  });

  it('refuses when the prompt is dismissed or gets no answer in time', async () => {
    nextAnswer = undefined;
    assert.equal((await credential('get', 'protocol=https\nhost=internal.corp:8443\n')).status, 403);
    nextAnswer = 'never';
    const started = performance.now();
    const reply = await credential('get', 'protocol=https\nhost=internal.corp:8443\n');
    const took = performance.now() - started;
    assert.equal(reply.status, 403, reply.text);
    assert.equal(reply.text.includes(INTERNAL_SECRET), false);
    assert.ok(took >= CONSENT_MS - 20 && took < CONSENT_MS + 1_500, `refused after ${took.toFixed(0)} ms`);
    assert.ok(
      logLines().some(
        (l) => l.includes(`refused internal.corp:8443`) && l.includes(`the user did not answer within ${CONSENT_MS / 1000} s`),
      ),
    );
    // The prompt is still on screen: no other question from this folder until it is closed.
    nextAnswer = 'once';
    assert.equal((await credential('get', 'protocol=https\nhost=ci.example\n')).status, 403);
    assert.ok(
      logLines().some(
        (l) => l.includes('refused ci.example') && l.includes('a question about internal.corp:8443 for this folder is still open'),
      ),
    );
    closeOpenPrompt(undefined);
    await new Promise((r) => setImmediate(r));
  });

  it('never lets store or erase change the store for a host that is not allowed, and never asks', async () => {
    const before = storeText();
    const erase = await credential('erase', 'protocol=https\nhost=github.com\nusername=alice\n');
    assert.equal(erase.status, 403);
    const plant = await credential('store', 'protocol=https\nhost=github.com\nusername=mallory\npassword=planted\n');
    assert.equal(plant.status, 403);
    const plantNew = await credential('store', 'protocol=https\nhost=new.example\nusername=mallory\npassword=planted\n');
    assert.equal(plantNew.status, 403);
    assert.equal(storeText(), before);
    assert.equal(asked.length, 0);
  });

  it('Allow once answers that request only; Always persists a grant that store and erase then honour; revoking ends it', async () => {
    nextAnswer = 'once';
    const once = await credential('get', 'protocol=https\nhost=ci.example\n');
    assert.equal(once.status, 200, once.text);
    assert.match(once.text, new RegExp(CI_SECRET));
    nextAnswer = 'deny';
    assert.equal((await credential('get', 'protocol=https\nhost=ci.example\n')).status, 403);
    assert.equal(asked.length, 2);
    assert.equal(new GrantState(state).get(rig.workspace)?.granted.length ?? 0, 0);

    nextAnswer = 'always';
    const granted = await credential('get', 'protocol=https\nhost=gitlab.example\n');
    assert.equal(granted.status, 200, granted.text);
    await new Promise((r) => setImmediate(r));
    assert.deepEqual(new GrantState(state).get(rig.workspace)?.granted, ['gitlab.example']);
    assert.ok(logLines().some((l) => l === `git credentials: granted gitlab.example always for folder ${rig.workspace}.`));
    const store = await credential('store', 'protocol=https\nhost=gitlab.example\nusername=bob\npassword=from-container\n');
    assert.equal(store.status, 200);
    assert.match(storeText(), /https:\/\/bob:from-container@gitlab\.example/);
    asked.length = 0;
    assert.equal((await credential('get', 'protocol=https\nhost=gitlab.example\n')).status, 200);
    assert.equal(asked.length, 0, 'a granted host is not asked about again');

    await new GrantState(state).revoke(rig.workspace, 'gitlab.example');
    const afterRevoke = storeText();
    assert.equal((await credential('erase', 'protocol=https\nhost=gitlab.example\nusername=bob\n')).status, 403);
    assert.equal(storeText(), afterRevoke);
  });

  it('treats a remote the container adds after registration as another host', async () => {
    appendFileSync(join(rig.workspace, '.git', 'config'), '[remote "exfil"]\n\turl = https://github.com/evil/x.git\n');
    // Even a new container of the same folder registers against the first record.
    await rig.hub.ensureWorkspace({ ...rig.registration, key: `${rig.registration.key}-2` });
    asked.length = 0;
    nextAnswer = 'deny';
    const reply = await credential('get', 'protocol=https\nhost=github.com\nusername=alice\n');
    assert.equal(reply.status, 403);
    assert.equal(reply.text.includes(GITHUB_SECRET), false);
  });

  it('refuses requests without exactly one valid host, or with url=', async () => {
    const cases: Array<[string, RegExp]> = [
      ['protocol=https\n', /no valid host/],
      ['protocol=https\nhost=\n', /no valid host/],
      ['protocol=https\nhost=git.example\nhost=github.com\n', /repeats "host"/],
      ['protocol=https\nhost=git.example\nurl=https://github.com/\n', /not part of the git credential protocol a helper receives/],
      ['protocol=https\nhost=git.example/../x\n', /no valid host/],
      ['protocol=https\nhost=git.example\r\n', /no valid host/],
    ];
    for (const [input, reason] of cases) {
      const reply = await credential('get', input);
      assert.equal(reply.status, 400, JSON.stringify(input));
      assert.match(reply.text, reason, JSON.stringify(input));
    }
    assert.equal(asked.length, 0);
  });

  it('matches hosts case-insensitively, as git does', async () => {
    const reply = await credential('get', 'protocol=https\nhost=GIT.Example\n');
    assert.equal(reply.status, 200, reply.text);
  });

  it('never logs a secret, and names only the host for every decision', () => {
    const log = JSON.stringify(rig.recorded.events);
    for (const secret of [REMOTE_SECRET, GITHUB_SECRET, INTERNAL_SECRET, CI_SECRET, 'planted', 'from-container', 'mallory']) {
      assert.equal(log.includes(secret), false, secret);
    }
    for (const line of logLines().filter((l) => l.startsWith('git credentials: refused') || l.includes('allowed once'))) {
      assert.match(
        line,
        /^git credentials: (refused|allowed once for) [a-z0-9.:]+ \((get|store|erase), container [\w-]+, folder \/[^)]*\)/,
      );
    }
  });
});
