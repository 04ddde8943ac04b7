/**
 * What a container can reach on the host beyond its workspace, read from the mounts Docker
 * reports for it (inspect `Mounts`), so the tree shows what the container really has, whatever
 * config created it (this extension, the CLI, an older version). Pure: no I/O.
 *
 * Five kinds, each something upstream's defaults or the user's config hand the container:
 *   docker-endpoint  the container's own scoped Docker endpoint (issue 27, decision 0047): it
 *                  reaches only the containers, volumes and networks it creates, binds only
 *                  inside its folder;
 *   docker-socket  the host's Docker engine: `docker run -v /:/host` is root on this host;
 *   host-ssh       the user's own ~/.ssh (bound when ~/.toolbox/ssh does not exist);
 *   host-auth      a CLI's credential directory from the host home (`inherit_host_auth`);
 *   host-path      any other host path outside the workspace and the toolbox mounts root.
 * The workspace, the toolbox-owned directories (the mounts root and ~/.toolbox, which hold the
 * container's own copies and the certificates), the bridge's mounts, the proximo CA and Docker
 * volumes are not listed.
 */
import { CONTAINER, HOST, LABELS } from '../contract/upstream';
import { DOCKER_ENDPOINT } from '../contract/dockerEndpoint';
import type { KeyOrigin, LayeredConfig, ToolboxConfig } from '../config/model';
import { DEFAULT_MOUNTS, DOCKER_SOCK_MOUNT, INHERIT_HOST_AUTH, patchableMountNames } from './mounts';
import { cleanPath } from './naming';

/** One entry of inspect `Mounts`, as Docker reports it. */
export interface InspectedMount {
  Type?: string;
  Source?: string;
  Destination?: string;
  RW?: boolean;
}

export type ReachKind = 'docker-endpoint' | 'docker-socket' | 'host-ssh' | 'host-auth' | 'host-path';

export interface HostReach {
  kind: ReachKind;
  /** Host path as mounted. */
  source: string;
  /** Path inside the container. */
  target: string;
  readonly: boolean;
  /** The default mount at this target (`docker-sock`, `ssh`, `gh`, …), when there is one. */
  defaultMount?: string;
  /** host-auth: the `inherit_host_auth` key that bound it. */
  authKey?: string;
}

const ORDER: readonly ReachKind[] = ['docker-socket', 'docker-endpoint', 'host-ssh', 'host-auth', 'host-path'];

function under(path: string, dir: string): boolean {
  return path === dir || path.startsWith(dir === '/' ? '/' : `${dir}/`);
}

function containerTarget(target: string): string {
  return target.startsWith('/') ? cleanPath(target) : cleanPath(`${CONTAINER.home}/${target}`);
}

/** Default mounts by container target, for naming what a target is and inferring the mounts root. */
const DEFAULT_BY_TARGET = new Map(DEFAULT_MOUNTS.map((m) => [containerTarget(m.target), m]));

const SOCKET_NAMES = new Set(['docker.sock', 'podman.sock']);

/**
 * Container paths where toolbox itself mounts its own state, wherever the host keeps it: the
 * bridge (its run dir may live under XDG_RUNTIME_DIR or /tmp, for the socket path's length) and
 * the proximo CA (a certificate, read-only).
 */
const TOOLBOX_TARGETS = new Set<string>([CONTAINER.bridgeDir, CONTAINER.bridgeLegacyDir, CONTAINER.bridgeRunDir, CONTAINER.proximoCa]);

/**
 * The mounts root the container's default mounts come from: the directory most of them share
 * (`<root>/<default source>`), or undefined when none does.
 */
function inferMountsRoot(binds: Array<{ source: string; target: string }>): string | undefined {
  const votes = new Map<string, number>();
  for (const b of binds) {
    const m = DEFAULT_BY_TARGET.get(b.target);
    if (!m || m.source.startsWith('/')) continue;
    const suffix = `/${m.source}`;
    if (!b.source.endsWith(suffix)) continue;
    const root = b.source.slice(0, -suffix.length) || '/';
    votes.set(root, (votes.get(root) ?? 0) + 1);
  }
  let best: string | undefined;
  let most = 1; // one match is a coincidence (a user mount of ~/.config/gh ends in /gh too)
  for (const [root, n] of votes) {
    if (n > most) {
      best = root;
      most = n;
    }
  }
  return best;
}

interface Bind {
  source: string;
  target: string;
  readonly: boolean;
}

/** The mounts root a container's default mounts come from, read from its inspected mounts (inferMountsRoot). */
export function mountsRootOf(mounts: readonly InspectedMount[] | null | undefined): string | undefined {
  return inferMountsRoot(bindsOf(mounts));
}

function bindsOf(mounts: readonly InspectedMount[] | null | undefined): Bind[] {
  return (mounts ?? [])
    .filter((m) => (m.Type ?? 'bind') === 'bind' && m.Source && m.Destination)
    .map((m) => ({ source: cleanPath(m.Source!), target: cleanPath(m.Destination!), readonly: m.RW === false }));
}

