/**
 * The one literal for every name, path, route, field, env name and limit that is shared with
 * something outside this extension: the upstream `toolbox` CLI (container names, mounts, host
 * state layout) and the shims inside the runtime image (`shims/`). The contract test
 * (test/unit/contract.test.ts) reads the shim files and holds them to these values, so changing
 * one side without the other fails CI.
 *
 * Values here are compatibility facts with the upstream CLI, not tunables (docs/architecture.md,
 * "Upstream compatibility").
 */

/** Prefix of every toolbox-owned Docker object. Tests substitute their own (see naming.ts). */
export const NAME_PREFIX = 'toolbox';

/** Suffixes folded onto the prefix: `toolbox-peer-anchor`, `toolbox-cc-socks`, … */
export const OBJECT_SUFFIX = {
  anchor: 'peer-anchor',
  socketVolume: 'cc-socks',
  socketVolumeInit: 'cc-socks-init',
  named: 'named',
} as const;

/** Upstream caps and folds for container names (sessionplan/plan.go, peer.go). */
export const NAMING = {
  maxName: 63,
  maxSlug: 46,
  hashHexChars: 8,
  maxNamedShell: 49,
  slugFallback: 'root',
  profileSeed: '\x00profile=',
  shareSeed: '\x00share=',
  peerSeed: '\x00peer=1',
  /** Token every profile's share list carries (upstream always adds it). */
  bridgeShareToken: 'bridge',
  /** Named shells fold peer messaging in with a `.`, which SanitizeShellName cannot produce. */
  namedPeerSuffix: '.peer',
} as const;

/** Paths inside the container. */
export const CONTAINER = {
  user: 'toolbox',
  home: '/home/toolbox',
  workspace: '/workspace',
  shell: '/bin/zsh',
  peerSocketDir: '/tmp/cc-socks',
  proximoCa: '/etc/ssl/proximo-ca.pem',
  certsDir: '/etc/toolbox/certs',
  dockerSocket: '/var/run/docker.sock',
  initDir: '/usr/local/lib/toolbox/init.d',
  bridgeLib: '/usr/local/lib/toolbox/bridge-lib.sh',
  shimDir: '/usr/local/bin',
  entrypoint: '/usr/local/bin/entrypoint',
  tini: '/usr/bin/tini',
  /** Bridge state as the shims read it: token and port files, run/ holds the unix socket. */
  bridgeDir: '/home/toolbox/.toolbox/bridge',
  bridgeLegacyDir: '/home/toolbox/.toolbox/browser',
  bridgeRunDir: '/home/toolbox/.toolbox/bridge/run',
  /** The session holder (images/runtime/toolbox-session): keeps shells alive across windows. */
  sessionHolder: '/usr/local/lib/toolbox/toolbox-session',
  /** The agents' hook program and the settings that run it (docs/decisions/0050-approvals-over-the-bridge.md). */
  agentHook: '/usr/local/lib/toolbox/toolbox-agent-hook',
  claudeManagedSettings: '/etc/claude-code/managed-settings.json',
  codexHooks: '/etc/codex/hooks.json',
  codexConfig: '/etc/codex/config.toml',
  /** Where the holder listens when the bridge run dir is not mounted (reached through an exec). */
  sessionFallbackDir: '/tmp/toolbox-sessions',
  startupDir: '/home/toolbox/.toolbox-startup.d',
  stateDir: '/home/toolbox/.toolbox-state',
} as const;

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

/**
 * The per-container Docker Engine API endpoint (issue 27; engine/dockerEndpoint/server.ts serves it,
 * plan/dockerEndpoint/socket.ts places it): a unix socket the extension serves on the host, forwarding
 * to the real engine once a policy has seen each request, instead of the host's own socket.
 *
 * Host side: `<run dirs' parent>/docker-<run id>/docker.sock`, the parent and the 8-hex run id
 * being the bridge's (bridge/state.ts chooseRunDir, workspaceRunId: engine endpoint and container
 * name, docs/decisions/0043). Container side: that directory is bind-mounted read-only at
 * `containerDir` and DOCKER_HOST names the socket in it. The directory, not the socket file, is
 * the mount, because a bind of a socket file holds that file's inode: a socket bound again after
 * a window reload is a new inode, which a running container would never see
 * (docs/decisions/0048-docker-endpoint-socket-in-a-directory-mount.md).
 */
