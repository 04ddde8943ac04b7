/**
 * The contract with the shims inside the runtime image (shims/: code, xdg-open, proximo,
 * git-credential-toolbox, paplay, toolbox-propose, and the bridge-lib.sh they source): the bridge's
 * state files, its routes, request and response fields, body and time limits, the environment the
 * container gets and the shims read, their exit codes. The contract test
 * (test/unit/contract.test.ts) reads the shim files and holds them to these values, so changing
 * one side without the other fails CI.
 */
import { AGENT_HOOK_LIMITS } from './agentHook';

/**
 * The directory inside a bridge run dir that the container gets instead of the run dir when
 * toolbox.transport.bridge is `tcp` (backend/bridges.ts tcpOnlyRunDir).
 */
export const BRIDGE_TCP_ONLY_DIR = 'tcp-only';

/** File names inside a bridge state directory (host and container alike). */
export const BRIDGE_FILES = {
  token: 'token',
  port: 'port',
  pid: 'pid',
  log: 'log',
  runDir: 'run',
  socket: 'bridge.sock',
  /** A directory in the state dir, made while a window takes a workspace's bridge over (bridge/hub.ts). */
  takeoverLock: 'takeover.lock',
} as const;

/** The bridge's HTTP routes. */
export const ROUTES = {
  healthz: '/healthz',
  open: '/open',
  edit: '/edit',
  proximo: '/proximo',
  credential: '/credential',
  sound: '/sound',
  /** A proposed change to a protected path, reviewed in VS Code (docs/decisions/0044-proposals-for-protected-paths.md). */
  propose: '/propose',
  /**
   * An agent's question (a PermissionRequest hook), held until the user answers it in VS Code, the
   * time runs out or the hook hangs up (docs/decisions/0050-approvals-over-the-bridge.md).
   */
  approval: '/approval',
  /** What an agent did (its other hooks): the session timeline and usage. Answered at once. */
  agentEvent: '/agent-event',
} as const;

/** JSON field names of bridge requests and responses. */
export const FIELDS = {
  url: 'url',
  editor: 'editor',
  path: 'path',
  command: 'command',
  args: 'args',
  home: 'home',
  codexHome: 'codex_home',
  op: 'op',
  input: 'input',
  /** /sound: the container-side file name (for the log only, never a path) and the base64 MP3. */
  name: 'name',
  data: 'data',
  exit: 'exit',
  output: 'output',
  /** /propose: the new text of the protected file (`path` is relative to the workspace folder). */
  content: 'content',
} as const;

/** Request body limits in bytes. */
export const BODY_LIMITS = {
  open: 9216,
  edit: 9216,
  proximo: 16384,
  credential: 65536,
  /** Upstream's maxSoundBody (internal/bridge/daemon.go): a base64 MP3 chime. */
  sound: 512 * 1024,
  /** PROPOSAL_LIMITS.contentBytes of text, JSON-escaped, and the path. */
  propose: 1024 * 1024,
  /** The hook trims what it sends (AGENT_HOOK_LIMITS); this is the cap after JSON escaping. */
  approval: 32 * 1024,
  agentEvent: 32 * 1024,
} as const;

/**
 * /propose: the text a proposal may carry (UTF-8 bytes), the proposals one container may have
 * waiting for the user at once, and the longest relative path it may name.
 */
export const PROPOSAL_LIMITS = {
  contentBytes: 256 * 1024,
  pendingPerContainer: 5,
  pathChars: 512,
} as const;

/**
 * /credential's time budget, in milliseconds: how long the user has to answer the consent prompt
 * for a host that is not allowed yet (no answer is a refusal), and how long host git then has.
 * The route's run limit is their sum; the shim's --max-time must outlast it plus the server's
 * write timeout, so the shim never gives up before the bridge answers (test/unit/contract.test.ts).
 */
export const CREDENTIAL_LIMITS_MS = {
  consent: 30_000,
  git: 20_000,
  /** After "Deny", the same host is refused without asking again for this long. */
  denyMemory: 5 * 60_000,
} as const;

/**
 * /open's time budget, in milliseconds. VS Code may ask the user whether to open the site (its
 * link protection dialog); the route waits for that answer this long, and the shim's --max-time
 * outlasts it plus the server's write timeout, so the shim reports the user's answer, not a
 * time-out of its own (test/unit/contract.test.ts). Past it, the shim says nobody answered.
 */
export const OPEN_LIMITS_MS = {
  confirm: 180_000,
} as const;

/** How long the host side may run for each route, in milliseconds. */
export const RUN_LIMITS_MS = {
  open: OPEN_LIMITS_MS.confirm,
  edit: 5_000,
  proximo: 120_000,
  credential: CREDENTIAL_LIMITS_MS.consent + CREDENTIAL_LIMITS_MS.git,
  /** Writing the file and starting the player; the answer does not wait for the sound to end. */
  sound: 5_000,
  /** Checks and hands the proposal to the editor; the answer does not wait for the user. */
  propose: 5_000,
  /** The hook holds the request open while the user decides, up to the longest timeout. */
  approval: AGENT_HOOK_LIMITS.maxTimeoutS * 1000,
  agentEvent: 2_000,
} as const;

