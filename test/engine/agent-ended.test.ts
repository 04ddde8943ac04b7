/**
 * The second day, issue 26 items 4 and 9, through a real terminal on a real container of the test
 * runtime image: Start Claude Code whose agent (a stand-in `claude` on the mounted npm-global
 * PATH, printing a Claude-like error) exits 3 within a second reads "ended (exit 3)" and stays so
 * while the shell that follows sits at its prompt; after a reload (a new backend reattaching from
 * the record) the replayed exit mark brings "ended (exit 3)" back; the user's first command hands
 * the terminal to the shell. A plain zsh is working while `echo ok` runs and idle at its prompt
 * after it (the image's shell integration). Before the fix the agent read "working" for ever and
 * the shell never said it was back.
 */
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { objectNames } from '../../extension/src/contract/objects';
import type { SessionRecord, StartedShell } from '../../extension/src/backend/api';
import { quickExit, quickExitText, type AgentKind, type AgentStatus } from '../../extension/src/ui/agents/agentState';
import { docker, removeNamespaceObjects } from '../support/docker';
import { testBackend, type TestBackend } from '../support/backend';
import { ensureTestRuntimeImage } from '../support/image';
import { screen } from '../support/screen';
import { installStandInAgent } from '../support/standInAgent';
import { installVscodeLite, silentLog } from '../support/vscodeLite';

installVscodeLite();
/* eslint-disable @typescript-eslint/no-require-imports */
const { ToolboxShellPty } =
  require('../../extension/src/ui/shells/toolboxShellPty') as typeof import('../../extension/src/ui/shells/toolboxShellPty');
/* eslint-enable @typescript-eslint/no-require-imports */
type Pty = InstanceType<typeof ToolboxShellPty>;

const ESC = '\x1b';
const BEL = '\x07';
/** OSC 133;A: the shell is at its prompt (the image's shell integration). */
const PROMPT_MARK = new RegExp(`${ESC}\\]133;A${BEL}`);

