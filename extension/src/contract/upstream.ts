/**
 * What is shared with the upstream `toolbox` CLI: the names of toolbox-owned Docker objects, paths
 * inside the container, the host state layout, the labels on containers, the worktree layout and
 * the login recipes. Either tool finds and reuses what the other made by these.
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
