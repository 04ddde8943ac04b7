/**
 * Agent questions from real containers (issue 28, docs/decisions/0050-approvals-over-the-bridge.md).
 * A stand-in agent (test/fixtures/stand-in-agent.py) speaks Claude Code's hook protocol in a held
 * session of a real container and runs the hook the runtime image installs
 * (/etc/claude-code/managed-settings.json → images/runtime/toolbox-agent-hook), which asks the
 * bridge; the test is the editor (EditorActions.askApproval). Covered: Allow (for the session),
 * Deny with its message, an answer typed in the terminal taking the question out of the inbox, a
 * window going away (the hook asks the next one), no answer (the agent's own prompt), what the
 * container can forge, and ten containers asking at once, each answer reaching its own.
 */
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { StartedShell } from '../../extension/src/backend/api';
import type { AgentEvent, ApprovalAnswer, ApprovalRequest } from '../../extension/src/bridge/route';
import { objectNames } from '../../extension/src/contract/objects';
import { testBackend, type TestBackend } from '../support/backend';
import { TEST_ENGINE, docker, removeNamespaceObjects } from '../support/docker';
import { ensureTestRuntimeImage, repoRoot } from '../support/image';

import { screen } from '../support/screen';

/** Waits (bounded) until `ready` holds. */
async function until(ready: () => boolean, timeoutMs = 15_000): Promise<void> {
  for (const end = Date.now() + timeoutMs; !ready();) {
    if (Date.now() > end) throw new Error('timed out waiting');
    await new Promise((r) => setTimeout(r, 50));
  }
}

interface Asked {
  request: ApprovalRequest;
  signal: AbortSignal;
  answer(a: ApprovalAnswer): void;
}

const STAND_IN = readFileSync(join(repoRoot(), 'test', 'fixtures', 'stand-in-agent.py'));

