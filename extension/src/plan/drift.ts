/**
 * Drift: an existing container that no longer matches what its open asks for. A container in
 * the wrong PID namespace, or without the socket volume, looks healthy but silently sees no
 * peers — or shares its process table unasked (docs/decisions/0001-peer-messaging-on-by-default.md).
 * Pure comparisons over what the engine read from inspect; the engine decides when to ask, and
 * the open flow, the tree and the status bar all judge drift with `peerDrift` below.
 */
import { CONTAINER, LABELS } from '../contract/upstream';
import { EGRESS } from '../contract/egress';
import { objectNames } from '../contract/objects';
import type { ObjectNames, SeccompProfile } from '../contract/types';
import { identityRecord, PROTECTED_MOUNT } from './protect';
import type { SessionPlan } from './types';

/** The SecurityOpt entry of an unconfined container, as Docker stores it. */
export const SECCOMP_UNCONFINED_OPT = 'seccomp=unconfined';

/** The values of LABELS.peerRun; anything else on a container is ignored. */
export const PEER_RUN_LABEL_VALUES = { on: 'on', off: 'off' } as const;

export type PeerDriftKind = 'joined-but-planned-off' | 'planned-on-but-outside' | 'missing-socket-volume';
export type DriftKind = PeerDriftKind | 'missing-port' | 'seccomp' | 'protections' | 'egress';

export interface Drift {
  kind: DriftKind;
  container: string;
  /** Upstream's warning shape (driftWarning), for the log. */
  message: string;
  /** missing-port: the port the open asks for, as `127.0.0.1:8080 (container port 80/tcp)`. */
  port?: string;
  /** egress: whether this open asks for a policy (the container was created the other way). */
  egressEnforced?: boolean;
  /** seccomp: the profile this open asks for (the container runs with the other one). */
  seccomp?: SeccompProfile;
  /** protections: the protected paths it lacks, relative to the folder where they are in it. */
  protections?: string[];
}

export interface PidModeDrift {
  kind: 'joined-but-planned-off' | 'planned-on-but-outside';
}

/** The subset of an inspect `Mounts[]` entry the socket check reads. */
export interface InspectedMount {
  Type?: string;
  Name?: string;
  Destination: string;
}

/** What the drift rule reads of a container, from inspect (open flow) or the container list (views). */
export interface ObservedPeerState {
  /** HostConfig.PidMode as stored; '' for none. */
  pidMode: string;
  /** The container mounts this namespace's socket volume at the contract's socket dir. */
  mountsSocketVolume: boolean;
}

/**
 * What a per-run override asked for when the container was opened, from its labels
 * (LABELS.peerRun): true for `on`, false for `off`; undefined for no label or any other value
 * (labels are read from the engine: only the two exact values count).
 */
export function peerRunOf(labels: Readonly<Record<string, unknown>> | null | undefined): boolean | undefined {
  const value = labels?.[LABELS.peerRun];
  if (value === PEER_RUN_LABEL_VALUES.on) return true;
  if (value === PEER_RUN_LABEL_VALUES.off) return false;
  return undefined;
}

/** Every peer-messaging warning and log line starts with this. */
export const PEER_MESSAGE_PREFIX = 'peer messaging: ';

/**
 * `HostConfig.PidMode` as inspected, in Docker's spelling: Podman reports a container's own PID
 * namespace as "private" where Docker reports '' (docs/engines.md), and either may leave it out.
 */
export function storedPidMode(raw: string | null | undefined): string {
  return raw === undefined || raw === null || raw === 'private' ? '' : raw;
}

/**
 * Compares the inspected `HostConfig.PidMode` with the plan. Docker rewrites the
 * `container:<name>` it was given into `container:<id>`, so a match is the planned value itself
 * or `container:` + the anchor's id (pass the id the engine inspected; undefined when the anchor
 * could not be inspected — then only the verbatim value matches, as upstream). With peer off,
 * any PID mode at all counts as joined, as upstream compares against the empty plan value.
 */
export function pidModeDrift(
  inspectedPidMode: string,
  plannedPeer: boolean,
  anchorId: string | undefined,
  names: ObjectNames,
): PidModeDrift | undefined {
  if (!plannedPeer) {
    return inspectedPidMode === '' ? undefined : { kind: 'joined-but-planned-off' };
  }
  return joinsNamespace(inspectedPidMode, { name: names.anchor, id: anchorId }) ? undefined : { kind: 'planned-on-but-outside' };
}

