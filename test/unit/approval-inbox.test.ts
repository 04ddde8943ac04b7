/**
 * Issue 28: the agents' questions waiting for the user (ui/approvals/approvalInbox.ts). Answered once only,
 * oldest first, gone when the hook hangs up, "ask" when the time runs out, when the inbox is full
 * and when the window closes, never "allow" without an answer; an allow for the session the agent
 * cannot remember is sent as an allow for this once.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { AgentEvent, ApprovalAnswer } from '../../extension/src/bridge/route';
import { approvalRequest } from '../support/approvals';
import { AGENT_HOOK_LIMITS } from '../../extension/src/contract/agentHook';
import {
  ApprovalInbox,
  approvalTimeoutMs,
  ASK_REASONS,
  MIN_APPROVAL_TIMEOUT_S,
  type InboxTimers,
} from '../../extension/src/ui/approvals/approvalInbox';

const request = approvalRequest;

/** Timers that run nothing by themselves: the test fires them (a clock it controls). */
function fakeTimers() {
  const live = new Map<number, { fn: () => void; ms: number }>();
  let next = 1;
  const timers: InboxTimers = {
    set: (fn, ms) => {
      live.set(next, { fn, ms });
      return next++;
    },
    clear: (handle) => void live.delete(handle as number),
  };
  return {
    timers,
    live,
    fireAll: () => {
      for (const [handle, t] of [...live]) {
        live.delete(handle);
        t.fn();
      }
    },
  };
}

const never = () => new AbortController().signal;
const HOUR = 3_600_000;

/** Whether a promise has settled yet (without waiting for it). */
async function settled(p: Promise<unknown>): Promise<boolean> {
  const marker = Symbol('pending');
  return (await Promise.race([p, Promise.resolve(marker)])) !== marker;
}

