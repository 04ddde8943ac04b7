/**
 * The state of one Toolbox terminal's session, from the signals of its stream
 * (ui/agents/agentStream.ts) and the user's keystrokes: working, needs you, idle (at a shell prompt),
 * ended. Pure (a clock is passed in), so the rules are unit-tested: test/unit/agent-state.test.ts.
 *
 * The rules:
 * - a notification (OSC 9 / 777 / 99) → needs you, with its message; so does a BEL, unless the
 *   user typed within AGENT_STREAM_LIMITS.bellAfterInputMs (a shell answering Tab with a bell);
 * - any keystroke while it needs you → working (the user answered); so does the user focusing
 *   that terminal (focused(): they are looking at what it asked);
 * - a prompt marker A/B (OSC 133/633) → idle; C → working; Enter at an idle prompt → working when
 *   the terminal runs an agent or the shell marks its prompts (a plain shell without shell
 *   integration stays idle: nothing would ever say it is back; the runtime image's zsh and bash
 *   mark their prompts: images/runtime/shell-integration.*);
 * - ConEmu progress (OSC 9;4) set, or a title that starts with a spinner frame, while idle → working;
 * - the title names the agent (claude, codex) when the launch did not; a shell whose title just
 *   named an agent (the user started it there) is working;
 * - the launcher's exit mark (AGENT_EXIT_MARK, live or replayed: it is a fact, not a question)
 *   → the agent ended, with its exit status; the mark names the agent when the launch did not;
 * - while the agent has ended, the shell that follows takes over only when the user uses it:
 *   its prompt marks A/B, notifications, bells, progress and titles change nothing; Enter → the
 *   shell, idle; a C mark (a command runs; also in a replay, where no keystroke is seen) → the
 *   shell, working;
 * - the session ended (end()): ended for good, with the shell's exit code when it has one (an
 *   agent that already ended keeps its own); nothing changes it after that.
 */
import { CONTAINER } from '../../contract/upstream';
import { AGENT_STREAM_LIMITS } from './agentStream';
import type { StreamSignal } from './agentStream';
import { inline, plainText, quoted } from '../plainText';

export type AgentKind = 'claude' | 'codex' | 'shell';
export type AgentState = 'working' | 'needsYou' | 'idle' | 'ended';

export interface AgentStatus {
  agent: AgentKind;
  state: AgentState;
  /** When it entered this state (ms since the epoch). */
  since: number;
  /** What the agent said when it asked for the user (notification text), while it needs you. */
  message?: string;
  /** The last title the program set (OSC 0/2), sanitised. */
  title?: string;
  /** While ended: the agent's exit status (its launcher's mark) or the shell's exit code, when known. */
  exitCode?: number;
}

/** Braille spinner frames (U+2800–U+28FF) and the usual ASCII/dingbat spinners at a title's start. */
const SPINNER_TITLE = /^[\u2800-\u28ff\u25d0-\u25d3\u2596-\u259f|/\\-]\s/;

/** The agent a command line or title names, if any. */
export function agentOf(text: string | undefined): AgentKind | undefined {
  if (!text) return undefined;
  if (/\bclaude\b/i.test(text)) return 'claude';
  if (/\bcodex\b/i.test(text)) return 'codex';
  return undefined;
}

export class AgentStateTracker {
  private status: AgentStatus;
  private lastInput = Number.NEGATIVE_INFINITY;
  private promptsMarked = false;
  /** The session itself ended: nothing changes the state any more. */
  private over = false;

  constructor(
    agent: AgentKind | undefined,
    private readonly onChange: (status: AgentStatus) => void,
    private readonly now: () => number = Date.now,
  ) {
    // A launched agent starts working; a shell starts at its prompt.
    const kind = agent ?? 'shell';
    this.status = { agent: kind, state: kind === 'shell' ? 'idle' : 'working', since: now() };
  }

  get current(): AgentStatus {
    return this.status;
  }

  /** When the user last typed (ms on the tracker's clock; -Infinity when never). */
  get lastInputAt(): number {
    return this.lastInput;
  }

  /** The agent ended (its launcher's mark) and the shell after it has not been used yet. */
  private get agentEnded(): boolean {
    return this.status.state === 'ended' && !this.over;
  }