/** Client-side (shim) `curl --max-time` per route, in seconds: run limit plus slack. */
export const SHIM_MAX_TIME_S = {
  open: 195,
  edit: 5,
  proximo: 135,
  credential: 65,
  /** Upstream's paplay shim: 5. */
  sound: 5,
  propose: 10,
  approval: AGENT_HOOK_LIMITS.maxTimeoutS + 15,
  agentEvent: 3,
} as const;

export const SERVER_TIMEOUTS_MS = {
  header: 5_000,
  read: 10_000,
  write: 10_000,
  idle: 30_000,
} as const;

/** The media type every bridge POST must declare (the shims send it; browsers' simple requests cannot). */
export const REQUEST_CONTENT_TYPE = 'application/json';

export const EDITORS = ['code', 'codium'] as const;

export const CREDENTIAL_OPS = { get: 'fill', store: 'approve', erase: 'reject' } as const;

/** proximo verbs that need host root or would make toolbox an installer: refused, host-only. */
export const PROXIMO_HOST_ONLY = ['install', 'uninstall', 'trust', 'config'] as const;
/** The token length in bytes; the token file holds it hex-encoded plus a newline. */
export const TOKEN_BYTES = 32;

/** Environment variable names set in the container or read by the shims. */
export const ENV = {
  hostWorkspace: 'TOOLBOX_HOST_WORKSPACE',
  pwd: 'PWD',
  remoteControlPrefix: 'CLAUDE_REMOTE_CONTROL_SESSION_NAME_PREFIX',
  hostAgentHome: 'TOOLBOX_HOST_AGENT_HOME',
  hostCodexHome: 'TOOLBOX_HOST_CODEX_HOME',
  nodeExtraCaCerts: 'NODE_EXTRA_CA_CERTS',
  proximoCa: 'TOOLBOX_PROXIMO_CA',
  gitCredentialBridge: 'GIT_CREDENTIAL_BRIDGE',
  cliVersion: 'TOOLBOX_CLI_VERSION',
  /** Which extension release created the container: upstream's TOOLBOX_CLI_VERSION under our own name. */
  vscodeVersion: 'TOOLBOX_VSCODE_VERSION',
  /** The repo digest of the image the container was created from (upstream sessionplan ImageDigestEnv). */
  imageDigest: 'TOOLBOX_IMAGE_DIGEST',
  /** The host's OS and architecture in Go's GOOS/GOARCH spelling (upstream sessionplan hostPlatformEnv). */
  hostOs: 'TOOLBOX_HOST_OS',
  hostArch: 'TOOLBOX_HOST_ARCH',
  managedStatusline: 'TOOLBOX_MANAGED_STATUSLINE',
  /** The user's shell, for programs that start one (the container's own command, /bin/zsh). */
  shell: 'SHELL',
  /**
   * Where the session holder listens (inside the container). Set when shells are held: the
   * runtime image's entrypoint starts the holder there as the container starts, so the first
   * shell needs no exec to start it (docs/decisions/0032-session-holder-started-with-the-container.md).
   */
  sessionSocket: 'TOOLBOX_SESSION_SOCKET',
  /** Where Docker clients in the container find the engine: the container's own endpoint (DOCKER_ENDPOINT). */
  dockerHost: 'DOCKER_HOST',
  /** Testcontainers reaches the containers it starts at this host (the endpoint refuses inspecting the default bridge). */
  testcontainersHostOverride: 'TESTCONTAINERS_HOST_OVERRIDE',
  /** `0` with the scoped Docker endpoint, which refuses BuildKit's /grpc: the docker CLI builds with the classic builder (engine/compat.ts). */
  dockerBuildkit: 'DOCKER_BUILDKIT',
  /**
   * The held session a process runs in: the holder's id for it (`s<n>`), set by the holder in each
   * shell it starts and sent by the agent hook, so an approval names its terminal. A label inside
   * one container, not a credential (docs/decisions/0050-approvals-over-the-bridge.md).
   */
  sessionId: 'TOOLBOX_SESSION_ID',
  /** Set under an egress policy: the host proxy's socket (EGRESS.containerSocket); the entrypoint starts the forwarder. */
  egressSocket: 'TOOLBOX_EGRESS_SOCKET',
} as const;

/**
 * Shim exit codes (sysexits.h). The host command's own exit code passes through unchanged;
 * these mark the cases where no host command ran.
 */
export const SHIM_EXIT = {
  ok: 0,
  /** A request the bridge or the shim itself refused (4xx, flag, path outside the workspace). */
  refused: 77,
  /** Bridge not installed, not reachable, or answered 5xx / 000. */
  unavailable: 69,
  usage: 64,
  /**
   * Upstream's own codes, kept by the paplay shim, whose caller (herdr) only tells zero from
   * non-zero: 1 for any failure, 2 for a wrong command line (docs/decisions/0022-shim-exit-codes.md).
   */
  failed: 1,
  misuse: 2,
} as const;

/** The shims installed into the runtime image, by file name under shims/. */
export const SHIMS = ['bridge-lib.sh', 'code', 'xdg-open', 'proximo', 'git-credential-toolbox', 'paplay', 'toolbox-propose'] as const;