describe('the approval inbox', () => {
  it('resolves with the answer given, and only the first answer counts', async () => {
    const inbox = new ApprovalInbox({ timers: fakeTimers().timers });
    const q = request();
    const answer = inbox.ask(q, never(), HOUR);
    assert.equal(await settled(answer), false, 'it waits for the user');
    assert.deepEqual(
      inbox.pending().map((r) => r.id),
      [q.id],
    );
    assert.equal(inbox.answer(q.id, { decision: 'deny', reason: 'no' }), true);
    assert.equal(inbox.answer(q.id, { decision: 'allow', scope: 'once' }), false, 'a second answer is refused');
    assert.deepEqual(await answer, { decision: 'deny', reason: 'no' });
    assert.deepEqual(inbox.pending(), []);
    assert.equal(inbox.get(q.id), undefined);
  });

  it('refuses an answer to a question it never had, and an answer that is no decision', async () => {
    const inbox = new ApprovalInbox({ timers: fakeTimers().timers });
    assert.equal(inbox.answer('nope', { decision: 'allow' }), false);
    const q = request();
    const answer = inbox.ask(q, never(), HOUR);
    assert.equal(inbox.answer(q.id, { decision: 'maybe' } as unknown as ApprovalAnswer), false);
    assert.equal(inbox.size, 1, 'still waiting');
    inbox.answer(q.id, { decision: 'allow' });
    assert.equal((await answer).decision, 'allow');
  });

  it('lists the questions oldest first, across containers, and answering one leaves the others in order', async () => {
    const inbox = new ApprovalInbox({ timers: fakeTimers().timers });
    const a = request({ container: 'toolbox-a-1' });
    const b = request({ container: 'toolbox-b-2' });
    const c = request({ container: 'toolbox-a-1' });
    const answers = [a, b, c].map((q) => inbox.ask(q, never(), HOUR));
    assert.deepEqual(
      inbox.pending().map((r) => r.id),
      [a.id, b.id, c.id],
    );
    inbox.answer(b.id, { decision: 'deny' });
    assert.deepEqual(
      inbox.pending().map((r) => r.id),
      [a.id, c.id],
    );
    inbox.dispose();
    await Promise.all(answers);
  });

  it('fires a change when a question arrives and when it leaves, and a failing listener stops nothing', async () => {
    const inbox = new ApprovalInbox({ timers: fakeTimers().timers });
    const seen: number[] = [];
    inbox.onDidChange(() => {
      throw new Error('a view that went away');
    });
    const sub = inbox.onDidChange(() => seen.push(inbox.size));
    const q = request();
    const answer = inbox.ask(q, never(), HOUR);
    inbox.answer(q.id, { decision: 'allow' });
    await answer;
    assert.deepEqual(seen, [1, 0]);
    sub.dispose();
    const r = request();
    const second = inbox.ask(r, never(), HOUR);
    inbox.answer(r.id, { decision: 'deny' });
    await second;
    assert.deepEqual(seen, [1, 0], 'a disposed listener hears nothing');
  });

  it('lets a question go when the hook hangs up: "ask", out of the inbox, a change fired', async () => {
    const inbox = new ApprovalInbox({ timers: fakeTimers().timers });
    const hook = new AbortController();
    const q = request();
    let changes = 0;
    const answer = inbox.ask(q, hook.signal, HOUR);
    inbox.onDidChange(() => changes++);
    hook.abort();
    assert.equal(await settled(answer), true, 'answered as soon as the hook hangs up');
    assert.deepEqual(await answer, { decision: 'ask', reason: ASK_REASONS.left });
    assert.deepEqual(inbox.pending(), []);
    assert.equal(changes, 1);
    assert.equal(inbox.answer(q.id, { decision: 'allow' }), false, 'a late click answers nothing');
  });

  it('does not take a question whose hook already hung up', async () => {
    const inbox = new ApprovalInbox({ timers: fakeTimers().timers });
    const hook = new AbortController();
    hook.abort();
    const answer = inbox.ask(request(), hook.signal, HOUR);
    assert.equal(await settled(answer), true, 'answered at once');
    assert.equal((await answer).decision, 'ask');
    assert.equal(inbox.size, 0);
  });

  it('answers "ask" when nobody answers in time, saying how long it waited', async () => {
    const clock = fakeTimers();
    const inbox = new ApprovalInbox({ timers: clock.timers });
    const q = request();
    const answer = inbox.ask(q, never(), 300_000);
    assert.equal([...clock.live.values()][0]?.ms, 300_000);
    clock.fireAll();
    assert.deepEqual(await answer, { decision: 'ask', reason: 'no answer in VS Code within 300 s' });
    assert.equal(inbox.size, 0);
    assert.equal(inbox.answer(q.id, { decision: 'allow' }), false);
  });

  it('times out on a real timer too, and an answer clears the timer', async () => {
    const inbox = new ApprovalInbox();
    const started = Date.now();
    const late = await inbox.ask(request(), never(), 20);
    assert.equal(late.decision, 'ask');
    assert.ok(Date.now() - started >= 15, 'not before its time');
    const clock = fakeTimers();
    const timed = new ApprovalInbox({ timers: clock.timers });
    const q = request();
    const answer = timed.ask(q, never(), HOUR);
    timed.answer(q.id, { decision: 'allow' });
    await answer;
    assert.equal(clock.live.size, 0, 'the timer of an answered question is gone');
  });

  it('answers "ask" at once past the per-container cap, while other containers still get in', async () => {
    const inbox = new ApprovalInbox({ perContainer: 2, total: 10, timers: fakeTimers().timers });
    const mine = [request(), request()].map((q) => inbox.ask(q, never(), HOUR));
    const over = inbox.ask(request(), never(), HOUR);
    assert.equal(await settled(over), true, 'answered at once');
    assert.deepEqual(await over, { decision: 'ask', reason: ASK_REASONS.full });
    assert.equal(inbox.size, 2);
    const other = inbox.ask(request({ container: 'toolbox-other-1' }), never(), HOUR);
    assert.equal(inbox.size, 3);
    inbox.dispose();
    await Promise.all([...mine, other]);
  });

  it('answers "ask" at once past the window-wide cap', async () => {
    const inbox = new ApprovalInbox({ perContainer: 10, total: 3, timers: fakeTimers().timers });
    const waiting = [1, 2, 3].map((n) => inbox.ask(request({ container: `toolbox-c${n}-1` }), never(), HOUR));
    const fourth = inbox.ask(request({ container: 'toolbox-c4-1' }), never(), HOUR);
    assert.equal(await settled(fourth), true, 'answered at once');
    const over = await fourth;
    assert.equal(over.decision, 'ask');
    assert.equal(over.reason, 'too many questions waiting');
    assert.equal(inbox.size, 3);
    inbox.dispose();
    await Promise.all(waiting);
  });

  it('uses the contract caps by default', async () => {
    const inbox = new ApprovalInbox({ timers: fakeTimers().timers });
    const answers = Array.from({ length: AGENT_HOOK_LIMITS.pendingPerContainer + 1 }, () => inbox.ask(request(), never(), HOUR));
    assert.equal(inbox.size, AGENT_HOOK_LIMITS.pendingPerContainer);
    assert.equal(await settled(answers.at(-1)!), true, 'answered at once');
    assert.equal((await answers.at(-1)!).reason, ASK_REASONS.full);
    inbox.dispose();
    await Promise.all(answers);
  });

  it('answers every waiting question "ask" when the window closes (never allow), and every later one too', async () => {
    const clock = fakeTimers();
    const inbox = new ApprovalInbox({ timers: clock.timers });
    const answers = [request(), request({ container: 'toolbox-b-2' })].map((q) => inbox.ask(q, never(), HOUR));
    let changes = 0;
    inbox.onDidChange(() => changes++);
    inbox.dispose();
    for (const a of answers) assert.equal(await settled(a), true, 'settled when the window goes away');
    for (const a of await Promise.all(answers)) {
      assert.deepEqual(a, { decision: 'ask', reason: ASK_REASONS.closed, withdrawn: true }, 'withdrawn: the hook asks the next window');
    }
    assert.equal(inbox.size, 0);
    assert.equal(clock.live.size, 0, 'no timer left behind');
    assert.equal(changes, 1, 'one change for the lot');
    const later = inbox.ask(request(), never(), HOUR);
    assert.equal(await settled(later), true, 'a question after the close is answered at once');
    assert.deepEqual(await later, { decision: 'ask', reason: ASK_REASONS.closed, withdrawn: true });
    assert.equal(inbox.size, 0);
  });

  it('sends an allow for the session only when the agent can remember it; else an allow for this once', async () => {
    const inbox = new ApprovalInbox({ timers: fakeTimers().timers });
    const can = request({ canAllowForSession: true });
    const cannot = request({ canAllowForSession: false, agent: 'codex' });
    const a = inbox.ask(can, never(), HOUR);
    const b = inbox.ask(cannot, never(), HOUR);
    inbox.answer(can.id, { decision: 'allow', scope: 'session' });
    inbox.answer(cannot.id, { decision: 'allow', scope: 'session' });
    assert.deepEqual(await a, { decision: 'allow', scope: 'session' });
    assert.deepEqual(await b, { decision: 'allow', scope: 'once' });
  });

  it('keeps no scope on a deny', async () => {
    const inbox = new ApprovalInbox({ timers: fakeTimers().timers });
    const q = request();
    const a = inbox.ask(q, never(), HOUR);
    inbox.answer(q.id, { decision: 'deny', scope: 'session', reason: 'no' });
    assert.deepEqual(await a, { decision: 'deny', reason: 'no' });
  });

  it('stops listening to the hook once answered', async () => {
    const inbox = new ApprovalInbox({ timers: fakeTimers().timers });
    const hook = new AbortController();
    const q = request();
    let changes = 0;
    const a = inbox.ask(q, hook.signal, HOUR);
    inbox.answer(q.id, { decision: 'allow' });
    inbox.onDidChange(() => changes++);
    hook.abort();
    assert.equal((await a).decision, 'allow');
    assert.equal(changes, 0, 'the hook hanging up after the answer changes nothing');
  });
});

