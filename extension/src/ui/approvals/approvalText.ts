/**
 * The words of an agent's question (issue 28) for each place that shows it: the notification, the
 * status bar, the quick picks, the tree row's tooltip. Everything in a question came from a
 * container (the command, the path, the URL, the agent's reason): our words come first and say
 * who asks, the outside parts are one line each, plain (docs/decisions/0040-outside-text-is-plain-text.md).
 * Pure, no vscode import: test/unit/plain-text.test.ts runs each builder on its hostile corpus.
 */
import type { ApprovalRequest, ToolSubject } from '../../backend/api/editor';
import { AGENTS } from '../../contract/image';
import { WORKTREE } from '../../contract/upstream';
import { inline, plainText, quoted } from '../plainText';

/** The branch of an agent worktree folder (`<repo>/.worktrees/tbx-<branch>`, `/` in the branch written as `-`) and its repository. */
export function worktreeOf(folder: string): { repo: string; branch: string } | undefined {
  const parts = folder.split(/[\\/]+/);
  while (parts.length > 0 && parts[parts.length - 1] === '') parts.pop();
  const name = parts[parts.length - 1] ?? '';
  const parent = parts[parts.length - 2];
  if (parent !== WORKTREE.dir || !name.startsWith(WORKTREE.prefix) || name.length <= WORKTREE.prefix.length) return undefined;
  const repo = parts.slice(0, -2).join('/') || '/';
  return { repo, branch: name.slice(WORKTREE.prefix.length) };
}

const VERBS: Record<Exclude<ToolSubject['kind'], 'tool'>, string> = {
  command: 'run',
  file: 'write',
  fetch: 'fetch',
  network: 'connect to',
};

/** "run: npm test", "write: src/a.ts", "use WebSearch: query" (the subject one line, plain). */
export function subjectPhrase(request: Pick<ApprovalRequest, 'tool' | 'subject'>): string {
  const text = inline(request.subject.text, 600);
  if (request.subject.kind === 'tool') return text === '' || text === inline(request.tool) ? `use ${inline(request.tool)}` : `use ${text}`;
  const verb = request.tool === 'Read' && request.subject.kind === 'file' ? 'read' : VERBS[request.subject.kind];
  return `${verb}: ${text}`;
}

/** "Claude Code in toolbox-app-1234abcd" and, for an agent worktree, "(worktree feat-x of app)". */
export function askerText(request: Pick<ApprovalRequest, 'agent' | 'container' | 'workspaceFolder'>): string {
  const agent = AGENTS[request.agent]?.name ?? 'An agent';
  const worktree = worktreeOf(request.workspaceFolder);
  const where = worktree ? ` (worktree ${inline(worktree.branch, 100)} of ${inline(baseName(worktree.repo), 100)})` : '';
  return plainText(`${agent} in ${inline(request.container)}${where}`, 'message');
}

/** The notification: `Claude Code in <container> wants to run: npm test` (who asks first, the outside part last). */
export function approvalMessage(request: ApprovalRequest): string {
  return plainText(`${askerText(request)} wants to ${subjectPhrase(request)}`, 'message');
}

/** The question in full for a tooltip or a pick's detail: tool, subject, reason, folder, session. */
export function approvalTooltip(request: ApprovalRequest): string {
  const worktree = worktreeOf(request.workspaceFolder);
  const session = [
    request.session !== undefined ? `terminal session ${inline(request.session, 40)}` : undefined,
    request.agentSession !== undefined ? `agent session ${inline(request.agentSession, 140)}` : undefined,
  ].filter((s) => s !== undefined);
  return plainText(
    [
      `${askerText(request)} asks to use ${inline(request.tool, 140)}.`,
      `${subjectLabel(request.subject.kind)}: ${inline(request.subject.text, 1000)}${request.truncated ? ' (cut short by the hook)' : ''}`,
      request.reason !== undefined ? `It says why: ${quoted(request.reason, 'message', 500)}` : undefined,
      `Folder: ${inline(request.workspaceFolder)}`,
      worktree ? `Worktree branch: ${inline(worktree.branch, 200)}` : undefined,
      request.cwd !== undefined ? `Working directory: ${inline(request.cwd, 500)}` : undefined,
      session.length > 0 ? `Session: ${session.join(', ')}` : undefined,
      `Asked at ${new Date(request.receivedAt).toLocaleTimeString()}${request.retry > 0 ? ' (asked again after the window reloaded)' : ''}.`,
    ]
      .filter((l) => l !== undefined)
      .join('\n'),
    'tooltip',
  );
}

/** The row's description and a pick's: `<container> · <agent> · <age>`. */
export function approvalDescription(request: Pick<ApprovalRequest, 'container' | 'agent' | 'receivedAt'>, now: number): string {
  return plainText(
    `${inline(request.container)} · ${AGENTS[request.agent]?.name ?? 'agent'} · ${askedAgo(request.receivedAt, now)}`,
    'label',
  );
}

/** The status bar: `$(question) N` and a tooltip that lists the questions; undefined hides it. */
export function approvalsStatus(pending: readonly ApprovalRequest[]): { text: string; tooltip: string; label: string } | undefined {
  if (pending.length === 0) return undefined;
  const n = pending.length;
  const shown = pending.slice(0, 10);
  return {
    text: `$(question) ${n}`,
    label: `${n} agent question${n === 1 ? '' : 's'} waiting`,
    tooltip: plainText(
      [
        `${n} agent question${n === 1 ? '' : 's'} waiting:`,
        ...shown.map((r) => `• ${inline(approvalMessage(r), 300)}`),
        ...(n > shown.length ? [`• and ${n - shown.length} more`] : []),
        '',
        'Click to answer.',
      ].join('\n'),
      'tooltip',
    ),
  };
}

/** A question as a quick pick row (the pick's sink escapes `$(`). */
export function approvalPickItem(request: ApprovalRequest, now: number): { label: string; description: string; detail: string } {
  return {
    label: plainText(subjectPhrase(request), 'iconLabel', 200),
    description: plainText(approvalDescription(request, now), 'iconLabel', 200),
    detail: plainText(
      `${AGENTS[request.agent]?.name ?? 'agent'} asks to use ${inline(request.tool, 140)}${request.reason !== undefined ? `: ${quoted(request.reason, 'message', 300)}` : ''}`,
      'iconLabel',
    ),
  };
}

function subjectLabel(kind: ToolSubject['kind']): string {
  switch (kind) {
    case 'command':
      return 'Command';
    case 'file':
      return 'File';
    case 'fetch':
      return 'URL';
    case 'network':
      return 'Host';
    case 'tool':
      return 'Input';
  }
}

/** "just now", "3 min ago", "2 h ago": coarse, as the tree is not redrawn every second. */
export function askedAgo(at: number, now: number): string {
  const minutes = Math.floor(Math.max(0, now - at) / 60_000);
  if (minutes < 1) return 'just now';
  if (minutes < 60) return `${minutes} min ago`;
  return `${Math.floor(minutes / 60)} h ago`;
}

function baseName(path: string): string {
  return (
    path
      .split(/[\\/]+/)
      .filter(Boolean)
      .pop() ?? path
  );
}
