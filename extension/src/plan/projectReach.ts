/**
 * What the project side may change on its own, and what needs the user (issue 25, item 5;
 * docs/decisions/0041-project-config-narrows-only.md). The project folder is bind-mounted
 * read-write into its container, so its `.toolbox.yaml` and its `.vscode/settings.json` may have
 * been written by whatever runs there. They may narrow what the host side gives (the defaults,
 * `~/.toolbox.yaml`, `TOOLBOX_*`, the user's own settings, Turn Off for This Folder): turn a mount
 * off, make one read-only, drop an `inherit_host_auth` key, turn peer messaging, the bridge or
 * proximo off, and set what stays inside the container (`env`, `agent`, `pull`, …). Anything that
 * widens it (a new mount source or target, a writable or re-enabled mount, `image`,
 * `registry_mirror`, `mounts_root`, an `inherit_host_auth` key, a named shell's `path`, peer
 * messaging, the bridge or proximo turned back on) is left out until the user approves exactly
 * that widening for the folder: its normalized form hashes to `hash`, which a consent names.
 * Pure: no I/O; the approval comes in as a function.
 */
import { createHash } from 'node:crypto';
import { HOST } from '../contract/upstream';
import type { ConfigWidening, KeyOrigin, LayeredConfig, MountOverride, ResolvedConfig, ToolboxConfig } from '../config/model';
import { INHERIT_HOST_AUTH, requestedMounts, type RequestedMount } from './mounts';
import { cleanPath } from './naming';
import { applyTurnOffs, tildePath, type FolderTurnOff } from './posture';

export interface ReachContext {
  home: string;
  /** The workspace folder: relative mount sources resolve against it. */
  folder: string;
}

/** One widening part, with the normalized value the hash covers. */
interface Found extends ConfigWidening {
  value: unknown;
}

export interface ProjectReach {
  /** What the project side asks beyond the host side, in key order; empty when it only narrows. */
  widening: ConfigWidening[];
  /** The hash of the normalized widening; undefined when there is none. */
  hash?: string;
  /** The project side's config with every widening part taken back to the host side's; its narrowing parts kept. */
  narrowed: LayeredConfig;
}

/** At most this many characters of one value from a file are shown. */
export const OUTSIDE_TEXT_MAX = 120;

/**
 * A value from a file as plain text for a message or a document: JSON-quoted (so control
 * characters and newlines are escaped), invisible format characters (bidi overrides, zero-width)
 * escaped too, and cut at `max` characters.
 */
export function outsideText(value: string, max = OUTSIDE_TEXT_MAX): string {
  const chars = [...value];
  const cut = chars.length > max ? `${chars.slice(0, max).join('')}…` : value;
  return JSON.stringify(cut).replace(/[\p{Cf}\p{Zl}\p{Zp}]/gu, (c) => `\\u${c.codePointAt(0)!.toString(16).padStart(4, '0')}`);
}

/** Stand-in sources for the bridge's and proximo's mounts: relative, so no file's source (always absolute once resolved) can equal one. */
const BUILTIN_SOURCES: Readonly<Record<string, string>> = {
  'toolbox:bridge-state': "the bridge's state directory",
  'toolbox:bridge-run': "the bridge's socket directory",
  'toolbox:proximo-ca': "proximo's CA certificate",
};

/**
 * Compares the project side (`combined`: every layer) with the host side (`host`: the same
 * without the project file and the folder's settings) key by key; the table of keys is in
 * docs/decisions/0041-project-config-narrows-only.md.
 */
