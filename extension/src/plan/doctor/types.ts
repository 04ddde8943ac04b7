/**
 * Run Doctor's facts and lines (plan/doctor/): what backend/doctor/ gathers about the engine and
 * this window's folders, each fact possibly unread, and the check line each group of checks
 * turns them into. Imports no other doctor module.
 */
import type { EgressMode } from '../egress';
import type { HostToolsFacts, HostToolsOffer } from '../hostTools';

export type DoctorStatus = 'pass' | 'warn' | 'fail' | 'info';

/**
 * One line of the report. `fix`, for warn and fail: a command to run, a setting to change or a
 * shell command; for info, a choice the user may make. `offer`: an action the notification
 * offers as a button (ui/doctor/runDoctor.ts).
 */
export interface DoctorCheck {
  id: string;
  status: DoctorStatus;
  title: string;
  detail: string;
  fix?: string;
  offer?: HostToolsOffer;
}

/** A fact the doctor could not read: its probe timed out (a slow engine), failed, or needed the engine. */
export interface Unread {
  unread: 'timeout' | 'error' | 'no-engine';
  reason: string;
}

export type Read<T> = T | Unread;

export function isUnread<T>(fact: Read<T>): fact is Unread {
  return typeof fact === 'object' && fact !== null && 'unread' in fact;
}

/** How the container's shims reach the bridge and the host reaches its session holder, and why (measured by backend/transportFacts.ts). */
export interface DoctorTransports {
  bridge: { mode: 'unix' | 'tcp' | 'none'; why: string };
  sessions: { mode: 'socket' | 'exec'; why: string };
}

/** What the report says about where it ran. */
export interface DoctorAbout {
  extensionVersion: string;
  vscodeVersion?: string;
  platform: string;
  arch: string;
  osRelease?: string;
}

/** How the endpoint was found (engine/client.ts): the setting, DOCKER_HOST, a Docker context, or the usual sockets probed in order. */
export type EndpointFoundBy = 'setting' | 'DOCKER_HOST' | 'context' | 'probe';

export type EngineFacts =
  | {
      reachable: true;
      endpoint: string;
      foundBy: EndpointFoundBy;
      /** engine/client.ts describeSource: "the platform default", "from DOCKER_HOST", … */
      source: string;
      product: 'Docker' | 'Podman';
      version: string;
      apiVersion: string;
      /** Rootless (Podman's /info, Docker's security options); undefined when it could not be told. */
      rootless?: boolean | Unread;
      /** The machine the engine runs on when it is not this one (engine/remote.ts). */
      remoteHost?: string;
    }
  | {
      reachable: false;
      /** The engine's (or connect's) own words: where it knocked and why nobody answered. */
      reason: string;
      timedOut: boolean;
      /** It answered, with an API older than MIN_API_VERSION. */
      tooOld: boolean;
    };

export interface PeerObjectFacts {
  anchor: {
    state: 'running' | 'stopped' | 'missing';
    /** The label another tool set on a container of the anchor's name (contract/objects.ts foreignLabel). */
    foreignLabel?: string;
    /** Its entrypoint is the anchor's (engine/peer.ts ANCHOR_ENTRYPOINT). */
    entrypointOk: boolean;
  };
  volume: {
    exists: boolean;
    foreignLabel?: string;
    /** `uid:gid` and `0700`, when readable from this host. */
    owner?: string;
    mode?: string;
  };
}

export interface ImageFacts {
  ref: string;
  /** The extension's own runtime image (not a custom `image:`). */
  ours: boolean;
  present: boolean;
  id?: string;
  /** The content hash the tag names, and the one the image's label carries (RUNTIME_IMAGE_LABELS.contextHash). */
  tagHash?: string;
  labelHash?: string;
  /** It has a registry digest (pulled), else it was built on this machine. */
  pulled: boolean;
  /** Where an absent image of ours is pulled from first; undefined: never pulled (toolbox.runtimeImage.pull off). */
  pullFrom?: string;
}

export interface ContainerFacts {
  name: string;
  /** Docker's state word. */
  state: string;
  imageId?: string;
  /** undefined: not measured (yet). */
  transports?: DoctorTransports | Unread;
  peer: { member: boolean; socketVolume: boolean; perRun?: boolean };
  proximoCa: boolean;
  /** Its protected paths against the folder's plan (plan/drift.ts missingProtections, replacedProtections). */
  protection: { labelled: boolean; count: number; missing: string[]; replaced: string[] };
  /** What Docker the container gets (plan/posture.ts hostReach): its own endpoint, the host's socket, or none. */
  docker: { kind: 'endpoint' | 'raw-socket' | 'none'; served?: boolean };
  /** Created under an egress policy (LABELS.egress), and whether this window's proxy answers on its socket. */
  egress: { enforced: boolean; served?: boolean };
}

/** Where a VS Code setting's value comes from, as VS Code layers them. */
export type VscodeSettingSource = 'folder' | 'workspace' | 'user' | 'default';

/** A VS Code git setting whose value differs from VSCODE_GIT_DEFAULTS: VS Code's git then runs git inside other repositories in the folder on its own. */
export interface VscodeGitOpener {
  setting: string;
  value: string;
  source: VscodeSettingSource;
}

export interface FolderFacts {
  folder: string;
  /** Why the folder's configuration could not be read or planned; the checks that need it say so. */
  configProblem?: string;
  /** The folder's container (plan/session.ts sessionContainerName), when planned. */
  container?: string;
  peer?: { on: boolean; source: string };
  imageRef?: string;
  proximo?: { enabled: boolean; installed: boolean; caPath?: string; hosts: number };
  protection?: { enabled: boolean; planned: string[] };
  dockerEndpoint?: { setting: 'scoped' | 'raw-socket'; forwardable: boolean };
  egressMode?: EgressMode;
  /** The VS Code git settings that let it enter other repositories inside the folder ([]: none does); undefined when not read. */
  vscodeGit?: VscodeGitOpener[];
  containers: Read<ContainerFacts[]>;
}

export interface DoctorFacts {
  about: DoctorAbout;
  home: string;
  /** The host user, as the socket volume should be owned. */
  uid: number;
  gid: number;
  names: { anchor: string; socketVolume: string };
  engine: EngineFacts;
  peerObjects: Read<PeerObjectFacts>;
  images: Read<ImageFacts[]>;
  folders: FolderFacts[];
  /** The window's trust and its enabled extensions (plan/hostTools.ts); undefined when not read. */
  hostTools?: HostToolsFacts;
}
