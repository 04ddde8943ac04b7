/**
 * Issue 17 in the UI: a session's state in the tree (under its container), the tab's name, the
 * nudge's rule and text, the status bar's count; and the terminal itself (ToolboxShellPty, on the
 * stand-in vscode module) writing every byte unchanged while it recognises the signals.
 */
import assert from 'node:assert/strict';
import { PassThrough } from 'node:stream';
import { describe, it } from 'node:test';
import { containerSummary, viewState } from '../support/summary';
import type { StartedShell } from '../../extension/src/backend/api';
import type { ContainerSummary } from '../../extension/src/ui/views/model';
import {
  AGENT_QUICK_EXIT_MS,
  needsYouStatus,
  nudgeSetting,
  nudgeText,
  quickExit,
  quickExitText,
  shouldNudge,
  terminalName,
  type AgentStatus,
} from '../../extension/src/ui/agents/agentState';
import { agentRowItem, timeInState, type AgentRowInput } from '../../extension/src/ui/views/treeItems';
import { COMMAND_LABELS } from '../../extension/src/contract/manifest';
import { workspacesNodes } from '../../extension/src/ui/views/treeNodes';
import { installVscodeLite, silentLog } from '../support/vscodeLite';
import { AGENT_FIXTURES } from '../fixtures/agentOutput';

const now = Date.UTC(2026, 11, 3, 12, 0, 0);
const needs: AgentStatus = {
  agent: 'claude',
  state: 'needsYou',
  since: now - 3 * 60_000,
  message: 'Claude needs your permission to use Bash',
};

const container = (over: Partial<ContainerSummary> = {}) =>
  containerSummary({ mountsSocketVolume: false, pidMode: '', peer: false, ...over });

describe('a session in the tree', () => {
  const holder = { containerSocket: '/run/s.sock', hostSocket: '/tmp/r/s.sock', user: '1000:1000' };
  const shells = [
    { id: 's1', pid: 31, command: 'claude', started: now - 10 * 60_000, attached: 1 },
    { id: 's2', pid: 77, command: '/bin/zsh -l', started: now - 3 * 3_600_000, attached: 0 },
  ];
  const state = viewState([container({ holder, shells })], { takenAt: now });
  const agents: AgentRowInput[] = [
    { key: 1, container: 'toolbox-app-1234abcd', title: 'Toolbox: app', sessionId: 's1', status: needs },
    { key: 2, container: 'toolbox-app-1234abcd', title: 'Toolbox: app (2)', status: { agent: 'shell', state: 'idle', since: now } },
    { key: 3, container: 'toolbox-other', title: 'Toolbox: other', status: { agent: 'codex', state: 'working', since: now } },
  ];

  it("a held shell shown in this window's terminal is that session's row: agent, state, time, message; a click focuses it", () => {
    const [node] = workspacesNodes(state, ['/src/app'], '', agents, now);
    const rows = node?.children ?? [];
    assert.deepEqual(
      rows.map((r) => [r.label, r.description, r.icon?.id, r.contextValue, r.command, r.commandArgs]),
      [
        [
          'claude',
          'needs you · 3 min · “Claude needs your permission to use Bash”',
          'bell-dot',
          'heldShell.attached.agent.needsYou',
          COMMAND_LABELS.focusTerminal.command,
          [1],
        ],
        ['zsh -l', 'detached · started 3 h ago', 'debug-disconnect', 'heldShell.detached', 'toolbox.attachShell', undefined],
        ['shell', 'idle · just now', 'circle-large-outline', 'agent.idle', COMMAND_LABELS.focusTerminal.command, [2]],
      ],
    );
    // Attach and End still find the held session behind the row.
    assert.equal(rows[0]?.shell?.id, 's1');
    assert.match(rows[0]?.tooltip ?? '', /Click to focus its terminal\./);
  });

  it('without agents the held shells read as before', () => {
    const [node] = workspacesNodes(state, ['/src/app'], '', [], now);
    assert.deepEqual(
      node?.children?.map((r) => r.contextValue),
      ['heldShell.attached', 'heldShell.detached'],
    );
  });

  it('each state has its own icon and words', () => {
    const row = (s: AgentStatus['state']) =>
      agentRowItem({ key: 1, container: 'c', title: 't', status: { agent: 'codex', state: s, since: now } }, now);
    assert.deepEqual(
      (['working', 'needsYou', 'idle', 'ended'] as const).map((s) => [row(s).icon.id, row(s).description]),
      [
        ['loading~spin', 'working · just now'],
        ['bell-dot', 'needs you · just now'],
        ['circle-large-outline', 'idle · just now'],
        ['circle-slash', 'ended · just now'],
      ],
    );
    // An ended agent says how it ended, and since when.
    const ended = agentRowItem(
      {
        key: 1,
        container: 'c',
        title: 'Toolbox: app · Claude Code',
        status: { agent: 'claude', state: 'ended', since: now - 120_000, exitCode: 1 },
      },
      now,
    );
    assert.deepEqual([ended.label, ended.description], ['claude', 'ended (exit 1) · 2 min ago']);
    assert.match(ended.tooltip, /^Toolbox: app · Claude Code: claude, ended \(exit 1\) since /);
    assert.equal(timeInState(now - 2 * 3_600_000, now), '2 h');
    assert.equal(timeInState(now - 3 * 86_400_000, now), '3 days');
  });
});