describe('toolbox.approvals.timeoutSeconds', () => {
  it('defaults to AGENT_HOOK_LIMITS.defaultTimeoutS and is clamped to 10 s … maxTimeoutS', () => {
    assert.equal(approvalTimeoutMs(undefined), AGENT_HOOK_LIMITS.defaultTimeoutS * 1000);
    assert.equal(approvalTimeoutMs('60'), AGENT_HOOK_LIMITS.defaultTimeoutS * 1000);
    assert.equal(approvalTimeoutMs(Number.NaN), AGENT_HOOK_LIMITS.defaultTimeoutS * 1000);
    assert.equal(approvalTimeoutMs(60), 60_000);
    assert.equal(approvalTimeoutMs(1), MIN_APPROVAL_TIMEOUT_S * 1000);
    assert.equal(approvalTimeoutMs(-5), 10_000);
    assert.equal(approvalTimeoutMs(1e9), AGENT_HOOK_LIMITS.maxTimeoutS * 1000);
  });
});

describe('a question answered in the agent’s terminal leaves the inbox', () => {
  const event = (over: Partial<AgentEvent> = {}): AgentEvent => ({
    container: 'toolbox-app-1234abcd',
    workspaceFolder: '/src/app',
    agent: 'claude',
    agentSession: 'a1',
    session: 's1',
    at: Date.now(),
    kind: 'command',
    tool: 'Bash',
    text: 'npm test',
    ...over,
  });

  it('when the same tool call of the same agent session is reported done (allowed there)', async () => {
    const inbox = new ApprovalInbox();
    const mine = inbox.ask(request({ id: 'm', agentSession: 'a1' }), never(), HOUR);
    const other = inbox.ask(request({ id: 'o', agentSession: 'a2' }), never(), HOUR);
    const otherBox = inbox.ask(request({ id: 'c', agentSession: 'a1', container: 'toolbox-b-1' }), never(), HOUR);
    assert.equal(inbox.leftBehind(event({ text: 'npm run build' })), 0, 'another command');
    assert.equal(inbox.leftBehind(event({ tool: 'Write' })), 0, 'another tool');
    assert.equal(inbox.leftBehind(event({ agentSession: undefined })), 0, 'no agent session: nothing to match');
    assert.equal(inbox.leftBehind(event({ at: Date.now() - 60_000 })), 0, 'a call from before the question');
    assert.equal(inbox.leftBehind(event()), 1);
    assert.deepEqual(await mine, { decision: 'ask', reason: ASK_REASONS.terminal });
    assert.equal(inbox.howLeft('m'), ASK_REASONS.terminal);
    assert.deepEqual(
      inbox.pending().map((q) => q.id),
      ['o', 'c'],
      'another session’s and another container’s stay',
    );
    inbox.dispose();
    await Promise.all([other, otherBox]);
  });

  it('when its turn or session ends, or the user gives it a new prompt (denied or interrupted there)', async () => {
    for (const kind of ['stop', 'session-end', 'prompt'] as const) {
      const inbox = new ApprovalInbox();
      const q = inbox.ask(request({ agentSession: 'a1', subject: { kind: 'command', text: 'rm -rf x' } }), never(), HOUR);
      assert.equal(inbox.leftBehind(event({ kind: 'notification', text: 'needs you' })), 0, 'a notification says nothing');
      assert.equal(inbox.leftBehind(event({ kind, at: Date.now() - 5_000 })), 0, `a ${kind} from before the question, reported late`);
      assert.equal(inbox.leftBehind(event({ kind, text: 'x' })), 1, kind);
      assert.equal((await q).reason, ASK_REASONS.terminal);
    }
  });
});
