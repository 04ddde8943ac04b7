/**
 * What the agents in this window's containers did, per session (issue 28): the entries the
 * bridge's /agent-event hands over (EditorActions.agentEvent: a command run, a file written, a
 * commit, a push, a pull request, a stop) and the token usage the agent last reported. The
 * Workspaces view's session rows show a summary, and Show Session Timeline the entries as
 * a read-only document (ui/agents/sessionTimelineDocuments.ts).
 *
 * A session is the held session the hook named (`s<n>`, the same id as the session's row in the
 * tree), else the agent's own session id, else "unknown", inside one container: a worktree's
 * container is the worktree, so the container's sums are the worktree's. Bounded: the last
 * AGENT_HOOK_LIMITS.timelinePerSession entries per session, at most timelineSessions sessions
 * (an ended one goes first, then the one updated longest ago).
 *
 * Every text in an entry came from a container: the document and the tree show it as plain text
 * (ui/plainText.ts). No vscode import: unit-tested in test/unit/agent-timeline.test.ts.
 */
import type { AgentEvent, AgentUsage, HookAgent } from '../../backend/api/editor';
import { AGENT_HOOK_LIMITS } from '../../contract/agentHook';
import { AGENTS } from '../../contract/image';
import { worktreeOf } from '../approvals/approvalText';
import { inline, plainText } from '../plainText';

/** The session key of entries that name neither a held session nor an agent session. */
export const UNKNOWN_SESSION = 'unknown';

/** Distinct file paths remembered per session for the "files" count; past it, every file entry counts. */
const FILES_TRACKED = 1000;
/** Agent sessions whose usage is kept per timeline session (an agent started again in the same terminal). */
const USAGE_PER_SESSION = 16;

export interface TimelineCounts {
  commands: number;
  /** Distinct files written. */
  files: number;
  commits: number;
  pushes: number;
  prs: number;
}

export interface TimelineSummary extends TimelineCounts {
  /** Entries received for the session (the ring keeps the last timelinePerSession). */
  events: number;
  /** The agent's last reported usage (summed over the agent sessions that ran in it). */
  usage?: AgentUsage;
}

export interface TimelineSessionInfo {
  container: string;
  /** The key the session is kept under: the held session's id, else the agent's session id, else "unknown". */
  sessionId: string;
  agent: HookAgent;
  workspaceFolder: string;
  /** When its last entry came (ms since the epoch). */
  updatedAt: number;
  /** Its agent said the session ended. */
  ended: boolean;
  events: number;
}

interface SessionLog {
  container: string;
  sessionId: string;
  agent: HookAgent;
  workspaceFolder: string;
  events: AgentEvent[];
  received: number;
  counts: TimelineCounts;
  files: Set<string>;
  usage: Map<string, AgentUsage>;
  updatedAt: number;
  ended: boolean;
}

/** The session an entry belongs to: the held session, else the agent's own, else "unknown". */
export function sessionKeyOf(event: Pick<AgentEvent, 'session' | 'agentSession'>): string {
  return event.session ?? event.agentSession ?? UNKNOWN_SESSION;
}

export class AgentTimeline {
  /** Least recently updated first (an update moves a session to the end). */
  private readonly sessions = new Map<string, SessionLog>();
  private readonly listeners = new Set<() => void>();

  constructor(
    private readonly perSession: number = AGENT_HOOK_LIMITS.timelinePerSession,
    private readonly maxSessions: number = AGENT_HOOK_LIMITS.timelineSessions,
  ) {}

  onDidChange(listener: () => void): { dispose(): void } {
    this.listeners.add(listener);
    return { dispose: () => void this.listeners.delete(listener) };
  }

  /** EditorActions.agentEvent: one checked entry. */
  record(event: AgentEvent): void {
    const sessionId = sessionKeyOf(event);
    const key = keyOf(event.container, sessionId);
    let log = this.sessions.get(key);
    if (log === undefined) {
      log = {
        container: event.container,
        sessionId,
        agent: event.agent,
        workspaceFolder: event.workspaceFolder,
        events: [],
        received: 0,
        counts: { commands: 0, files: 0, commits: 0, pushes: 0, prs: 0 },
        files: new Set(),
        usage: new Map(),
        updatedAt: event.at,
        ended: false,
      };
    }
    this.sessions.delete(key);
    this.sessions.set(key, log);
    log.agent = event.agent;
    log.updatedAt = Math.max(log.updatedAt, event.at);
    // Oldest first by the time the agent fired each event (reports may arrive out of order).
    let i = log.events.length;
    while (i > 0 && log.events[i - 1]!.at > event.at) i -= 1;
    log.events.splice(i, 0, event);
    if (log.events.length > this.perSession) log.events.splice(0, log.events.length - this.perSession);
    log.received += 1;
    count(log, event);
    if (event.usage !== undefined) {
      const agentSession = event.agentSession ?? '';
      log.usage.delete(agentSession);
      log.usage.set(agentSession, event.usage);
      if (log.usage.size > USAGE_PER_SESSION) log.usage.delete(log.usage.keys().next().value!);
    }
    if (event.kind === 'session-end') log.ended = true;
    else if (event.kind === 'session-start') log.ended = false;
    this.evict();
    this.fire();
  }

