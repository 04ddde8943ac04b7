import { NAME_PREFIX, NAMING, OBJECT_SUFFIX } from './upstream';
import type { ObjectNames, OwnedContainerKind } from './types';

/**
 * Label keys (exact, or prefixes ending in `.`) that another tool sets on the containers it
 * manages. A container carrying one is that tool's, whatever its name says: Compose names its
 * containers `<project>-<service>-<n>`, so a Compose project called `toolbox` would otherwise
 * produce names in our namespace.
 */
export const FOREIGN_LABEL_PREFIXES = [
  'com.docker.compose.',
  'io.podman.compose.',
  'com.docker.stack.',
  'com.docker.swarm.',
  'io.kubernetes.',
  'devcontainer.',
  'dev.containers.',
  'org.testcontainers',
] as const;

/**
 * The names of the toolbox-owned infrastructure objects in one namespace. Production always
 * uses `toolbox` (upstream compatibility); tests pass their own prefix so they can never touch
 * a user's containers or volumes.
 *
 * Ownership is by the exact name grammar of the objects toolbox creates (plan/naming.ts makes
 * every one of them; test/unit/naming.test.ts checks the planners' output against this grammar),
 * never by prefix alone: `toolbox-db-1` (a Compose service) or a container someone named
 * `toolbox` by hand is not ours, so nothing lists, stops or removes it. A container that another
 * tool labels as its own (Compose, Swarm, Kubernetes, Dev Containers, …) is not ours either,
 * whatever its name.
 *
 * Upstream also counts a bare `toolbox` container as its own (a "legacy singleton" of very old
 * CLI versions). We do not: without labels, nothing tells such a container from one a user
 * named `toolbox` themselves, and Stop All force-removes what it counts as ours. A leftover
 * legacy container can be removed with `docker rm -f toolbox`.
 */
export function objectNames(prefix: string = NAME_PREFIX): ObjectNames {
  if (!/^[a-z0-9][a-z0-9_.-]*$/.test(prefix)) {
    throw new Error(`Invalid object name prefix "${prefix}": use lowercase letters, digits, ".", "_" or "-".`);
  }
  const anchor = `${prefix}-${OBJECT_SUFFIX.anchor}`;
  const socketVolumeInit = `${prefix}-${OBJECT_SUFFIX.socketVolumeInit}`;
  const kindOf = (name: string) => containerKind(bareName(name), prefix, anchor, socketVolumeInit);
  return {
    prefix,
    anchor,
    socketVolume: `${prefix}-${OBJECT_SUFFIX.socketVolume}`,
    socketVolumeInit,
    kindOf,
    isOurs: (name: string, labels?: Readonly<Record<string, string>> | null) => kindOf(name) !== undefined && !foreignLabelled(labels),
  };
}

/** A container name without the leading `/` the Engine API puts on it. */
export function bareName(name: string): string {
  return name.startsWith('/') ? name.slice(1) : name;
}

/** What sanitizing (plan/naming.ts slugify) can produce: `[a-z0-9]` runs joined by single `-`. */
const SLUG = '[a-z0-9]+(?:-[a-z0-9]+)*';
const HASH = `[a-f0-9]{${NAMING.hashHexChars}}`;

function escape(s: string): string {
  return s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

/**
 * Which toolbox object a bare container name is, by the planners' grammar:
 *   workspace   `<prefix>-<slug ≤ 46>-<8 hex>`            (workspaceContainerName)
 *   named       `<prefix>-named-<slug>[.peer]`             (namedShellName; the profile fold is
 *                                                           `-<slug>`, so it is part of the slug)
 *   anchor      `<prefix>-peer-anchor`, init `<prefix>-cc-socks-init`
 * Anything else, the bare prefix included, is undefined.
 */
function containerKind(name: string, prefix: string, anchor: string, init: string): OwnedContainerKind | undefined {
  if (name === anchor) return 'anchor';
  if (name === init) return 'init';
  const p = escape(prefix);
  const workspace = new RegExp(`^${p}-(${SLUG})-${HASH}$`).exec(name);
  if (workspace && workspace[1]!.length <= NAMING.maxSlug) return 'workspace';
  const named = new RegExp(`^${p}-${escape(OBJECT_SUFFIX.named)}-(${SLUG})(?:${escape(NAMING.namedPeerSuffix)})?$`).exec(name);
  // No length cap: the 49-character limit applies to the shell name before the profile fold.
  // A sanitized name that is a bare 8-hex hash is refused by the planner; such a name matched
  // the workspace form above already.
  if (named) return 'named';
  return undefined;
}

/** The first label key that marks the container as another tool's (FOREIGN_LABEL_PREFIXES above). */
export function foreignLabel(labels: Readonly<Record<string, string>> | null | undefined): string | undefined {
  if (!labels) return undefined;
  return Object.keys(labels).find((key) =>
    FOREIGN_LABEL_PREFIXES.some((p) => (p.endsWith('.') ? key.startsWith(p) : key === p || key.startsWith(`${p}.`))),
  );
}

export function foreignLabelled(labels: Readonly<Record<string, string>> | null | undefined): boolean {
  return foreignLabel(labels) !== undefined;
}
