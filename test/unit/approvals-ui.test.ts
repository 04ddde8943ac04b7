/**
 * Issue 28 in the UI: the agents' questions in words, at the top of the Workspaces view (with the
 * package.json menus that answer them), the status bar's count, a session row's timeline summary,
 * and the prompter (ui/approvals/approvalPrompter.ts) on the stand-in vscode module: settings, the notification's
 * buttons, one answer per question, a stale click.
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import type { AgentEvent, ApprovalRequest } from '../../extension/src/bridge/route';
import { COMMAND_LABELS, SETTINGS } from '../../extension/src/contract/manifest';
import { AGENT_HOOK_LIMITS } from '../../extension/src/contract/agentHook';
import { ApprovalInbox, ASK_REASONS } from '../../extension/src/ui/approvals/approvalInbox';
import { approvalMessage, approvalsStatus, approvalTooltip, worktreeOf } from '../../extension/src/ui/approvals/approvalText';
import { AgentTimeline } from '../../extension/src/ui/agents/agentTimeline';
import { workspacesNodes, type TreeNode } from '../../extension/src/ui/views/treeNodes';
import type { ToolboxState } from '../../extension/src/ui/views/refreshManager';
import { approvalRequest } from '../support/approvals';
import { containerSummary, viewState } from '../support/summary';
import { installVscodeLite, silentLog, vscodeLite } from '../support/vscodeLite';

const now = Date.UTC(2026, 11, 3, 12, 0, 0);

function question(over: Partial<ApprovalRequest> = {}): ApprovalRequest {
  return approvalRequest({ id: 'q1', receivedAt: now - 3 * 60_000, ...over });
}

describe('a question in words', () => {
  it('says who asks, then what: run, write, fetch, connect to, use', () => {
    assert.equal(approvalMessage(question()), 'Claude Code in toolbox-app-1234abcd wants to run: npm test');
    assert.equal(
      approvalMessage(question({ tool: 'Write', subject: { kind: 'file', text: 'src/a.ts' } })),
      'Claude Code in toolbox-app-1234abcd wants to write: src/a.ts',
    );
    assert.equal(
      approvalMessage(question({ tool: 'WebFetch', subject: { kind: 'fetch', text: 'https://example.com/x' } })),
      'Claude Code in toolbox-app-1234abcd wants to fetch: https://example.com/x',
    );
    assert.equal(
      approvalMessage(question({ agent: 'codex', tool: 'shell', subject: { kind: 'network', text: 'registry.npmjs.org' } })),
      'Codex in toolbox-app-1234abcd wants to connect to: registry.npmjs.org',
    );
    assert.equal(
      approvalMessage(question({ tool: 'mcp__db__query', subject: { kind: 'tool', text: 'mcp__db__query' } })),
      'Claude Code in toolbox-app-1234abcd wants to use mcp__db__query',
    );
    assert.equal(
      approvalMessage(question({ tool: 'WebSearch', subject: { kind: 'tool', text: 'WebSearch: vscode api' } })),
      'Claude Code in toolbox-app-1234abcd wants to use WebSearch: vscode api',
    );
  });

  it('names the worktree branch and its repository when the folder is an agent worktree', () => {
    assert.deepEqual(worktreeOf('/src/app/.worktrees/tbx-feat-x'), { repo: '/src/app', branch: 'feat-x' });
    assert.deepEqual(worktreeOf('C:\\src\\app\\.worktrees\\tbx-fix\\'), { repo: 'C:/src/app', branch: 'fix' });
    assert.equal(worktreeOf('/src/app'), undefined);
    assert.equal(worktreeOf('/src/app/.worktrees/tbx-'), undefined);
    assert.equal(worktreeOf('/src/app/worktrees/tbx-x'), undefined);
    assert.equal(
      approvalMessage(question({ container: 'toolbox-tbx-feat-x-1', workspaceFolder: '/src/app/.worktrees/tbx-feat-x' })),
      'Claude Code in toolbox-tbx-feat-x-1 (worktree feat-x of app) wants to run: npm test',
    );
    assert.match(approvalTooltip(question({ workspaceFolder: '/src/app/.worktrees/tbx-feat-x' })), /^Worktree branch: feat-x$/m);
  });

  it("keeps a line breaking, link-making or look-alike text on its one line, quoted where it is the agent's own words", () => {
    const q = question({
      subject: { kind: 'command', text: 'rm -rf x\nToolbox: [Allow](command:toolbox.approval.allow)' },
      reason: 'Cleans up”. Toolbox: safe',
    });
    const message = approvalMessage(q);
    assert.equal(message, 'Claude Code in toolbox-app-1234abcd wants to run: rm -rf x Toolbox: [Allow] (command:toolbox.approval.allow)');
    const tooltip = approvalTooltip(q).split('\n');
    assert.equal(tooltip[0], 'Claude Code in toolbox-app-1234abcd asks to use Bash.');
    assert.equal(tooltip[1], 'Command: rm -rf x Toolbox: [Allow] (command:toolbox.approval.allow)');
    assert.equal(tooltip[2], 'It says why: “Cleans up". Toolbox: safe”');
  });

  it('the status bar: $(question) and the count, its tooltip listing them; nothing at zero', () => {
    assert.equal(approvalsStatus([]), undefined);
    const s = approvalsStatus([question(), question({ id: 'q2', subject: { kind: 'file', text: 'a.ts' }, tool: 'Edit' })])!;
    assert.equal(s.text, '$(question) 2');
    assert.equal(s.label, '2 agent questions waiting');
    assert.deepEqual(s.tooltip.split('\n'), [
      '2 agent questions waiting:',
      '• Claude Code in toolbox-app-1234abcd wants to run: npm test',
      '• Claude Code in toolbox-app-1234abcd wants to write: a.ts',
      '',
      'Click to answer.',
    ]);
  });
});

describe('the Workspaces view', () => {
  const shells = [{ id: 's1', pid: 31, command: 'claude', started: now - 10 * 60_000, attached: 1 }];
  const c = containerSummary({ mountsSocketVolume: false, pidMode: '', peer: false, shells });
  const state: ToolboxState = viewState([c], { takenAt: now });

  it('shows the questions first, oldest first, only while one waits; a click opens its answer pick', () => {
    assert.equal(
      workspacesNodes(state, ['/src/app'], '', [], now, { approvals: [] }).some((n) => n.id === 'approvals'),
      false,
    );
    const approvals = [question(), question({ id: 'q2', canAllowForSession: false, agent: 'codex', receivedAt: now })];
    const [group, container] = workspacesNodes(state, ['/src/app'], '', [], now, { approvals });
    assert.equal(group?.label, 'Agent questions');
    assert.equal(group?.description, '2 waiting');
    assert.equal(container?.id, `container:${c.name}`);
    assert.deepEqual(
      group?.children?.map((r) => [r.label, r.description, r.contextValue, r.command, r.commandArgs, r.approvalId]),
      [
        [
          'run: npm test',
          'toolbox-app-1234abcd · Claude Code · 3 min ago',
          'approval.session',
          COMMAND_LABELS.showApprovals.command,
          ['q1'],
          'q1',
        ],
        ['run: npm test', 'toolbox-app-1234abcd · Codex · just now', 'approval', COMMAND_LABELS.showApprovals.command, ['q2'], 'q2'],
      ],
    );
    assert.match(group?.children?.[0]?.tooltip ?? '', /^Folder: \/src\/app$/m);
    assert.match(group?.children?.[0]?.tooltip ?? '', /^Session: terminal session s1$/m);
  });

  it('shows them when the engine does not answer and before the first snapshot too', () => {
    const approvals = [question()];
    assert.deepEqual(
      workspacesNodes({ ...state, error: 'Docker is not running.' }, [], '', [], now, { approvals })
        .map((n) => n.id)
        .slice(0, 2),
      ['approvals', 'error'],
    );
    assert.deepEqual(
      workspacesNodes({ ...state, snapshot: undefined }, [], '', [], now, { approvals }).map((n) => n.id),
      ['approvals'],
    );
  });

  it("adds what a session's agent did to its row: counts and tokens, the last five entries, .timeline", () => {
    const timeline = new AgentTimeline();
    const entry = (over: Partial<AgentEvent>): AgentEvent => ({
      container: c.name,
      workspaceFolder: '/src/app',
      agent: 'claude',
      session: 's1',
      at: now,
      kind: 'command',
      text: 'npm test',
      ...over,
    });
    for (let i = 0; i < 6; i++) timeline.record(entry({ text: `step ${i}` }));
    timeline.record(
      entry({
        kind: 'git-commit',
        text: 'git commit -m x',
        usage: { inputTokens: 40_000, outputTokens: 5_000, cacheReadTokens: 0, cacheWriteTokens: 0 },
      }),
    );
    timeline.record(entry({ session: 's9', text: 'another session' }));
    const plain = workspacesNodes(state, ['/src/app'], '', [], now)[0]!.children![0]!;
    const [node] = workspacesNodes(state, ['/src/app'], '', [], now, { timeline });
    const row = node!.children![0]!;
    assert.equal(row.description, `${plain.description} · 7 cmds · 1 commit · 45k tokens`);
    assert.equal(row.contextValue, `${plain.contextValue}.timeline`);
    assert.deepEqual(row.timeline, { container: c.name, sessionId: 's1' });
    const tail = row.tooltip!.split('\n').slice(-6);
    assert.equal(tail[0], 'What its agent did last:');
    assert.deepEqual(
      tail.slice(1).map((l) => l.replace(/^\d\d:\d\d:\d\d +\S+ +/, '')),
      ['step 2', 'step 3', 'step 4', 'step 5', 'git commit -m x'],
    );
    // A session without entries keeps its row as it was.
    const quiet = workspacesNodes(state, ['/src/app'], '', [], now, { timeline: new AgentTimeline() })[0]!.children![0]!;
    assert.deepEqual(quiet, plain);
  });
});

describe('package.json', () => {
  const pkg = JSON.parse(readFileSync(join(__dirname, '../../../package.json'), 'utf8')) as {
    contributes: {
      commands: Array<{ command: string; title: string; category?: string; icon?: string }>;
      menus: Record<string, Array<{ command: string; when?: string; group?: string }>>;
      configuration: {
        properties: Record<string, { type?: string; default?: unknown; minimum?: number; maximum?: number; markdownDescription?: string }>;
      };
    };
  };
  /** Whether a `view == … && viewItem …` clause holds for a row of the Workspaces view. */
  const holds = (when: string, viewItem: string) => {
    if (!when.includes('view == toolbox.workspaces')) return false;
    const eq = /viewItem == ([\w.]+)/.exec(when);
    if (eq) return eq[1] === viewItem;
    const re = /viewItem =~ \/(.+)\/$/.exec(when);
    return re ? new RegExp(re[1]!).test(viewItem) : false;
  };
  const entries = (command: string) => pkg.contributes.menus['view/item/context']!.filter((m) => m.command === command);

  it('contributes the commands with titles in the Toolbox category; the row actions stay out of the palette', () => {
    const ids = [
      'toolbox.showApprovals',
      'toolbox.showSessionTimeline',
      'toolbox.approval.allow',
      'toolbox.approval.deny',
      'toolbox.approval.allowForSession',
      'toolbox.approval.openTerminal',
    ];
    for (const id of ids) {
      const c = pkg.contributes.commands.find((x) => x.command === id);
      assert.ok(c?.title, id);
      assert.equal(c.category, 'Toolbox');
    }
    const hidden = pkg.contributes.menus.commandPalette!.filter((m) => m.when === 'false').map((m) => m.command);
    for (const id of ids.slice(2)) assert.ok(hidden.includes(id), `${id} needs a row`);
    assert.ok(!hidden.includes('toolbox.showApprovals') && !hidden.includes('toolbox.showSessionTimeline'));
  });

  it('puts Allow and Deny inline on every question, Allow for This Session only where the agent can keep it', () => {
    for (const viewItem of ['approval', 'approval.session']) {
      for (const command of ['toolbox.approval.allow', 'toolbox.approval.deny', 'toolbox.approval.openTerminal']) {
        assert.ok(
          entries(command).some((m) => holds(m.when!, viewItem)),
          `${command} on ${viewItem}`,
        );
      }
      assert.ok(entries('toolbox.approval.allow').some((m) => m.group?.startsWith('inline') && holds(m.when!, viewItem)));
      assert.ok(entries('toolbox.approval.deny').some((m) => m.group?.startsWith('inline') && holds(m.when!, viewItem)));
    }
    assert.ok(entries('toolbox.approval.allowForSession').some((m) => holds(m.when!, 'approval.session')));
    assert.ok(!entries('toolbox.approval.allowForSession').some((m) => holds(m.when!, 'approval')));
    // Nothing of a question's is offered on the section's own row, nor on a container.
    for (const command of ['toolbox.approval.allow', 'toolbox.approval.deny', 'toolbox.approval.openTerminal']) {
      assert.ok(!entries(command).some((m) => holds(m.when!, 'approvals') || holds(m.when!, 'container.running.peer.window')));
    }
  });

  it('offers Show Session Timeline on a session row with a timeline only', () => {
    const menu = entries('toolbox.showSessionTimeline');
    assert.ok(menu.some((m) => holds(m.when!, 'heldShell.attached.agent.working.timeline')));
    assert.ok(menu.some((m) => holds(m.when!, 'agent.idle.timeline')));
    assert.ok(!menu.some((m) => holds(m.when!, 'heldShell.attached.agent.working')));
  });

  it('documents the three settings with the defaults the code reads', () => {
    const p = pkg.contributes.configuration.properties;
    assert.equal(p[SETTINGS.approvalsEnabled]?.default, true);
    assert.equal(p[SETTINGS.approvalsNotify]?.default, true);
    const timeout = p[SETTINGS.approvalsTimeoutSeconds]!;
    assert.equal(timeout.default, AGENT_HOOK_LIMITS.defaultTimeoutS);
    assert.equal(timeout.minimum, 10);
    assert.equal(timeout.maximum, AGENT_HOOK_LIMITS.maxTimeoutS);
    for (const key of [SETTINGS.approvalsEnabled, SETTINGS.approvalsNotify, SETTINGS.approvalsTimeoutSeconds]) {
      assert.ok((p[key]?.markdownDescription ?? '').length > 40, `${key} says what it does`);
    }
  });
});