describe('agent questions from real containers (issue 28)', () => {
  const names = objectNames(`tbxq${Math.random().toString(16).slice(2, 8)}`);
  let home: string;
  let backend: TestBackend;
  const asked: Asked[] = [];
  const events: AgentEvent[] = [];
  let wake: Array<() => void> = [];

  /** The next question (the n-th overall), as soon as it is asked. */
  async function question(n: number, timeoutMs = 60_000): Promise<Asked> {
    const end = Date.now() + timeoutMs;
    while (asked.length <= n) {
      if (Date.now() > end) throw new Error(`question ${n} was never asked (${asked.length} so far)`);
      await new Promise<void>((r) => {
        wake.push(r);
        setTimeout(r, 250);
      });
    }
    return asked[n]!;
  }

  before(async () => {
    const image = await ensureTestRuntimeImage();
    home = mkdtempSync(join(tmpdir(), 'tbxq-approvals-'));
    writeFileSync(join(home, '.toolbox.yaml'), `image: ${image}\npeer_messaging: false\n`);
    backend = testBackend(names, home, {
      editor: {
        openInEditor: () => undefined,
        openUntitled: () => undefined,
        openExternal: () => undefined,
        askApproval: (request, signal) =>
          new Promise<ApprovalAnswer>((answer) => {
            asked.push({ request, signal, answer });
            for (const w of wake) w();
            wake = [];
          }),
        agentEvent: (event) => void events.push(event),
      },
    });
  });

  after(async () => {
    backend?.dispose();
    await removeNamespaceObjects(docker(), names).catch(() => undefined);
    rmSync(home, { recursive: true, force: true });
  });

  async function shellIn(name: string) {
    const folder = join(home, name);
    mkdirSync(folder, { recursive: true });
    writeFileSync(join(folder, 'agent.py'), STAND_IN);
    const prepared = await backend.prepareShell({ folder });
    const session = await prepared.open({ log: () => undefined, step: () => undefined }, new AbortController().signal);
    const shell: StartedShell = await session.start({ cols: 200, rows: 50 });
    const seen = screen({ onDidWrite: (l: (t: string) => void) => shell.stream.on('data', (d: Buffer) => l(d.toString('utf8'))) });
    const type = (text: string) => shell.stream.write(text);
    return { container: prepared.container, shell, seen, type };
  }

  it('Allow for the session lets the agent run, Deny gives it the refusal, an answer in the terminal leaves the inbox', async () => {
    const { container, shell, seen, type } = await shellIn('one');
    const first = asked.length;
    type(`python3 agent.py 'echo one' 'echo two' 'echo three'\r`);

    const q1 = await question(first);
    assert.equal(q1.request.container, container);
    assert.equal(q1.request.agent, 'claude');
    assert.match(q1.request.session ?? '', /^s\d+$/);
    assert.equal(q1.request.session, shell.record?.sessionId, 'the hook names the held session it runs in');
    assert.deepEqual(q1.request.subject, { kind: 'command', text: 'echo one' });
    assert.equal(q1.request.reason, 'Run echo');
    assert.equal(q1.request.canAllowForSession, true);
    q1.answer({ decision: 'allow', scope: 'session' });
    await seen.waitFor(/RAN echo one -> 0 \[\{"type": "addRules".*"destination": "session"\}\]/);

    const q2 = await question(first + 1);
    assert.equal(q2.request.subject.text, 'echo two');
    q2.answer({ decision: 'deny', reason: 'not in this branch' });
    await seen.waitFor(/DENIED echo two: not in this branch/);

    const q3 = await question(first + 2);
    assert.equal(q3.signal.aborted, false);
    const left = new Promise<void>((r) => q3.signal.addEventListener('abort', () => r()));
    await seen.waitFor(/Allow Bash\(echo three\)\? \[y\/n\]/);
    type('y\r');
    await left;
    await seen.waitFor(/TERMINAL y echo three -> 0/);
    await seen.waitFor(/AGENT DONE/);

    // In the order the agent fired them: the reports come from detached children, in any order.
    await until(() => events.filter((e) => e.container === container).length >= 4);
    const mine = events.filter((e) => e.container === container).sort((a, b) => a.at - b.at);
    assert.deepEqual(
      mine.map((e) => [e.kind, e.text]),
      [
        ['session-start', 'started (startup)'],
        ['command', 'echo one'],
        ['command', 'echo three'],
        ['stop', 'finished its turn'],
      ],
    );
    assert.ok(mine.every((e) => e.session === q1.request.session && e.agentSession === q1.request.agentSession));
    assert.deepEqual(mine.at(-1)!.usage, { inputTokens: 150, outputTokens: 25, cacheReadTokens: 0, cacheWriteTokens: 0 });
  });

  it('a window going away withdraws the question: the hook asks again and the next answer reaches the agent', async () => {
    const { seen, type } = await shellIn('two');
    const first = asked.length;
    type(`python3 agent.py 'echo again'\r`);
    const q = await question(first);
    assert.equal(q.request.retry, 0);
    q.answer({ decision: 'ask', withdrawn: true });
    const again = await question(first + 1);
    assert.ok(again.request.retry >= 1, `asked again (retry ${again.request.retry})`);
    assert.equal(again.request.subject.text, 'echo again');
    assert.notEqual(again.request.id, q.request.id);
    again.answer({ decision: 'allow' });
    await seen.waitFor(/RAN echo again -> 0/);
  });

  it('no answer from the editor leaves the agent its own prompt, and never runs the command', async () => {
    const { seen, type } = await shellIn('three');
    const first = asked.length;
    type(`python3 agent.py 'touch /tmp/ran'\r`);
    (await question(first)).answer({ decision: 'ask', reason: 'no answer in VS Code within 300 s' });
    await seen.waitFor(/NO DECISION FROM HOOKS/);
    await seen.waitFor(/Allow Bash\(touch \/tmp\/ran\)\? \[y\/n\]/);
    type('n\r');
    await seen.waitFor(/TERMINAL n touch \/tmp\/ran/);
    type(`test -e /tmp/ran; echo "ran=$?"\r`);
    await seen.waitFor(/ran=1/);
  });

  it('what the container forges is refused before the editor sees it', async () => {
    const { seen, type } = await shellIn('four');
    const before = asked.length;
    const post = (body: string, step: string) =>
      type(
        `sh -c '. /usr/local/lib/toolbox/bridge-lib.sh; bridge_ready; bridge_post /approval '"'"'${body}'"'"' 10; echo "${step} $BRIDGE_STATUS"'\r`,
      );
    // An answer the container makes up for a question (its own or another container's): there is
    // no route that takes one, and /approval refuses the field.
    post('{"agent":"claude","tool":"Bash","input":{},"decision":"allow","id":"x"}', 'forged-answer');
    await seen.waitFor(/forged-answer 400/);
    // Naming another container.
    post('{"agent":"claude","tool":"Bash","input":{},"container":"toolbox-other"}', 'other-container');
    await seen.waitFor(/other-container 400/);
    // A session id the holder would never give.
    post('{"agent":"claude","tool":"Bash","input":{},"session":"s1;rm"}', 'bad-session');
    await seen.waitFor(/bad-session 400/);
    assert.equal(asked.length, before, 'the editor was never asked');
    // Control characters and a link in the command reach the editor as one line of text.
    post('{"agent":"claude","tool":"Bash","input":{"command":"ls\\u001b]8;;https://x\\u0007\\nrm -rf ~"}}', 'controls');
    const q = await question(before);
    assert.equal(q.request.subject.text, 'ls ]8;;https://x rm -rf ~');
    q.answer({ decision: 'deny' });
    await seen.waitFor(/controls 200/);
  });

  // The bridge, not the engine, keeps ten questions apart: once on Docker is enough (CI time).
  const onPodman = TEST_ENGINE === 'podman' ? 'the same bridge path runs on Docker; ten more containers here prove nothing new' : false;
  it('ten agents in ten containers ask at once: all ten are asked, each answer reaches its own', { skip: onPodman }, async () => {
    const shells = [];
    for (let i = 0; i < 10; i++) shells.push(await shellIn(`many${i}`));
    const first = asked.length;
    shells.forEach((s, i) => s.type(`python3 agent.py 'echo from-${i}'\r`));
    const qs = await Promise.all(shells.map((_, i) => question(first + i)));
    const containers = new Set(qs.map((q) => q.request.container));
    assert.equal(containers.size, 10, 'one question per container');
    // Answered in reverse order of arrival: allow for even-numbered folders, deny for odd ones.
    for (const q of [...qs].reverse()) {
      const i = Number(/echo from-(\d+)/.exec(q.request.subject.text)![1]);
      assert.equal(q.request.container, shells[i]!.container, 'the question names the container it came from');
      q.answer(i % 2 === 0 ? { decision: 'allow' } : { decision: 'deny', reason: `no ${i}` });
    }
    await Promise.all(
      shells.map((s, i) =>
        s.seen.waitFor(i % 2 === 0 ? new RegExp(`RAN echo from-${i} -> 0`) : new RegExp(`DENIED echo from-${i}: no ${i}`)),
      ),
    );
    shells.forEach((s, i) => assert.doesNotMatch(s.seen.text, new RegExp(`from-(?!${i}\\b)\\d`), 'no other container’s answer'));
  });
});
