/**
 * What the UI needs from the layers below, as one interface. The composition root builds the
 * real one (engineBackend.ts); commands, views and terminals only see this, so they stay thin.
 */
import type * as vscode from 'vscode';
import type { ObjectNames, OwnedContainerKind, SeccompProfile } from '../contract/types';
import type { ShellExec } from '../engine/exec';
import type { HolderAddress } from '../engine/sessions';
import type { OpenAction } from '../engine/open';
import type { HostReach } from '../plan/posture';
import type { PublishedPort } from '../plan/publish';
import type { SettingScope } from '../config/resolve';
import type { ConfigProblem } from '../config/diagnostics';

export interface ShellRequest {
  /** Absolute host path of the workspace folder. */
  folder: string;
  /** Per-run override of peer messaging (`--peer` / `--peer=false`); undefined: the setting. */
  peer?: boolean;
  /** A named shell (`toolbox shell --name`). */
  namedShell?: string;
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
  /** The workspace is untrusted, so its .toolbox.yaml was ignored (limited mode). */
  projectFileIgnored: boolean;
  /**
   * Serves the bridge for the container, plans it, makes its image, anchor and socket volume
   * exist, then connects to, starts or creates it. Rejects with a sentence that says what to do.
   */
  open(progress: SessionProgress, signal: AbortSignal): Promise<ShellSession>;
}

/** The process an interactive shell runs, as the container's create spec and the planner decided it. */
export interface AgentWorktreeRequest {
  /** Any folder inside the repository. */
  folder: string;
  branch: string;
  /** undefined: the repository's default branch (origin/HEAD). */
  base?: string;
  /** Branch from the base as last fetched, without contacting origin. */
  noFetch?: boolean;
  /**
   * The agent's task, passed to it as one argument. A promise while the user still types it: the
   * worktree and its container are made meanwhile, and `undefined` from it cancels the create,
   * which then leaves nothing behind.
   */
  prompt?: string | Promise<string | undefined>;
}

export interface AgentWorktreeOpened {
  path: string;
  root: string;
  branch: string;
  base: string;
  seeded: string[];
  notes: string[];
  prepared: PreparedShell;
  session: ShellSession;
}

/** A worktree as commands address it: its repository root and branch. */
export interface AgentWorktreeRef {
  root: string;
  branch: string;
}

export interface AgentWorktreeSummary {
  root: string;
  path: string;
  /** undefined while detached (mid-rebase). */
  branch?: string;
  base?: string;
  present: boolean;
  dirty: boolean;
  ahead?: number;
  behind?: number;
  rebasing: boolean;
  /** The worktree's container: its name and state, when one exists. */
  container?: { name: string; state: string };
}

export interface AgentWorktreeChanges {
  path: string;
  base: string;
  mergeBase: string;
  changes: { path: string; oldPath?: string; status: 'added' | 'modified' | 'deleted' | 'renamed' }[];
}

export interface AgentWorktreeRisk {
  path: string;
  dirtyFiles: string[];
  unmergedCommits: number;
  pushed: boolean;
}

export interface AgentWorktreeRemoved {
  path: string;
  branchDeleted: boolean;
  remoteDeleted: boolean;
  notes: string[];
}

export interface AgentWorktreePruned {
  removed: { branch: string; path: string }[];
  kept: { branch: string; path: string; why: string }[];
  notes: string[];
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
}

export interface TerminalSize {
  cols: number;
  rows: number;
}

export type ShellPersistence = { held: true; transport: 'socket' | 'exec' } | { held: false; reason: string };

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
  /** The terminal's last size, so the session can be attached before the terminal exists. */
  cols: number;
  rows: number;
  /** ms since the epoch. */
  openedAt: number;
  /** The agent the session runs, when the window knows (ui/agentState.ts); a shell otherwise. */
  agent?: 'claude' | 'codex';
}

/** Why a recorded session cannot be attached again; said once, then the record is dropped. */
export class SessionGoneError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'SessionGoneError';
  }
}

