/**
 * Issue 28: what each agent session did (ui/agents/agentTimeline.ts): a ring of entries per session,
 * a bounded number of sessions (an ended one goes first, then the least recently updated), the
 * latest usage per session and its sums per container (a worktree's), the counts the session's
 * row shows, and the document Show Session Timeline opens.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { AgentEvent, AgentUsage } from '../../extension/src/bridge/route';
import { AGENT_HOOK_LIMITS } from '../../extension/src/contract/agentHook';
import {
  AgentTimeline,
  clockTime,
  sessionKeyOf,
  sumUsage,
  timelineDocument,
  timelineLine,
  timelineSuffix,
  tokenCount,
  UNKNOWN_SESSION,
} from '../../extension/src/ui/agents/agentTimeline';

const t0 = new Date(2026, 0, 5, 9, 30, 0).getTime();
let tick = 0;
function event(over: Partial<AgentEvent> = {}): AgentEvent {
  return {
    container: 'toolbox-app-1234abcd',
    workspaceFolder: '/src/app',
    agent: 'claude',
    session: 's1',
    at: t0 + tick++ * 1000,
    kind: 'command',
    text: 'npm test',
    ...over,
  };
}
const usage = (input: number, output: number, extra: Partial<AgentUsage> = {}): AgentUsage => ({
  inputTokens: input,
  outputTokens: output,
  cacheReadTokens: 0,
  cacheWriteTokens: 0,
  ...extra,
});

describe('the agent timeline', () => {
  it('keeps entries per container and session, oldest first', () => {
    const t = new AgentTimeline();
    t.record(event({ text: 'one' }));
    t.record(event({ session: 's2', text: 'other session' }));
    t.record(event({ container: 'toolbox-b-1', text: 'other container' }));
    t.record(event({ text: 'two' }));
    assert.deepEqual(
      t.forSession('toolbox-app-1234abcd', 's1').map((e) => e.text),
      ['one', 'two'],
    );
    assert.deepEqual(
      t.forSession('toolbox-app-1234abcd', 's2').map((e) => e.text),
      ['other session'],
    );
    assert.deepEqual(
      t.forSession('toolbox-b-1', 's1').map((e) => e.text),
      ['other container'],
    );
    assert.deepEqual(t.forSession('toolbox-app-1234abcd', 's9'), []);
    assert.equal(t.summary('toolbox-app-1234abcd', 's9'), undefined);
  });

  it('orders entries by when the agent fired them, not by when their reports arrived', () => {
    const t = new AgentTimeline();
    t.record(event({ at: t0 + 1000, text: 'first' }));
    t.record(event({ at: t0 + 3000, kind: 'stop', text: 'finished its turn' }));
    t.record(event({ at: t0 + 2000, text: 'last command, reported late' }));
    assert.deepEqual(
      t.forSession('toolbox-app-1234abcd', 's1').map((e) => e.text),
      ['first', 'last command, reported late', 'finished its turn'],
    );
  });

  it("keys a session by the held session, else the agent's own session id, else unknown", () => {
    assert.equal(sessionKeyOf({ session: 's3', agentSession: 'abc' }), 's3');
    assert.equal(sessionKeyOf({ agentSession: 'abc' }), 'abc');
    assert.equal(sessionKeyOf({}), UNKNOWN_SESSION);
    const t = new AgentTimeline();
    t.record(event({ session: undefined, agentSession: 'abc' }));
    t.record(event({ session: undefined }));
    assert.equal(t.forSession('toolbox-app-1234abcd', 'abc').length, 1);
    assert.equal(t.forSession('toolbox-app-1234abcd', UNKNOWN_SESSION).length, 1);
  });

  it('keeps the last timelinePerSession entries of a session, and counts every one received', () => {
    const t = new AgentTimeline();
    const n = AGENT_HOOK_LIMITS.timelinePerSession + 25;
    for (let i = 0; i < n; i++) t.record(event({ text: `cmd ${i}` }));
    const kept = t.forSession('toolbox-app-1234abcd', 's1');
    assert.equal(kept.length, AGENT_HOOK_LIMITS.timelinePerSession);
    assert.equal(kept[0]!.text, 'cmd 25');
    assert.equal(kept.at(-1)!.text, `cmd ${n - 1}`);
    const summary = t.summary('toolbox-app-1234abcd', 's1')!;
    assert.equal(summary.events, n);
    assert.equal(summary.commands, n, 'the counts are not limited to the ring');
  });

  it('hands out copies: changing what forSession returned changes nothing kept', () => {
    const t = new AgentTimeline();
    t.record(event());
    (t.forSession('toolbox-app-1234abcd', 's1') as AgentEvent[]).length = 0;
    assert.equal(t.forSession('toolbox-app-1234abcd', 's1').length, 1);
  });

  it('keeps at most timelineSessions sessions: the least recently updated goes', () => {
    const t = new AgentTimeline(10, 3);
    t.record(event({ session: 's1' }));
    t.record(event({ session: 's2' }));
    t.record(event({ session: 's3' }));
    t.record(event({ session: 's1' })); // s1 is now the most recent; s2 the least
    t.record(event({ session: 's4' }));
    assert.equal(t.size, 3);
    assert.deepEqual(
      t.list().map((s) => s.sessionId),
      ['s4', 's1', 's3'],
    );
    assert.equal(t.summary('toolbox-app-1234abcd', 's2'), undefined);
  });

  it('lets an ended session go before a live one, even a more recently updated ended one', () => {
    const t = new AgentTimeline(10, 3);
    t.record(event({ session: 's1' }));
    t.record(event({ session: 's2' }));
    t.record(event({ session: 's3', kind: 'session-end', text: 'ended' }));
    t.record(event({ session: 's4' }));
    assert.deepEqual(
      t
        .list()
        .map((s) => s.sessionId)
        .sort(),
      ['s1', 's2', 's4'],
    );
    assert.ok(t.list().every((s) => !s.ended));
  });

  it('bounds the sessions with the contract limit by default', () => {
    const t = new AgentTimeline();
    for (let i = 0; i < AGENT_HOOK_LIMITS.timelineSessions + 5; i++) t.record(event({ session: `s${i}` }));
    assert.equal(t.size, AGENT_HOOK_LIMITS.timelineSessions);
    assert.equal(t.summary('toolbox-app-1234abcd', 's0'), undefined);
    assert.ok(t.summary('toolbox-app-1234abcd', `s${AGENT_HOOK_LIMITS.timelineSessions + 4}`));
  });

  it('counts commands, distinct files written, commits, pushes and pull requests', () => {
    const t = new AgentTimeline();
    t.record(event({ kind: 'command', text: 'npm test' }));
    t.record(event({ kind: 'file', text: 'src/a.ts' }));
    t.record(event({ kind: 'file', text: 'src/a.ts' }));
    t.record(event({ kind: 'file', text: 'src/b.ts' }));
    t.record(event({ kind: 'git-commit', text: 'git commit -m x' }));
    t.record(event({ kind: 'git-push', text: 'git push' }));
    t.record(event({ kind: 'pr-create', text: 'gh pr create' }));
    t.record(event({ kind: 'tool', text: 'WebSearch' }));
    t.record(event({ kind: 'stop', text: 'finished its turn' }));
    const s = t.summary('toolbox-app-1234abcd', 's1')!;
    assert.deepEqual(
      { commands: s.commands, files: s.files, commits: s.commits, pushes: s.pushes, prs: s.prs, events: s.events },
      { commands: 4, files: 2, commits: 1, pushes: 1, prs: 1, events: 9 },
    );
  });

  it('keeps the latest usage of a session (it replaces the earlier), per agent session, summed', () => {
    const t = new AgentTimeline();
    t.record(event({ agentSession: 'a', kind: 'stop', usage: usage(100, 10) }));
    t.record(event({ agentSession: 'a', kind: 'stop', usage: usage(300, 30) }));
    assert.deepEqual(t.summary('toolbox-app-1234abcd', 's1')!.usage, usage(300, 30));
    // The agent started again in the same terminal: a second agent session, added.
    t.record(event({ agentSession: 'b', kind: 'session-end', usage: usage(5, 1) }));
    assert.deepEqual(t.summary('toolbox-app-1234abcd', 's1')!.usage, usage(305, 31));
  });

  it("sums a container's usage over its sessions (a worktree's container is the worktree), and only its own", () => {
    const t = new AgentTimeline();
    t.record(event({ session: 's1', usage: usage(100, 10, { cacheReadTokens: 7, costUsd: 0.5 }) }));
    t.record(event({ session: 's2', usage: usage(200, 20, { cacheWriteTokens: 3, costUsd: 0.25 }) }));
    t.record(event({ session: 's3' }));
    t.record(event({ container: 'toolbox-other-1', usage: usage(9999, 9999) }));
    assert.deepEqual(t.usageForContainer('toolbox-app-1234abcd'), {
      inputTokens: 300,
      outputTokens: 30,
      cacheReadTokens: 7,
      cacheWriteTokens: 3,
      costUsd: 0.75,
    });
    assert.equal(t.usageForContainer('toolbox-none-1'), undefined);
    assert.equal(t.summary('toolbox-app-1234abcd', 's3')!.usage, undefined);
  });

  it('sums a cost only when every usage has one', () => {
    assert.equal(sumUsage([usage(1, 1, { costUsd: 1 }), usage(1, 1)])!.costUsd, undefined);
    assert.equal(sumUsage([]), undefined);
  });

  it('fires a change for each entry', () => {
    const t = new AgentTimeline();
    let changes = 0;
    const sub = t.onDidChange(() => changes++);
    t.record(event());
    t.record(event());
    sub.dispose();
    t.record(event());
    assert.equal(changes, 2);
  });
});

describe('the timeline in words', () => {
  it("the session row's suffix: counts and tokens, nothing for nothing", () => {
    assert.equal(timelineSuffix(undefined), '');
    assert.equal(timelineSuffix({ commands: 0, files: 0, commits: 0, pushes: 0, prs: 0, events: 1 }), '');
    assert.equal(
      timelineSuffix({ commands: 12, files: 3, commits: 1, pushes: 2, prs: 1, events: 20, usage: usage(40_000, 5_000) }),
      ' · 12 cmds · 3 files · 1 commit · 2 pushes · 1 PR · 45k tokens',
    );
    assert.equal(
      timelineSuffix({ commands: 1, files: 1, commits: 2, pushes: 1, prs: 2, events: 5 }),
      ' · 1 cmd · 1 file · 2 commits · 1 push · 2 PRs',
    );
  });

  it('token counts as a person reads them', () => {
    assert.equal(tokenCount(980), '980');
    assert.equal(tokenCount(1000), '1k');
    assert.equal(tokenCount(1250), '1.3k');
    assert.equal(tokenCount(45_000), '45k');
    assert.equal(tokenCount(450_400), '450k');
    assert.equal(tokenCount(1_200_000), '1.2M');
    assert.equal(tokenCount(3_000_000), '3M');
  });

  it('one entry a line: HH:MM:SS  kind  text, the text on one line', () => {
    const e = event({ at: t0, kind: 'git-commit', text: 'git commit -m "a\nToolbox: b"' });
    assert.equal(clockTime(t0), '09:30:00');
    assert.equal(timelineLine(e), '09:30:00  git-commit     git commit -m "a Toolbox: b"');
  });

  it("the document: the session's entries, then usage per session and the container's total", () => {
    const t = new AgentTimeline();
    t.record(event({ at: t0, workspaceFolder: '/src/app/.worktrees/tbx-feat-x', text: 'npm test' }));
    t.record(event({ at: t0 + 1000, kind: 'stop', text: 'finished its turn', usage: usage(1200, 300) }));
    t.record(event({ session: 's2', usage: usage(100, 20) }));
    const doc = timelineDocument(t, 'toolbox-app-1234abcd', 's1');
    const lines = doc.split('\n');
    assert.equal(lines[0], 'Claude Code in toolbox-app-1234abcd, session s1');
    assert.match(doc, /^Folder: \/src\/app\/\.worktrees\/tbx-feat-x \(the agent worktree of branch feat-x\)$/m);
    assert.ok(lines.includes('09:30:00  command        npm test'));
    assert.ok(lines.includes('09:30:01  stop           finished its turn'));
    assert.ok(lines.includes('  s1 (this one): 1,200 input · 300 output · 0 cache read · 0 cache write tokens'));
    assert.ok(lines.includes('  s2: 100 input · 20 output · 0 cache read · 0 cache write tokens'));
    assert.ok(lines.includes('  the worktree, every session: 1,300 input · 320 output · 0 cache read · 0 cache write tokens'));
    assert.match(timelineDocument(t, 'toolbox-app-1234abcd', 'nothing'), /Nothing recorded for this session/);
  });
});