export function classifyProjectConfig(combined: LayeredConfig, host: LayeredConfig, context: ReachContext): ProjectReach {
  const found: Found[] = [];
  const config: ToolboxConfig = structuredClone(combined.config);
  const origins = { ...combined.origins };
  let peerMessagingFrom = combined.peerMessagingFrom;
  const c = combined.config;
  const h = host.config;
  const fromHost = (key: string) => {
    if (host.origins[key] === undefined) delete origins[key];
    else origins[key] = host.origins[key];
  };
  const show = (p: string) => outsideText(tildePath(p, context.home));

  // Any other value than the host side's: they decide what runs and where the host's own files come from.
  const scalars = [
    ['image', 'image', 'the Toolbox runtime image'],
    ['registryMirror', 'registry_mirror', 'none'],
    ['mountsRoot', 'mounts_root', `~/${HOST.mountsRoot}`],
  ] as const;
  for (const [modelKey, key, unset] of scalars) {
    if (c[modelKey] === h[modelKey]) continue;
    const value = c[modelKey];
    const yours = h[modelKey] === undefined ? unset : outsideText(h[modelKey]);
    found.push({
      key,
      adds: `${key}: ${value === undefined ? unset : outsideText(value)} instead of ${yours}`,
      origin: combined.origins[key],
      value: value ?? null,
    });
    if (h[modelKey] === undefined) delete config[modelKey];
    else config[modelKey] = h[modelKey];
    fromHost(key);
  }

  // On where the host side has it off. Unset bridge and proximo mean on.
  const switches = [
    ['peerMessaging', 'peer_messaging', "the container's agent sessions can message sessions in other toolbox containers"],
    ['bridge', 'bridge', "programs in the container reach this window's bridge (open files and URLs, git credentials)"],
    ['proximo', 'proximo', "the container trusts proximo's CA and reaches proximo on this host"],
  ] as const;
  for (const [modelKey, key, what] of switches) {
    if (c[modelKey] === false || h[modelKey] !== false) continue;
    found.push({ key, adds: `${key}: on, where your config has it off: ${what}`, origin: combined.origins[key], value: true });
    config[modelKey] = false;
    fromHost(key);
    if (modelKey === 'peerMessaging') peerMessagingFrom = host.peerMessagingFrom;
  }

  // egress (issue 30): a host the host side does not allow, or the built-in list on where the host
  // side turns it off. A stricter or looser mode needs nothing here: the policy takes the strictest
  // of both sides' modes (backend/egress.ts), so a project can only tighten it.
  const hostAllow = h.egress?.allow ?? [];
  const extraAllow = [...new Set((c.egress?.allow ?? []).filter((a) => !hostAllow.includes(a)))];
  for (const a of extraAllow) {
    found.push({
      key: 'egress.allow',
      adds: `egress.allow: ${outsideText(a)}: the container may connect there`,
      origin: combined.origins.egress,
      value: a,
    });
  }
  const defaultsOn = (c.egress?.defaults ?? true) && h.egress?.defaults === false;
  if (defaultsOn) {
    found.push({
      key: 'egress.defaults',
      adds: "egress.defaults: on, where your config has it off: the agents' APIs, package registries and git remotes are allowed",
      origin: combined.origins.egress,
      value: true,
    });
  }
  if (extraAllow.length > 0 || defaultsOn) {
    const egress = { ...(config.egress ?? {}) };
    const allow = (c.egress?.allow ?? []).filter((a) => hostAllow.includes(a));
    if (allow.length > 0) egress.allow = allow;
    else delete egress.allow;
    if (defaultsOn) egress.defaults = false;
    config.egress = egress;
  }

  // A key the host side does not list: the host's own credentials, read-write.
  const added = [...new Set(c.inheritHostAuth.filter((k) => !h.inheritHostAuth.includes(k)))];
  for (const k of added) {
    const path = INHERIT_HOST_AUTH[k]?.hostPath;
    const where = path === undefined ? 'an unknown CLI' : `your ${k} login (~/${path}), read-write`;
    found.push({
      key: 'inherit_host_auth',
      adds: `inherit_host_auth: ${outsideText(k)}: ${where}`,
      origin: combined.origins.inherit_host_auth,
      value: k,
    });
  }
  const inheritHostAuth = c.inheritHostAuth.filter((k) => h.inheritHostAuth.includes(k));
  if (added.length > 0) config.inheritHostAuth = inheritHostAuth;

  // A named shell binds its `path` read-write: another path than the host side's is a new folder.
  for (const name of Object.keys(c.shells).sort()) {
    const path = c.shells[name]!.path;
    const yours = h.shells[name];
    if (path === yours?.path || (path ?? '').trim() === '') continue;
    const key = `shells.${name}`;
    found.push({
      key,
      adds: `shells.${outsideText(name)}.path: ${show(path!)}: a named shell working in that folder, read-write`,
      origin: combined.origins[key],
      value: { name, path },
    });
    if (yours === undefined) delete config.shells[name];
    else {
      const shell = { ...config.shells[name]! };
      if (yours.path === undefined) delete shell.path;
      else shell.path = yours.path;
      config.shells[name] = shell;
    }
    fromHost(key);
  }

  const mounts = classifyMounts(combined, host, { ...context, inheritHostAuth }, show);
  if (mounts.found.length > 0) {
    found.push(...mounts.found);
    config.mounts = mounts.list;
    for (const key of Object.keys(origins)) if (key === 'mounts' || key.startsWith('mounts[')) delete origins[key];
    for (const [key, origin] of Object.entries(host.origins)) if (key === 'mounts' || key.startsWith('mounts[')) origins[key] = origin;
    const projectList = combined.origins.mounts;
    for (let i = h.mounts.length; i < mounts.list.length; i++) if (projectList) origins[`mounts[${i}]`] = projectList;
    if (mounts.list.length > 0 && origins.mounts === undefined && projectList) origins.mounts = projectList;
  }

  // By key, then in plan order (the sort is stable).
  const widening = [...found]
    .sort((a, b) => a.key.localeCompare(b.key))
    .map(({ key, adds, origin }) => ({ key, adds, ...(origin ? { origin } : {}) }));
  if (found.length === 0) return { widening, narrowed: combined };
  return { widening, hash: wideningHash(found), narrowed: { config, origins, peerMessagingFrom } };
}