export const DOCKER_ENDPOINT = {
  dirPrefix: 'docker-',
  socket: 'docker.sock',
  containerDir: '/run/toolbox-docker',
  containerSocket: '/run/toolbox-docker/docker.sock',
} as const;

/**
 * Bounds of one Docker endpoint, all against a container that may be hostile. Times in ms.
 * `headersMs` closes a connection whose request head is not complete in time (slowloris);
 * `idleMs` one that sends no next request on a kept-alive connection; `bodyMs` a body the policy
 * asked to see that does not arrive in full (other bodies are streams: a `docker build` context,
 * `docker load`, and have no deadline, as a request's total time has none: `docker logs -f`,
 * `/events` and `docker wait` last as long as they must). `upstreamHeadMs` is how long a hijack
 * (attach, exec start, BuildKit's session) waits for the engine's answer before the splice.
 */
export const DOCKER_ENDPOINT_LIMITS = {
  /**
   * Request line and headers together: a target of `maxTargetBytes` and the CLI's X-Registry-Config,
   * which carries every registry login.
   */
  maxHeaderBytes: 128 * 1024,
  maxHeaders: 100,
  /** dockerode (Testcontainers' client) repeats a create's whole options in its query (plan/dockerEndpoint/policy.ts's ENDPOINT_LIMITS). */
  maxTargetBytes: 64 * 1024,
  /** Open connections per endpoint (each holds a second one to the engine). */
  maxConnections: 64,
  /** Connections over the cap kept open at once to be told so (503); the rest are closed on accept. */
  refusing: 16,
  /** The body of a hijack request (exec start's small JSON) when the policy set no bound of its own. */
  upgradeBodyBytes: 64 * 1024,
  /** The largest JSON response the policy's onResponse is given. */
  responseJsonBytes: 64 * 1024,
  headersMs: 10_000,
  idleMs: 30_000,
  bodyMs: 30_000,
  upstreamHeadMs: 60_000,
} as const;

/** A container id as the engines give it in full (Docker and Podman alike): 64 hex digits. */
export const CONTAINER_ID_PATTERN = /^[0-9a-f]{64}$/;

/**
 * The session holder's wire protocol (images/runtime/toolbox-session, engine/sessions.ts). The
 * holder greets first; a client writes nothing until it has read the greeting, so a socket that
 * is not a holder never receives a byte from us.
 */
export const SESSION_PROTOCOL = {
  magic: 'TBXSESSION1\n',
  /** The largest frame payload either side accepts. */
  maxFrame: 1 << 20,
  /** The holder's socket, in the bridge run dir (host-reachable) or the fallback dir. */
  socket: 'sessions.sock',
  frames: {
    hello: 'H',
    data: 'D',
    resize: 'R',
    ping: 'P',
    info: 'I',
    exit: 'X',
    error: 'E',
    pong: 'Q',
  },
} as const;

/** Host-side layout under the mounts root (`~/.toolbox` unless `mounts_root` moves it). */
export const HOST = {
  mountsRoot: '.toolbox',
  /** The upstream daemon's state dir, relative to the host home. */
  bridgeDir: '.toolbox/toolbox/bridge',
  bridgeLegacyDir: '.toolbox/browser',
  profilesDir: 'profiles',
  userConfig: '.toolbox.yaml',
  projectConfig: '.toolbox.yaml',
  proximoCaFallback: '.proximo/tls/ca.pem',
  dockerSocket: '/var/run/docker.sock',
  /** Where Debian-family hosts keep locally added CA certificates (a TLS proxy's, say). */
  localCaDir: '/usr/local/share/ca-certificates',
} as const;

/** Hosts the container resolves to the Docker host. */
export const HOST_GATEWAY = 'host-gateway';
export const HOST_DOCKER_INTERNAL = 'host.docker.internal';

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

/**
 * The bridge's shared loopback TCP listener takes the first free port of
 * [BRIDGE_DEFAULT_PORT, BRIDGE_DEFAULT_PORT + BRIDGE_PORT_COUNT). package.json contributes
 * `remote.portsAttributes` for exactly this range with `onAutoForward: ignore`, so a remote window
 * (code-server, Remote-SSH) does not auto-forward it as the "Code Extension Host" port
 * (issue 26, item 8; docs/decisions/0045-bridge-port-kept-out-of-port-forwarding.md).
 */