  /** The entries kept for a session, oldest first (empty when none). */
  forSession(container: string, sessionId: string): readonly AgentEvent[] {
    return this.sessions.get(keyOf(container, sessionId))?.events.slice() ?? [];
  }

  /** What a session did, counted, and its usage; undefined when nothing came from it. */
  summary(container: string, sessionId: string): TimelineSummary | undefined {
    const log = this.sessions.get(keyOf(container, sessionId));
    if (log === undefined) return undefined;
    const usage = sumUsage([...log.usage.values()]);
    return { ...log.counts, events: log.received, ...(usage !== undefined ? { usage } : {}) };
  }

  /** A container's usage: the sum over its sessions (a worktree's container is the worktree); undefined when none reported any. */
  usageForContainer(container: string): AgentUsage | undefined {
    return sumUsage([...this.sessions.values()].filter((l) => l.container === container).flatMap((l) => [...l.usage.values()]));
  }

  /** The sessions kept (of one container, when given), the most recently updated first. */
  list(container?: string): TimelineSessionInfo[] {
    return [...this.sessions.values()]
      .filter((l) => container === undefined || l.container === container)
      .reverse()
      .map((l) => ({
        container: l.container,
        sessionId: l.sessionId,
        agent: l.agent,
        workspaceFolder: l.workspaceFolder,
        updatedAt: l.updatedAt,
        ended: l.ended,
        events: l.received,
      }));
  }

  get size(): number {
    return this.sessions.size;
  }

  dispose(): void {
    this.sessions.clear();
    this.listeners.clear();
  }

  /** Over the cap: an ended session goes first (the one updated longest ago), else the one updated longest ago. */
  private evict(): void {
    while (this.sessions.size > this.maxSessions) {
      let victim: string | undefined;
      for (const [key, log] of this.sessions) {
        if (log.ended) {
          victim = key;
          break;
        }
      }
      this.sessions.delete(victim ?? this.sessions.keys().next().value!);
    }
  }

  private fire(): void {
    for (const listener of [...this.listeners]) {
      try {
        listener();
      } catch {
        // A failing view must not lose the next entries.
      }
    }
  }
}

function keyOf(container: string, sessionId: string): string {
  return `${container}\u0000${sessionId}`;
}

function count(log: SessionLog, event: AgentEvent): void {
  switch (event.kind) {
    case 'command':
      log.counts.commands += 1;
      return;
    case 'git-commit':
      log.counts.commands += 1;
      log.counts.commits += 1;
      return;
    case 'git-push':
      log.counts.commands += 1;
      log.counts.pushes += 1;
      return;
    case 'pr-create':
      log.counts.commands += 1;
      log.counts.prs += 1;
      return;
    case 'file':
      if (log.files.has(event.text)) return;
      if (log.files.size < FILES_TRACKED) log.files.add(event.text);
      log.counts.files += 1;
      return;
    default:
      return;
  }
}

/** The sum of several usages; undefined for none. A cost is summed only when every usage has one. */
export function sumUsage(list: readonly AgentUsage[]): AgentUsage | undefined {
  if (list.length === 0) return undefined;
  const sum: AgentUsage = { inputTokens: 0, outputTokens: 0, cacheReadTokens: 0, cacheWriteTokens: 0 };
  let cost: number | undefined = 0;
  for (const u of list) {
    sum.inputTokens += u.inputTokens;
    sum.outputTokens += u.outputTokens;
    sum.cacheReadTokens += u.cacheReadTokens;
    sum.cacheWriteTokens += u.cacheWriteTokens;
    cost = cost === undefined || u.costUsd === undefined ? undefined : cost + u.costUsd;
  }
  return cost === undefined ? sum : { ...sum, costUsd: cost };
}

/** 980, 45k, 1.2M: a token count as the row shows it. */
export function tokenCount(n: number): string {
  if (n < 1000) return String(Math.round(n));
  if (n < 100_000) return `${Math.round(n / 100) / 10}k`.replace('.0k', 'k');
  if (n < 1_000_000) return `${Math.round(n / 1000)}k`;
  return `${Math.round(n / 100_000) / 10}M`.replace('.0M', 'M');
}

const plural = (n: number, one: string, many: string) => `${n} ${n === 1 ? one : many}`;