/**
 * The one peer-drift rule: everything about the container's peer state that differs from the
 * plan, the namespace first, then (peer on only) the socket volume. Empty when it matches.
 */
export function peerDrifts(
  observed: ObservedPeerState,
  plannedPeer: boolean,
  anchorId: string | undefined,
  names: ObjectNames,
): PeerDriftKind[] {
  const found: PeerDriftKind[] = [];
  const pid = pidModeDrift(observed.pidMode, plannedPeer, anchorId, names);
  if (pid) found.push(pid.kind);
  if (plannedPeer && !observed.mountsSocketVolume) found.push('missing-socket-volume');
  return found;
}

/** The peer drift to show (one per container, the namespace first); undefined when it matches. */
export function peerDrift(
  observed: ObservedPeerState,
  plannedPeer: boolean,
  anchorId: string | undefined,
  names: ObjectNames,
): PeerDriftKind | undefined {
  return peerDrifts(observed, plannedPeer, anchorId, names)[0];
}

/**
 * True when a PidMode value joins the namespace of the container with this name or id: Docker
 * stores `container:<id>` even when it was created with `container:<name>`.
 */
export function joinsNamespace(pidMode: string, anchor: { name: string; id?: string }): boolean {
  const target = pidMode.startsWith('container:') ? pidMode.slice('container:'.length) : undefined;
  if (target === undefined || target === '') return false;
  return target === anchor.name || (anchor.id !== undefined && target === anchor.id);
}

/**
 * True when no mount of the container is this namespace's socket volume at /tmp/cc-socks
 * (a container from before the volume, or created while it was unavailable). Only meaningful
 * when the plan has peer messaging on.
 */
export function missingSocketVolume(mounts: InspectedMount[] | null | undefined, names: ObjectNames): boolean {
  return !(mounts ?? []).some((m) => m.Destination === CONTAINER.peerSocketDir && m.Name === names.socketVolume);
}

/**
 * Upstream's warning shapes, ending with the one fix for that container — never a blanket
 * stop, which would take the anchor and every sibling shell with it.
 */
export function driftWarning(kind: PeerDriftKind, containerName: string, names: ObjectNames = objectNames()): string {
  const fix = ` — stop it with \`toolbox stop ${containerName}\` or the Toolbox: Stop Container command, then open the shell again`;
  switch (kind) {
    case 'joined-but-planned-off':
      return `${PEER_MESSAGE_PREFIX}${containerName} already runs in the shared PID namespace, so this session can see the process table of every opted-in shell${fix}`;
    case 'planned-on-but-outside':
      return `${PEER_MESSAGE_PREFIX}${containerName} was created without the shared PID namespace, so this session will see no peers${fix}`;
    case 'missing-socket-volume':
      return `${PEER_MESSAGE_PREFIX}${containerName} does not mount the ${names.socketVolume} volume at ${CONTAINER.peerSocketDir}, so this session can reach no peer${fix}`;
  }
}

/**
 * What the user reads when an open reattaches to a container that differs from what this open
 * asks for: what differs, what it means for the shell, and the fix (which closes its shells).
 * The log keeps upstream's shape (driftWarning).
 */
export function openDriftNotice(
  d: Pick<Drift, 'kind' | 'container' | 'port' | 'seccomp' | 'protections' | 'egressEnforced'>,
  names: ObjectNames = objectNames(),
): string {
  const fix = 'To fix it, stop the container (Toolbox: Stop Container…) and open the shell again; its open shells will close.';
  switch (d.kind) {
    case 'joined-but-planned-off':
      return `The container ${d.container} runs in the shared namespace although this shell asked for peer messaging off, so other toolbox containers can see its processes. ${fix}`;
    case 'planned-on-but-outside':
      return `The container ${d.container} is not in the shared namespace (it was created without it, or the peer anchor was restarted), so agents in this shell see no peers. ${fix}`;
    case 'missing-socket-volume':
      return `The container ${d.container} does not mount the shared inbox volume ${names.socketVolume}, so agents in this shell cannot reach any peer. ${fix}`;
    case 'missing-port':
      return `The container ${d.container} does not publish ${d.port ? `port ${d.port}` : 'a port'} that this folder asks for. ${fix}`;
    case 'seccomp':
      return `The container ${d.container} ${seccompDifference(d.seccomp ?? 'default')}. ${fix}`;
    case 'protections':
      return `The container ${d.container} ${protectionsDifference(d.protections ?? [])}. ${fix}`;
    case 'egress':
      return `The container ${d.container} ${egressDifference(d.egressEnforced ?? true)}. ${fix}`;
  }
}