  /**
   * Reads a signal. `replayed`: it is in the history a held session replays when attached again
   * (after a reload): a notification or bell there was answered or not at some past time nobody
   * can tell, so it changes nothing (no "needs you", no nudge); titles, prompt marks, progress and
   * the agent's exit mark still restore what the session shows
   * (docs/decisions/0029-session-state-from-the-terminal-stream.md).
   */
  signal(s: StreamSignal, replayed = false): void {
    if (this.over) return;
    if (s.kind === 'agentExit') {
      const agent = this.status.agent === 'shell' ? (agentOf(s.agent) ?? 'shell') : this.status.agent;
      this.set('ended', undefined, { agent, exitCode: s.status });
      return;
    }
    if (this.agentEnded) {
      // The shell after the agent: only a command it runs takes over (Enter does too: input()).
      if (s.kind === 'prompt') {
        this.promptsMarked = true;
        if (s.mark === 'C') this.set('working', undefined, { agent: 'shell' });
      } else if (s.kind === 'title') {
        this.status = { ...this.status, title: s.title };
      }
      return;
    }
    switch (s.kind) {
      case 'notify':
        if (!replayed) this.set('needsYou', s.message);
        return;
      case 'bell':
        if (replayed) return;
        // A bell after a notification (Claude Code's iterm2_with_bell) keeps the notification's words.
        if (this.status.state === 'needsYou') return;
        if (this.now() - this.lastInput >= AGENT_STREAM_LIMITS.bellAfterInputMs) this.set('needsYou', 'The terminal rang its bell.');
        return;
      case 'prompt':
        this.promptsMarked = true;
        if (s.mark === 'A' || s.mark === 'B') this.set('idle');
        else if (s.mark === 'C') this.set('working');
        return;
      case 'progress':
        if (s.active && this.status.state === 'idle') this.set('working');
        return;
      case 'title': {
        if (s.title === this.status.title) {
          // The same title again (the recogniser hands back the same string): only a spinner while idle matters.
          if (this.status.state === 'idle' && SPINNER_TITLE.test(s.title)) this.set('working');
          return;
        }
        const named = agentOf(s.title);
        const agent = this.status.agent === 'shell' && named ? named : this.status.agent;
        const changedAgent = agent !== this.status.agent;
        this.status = { ...this.status, agent, title: s.title };
        // An agent that just named itself (started from the shell) or shows a spinner is working.
        if ((changedAgent || SPINNER_TITLE.test(s.title)) && this.status.state === 'idle') this.set('working');
        else if (changedAgent) this.onChange(this.status);
        return;
      }
    }
  }

  /** The user typed into the terminal. */
  input(data: string): void {
    this.lastInput = this.now();
    const state = this.status.state;
    if (this.over) return;
    if (this.agentEnded) {
      // Enter in the shell after the agent: the shell takes over, at its prompt until its C mark says a command runs.
      if (data.includes('\r')) this.set('idle', undefined, { agent: 'shell' });
    } else if (state === 'needsYou') this.set('working');
    else if (state === 'idle' && data.includes('\r') && (this.status.agent !== 'shell' || this.promptsMarked)) this.set('working');
  }

  /** The user brought this terminal to the front: what it asked for has been seen. */
  focused(): void {
    if (!this.over && this.status.state === 'needsYou') this.set('working');
  }

  /** The shell ended (or its container went away): `code` is its exit code, when it has one. */
  end(code?: number): void {
    if (this.over) return;
    const agentEnded = this.agentEnded;
    this.over = true;
    // An agent that ended keeps its own status (the shell after it may never have run).
    if (!agentEnded) this.set('ended', undefined, code === undefined ? {} : { exitCode: code });
  }

  private set(state: AgentState, message?: string, patch: { agent?: AgentKind; exitCode?: number } = {}): void {
    const s = this.status;
    const agent = patch.agent ?? s.agent;
    if (s.state === state && s.message === message && s.agent === agent && s.exitCode === patch.exitCode) return;
    this.status = {
      agent,
      state,
      since: s.state === state ? s.since : this.now(),
      ...(s.title !== undefined ? { title: s.title } : {}),
      ...(message ? { message } : {}),
      ...(patch.exitCode !== undefined ? { exitCode: patch.exitCode } : {}),
    };
    this.onChange(this.status);
  }
}

/** The tab's name for a terminal: its title, and "needs you" when its session does. */
export function terminalName(title: string, status: AgentStatus): string {
  return status.state === 'needsYou' ? `${title} (needs you)` : title;
}

/** The user's choice for the nudge (the toolbox.notifyWhenAgentNeedsYou setting). */
export type NudgeSetting = 'always' | 'whenUnfocused' | 'never';

export function nudgeSetting(value: unknown): NudgeSetting {
  return value === 'whenUnfocused' || value === 'never' ? value : 'always';
}

/**
 * Whether a session that just went to "needs you" gets a notification: never while the user
 * looks at its terminal (the window focused and that terminal the active one), and then as the
 * setting says.
 */
export function shouldNudge(setting: NudgeSetting, view: { windowFocused: boolean; activeTerminal: boolean }): boolean {
  if (setting === 'never') return false;
  if (view.windowFocused && view.activeTerminal) return false;
  return setting === 'always' || !view.windowFocused;
}

const AGENT_NAMES: Record<AgentKind, string> = { claude: 'Claude Code', codex: 'Codex', shell: 'The shell' };

/**
 * The nudge: names the agent and the container, then quotes what it said. The words come from the
 * terminal: plain text, after ours (docs/decisions/0040-outside-text-is-plain-text.md).
 */
export function nudgeText(container: string, status: AgentStatus): string {
  const words = quoted(status.message, 'message', AGENT_STREAM_LIMITS.messageChars + 2);
  const said = words ? `: ${words}` : '.';
  return plainText(`${AGENT_NAMES[status.agent]} in ${inline(container)} needs you${said}`, 'message');
}