export const BRIDGE_DEFAULT_PORT = 17654;
export const BRIDGE_PORT_COUNT = 16;

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
 * The agent hook (images/runtime/toolbox-agent-hook) and the two routes it calls
 * (docs/decisions/0050-approvals-over-the-bridge.md). Times in milliseconds unless named _S.
 */
export const AGENT_HOOK_LIMITS = {
  /** Characters of a command, path, URL or description the hook sends; the bridge refuses more. */
  textChars: 4096,
  /** Keys of a tool input object the hook sends (string, number and boolean values only). */
  inputKeys: 16,
  /** Requests one container may have waiting for the user at once; the next is answered "ask". */
  pendingPerContainer: 16,
  /** Requests waiting in one window at once, every container together. */
  pendingTotal: 64,
  /** Default time the editor waits for the user before the agent's own prompt takes over (toolbox.approvals.timeoutSeconds). */
  defaultTimeoutS: 300,
  /** The longest a question may wait; the setting is clamped to it and the hook gives up past it. */
  maxTimeoutS: 3600,
  /** How long the hook keeps trying to reach a bridge that went away (a reload) before it says "ask". */
  reconnectS: 30,
  /** Timeline entries kept per session, and sessions kept per window (the oldest ended one goes first). */
  timelinePerSession: 200,
  timelineSessions: 64,
  /** The most of a transcript the hook reads to add up usage. */
  transcriptBytes: 64 * 1024 * 1024,
} as const;

/** The agents whose hooks the runtime image installs, as the hook names them on the wire. */
export const HOOK_AGENTS = ['claude', 'codex'] as const;

/** The hook events the runtime image's settings subscribe to, per agent (images/runtime/*-hooks.json). */
export const HOOK_EVENTS = {
  approval: 'PermissionRequest',
  /**
   * UserPromptSubmit carries nothing of the prompt: it says the agent is back at its own prompt, so
   * a question still in the inbox from before was answered in the terminal.
   */
  timeline: ['PostToolUse', 'Notification', 'Stop', 'SessionStart', 'SessionEnd', 'UserPromptSubmit'],
  /**
   * The events whose hook Claude Code waits for. Stop too: at the end of a one-shot turn
   * (`claude -p`) it ends the async hooks still running, and the hook returns at once anyway (its
   * report goes from a detached child).
   */
  sync: ['PermissionRequest', 'Stop'],
  /** Codex has no Notification or SessionEnd hook; its hooks run synchronously (it skips async ones). */
  codex: ['PermissionRequest', 'PostToolUse', 'SessionStart', 'Stop', 'UserPromptSubmit'],
} as const;

/** The user's answer to an agent's question, as /approval returns it to the hook. */
export const APPROVAL_DECISIONS = ['allow', 'deny', 'ask'] as const;

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

/**
 * Requests of one workspace a route runs at the same time; the next one is answered 503 (busy)
 * without starting anything. /proximo and /credential each run a host process per request;
 * /open runs one at a time, so a container cannot stack up VS Code's "open this website?" dialogs.
 */
export const CONCURRENCY_LIMITS = {
  open: 1,
  edit: 4,
  proximo: 4,
  credential: 4,
  sound: 1,
  propose: 1,
  /** Sub-agents may ask at once; AGENT_HOOK_LIMITS.pendingPerContainer caps what waits. */
  approval: AGENT_HOOK_LIMITS.pendingPerContainer,
  agentEvent: 4,
} as const;

/** Output a host process may write (stdout and stderr together) before it is stopped. */
export const HOST_PROCESS_OUTPUT_BYTES = 1024 * 1024;

/**
 * The liveness probe of a socket found at a bridge path. The run dir is writable from the
 * container, so whatever answers there is untrusted: the probe gives up after `totalMs`, never
 * reads more than `maxHeaderBytes` of headers and no body, and only a reply carrying the proof
 * header (an HMAC, keyed by a secret the container cannot read, of the socket path and the
 * challenge it was sent) counts as one of our bridges.
 */
