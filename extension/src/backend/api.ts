/**
 * What the UI needs from the layers below, as one role per feature. A UI part asks for the role
 * it uses (the refresh manager for ViewService, the shell launcher for ShellService, …), so a
 * test fake implements that role alone. ToolboxBackend is all of them: what the composition root
 * builds (engineBackend.ts) and what commands get. The data types live in api/, one file a feature.
 */
import type * as vscode from 'vscode';
import type { ObjectNames } from '../contract/types';
import type { DockerChildren } from '../engine/dockerEndpoint/children';
import type { HolderAddress } from '../engine/sessions';
import type { HostReach } from '../plan/posture';
import type { ConfigProblem } from '../config/diagnostics';
import type * as Shells from './api/shells';
import type * as Worktrees from './api/worktrees';
import type { PeerSetting, ProfilesView, SeccompSetting, TurnOffPlan } from './api/settings';
import type { ProfileChoice } from '../plan/profiles';
import type { EngineChoice, ProximoSummary, RebuildSummary, Snapshot } from './api/views';
import type { LoginForwardInfo } from './api/loginForwards';
import type { EgressLogEntry } from './api/egress';
import type { DoctorRequest, DoctorResult } from './api/doctor';

export * from './api/shells';
export * from './api/worktrees';
export * from './api/settings';
export * from './api/views';
export * from './api/loginForwards';
export * from './api/egress';
export * from './api/doctor';

/** Opening shells and the held sessions they run in (backend/shells.ts, backend/sessions.ts). */
export interface ShellService {
  /** Reads the folder's config and names its container; throws on a config error. No Docker, no files written. */
  prepareShell(request: Shells.ShellRequest): Promise<Shells.PreparedShell>;
  /** Attaches to a recorded held session again (after a reload); SessionGoneError when it cannot. */
  reattachShell(record: Shells.SessionRecord): Promise<Shells.StartedShell>;
  /** Ends a held session (the user closed its terminal), then removes its container when nothing else runs there. */
  endShell(record: Shells.SessionRecord): Promise<void>;
  /** A shell ended by itself: removes its container when no other shell or session runs there (upstream's rule). */
  shellEnded(container: { id: string; name: string; holder?: HolderAddress }): Promise<void>;
}

/** The folder's configuration as the views and commands read and change it (backend/folderConfig.ts). */
export interface ConfigService {
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
  /**
   * Approves what the folder's project config asks beyond the user's own, exactly the widening
   * `hash` names (PendingProjectConfig), where the container cannot write; the next open applies it.
   */
  approveProjectConfig(folder: string, hash: string): Promise<void>;
  /** Show Resolved Configuration: every key of the folder's config, its value and the layer that set it (YAML). */
  resolvedConfigText(folder: string): Promise<string>;
  /** The problems of a .toolbox.yaml text (either file), placed on its lines, for the Problems panel. No I/O. */
  configProblems(file: string, text: string): Promise<ConfigProblem[]>;
  /** The named shells the folder's config has (`shells:` in ~/.toolbox.yaml and the project file), sorted. */
  namedShells(folder: string): Promise<Shells.NamedShellEntry[]>;
  /**
   * Works out the ~/.toolbox.yaml edit that configures a named shell (upstream's `--create`);
   * rejects with a sentence for a name or path the CLI would refuse.
   */
  prepareNamedShellCreate(folder: string, name: string, path: string): Promise<Shells.NamedShellCreatePlan>;
  /**
   * Works out how to turn one thing the container can reach off for the folder, in the user's
   * settings where the container cannot undo it; nothing is written until `apply()`. Rejects with
   * a sentence (a config file that is not applied, no config entry that adds it).
   */
  prepareTurnOff(folder: string, reach: HostReach): Promise<TurnOffPlan>;
  /** The profiles under ~/.toolbox/profiles, and the one the folder opens with (toolbox.profileForFolder). */
  profiles(folder: string): Promise<ProfilesView>;
  /**
   * Remembers the profile the folder opens with in the user's settings (no profile: removes the
   * folder's entry), where its container cannot write (docs/decisions/0054). Rejects a name the
   * CLI would refuse.
   */
  setFolderProfile(folder: string, choice: ProfileChoice): Promise<void>;
}

/** What the views show, live from the engine (backend/views.ts, backend/connection.ts). */
export interface ViewService {
  readonly names: ObjectNames;
  snapshot(): Promise<Snapshot>;
  proximo(): Promise<ProximoSummary>;
  /** Calls back on every Docker event about our objects until disposed. */
  watchEvents(onEvent: () => void, onError: (err: Error) => void): Promise<vscode.Disposable>;
}

/** Select Engine (backend/connection.ts). */
export interface EngineService {
  /** The configured endpoint and the well-known sockets that exist, each asked briefly. */
  engineChoices(): Promise<EngineChoice[]>;
}