/**
 * The session row's suffix: ` · 12 cmds · 3 files · 1 commit · 45k tokens` (the tokens the agent
 * read and wrote, cache aside); empty when there is nothing to count. Numbers only.
 */
export function timelineSuffix(summary: TimelineSummary | undefined): string {
  if (summary === undefined) return '';
  const parts = [
    summary.commands > 0 ? plural(summary.commands, 'cmd', 'cmds') : undefined,
    summary.files > 0 ? plural(summary.files, 'file', 'files') : undefined,
    summary.commits > 0 ? plural(summary.commits, 'commit', 'commits') : undefined,
    summary.pushes > 0 ? plural(summary.pushes, 'push', 'pushes') : undefined,
    summary.prs > 0 ? plural(summary.prs, 'PR', 'PRs') : undefined,
    summary.usage !== undefined ? `${tokenCount(summary.usage.inputTokens + summary.usage.outputTokens)} tokens` : undefined,
  ].filter((p) => p !== undefined);
  return parts.length === 0 ? '' : ` · ${parts.join(' · ')}`;
}

/** A usage in words: `12,345 input · 3,456 output · 100 cache read · 20 cache write tokens · $0.12`. Numbers only. */
export function usageText(u: AgentUsage): string {
  const n = (x: number) => Math.round(x).toLocaleString('en-US');
  const cost = u.costUsd !== undefined ? ` · $${u.costUsd.toFixed(2)}` : '';
  return `${n(u.inputTokens)} input · ${n(u.outputTokens)} output · ${n(u.cacheReadTokens)} cache read · ${n(u.cacheWriteTokens)} cache write tokens${cost}`;
}

const pad = (n: number) => String(n).padStart(2, '0');

/** HH:MM:SS in local time. */
export function clockTime(ms: number): string {
  const d = new Date(ms);
  return `${pad(d.getHours())}:${pad(d.getMinutes())}:${pad(d.getSeconds())}`;
}

/** One entry as a line: `HH:MM:SS  kind  text`, the text plain and on one line. */
export function timelineLine(event: AgentEvent, max = 500): string {
  return `${clockTime(event.at)}  ${event.kind.padEnd(13)}  ${inline(event.text, max)}`;
}

/**
 * The read-only document of Show Session Timeline: the session's entries, one a line, then
 * the usage of each session of its container and the container's (a worktree's) total.
 */
export function timelineDocument(timeline: AgentTimeline, container: string, sessionId: string): string {
  const info = timeline.list(container).find((s) => s.sessionId === sessionId);
  const events = timeline.forSession(container, sessionId);
  const summary = timeline.summary(container, sessionId);
  const agent = info ? AGENTS[info.agent].name : 'The agent';
  const lines = [`${agent} in ${inline(container)}, session ${inline(sessionId, 200)}`];
  const worktree = info ? worktreeOf(info.workspaceFolder) : undefined;
  if (info)
    lines.push(
      `Folder: ${inline(info.workspaceFolder)}${worktree ? ` (the agent worktree of branch ${inline(worktree.branch, 200)})` : ''}`,
    );
  if (summary !== undefined && summary.events > events.length) {
    lines.push(`The last ${events.length} of ${summary.events} entries.`);
  }
  lines.push('');
  if (events.length === 0) lines.push('Nothing recorded for this session in this window.');
  for (const e of events) lines.push(timelineLine(e));
  lines.push('', `Usage per session of ${inline(container)}:`);
  const sessions = timeline.list(container);
  let any = false;
  for (const s of sessions) {
    const usage = timeline.summary(container, s.sessionId)?.usage;
    if (usage === undefined) continue;
    any = true;
    lines.push(`  ${inline(s.sessionId, 200)}${s.sessionId === sessionId ? ' (this one)' : ''}: ${usageText(usage)}`);
  }
  if (!any) lines.push('  none reported yet (the agent reports it when it stops or its session ends).');
  const total = timeline.usageForContainer(container);
  if (total !== undefined) lines.push(`  ${worktree ? 'the worktree, every session' : 'every session together'}: ${usageText(total)}`);
  return `${lines.join('\n')}\n`;
}

/** The last `n` entries of a session as tooltip lines (plain, one line each). */
export function recentLines(events: readonly AgentEvent[], n = 5): string[] {
  return events.slice(-n).map((e) => timelineLine(e, 120));
}

/** How a timeline session is named in a pick: the agent, the session, the container. */
export function sessionPickItem(s: TimelineSessionInfo): { label: string; description: string; detail: string } {
  return {
    label: plainText(`${AGENTS[s.agent].name} · ${inline(s.sessionId, 200)}`, 'label'),
    description: plainText(s.container, 'label'),
    detail: `${plural(s.events, 'entry', 'entries')}, the last at ${clockTime(s.updatedAt)}${s.ended ? ' · ended' : ''}`,
  };
}