export const BRIDGE_PROBE = {
  totalMs: 1_000,
  maxHeaderBytes: 4096,
  challengeHeader: 'x-toolbox-challenge',
  proofHeader: 'x-toolbox-proof',
  /** The host-only secret, in the run dirs' parent (never mounted into a container). */
  keyFile: 'hub.key',
} as const;

/**
 * A window that reuses another window's bridge for a workspace probes it every `intervalMs` (and
 * whenever its run dir changes), and serves the workspace itself once it is gone; `jitterMs`
 * bounds the random pause before it binds. Two such windows take BRIDGE_FILES.takeoverLock in
 * turn, so only one binds; a lock older than `lockStaleMs` is one a killed window left.
 */
export const BRIDGE_TAKEOVER = {
  intervalMs: 2_000,
  jitterMs: 250,
  lockStaleMs: 10_000,
} as const;

/** The media type every bridge POST must declare (the shims send it; browsers' simple requests cannot). */
export const REQUEST_CONTENT_TYPE = 'application/json';

export const EDITORS = ['code', 'codium'] as const;
export const URL_SCHEMES = ['http', 'https'] as const;
export const CREDENTIAL_OPS = { get: 'fill', store: 'approve', erase: 'reject' } as const;
/** proximo verbs the bridge runs on the host. */
export const PROXIMO_VERBS = ['up', 'down', 'status', 'errors', 'skill'] as const;
/** proximo verbs that need host root or would make toolbox an installer: refused, host-only. */
export const PROXIMO_HOST_ONLY = ['install', 'uninstall', 'trust', 'config'] as const;
/** The token length in bytes; the token file holds it hex-encoded plus a newline. */
export const TOKEN_BYTES = 32;

/** This extension's version, as in package.json (test/unit/manifest.test.ts holds them equal). */
export const EXTENSION_VERSION = '0.1.0';

/**
 * The oldest Docker Engine API the extension speaks (docs/decisions/0034-engine-api-floor.md):
 * Docker 20.10 and Podman 4.3's compat API both report 1.41. engine/client.ts refuses an older
 * engine at connect; Run Doctor (plan/doctor/) reports the engine's API against it.
 */
export const MIN_API_VERSION = '1.41';

/**
 * Bounds of Run Doctor's probes (backend/doctor/), in ms: a probe that takes longer is a
 * warning line saying so, never a wait. `connectMs` covers an ssh:// engine's own 10 s connect;
 * `planMs` a folder's plan, which may ask the host's proximo for its routes (10 s at most);
 * `socketMs` a connect to a socket this window should be serving.
 */
export const DOCTOR_LIMITS = {
  connectMs: 12_000,
  probeMs: 5_000,
  planMs: 15_000,
  socketMs: 1_000,
} as const;

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
 * The proxy variables a container under an egress policy gets, both spellings, all pointing at
 * the forwarder (`http://127.0.0.1:<EGRESS.proxyPort>`); NO_PROXY keeps loopback direct.
 * NODE_USE_ENV_PROXY makes Node's own fetch and http honour them (Node 22.21 / 24.5 and later).
 */
