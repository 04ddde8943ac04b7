import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { AGENT_STREAM_LIMITS } from '../../extension/src/ui/agentStream';
import { agentOf, AgentStateTracker, type AgentKind, type AgentStatus } from '../../extension/src/ui/agentState';
import { AgentStreamRecognizer } from '../../extension/src/ui/agentStream';
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

  it('agentOf reads a command or title', () => {
    assert.equal(agentOf('claude --continue'), 'claude');
    assert.equal(agentOf('/usr/local/bin/codex'), 'codex');
    assert.equal(agentOf('✳ Claude Code'), 'claude');
    assert.equal(agentOf('zsh -l'), undefined);
    assert.equal(agentOf('claudette'), undefined);
  });
});
