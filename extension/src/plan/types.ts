/**
 * Inputs and outputs of the pure session planner. The planner turns a ResolvedConfig plus host
 * facts into the exact options the engine sends to Docker; it performs no I/O.
 */
import type { BridgeMount, ObjectNames, PortSpec, ProximoFacts, SeccompProfile } from '../contract/types';
import type { ToolboxConfig } from '../config/model';

export interface SessionRequest {
  /** Absolute host path of the workspace folder (not symlink-resolved, like upstream). */
  workspace: string;
  config: ToolboxConfig;
  /** Peer messaging for this run, after settings and the per-run override. */
  peer: boolean;
  /** `peer` came from a per-run override, not the folder's settings: the container records it (LABELS.peerRun). */
  peerOverride?: boolean;
  /** A named shell (`toolbox shell --name`), else the workspace container. */
  namedShell?: string;
  profile?: string;
  /** Share tokens of the profile. */
  share?: string[];
  /** proximo on for this workspace and present on the host; undefined = off. */
  proximo?: ProximoFacts;
  /** undefined when the bridge is off (`bridge: false`). */
  bridge?: BridgeMount;
  /** Published ports for this run (upstream's `-p`), parsed by plan/publish.ts. */
  ports?: PortSpec[];
  /** The `toolbox.seccomp` setting; undefined: `unconfined`, as upstream. */
  seccomp?: SeccompProfile;
  /**
   * An agent worktree's main repository root: its `.git` is mounted at the same absolute path, so
   * the worktree's gitdir pointer resolves inside the container (plan/worktree.ts).
   */
  worktreeRoot?: string;
  /**
   * The folder's protected paths are bound read-only (plan/protect.ts; the user setting
   * toolbox.protectedPaths). Needs HostFacts lstat, readDir and readSmall.
   */
  protectedPaths?: boolean;
  /** Image reference to run (already resolved from config). */
  image: string;
  names: ObjectNames;
  /**
   * Shells are held by the session holder (`toolbox.sessions.persist`): the container gets
   * ENV.sessionSocket, so an image whose entrypoint knows it starts the holder at once.
   */
  heldSessions?: boolean;
  /**
   * The host directory of the container's scoped Docker endpoint (plan/dockerEndpoint/socket.ts), bound
   * read-only at DOCKER_ENDPOINT.containerDir in place of the docker-sock mount, with DOCKER_HOST
   * pointing into it. Undefined: the docker-sock mount as configured (the raw socket, opted into
   * with toolbox.dockerEndpoint: raw-socket, or an engine the endpoint cannot serve).
   */
  dockerEndpoint?: string;
  /**
   * The host directory of the container's egress proxy socket (EGRESS, backend/egress.ts) when the
   * folder's egress mode is a policy (`ask`, `allowlist`): the container gets no network but its
   * loopback (NetworkMode none), the directory bound read-only at EGRESS.containerDir, and proxy
   * variables pointing at the forwarder. Published ports are then relayed by the host
   * (docs/decisions/0056-egress-through-a-host-proxy.md). Undefined: `open`, the engine's network.
   */
  egress?: string;
}

/** One bind or volume mount as planned, before flattening to a Docker bind string. */
export interface PlannedMount {
  name: string;
  /** Host path, or volume name when type is 'volume'. */
  source: string;
  target: string;
  readonly: boolean;
  type: 'bind' | 'volume';
  /** The adapter creates this host directory before create when it is missing. */
  createIfMissing: boolean;
}

/** The Docker ContainerCreate body (the subset we set), exactly as the engine will send it. */
export interface ContainerCreateSpec {
  name: string;
  /** The container's host name (the prompt shows it): the name as one DNS label. */
  Hostname: string;
  Image: string;
  Cmd: string[];
  Env: string[];
  User: string;
  WorkingDir: string;
  Tty: true;
  OpenStdin: true;
  AttachStdin: boolean;
  Labels: Record<string, string>;
  ExposedPorts?: Record<string, Record<string, never>>;
  HostConfig: {
    Binds: string[];
    ExtraHosts: string[];
    SecurityOpt: string[];
    PidMode?: string;
    /** `none` under an egress policy (SessionRequest.egress); absent: the engine default network. */
    NetworkMode?: string;
    PortBindings?: Record<string, Array<{ HostIp: string; HostPort: string }>>;
    AutoRemove: boolean;
    GroupAdd?: string[];
    Init?: boolean;
  };
}

export interface SessionPlan {
  name: string;
  /** The clean absolute workspace path the name was derived from (naming.workspaceSeed gives the seed). */
  workspace: string;
  peer: boolean;
  mounts: PlannedMount[];
  /** Host directories the adapter must create (mode 0700 where new) before create. */
  ensureDirs: string[];
  /** Placeholders for missing protected paths, made as the container's user before create (plan/protect.ts). */
  placeholders?: PlannedPlaceholder[];
  create: ContainerCreateSpec;
  /** The command an interactive shell execs. */
  shellCmd: string[];
}

/** A protected path's kind, as plan/protect.ts binds it. */
export type ProtectedKind = 'file' | 'dir';

/**
 * What a placeholder is made as: git reads a missing config file as empty, a working-tree file is
 * a directory (git ignores an empty one) except `.gitmodules` (plan/protect.ts GITMODULES), and a
 * git directory's `commondir` names that directory itself (contract/constants.ts
 * PLACEHOLDER.commonDirText: git dies on an empty one).
 */
export type PlaceholderKind = ProtectedKind | 'commondir';

export interface PlannedPlaceholder {
  path: string;
  kind: PlaceholderKind;
  /**
   * A line for the repository's `info/exclude` (`file`), which the engine appends there, once and
   * before it makes the placeholder, so that git never lists the placeholder (plan/protect.ts
   * GITMODULES).
   */
  exclude?: PlannedExclude;
}

export interface PlannedExclude {
  /** `<common dir>/info/exclude`, where host git reads it (gitExcludeFile). */
  file: string;
  /** The pattern, as it is written (without its newline). */
  line: string;
}