export const EGRESS_PROXY_ENV = {
  proxy: ['HTTP_PROXY', 'HTTPS_PROXY', 'ALL_PROXY', 'http_proxy', 'https_proxy', 'all_proxy'],
  noProxy: ['NO_PROXY', 'no_proxy'],
  noProxyValue: 'localhost,127.0.0.1,::1',
  nodeUseEnvProxy: 'NODE_USE_ENV_PROXY',
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
/**
 * Shims a custom image may lack without being refused: paplay only serves herdr's chimes, and an
 * image made before upstream added it (or /sound) still runs every shell.
 */
export const OPTIONAL_SHIMS: readonly string[] = ['paplay', 'toolbox-propose'];

/**
 * Labels this extension may set on containers it creates. Upstream sets none and identity stays
 * by name; a label only carries information for display (the tree shows the workspace).
 */
export const LABELS = {
  workspace: 'dev.toolbox.workspace',
  /**
   * Set only on a container opened with a per-run peer override (Open Toolbox Shell with or
   * without Peer Messaging (this run), the CLI's `--peer` / `--peer=false`): `on` or `off`, what
   * that open asked for. Drift judges such a container against it, not against the folder's
   * setting (docs/decisions/0014-per-run-peer-is-not-drift.md).
   */
  peerRun: 'dev.toolbox.peer-run',
  /**
   * Set on a container created with its folder's protected paths bound read-only (plan/protect.ts):
   * the views tell a container without them (created before, by the CLI, or with the protection
   * turned off) from one that has them, without planning (docs/decisions/0042-protected-paths-read-only.md).
   */
  protectedPaths: 'dev.toolbox.protected-paths',
  /**
   * The profile (`toolbox shell --profile`) a container was opened with: the views say which
   * account's credentials it has. Informational, as the workspace label: upstream sets none, its
   * profile containers are recognised by their mounts (plan/profiles.ts containerProfile), and
   * nothing is looked up by it (docs/decisions/0054-profiles-from-the-user-settings.md).
   */
  profile: 'dev.toolbox.profile',
  /**
   * Which file each protected path was when the container was made (JSON, host path → inode and
   * birth time), its placeholders included: a path the host has replaced or removed since lost its
   * read-only bind in this container (plan/drift.ts).
   */
  protectedIdentities: 'dev.toolbox.protected-identities',
  /**
   * On every object a workspace container creates through its Docker endpoint (containers,
   * volumes, networks; set empty on the images it commits): the workspace container's name. Through
   * the endpoint a container reaches only the objects that carry its own name here, so the label is
   * the whole of what makes an object its own: the policy adds it, refuses a client that sets it,
   * and lists come back filtered by it (plan/dockerEndpoint/policy.ts,
   * docs/decisions/0047-docker-endpoint-policy.md). The workspace container itself never has it.
   */
  dockerOwner: 'dev.toolbox.docker-owner',
  /**
   * On the images a workspace container builds or commits through its Docker endpoint: its name.
   * Not the owner label, which the engine copies from an image into every container made from it:
   * a container proves its owner only by a label its image does not carry (plan/dockerEndpoint/routes.ts
   * containerOwnership).
   */
  dockerImageOwner: 'dev.toolbox.docker-owner.image',
  /**
   * `enforced` (EGRESS.enforcedLabel) on a container created under an egress policy (`ask` or
   * `allowlist`): it has no network but its loopback and reaches out through the host's proxy.
   * Switching a folder between `open` and a policy recreates its container (plan/drift.ts).
   */
  egress: 'dev.toolbox.egress',
  /**
   * The ports a container under an egress policy asked to publish (JSON, PortSpec[]): the engine
   * publishes nothing for it, the host relays them (backend/egressPorts.ts), again after a reload.
   */
  egressPorts: 'dev.toolbox.egress-ports',
} as const;

/**
 * A placeholder stands in for a protected path that does not exist yet, so that the container
 * cannot create it (plan/protect.ts makes the list, engine/placeholders.ts the files): an empty
 * directory, or an empty file where git reads a file (a config, `.gitmodules`), made by the user
 * and given this modification time, which is how toolbox tells its own placeholders from the
 * user's files when it removes them again (docs/decisions/0042-protected-paths-read-only.md).
 */
export const PLACEHOLDER = {
  /** 2005-03-18T01:58:31Z: no program or archive sets it by chance, and any change to the entry moves it. */
  mtimeSeconds: 1_111_111_111,
  /**
   * What a `commondir` placeholder in a git directory says: "the common directory is this one".
   * Git follows it to the same directory (an empty one is a fatal error), so host git and the
   * container's git work as without it, and the container cannot write one that points elsewhere
   * (docs/decisions/0059-git-indirections-read-only.md).
   */
  commonDirText: '.\n',
} as const;

/** Repository of the runtime image this extension builds; the tag is a hash of its build context. */
export const RUNTIME_IMAGE_REPO = 'toolbox-vscode/runtime';
/** Where tests (and the extension under a test name prefix) put the images they build. */
export const RUNTIME_IMAGE_TEST_REPO = 'toolbox-vscode-test/runtime';
/**
 * Where the GitHub workflow publishes the runtime image (.github/workflows/runtime-image.yml):
 * `<registry>/<path>:<tag>`, the tag being the same content hash the extension computes
 * (`runtimeContextHash`; scripts/runtime-image-tag.mjs prints it). A `registry_mirror` replaces
 * the registry part, as upstream's does for its own image.
 */
export const RUNTIME_IMAGE_PUBLISHED = { registry: 'ghcr.io', path: 'toolbox-dev/toolbox-vscode-runtime' } as const;
/** Labels on the runtime image. */
export const RUNTIME_IMAGE_LABELS = {
  /** Set by the Dockerfile: the image is a toolbox runtime image. */
  runtime: 'dev.toolbox.runtime',
  /** The build context hash the image was built from (its tag's hash); a pulled image must carry the one it was pulled for. */
  contextHash: 'dev.toolbox.runtime.context',
  /**
   * Set by the Dockerfile ("1"): the entrypoint starts the session holder when ENV.sessionSocket
   * is set, so the host waits for it on the socket instead of starting it by an exec.
   */
  holderAtStart: 'dev.toolbox.runtime.session-holder',
} as const;
/** Paths of the runtime image's build context and Dockerfile, relative to the extension root. */
export const RUNTIME_IMAGE_CONTEXT = {
  dirs: ['images/runtime', 'shims'],
  dockerfile: 'images/runtime/Dockerfile',
} as const;

/**
 * Agent worktrees, as upstream's `toolbox worktree` lays them out (internal/worktree/plan.go,
 * docs/commands.md): `<repo root>/.worktrees/tbx-<branch with / as ->`, the base recorded in the
 * repository's git config as `branch.<branch>.base`, the folder kept out of the main checkout's
 * status by a line in `.git/info/exclude`. Shared with the CLI, so either picks up the other's.
 */
export const WORKTREE = {
  dir: '.worktrees',
  prefix: 'tbx-',
  excludeEntry: '.worktrees/',
  /** `git config` key suffix: `branch.<branch>.base`. */
  baseKeySuffix: '.base',
  /** Gitignored per-repo state copied into a new worktree (upstream's curated seed set). */
  defaultSeed: ['.claude/settings.local.json', '.env', '.env.*', 'openspec', '.planning'],
  /** The agents a worktree session may start (upstream restricts the `agent` key to these here). */
  agents: ['claude', 'codex'],
} as const;

/**
 * The agents Toolbox can start in a terminal (Start Claude Code, Start Codex): the command the
 * runtime image installs, and the name a person knows it by.
 */
export const AGENTS = {
  claude: { command: 'claude', name: 'Claude Code' },
  codex: { command: 'codex', name: 'Codex' },
} as const;

/**
 * The mark the agent launcher (plan/worktree.ts AGENT_LAUNCH_SCRIPT) prints when the agent exits,
 * before the shell that follows starts: a private OSC, `ESC ] 7717 ; agent-exit ; <status> ;
 * <agent> BEL`, which xterm.js ignores and ui/agents/agentStream.ts reads (ui/agents/agentState.ts: the agent
 * ended with that status). Private, not OSC 133;D: shell integration ends every command with D.
 */
export const AGENT_EXIT_MARK = { osc: 7717, tag: 'agent-exit' } as const;

/** Egress policy modes (issue 30, docs/decisions/0056-egress-through-a-host-proxy.md). `open` is upstream's: no policy. */
export const EGRESS_MODES = ['open', 'ask', 'allowlist'] as const;

/**
 * Where a container under an egress policy reaches the network: nowhere but its own loopback
 * (NetworkMode none), where a forwarder (images/runtime/toolbox-egress) listens on `proxyPort` and
 * relays each connection to the host's proxy at `containerSocket`. The host's proxy
 * (bridge/egressProxy.ts) decides, resolves and connects; the container never does. The socket's
 * directory is bound read-only, as the Docker endpoint's is (docs/decisions/0048).
 */
export const EGRESS = {
  dirPrefix: 'egress-',
  socket: 'egress.sock',
  containerDir: '/run/toolbox-egress',
  containerSocket: '/run/toolbox-egress/egress.sock',
  /** The forwarder listens on 127.0.0.1 and [::1] at this port: HTTP(S) CONNECT, plain HTTP and SOCKS5 on one port. */
  proxyPort: 3128,
  /** The forwarder program in the runtime image; the entrypoint starts it when ENV.egressSocket is set. */
  forwarder: '/usr/local/lib/toolbox/toolbox-egress',
  /** The label value of a container created under a policy (LABELS.egress). */
  enforcedLabel: 'enforced',
} as const;

/** Bounds of the host's egress proxy, against a container that may be hostile. Times in ms. */
export const EGRESS_LIMITS = {
  /** Request line and headers (HTTP), or the whole SOCKS5 greeting and request. */
  maxHeaderBytes: 16 * 1024,
  maxHeaders: 64,
  /** A request head not complete in this long is answered 408 and closed (slowloris). */
  headersMs: 10_000,
  /** How long a connection waits for the user's answer in `ask` mode; then it is denied. */
  askMs: 120_000,
  /** The host's DNS lookup and TCP connect to the destination, together. */
  connectMs: 10_000,
  /** After a CONNECT, the client's first TLS record (its ClientHello, for the SNI check) must arrive within this. */
  helloMs: 10_000,
  /** The largest ClientHello read for its SNI; a longer first record is refused. */
  helloBytes: 16 * 1024,
  /** Connections open at once per container; more are refused (503). */
  maxConnections: 256,
  /** Questions waiting at once per container in `ask` mode; more are denied without asking. */
  maxQuestions: 8,
  /** Connection log entries kept per container (newest kept). */
  logEntries: 500,
  /** A host name longer than DNS allows is refused. */
  maxHostChars: 253,
} as const;

/**
 * Login callbacks forwarded from the host's loopback into a container's (issue 29,
 * docs/decisions/0053-login-callbacks-forwarded-per-login.md). A CLI that logs in through the
 * browser (`codex login`, `wrangler login`, …) listens on 127.0.0.1:<port> inside the container and
 * names that port in the authorize URL's redirect; the host listens on 127.0.0.1:<same port> and
 * relays each connection through an exec into the container's own loopback.
 */
export const LOGIN_FORWARD = {
  /** Ports below are never bound (privileged on the host). */
  minPort: 1024,
  maxPort: 65535,
  /** A forward closes this long after it opened (or was asked for again), whatever else happens. */
  lifetimeMs: 10 * 60_000,
  /**
   * Once a connection the container answered has ended, the forward closes after this long with no
   * connection open: the callback and the page it redirects to (codex's /success) are over.
   */
  idleAfterAnswerMs: 20_000,
  /** Connections relayed at once per forward; more are closed at once. */
  maxConcurrent: 8,
  /** Connections relayed in all per forward; then it closes. */
  maxConnections: 64,
  /** Forwards open at once in a window. */
  maxForwards: 4,
  /** /open waits this long for a forward to start (engine, inspect, listen) before it opens the URL anyway. */
  startMs: 10_000,
  /** The relay's connect to the container's 127.0.0.1:<port> must succeed within this (seconds). */
  relayConnectSeconds: 5,
  /** After the host side of a connection ended, the relay waits this long for the container's answer (seconds). */
  relayDrainSeconds: 30,
  /** What the relay's stderr may add to the log, per connection. */
  relayErrorChars: 300,
} as const;

/**
 * The query parameters of an authorize URL that carry the login's callback address (OAuth's
 * `redirect_uri`, and the names other CLIs use). Only the URL's own top-level query is read.
 */
export const LOGIN_REDIRECT_PARAMS = ['redirect_uri', 'redirect_url', 'redirect', 'callback', 'callback_url'] as const;

/** Redirect hosts that mean the container's own loopback (the forward listens on the host's 127.0.0.1). */
export const LOGIN_LOOPBACK_HOSTS = ['localhost', '127.0.0.1'] as const;

/**
 * Upstream's `toolbox shell --oauth <tool>` recipes (filippolmt/toolbox@9fef3882997e97275b08948110302ef5e3e12e41
 * internal/sessionplan/oauth.go `oauthRecipes`): the callback port or range each CLI listens on.
 * Forward a Login Port… offers them by name; a range is forwarded port by port.
 */
export const LOGIN_PRESETS: ReadonlyArray<{ tool: string; ports: readonly [number, number] }> = [
  { tool: 'codex', ports: [1455, 1455] },
  { tool: 'wrangler', ports: [8976, 8976] },
  { tool: 'glab', ports: [7171, 7171] },
  { tool: 'oci', ports: [8181, 8181] },
  { tool: 'cf', ports: [8877, 8886] },
  { tool: 'sonar', ports: [64120, 64130] },
];
