/**
 * Peer-messaging drift on reattach (upstream `container/peer` checks, design note §8.3): an
 * existing container whose PID namespace or socket volume does not match the plan looks healthy
 * but silently sees no peers — or shares its process table unasked. Pure comparisons over what
 * the engine read from inspect; the engine decides when to ask.
 */
import { CONTAINER } from '../contract/constants';
import { objectNames } from '../contract/objects';
import type { ObjectNames } from '../contract/types';

export type PeerDriftKind = 'joined-but-planned-off' | 'planned-on-but-outside' | 'missing-socket-volume';

export interface PidModeDrift {
  kind: 'joined-but-planned-off' | 'planned-on-but-outside';
}

/** The subset of an inspect `Mounts[]` entry the socket check reads. */
export interface InspectedMount {
  Type?: string;
  Name?: string;
  Destination: string;
}

const WARNING_PREFIX = 'peer messaging: ';

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
      return `${WARNING_PREFIX}${containerName} already runs in the shared PID namespace, so this session can see the process table of every opted-in shell${fix}`;
    case 'planned-on-but-outside':
      return `${WARNING_PREFIX}${containerName} was created without the shared PID namespace, so this session will see no peers${fix}`;
    case 'missing-socket-volume':
      return `${WARNING_PREFIX}${containerName} does not mount the ${names.socketVolume} volume at ${CONTAINER.peerSocketDir}, so this session can reach no peer${fix}`;
  }
}

/**
 * The one drift warning to show on reattach: the namespace first, then (peer on only) the
 * socket volume. Undefined when the container matches the plan.
 */
export function peerDriftWarning(
  inspected: { pidMode: string; mounts: InspectedMount[] | null | undefined },
  plannedPeer: boolean,
  anchorId: string | undefined,
  containerName: string,
  names: ObjectNames,
): string | undefined {
  const pid = pidModeDrift(inspected.pidMode, plannedPeer, anchorId, names);
  if (pid !== undefined) return driftWarning(pid.kind, containerName, names);
  if (plannedPeer && missingSocketVolume(inspected.mounts, names)) {
    return driftWarning('missing-socket-volume', containerName, names);
  }
  return undefined;
}

/** When the anchor or the socket volume cannot be set up: the shell starts without peers. */
export function peerSetupWarning(reason: string): string {
  return `${WARNING_PREFIX}${reason} — starting this shell without it`;
}
