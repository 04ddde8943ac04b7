/**
 * Run Doctor (issue 31, item 3): what the extension found about the engine and this window's
 * folders (`DoctorFacts`, gathered with bounded probes by backend/doctor.ts) turned into check
 * lines, each pass, warn, fail or info with what to do, and into the plain-text report the
 * command shows. Pure: no I/O, no clock (the caller gives the time). The checks, in order: the
 * engine, the transports of each container, peer messaging's shared objects, the runtime image,
 * proximo, the protected paths (docs/decisions/0042), the extensions on this host that run the
 * folder's files (0060), the Docker endpoint (0047) and egress (0056).
 */
import { MIN_API_VERSION } from '../contract/constants';
import { COMMAND_LABELS, SETTINGS, VSCODE_GIT_DEFAULTS } from '../contract/manifest';
import type { EgressMode } from './egress';
import {
  hostToolsChoice,
  hostToolsDetail,
  hostToolsOffer,
  hostToolsPosture,
  runningOnTheirOwn,
  type HostToolsFacts,
  type HostToolsOffer,
} from './hostTools';
import { tildePath } from './posture';

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

/** A fix that is one command: its palette label. */
const RUN = (label: string) => `Run ${label}.`;
const OPEN_SHELL = COMMAND_LABELS.openShell.label;
/** The container's fix when it was made with something its folder no longer asks for. */
const RECREATE_STEPS = `stop the container (${COMMAND_LABELS.stopContainer.label}) and open a shell again (${OPEN_SHELL})`;
const RECREATE = `${RECREATE_STEPS[0]!.toUpperCase()}${RECREATE_STEPS.slice(1)}.`;
const STOP_ALL = COMMAND_LABELS.stopAll.label;

/**
 * Outside text (engine, container, config files) as one line of the report: escape sequences and
 * invisible characters out, line breaks and runs of white space one space, at most `max`
 * characters, so it can never start a line that passes for one of ours
 * (docs/decisions/0040-outside-text-is-plain-text.md).
 */
export function oneLine(raw: unknown, max = 600): string {
  const s = (typeof raw === 'string' ? raw : String(raw ?? ''))
    .slice(0, max * 8)
    // eslint-disable-next-line no-control-regex
    .replace(/(?:\x1b\[|\x9b)[\x30-\x3f]*[\x20-\x2f]*[\x40-\x7e]?|(?:\x1b\]|\x9d)[^\x07\x1b\x9c]*(?:\x07|\x1b\\|\x9c)?|\x1b./g, '')
    .replace(/[\p{Cf}\p{Cc}\u2028\u2029]/gu, ' ')
    .replace(/\s+/g, ' ')
    .trim();
  return s.length > max ? `${s.slice(0, max - 1).trimEnd()}…` : s;
}

function apiAtLeast(version: string, floor: string): boolean | undefined {
  const parse = (v: string) => /^(\d{1,4})\.(\d{1,4})$/.exec(v.trim());
  const a = parse(version);
  const b = parse(floor);
  if (!a || !b) return undefined;
  return Number(a[1]) > Number(b[1]) || (Number(a[1]) === Number(b[1]) && Number(a[2]) >= Number(b[2]));
}

/** How the endpoint was found, in words; `source` is engine/client.ts describeSource's. */
function foundBy(foundBy: EndpointFoundBy, source: string): string {
  switch (foundBy) {
    case 'setting':
      return `set in ${SETTINGS.dockerHost}`;
    case 'DOCKER_HOST':
      return 'set in the DOCKER_HOST environment variable';
    case 'context':
      return `set in the current Docker context (${oneLine(source, 200)})`;
    case 'probe':
      return `found by probing the usual sockets in order, nothing being configured: ${oneLine(source, 200)}`;
  }
}

function unreadCheck(id: string, title: string, fact: Unread): DoctorCheck {
  if (fact.unread === 'no-engine') return { id, status: 'info', title, detail: `Not checked: ${oneLine(fact.reason)}` };
  if (fact.unread === 'timeout') {
    return {
      id,
      status: 'warn',
      title,
      detail: `Not checked: ${oneLine(fact.reason)}. The engine (or this host) is slow to answer.`,
      fix: `Run ${COMMAND_LABELS.runDoctor.label} again; if it stays slow, restart the engine or check its load.`,
    };
  }
  return {
    id,
    status: 'warn',
    title,
    detail: `Not checked: ${oneLine(fact.reason)}`,
    fix: `Run ${COMMAND_LABELS.showLog.label} for the details, then ${COMMAND_LABELS.runDoctor.label} again.`,
  };
}

