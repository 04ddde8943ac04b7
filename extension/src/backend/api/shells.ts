/**
 * The shell types that cross between the backend and the UI: what a command asks for, the
 * prepared and opened shell, and what a window records to attach a held shell again.
 */
import type { ShellExec } from '../../engine/exec';
import type { HolderAddress } from '../../engine/sessions';
import type { OpenAction } from '../../engine/open';
import type { WorkspaceRegistration } from '../../bridge/hub';
import type { UnknownKey } from '../../config/openIssues';
import { ToolboxError } from '../../contract/errors';
import type { ProfileChoice } from '../../plan/profiles';

export interface ShellRequest {
  /** Absolute host path of the workspace folder. */
  folder: string;
  /** Per-run override of peer messaging (`--peer` / `--peer=false`); undefined: the setting. */
  peer?: boolean;
  /** A named shell (`toolbox shell --name`). */
  namedShell?: string;
  /**
   * This run's profile (`toolbox shell --profile <name> --share <tokens>`); `{ share: [] }` is no
   * profile. Undefined: the profile the folder opens with (toolbox.profileForFolder).
   */
  profile?: ProfileChoice;
  /**
   * Ports to publish, in upstream's `-p` syntax (plan/publish.ts). As `-p`, they apply when the
   * container is created; a running container without them is reported as drift.
   */
  ports?: string[];
  /**
   * An agent worktree's shell: `folder` is the worktree, `root` its main repository (whose `.git`
   * is mounted too). The first shell starts the agent (the `agent` key), with `prompt` as its task
   * (awaited only when that shell starts).
   */
  worktree?: { root: string; prompt?: string | Promise<string | undefined> };
  /** Start this agent in the terminal instead of a shell (the shell follows when it exits). */
  agent?: 'claude' | 'codex';
}

/**
 * A shell whose container has been named and whose config has been read, but nothing created:
 * no Docker call, no socket, no file written yet. `open()` does all of that.
 */
export interface PreparedShell {
  /** The container the shell will run in. */
  container: string;
  /** The terminal's title. */
  title: string;
  /** Config problems that do not stop the open, as sentences for the log. */
  warnings: string[];
  /** The subset of `warnings` the user should see now: config files that were skipped, and why. */
  notices: string[];
  /** Keys the config files have that mean nothing (said once per file content at open; the key is text from the file). */
  unknownKeys: UnknownKey[];
  /** The workspace is untrusted, so its .toolbox.yaml was ignored (limited mode). */
  projectFileIgnored: boolean;
  /** What the project side asks beyond the user's own config, left out of this open until approved. */
  pendingConfig?: PendingProjectConfig;
  /**
   * Serves the bridge for the container, plans it, makes its image, anchor and socket volume
   * exist, then connects to, starts or creates it. Rejects with a sentence that says what to do.
   */
  open(progress: SessionProgress, signal: AbortSignal): Promise<ShellSession>;
}

/**
 * What a project's .toolbox.yaml (or its .vscode/settings.json, which the container can write
 * too) asks beyond the user's own config: not applied until the user approves exactly this for
 * the folder (ConfigService.approveProjectConfig; docs/decisions/0041-project-config-narrows-only.md).
 */
export interface PendingProjectConfig {
  /** The folder the approval is for. */
  folder: string;
  /** Names exactly this widening; a changed one has another. */
  hash: string;
  /** Where it was asked for: `.toolbox.yaml`, `.vscode/settings.json`. */
  sources: string[];
  /** The keys it touches (`image`, `mounts`, …): fixed names, no text from the file. */
  keys: string[];
  /** One line of plain text per thing it would add (at most 100, then how many more); every value from the file is quoted and bounded. */
  items: string[];
}

export interface ShellCommand {
  cmd: string[];
  user: string;
  workdir: string;
  /** Added to the container's environment for this shell only. */
  env: string[];
}

