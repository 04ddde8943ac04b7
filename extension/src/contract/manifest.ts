/**
 * What package.json declares and the code names: settings and their values, command ids and
 * labels, context keys, the walkthrough, the bridge's port range, the version.
 * test/unit/manifest.test.ts holds package.json to them.
 */

/** The walkthrough's id in package.json (`contributes.walkthroughs`). */
export const WALKTHROUGH_ID = 'toolbox.gettingStarted';

export const CONTEXT_KEYS = {
  /** True once Docker answered a refresh, false after it failed (the walkthrough's first step). */
  engineReachable: 'toolbox.engineReachable',
  /** `installed` or `missing` once proximo was looked up on this host (the Proximo view's welcome). */
  proximo: 'toolbox.proximo',
} as const;

/**
 * Commands as the palette lists them (`Category: Title` in package.json), for messages that name
 * one and for the UI that offers it as a button; test/unit/manifest.test.ts holds package.json to them.
 * The one place a command id is written: its definition and whatever runs it take it from here.
 */
export const COMMAND_LABELS = {
  selectEngine: { command: 'toolbox.selectEngine', label: 'Toolbox: Select Engine…' },
  applyProposal: { command: 'toolbox.applyProposal', label: 'Toolbox: Apply Proposed Change' },
  rejectProposal: { command: 'toolbox.rejectProposal', label: 'Toolbox: Reject Proposed Change' },
  reviewProposals: { command: 'toolbox.reviewProposals', label: 'Toolbox: Review Proposed Changes…' },
  /** Checks the engine, the folder's containers and what they get, into a read-only report (ui/doctor/runDoctor.ts). */
  runDoctor: { command: 'toolbox.runDoctor', label: 'Toolbox: Run Doctor' },
  /** The same checks, redacted (plan/redact.ts), onto the clipboard for an issue. */
  copyDoctorReport: { command: 'toolbox.copyDoctorReport', label: 'Toolbox: Copy Report' },
  showLog: { command: 'toolbox.showLog', label: 'Toolbox: Show Log' },
  // What the doctor's lines tell the user to run (plan/doctor/).
  openShell: { command: 'toolbox.openShell', label: 'Toolbox: Open Toolbox Shell' },
  stopContainer: { command: 'toolbox.stopContainer', label: 'Toolbox: Stop Container…' },
  stopAll: { command: 'toolbox.stopAll', label: 'Toolbox: Stop Every Container…' },
  recreateContainer: { command: 'toolbox.recreateContainer', label: 'Toolbox: Recreate Drifted Container…' },
  togglePeerMessaging: { command: 'toolbox.togglePeerMessaging', label: 'Toolbox: Toggle Peer Messaging for This Folder…' },
  rebuildRuntimeImage: { command: 'toolbox.rebuildRuntimeImage', label: 'Toolbox: Rebuild Runtime Image' },
  showResolvedConfig: { command: 'toolbox.showResolvedConfig', label: 'Toolbox: Show Resolved Configuration' },
  turnOffReach: { command: 'toolbox.turnOffReach', label: 'Toolbox: Turn Off for This Folder' },
  // What the views' rows and the status bar items run (ui/views/treeNodes.ts, ui/views/statusBars.ts).
  refresh: { command: 'toolbox.refresh', label: 'Toolbox: Refresh' },
  attachShell: { command: 'toolbox.attachShell', label: 'Toolbox: Attach to Shell' },
  /** The command the network row's "earlier connections" row runs, and its context menu offers (ui/egress/showEgressLog.ts). */
  showEgressLog: { command: 'toolbox.showEgressLog', label: 'Toolbox: Open Connection Log' },
  /** The command a question's row runs: the answer pick for that question (ui/approvals/approvalCommands.ts). */
  showApprovals: { command: 'toolbox.showApprovals', label: 'Toolbox: Show Agent Questions…' },
  driftActions: { command: 'toolbox.driftActions', label: 'Toolbox: Fix Drifted Container…' },
  /** The command the connection questions' status bar item runs (ui/views/statusBars.ts EgressStatusBar). */
  showEgressQuestions: { command: 'toolbox.showEgressQuestions', label: 'Toolbox: Show Connection Questions…' },
  /** The login forwards' status bar item (ui/loginForwards/loginForwardStatus.ts). */
  stopLoginForward: { command: 'toolbox.stopLoginForward', label: 'Toolbox: Stop Forwarding a Login Port…' },
  /** A changed file's row in the Agent Worktrees view (ui/worktrees/worktreesProvider.ts). */
  compareAgentWorktree: { command: 'toolbox.compareAgentWorktree', label: 'Toolbox: Compare Agent Worktree with Base…' },
  /** A refused git file's row in the Agent Worktrees view (ui/worktrees/worktreesProvider.ts). */
  openRefusedGitFile: { command: 'toolbox.openRefusedGitFile', label: 'Toolbox: Open Refused Git Config File' },
  /**
   * The command a session's row runs: focus its terminal (ui/agents/agentCommands.ts). Run by the UI
   * itself, never listed, so it has no label (test/unit/commands-manifest.test.ts INTERNAL).
   */
  focusTerminal: { command: 'toolbox.focusTerminal' },
} as const;

/**
 * The URI scheme of a proposal's read-only diff sides (ui/approvals/proposalReview.ts); package.json's editor
 * title actions Apply and Reject show for it.
 */
export const PROPOSAL_SCHEME = 'toolbox-proposal';

/**
 * VS Code's own git settings, with the values package.json gives them by default
 * (`configurationDefaults`), under which VS Code's git never runs git inside a repository it finds
 * in the folder: no subfolder scan, no repository for an editor's file, no submodules opened, and
 * a status that does not enter submodules (git status runs a second git in every populated
 * submodule the index lists, and the container writes the index). A repository an agent makes
 * there has a config of its writing, whose programs that git would run on the host
 * (docs/decisions/0059-git-indirections-read-only.md); the Doctor names any value that differs.
 */