function engineChecks(e: EngineFacts): DoctorCheck[] {
  if (!e.reachable) {
    if (e.tooOld) {
      return [
        {
          id: 'engine.reachable',
          status: 'fail',
          title: 'Engine too old',
          detail: oneLine(e.reason),
          fix: `Update Docker (20.10 or newer) or Podman (4.3 or newer), or pick a newer engine with ${COMMAND_LABELS.selectEngine.label}.`,
        },
      ];
    }
    return [
      {
        id: 'engine.reachable',
        status: e.timedOut ? 'warn' : 'fail',
        title: e.timedOut ? 'Engine slow to answer' : 'Engine not reachable',
        detail: oneLine(e.reason),
        fix: `Start the engine, or pick one with ${COMMAND_LABELS.selectEngine.label}, or set ${SETTINGS.dockerHost} in your User settings.`,
      },
    ];
  }
  const checks: DoctorCheck[] = [
    {
      id: 'engine.reachable',
      status: 'pass',
      title: 'Engine reachable',
      detail: `${oneLine(e.endpoint)}, ${foundBy(e.foundBy, e.source)}.`,
    },
  ];
  const rootless = e.rootless === undefined || isUnread(e.rootless) ? 'rootful or rootless: not told' : e.rootless ? 'rootless' : 'rootful';
  checks.push({
    id: 'engine.product',
    status: 'pass',
    title: 'Engine product',
    detail: `${e.product} ${oneLine(e.version, 64)} (${rootless}).`,
  });
  const atLeast = apiAtLeast(e.apiVersion, MIN_API_VERSION);
  checks.push(
    atLeast === true
      ? {
          id: 'engine.api',
          status: 'pass',
          title: 'Engine API',
          detail: `API ${oneLine(e.apiVersion, 32)}; the oldest supported is ${MIN_API_VERSION}.`,
        }
      : {
          id: 'engine.api',
          status: 'fail',
          title: 'Engine API',
          detail:
            atLeast === false
              ? `API ${oneLine(e.apiVersion, 32)} is older than the oldest supported (${MIN_API_VERSION}).`
              : `The engine reports the API version "${oneLine(e.apiVersion, 32)}", which is not a Docker Engine API version.`,
          fix: `Update Docker (20.10 or newer) or Podman (4.3 or newer), or pick another engine with ${COMMAND_LABELS.selectEngine.label}.`,
        },
  );
  if (e.remoteHost !== undefined) {
    checks.push({
      id: 'engine.remote',
      status: 'warn',
      title: 'Engine on another machine',
      detail: `It runs on ${oneLine(e.remoteHost, 200)}: it cannot mount a folder of this machine, so opening a shell here is refused.`,
      fix: `Pick a local engine with ${COMMAND_LABELS.selectEngine.label}, or open the folder on that machine with VS Code Remote-SSH.`,
    });
  }
  return checks;
}

/** `~/proj` for a folder under the home. */
function shown(path: string, home: string): string {
  return oneLine(tildePath(path, home), 400);
}

/** The folder's containers, or the one line that says why there are none to look at. */
function containersOr(
  f: FolderFacts,
  home: string,
  id: string,
  title: string,
  each: (c: ContainerFacts) => DoctorCheck[],
  none: () => DoctorCheck[],
): DoctorCheck[] {
  if (isUnread(f.containers)) return [unreadCheck(`${id}:${f.folder}`, `${title} (${shown(f.folder, home)})`, f.containers)];
  if (f.containers.length === 0) return none();
  return f.containers.flatMap(each);
}