/**
 * What differs when a container was created under the other egress posture than `wants` (a
 * policy, or `open`), as the rest of a sentence that starts with the container.
 */
export function egressDifference(wants: boolean): string {
  return wants
    ? "has the engine's network, although this folder's egress policy (toolbox.egress.mode) asks for connections through this window's proxy, so programs in it can connect anywhere"
    : "has no network but this window's egress proxy, although this folder's egress mode is now open, so programs in it reach only what the policy it was created with allows";
}

/** Whether an inspected container was created under an egress policy (its LABELS.egress). */
export function egressEnforcedOf(labels: Readonly<Record<string, unknown>> | null | undefined): boolean {
  return labels?.[LABELS.egress] === EGRESS.enforcedLabel;
}

/**
 * What it means that a container lacks protected paths the open asks for, as the rest of a
 * sentence that starts with the container ("The container X …").
 */
export function protectionsDifference(missing: readonly string[]): string {
  const shown = missing.length > 4 ? `${missing.slice(0, 4).join(', ')} and ${missing.length - 4} more` : missing.join(', ');
  return (
    `does not have the read-only protection of ${shown || 'its protected paths'} (toolbox.protectedPaths): it was created ` +
    'without it, or a program on this host has replaced or removed the file since, which ends its protection in running containers. ' +
    'Programs in it can change files that git, your editor and other tools on this host read and run'
  );
}

/**
 * What differs when a container runs with the other seccomp profile than `wants` (the profile
 * toolbox.seccomp asks for), and what it means, as the rest of a sentence that starts with the
 * container ("The container X …"). The open's notice and the status bar's say the same.
 */
export function seccompDifference(wants: SeccompProfile): string {
  return wants === 'default'
    ? "runs without a seccomp filter, although the toolbox.seccomp setting asks for Docker's default profile, so programs in it can make system calls that profile blocks"
    : "runs under Docker's default seccomp profile, although the toolbox.seccomp setting asks for unconfined, so Codex's sandbox cannot start in it";
}

/** Upstream's warning shape for seccomp drift, for the log: `wants` is the profile toolbox.seccomp asks for. */
export function seccompWarning(container: string, wants: SeccompProfile): string {
  return (
    (wants === 'default'
      ? `${container} runs with seccomp=unconfined although toolbox.seccomp asks for Docker's default profile`
      : `${container} runs under Docker's default seccomp profile although toolbox.seccomp asks for unconfined`) +
    ` — stop it with \`toolbox stop ${container}\` or the Toolbox: Stop Container command, then open the shell again`
  );
}

/** When the anchor or the socket volume cannot be set up: the shell starts without peers. */
export function peerSetupWarning(reason: string): string {
  return `${PEER_MESSAGE_PREFIX}${reason} — starting this shell without it`;
}

/** The parts of an inspected container the drift check reads. */
export interface InspectedForDrift {
  HostConfig: { PidMode?: string; PortBindings?: unknown; SecurityOpt?: string[] | null };
  Mounts?: Array<InspectedMount & { Source?: string; RW?: boolean }>;
  Config?: { Labels?: Record<string, string> | null };
}

/** The peer state of an inspected container, as the drift rule reads it. */
export function observedPeerState(info: InspectedForDrift, names: ObjectNames): ObservedPeerState {
  return { pidMode: storedPidMode(info.HostConfig.PidMode), mountsSocketVolume: !missingSocketVolume(info.Mounts, names) };
}