/** An opened container and what a terminal needs to run a shell in it. */
export interface ShellSession {
  id: string;
  name: string;
  /**
   * The endpoint of the engine the container lives on (as toolbox.dockerHost takes it): after an
   * engine switch, only that engine's container list may say the container is gone.
   */
  engine: string;
  /** connect, start or create. */
  action: OpenAction;
  peerActive: boolean;
  /** Drift and degraded peer setup, as sentences to show. */
  warnings: string[];
  command: ShellCommand;
  /** Whether the shell will outlive this window (held in the container), and if not, why. */
  persistence: ShellPersistence;
  /** Starts one shell at this size; each call is a new shell in the same container. */
  start(size: TerminalSize): Promise<StartedShell>;
  /**
   * The host folders mounted as the agents' homes (/home/toolbox/.claude, /home/toolbox/.codex),
   * when mounted: what to tell a user whose agent could not start (ui/agents/agentState.ts quickExitText).
   */
  agentHomes?: { claude?: string; codex?: string };
}

export interface TerminalSize {
  cols: number;
  rows: number;
}

/**
 * Whether shells outlive the window, and if not, why: `off` when toolbox.sessions.persist turns
 * them off (nothing to tell the user), else the holder could not be reached (`reason`).
 */
export type ShellPersistence = { held: true; transport: 'socket' | 'exec' } | { held: false; off: boolean; reason: string };

/** A running shell: a TTY exec, or a session in the container's holder (then with its record). */
export interface StartedShell extends ShellExec {
  /** Present when the shell lives in the session holder and can be attached again. */
  record?: SessionRecord;
}

/**
 * What a window keeps (in its workspace state, never in a container-writable place) to find a
 * held shell again after a reload: the container, the session, and how to reach its holder.
 */
export interface SessionRecord {
  folder: string;
  container: string;
  containerId: string;
  sessionId: string;
  title: string;
  holder: HolderAddress;
  /** The engine endpoint the container lives on (ShellSession.engine); absent in older records. */
  engine?: string;
  /** The terminal's last size, so the session can be attached before the terminal exists. */
  cols: number;
  rows: number;
  /** ms since the epoch. */
  openedAt: number;
  /** The agent the session runs, when the window knows (ui/agents/agentState.ts); a shell otherwise. */
  agent?: 'claude' | 'codex';
  /**
   * The container's bridge registration when the shell started, so a reloaded window serves the
   * bridge again before the terminal comes back (records from older versions have none).
   */
  bridge?: WorkspaceRegistration;
}

/** Why a recorded session cannot be attached again; said once, then the record is dropped. */
export class SessionGoneError extends ToolboxError {
  constructor(message: string) {
    super('session-gone', message);
    this.name = 'SessionGoneError';
  }
}

export interface SessionProgress {
  /**
   * A short step for the notification ("Building the runtime image: step 5 of 22 (…)"), with
   * how far that step is in percent when it is known (layers and bytes of a pull, build steps).
   */
  step(message: string, percent?: number): void;
  /** Raw log text (image build output) for the output channel. */
  log(text: string): void;
}

/** A shell configured in `shells:` (config/model.ts ShellConfig), for the picker. */
export interface NamedShellEntry {
  /** The key as the config file spells it. */
  key: string;
  /** The configured path ('' when the entry has none). */
  path: string;
}

/** A new `shells:` entry for ~/.toolbox.yaml, as `toolbox shell <name> --create` writes it; nothing written until `apply()`. */
export interface NamedShellCreatePlan {
  file: string;
  /** The file does not exist yet (it gets upstream's header comment). */
  creates: boolean;
  /** The key written (an existing spelling of the same name is reused). */
  key: string;
  path: string;
  /** The entry as it reads in the file, for the confirmation. */
  block: string;
  /** The folder does not exist yet: `apply()` creates it (mode 0755, as upstream). */
  createsFolder: boolean;
  apply(): Promise<void>;
}