function transportChecks(f: FolderFacts, home: string): DoctorCheck[] {
  return containersOr(
    f,
    home,
    'transports',
    'Transports',
    (c) => {
      const title = `Transports of ${oneLine(c.name, 200)}`;
      const id = `transports:${c.name}`;
      if (c.state !== 'running')
        return [{ id, status: 'info', title, detail: `The container is ${oneLine(c.state, 40)}: nothing to reach.` }];
      if (c.transports === undefined) {
        return [
          {
            id,
            status: 'warn',
            title,
            detail:
              'Not measured yet: how the shims reach the bridge (unix socket or TCP) and how shells reach the session holder are not known.',
            fix: `Nothing for now; if code, xdg-open or a shell misbehaves in it, run ${COMMAND_LABELS.showLog.label} to see how it connected.`,
          },
        ];
      }
      if (isUnread(c.transports)) return [unreadCheck(id, title, c.transports)];
      const t = c.transports;
      const bridge = t.bridge.mode === 'unix' ? 'unix socket' : t.bridge.mode === 'tcp' ? 'TCP via host.docker.internal' : 'none';
      const sessions = t.sessions.mode === 'socket' ? 'holder socket' : 'exec';
      const detail = `Bridge: ${bridge} (${oneLine(t.bridge.why, 300)}). Sessions: ${sessions} (${oneLine(t.sessions.why, 300)}).`;
      if (t.bridge.mode === 'none') {
        return [
          {
            id,
            status: 'warn',
            title,
            detail: `${detail} code, xdg-open, git credentials and proximo do not reach VS Code from it.`,
            fix: t.bridge.why.includes(SETTINGS.bridgeTransport)
              ? `Set ${SETTINGS.bridgeTransport} back to auto in your User settings, unless this engine's host.docker.internal reaches this machine's loopback, then recreate the container (${COMMAND_LABELS.stopContainer.label} and open a shell again).`
              : `Open a shell of the folder again (${OPEN_SHELL}); if the bridge is off (bridge: false in .toolbox.yaml), that is why.`,
          },
        ];
      }
      return [{ id, status: 'pass', title, detail }];
    },
    () => [
      {
        id: `transports:${f.folder}`,
        status: 'info',
        title: `Transports (${shown(f.folder, home)})`,
        detail: 'No container yet: open a shell first.',
        fix: RUN(OPEN_SHELL),
      },
    ],
  );
}

function peerObjectChecks(facts: DoctorFacts): DoctorCheck[] {
  const { anchor: anchorName, socketVolume } = facts.names;
  if (isUnread(facts.peerObjects)) return [unreadCheck('peer.objects', 'Peer messaging objects', facts.peerObjects)];
  const { anchor, volume } = facts.peerObjects;
  const wanted = facts.folders.some((f) => f.peer?.on === true);
  const checks: DoctorCheck[] = [];
  const anchorTitle = `Peer anchor ${anchorName}`;
  if (anchor.foreignLabel !== undefined) {
    checks.push({
      id: 'peer.anchor',
      status: 'fail',
      title: anchorTitle,
      detail: `A container of that name belongs to another tool (label ${oneLine(anchor.foreignLabel, 200)}): Toolbox neither uses nor removes it.`,
      fix: `Rename or remove that container yourself (docker rm -f ${anchorName}) if it is not in use.`,
    });
  } else if (anchor.state === 'missing') {
    checks.push({
      id: 'peer.anchor',
      status: 'info',
      title: anchorTitle,
      detail: 'Not created yet: the first shell with peer messaging on creates it.',
    });
  } else if (!anchor.entrypointOk) {
    checks.push({
      id: 'peer.anchor',
      status: 'warn',
      title: anchorTitle,
      detail: `It is ${anchor.state} with an entrypoint that is not the anchor's (stale): the next open replaces it once no container joins it.`,
      fix: `Stop every container (${STOP_ALL}), then run ${OPEN_SHELL}.`,
    });
  } else if (anchor.state === 'stopped') {
    checks.push({
      id: 'peer.anchor',
      status: wanted ? 'warn' : 'info',
      title: anchorTitle,
      detail: 'Stopped: containers opened now cannot join its PID namespace until it runs; the next open with peer messaging starts it.',
      ...(wanted ? { fix: RUN(OPEN_SHELL) } : {}),
    });
  } else {
    checks.push({
      id: 'peer.anchor',
      status: 'pass',
      title: anchorTitle,
      detail: "Running, owned by Toolbox (its name, no other tool's label).",
    });
  }
  const volumeTitle = `Socket volume ${socketVolume}`;
  const user = `${facts.uid}:${facts.gid}`;
  if (volume.foreignLabel !== undefined) {
    checks.push({
      id: 'peer.volume',
      status: 'fail',
      title: volumeTitle,
      detail: `A volume of that name belongs to another tool (label ${oneLine(volume.foreignLabel, 200)}).`,
      fix: `Remove it yourself (docker volume rm ${socketVolume}) if it is not in use; the next open makes Toolbox's own.`,
    });
  } else if (!volume.exists) {
    checks.push({
      id: 'peer.volume',
      status: 'info',
      title: volumeTitle,
      detail: 'Not created yet: the first shell with peer messaging on creates it (yours, mode 0700).',
    });
  } else if (volume.owner === undefined) {
    checks.push({
      id: 'peer.volume',
      status: 'pass',
      title: volumeTitle,
      detail: "Present; its owner and mode cannot be read from this host (the engine's files are elsewhere or not readable).",
    });
  } else if (volume.owner !== user || (volume.mode !== undefined && volume.mode !== '0700')) {
    checks.push({
      id: 'peer.volume',
      status: 'warn',
      title: volumeTitle,
      detail: `Owned by ${oneLine(volume.owner, 40)}, mode ${oneLine(volume.mode ?? 'unknown', 8)}; it should be yours (${user}), mode 0700, or sessions cannot make their sockets in it.`,
      fix: `Stop every container (${STOP_ALL}), remove it (docker volume rm ${socketVolume}), then run ${OPEN_SHELL}.`,
    });
  } else {
    checks.push({
      id: 'peer.volume',
      status: 'pass',
      title: volumeTitle,
      detail: `Present, owned by you (${user}), mode ${volume.mode ?? '0700'}.`,
    });
  }
  return checks;
}