/** How an inspected container differs from the plan: its peer drift (namespace first), then every missing port. */
export function driftAgainstPlan(info: InspectedForDrift, plan: SessionPlan, names: ObjectNames, anchorId: string | undefined): Drift[] {
  const container = plan.name;
  const drift: Drift[] = [];
  for (const kind of peerDrifts(observedPeerState(info, names), plan.peer, anchorId, names)) {
    drift.push({ kind, container, message: driftWarning(kind, container, names) });
  }
  const seccomp = seccompDrift(info.HostConfig.SecurityOpt, plan.create.HostConfig.SecurityOpt);
  if (seccomp) {
    drift.push({ kind: 'seccomp', container, seccomp, message: seccompWarning(container, seccomp) });
  }
  const protections = [...new Set([...missingProtections(info.Mounts, plan), ...replacedProtections(info.Config?.Labels, plan)])];
  if (protections.length > 0) {
    drift.push({
      kind: 'protections',
      container,
      protections,
      message: `${container} ${protectionsDifference(protections)} — stop it with \`toolbox stop ${container}\` or the Toolbox: Stop Container command, then open the shell again`,
    });
  }
  // Plans made by hand (tests, older records) may carry no labels: no policy then.
  const wantsEgress = egressEnforcedOf(plan.create.Labels as Record<string, string> | undefined);
  if (egressEnforcedOf(info.Config?.Labels) !== wantsEgress) {
    drift.push({
      kind: 'egress',
      container,
      egressEnforced: wantsEgress,
      message: `${container} ${egressDifference(wantsEgress)} — stop it with \`toolbox stop ${container}\` or the Toolbox: Stop Container command, then open the shell again`,
    });
  }
  const published = (info.HostConfig.PortBindings ?? {}) as Record<string, Array<{ HostIp?: string; HostPort?: string }> | null>;
  for (const p of plannedPorts(plan)) {
    // Docker keeps the HostPort it was asked for ('' when it picked one), so the request itself is
    // compared; Podman keeps the port it picked instead, and any port meets "any free port".
    const bound = (published[p.key] ?? []).some((b) => p.hostPort === '' || (b.HostPort ?? '') === p.hostPort);
    if (!bound) {
      const port = plannedPortLabel(p);
      drift.push({
        kind: 'missing-port',
        container,
        port,
        message:
          `${container} does not publish port ${port} that this workspace asks for ` +
          `— stop it with \`toolbox stop ${container}\` or the Toolbox: Stop Container command, then open the shell again`,
      });
    }
  }
  return drift;
}

/**
 * The profile an open asks for when the container runs with the other one; undefined when they
 * agree. Only `seccomp=unconfined` (or the older `seccomp:unconfined`) counts as unconfined: a
 * custom profile is neither, and is judged as the default one.
 */
export function seccompDrift(observed: readonly string[] | null | undefined, planned: readonly string[]): SeccompProfile | undefined {
  return profileDrift(seccompProfileOf(observed), seccompProfileOf(planned));
}

/**
 * The seccomp profile a container runs with, from its inspected `HostConfig.SecurityOpt`:
 * `unconfined` for `seccomp=unconfined` (or the older `seccomp:unconfined`), else `default` (no
 * option, or a custom profile, which is judged as the default one). The upstream CLI always sets
 * `seccomp=unconfined` (docs/decisions/0024-seccomp-unconfined-with-an-opt-out.md).
 */
export function seccompProfileOf(securityOpt: readonly string[] | null | undefined): SeccompProfile {
  return (securityOpt ?? []).some((o) => o === SECCOMP_UNCONFINED_OPT || o === 'seccomp:unconfined') ? 'unconfined' : 'default';
}

/**
 * The views' seccomp rule: `wants` (the folder's toolbox.seccomp now) when the container runs
 * with the other profile; undefined when they agree, or when the profile it runs with is not
 * known (`observed` undefined: never judged on a guess).
 */
export function profileDrift(observed: SeccompProfile | undefined, wants: SeccompProfile): SeccompProfile | undefined {
  return observed === undefined || observed === wants ? undefined : wants;
}

const PEER_KINDS: readonly DriftKind[] = ['joined-but-planned-off', 'planned-on-but-outside', 'missing-socket-volume'];

/**
 * The protected paths of the plan that an inspected container's mounts do not cover, as host
 * paths (relative to the folder when inside it). A read-only path is covered by a read-only mount
 * at its place or above it (a container made when `.claude` was missing has `.claude` read-only as
 * a whole); a pin by any mount at its place or a read-only one above it. A container made before
 * the protection, or by the CLI, covers none.
 */