/** A `.toolbox.yaml` edit ready to write (ToolboxBackend.prepareTurnOff). */
export interface TurnOffPlan {
  /** The file written: the project file that applies to the folder, or a new one in it. */
  file: string;
  /** The file does not exist yet. */
  creates: boolean;
  /** The file sits in a parent directory, so the change applies to the other folders under it too. */
  sharedWith?: string;
  /** The file already turns it off: the container predates the change. Nothing to write. */
  alreadyOff: boolean;
  /** Writes the file, unless it changed since it was read. */
  apply(): Promise<void>;
}

export interface RebuildSummary {
  tag: string;
  /** Old runtime images removed. */
  pruned: string[];
  /** Old runtime images kept because a container uses them. */
  inUse: string[];
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

export interface Snapshot {
  containers: ContainerSummary[];
  anchor: AnchorSummary;
  volume: SocketVolumeSummary;
  /** Containers sharing the anchor's PID namespace. */
  members: string[];
  sessions: AgentSessionSummary[];
  /** The engine in use and where its endpoint came from: "Docker 20.10.24 at unix:///var/run/docker.sock (the platform default)". */
  engine?: string;
}

/** One engine Select Engine offers (engine/client.ts probeEngines). */
export interface EngineChoice {
  /** The endpoint as toolbox.dockerHost takes it. */
  endpoint: string;
  /** Where it comes from: "from DOCKER_HOST", "the Colima socket", … */
  source: string;
  /** "Docker 20.10.24 (API 1.41)" when it answered and is new enough. */
  version?: string;
  /** Why it cannot be used, when it cannot. */
  problem?: string;
  /** It is the endpoint the current connection uses. */
  current: boolean;
}

/** Where a folder's peer-messaging choice comes from (the highest layer that sets it, config/resolve.ts). */
export type PeerSettingSource =
  | { from: 'default' }
  | { from: 'user-file'; file: string }
  | { from: 'project-file'; file: string }
  | { from: 'env'; variable: string }
  | { from: 'setting'; scope: SettingScope };

/** A folder's peer-messaging choice now, and where it comes from. */
export interface PeerSetting {
  on: boolean;
  source: PeerSettingSource;
  /** The project .toolbox.yaml that applies to the folder (maybe in a parent directory), if any. */
  projectFile?: string;
  /** A project .toolbox.yaml can be read and written (the workspace is trusted). */
  projectFileUsable: boolean;
}

/** A folder's toolbox.seccomp now; `scope` is where it is set, undefined for the default (unconfined). */
export interface SeccompSetting {
  profile: SeccompProfile;
  scope?: SettingScope;
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

export interface ToolboxBackend {
  readonly names: ObjectNames;
  /** Reads the folder's config and names its container; throws on a config error. No Docker, no files written. */
  prepareShell(request: ShellRequest): Promise<PreparedShell>;
  /** Attaches to a recorded held session again (after a reload); SessionGoneError when it cannot. */
  reattachShell(record: SessionRecord): Promise<StartedShell>;
  /** Ends a held session (the user closed its terminal), then removes its container when nothing else runs there. */
  endShell(record: SessionRecord): Promise<void>;
  /** A shell ended by itself: removes its container when no other shell or session runs there (upstream's rule). */
  shellEnded(container: { id: string; name: string; holder?: HolderAddress }): Promise<void>;
  /** The named shells the folder's config has (`shells:` in ~/.toolbox.yaml and the project file), sorted. */
  namedShells(folder: string): Promise<NamedShellEntry[]>;
  /**
   * Works out the ~/.toolbox.yaml edit that configures a named shell (upstream's `--create`);
   * rejects with a sentence for a name or path the CLI would refuse.
   */
  prepareNamedShellCreate(folder: string, name: string, path: string): Promise<NamedShellCreatePlan>;
  /** Whether the folder's settings want peer messaging now. */
  peerWanted(folder: string): Promise<boolean>;
  /** The same choice, with where it comes from (for the Peer Messaging view and the toggle). */
  peerSetting(folder: string): Promise<PeerSetting>;
  /** The folder's toolbox.seccomp now (what its next container is created with), and where it is set. */
  seccompSetting(folder: string): Promise<SeccompSetting>;
  /**
   * Writes `peer_messaging: <on>` into the folder's project .toolbox.yaml (the one that applies,
   * or a new one in the folder), keeping its comments. Returns the file written.
   */
  writeProjectPeerMessaging(folder: string, on: boolean): Promise<string>;
  /**
   * Writes `peer_messaging: <on>` into ~/.toolbox.yaml, keeping its comments, so the toolbox CLI
   * and the editor agree whatever their defaults (docs/decisions/0018). Returns the file written.
   */
  pinUserPeerMessaging(on: boolean): Promise<string>;
  /** Show Resolved Configuration: every key of the folder's config, its value and the layer that set it (YAML). */
  resolvedConfigText(folder: string): Promise<string>;
  /** The problems of a .toolbox.yaml text (either file), placed on its lines, for the Problems panel. No I/O. */
  configProblems(file: string, text: string): Promise<ConfigProblem[]>;
  snapshot(): Promise<Snapshot>;
  /** Select Engine: the configured endpoint and the well-known sockets that exist, each asked briefly. */
  engineChoices(): Promise<EngineChoice[]>;
  proximo(): Promise<ProximoSummary>;
  stopContainer(name: string): Promise<void>;
  /**
   * New Agent Worktree: the worktree and branch (host/worktree.ts), then its container with the
   * agent started. A failure at any step leaves nothing behind (worktree, branch, container), and
   * so does a task the user cancels (undefined then).
   */
  createAgentWorktree(
    request: AgentWorktreeRequest,
    progress: SessionProgress,
    signal: AbortSignal,
  ): Promise<AgentWorktreeOpened | undefined>;
  /** The toolbox worktrees of the repositories holding these folders, with git and container state. */
  agentWorktrees(folders: readonly string[]): Promise<AgentWorktreeSummary[]>;
  /** What removing a worktree would lose (uncommitted files, commits not on its base nor pushed). */
  agentWorktreeRisk(worktree: AgentWorktreeRef): Promise<AgentWorktreeRisk>;
  /** Stops the worktree's container, removes the worktree and (safely) its branch. */
  removeAgentWorktree(worktree: AgentWorktreeRef, options: { force: boolean; deleteRemote: boolean }): Promise<AgentWorktreeRemoved>;
  /** Rebase onto the recorded base, push with lease; a conflict is an error saying how to go on. */
  syncAgentWorktree(worktree: AgentWorktreeRef, log: (line: string) => void): Promise<{ base: string; resumed: boolean }>;
  /** What the worktree changed against its base (working tree included), from the host. */
  agentWorktreeChanges(worktree: AgentWorktreeRef): Promise<AgentWorktreeChanges>;
  /** A file as it was at a commit of the worktree's repository (the left side of Compare with Base). */
  agentWorktreeFileAt(worktreePath: string, commit: string, file: string): Promise<string>;
  /** Removes the worktrees merged into their base (their containers stopped first). */
  pruneAgentWorktrees(folder: string, log: (line: string) => void): Promise<AgentWorktreePruned>;
  /** The names Stop All would stop now (every container of ours, anchor and initialiser included), sorted, the anchor last. */
  stopAllTargets(): Promise<string[]>;
  /**
   * Stops toolbox containers, the anchor last: only the names in `only` (what the user confirmed)
   * when given, else every one. Returns the names stopped.
   */
  stopAll(only?: readonly string[]): Promise<string[]>;
  /**
   * Works out the `.toolbox.yaml` edit that turns one thing the container can reach off for the
   * folder; nothing is written until `apply()`. Rejects with a sentence (untrusted workspace,
   * a config file that is not applied, no config entry that adds it).
   */
  prepareTurnOff(folder: string, reach: HostReach): Promise<TurnOffPlan>;
  /**
   * Rebuild Runtime Image: builds the runtime image on this machine under its current tag
   * (`noCache`: without the layer cache), then removes old toolbox runtime images that no
   * container uses. A cancelled rebuild leaves the tag where it was.
   */
  rebuildRuntimeImage(options: { noCache: boolean }, progress: SessionProgress, signal: AbortSignal): Promise<RebuildSummary>;
  /** Calls back on every Docker event about our objects until disposed. */
  watchEvents(onEvent: () => void, onError: (err: Error) => void): Promise<vscode.Disposable>;
}

// What a snapshot holds: plain data the views render (ui/model.ts derives from it).

export type ContainerKind = OwnedContainerKind;

export interface ContainerSummary {
  id: string;
  name: string;
  /** Docker's State: running, exited, created, paused, restarting, removing, dead. */
  state: string;
  /** Docker's human status, e.g. "Up 3 minutes" (stale as soon as it is read: show startedAt). */
  status?: string;
  /** When a running container started (ms since the epoch), from the engine's State.StartedAt. */
  startedAt?: number;
  image?: string;
  kind: ContainerKind;
  /** HostConfig.PidMode as stored (`container:<id>` once Docker has resolved it); '' for none. */
  pidMode: string;
  /** Joined the current anchor's PID namespace. */
  peer: boolean;
  /**
   * What a per-run override asked for when this container was opened (LABELS.peerRun); undefined
   * when it was opened with the folder's setting (or by the CLI, which sets no label).
   */
  peerRun?: boolean;
  /** Mounts the peer socket volume at the contract's socket dir. */
  mountsSocketVolume: boolean;
  /**
   * The seccomp profile it runs with, read from the inspect the listing already made
   * (HostConfig.SecurityOpt, plan/drift.ts seccompProfileOf); undefined when not known, and then
   * never judged as seccomp drift.
   */
  seccomp?: SeccompProfile;
  /** Host workspace folder, from the container's TOOLBOX_HOST_WORKSPACE. */
  workspace?: string;
  /** Routed proximo hosts pinned in the container (ExtraHosts other than host.docker.internal). */
  proximoHosts?: string[];
  /** The proximo CA is mounted. */
  proximoCa?: boolean;
  /** What the container can reach on this host beyond its workspace, from its mounts (plan/posture.ts). */
  reach?: HostReach[];
  /** The ports it publishes on this host (plan/publish.ts publishedPorts). */
  ports?: PublishedPort[];
  /** How to reach the container's session holder (set when the container has one). */
  holder?: HolderAddress;
  /** Shells its session holder keeps, attached or not (undefined: no holder reachable from here). */
  shells?: HeldShellSummary[];
}

/** A shell the container's session holder keeps, as the tree lists it. */
export interface HeldShellSummary {
  id: string;
  pid: number;
  /** The command line, as the holder recorded it. */
  command: string;
  /** The terminal title it was opened with, when known. */
  title?: string;
  /** ms since the epoch (the container's clock). */
  started: number;
  /** Terminals attached to it right now, in any window. */
  attached: number;
}

export interface AnchorSummary {
  name: string;
  id?: string;
  state: 'running' | 'stopped' | 'missing';
}

export interface SocketVolumeSummary {
  name: string;
  exists: boolean;
  /** `uid:gid` owning the volume root, when known. */
  owner?: string;
  /** Octal mode, e.g. `0700`, when known. */
  mode?: string;
}

export interface AgentSessionSummary {
  pid: number;
  /** Session or agent name as the registry records it. */
  name?: string;
  cwd?: string;
  /** The container it lives in (its working directory is that container's workspace), when known. */
  container?: string;
  /** Whether peers can message it (plan/peerReach.ts), and why not. */
  reach?: 'reachable' | 'unreachable' | 'unknown';
  why?: string;
}

export interface ProximoSummary {
  installed: boolean;
  binary?: string;
  caPath?: string;
  hosts: string[];
}
