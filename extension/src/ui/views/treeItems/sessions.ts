/** Tree item properties for sessions: held shells, agent sessions and their state (ui/views/treeItems/index.ts). */
import type { AgentEvent } from '../../../backend/api/editor';
import type { AgentState, AgentStatus } from '../../agents/agentState';
import { recentLines, timelineSuffix, type TimelineSummary } from '../../agents/agentTimeline';
import { inline, plainItem, plainText, quoted } from '../../plainText';
import { type AgentSessionSummary, type HeldShellSummary } from '../model';
import { type IconSpec } from './containers';

export function agentSessionItem(s: AgentSessionSummary): {
  label: string;
  description: string;
  icon: IconSpec;
  contextValue: string;
  tooltip: string;
} {
  const where = s.container ? ` · ${s.container}` : '';
  // Whether peers can message it (plan/peerReach.ts): said in the row, and why not in the tooltip.
  const reach =
    s.reach === 'reachable'
      ? ' · reachable'
      : s.reach === 'unreachable'
        ? ' · unreachable'
        : s.reach === 'unknown'
          ? ' · reach unknown'
          : '';
  const icon: IconSpec =
    s.reach === 'reachable'
      ? { id: 'hubot', color: 'testing.iconPassed' }
      : s.reach === 'unreachable'
        ? { id: 'hubot', color: 'list.warningForeground' }
        : { id: 'hubot' };
  return plainItem({
    label: plainText(s.name, 'label', 60) || `pid ${s.pid}`,
    description: `pid ${s.pid}${where}${reach}`,
    icon,
    contextValue: s.reach ? `agentSession.${s.reach}` : 'agentSession',
    tooltip: [
      `Agent session, pid ${s.pid}`,
      s.cwd ? `cwd ${inline(s.cwd, 200)}` : undefined,
      s.container ? `in ${inline(s.container)}` : undefined,
      s.reach === 'reachable'
        ? 'Reachable: its container shares the PID namespace and its inbox socket is in the shared volume.'
        : undefined,
      s.why && inline(s.why),
    ]
      .filter(Boolean)
      .join('\n'),
  });
}

/**
 * A shell the container's session holder keeps: its title (or command), whether a terminal shows
 * it now, and since when it runs. Detached ones can be picked up from any window.
 */
export function heldShellItem(
  s: HeldShellSummary,
  now: number,
): { label: string; description: string; icon: IconSpec; contextValue: string; tooltip: string } {
  const attached = s.attached > 0;
  // What runs in it, as a person would say it ("zsh -l", "claude"): the terminal's title is the
  // container's name, which the parent row already shows.
  const [program = '', ...args] = s.command.split(' ');
  const label = plainText([program.split('/').pop(), ...args].filter(Boolean).join(' '), 'label', 60) || s.id;
  return plainItem({
    label,
    description: `${attached ? 'attached' : 'detached'} · ${sinceText(s.started, now)}`,
    icon: attached ? { id: 'terminal' } : { id: 'debug-disconnect' },
    contextValue: attached ? 'heldShell.attached' : 'heldShell.detached',
    tooltip: [
      `${inline(s.command || 'shell')} (pid ${s.pid} in the container)${s.title ? `, opened as ${quoted(s.title, 'message')}` : ''}`,
      `Started ${new Date(s.started).toLocaleString()}`,
      attached ? `Shown in ${s.attached} terminal${s.attached > 1 ? 's' : ''} now.` : 'No terminal shows it: Attach opens one here.',
      'End stops it (as closing its terminal does).',
    ].join('\n'),
  });
}

/** "started 5 min ago", coarse on purpose: the tree refreshes on events, not on a clock. */
export function sinceText(started: number, now: number): string {
  const minutes = Math.max(0, Math.round((now - started) / 60_000));
  if (minutes < 1) return 'started just now';
  if (minutes < 60) return `started ${minutes} min ago`;
  const hours = Math.round(minutes / 60);
  return hours < 48 ? `started ${hours} h ago` : `started ${Math.round(hours / 24)} days ago`;
}