describe('an agent that quits right after its start (issue 26 item 9)', () => {
  const ended = (agent: AgentStatus['agent'], exitCode: number | undefined, since: number): AgentStatus => ({
    agent,
    state: 'ended',
    since,
    ...(exitCode !== undefined ? { exitCode } : {}),
  });

  it('is told only for an agent launched here that ends with an error within AGENT_QUICK_EXIT_MS', () => {
    const t0 = 5_000_000;
    assert.equal(quickExit(ended('claude', 1, t0 + 2000), t0), true);
    assert.equal(quickExit(ended('codex', 127, t0 + AGENT_QUICK_EXIT_MS), t0), true);
    assert.equal(quickExit(ended('claude', 1, t0 + AGENT_QUICK_EXIT_MS + 1), t0), false); // it ran: its own words say why
    assert.equal(quickExit(ended('claude', 0, t0 + 2000), t0), false); // the user quit it
    assert.equal(quickExit(ended('claude', undefined, t0 + 2000), t0), false); // the container went away
    assert.equal(quickExit(ended('shell', 1, t0 + 2000), t0), false);
    assert.equal(quickExit(ended('claude', 1, t0 + 2000), undefined), false); // reattached after a reload: not launched here
    assert.equal(quickExit({ agent: 'claude', state: 'working', since: t0 }, t0), false);
  });

  it("says how to log in inside the container and where the login is kept; never the agent's output", () => {
    const t0 = 5_000_000;
    const claude = quickExitText('toolbox-app-1234abcd', ended('claude', 1, t0 + 2200), t0, '/home/u/.toolbox/.claude');
    assert.equal(
      claude,
      'Claude Code in toolbox-app-1234abcd exited with status 1, 2 s after it started. If it is not logged in here: in its terminal, run claude, then type /login. ' +
        'Its home in the container, /home/toolbox/.claude, is /home/u/.toolbox/.claude on this computer: the login (.credentials.json) is kept there for every Toolbox container. ' +
        'If the container has no network, it ends the same way. What it said is in the terminal.',
    );
    const codex = quickExitText(
      'toolbox-app-1234abcd',
      { ...ended('codex', 3, t0 + 500), title: 'configuration file not found cp -f x y' },
      t0,
      undefined,
    );
    assert.match(
      codex,
      /^Codex in toolbox-app-1234abcd exited with status 3, 1 s after it started\. If it is not logged in here: in its terminal, run codex login\. /,
    );
    assert.match(codex, /\/home\/toolbox\/\.codex, is not mounted from this computer/);
    assert.doesNotMatch(codex, /cp -f|configuration file/);
  });
});

