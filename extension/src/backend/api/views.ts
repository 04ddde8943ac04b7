/** What a snapshot holds: plain data the views render (ui/views/model.ts derives from it). */
import type { OwnedContainerKind, SeccompProfile } from '../../contract/types';
import type { DockerChildrenSummary, LeftBehind } from '../../engine/dockerEndpoint/children';
import type { EgressSummary } from './egress';
import type { HolderAddress } from '../../engine/sessions';
import type { HostReach } from '../../plan/posture';
import type { PublishedPort } from '../../plan/publish';

export interface RebuildSummary {
  tag: string;
  /** Old runtime images removed. */
  pruned: string[];
  /** Old runtime images kept because a container uses them. */
  inUse: string[];
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
  /** The endpoint the snapshot was read from (as toolbox.dockerHost takes it). */
  endpoint?: string;
  /**
   * What containers of ours started through their Docker endpoints and still exists after
   * something other than this editor removed them (engine/dockerEndpoint/children.ts leftBehindOf), by
   * owner; undefined: nothing.
   */
  leftBehind?: LeftBehind[];
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

export type ContainerKind = OwnedContainerKind;

export type { DockerChildrenSummary, LeftBehind } from '../../engine/dockerEndpoint/children';

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
  /**
   * The profile it was opened with (its LABELS.profile, else the profile root its mounts come
   * from: plan/profiles.ts containerProfile); undefined: the default root (~/.toolbox). Text from
   * the engine: shown as plain text.
   */
  profile?: string;
  /** Routed proximo hosts pinned in the container (ExtraHosts other than host.docker.internal). */
  proximoHosts?: string[];
  /** The proximo CA is mounted. */
  proximoCa?: boolean;
  /** What the container can reach on this host beyond its workspace, from its mounts (plan/posture.ts). */
  reach?: HostReach[];
  /** The paths it has read-only over its folder (plan/posture.ts protectedPathsOf); undefined: made without the protection. */
  protectedPaths?: string[];
  /** The ports it publishes on this host (plan/publish.ts publishedPorts). */
  ports?: PublishedPort[];
  /** How to reach the container's session holder (set when the container has one). */
  holder?: HolderAddress;
  /** Shells its session holder keeps, attached or not (undefined: no holder reachable from here). */
  shells?: HeldShellSummary[];
  /** What it started through its Docker endpoint (engine/dockerEndpoint/children.ts); undefined: nothing. */
  dockerChildren?: DockerChildrenSummary;
  /** Its egress policy and connection counters (backend/egress.ts); undefined: `open` and never served a policy. */
  egress?: EgressSummary;
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