function peerFolderChecks(f: FolderFacts, home: string): DoctorCheck[] {
  const id = `peer.folder:${f.folder}`;
  const title = `Peer messaging for ${shown(f.folder, home)}`;
  if (f.peer === undefined) return [];
  const setting = `${f.peer.on ? 'On' : 'Off'} (${oneLine(f.peer.source, 300)})`;
  const fix = `To change it: ${COMMAND_LABELS.togglePeerMessaging.label}`;
  if (isUnread(f.containers) || f.containers.length === 0) return [{ id, status: 'info', title, detail: `${setting}.`, fix }];
  const drifted = f.containers.filter((c) => c.state === 'running' && c.peer.perRun === undefined && c.peer.member !== f.peer!.on);
  if (drifted.length > 0) {
    return [
      {
        id,
        status: 'warn',
        title,
        detail: `${setting}, but ${drifted.map((c) => oneLine(c.name, 200)).join(', ')} ${f.peer.on ? 'is not in' : 'is in'} the anchor's namespace.`,
        fix: `Run ${COMMAND_LABELS.recreateContainer.label} (or ${RECREATE_STEPS}).`,
      },
    ];
  }
  return [{ id, status: 'pass', title, detail: `${setting}; the running containers agree.` }];
}

function imageChecks(facts: DoctorFacts): DoctorCheck[] {
  if (isUnread(facts.images)) return [unreadCheck('image', 'Runtime image', facts.images)];
  const checks: DoctorCheck[] = [];
  for (const img of facts.images) {
    const ref = oneLine(img.ref, 300);
    const id = `image:${img.ref}`;
    if (!img.ours) {
      checks.push({
        id,
        status: img.present ? 'info' : 'warn',
        title: 'Custom image',
        detail: img.present
          ? `${ref} (image: in the configuration), on this machine; not the Toolbox runtime image, so no tag or staleness check.`
          : `${ref} (image: in the configuration) is not on this machine: the next open pulls it.`,
        ...(img.present ? {} : { fix: `Run ${OPEN_SHELL}, or pull it yourself (docker pull ${ref}).` }),
      });
      continue;
    }
    if (!img.present) {
      checks.push({
        id,
        status: 'warn',
        title: 'Runtime image',
        detail: `${ref} is not on this machine yet: the next open ${img.pullFrom ? `pulls it from ${oneLine(img.pullFrom, 300)}, or builds it when the pull fails` : `builds it (${SETTINGS.runtimeImagePull} is off)`} (a few minutes, once).`,
        fix: RUN(OPEN_SHELL),
      });
      continue;
    }
    if (img.tagHash !== undefined && img.labelHash !== img.tagHash) {
      checks.push({
        id,
        status: 'fail',
        title: 'Runtime image',
        detail: `${ref} is present, but was built from another context (its label says ${oneLine(img.labelHash ?? 'nothing', 40)}).`,
        fix: RUN(COMMAND_LABELS.rebuildRuntimeImage.label),
      });
      continue;
    }
    const stale = facts.folders.flatMap((f) =>
      f.imageRef === img.ref && !isUnread(f.containers)
        ? f.containers.filter((c) => c.imageId !== undefined && img.id !== undefined && c.imageId !== img.id)
        : [],
    );
    const how = img.pulled ? 'pulled from a registry' : 'built on this machine';
    checks.push({
      id,
      status: 'pass',
      title: 'Runtime image',
      detail: `${ref}, present (the content-hash tag this extension asks for), ${how}; ${stale.length === 0 ? 'not stale: no container here runs an older one.' : 'see the stale containers below.'}`,
    });
    for (const c of stale) {
      checks.push({
        id: `image.stale:${c.name}`,
        status: 'warn',
        title: `Stale image in ${oneLine(c.name, 200)}`,
        detail: `It runs an older runtime image than ${ref}: what changed since (the shims, the agents) is not in it.`,
        fix: RECREATE,
      });
    }
  }
  return checks;
}