/** Stopping containers, and the runtime image (backend/containers.ts, backend/images.ts). */
export interface ContainerService {
  stopContainer(name: string): Promise<void>;
  /** The names Stop All would stop now (every container of ours, anchor and initialiser included), sorted, the anchor last. */
  stopAllTargets(): Promise<string[]>;
  /**
   * Stops toolbox containers, the anchor last: only the names in `only` (what the user confirmed)
   * when given, else every one. Returns the names stopped.
   */
  stopAll(only?: readonly string[]): Promise<string[]>;
  /**
   * Remove What Was Left Behind: the containers and networks `owner` started through its Docker
   * endpoint, its named volumes kept, only while no container named `owner` exists (checked now:
   * it may have been recreated); otherwise rejects with a sentence saying why. Returns what it
   * removed and the volumes it kept (engine/dockerEndpoint/children.ts removeLeftBehind).
   */
  removeLeftBehind(owner: string): Promise<DockerChildren>;
  /**
   * Rebuild Runtime Image: builds the runtime image on this machine under its current tag
   * (`noCache`: without the layer cache), then removes old toolbox runtime images that no
   * container uses. A cancelled rebuild leaves the tag where it was.
   */
  rebuildRuntimeImage(options: { noCache: boolean }, progress: Shells.SessionProgress, signal: AbortSignal): Promise<RebuildSummary>;
}

/** Agent worktrees: the create with its undo, and the Worktrees view's actions (backend/worktrees.ts). */
export interface WorktreeService {
  /**
   * New Agent Worktree: the worktree and branch, then its container with the agent started. A
   * failure at any step leaves nothing behind (worktree, branch, container), and so does a task
   * the user cancels (undefined then).
   */
  createAgentWorktree(
    request: Worktrees.AgentWorktreeRequest,
    progress: Shells.SessionProgress,
    signal: AbortSignal,
  ): Promise<Worktrees.AgentWorktreeOpened | undefined>;
  /** The toolbox worktrees of the repositories holding these folders, with git and container state. */
  agentWorktrees(folders: readonly string[]): Promise<Worktrees.AgentWorktreeSummary[]>;
  /** The repositories of these folders that host git refuses to run on, one entry each, with the key and file to fix. */
  agentWorktreeRefusals(folders: readonly string[]): Promise<Worktrees.AgentWorktreeRefusal[]>;
  /** What removing a worktree would lose (uncommitted files, commits not on its base nor pushed). */
  agentWorktreeRisk(worktree: Worktrees.AgentWorktreeRef): Promise<Worktrees.AgentWorktreeRisk>;
  /** Stops the worktree's container, removes the worktree and (safely) its branch. */
  removeAgentWorktree(
    worktree: Worktrees.AgentWorktreeRef,
    options: { force: boolean; deleteRemote: boolean },
  ): Promise<Worktrees.AgentWorktreeRemoved>;
  /** Rebase onto the recorded base, push with lease; a conflict is an error saying how to go on. */
  syncAgentWorktree(worktree: Worktrees.AgentWorktreeRef, log: (line: string) => void): Promise<{ base: string; resumed: boolean }>;
  /** What the worktree changed against its base (working tree included), from the host. */
  agentWorktreeChanges(worktree: Worktrees.AgentWorktreeRef): Promise<Worktrees.AgentWorktreeChanges>;
  /** A file as it was at a commit of the worktree's repository (the left side of Compare with Base). */
  agentWorktreeFileAt(worktreePath: string, commit: string, file: string): Promise<string>;
  /** Removes the worktrees merged into their base (their containers stopped first). */
  pruneAgentWorktrees(folder: string, log: (line: string) => void): Promise<Worktrees.AgentWorktreePruned>;
}

/**
 * Login callbacks (backend/loginForwards.ts, issue 29): the host's 127.0.0.1:<port> relayed into a
 * container's own loopback while a browser login completes (docs/decisions/0053).
 */
export interface LoginForwardService {
  /**
   * Forwards `port` to `container` (a running container of ours) until the login completes or
   * LOGIN_FORWARD.lifetimeMs; asked again for the same container and port, the time starts over.
   * Rejects with a sentence: a port the host may not listen on, taken, forwarded to another
   * container, too many forwards, the container not running.
   */
  forwardLoginPort(container: string, port: number): Promise<LoginForwardInfo>;
  /** Stops the forward on `port`, if one is open. */
  stopLoginForward(port: number): Promise<void>;
  /** The forwards open now, by port. */
  loginForwards(): LoginForwardInfo[];
}

/**
 * The egress policy's connection log (backend/egress.ts, issue 30): what each container under a
 * policy connected to, or was refused (docs/decisions/0056).
 */
export interface EgressService {
  /** The container's connection log in this window, oldest first (at most EGRESS_LIMITS.logEntries). */
  egressLog(container: string): EgressLogEntry[];
  /** Called (throttled) when a container's log or counters change; the views refresh from the snapshot. */
  onDidChangeEgress(listener: (container: string) => void): { dispose(): void };
}

/** Run Doctor and Copy Report (backend/doctor/, issue 31): the engine and the folders' containers checked, read-only. */
export interface DoctorService {
  /**
   * Every check of plan/doctor/ over the facts gathered now, each probe bounded in time
   * (DOCTOR_LIMITS): the lines, their counts, the report and its redacted copy. Never rejects for
   * an engine that is down or slow: that is a line of the report.
   */
  doctor(request: DoctorRequest): Promise<DoctorResult>;
}

/** Every role: what the composition root builds and commands get. */
export type ToolboxBackend = ShellService &
  ConfigService &
  ViewService &
  EngineService &
  ContainerService &
  WorktreeService &
  LoginForwardService &
  EgressService &
  DoctorService;

/** The backend as the window holds it: it also forgets its connection and shuts down. */
export interface LoadedBackend extends ToolboxBackend, vscode.Disposable {
  /** The endpoint setting changed: the next call connects anew (shells running over the old one go on). */
  resetConnection(): void;
}
