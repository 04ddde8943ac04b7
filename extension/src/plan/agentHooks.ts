/**
 * What an agent's hook said, in words: the subject of a permission question (a command, a file, a
 * URL, a host) and the kind of a timeline entry (a command, a commit, a push, a pull request, a
 * file). Pure: the bridge's /approval and /agent-event (bridge/agentHooks.ts) call it on bodies
 * they have already checked; everything in them came from the container
 * (docs/decisions/0050-approvals-over-the-bridge.md).
 */
import { AGENT_HOOK_LIMITS } from '../contract/agentHook';

/** A tool input as the hook sends it: scalar values only (the hook drops the rest). */
export type HookInput = Readonly<Record<string, string | number | boolean>>;

export type SubjectKind = 'command' | 'file' | 'fetch' | 'network' | 'tool';
export type TimelineKind = 'command' | 'file' | 'git-commit' | 'git-push' | 'pr-create' | 'tool';

/* eslint-disable no-control-regex */
/** C0 and C1 controls and DEL; line breaks are among them and become one space too. */
const CONTROL = /[\x00-\x1f\x7f-\x9f\u2028\u2029]+/g;
/** Invisible format characters that reorder or hide text (bidi overrides and isolates, zero-width, BOM). */
const INVISIBLE = /[\u200b-\u200f\u202a-\u202e\u2060-\u2064\u2066-\u2069\ufeff]/g;
/* eslint-enable no-control-regex */

/** One line of at most `max` characters: controls become a space, invisible format characters go, runs of spaces are one. */
export function oneLine(text: string, max: number = AGENT_HOOK_LIMITS.textChars): string {
  const line = text
    .slice(0, max * 2)
    .replace(INVISIBLE, '')
    .replace(CONTROL, ' ')
    .replace(/ {2,}/g, ' ')
    .trim();
  return line.length > max ? `${line.slice(0, max - 1)}…` : line;
}

const SHELL_TOOLS = new Set(['Bash', 'shell', 'exec_command', 'local_shell', 'unified_exec']);
const FILE_TOOLS = new Set(['Write', 'Edit', 'MultiEdit', 'NotebookEdit', 'Read', 'apply_patch']);
const FILE_KEYS = ['file_path', 'notebook_path', 'path'] as const;
/** Codex's network approvals carry `network-access <host>` in the description (its PermissionRequest hook). */
const NETWORK_ACCESS = /^network-access\s+(\S+)/;

const stringField = (input: HookInput, key: string): string | undefined => {
  const value = input[key];
  return typeof value === 'string' && value.trim() !== '' ? value : undefined;
};

/** The one thing a question is about, for the notification and the tree. */
export function describeToolInput(tool: string, input: HookInput): { kind: SubjectKind; text: string } {
  const description = stringField(input, 'description');
  const network = description === undefined ? undefined : NETWORK_ACCESS.exec(description);
  if (network?.[1] !== undefined) return { kind: 'network', text: oneLine(network[1]) };
  const command = stringField(input, 'command');
  if (command !== undefined && (SHELL_TOOLS.has(tool) || !FILE_TOOLS.has(tool))) return { kind: 'command', text: oneLine(command) };
  for (const key of FILE_KEYS) {
    const path = stringField(input, key);
    if (path !== undefined) return { kind: 'file', text: oneLine(path) };
  }
  const url = stringField(input, 'url');
  if (url !== undefined) return { kind: 'fetch', text: oneLine(url) };
  const other = stringField(input, 'query') ?? stringField(input, 'pattern') ?? description;
  return { kind: 'tool', text: oneLine(other === undefined ? tool : `${tool}: ${other}`) };
}

/** Where a command starts: the line's start or after `;`, `&&`, `||`, `|`, `(`. */
const START = String.raw`(?:^|[;&|(]\s*)`;
/** git at a command's start, with global options before the subcommand: `-C dir`, `-c k=v`, `--no-pager`, … */
const GIT = String.raw`${START}git(?:\s+(?:-[Cc]\s+\S+|--?[\w-]+(?:=\S+)?))*\s+`;
const GIT_COMMIT = new RegExp(`${GIT}commit\\b`);
const GIT_PUSH = new RegExp(`${GIT}push\\b`);
const PR_CREATE = new RegExp(`${START}gh\\s+pr\\s+create\\b`);

/** What a finished tool call was, for the timeline: a commit, push or pull request stand out from other commands. */
export function timelineKind(tool: string, input: HookInput): TimelineKind {
  const subject = describeToolInput(tool, input);
  if (subject.kind === 'command') {
    if (PR_CREATE.test(subject.text)) return 'pr-create';
    if (GIT_PUSH.test(subject.text)) return 'git-push';
    if (GIT_COMMIT.test(subject.text)) return 'git-commit';
    return 'command';
  }
  return subject.kind === 'file' && tool !== 'Read' ? 'file' : 'tool';
}