describe('the tab, the nudge, the status bar', () => {
  it('the tab says when the session needs you, and only then', () => {
    assert.equal(terminalName('Toolbox: app', needs), 'Toolbox: app (needs you)');
    assert.equal(terminalName('Toolbox: app', { ...needs, state: 'working' }), 'Toolbox: app');
  });

  it('no nudge while the user looks at the terminal; the setting limits or stops it', () => {
    const looking = { windowFocused: true, activeTerminal: true };
    const elsewhere = { windowFocused: true, activeTerminal: false };
    const away = { windowFocused: false, activeTerminal: true };
    assert.deepEqual(
      (['always', 'whenUnfocused', 'never'] as const).map((s) => [
        shouldNudge(s, looking),
        shouldNudge(s, elsewhere),
        shouldNudge(s, away),
      ]),
      [
        [false, true, true],
        [false, false, true],
        [false, false, false],
      ],
    );
    assert.equal(nudgeSetting(undefined), 'always');
    assert.equal(nudgeSetting('whenUnfocused'), 'whenUnfocused');
    assert.equal(nudgeSetting('bogus'), 'always');
  });

  it('the nudge names the agent, the container and what it said', () => {
    assert.equal(
      nudgeText('toolbox-app-1234abcd', needs),
      'Claude Code in toolbox-app-1234abcd needs you: “Claude needs your permission to use Bash”',
    );
    assert.equal(nudgeText('c', { agent: 'shell', state: 'needsYou', since: 0 }), 'The shell in c needs you.');
  });

  it('the status bar counts the sessions that need you and hides at zero', () => {
    const list = [
      { container: 'a', title: 'Toolbox: a', status: needs },
      { container: 'b', title: 'Toolbox: b', status: { ...needs, message: 'Approval requested: cargo test' } },
      { container: 'c', title: 'Toolbox: c', status: { ...needs, state: 'working' as const } },
    ];
    const s = needsYouStatus(list);
    assert.equal(s?.text, '$(bell-dot) 2');
    assert.match(
      s?.tooltip ?? '',
      /^2 Toolbox sessions need you:\n• Toolbox: a: “Claude needs your permission to use Bash”\n• Toolbox: b: “Approval requested: cargo test”\n/,
    );
    assert.equal(needsYouStatus(list.slice(2)), undefined);
  });
});

describe('the terminal with the recogniser', () => {
  function fakeShell(): { shell: StartedShell; stream: PassThrough; typed: string[] } {
    const stream = new PassThrough();
    const typed: string[] = [];
    const shell = {
      stream: Object.assign(stream, {}),
      exitCode: new Promise<number>(() => undefined),
      resize: async () => undefined,
      dispose: () => undefined,
    } as unknown as StartedShell;
    stream.on('data', () => undefined);
    const write = stream.write.bind(stream);
    (stream as unknown as { write: (d: string) => boolean }).write = (d: string) => {
      typed.push(d);
      return true;
    };
    void write;
    return { shell, stream, typed };
  }

  it('writes every byte as it came (the same text as without it) while the state follows the signals', async () => {
    installVscodeLite();
    const { ToolboxShellPty } = await import('../../extension/src/ui/shells/toolboxShellPty');
    const { shell, stream } = fakeShell();
    const pty = new ToolboxShellPty({ container: 'toolbox-app', start: async () => shell, log: silentLog as never });
    let written = '';
    pty.onDidWrite((t) => (written += t));
    const states: string[] = [];
    pty.onDidChangeAgent((s) => states.push(s.state));
    pty.open({ columns: 80, rows: 24 });
    await new Promise((r) => setImmediate(r));
    // Claude Code and Codex asking for the user, then a shell back at its prompt.
    const bytes = Buffer.concat([...AGENT_FIXTURES.slice(0, 3), ...AGENT_FIXTURES.slice(4)].map((f) => f.bytes));
    // Split at awkward places (inside sequences and inside UTF-8 characters).
    for (let i = 0; i < bytes.length; i += 7) stream.emit('data', bytes.subarray(i, i + 7));
    assert.equal(written, bytes.toString('utf8'));
    assert.equal(pty.agentStatus.state, 'needsYou');
    assert.equal(pty.agentStatus.message, 'Approval requested: cargo test --all');
    assert.equal(pty.agentStatus.agent, 'claude');
    pty.handleInput('y');
    assert.equal(pty.agentStatus.state, 'working');
    stream.emit('data', AGENT_FIXTURES[3]!.bytes);
    assert.equal(pty.agentStatus.state, 'idle');
    // The title names Claude (so it works), it asks (three messages), the user answers, a prompt, a command, the prompt again.
    assert.deepEqual(states, ['working', 'needsYou', 'needsYou', 'needsYou', 'working', 'idle', 'working', 'idle']);
    pty.close();
  });

  it('after a reload, a notification in the replayed history raises no "needs you" (so no nudge); one after it does', async () => {
    installVscodeLite();
    const { ToolboxShellPty } = await import('../../extension/src/ui/shells/toolboxShellPty');
    // What the holder replays: Codex asked for approval before the reload (OSC 9), then the live output.
    const replay = AGENT_FIXTURES[2]!.bytes;
    const live = Buffer.from('\x1b]0;codex\x07\x1b]9;Approval requested: npm publish\x07');
    const { shell, stream } = fakeShell();
    Object.assign(shell, { replayBytes: replay.length });
    // Reattached from its record, which says Codex runs there.
    const pty = new ToolboxShellPty({ container: 'toolbox-app', start: async () => shell, agent: 'codex', log: silentLog as never });
    let written = '';
    pty.onDidWrite((t) => (written += t));
    const seen: AgentStatus[] = [];
    pty.onDidChangeAgent((s) => seen.push(s));
    pty.open({ columns: 80, rows: 24 });
    await new Promise((r) => setImmediate(r));
    // The replay ends inside a chunk, with the live output's start in the same chunk.
    const bytes = Buffer.concat([replay, live]);
    const cut = replay.length - 40;
    stream.emit('data', bytes.subarray(0, cut));
    stream.emit('data', bytes.subarray(cut, replay.length + 5));
    assert.equal(pty.agentStatus.state, 'working'); // as recorded: the agent runs; nothing asked anew
    assert.equal(pty.agentStatus.agent, 'codex');
    assert.equal(pty.agentStatus.title, 'codex');
    assert.ok(!seen.some((s) => s.state === 'needsYou'), 'the replayed OSC 9 is not read as new');
    stream.emit('data', bytes.subarray(replay.length + 5));
    assert.equal(written, bytes.toString('utf8')); // every byte shown, replayed or not
    assert.equal(pty.agentStatus.state, 'needsYou');
    assert.equal(pty.agentStatus.message, 'Approval requested: npm publish');
    assert.deepEqual(
      seen.map((s) => s.state),
      ['needsYou'],
    );
    pty.close();
  });
});