function proximoChecks(f: FolderFacts, home: string): DoctorCheck[] {
  if (f.proximo === undefined) return [];
  const id = `proximo:${f.folder}`;
  const title = `proximo for ${shown(f.folder, home)}`;
  const p = f.proximo;
  if (!p.enabled) return [{ id, status: 'info', title, detail: 'Off for this folder (proximo: false in the configuration).' }];
  if (!p.installed && p.caPath === undefined) {
    return [
      { id, status: 'info', title, detail: 'Not installed on this host: containers start without it, and nothing else is affected.' },
    ];
  }
  if (p.caPath === undefined) {
    return [
      {
        id,
        status: 'warn',
        title,
        detail: "Installed, but its certificate authority is missing: containers do not trust proximo's HTTPS names.",
        fix: 'Run `proximo install` on this host, then open a new shell (a running container keeps what it had).',
      },
    ];
  }
  const checks: DoctorCheck[] = [
    {
      id,
      status: 'pass',
      title,
      detail: `On: its CA at ${shown(p.caPath, home)} is mounted into new containers; ${p.hosts} routed host${p.hosts === 1 ? '' : 's'}.`,
    },
  ];
  if (!isUnread(f.containers)) {
    for (const c of f.containers.filter((c) => c.state === 'running' && !c.proximoCa)) {
      checks.push({
        id: `proximo.container:${c.name}`,
        status: 'warn',
        title: `proximo in ${oneLine(c.name, 200)}`,
        detail: "It was created without proximo's CA (proximo was not set up then): https://….test names fail there.",
        fix: RECREATE,
      });
    }
  }
  return checks;
}

function protectedChecks(f: FolderFacts, home: string): DoctorCheck[] {
  if (f.protection === undefined) return [];
  const folder = shown(f.folder, home);
  if (!f.protection.enabled) {
    return [
      {
        id: `protected:${f.folder}`,
        status: 'warn',
        title: `Protected paths of ${folder}`,
        detail: `${SETTINGS.protectedPaths} is off: .git/config, hooks, .vscode/ and the other files host programs run are writable in the container.`,
        fix: `Set ${SETTINGS.protectedPaths} to true in your User settings, then ${RECREATE_STEPS}.`,
      },
    ];
  }
  const planned = f.protection.planned;
  const list = (paths: readonly string[]) => {
    const shownPaths = paths.slice(0, 8).map((p) => oneLine(tildePath(p, home), 200));
    return `${shownPaths.join(', ')}${paths.length > 8 ? `, and ${paths.length - 8} more` : ''}`;
  };
  return containersOr(
    f,
    home,
    'protected',
    `Protected paths of ${folder}`,
    (c) => {
      const id = `protected:${c.name}`;
      const title = `Protected paths in ${oneLine(c.name, 200)}`;
      if (!c.protection.labelled) {
        return [
          {
            id,
            status: 'warn',
            title,
            detail:
              'It was made without the protection (before it, by the toolbox CLI, or with it off): the paths host programs run are writable there.',
            fix: RECREATE,
          },
        ];
      }
      if (c.protection.missing.length > 0 || c.protection.replaced.length > 0) {
        const parts = [
          ...(c.protection.missing.length ? [`not read-only there: ${list(c.protection.missing)}`] : []),
          ...(c.protection.replaced.length
            ? [`replaced on the host since it was made (no longer bound): ${list(c.protection.replaced)}`]
            : []),
        ];
        return [{ id, status: 'warn', title, detail: `${parts.join('; ')}.`, fix: RECREATE }];
      }
      return [
        {
          id,
          status: 'pass',
          title,
          detail: `Every protected path the plan has is read-only there (${planned.length}${planned.length ? `: ${list(planned)}` : ''}).`,
        },
      ];
    },
    () => [
      {
        id: `protected:${f.folder}`,
        status: 'info',
        title: `Protected paths of ${folder}`,
        detail: `No container yet; its plan binds ${planned.length} read-only${planned.length ? `: ${list(planned)}` : ''}.`,
      },
    ],
  );
}

