import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { AGENT_STREAM_LIMITS, AgentStreamRecognizer } from '../../extension/src/ui/agents/agentStream';
import { agentOf, AgentStateTracker, type AgentKind, type AgentStatus } from '../../extension/src/ui/agents/agentState';
import { AGENT_FIXTURES } from '../fixtures/agentOutput';

function tracked(agent?: AgentKind) {
  let now = 1_000_000;
  const changes: AgentStatus[] = [];
  const t = new AgentStateTracker(
    agent,
    (s) => changes.push(s),
    () => now,
  );
  const r = new AgentStreamRecognizer((s) => t.signal(s));
  return {
    t,
    changes,
    out: (text: string | Buffer) => r.feed(Buffer.isBuffer(text) ? text : Buffer.from(text)),
    tick: (ms: number) => (now += ms),
    states: () => changes.map((c) => c.state),
  };
}

describe('agent state from the stream', () => {
  it('replayed history (a reload): a notification or bell in it is no "needs you"; its title still names the agent', () => {
    const t = new AgentStateTracker(undefined, () => undefined);
    const changes: AgentStatus[] = [];
    const r = new AgentStreamRecognizer((sig) => t.signal(sig, true));
    const watched = new AgentStateTracker(undefined, (st) => changes.push(st));
    const rw = new AgentStreamRecognizer((sig) => watched.signal(sig, true));
    for (const f of [AGENT_FIXTURES[0]!, AGENT_FIXTURES[1]!]) {
      r.feed(f.bytes);
      rw.feed(f.bytes);
    }
    assert.equal(t.current.agent, 'claude');
    assert.equal(t.current.state, 'working'); // named by its title while idle: working, as live
    assert.equal(t.current.message, undefined);
    assert.ok(!changes.some((c) => c.state === 'needsYou'), JSON.stringify(changes));
    // The same bytes live do ask for the user.
    const live = tracked();
    live.out(AGENT_FIXTURES[1]!.bytes);
    assert.equal(live.t.current.state, 'needsYou');
  });

  it('a launched agent starts working; a shell at its prompt is idle', () => {
    assert.equal(tracked('claude').t.current.state, 'working');
    assert.equal(tracked().t.current.state, 'idle');
    assert.equal(tracked().t.current.agent, 'shell');
  });

  it('Claude Code asking for a permission: needs you with its message; a keystroke returns it to working', () => {
    const s = tracked();
    s.out(AGENT_FIXTURES[0]!.bytes);
    assert.equal(s.t.current.agent, 'claude'); // from its title
    assert.equal(s.t.current.state, 'needsYou');
    assert.equal(s.t.current.message, 'Claude needs your permission to use Bash');
    assert.deepEqual(s.states(), ['working', 'needsYou']);
    s.tick(5000);
    s.t.input('1');
    assert.equal(s.t.current.state, 'working');
    assert.equal(s.t.current.message, undefined);
    assert.equal(s.t.current.since, 1_005_000);
  });

  it('Codex approval through OSC 9: needs you', () => {
    const s = tracked('codex');
    s.out(AGENT_FIXTURES[2]!.bytes);
    assert.equal(s.t.current.state, 'needsYou');
    assert.equal(s.t.current.message, 'Approval requested: cargo test --all');
  });

  it('shell integration: idle at the prompt, working while a command runs', () => {
    const s = tracked();
    s.out('\x1b]633;A\x07$ \x1b]633;B\x07');
    s.t.input('l');
    s.t.input('s');
    assert.equal(s.t.current.state, 'idle');
    s.t.input('\r');
    assert.equal(s.t.current.state, 'working');
    s.out('\x1b]633;C\x07out\r\n\x1b]633;D;0\x07\x1b]633;A\x07');
    assert.equal(s.t.current.state, 'idle');
  });

  it('a plain shell without shell integration stays idle on Enter (nothing would say it is back)', () => {
    const s = tracked();
    s.t.input('ls\r');
    assert.equal(s.t.current.state, 'idle');
  });

  it('a bell right after a keystroke is the shell answering it, not a call', () => {
    const s = tracked('claude');
    s.t.input('\t');
    s.tick(AGENT_STREAM_LIMITS.bellAfterInputMs - 1);
    s.out('\x07');
    assert.equal(s.t.current.state, 'working');
    s.tick(1);
    s.out('\x07');
    assert.equal(s.t.current.state, 'needsYou');
    assert.equal(s.t.current.message, 'The terminal rang its bell.');
    const n = tracked('claude');
    n.out('\x1b]9;Claude is waiting for your input\x07\x07');
    assert.equal(n.t.current.message, 'Claude is waiting for your input');
  });

  it('a repeated notification keeps the time it started needing you; ended is final', () => {
    const s = tracked('claude');
    s.out('\x1b]9;waiting\x07');
    const since = s.t.current.since;
    s.tick(60_000);
    s.out('\x1b]9;waiting\x07');
    assert.equal(s.t.current.since, since);
    assert.equal(s.changes.length, 1);
    s.t.end();
    s.out('\x1b]9;again\x07');
    s.t.input('x');
    assert.equal(s.t.current.state, 'ended');
  });

  it('a spinner title or progress while idle means working; neither overrides needs you', () => {
    const s = tracked();
    s.out('\x1b]0;⠂ Working on it\x07');
    assert.equal(s.t.current.state, 'working');
    s.out('\x1b]9;Claude is waiting for your input\x07\x1b]0;⠐ Working on it\x07\x1b]9;4;3\x07');
    assert.equal(s.t.current.state, 'needsYou');
    const p = tracked('claude');
    p.out('\x1b]133;A\x07\x1b]9;4;1;10\x07');
    assert.equal(p.t.current.state, 'working');
  });

  it("the launcher's exit mark: the agent ended with its status; the shell's own prompt does not take over", () => {
    const s = tracked('claude');
    s.tick(2000);
    s.out('error: no network\r\n\x1b]7717;agent-exit;1;claude\x07');
    assert.deepEqual(s.t.current, { agent: 'claude', state: 'ended', since: 1_002_000, exitCode: 1 });
    // The shell that follows prints its prompt with its marks, rings, sets a title: still the agent's end.
    s.out('\x1b]133;D;0\x07\x1b]133;A\x07% \x1b]133;B\x07\x07\x1b]2;zsh\x07\x1b]9;4;1\x07\x1b]9;hi\x07');
    assert.equal(s.t.current.state, 'ended');
    assert.equal(s.t.current.exitCode, 1);
    s.t.input('l');
    assert.equal(s.t.current.state, 'ended');
    // Enter: the shell takes over, at its prompt; its C mark says a command runs; A that it is back.
    s.tick(1000);
    s.t.input('\r');
    assert.deepEqual(s.t.current, { agent: 'shell', state: 'idle', since: 1_003_000, title: 'zsh' });
    s.out('\x1b]133;C\x07');
    assert.equal(s.t.current.state, 'working');
    s.out('ok\r\n\x1b]133;D;0\x07\x1b]133;A\x07');
    assert.equal(s.t.current.state, 'idle');
  });

  it('the exit mark names the agent when the launch did not (an agent worktree); a C mark after it is the shell working', () => {
    const s = tracked();
    s.out('\x1b]7717;agent-exit;3;codex\x07');
    assert.deepEqual([s.t.current.agent, s.t.current.state, s.t.current.exitCode], ['codex', 'ended', 3]);
    s.out('\x1b]133;A\x07\x1b]133;C\x07');
    assert.deepEqual([s.t.current.agent, s.t.current.state, s.t.current.exitCode], ['shell', 'working', undefined]);
  });

  it('a malformed exit mark is nothing; status 0 is an end too', () => {
    for (const bad of ['agent-exit;256', 'agent-exit;-1', 'agent-exit;', 'agent-exit;1x', 'exit;1', 'agent-exit;1;a;b']) {
      const s = tracked('claude');
      s.out(`\x1b]7717;${bad}\x07`);
      assert.equal(s.t.current.state, 'working', bad);
    }
    const z = tracked('codex');
    z.out('\x1b]7717;agent-exit;0\x07');
    assert.deepEqual([z.t.current.state, z.t.current.exitCode], ['ended', 0]);
  });

  it('after a reload the replayed exit mark brings "ended" back, with its status; a command run after it replays as the shell', () => {
    const replay = (bytes: string) => {
      const t = new AgentStateTracker('claude', () => undefined);
      new AgentStreamRecognizer((sig) => t.signal(sig, true)).feed(Buffer.from(bytes));
      return t.current;
    };
    const ended = replay('Welcome\r\n\x1b]7717;agent-exit;1;claude\x07\x1b]133;A\x07% \x1b]133;B\x07');
    assert.deepEqual([ended.agent, ended.state, ended.exitCode], ['claude', 'ended', 1]);
    const used = replay(
      '\x1b]7717;agent-exit;1;claude\x07\x1b]133;A\x07% \x1b]133;B\x07ls\r\n\x1b]133;C\x07a b\r\n\x1b]133;D;0\x07\x1b]133;A\x07',
    );
    assert.deepEqual([used.agent, used.state], ['shell', 'idle']);
  });

  it('the session ending: ended with the exit code; an agent that ended keeps its own status', () => {
    const s = tracked();
    s.t.end(130);
    assert.deepEqual([s.t.current.state, s.t.current.exitCode], ['ended', 130]);
    const a = tracked('claude');
    a.out('\x1b]7717;agent-exit;2;claude\x07');
    a.t.end(0);
    assert.deepEqual([a.t.current.agent, a.t.current.state, a.t.current.exitCode], ['claude', 'ended', 2]);
    a.out('\x1b]133;C\x07');
    a.t.input('\r');
    assert.equal(a.t.current.state, 'ended');
    const gone = tracked('codex');
    gone.t.end();
    assert.deepEqual([gone.t.current.state, gone.t.current.exitCode], ['ended', undefined]);
  });

  it('focusing the terminal clears "needs you" (the user sees what it asked); otherwise it changes nothing', () => {
    const s = tracked('claude');
    s.out('\x1b]9;Claude needs your permission\x07');
    assert.equal(s.t.current.state, 'needsYou');
    s.tick(3000);
    s.t.focused();
    assert.deepEqual([s.t.current.state, s.t.current.message, s.t.current.since], ['working', undefined, 1_003_000]);
    const idle = tracked();
    idle.t.focused();
    assert.equal(idle.t.current.state, 'idle');
    assert.equal(idle.changes.length, 0);
  });

  it("a plain shell with the image's shell integration: idle again once the command is done", () => {
    const s = tracked();
    s.out('\x1b]133;A\x07% \x1b]133;B\x07');
    s.t.input('echo ok\r');
    s.out('\r\n\x1b]133;C\x07ok\r\n\x1b]133;D;0\x07\x1b]133;A\x07% \x1b]133;B\x07');
    assert.equal(s.t.current.state, 'idle');
    assert.deepEqual(s.states(), ['working', 'idle']);
  });

  it('agentOf reads a command or title', () => {
    assert.equal(agentOf('claude --continue'), 'claude');
    assert.equal(agentOf('/usr/local/bin/codex'), 'codex');
    assert.equal(agentOf('✳ Claude Code'), 'claude');
    assert.equal(agentOf('zsh -l'), undefined);
    assert.equal(agentOf('claudette'), undefined);
  });
});