/**
 * A bind at the same place inside another bind of the container (a protected path,
 * plan/protect.ts): it narrows what that one gives and reaches nothing more.
 */
function nestedIn(binds: readonly Bind[], b: Bind): boolean {
  return binds.some(
    (o) => o !== b && o.source !== b.source && under(b.source, o.source) && b.target === o.target + b.source.slice(o.source.length),
  );
}

export function hostReach(mounts: readonly InspectedMount[] | null | undefined, home: string): HostReach[] {
  const h = cleanPath(home);
  const binds = bindsOf(mounts);
  const workspace = binds.find((b) => b.target === CONTAINER.workspace)?.source;
  const ownRoots = [cleanPath(`${h}/${HOST.mountsRoot}`), inferMountsRoot(binds)].filter((r): r is string => r !== undefined && r !== '/');
  const hostSsh = cleanPath(`${h}/.ssh`);

  const found: HostReach[] = [];
  for (const b of binds) {
    if (nestedIn(binds, b)) continue;
    const defaultMount = DEFAULT_BY_TARGET.get(b.target)?.name;
    const base = { source: b.source, target: b.target, readonly: b.readonly, ...(defaultMount ? { defaultMount } : {}) };
    const basename = b.source.slice(b.source.lastIndexOf('/') + 1);
    if (b.target === DOCKER_ENDPOINT.containerDir) {
      // In docker-sock's place (plan/mounts.ts withDockerEndpoint): turning it off disables that mount.
      found.push({ kind: 'docker-endpoint', ...base, defaultMount: DOCKER_SOCK_MOUNT });
      continue;
    }
    if (b.target === CONTAINER.dockerSocket || SOCKET_NAMES.has(basename)) {
      found.push({ kind: 'docker-socket', ...base });
      continue;
    }
    if (under(b.source, hostSsh)) {
      found.push({ kind: 'host-ssh', ...base });
      continue;
    }
    const auth = Object.entries(INHERIT_HOST_AUTH).find(
      ([, spec]) => containerTarget(spec.target) === b.target && cleanPath(`${h}/${spec.hostPath}`) === b.source,
    );
    if (auth) {
      found.push({ kind: 'host-auth', ...base, authKey: auth[0] });
      continue;
    }
    if (workspace !== undefined && under(b.source, workspace)) continue;
    if (ownRoots.some((r) => under(b.source, r))) continue;
    if (TOOLBOX_TARGETS.has(b.target)) continue;
    found.push({ kind: 'host-path', ...base });
  }
  return found.sort((a, b) => ORDER.indexOf(a.kind) - ORDER.indexOf(b.kind) || a.target.localeCompare(b.target));
}

/**
 * The paths a container has bound read-only over its folder and its main `.git` (plan/protect.ts):
 * relative to the folder where inside it, else as a path under the home (`~/repo/.git/config`).
 * Undefined for a container made without the protection (toolbox.protectedPaths off, the CLI, a
 * version before it).
 */
export function protectedPathsOf(
  mounts: readonly InspectedMount[] | null | undefined,
  labels: Readonly<Record<string, string>> | null | undefined,
  home: string,
): string[] | undefined {
  if (labels?.[LABELS.protectedPaths] === undefined) return undefined;
  const binds = bindsOf(mounts);
  const workspace = binds.find((b) => b.target === CONTAINER.workspace)?.source;
  const paths = binds
    .filter((b) => b.readonly && nestedIn(binds, b))
    .map((b) =>
      workspace !== undefined && under(b.source, workspace) && b.source !== workspace
        ? b.source.slice(workspace.length + 1)
        : tildePath(b.source, home),
    );
  return [...new Set(paths)];
}

/** A short name for what the item gives the container: "Docker socket", "gh credentials", "~/.aws". */
export function reachTitle(r: HostReach, home: string): string {
  switch (r.kind) {
    case 'docker-endpoint':
      return 'Docker';
    case 'docker-socket':
      return 'Docker socket';
    case 'host-ssh':
      return 'Your SSH keys';
    case 'host-auth':
      return `${r.authKey ?? r.defaultMount ?? 'CLI'} credentials`;
    case 'host-path':
      return tildePath(r.source, home);
  }
}

/** `/home/u/.aws` as `~/.aws` (paths outside HOME unchanged). */
export function tildePath(p: string, home: string): string {
  const h = cleanPath(home);
  if (h === '/' || !home) return p;
  return p === h ? '~' : p.startsWith(`${h}/`) ? `~${p.slice(h.length)}` : p;
}

/** One thing Turn Off for This Folder turns off: a mount by name, or an `inherit_host_auth` key. */
export type TurnOff = { kind: 'disable-mount'; name: string } | { kind: 'drop-inherit-host-auth'; key: string };

/**
 * What Turn Off for This Folder turned off for one folder, kept where the container cannot write
 * (the user's settings, toolbox.turnedOffForFolder; docs/decisions/0041): mounts disabled by name,
 * `inherit_host_auth` keys dropped.
 */
export interface FolderTurnOff {
  mounts: string[];
  inheritHostAuth: string[];
}