/** sha-256 of the widening's keys and normalized values, sorted: the same widening, the same hash. */
function wideningHash(found: readonly Found[]): string {
  const parts = found.map((f) => stableJson({ key: f.key, value: f.value })).sort();
  return createHash('sha256')
    .update(`[${parts.join(',')}]`)
    .digest('hex');
}

/** JSON with object keys sorted, so equal values read the same whatever order they were built in. */
function stableJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(stableJson).join(',')}]`;
  if (value !== null && typeof value === 'object') {
    const entries = Object.entries(value as Record<string, unknown>).filter(([, v]) => v !== undefined);
    return `{${entries
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
      .map(([k, v]) => `${JSON.stringify(k)}:${stableJson(v)}`)
      .join(',')}}`;
  }
  return JSON.stringify(value) ?? 'null';
}

/**
 * The mounts each side asks for, compared by name after the planner's merge (plan/mounts.ts
 * requestedMounts), both on the host side's mounts root and with the `inherit_host_auth` keys both
 * have, so only the `mounts:` lists make the difference. When anything widens, the list that
 * applies is the host side's with the project's narrowing as patches: a mount turned off (or left
 * out of a project list, which replaces the user's whole), made read-only, or its
 * `create_if_missing` changed. A `symlink_from` the host side does not have widens (a missing
 * source binds that host path). A mount the user's list adds without a name cannot be patched, so
 * it stays.
 */
function classifyMounts(
  combined: LayeredConfig,
  host: LayeredConfig,
  context: ReachContext & { inheritHostAuth: string[] },
  show: (p: string) => string,
): { found: Found[]; list: MountOverride[] } {
  const asked = (userMounts: MountOverride[]) =>
    requestedMounts({
      workspace: cleanPath(context.folder),
      home: cleanPath(context.home),
      pathExists: () => true,
      mountsRoot: host.config.mountsRoot,
      userMounts,
      inheritHostAuth: context.inheritHostAuth,
      bridge: { stateDir: 'toolbox:bridge-state', runDir: 'toolbox:bridge-run' },
      proximo: { caPath: 'toolbox:proximo-ca', hosts: [] },
    });
  let hostView: RequestedMount[];
  try {
    hostView = asked(host.config.mounts);
  } catch {
    hostView = asked([]); // a user list the planner refuses: judged against the defaults
  }
  let projectView: RequestedMount[];
  try {
    projectView = asked(combined.config.mounts);
  } catch {
    return { found: [], list: combined.config.mounts }; // the planner refuses it too: nothing opens
  }
  const source = (m: RequestedMount) => BUILTIN_SOURCES[m.source] ?? show(m.source);
  const at = (m: RequestedMount) => `${source(m)} at ${outsideText(m.target)}, ${m.readonly ? 'read-only' : 'read-write'}`;
  const originOf = (name: string): KeyOrigin | undefined => {
    const i = combined.config.mounts.map((m) => m.name).lastIndexOf(name);
    return combined.origins[`mounts[${i}]`] ?? combined.origins.mounts;
  };
  const byName = new Map(hostView.map((m) => [m.name, m]));
  const found: Found[] = [];
  const patches: MountOverride[] = [];
  for (const m of projectView) {
    const mine = byName.get(m.name);
    const name = outsideText(m.name);
    if (m.disabled) {
      if (mine && !mine.disabled && !mine.anonymous) patches.push({ name: m.name, disabled: true });
      continue;
    }
    let why: string | undefined;
    if (mine === undefined) why = `adds ${name}: ${at(m)}`;
    else if (mine.disabled) why = `turns ${name} back on, which your config turns off: ${at(m)}`;
    else if (m.source !== mine.source) why = `binds ${source(m)} as ${name} instead of ${source(mine)}`;
    else if (m.target !== mine.target) why = `moves ${name} to ${outsideText(m.target)} instead of ${outsideText(mine.target)}`;
    else if (!m.readonly && mine.readonly) why = `makes ${name} writable: ${at(m)}`;
    else if (m.fallback !== undefined && m.fallback !== mine.fallback) {
      // symlink_from: a missing source binds this host path instead, before create_if_missing.
      why = `lets ${name} fall back to your own ${show(m.fallback)}`;
    }
    if (why !== undefined) {
      const value = {
        name: m.name,
        source: m.source,
        target: m.target,
        readonly: m.readonly,
        createIfMissing: m.createIfMissing,
        fallback: m.fallback,
      };
      found.push({ key: 'mounts', adds: `mounts: ${why}`, origin: originOf(m.name), value });
      continue;
    }
    if (mine === undefined || mine.anonymous) continue; // an entry without a name cannot be patched
    if (m.readonly && !mine.readonly) patches.push({ name: m.name, readonly: true });
    if (m.createIfMissing !== mine.createIfMissing) patches.push({ name: m.name, createIfMissing: m.createIfMissing });
  }
  for (const mine of hostView) {
    if (!mine.disabled && !mine.anonymous && !projectView.some((m) => m.name === mine.name))
      patches.push({ name: mine.name, disabled: true });
  }
  return { found, list: found.length > 0 ? [...host.config.mounts, ...patches] : combined.config.mounts };
}

export interface GateOptions extends ReachContext {
  /** What Turn Off for This Folder turned off, applied over both sides. */
  turnedOff: FolderTurnOff;
  /** Where Show Resolved Configuration credits it. */
  turnedOffOrigin: KeyOrigin;
  /** Whether the user approved the widening with this hash for the folder. */
  approved(hash: string): boolean;
}

/**
 * The config an open uses: Turn Off for This Folder over everything, then what the project side
 * widens applied only when approved; otherwise its narrowing parts alone, with the widening
 * reported in `widening` (approved: false) for the notification and the resolved view.
 */
export function gateProjectConfig(resolved: ResolvedConfig, options: GateOptions): ResolvedConfig {
  const off = (layered: LayeredConfig) => applyTurnOffs(layered, options.turnedOff, options.turnedOffOrigin);
  const { config, origins, peerMessagingFrom } = resolved;
  const combined = off({ config, origins, peerMessagingFrom });
  const hostSide = off(resolved.hostSide);
  const reach = classifyProjectConfig(combined, hostSide, options);
  if (reach.hash === undefined) return { ...resolved, ...combined, hostSide };
  const approved = options.approved(reach.hash);
  const applied = approved ? combined : reach.narrowed;
  return { ...resolved, ...applied, hostSide, widening: { items: reach.widening, hash: reach.hash, approved } };
}