export function missingProtections(mounts: InspectedForDrift['Mounts'], plan: Pick<SessionPlan, 'mounts' | 'workspace'>): string[] {
  // Tests hand partial plans.
  const planned = (plan.mounts ?? []).filter((m) => m.name === PROTECTED_MOUNT.readonly || m.name === PROTECTED_MOUNT.pin);
  if (planned.length === 0) return [];
  const readOnly = new Set((mounts ?? []).filter((m) => m.RW === false).map((m) => m.Destination));
  const any = new Set((mounts ?? []).map((m) => m.Destination));
  const covered = (target: string, ro: boolean) => {
    if (ro ? readOnly.has(target) : any.has(target)) return true;
    for (let up = target.slice(0, target.lastIndexOf('/')); up !== ''; up = up.slice(0, up.lastIndexOf('/'))) {
      if (readOnly.has(up)) return true;
    }
    return false;
  };
  const missing = planned.filter((m) => !covered(m.target, m.readonly)).map((m) => m.source);
  return [...new Set(missing)].map((p) => relativeTo(plan.workspace, p));
}

/**
 * The protected paths the host has replaced or removed since the container was made (another
 * file there now than its LABELS.protectedIdentities records, or none where the plan binds one):
 * the kernel detached their read-only binds in the container when that happened, so they are
 * protected no more. The record has the placeholders too (engine/open.ts adds them; the host
 * facts give a placeholder its identity while it plans as missing), so a host `git submodule add`
 * over the `.gitmodules` placeholder, or a `git clean -X` that removes it, is reported. Relative
 * to the folder where inside it.
 */
export function replacedProtections(
  labels: Readonly<Record<string, string>> | null | undefined,
  plan: Pick<SessionPlan, 'create' | 'workspace' | 'mounts'>,
): string[] {
  const then = identityRecord(labels?.[LABELS.protectedIdentities]);
  if (Object.keys(then).length === 0) return [];
  const now = identityRecord(plan.create.Labels[LABELS.protectedIdentities]);
  // Tests hand partial plans.
  const bound = new Set(
    (plan.mounts ?? []).filter((m) => m.name === PROTECTED_MOUNT.readonly || m.name === PROTECTED_MOUNT.pin).map((m) => m.source),
  );
  return Object.keys(then)
    .filter((p) => (now[p] !== undefined ? now[p] !== then[p] : bound.has(p)))
    .map((p) => relativeTo(plan.workspace, p));
}

function relativeTo(workspace: string, p: string): string {
  return p.startsWith(`${workspace}/`) ? p.slice(workspace.length + 1) : p;
}

/** The warnings to show for drift found on an open: one peer warning (the first), then the seccomp one, the protections, then every port one. */
export function warningsFor(drift: readonly Drift[]): string[] {
  const peer = drift.find((d) => PEER_KINDS.includes(d.kind));
  return [
    ...(peer ? [peer.message] : []),
    ...drift.filter((d) => d.kind === 'seccomp').map((d) => d.message),
    ...drift.filter((d) => d.kind === 'protections').map((d) => d.message),
    ...drift.filter((d) => d.kind === 'missing-port').map((d) => d.message),
  ];
}

export interface PlannedPort {
  /** `<container port>/<protocol>`, the key of Docker's PortBindings. */
  key: string;
  hostIp: string;
  /** As planned: `8080`, `8000-8010` (Docker picks in the range) or '' (Docker picks any). */
  hostPort: string;
  protocol: string;
}

/** The host ports a plan publishes, as the drift check and the port preflight read them. */
export function plannedPorts(plan: SessionPlan): PlannedPort[] {
  const out: PlannedPort[] = [];
  for (const [key, bindings] of Object.entries(plan.create.HostConfig.PortBindings ?? {})) {
    const protocol = key.split('/')[1] ?? 'tcp';
    for (const b of bindings) out.push({ key, hostIp: b.HostIp || '127.0.0.1', hostPort: b.HostPort, protocol });
  }
  return out;
}

/** `127.0.0.1:8080 (container port 80/tcp)`; a host port Docker picks reads `127.0.0.1:any free port`. */
export function plannedPortLabel(p: Pick<PlannedPort, 'key' | 'hostIp' | 'hostPort'>): string {
  return `${p.hostIp}:${p.hostPort === '' ? 'any free port' : p.hostPort} (container port ${p.key})`;
}