describe('the prompter (ui/approvals/approvalPrompter.ts) on the stand-in vscode', () => {
  installVscodeLite();
  type Shown = { message: string; buttons: string[]; answer: (choice: string | undefined) => void };
  const shown: Shown[] = [];
  const statusMessages: string[] = [];
  const settings = new Map<string, unknown>();
  const lite = vscodeLite as unknown as { window: Record<string, unknown>; workspace: Record<string, unknown> };
  lite.window.showInformationMessage = (message: string, ...buttons: string[]) =>
    new Promise<string | undefined>((resolve) => shown.push({ message, buttons, answer: resolve }));
  lite.window.setStatusBarMessage = (message: string) => {
    statusMessages.push(message);
    return { dispose: () => undefined };
  };
  lite.workspace.getConfiguration = () => ({ get: <T>(key: string, fallback?: T) => (settings.has(key) ? settings.get(key) : fallback) });
  // Required after the stand-in is installed (ui/approvals/approvalPrompter.ts imports vscode).
  const { ApprovalPrompter, APPROVAL_BUTTONS, ALREADY_ANSWERED } =
    // eslint-disable-next-line @typescript-eslint/no-require-imports
    require('../../extension/src/ui/approvals/approvalPrompter') as typeof import('../../extension/src/ui/approvals/approvalPrompter');
  const focused: number[] = [];
  const shells = {
    terminalFor: (container: string, session?: string) => (container === 'toolbox-app-1234abcd' && session === 's1' ? 7 : undefined),
    focus: (key: number) => (focused.push(key), true),
  };
  const tick = () => new Promise((resolve) => setImmediate(resolve));
  const prompter = (inbox = new ApprovalInbox()) => ({ inbox, p: new ApprovalPrompter(inbox, shells, silentLog as never) });

  it('answers "ask" at once and shows nothing when approvals in VS Code are off', async () => {
    settings.set(SETTINGS.approvalsEnabled, false);
    shown.length = 0;
    const { inbox, p } = prompter();
    assert.deepEqual(await p.ask(question(), new AbortController().signal), { decision: 'ask', reason: ASK_REASONS.off });
    assert.equal(inbox.size, 0);
    assert.equal(shown.length, 0);
    settings.delete(SETTINGS.approvalsEnabled);
  });

  it("shows the notification with the buttons the question allows, and the button's answer goes to the agent", async () => {
    shown.length = 0;
    const { p } = prompter();
    const answer = p.ask(question(), new AbortController().signal);
    await tick();
    assert.equal(shown.length, 1);
    assert.equal(shown[0]!.message, 'Claude Code in toolbox-app-1234abcd wants to run: npm test');
    assert.deepEqual(shown[0]!.buttons, ['Allow', 'Deny', 'Allow for This Session', 'Open Terminal']);
    shown[0]!.answer(APPROVAL_BUTTONS.session);
    assert.deepEqual(await answer, { decision: 'allow', scope: 'session' });

    const codex = p.ask(question({ id: 'q2', agent: 'codex', canAllowForSession: false }), new AbortController().signal);
    await tick();
    assert.deepEqual(shown[1]!.buttons, ['Allow', 'Deny', 'Open Terminal']);
    shown[1]!.answer(APPROVAL_BUTTONS.deny);
    assert.equal((await codex).decision, 'deny');
  });

  it('Open Terminal focuses the terminal of the session and answers nothing', async () => {
    shown.length = 0;
    focused.length = 0;
    const { inbox, p } = prompter();
    const answer = p.ask(question({ id: 'q3' }), new AbortController().signal);
    await tick();
    shown[0]!.answer(APPROVAL_BUTTONS.terminal);
    await tick();
    assert.deepEqual(focused, [7]);
    assert.equal(inbox.size, 1, 'still waiting');
    assert.equal(p.answer('q3', 'allow'), true);
    assert.deepEqual(await answer, { decision: 'allow', scope: 'once' });
  });

  it('a click on a question answered elsewhere changes nothing and says in the status bar how it left', async () => {
    shown.length = 0;
    statusMessages.length = 0;
    const { p } = prompter();
    const answer = p.ask(question({ id: 'q4' }), new AbortController().signal);
    await tick();
    assert.equal(p.answer('q4', 'deny'), true);
    assert.equal((await answer).decision, 'deny');
    shown[0]!.answer(APPROVAL_BUTTONS.allow);
    await tick();
    assert.deepEqual(statusMessages, [`${ALREADY_ANSWERED}: denied in VS Code`]);
    // One the agent took back (answered in its terminal) says so.
    const left = new AbortController();
    void p.ask(question({ id: 'q5' }), left.signal);
    await tick();
    left.abort();
    shown.at(-1)!.answer(APPROVAL_BUTTONS.deny);
    await tick();
    assert.equal(statusMessages.at(-1), `${ALREADY_ANSWERED}: answered in the terminal, or the agent stopped waiting`);
  });

  it('shows no notification with toolbox.approvals.notify off, and waits as long as toolbox.approvals.timeoutSeconds says', async () => {
    shown.length = 0;
    settings.set(SETTINGS.approvalsNotify, false);
    settings.set(SETTINGS.approvalsTimeoutSeconds, 42);
    const waits: number[] = [];
    const inbox = new ApprovalInbox({ timers: { set: (_fn, ms) => waits.push(ms), clear: () => undefined } });
    const { p } = prompter(inbox);
    const answer = p.ask(question({ id: 'q5' }), new AbortController().signal);
    await tick();
    assert.equal(shown.length, 0);
    assert.deepEqual(waits, [42_000]);
    assert.equal(inbox.size, 1);
    inbox.dispose();
    assert.equal((await answer).decision, 'ask');
    settings.clear();
  });

  it('lists nothing of a node that is not a question (the helper the row commands use)', async () => {
    const { approvalIdOf } = await import('../../extension/src/ui/approvals/approvalCommands');
    assert.equal(approvalIdOf('q1'), 'q1');
    assert.equal(approvalIdOf({ approvalId: 'q2' } satisfies Partial<TreeNode>), 'q2');
    assert.equal(approvalIdOf({ id: 'container:x' }), undefined);
    assert.equal(approvalIdOf(undefined), undefined);
  });
});