/**
 * An agent launched by Toolbox that ends this soon after its start, with a non-zero status, most
 * likely could not start at all (not logged in in this container, no network): the user is told
 * what to do (quickExitText). Ten seconds: a login check or a failed connection ends within a
 * few, while a real session is at least a question and an answer.
 */
export const AGENT_QUICK_EXIT_MS = 10_000;

/** Whether a launched agent (launchedAt: when its session started; undefined when not launched here) just quit early. */
export function quickExit(status: AgentStatus, launchedAt: number | undefined): boolean {
  return (
    launchedAt !== undefined &&
    status.state === 'ended' &&
    status.agent !== 'shell' &&
    status.exitCode !== undefined &&
    status.exitCode !== 0 &&
    status.since - launchedAt <= AGENT_QUICK_EXIT_MS
  );
}

/** How each agent logs in inside the container, and where its home and login are. */
const AGENT_LOGIN: Record<Exclude<AgentKind, 'shell'>, { login: string; home: string; credentials: string }> = {
  claude: { login: 'run claude, then type /login', home: '.claude', credentials: '.credentials.json' },
  codex: { login: 'run codex login', home: '.codex', credentials: 'auth.json' },
};

/**
 * What to do when a launched agent quit early (quickExit): log in inside the container, and where
 * its login is kept (`hostHome`: the host folder mounted as its home, undefined when none is).
 * Never the agent's own output: that stays in the terminal. Plain text
 * (docs/decisions/0040-outside-text-is-plain-text.md).
 */
export function quickExitText(container: string, status: AgentStatus, launchedAt: number, hostHome: string | undefined): string {
  const agent = status.agent === 'codex' ? 'codex' : 'claude';
  const how = AGENT_LOGIN[agent];
  const seconds = Math.max(1, Math.round((status.since - launchedAt) / 1000));
  const home = `${CONTAINER.home}/${how.home}`;
  const kept = hostHome
    ? `Its home in the container, ${home}, is ${inline(hostHome)} on this computer: the login (${how.credentials}) is kept there for every Toolbox container.`
    : `Its home in the container, ${home}, is not mounted from this computer (the mounts in .toolbox.yaml), so a login lasts as long as the container.`;
  return plainText(
    [
      `${AGENT_NAMES[agent]} in ${inline(container)} exited with status ${status.exitCode ?? '?'}, ${seconds} s after it started.`,
      `If it is not logged in here: in its terminal, ${how.login}.`,
      kept,
      'If the container has no network, it ends the same way. What it said is in the terminal.',
    ].join(' '),
    'message',
  );
}

/**
 * At most one nudge per terminal in this long. A program can ask for the user as often as it
 * writes (alternating OSC 133;C and OSC 9 asks a thousand times a second); the tab's name, the tree
 * and the status bar still follow every change, only the notification waits.
 */
export const NUDGE_INTERVAL_MS = 30_000;

/**
 * Which state changes become a nudge: a "needs you" not seen before (one nudge per time it asks),
 * and then at most one per terminal per NUDGE_INTERVAL_MS. Pure (a clock is passed in):
 * test/unit/plain-text.test.ts.
 */
export class NudgeGate {
  /** Per terminal: the `since` of the "needs you" already seen. */
  private readonly seen = new Map<number, number>();
  /** Per terminal: when its last nudge was shown. */
  private readonly shown = new Map<number, number>();

  constructor(
    private readonly now: () => number = Date.now,
    private readonly intervalMs: number = NUDGE_INTERVAL_MS,
  ) {}

  /** A terminal's session changed state: true when it now asks for the user anew. */
  asks(key: number, status: AgentStatus): boolean {
    if (status.state !== 'needsYou') {
      this.seen.delete(key);
      if (status.state === 'ended') this.shown.delete(key);
      return false;
    }
    if (this.seen.get(key) === status.since) return false;
    this.seen.set(key, status.since);
    return true;
  }

  /** Whether that terminal may have a nudge now; true counts as one shown. */
  take(key: number): boolean {
    const t = this.now();
    const last = this.shown.get(key);
    if (last !== undefined && t - last < this.intervalMs) return false;
    this.shown.set(key, t);
    return true;
  }
}

/** The status bar's count of sessions that need you; undefined hides it. */
export function needsYouStatus(
  list: ReadonlyArray<{ container: string; title: string; status: AgentStatus }>,
): { text: string; tooltip: string } | undefined {
  const waiting = list.filter((a) => a.status.state === 'needsYou');
  if (waiting.length === 0) return undefined;
  return {
    text: `$(bell-dot) ${waiting.length}`,
    tooltip: plainText(
      [
        `${waiting.length} Toolbox session${waiting.length === 1 ? ' needs' : 's need'} you:`,
        ...waiting.map((a) => `• ${inline(a.title)}: ${quoted(a.status.message, 'message') || 'waiting'}`),
        '',
        'Click to go to the first one.',
      ].join('\n'),
      'tooltip',
    ),
  };
}