/** A terminal of this window and its session's state (ui/shells/shellLauncher.ts AgentTerminal, without vscode). */
export interface AgentRowInput {
  key: number;
  container: string;
  title: string;
  sessionId?: string;
  status: AgentStatus;
}

const STATE_WORDS: Record<AgentState, string> = { working: 'working', needsYou: 'needs you', idle: 'idle', ended: 'ended' };

/** The state as an icon: a bell that stands out when it needs you. */
export function agentStateIcon(state: AgentState): IconSpec {
  switch (state) {
    case 'needsYou':
      return { id: 'bell-dot', color: 'list.warningForeground' };
    case 'working':
      return { id: 'loading~spin' };
    case 'idle':
      return { id: 'circle-large-outline' };
    case 'ended':
      return { id: 'circle-slash' };
  }
}

/** How long it has been in its state, coarse: the tree is redrawn every half minute, not every second. */
export function timeInState(since: number, now: number): string {
  const minutes = Math.floor(Math.max(0, now - since) / 60_000);
  if (minutes < 1) return 'just now';
  if (minutes < 60) return `${minutes} min`;
  const hours = Math.floor(minutes / 60);
  return hours < 48 ? `${hours} h` : `${Math.floor(hours / 24)} days`;
}

/**
 * A session in one of this window's terminals: the agent (claude, codex, shell), its state and
 * for how long; a click focuses its terminal. `heldShell` is the holder's line for the same
 * session, when it has one: its contextValue keeps the `heldShell.` prefix so Attach and End stay.
 */
export function agentRowItem(
  a: AgentRowInput,
  now: number,
  heldShell?: HeldShellSummary,
): { label: string; description: string; icon: IconSpec; contextValue: string; tooltip: string } {
  const s = a.status;
  // An ended session says how it ended ("ended (exit 1)") and since when ("2 min ago").
  const exit = s.state === 'ended' && s.exitCode !== undefined ? ` (exit ${s.exitCode})` : '';
  const state = `${STATE_WORDS[s.state]}${exit}`;
  const time = timeInState(s.since, now);
  const ago = s.state === 'ended' && time !== 'just now' ? `${time} ago` : time;
  const said = s.state === 'needsYou' && s.message ? ` · ${quoted(s.message, 'label')}` : '';
  const held = heldShell ? `heldShell.${heldShell.attached > 0 ? 'attached' : 'detached'}.` : '';
  return plainItem({
    label: s.agent,
    description: `${state} · ${ago}${said}`,
    icon: agentStateIcon(s.state),
    contextValue: `${held}agent.${s.state}`,
    tooltip: [
      `${inline(a.title)}: ${s.agent === 'shell' ? 'a shell' : s.agent}, ${state} since ${new Date(s.since).toLocaleTimeString()}.`,
      s.state === 'needsYou' && s.message ? `It said: ${quoted(s.message, 'message')}` : undefined,
      s.title ? `Its title: ${quoted(s.title, 'message')}` : undefined,
      heldShell ? `${inline(heldShell.command || 'shell')} (pid ${heldShell.pid} in the container).` : undefined,
      'Click to focus its terminal.',
    ]
      .filter(Boolean)
      .join('\n'),
  });
}

/**
 * A session row with what its agent did (ui/agents/agentTimeline.ts): the counts and tokens after its
 * description, its last entries in the tooltip, and `.timeline` at the end of its contextValue
 * (Show Session Timeline). Unchanged when nothing came from the session.
 */
export function withTimeline<T extends { description: string; tooltip: string; contextValue: string }>(
  row: T,
  summary: TimelineSummary | undefined,
  recent: readonly AgentEvent[],
): T {
  if (summary === undefined) return row;
  const lines = recentLines(recent);
  return {
    ...row,
    description: plainText(`${row.description}${timelineSuffix(summary)}`, 'label'),
    contextValue: `${row.contextValue}.timeline`,
    tooltip: plainText(
      [row.tooltip, '', lines.length > 0 ? 'What its agent did last:' : undefined, ...lines].filter((l) => l !== undefined).join('\n'),
      'tooltip',
    ),
  };
}