/** Waits until the terminal's state matches. */
async function stateOf(pty: Pty, ok: (s: AgentStatus) => boolean, what: string, timeoutMs = 30_000): Promise<AgentStatus> {
  const end = Date.now() + timeoutMs;
  for (;;) {
    if (ok(pty.agentStatus)) return pty.agentStatus;
    if (Date.now() > end)
      throw new Error(`never ${what}; it is ${JSON.stringify(pty.agentStatus)}; it shows ${JSON.stringify(pty.transcript.slice(-400))}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

describe('agent state when the agent is gone, through a real terminal (issue 26, items 4 and 9)', () => {
  const names = objectNames(`tbxt${Math.random().toString(16).slice(2, 8)}`);
  let home: string;
  let folder: string;
  const backends: TestBackend[] = [];
  const ptys: Pty[] = [];

  before(async () => {
    const image = await ensureTestRuntimeImage();
    home = mkdtempSync(join(tmpdir(), 'tbxt-agent-ended-'));
    folder = join(home, 'project');
    mkdirSync(folder);
    writeFileSync(join(folder, '.toolbox.yaml'), `image: ${image}\npeer_messaging: false\n`);
    installStandInAgent(
      home,
      'claude',
      '#!/bin/sh\necho "Claude configuration file not found at: $HOME/.claude.json"\necho "  cp -f x y"\necho "Unable to connect to API"\nexit 3\n',
    );
  });

  after(async () => {
    for (const p of ptys) p.close();
    for (const b of backends) b.dispose();
    await removeNamespaceObjects(docker(), names).catch(() => undefined);
    rmSync(home, { recursive: true, force: true });
  });

  function newBackend(): TestBackend {
    const b = testBackend(names, home);
    backends.push(b);
    return b;
  }

  /** A terminal as the launcher makes it (ui/shells/shellLauncher.ts): the agent it was opened for, or a record's. */
  function terminal(container: string, start: (size: { cols: number; rows: number }) => Promise<StartedShell>, agent?: AgentKind) {
    const pty = new ToolboxShellPty({ container, start, log: silentLog as never, ...(agent ? { agent } : {}) });
    ptys.push(pty);
    const states: AgentStatus[] = [];
    pty.onDidChangeAgent((s) => states.push(s));
    const out = screen(pty);
    pty.open({ columns: 100, rows: 30 });
    return { pty, out, states };
  }

  it('an agent that exits 3 reads "ended (exit 3)", also after a reload; the shell takes over when used', async () => {
    const backend = newBackend();
    const prepared = await backend.prepareShell({ folder, agent: 'claude', peer: false });
    const session = await prepared.open({ log: () => undefined, step: () => undefined }, new AbortController().signal);
    assert.deepEqual(session.agentHomes, { claude: join(home, '.toolbox', '.claude'), codex: join(home, '.toolbox', '.codex') });
    let started: StartedShell | undefined;
    let launchedAt = 0;
    const t = terminal(
      session.name,
      async (size) => {
        started = await session.start(size);
        launchedAt = Date.now();
        return started;
      },
      'claude',
    );
    await t.out.waitFor(/Unable to connect to API/);
    const ended = await stateOf(t.pty, (s) => s.state === 'ended', 'ended');
    assert.deepEqual([ended.agent, ended.exitCode], ['claude', 3]);
    // Item 9: launched here and gone within seconds with an error: the user is told what to do, not what it printed.
    assert.ok(quickExit(ended, launchedAt));
    const told = quickExitText(session.name, ended, launchedAt, session.agentHomes?.claude);
    assert.match(told, /run claude, then type \/login/);
    assert.ok(told.includes(join(home, '.toolbox', '.claude')), told);
    assert.doesNotMatch(told, /cp -f|configuration file|Unable to connect/);

    // The shell that follows prints its prompt (with its marks): still the agent's end, and no zsh new-user menu.
    await t.out.waitFor(PROMPT_MARK);
    await new Promise((r) => setTimeout(r, 300));
    assert.deepEqual([t.pty.agentStatus.state, t.pty.agentStatus.exitCode], ['ended', 3]);
    assert.doesNotMatch(t.out.text, /zsh-newuser-install/);
    assert.ok(!t.states.some((s) => s.state === 'idle'), JSON.stringify(t.states));

    // The window goes away (the terminal detaches); a reloaded one reattaches from the record alone.
    const record: SessionRecord = started!.record!;
    t.pty.close();
    backend.dispose();
    const reloaded = newBackend();
    const again = await reloaded.reattachShell(record);
    assert.ok((again.replayBytes ?? 0) > 0, 'the holder replays the history');
    const back = terminal(record.container, () => Promise.resolve(again), 'claude');
    await back.out.waitFor(/Unable to connect to API/);
    const restored = await stateOf(back.pty, (s) => s.state === 'ended', 'ended after the reload');
    assert.deepEqual([restored.agent, restored.exitCode], ['claude', 3]);

    // The user runs a command in the shell: it is the shell's terminal now, working, then idle at its prompt.
    back.pty.handleInput('echo "after $((6*7))"\r');
    await back.out.waitFor(/after 42/);
    const idle = await stateOf(back.pty, (s) => s.agent === 'shell' && s.state === 'idle', 'the shell, idle');
    assert.equal(idle.exitCode, undefined);
    assert.ok(
      back.states.some((s) => s.agent === 'shell' && s.state === 'working'),
      JSON.stringify(back.states),
    );
  });

  it('a plain zsh: working while `echo ok` runs, idle at its prompt after it', async () => {
    const backend = newBackend();
    const prepared = await backend.prepareShell({ folder, peer: false });
    const session = await prepared.open({ log: () => undefined, step: () => undefined }, new AbortController().signal);
    const t = terminal(session.name, (size) => session.start(size));
    await t.out.waitFor(PROMPT_MARK);
    assert.equal(t.pty.agentStatus.state, 'idle');
    t.pty.handleInput('echo ok\r');
    await t.out.waitFor(new RegExp(`${ESC}\\]133;C${BEL}ok\r\n`));
    const s = await stateOf(t.pty, (st) => st.state === 'idle' && t.states.length >= 2, 'idle again');
    assert.equal(s.agent, 'shell');
    assert.deepEqual(
      t.states.map((st) => st.state),
      ['working', 'idle'],
    );
    assert.doesNotMatch(t.out.text, /zsh-newuser-install/);
  });
});