const SOURCE_WORDS: Record<VscodeSettingSource, string> = {
  folder: "the folder's .vscode/settings.json",
  workspace: 'the workspace settings',
  user: 'your User settings',
  default: "VS Code's default",
};

/**
 * VS Code's git and repositories inside the folder: one an agent makes in the container (a
 * `git init`, a clone, a submodule it stages) has a config of the container's writing, and
 * VS Code's git runs the programs it names on the host as soon as it runs git there
 * (docs/decisions/0059).
 */
function vscodeGitChecks(f: FolderFacts, home: string): DoctorCheck[] {
  if (f.vscodeGit === undefined) return [];
  const id = `protected.vscode-git:${f.folder}`;
  const title = `VS Code's git in ${shown(f.folder, home)}`;
  if (f.vscodeGit.length === 0) {
    const defaults = Object.entries(VSCODE_GIT_DEFAULTS)
      .map(([setting, value]) => `${setting} ${String(value)}`)
      .join(', ');
    return [
      {
        id,
        status: 'pass',
        title,
        detail: `VS Code's git keeps to the folder's own repository and never runs git inside another one in it (${defaults}).`,
      },
    ];
  }
  const set = f.vscodeGit.map((o) => `${o.setting} is ${oneLine(o.value, 40)} in ${SOURCE_WORDS[o.source]}`).join('; ');
  const sources = [...new Set(f.vscodeGit.map((o) => SOURCE_WORDS[o.source]))].join(' and ');
  return [
    {
      id,
      status: 'warn',
      title,
      detail: `VS Code's git runs git inside other repositories in the folder on its own (${set}): one an agent makes in the container runs, on this host and without a click, the programs its config names.`,
      fix: `Remove ${f.vscodeGit.map((o) => o.setting).join(' and ')} from ${sources} (Toolbox's defaults keep VS Code's git to the folder's own repository).`,
    },
  ];
}

/**
 * The extensions on this host that run files of the window's folders, which their containers can
 * write (docs/decisions/0060): named, with Restricted Mode as the user's choice. Info, never a
 * warning: trusting the folder is the user's call, and the list is Toolbox's, not VS Code's.
 */
function hostToolsChecks(facts: HostToolsFacts | undefined, folders: number): DoctorCheck[] {
  if (facts === undefined || folders === 0) return [];
  const p = hostToolsPosture(facts);
  const choice = hostToolsChoice(p);
  const offer = hostToolsOffer(p);
  return [
    {
      id: 'host-tools',
      status: runningOnTheirOwn(p).length === 0 ? 'pass' : 'info',
      title: "Extensions on this host that run the folder's files",
      detail: hostToolsDetail(p),
      ...(choice !== undefined ? { fix: choice } : {}),
      ...(offer !== undefined ? { offer } : {}),
    },
  ];
}

function dockerChecks(f: FolderFacts, home: string): DoctorCheck[] {
  if (f.dockerEndpoint === undefined) return [];
  const setting = f.dockerEndpoint.setting;
  const rawFix = `Set ${SETTINGS.dockerEndpoint} to scoped in your User settings (or turn Docker off for the folder with ${COMMAND_LABELS.turnOffReach.label} on its Docker row), then ${RECREATE_STEPS}.`;
  return containersOr(
    f,
    home,
    'docker',
    `Docker in ${shown(f.folder, home)}`,
    (c) => {
      const id = `docker:${c.name}`;
      const title = `Docker in ${oneLine(c.name, 200)}`;
      if (c.docker.kind === 'raw-socket') {
        return [
          {
            id,
            status: 'fail',
            title,
            detail: `It has the host's Docker socket, which is root on this host${setting === 'raw-socket' ? ` (${SETTINGS.dockerEndpoint} is raw-socket)` : ''}.`,
            fix: rawFix,
          },
        ];
      }
      if (c.docker.kind === 'none') return [{ id, status: 'pass', title, detail: 'No Docker in the container (no endpoint, no socket).' }];
      if (c.docker.served === false && c.state === 'running') {
        return [
          {
            id,
            status: 'warn',
            title,
            detail: 'It has its own policy endpoint, but no window serves it now: docker in the container gets "connection refused".',
            fix: `Open a shell of the folder in this window (${OPEN_SHELL}): the endpoint is served again.`,
          },
        ];
      }
      return [
        {
          id,
          status: 'pass',
          title,
          detail: `Its own policy endpoint (never the host's socket)${c.docker.served ? ', served by this window' : ''}.`,
        },
      ];
    },
    () =>
      setting === 'raw-socket'
        ? [
            {
              id: `docker:${f.folder}`,
              status: 'fail',
              title: `Docker in ${shown(f.folder, home)}`,
              detail: `No container yet; the next one gets the host's Docker socket (${SETTINGS.dockerEndpoint} is raw-socket), which is root on this host.`,
              fix: `Set ${SETTINGS.dockerEndpoint} to scoped in your User settings.`,
            },
          ]
        : [
            {
              id: `docker:${f.folder}`,
              status: 'info',
              title: `Docker in ${shown(f.folder, home)}`,
              detail: f.dockerEndpoint!.forwardable
                ? 'No container yet; the next one gets its own policy endpoint.'
                : 'No container yet; the engine is one the endpoint cannot forward to (ssh:// or TLS), so the next one gets the docker-sock mount as configured.',
            },
          ],
  );
}

