/**
 * /approval and /agent-event through a real hub (unix socket and TCP): the body checks, the
 * container named by the token and never by the body, the question alive as long as the hook's
 * connection, and no path that answers "allow" without the editor saying so
 * (docs/decisions/0050-approvals-over-the-bridge.md).
 */
import assert from 'node:assert/strict';
import { request } from 'node:http';
import { after, before, describe, it } from 'node:test';
import { AGENT_HOOK_LIMITS } from '../../extension/src/contract/agentHook';
import { ROUTES } from '../../extension/src/contract/shims';
import { describeToolInput, oneLine, timelineKind } from '../../extension/src/plan/agentHooks';
import type { AgentEvent, ApprovalAnswer, ApprovalRequest } from '../../extension/src/bridge/route';
import { call, startRig, tcpTarget, unixTarget, type Rig } from './support';

interface Asked {
  request: ApprovalRequest;
  signal: AbortSignal;
  answer(a: ApprovalAnswer): void;
}

const question = (over: Record<string, unknown> = {}) => ({
  agent: 'claude',
  session: 's3',
  agent_session: 'abc-123',
  tool: 'Bash',
  input: { command: 'npm test', description: 'Run the tests' },
  cwd: '/workspace',
  session_rule: true,
  ...over,
});

describe('agent hook routes', () => {
  let rig: Rig;
  let other: Rig;
  const asked: Asked[] = [];
  const events: AgentEvent[] = [];
  let waiters: Array<() => void> = [];
  const nextAsk = () => new Promise<void>((r) => waiters.push(r));

  before(async () => {
    const hub = {
      askApproval: (request: ApprovalRequest, signal: AbortSignal) =>
        new Promise<ApprovalAnswer>((answer) => {
          asked.push({ request, signal, answer });
          for (const w of waiters) w();
          waiters = [];
        }),
      agentEvent: (event: AgentEvent) => void events.push(event),
    };
    rig = await startRig({ hub });
    other = await startRig({ hub });
  });
  after(async () => {
    await rig.cleanup();
    await other.cleanup();
  });

  it('holds the question until the editor answers, and passes the answer back', async () => {
    const reply = call(unixTarget(rig), ROUTES.approval, { token: rig.token, body: question() });
    await nextAsk();
    const q = asked.at(-1)!;
    assert.equal(q.request.container, rig.registration.key);
    assert.equal(q.request.workspaceFolder, rig.workspace);
    assert.equal(q.request.session, 's3');
    assert.equal(q.request.agentSession, 'abc-123');
    assert.deepEqual(q.request.subject, { kind: 'command', text: 'npm test' });
    assert.equal(q.request.reason, 'Run the tests');
    assert.equal(q.request.canAllowForSession, true);
    assert.match(q.request.id, /^[A-Za-z0-9_-]{16}$/);
    q.answer({ decision: 'allow', scope: 'session' });
    const r = await reply;
    assert.equal(r.status, 200);
    assert.deepEqual(JSON.parse(r.text), { decision: 'allow', scope: 'session' });
  });

  it('names the container by the token: a body cannot claim another container, over TCP either', async () => {
    const reply = call(tcpTarget(other), ROUTES.approval, { token: other.token, body: question() });
    await nextAsk();
    const q = asked.at(-1)!;
    assert.equal(q.request.container, other.registration.key);
    q.answer({ decision: 'deny', reason: 'not now' });
    assert.deepEqual(JSON.parse((await reply).text), { decision: 'deny', reason: 'not now' });
    const claimed = await call(unixTarget(rig), ROUTES.approval, {
      token: rig.token,
      body: question({ container: other.registration.key }),
    });
    assert.equal(claimed.status, 400);
    assert.match(claimed.text, /unknown field "container"/);
  });

  it('never lets a session scope through for an agent that cannot remember it', async () => {
    const reply = call(unixTarget(rig), ROUTES.approval, { token: rig.token, body: question({ agent: 'codex', session_rule: true }) });
    await nextAsk();
    const q = asked.at(-1)!;
    assert.equal(q.request.canAllowForSession, false);
    q.answer({ decision: 'allow', scope: 'session' });
    assert.deepEqual(JSON.parse((await reply).text), { decision: 'allow', scope: 'once' });
  });

  it('aborts the question when the hook hangs up (answered in the terminal)', async () => {
    const req = request({
      socketPath: rig.bridge.socketPath,
      path: ROUTES.approval,
      method: 'POST',
      headers: { Host: 'localhost', Authorization: `Bearer ${rig.token}`, 'Content-Type': 'application/json' },
    });
    req.on('error', () => undefined);
    req.end(JSON.stringify(question()));
    await nextAsk();
    const q = asked.at(-1)!;
    assert.equal(q.signal.aborted, false);
    const aborted = new Promise<void>((r) => q.signal.addEventListener('abort', () => r()));
    req.destroy();
    await aborted;
    q.answer({ decision: 'ask' });
  });

  it('tells the hook to ask again when the window withdraws the question (a reload)', async () => {
    const reply = call(unixTarget(rig), ROUTES.approval, { token: rig.token, body: question({ retry: 2 }) });
    await nextAsk();
    const q = asked.at(-1)!;
    assert.equal(q.request.retry, 2);
    q.answer({ decision: 'ask', withdrawn: true });
    const r = await reply;
    assert.equal(r.status, 503);
    assert.match(r.text, /ask again/);
  });

  it('refuses bodies that are not what the hook sends', async () => {
    const long = 'x'.repeat(AGENT_HOOK_LIMITS.textChars + 1);
    const manyKeys = Object.fromEntries(Array.from({ length: AGENT_HOOK_LIMITS.inputKeys + 1 }, (_, i) => [`k${i}`, 'v']));
    const cases: Array<[string, Record<string, unknown>, RegExp]> = [
      ['a made-up agent', question({ agent: 'gpt' }), /field "agent"/],
      ["a session id that is not the holder's", question({ session: '../s1' }), /field "session"/],
      ['a tool name with spaces', question({ tool: 'Bash; rm' }), /field "tool"/],
      ['a nested input value', question({ input: { command: { $gt: 1 } } }), /field "input.command"/],
      ['a text over the limit', question({ input: { command: long } }), /field "input.command"/],
      ['too many input keys', question({ input: manyKeys }), /at most 16 keys/],
      ['an input key with control characters', question({ input: { 'a\nb': 'x' } }), /field "input/],
    ];
    for (const [what, body, expect] of cases) {
      const r = await call(unixTarget(rig), ROUTES.approval, { token: rig.token, body });
      assert.equal(r.status, 400, what);
      assert.match(r.text, expect, what);
    }
    const big = await call(unixTarget(rig), ROUTES.approval, { token: rig.token, body: { ...question(), pad: 'y'.repeat(40_000) } });
    assert.equal(big.status, 413);
    const noToken = await call(unixTarget(rig), ROUTES.approval, { body: question() });
    assert.equal(noToken.status, 401);
  });

  it('answers "ask" at once in a window that takes no questions, never "allow"', async () => {
    const bare = await startRig();
    try {
      const r = await call(unixTarget(bare), ROUTES.approval, { token: bare.token, body: question() });
      assert.equal(r.status, 200);
      assert.equal((JSON.parse(r.text) as { decision: string }).decision, 'ask');
      const e = await call(unixTarget(bare), ROUTES.agentEvent, { token: bare.token, body: { agent: 'claude', event: 'Stop' } });
      assert.equal(e.status, 204);
    } finally {
      await bare.cleanup();
    }
  });

  it('takes timeline events: commands, commits, pushes, pull requests, files, usage', async () => {
    const send = (body: Record<string, unknown>) =>
      call(unixTarget(rig), ROUTES.agentEvent, { token: rig.token, body: { agent: 'claude', session: 's3', ...body } });
    const before = events.length;
    for (const command of ['ls -la', 'git -C /w commit -m "x"', 'git push -u origin HEAD', 'gh pr create --fill']) {
      assert.equal((await send({ event: 'PostToolUse', tool: 'Bash', input: { command } })).status, 204);
    }
    await send({ event: 'PostToolUse', tool: 'Write', input: { file_path: '/workspace/a.ts' } });
    await send({ event: 'Stop', usage: { input_tokens: 10, output_tokens: 20, cache_read_tokens: 5, cache_write_tokens: 1 } });
    await send({ event: 'Notification', message: 'Claude needs\u001b]8;;x\u0007 your\u202e permission' });
    await send({ event: 'UserPromptSubmit' });
    const got = events.slice(before);
    assert.deepEqual(
      got.map((e) => e.kind),
      ['command', 'git-commit', 'git-push', 'pr-create', 'file', 'stop', 'notification', 'prompt'],
    );
    assert.equal(got[0]!.tool, 'Bash', 'a finished tool call names its tool');
    assert.equal(got[7]!.text, 'a new prompt');
    const withPrompt = await send({ event: 'UserPromptSubmit', prompt: 'secret plans' });
    assert.equal(withPrompt.status, 400, 'a prompt text is never taken');
    assert.equal(got[0]!.container, rig.registration.key);
    assert.deepEqual(got[5]!.usage, { inputTokens: 10, outputTokens: 20, cacheReadTokens: 5, cacheWriteTokens: 1 });
    assert.equal(got[6]!.text, 'Claude needs ]8;;x your permission');
    // The time the agent fired it, when believable; the bridge's own otherwise.
    const fired = Date.now() - 5_000;
    await send({ event: 'Stop', at: fired });
    assert.equal(events.at(-1)!.at, fired);
    const sent = Date.now();
    await send({ event: 'Stop', at: 0 });
    assert.ok(events.at(-1)!.at >= sent, 'a time a minute or more away is not believed');
    const bad = await send({ event: 'Stop', usage: { input_tokens: -1, output_tokens: 0 } });
    assert.equal(bad.status, 400);
  });
});

describe('plan/agentHooks', () => {
  it('describes what a question is about', () => {
    assert.deepEqual(describeToolInput('Bash', { command: 'rm -rf build' }), { kind: 'command', text: 'rm -rf build' });
    assert.deepEqual(describeToolInput('Edit', { file_path: '/w/a.ts', command: 'x' }), { kind: 'file', text: '/w/a.ts' });
    assert.deepEqual(describeToolInput('WebFetch', { url: 'https://example.com' }), { kind: 'fetch', text: 'https://example.com' });
    assert.deepEqual(describeToolInput('Bash', { command: 'curl x', description: 'network-access api.example.com' }), {
      kind: 'network',
      text: 'api.example.com',
    });
    assert.deepEqual(describeToolInput('mcp__db__query', { query: 'select 1' }), { kind: 'tool', text: 'mcp__db__query: select 1' });
  });

  it('makes outside text one line with no controls or invisible reordering', () => {
    assert.equal(oneLine('a\r\nb\u0000c\u202ed\u200b'), 'a b cd');
    assert.equal(oneLine('x'.repeat(10), 5), 'xxxx…');
  });

  it('tells commits, pushes and pull requests from other commands', () => {
    assert.equal(timelineKind('Bash', { command: 'git commit -am wip' }), 'git-commit');
    assert.equal(timelineKind('Bash', { command: 'git --no-pager -c a=b push' }), 'git-push');
    assert.equal(timelineKind('Bash', { command: 'echo git commit' }), 'command');
    assert.equal(timelineKind('Bash', { command: 'cd x && git commit -m y' }), 'git-commit');
    assert.equal(timelineKind('Bash', { command: 'npm test; gh pr create --fill' }), 'pr-create');
    assert.equal(timelineKind('Bash', { command: 'git log' }), 'command');
    assert.equal(timelineKind('Read', { file_path: '/w/a' }), 'tool');
    assert.equal(timelineKind('Write', { file_path: '/w/a' }), 'file');
  });
});