export const VSCODE_GIT_DEFAULTS = {
  'git.autoRepositoryDetection': false,
  'git.detectSubmodules': false,
  'git.ignoreSubmodules': true,
} as const;

/**
 * Names shared by package.json (settings, `when` clauses, walkthrough completion events) and the
 * code; test/unit/manifest.test.ts holds package.json to them.
 */
export const SETTINGS = {
  dockerHost: 'toolbox.dockerHost',
  peerMessaging: 'toolbox.peerMessaging',
  seccomp: 'toolbox.seccomp',
  /** scoped (default) or raw-socket; a folder value counts only when it narrows (docs/decisions/0041). */
  dockerEndpoint: 'toolbox.dockerEndpoint',
  /** User settings only: local (default) or any-address, where containers started through the endpoint publish ports (issue 38). */
  dockerEndpointPorts: 'toolbox.dockerEndpointPorts',
  /** open (default), ask or allowlist: where a workspace container may connect (issue 30); a folder value counts only when stricter. */
  egressMode: 'toolbox.egress.mode',
  /** Each folder's egress mode and allowed hosts, per folder path (User settings only; Allow for This Folder writes it). */
  egressForFolder: 'toolbox.egressForFolder',
  sessionsPersist: 'toolbox.sessions.persist',
  runtimeImagePull: 'toolbox.runtimeImage.pull',
  /** User settings only: the folder's protected paths are bound read-only (docs/decisions/0042-protected-paths-read-only.md). */
  protectedPaths: 'toolbox.protectedPaths',
  /** When a session goes to "needs you": always, whenUnfocused (the window), never. */
  notifyWhenAgentNeedsYou: 'toolbox.notifyWhenAgentNeedsYou',
  /** What Turn Off for This Folder turned off, per folder (User settings only; docs/decisions/0041). */
  turnedOffForFolder: 'toolbox.turnedOffForFolder',
  /** The profile (and share tokens) each folder opens with, per folder (User settings only; docs/decisions/0054). */
  profileForFolder: 'toolbox.profileForFolder',
  /** Agents' questions come to VS Code (issue 28); off: each is answered "ask" at once and the agent asks in its terminal. */
  approvalsEnabled: 'toolbox.approvals.enabled',
  /** A notification for each agent question (the status bar and the Workspaces view list them anyway). */
  approvalsNotify: 'toolbox.approvals.notify',
  /** How long a question waits for an answer in VS Code before the agent asks in its terminal (10 … AGENT_HOOK_LIMITS.maxTimeoutS). */
  approvalsTimeoutSeconds: 'toolbox.approvals.timeoutSeconds',
  /**
   * User settings only: `tcp` keeps the bridge's unix socket out of the container, so the shims
   * take TCP through host.docker.internal, as on Docker Desktop (docs/decisions/0058-forced-fallback-transports.md).
   */
  bridgeTransport: 'toolbox.transport.bridge',
  /** User settings only: `exec` reaches session holders through an exec, never the run dir's socket (decision 0058). */
  sessionsTransport: 'toolbox.transport.sessions',
} as const;

/** toolbox.transport.bridge: `auto` (the unix socket when it answers, else TCP) or `tcp`. */
export const BRIDGE_TRANSPORTS = ['auto', 'tcp'] as const;
/** toolbox.transport.sessions: `auto` (the run dir's socket when it answers, else an exec) or `exec`. */
export const SESSIONS_TRANSPORTS = ['auto', 'exec'] as const;

/**
 * The seccomp profiles a container can be created with (the `toolbox.seccomp` setting):
 * `unconfined` as upstream (sessionplan NestedSandboxSecurityOpt), or Docker's `default` profile.
 * docs/decisions/0024-seccomp-unconfined-with-an-opt-out.md
 */
export const SECCOMP_PROFILES = ['unconfined', 'default'] as const;

/**
 * toolbox.dockerEndpoint: `scoped` (the default) serves each workspace container its own Docker
 * endpoint in place of the docker-sock mount (docs/decisions/0047, 0048); `raw-socket` mounts the
 * host's socket as the toolbox CLI does (root on this host). A folder's own settings count only
 * for `scoped` (docs/decisions/0041).
 */
export const DOCKER_ENDPOINT_MODES = ['scoped', 'raw-socket'] as const;

/**
 * toolbox.dockerEndpointPorts: where the containers a workspace container starts through its
 * endpoint may publish ports. `local` (the default): on loopback, or on the address the workspace
 * container reaches this host at (host.docker.internal), which a port published without an address
 * gets; `any-address`: wherever the client asks, every address when it names none (Docker's own
 * default). User settings only (docs/decisions/0047, issue 38).
 */
export const DOCKER_ENDPOINT_PORTS = ['local', 'any-address'] as const;

/**
 * The bridge's shared loopback TCP listener takes the first free port of
 * [BRIDGE_DEFAULT_PORT, BRIDGE_DEFAULT_PORT + BRIDGE_PORT_COUNT). package.json contributes
 * `remote.portsAttributes` for exactly this range with `onAutoForward: ignore`, so a remote window
 * (code-server, Remote-SSH) does not auto-forward it as the "Code Extension Host" port
 * (issue 26, item 8; docs/decisions/0045-bridge-port-kept-out-of-port-forwarding.md).
 */
export const BRIDGE_DEFAULT_PORT = 17654;
export const BRIDGE_PORT_COUNT = 16;

/** This extension's version, as in package.json (test/unit/manifest.test.ts holds them equal). */
export const EXTENSION_VERSION = '0.1.0';