/** The names a folder's entry of toolbox.turnedOffForFolder uses, as `.toolbox.yaml` spells them. */
const TURN_OFF_KEYS = { mounts: 'mounts', inheritHostAuth: 'inherit_host_auth' } as const;

function record(value: unknown): Record<string, unknown> {
  return value !== null && typeof value === 'object' && !Array.isArray(value) ? (value as Record<string, unknown>) : {};
}

function strings(value: unknown): string[] {
  return Array.isArray(value) ? value.filter((v): v is string => typeof v === 'string' && v !== '') : [];
}

/**
 * The folder's entry of the toolbox.turnedOffForFolder setting, `{"<folder>": {"mounts": [names],
 * "inherit_host_auth": [keys]}}`; anything else in it counts as nothing.
 */
export function folderTurnOff(setting: unknown, folder: string): FolderTurnOff {
  const all = record(setting);
  const fields = record(Object.hasOwn(all, cleanPath(folder)) ? all[cleanPath(folder)] : undefined);
  return { mounts: strings(fields[TURN_OFF_KEYS.mounts]), inheritHostAuth: strings(fields[TURN_OFF_KEYS.inheritHostAuth]) };
}

/** The setting's new value with the folder's entry set to `off`; the other folders' entries as they were. */
export function settingWithTurnOff(setting: unknown, folder: string, off: FolderTurnOff): Record<string, unknown> {
  const entry: Record<string, string[]> = {};
  if (off.mounts.length > 0) entry[TURN_OFF_KEYS.mounts] = off.mounts;
  if (off.inheritHostAuth.length > 0) entry[TURN_OFF_KEYS.inheritHostAuth] = off.inheritHostAuth;
  return { ...record(setting), [cleanPath(folder)]: entry };
}

/** `off` with `change` added; undefined when it already has it. */
export function withTurnOff(off: FolderTurnOff, change: TurnOff): FolderTurnOff | undefined {
  if (change.kind === 'disable-mount') {
    return off.mounts.includes(change.name) ? undefined : { ...off, mounts: [...off.mounts, change.name] };
  }
  return off.inheritHostAuth.includes(change.key) ? undefined : { ...off, inheritHostAuth: [...off.inheritHostAuth, change.key] };
}

/**
 * `layered` with what Turn Off for This Folder turned off applied over every other layer, so no
 * config file (the project's included) turns it back on: a `{name, disabled: true}` patch at the
 * end of `mounts:` for each mount name the planner knows, the keys left out of
 * `inherit_host_auth`. What it changes is credited to `origin` (Show Resolved Configuration).
 */
export function applyTurnOffs(layered: LayeredConfig, off: FolderTurnOff, origin: KeyOrigin): LayeredConfig {
  const { config } = layered;
  const origins = { ...layered.origins };
  const known = new Set([...patchableMountNames(), ...config.mounts.map((m) => m.name)]);
  const names = [...new Set(off.mounts)].filter((n) => known.has(n));
  const mounts = [...config.mounts, ...names.map((name) => ({ name, disabled: true }))];
  if (names.length > 0) {
    origins.mounts ??= origin;
    for (let i = config.mounts.length; i < mounts.length; i++) origins[`mounts[${i}]`] = origin;
  }
  const inheritHostAuth = config.inheritHostAuth.filter((k) => !off.inheritHostAuth.includes(k));
  if (inheritHostAuth.length !== config.inheritHostAuth.length) origins.inherit_host_auth = origin;
  return { ...layered, config: { ...config, mounts, inheritHostAuth }, origins };
}

/**
 * The change that turns `r` off for a folder whose effective config is `config`: a host-auth item drops its key from
 * `inherit_host_auth` when that list has it; otherwise the mount at the item's target is
 * disabled by name, the user's `mounts:` entry for that target when there is one (the last, as
 * the planner applies them), else the default mount there. A string explains why there is no
 * such change (the container was made from another config).
 */
export function turnOffChange(r: HostReach, config: Pick<ToolboxConfig, 'mounts' | 'inheritHostAuth'>): TurnOff | string {
  if (r.kind === 'host-auth' && r.authKey !== undefined && config.inheritHostAuth.includes(r.authKey)) {
    return { kind: 'drop-inherit-host-auth', key: r.authKey };
  }
  const user = [...config.mounts].reverse().find((m) => m.target !== undefined && containerTarget(m.target) === r.target);
  if (user?.name) return { kind: 'disable-mount', name: user.name };
  if (user) {
    return (
      `The mounts: entry that puts ${user.source ?? 'a host path'} at ${r.target} has no name, so no later entry can turn it off for this folder. ` +
      'Give it a name: in .toolbox.yaml, or remove it there.'
    );
  }
  if (r.defaultMount !== undefined) return { kind: 'disable-mount', name: r.defaultMount };
  return (
    `No mount in this folder's configuration puts anything at ${r.target}, so there is nothing to turn off here: the container was ` +
    'created from another configuration (the toolbox CLI, a profile, an edit since). Recreate it, or remove the mount where it was added.'
  );
}