function egressChecks(f: FolderFacts, home: string): DoctorCheck[] {
  if (f.egressMode === undefined) return [];
  const mode = f.egressMode;
  const folder = shown(f.folder, home);
  const checks: DoctorCheck[] = [
    {
      id: `egress:${f.folder}`,
      status: 'info',
      title: `Egress of ${folder}`,
      detail:
        mode === 'open'
          ? `open: its containers reach any host through the engine's network (${SETTINGS.egressMode}).`
          : `${mode}: its new containers have no network of their own and connect through a proxy this window serves.`,
    },
  ];
  if (isUnread(f.containers))
    return [...checks, unreadCheck(`egress.containers:${f.folder}`, `Egress of ${folder}'s containers`, f.containers)];
  for (const c of f.containers) {
    const id = `egress.container:${c.name}`;
    const title = `Egress of ${oneLine(c.name, 200)}`;
    if (c.egress.enforced && c.state === 'running' && c.egress.served === false) {
      checks.push({
        id,
        status: 'fail',
        title,
        detail: 'Created under a policy, but its proxy socket does not answer: programs in it cannot connect out.',
        fix: `Open a shell of the folder in this window (${OPEN_SHELL}): the proxy is served again.`,
      });
    } else if (c.egress.enforced && mode === 'open') {
      checks.push({
        id,
        status: 'warn',
        title,
        detail: 'Created under a policy the folder no longer has: it still has no network of its own.',
        fix: RECREATE,
      });
    } else if (!c.egress.enforced && mode !== 'open') {
      checks.push({
        id,
        status: 'warn',
        title,
        detail: `Created before the folder's ${mode} policy: it still has the engine's network.`,
        fix: RECREATE,
      });
    } else if (c.egress.enforced) {
      checks.push({
        id,
        status: 'pass',
        title,
        detail: `Under the ${mode} policy${c.egress.served ? '; its proxy socket is served' : ''}.`,
      });
    } else {
      checks.push({ id, status: 'pass', title, detail: 'open, as the folder is.' });
    }
  }
  return checks;
}

/** Every check, in the report's order. */
export function doctorChecks(facts: DoctorFacts): DoctorCheck[] {
  const { home, folders } = facts;
  const noFolder: DoctorCheck[] =
    folders.length === 0
      ? [
          {
            id: 'folders',
            status: 'info',
            title: 'Folders',
            detail: 'No folder is open in this window: the per-folder checks are skipped.',
          },
        ]
      : [];
  return [
    ...engineChecks(facts.engine),
    ...noFolder,
    ...folders.flatMap((f) => transportChecks(f, home)),
    ...folders.flatMap((f) =>
      f.configProblem === undefined
        ? []
        : [
            {
              id: `config:${f.folder}`,
              status: 'fail' as const,
              title: `Configuration of ${shown(f.folder, home)}`,
              detail: `${oneLine(f.configProblem)} The checks that need the folder's plan are skipped.`,
              fix: `Fix the file and line named there (${COMMAND_LABELS.showResolvedConfig.label} lists where each key comes from).`,
            },
          ],
    ),
    ...peerObjectChecks(facts),
    ...folders.flatMap((f) => peerFolderChecks(f, home)),
    ...imageChecks(facts),
    ...folders.flatMap((f) => proximoChecks(f, home)),
    ...folders.flatMap((f) => protectedChecks(f, home)),
    ...folders.flatMap((f) => vscodeGitChecks(f, home)),
    ...hostToolsChecks(facts.hostTools, folders.length),
    ...folders.flatMap((f) => dockerChecks(f, home)),
    ...folders.flatMap((f) => egressChecks(f, home)),
  ];
}