describe('package.json', () => {
  it('contributes the nudge setting under its contract name, with the three choices the code reads', async () => {
    const { readFileSync } = await import('node:fs');
    const { join } = await import('node:path');
    const { SETTINGS } = await import('../../extension/src/contract/manifest');
    const pkg = JSON.parse(readFileSync(join(__dirname, '../../../package.json'), 'utf8')) as {
      contributes: { configuration: { properties: Record<string, { enum?: string[]; default?: string }> } };
    };
    const setting = pkg.contributes.configuration.properties[SETTINGS.notifyWhenAgentNeedsYou];
    assert.deepEqual(setting?.enum, ['always', 'whenUnfocused', 'never']);
    assert.equal(nudgeSetting(setting?.default), setting?.default);
  });
});

describe('Start Claude Code / Start Codex', () => {
  it('runs the agent through the launch script, with no arguments, and the shell when it exits', async () => {
    const { agentLaunchCommand, describeShellCommand } = await import('../../extension/src/plan/worktree');
    const { AGENTS } = await import('../../extension/src/contract/image');
    const { mkdtempSync, writeFileSync, chmodSync, readFileSync } = await import('node:fs');
    const { tmpdir } = await import('node:os');
    const { join } = await import('node:path');
    const { spawnSync } = await import('node:child_process');
    const bin = mkdtempSync(join(tmpdir(), 'tbx-agent-'));
    for (const agent of ['claude', 'codex'] as const) {
      const cmd = agentLaunchCommand(AGENTS[agent].command, undefined);
      assert.equal(describeShellCommand(cmd), `${agent} (agent)`);
      // A stand-in agent on PATH records its argv; the script then execs the container's shell,
      // which this host may lack: what matters is that the agent ran, alone, with no arguments.
      writeFileSync(join(bin, agent), `#!/bin/sh\necho "ran $# args" > "${join(bin, agent)}.out"\n`);
      chmodSync(join(bin, agent), 0o755);
      spawnSync('bash', ['-c', cmd[3]!, ...cmd.slice(4)], { env: { PATH: `${bin}:/usr/bin:/bin` }, stdio: 'ignore' });
      assert.equal(readFileSync(join(bin, `${agent}.out`), 'utf8'), 'ran 0 args\n');
    }
  });
});