export interface DoctorCounts {
  passed: number;
  warnings: number;
  failed: number;
}

export function doctorCounts(checks: readonly DoctorCheck[]): DoctorCounts {
  return {
    passed: checks.filter((c) => c.status === 'pass').length,
    warnings: checks.filter((c) => c.status === 'warn').length,
    failed: checks.filter((c) => c.status === 'fail').length,
  };
}

/** The notification's words: "Doctor: 9 passed, 1 warning, 0 failed". */
export function doctorSummary(counts: DoctorCounts): string {
  return `Doctor: ${counts.passed} passed, ${counts.warnings} warning${counts.warnings === 1 ? '' : 's'}, ${counts.failed} failed`;
}

/** The report's sections, by the part of a check's id before `.` or `:`. */
const SECTIONS: ReadonlyArray<[string, string]> = [
  ['engine', 'Engine'],
  ['folders', 'Folders'],
  ['transports', 'Transports'],
  ['config', 'Configuration'],
  ['peer', 'Peer messaging'],
  ['image', 'Runtime image'],
  ['proximo', 'proximo'],
  ['protected', 'Protected paths'],
  ['host-tools', 'Host extensions'],
  ['docker', 'Docker endpoint'],
  ['egress', 'Egress'],
];

const MARK: Record<DoctorStatus, string> = { pass: '[PASS]', warn: '[WARN]', fail: '[FAIL]', info: '[INFO]' };

/** The report's width: a detail longer than this goes on, indented, on the next line. */
export const REPORT_COLUMNS = 100;

/** `text` in lines of at most `width` characters, broken at spaces (a longer word stays whole). */
function wrap(text: string, width: number): string[] {
  const lines: string[] = [];
  let line = '';
  for (const word of text.split(' ').filter((w) => w !== '')) {
    if (line !== '' && line.length + 1 + word.length > width) {
      lines.push(line);
      line = word;
    } else {
      line = line === '' ? word : `${line} ${word}`;
    }
  }
  if (line !== '') lines.push(line);
  return lines;
}

/**
 * The report as plain text: where it ran, the counts, then each section's lines, wrapped at
 * REPORT_COLUMNS. `at` is the time it ran (ISO), given by the caller.
 */
export function renderDoctorReport(
  facts: DoctorFacts,
  checks: readonly DoctorCheck[],
  at: string,
  /** Applied to every line and detail before it is wrapped (Copy Report's plan/redact.ts: a value is never cut in two first). */
  clean: (text: string) => string = (text) => text,
): string {
  const a = facts.about;
  const engine = facts.engine.reachable
    ? `${facts.engine.product} ${oneLine(facts.engine.version, 64)}, API ${oneLine(facts.engine.apiVersion, 32)}`
    : 'not reachable';
  const lines = [
    'Toolbox Doctor',
    `Toolbox for VS Code ${a.extensionVersion} · VS Code ${oneLine(a.vscodeVersion ?? 'unknown', 40)} · ${a.platform} ${a.arch}${a.osRelease ? ` (${oneLine(a.osRelease, 80)})` : ''}`,
    `Engine: ${engine}`,
    `Folders: ${facts.folders.length ? facts.folders.map((f) => shown(f.folder, facts.home)).join(', ') : 'none'}`,
    `Run at: ${at}`,
    `${doctorSummary(doctorCounts(checks))}.`,
  ].map(clean);
  const indent = ' '.repeat(MARK.pass.length + 1);
  for (const [key, heading] of SECTIONS) {
    const mine = checks.filter((c) => c.id.split(/[.:]/)[0] === key);
    if (mine.length === 0) continue;
    lines.push('', heading);
    for (const c of mine) {
      lines.push(`${MARK[c.status]} ${clean(c.title)}`);
      for (const text of [c.detail, ...(c.fix !== undefined ? [`What to do: ${c.fix}`] : [])]) {
        lines.push(...wrap(clean(text), REPORT_COLUMNS - indent.length).map((l) => `${indent}${l}`));
      }
    }
  }
  return `${lines.join('\n')}\n`;
}
