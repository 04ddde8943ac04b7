/**
 * The mount plan, after upstream `mountplan` (defaults.go, merge.go, inherit_host_auth.go,
 * workspace.go, peer.go). Pure: host paths are checked through the `pathExists` fact and
 * directories to create are returned, never made here.
 *
 * Order of the result (stable, upstream's where upstream has one): the default table (bridge
 * mounts in upstream's place, just before docker-sock), the proximo CA, user-appended mounts,
 * then the workspace at /workspace, its host-path mirror and the peer socket volume.
 */
import { CONTAINER, HOST, NAMING } from '../contract/upstream';
import { DOCKER_ENDPOINT } from '../contract/dockerEndpoint';
import { cleanPath, validateProfileName } from './naming';
import type { BridgeMount, ObjectNames, ProximoFacts } from '../contract/types';
import type { PlannedMount } from './types';
import type { MountOverride } from '../config/model';

/** One row of upstream's default mount table (`mountplan/defaults.go`). */
export interface DefaultMount {
  name: string;
  /** Relative to the mounts root (`~/.toolbox` unless moved), or absolute. */
  source: string;
  /** Relative to /home/toolbox, or absolute. */
  target: string;
  readonly: boolean;
  createIfMissing: boolean;
  /**
   * Upstream symlinks the source to this path under the host home (`~/.ssh`, `~/.gitconfig`)
   * and skips the mount when it is missing. We bind the host path directly instead of creating
   * the symlink (no side effects here); Docker sees the same directory either way. Either way
   * the source is configuration the host's own programs read (ssh, git), so these mounts are
   * read-only by default and a `mounts:` patch that makes one writable gets a warning.
   */
  hostLink?: string;
}

const rw = (name: string, source: string, target: string): DefaultMount => ({
  name,
  source,
  target,
  readonly: false,
  createIfMissing: true,
});

/** The default mount of the host's Docker socket (upstream's name). */
export const DOCKER_SOCK_MOUNT = 'docker-sock';
/** The mount that takes its place: the container's scoped Docker endpoint (withDockerEndpoint). */
export const DOCKER_ENDPOINT_MOUNT = 'docker-endpoint';

/**
 * Default mounts upstream retired: no longer in the table, and a `mounts:` entry or `--share` token
 * naming one is ignored with a warning (filippolmt/toolbox@23a92d5ea8e13fa918e05b30068f31e9be47b56e
 * internal/mountplan/merge.go withoutLegacyRTKMounts, legacyRTKWarnings, validateShare).
 */
export const RETIRED_MOUNTS: readonly string[] = ['rtk', 'rtk-data'];
/**
 * Where the retired mounts kept their data, under the mounts root. Upstream deletes it
 * (internal/mountplan/legacy_rtk.go RemoveLegacyRTKState); the extension leaves it and says so
 * (docs/decisions/0052-newest-upstream-config.md).
 */
export const RETIRED_MOUNTS_DIR = 'rtk';

/**
 * Upstream's default mount table (its internal/mountplan), in upstream's order. Every name a
 * `mounts:` patch can address in the CLI is here, so the same patch means the same in both;
 * test/unit/parity.test.ts holds the table to upstream's
 * (filippolmt/toolbox@23a92d5ea8e13fa918e05b30068f31e9be47b56e internal/mountplan/defaults.go).
 */
export const DEFAULT_MOUNTS: readonly DefaultMount[] = [
  rw('claude', '.claude', '.claude'),
  rw('codex', '.codex', '.codex'),
  rw('pi', '.pi', '.pi'),
  rw('state', 'toolbox/state', '.toolbox-state'),
  { name: 'ssh', source: 'ssh', target: '.ssh', readonly: true, createIfMissing: false, hostLink: '.ssh' },
  // Read-only, unlike upstream (which binds it read-write so `git config` in the container edits
  // the host's file): a writable host ~/.gitconfig lets the container add a credential helper or
  // alias that the host's own git, and the bridge's `git credential`, would run as the user.
  { name: 'gitconfig', source: 'gitconfig', target: '.gitconfig', readonly: true, createIfMissing: false, hostLink: '.gitconfig' },
  rw('gh', 'gh', '.config/gh'),
  rw('glab', 'glab', '.config/glab-cli'),
  rw('gcloud', 'gcloud', '.config/gcloud'),
  rw('gws', 'gws', '.config/gws'),
  rw('atuin', 'atuin', '.local/share/atuin'),
  rw('azure', 'azure', '.azure'),
  rw('oci', 'oci', '.oci'),
  rw('sonar', 'sonar', '.sonar'),
  rw('docker', 'docker', '.docker'),
  rw('cf-auth', 'cf/auth', '.config/cloudflare'),
  rw('cf-config', 'cf/config', '.config/.cf'),
  rw('wrangler', 'wrangler', '.config/.wrangler'),
  // rtk and rtk-data are retired upstream (RETIRED_MOUNTS): no longer mounted.
  rw('kube', 'kube', '.kube'),
  rw('playwright-cache', 'playwright-cache', '.cache/ms-playwright'),
  rw('playwright-config', 'playwright-config', '.playwright'),
  { name: 'startup.d', source: 'startup.d', target: CONTAINER.startupDir, readonly: true, createIfMissing: true },
  { name: 'certs', source: 'certs', target: CONTAINER.certsDir, readonly: true, createIfMissing: true },
  rw('npm-global', 'npm-global', '.npm-global'),
  // Tool caches, one bind per tool so each can be disabled by name (upstream's tool-cache rows).
  rw('npm-cache', 'npm-cache', '.npm'),
  rw('bun', 'bun', '.bun'),
  rw('pnpm', 'pnpm', '.local/share/pnpm'),
  rw('uv', 'uv', '.local/share/uv'),
  rw('uv-cache', 'uv-cache', '.cache/uv'),
  rw('pip-cache', 'pip-cache', '.cache/pip'),
  // Android builds: Gradle's cache and the SDK (filled on demand inside the container).
  rw('gradle-cache', 'gradle-cache', '.gradle'),
  rw('android-sdk', 'android-sdk', '.android-sdk'),
  rw('go', 'go', 'go'),
  rw('go-build', 'go-build', '.cache/go-build'),
  rw('golangci-cache', 'golangci-cache', '.cache/golangci-lint'),
  rw('herdr', 'herdr/config', '.config/herdr'),
  rw('herdr-state', 'herdr/state', '.local/state/herdr'),
  // The bridge mounts (bridge, bridge-legacy, bridge-run) go here; their sources come from
  // SessionRequest.bridge, never from the mounts root.
  { name: DOCKER_SOCK_MOUNT, source: HOST.dockerSocket, target: CONTAINER.dockerSocket, readonly: false, createIfMissing: false },
];

/**
 * `inherit_host_auth`: a listed CLI binds its credential path from the host home instead of the
 * isolated copy under the mounts root, read-write, replacing the default mount that has the same
 * target (keeping its name, so `mounts:` patches still address it). Keys and paths are
 * upstream's catalog (`internal/catalog`, HostAuthMount); the host path must exist.
 *
 * Read-write as upstream's `mountplan/inherit_host_auth.go`: the CLIs refresh tokens and write
 * session state there (gh and docker rotate OAuth refresh tokens, atuin appends history), which a
 * read-only bind would fail with EROFS. The user opts in per CLI; the Workspaces view says the
 * container can change those files (ui/views/treeItems/ reachItem).
 */
export const INHERIT_HOST_AUTH: Readonly<Record<string, { hostPath: string; target: string }>> = {
  atuin: { hostPath: '.local/share/atuin', target: '.local/share/atuin' },
  azure: { hostPath: '.azure', target: '.azure' },
  claude: { hostPath: '.claude', target: '.claude' },
  codex: { hostPath: '.codex', target: '.codex' },
  docker: { hostPath: '.docker', target: '.docker' },
  gcloud: { hostPath: '.config/gcloud', target: '.config/gcloud' },
  gh: { hostPath: '.config/gh', target: '.config/gh' },
  glab: { hostPath: '.config/glab-cli', target: '.config/glab-cli' },
  oci: { hostPath: '.oci', target: '.oci' },
  pi: { hostPath: '.pi', target: '.pi' },
};

/** Container dirs the workspace mirror must never shadow (upstream reservedMirrorPrefixes). */
export const MIRROR_RESERVED = [
  CONTAINER.workspace,
  CONTAINER.home,
  '/root',
  '/bin',
  '/sbin',
  '/lib',
  '/lib32',
  '/lib64',
  '/libx32',
  '/boot',
  '/dev',
  '/etc',
  '/proc',
  '/run',
  '/sys',
  '/usr',
  '/var',
] as const;

export interface MountPlanInput {
  /** Clean absolute workspace path. */
  workspace: string;
  home: string;
  pathExists(path: string): boolean;
  mountsRoot?: string;
  profile?: string;
  share?: string[];
  userMounts: MountOverride[];
  inheritHostAuth: string[];
  peer: boolean;
  bridge?: BridgeMount;
  proximo?: ProximoFacts;
  names: ObjectNames;
  /** The scoped Docker endpoint's host directory: it takes the docker-sock mount's place (SessionRequest.dockerEndpoint). */
  dockerEndpoint?: string;
}

/** What the mounts a config asks for depend on (requestedMounts): the plan's input without the session's own. */
export type MountsAsked = Omit<MountPlanInput, 'peer' | 'names'>;

export interface MountPlan {
  mounts: PlannedMount[];
  /** Every createIfMissing host source, once, in mount order. */
  ensureDirs: string[];
  /** The mirror when one is made, else /workspace. */
  workingDir: string;
  warnings: string[];
  /** Things worth one line in the log, once (the retired rtk directory the user may delete). */
  notes: string[];
}

function join(...parts: string[]): string {
  return cleanPath(parts.join('/'));
}

function containerTarget(target: string): string {
  return target.startsWith('/') ? cleanPath(target) : join(CONTAINER.home, target);
}

/** `~`, `~/x`, absolute, or relative to the workspace (upstream: the CWD, which is the folder). */
function hostSource(raw: string, home: string, workspace: string): string {
  if (raw === '~') return cleanPath(home);
  if (raw.startsWith('~/')) return join(home, raw.slice(2));
  if (raw.startsWith('/')) return cleanPath(raw);
  return join(workspace, raw);
}

/**
 * The host directory the default sources live under: the profile's own root
 * (`~/.toolbox/profiles/<n>`, which wins over mounts_root), else mounts_root (absolute or
 * `~/sub`), else `~/.toolbox`. A bare `~` would bind credentials straight from the home and is
 * rejected.
 */
export function resolveMountsRoot(mountsRoot: string | undefined, profile: string | undefined, home: string): string {
  const defaultRoot = join(home, HOST.mountsRoot);
  if (profile !== undefined) {
    validateProfileName(profile);
    return join(defaultRoot, HOST.profilesDir, profile);
  }
  if (mountsRoot === undefined || mountsRoot === '') return defaultRoot;
  const sub = mountsRoot.startsWith('~/') ? cleanPath(mountsRoot.slice(2)) : undefined;
  if (!mountsRoot.startsWith('/') && (sub === undefined || sub === '.' || sub.startsWith('..'))) {
    throw new Error(
      `mounts_root "${mountsRoot}" is not usable: it must be an absolute path or ~/<sub> (a bare "~" would mount your whole home and defeat credential isolation). Fix mounts_root in .toolbox.yaml.`,
    );
  }
  const root = mountsRoot.startsWith('/') ? cleanPath(mountsRoot) : join(home, sub!);
  // Upstream accepts any absolute root (internal/config/config.go ValidateMountsRoot); this refuses
  // the ones that would bind the home itself, or a default source that is the home or holds it
  // (root /home for a user named docker), read-write (docs/decisions/0052-newest-upstream-config.md).
  // The config layer refuses the home with the file and line (config/schema.ts mountsRootProblem).
  const h = cleanPath(home);
  const bindsHome = (p: string) => p === h || h.startsWith(p === '/' ? '/' : `${p}/`);
  if (root === h || DEFAULT_MOUNTS.some((m) => !m.source.startsWith('/') && bindsHome(join(root, m.source)))) {
    throw new Error(
      `mounts_root "${mountsRoot}" would bind your home directory itself, so the container would mount your own credentials and keys instead of its own copies. Use a directory of its own, such as ~/.toolbox (the default). Fix mounts_root in .toolbox.yaml.`,
    );
  }
  return root;
}

/** A `--share` token keeps a mount on the host root: exact name, or `<token>-` prefix (cf → cf-auth). */
function shareCovers(tokens: string[], name: string): boolean {
  return tokens.some((t) => t === name || name.startsWith(`${t}-`));
}

/**
 * Refuses share tokens that keep no mount on the default root, so a typo cannot isolate
 * everything silently (upstream validateShare, filippolmt/toolbox@0abcf12205eff7a6fe58c1593f9c6315f543e3be
 * internal/mountplan/merge.go): only defaults under the mounts root that are not host links
 * (ssh, gitconfig) can be shared. `bridge` is one of upstream's defaults there and every profile
 * shares it anyway; here the bridge's mounts come from the request, so the token is taken as is.
 */
function validateShare(share: string[]): void {
  const shareable = DEFAULT_MOUNTS.filter((m) => !m.source.startsWith('/') && m.hostLink === undefined);
  const unknown = share
    .filter((t) => t !== NAMING.bridgeShareToken && !RETIRED_MOUNTS.includes(t) && !shareable.some((m) => shareCovers([t], m.name)))
    .sort();
  if (unknown.length > 0) {
    throw new Error(
      `Share token(s) ${unknown.join(', ')} match no shareable mount, so the profile would isolate everything. Use mount names such as ${shareable
        .slice(0, 4)
        .map((m) => m.name)
        .join(', ')}.`,
    );
  }
}

/**
 * One mount a config asks for, before the host is looked at (requestedMounts): a disabled one
 * is kept, flagged, so a comparison of two configs (plan/projectReach.ts) sees it.
 */
export interface RequestedMount extends PlannedMount {
  disabled?: boolean;
  /** Host path bound instead when the source is missing (ssh, gitconfig). */
  fallback?: string;
  /** Skip silently when missing (the hostLink defaults). */
  optional?: boolean;
  /** The host-home path (`.gitconfig`, `.ssh`) this mount shares, while its source is not patched. */
  hostConfig?: string;
  /** The extension makes the source itself before the create (the Docker endpoint's directory): not checked for existence. */
  provided?: boolean;
  /** Added by a `mounts:` entry without a name: no later entry addresses it (its `name` is only a label). */
  anonymous?: boolean;
}

function defaultEntries(input: MountsAsked): RequestedMount[] {
  const root = resolveMountsRoot(input.mountsRoot, input.profile, input.home);
  const hostRoot = join(input.home, HOST.mountsRoot);
  const share = input.profile !== undefined ? [...(input.share ?? []), NAMING.bridgeShareToken] : [];
  if (input.profile !== undefined) validateShare(input.share ?? []);
  return DEFAULT_MOUNTS.map((m): RequestedMount => {
    let source = m.source;
    if (!source.startsWith('/')) source = join(shareCovers(share, m.name) ? hostRoot : root, source);
    return {
      name: m.name,
      source,
      target: containerTarget(m.target),
      readonly: m.readonly,
      type: 'bind',
      createIfMissing: m.createIfMissing,
      ...(m.hostLink !== undefined ? { fallback: join(input.home, m.hostLink), optional: true, hostConfig: m.hostLink } : {}),
    };
  });
}

function applyInheritHostAuth(entries: RequestedMount[], keys: string[], input: MountsAsked): RequestedMount[] {
  const out = [...entries];
  for (const key of new Set(keys)) {
    const spec = INHERIT_HOST_AUTH[key];
    if (spec === undefined) {
      throw new Error(
        `inherit_host_auth lists "${key}", which has no known host credential path. Use one of: ${Object.keys(INHERIT_HOST_AUTH).join(', ')}.`,
      );
    }
    const source = join(input.home, spec.hostPath);
    if (!input.pathExists(source)) {
      throw new Error(
        `inherit_host_auth: "${key}" host path ${source} does not exist. Initialise ${key} on the host first, or remove it from inherit_host_auth.`,
      );
    }
    const target = containerTarget(spec.target);
    const idx = out.findIndex((e) => e.target === target);
    const entry: RequestedMount = {
      name: idx >= 0 ? out[idx].name : key,
      source,
      target,
      readonly: false,
      type: 'bind',
      createIfMissing: false,
    };
    if (idx >= 0) out[idx] = entry;
    else out.push(entry);
  }
  return out;
}

/**
 * Every name a `mounts:` patch can address: the defaults, the bridge's mounts, proximo's CA and
 * the `inherit_host_auth` entries (the ones present depend on the config and the host). The
 * editor's diagnostics warn about any other (config/diagnostics.ts).
 */
export function patchableMountNames(): string[] {
  const bridge = ['bridge', 'bridge-legacy', 'bridge-run'];
  return [...new Set([...DEFAULT_MOUNTS.map((m) => m.name), ...bridge, 'proximo-ca', ...Object.keys(INHERIT_HOST_AUTH)])];
}

function bridgeEntries(bridge: BridgeMount): RequestedMount[] {
  const b = (name: string, source: string, target: string, readonly: boolean): RequestedMount => ({
    name,
    source: cleanPath(source),
    target,
    readonly,
    type: 'bind',
    createIfMissing: true,
  });
  return [
    b('bridge', bridge.stateDir, CONTAINER.bridgeDir, true),
    b('bridge-legacy', bridge.stateDir, CONTAINER.bridgeLegacyDir, true),
    // rw: connect() on a socket inside a read-only mount fails with EROFS.
    b('bridge-run', bridge.runDir, CONTAINER.bridgeRunDir, false),
  ];
}

/**
 * User `mounts:` (upstream mergeMounts, filippolmt/toolbox@23a92d5ea8e13fa918e05b30068f31e9be47b56e
 * internal/mountplan/merge.go): a known name without target patches that mount (`source`,
 * `symlink_from` and the flags); a name with a target replaces the mount of that name with the
 * whole entry or is appended; an entry without a name is appended (it needs a source) and no later
 * entry can address it; `disabled` drops it. An entry naming a retired mount (rtk, rtk-data) is
 * ignored with a warning, as upstream. Unlike upstream, an explicit `readonly: false` /
 * `create_if_missing: false` in a patch is honoured (upstream's decoder cannot tell false from
 * unset, so it only flips them on). Also unlike upstream, a patch naming no default mount is
 * ignored with a warning instead of refusing the whole config: the CLI may know a default this
 * extension does not have yet (docs/decisions/0017-unknown-mount-patch-is-a-warning.md).
 */
function mergeUserMounts(base: RequestedMount[], user: MountOverride[], input: MountsAsked, warnings: string[]): RequestedMount[] {
  const out = [...base];
  const unknown: string[] = [];
  const retired = user.filter((u) => u.name !== undefined && RETIRED_MOUNTS.includes(u.name));
  if (retired.length > 0) {
    warnings.push(
      `The mounts: list in .toolbox.yaml names ${[...new Set(retired.map((u) => u.name))].sort().join(' and ')}, which the toolbox CLI no longer mounts (rtk is retired), so ${retired.length === 1 ? 'that entry is' : 'those entries are'} ignored. Remove rtk and rtk-data from mounts.`,
    );
  }
  const fallbackOf = (u: MountOverride) =>
    u.symlinkFrom === undefined ? undefined : hostSource(u.symlinkFrom, input.home, input.workspace);
  for (const u of user) {
    if (u.name !== undefined && RETIRED_MOUNTS.includes(u.name)) continue;
    const named = u.name !== undefined && u.name !== '';
    const idx = named ? out.findIndex((e) => !e.anonymous && e.name === u.name) : -1;
    if (named && u.target === undefined) {
      if (idx < 0) {
        unknown.push(u.name!);
        continue;
      }
      const e = { ...out[idx] };
      if (u.source !== undefined) {
        // Upstream keeps symlink_from on a source patch: the new source falls back to it too.
        e.source = hostSource(u.source, input.home, input.workspace);
        delete e.hostConfig;
        delete e.optional;
      }
      const fallback = fallbackOf(u);
      if (fallback !== undefined) {
        e.fallback = fallback;
        delete e.hostConfig;
        delete e.optional;
      }
      if (u.readonly !== undefined) e.readonly = u.readonly;
      if (u.createIfMissing !== undefined) e.createIfMissing = u.createIfMissing;
      if (u.disabled !== undefined) e.disabled = u.disabled;
      out[idx] = e;
      continue;
    }
    if (u.source === undefined) {
      throw new Error(
        named
          ? `mounts: "${u.name}" sets a target but no source. Add source: (the host path to bind), or drop target: to patch the default mount of that name.`
          : `mounts: an entry without a name${u.target === undefined ? '' : ` (target ${u.target})`} must have a source: the host path to bind. Add source:, or give it the name of the default mount it changes.`,
      );
    }
    if (u.target === undefined) {
      // Upstream appends it with no target and Docker refuses the create; refused here, with the fix.
      throw new Error(
        `mounts: an entry without a name (source ${u.source}) must have a target: the path in the container. Add target:, or give it the name of the default mount it changes.`,
      );
    }
    const target = containerTarget(u.target);
    const fallback = fallbackOf(u);
    const e: RequestedMount = {
      name: named ? u.name! : `(unnamed, at ${target})`,
      source: hostSource(u.source, input.home, input.workspace),
      target,
      readonly: u.readonly ?? false,
      type: 'bind',
      createIfMissing: u.createIfMissing ?? false,
      ...(fallback !== undefined ? { fallback } : {}),
      ...(named ? {} : { anonymous: true }),
      disabled: u.disabled,
    };
    if (idx >= 0) out[idx] = e;
    else out.push(e);
  }
  if (input.profile !== undefined) warnSharedUnderProfile(user, out, input, warnings);
  if (unknown.length > 0) {
    const names = [...new Set(unknown)].sort();
    warnings.push(
      `The mounts: list in .toolbox.yaml changes ${names.length === 1 ? 'a mount' : 'mounts'} named ${names.join(', ')}, but the container has no default mount by ${names.length === 1 ? 'that name' : 'those names'}, so ${names.length === 1 ? 'that entry is' : 'those entries are'} ignored. Check the spelling (defaults include claude, gh and docker-sock), or give the entry a source: and a target: to add a new mount.`,
    );
  }
  return out;
}

/**
 * Under a profile, a `mounts:` entry whose own source is under the default root (`~/.toolbox/…`)
 * stays there: the user's explicit path is kept, and said, as upstream does (its docs/mounts.md
 * "Profiles", filippolmt/toolbox@90239c323e2c04b77d7bdcd91e4d7dea80b319bc), since the profile's
 * container then shares it with the default profile's.
 */
function warnSharedUnderProfile(user: MountOverride[], merged: RequestedMount[], input: MountsAsked, warnings: string[]): void {
  const hostRoot = join(input.home, HOST.mountsRoot);
  const root = resolveMountsRoot(input.mountsRoot, input.profile, input.home);
  const named = new Set(user.filter((u) => u.source !== undefined && !u.disabled).map((u) => u.name));
  const shared = merged.filter(
    (e) => named.has(e.name) && !e.disabled && under(e.source, hostRoot) && !under(e.source, root) && e.source !== hostRoot,
  );
  for (const e of shared) {
    warnings.push(
      `Mount "${e.name}" keeps its own source ${e.source}, under ~/.toolbox and outside the profile "${input.profile}", so the profile's container shares it with the default profile's. Give it a source under ~/.toolbox/profiles/${input.profile} in .toolbox.yaml to keep it apart.`,
    );
  }
}

function under(path: string, root: string): boolean {
  return path === root || path.startsWith(`${root}/`);
}

/**
 * Keeps mounts whose host path exists or will be created; reports the ones that must exist. A
 * missing source with a fallback (`symlink_from`, ssh and gitconfig's host paths) binds the
 * fallback when it exists and is skipped when it does not, before `create_if_missing` is looked
 * at, as upstream's resolveAll/ensureSource (internal/mountplan/resolve.go): it symlinks the source
 * to the fallback, and Docker binds what the link points to, which is what the extension binds
 * (it makes no link on the host).
 */
function resolveExistence(entries: RequestedMount[], input: MountsAsked, warnings: string[]): PlannedMount[] {
  const kept: PlannedMount[] = [];
  for (const e of entries) {
    let source = e.source;
    let createIfMissing = e.createIfMissing;
    if (!e.provided && !input.pathExists(source) && (e.fallback !== undefined || !createIfMissing)) {
      if (e.fallback !== undefined) {
        if (input.pathExists(e.fallback)) {
          source = e.fallback;
          createIfMissing = false;
        } else if (e.optional) {
          continue; // ssh / gitconfig: nothing on the host to share; upstream skips these too.
        } else {
          warnings.push(
            `Mount "${e.name}" skipped: neither its host path ${source} nor its symlink_from ${e.fallback} exists. Create one of them, or change this mount in .toolbox.yaml.`,
          );
          continue;
        }
      } else if (e.target === CONTAINER.dockerSocket) {
        warnings.push(
          `The Docker socket ${source} does not exist on this host, so the container starts without Docker access (docker commands inside it will fail). Check the Docker engine, or disable the docker-sock mount in .toolbox.yaml to silence this.`,
        );
        continue;
      } else {
        warnings.push(
          `Mount "${e.name}" skipped: host path ${source} does not exist. Create it, or set create_if_missing: true for this mount in .toolbox.yaml.`,
        );
        continue;
      }
    }
    if (e.hostConfig !== undefined && !e.readonly) {
      warnings.push(
        `Mount "${e.name}" makes your host's ~/${e.hostConfig} writable from the container (readonly: false in .toolbox.yaml): anything running there can change configuration your host's own programs read, such as a git credential helper or alias that the host's git would run as you. The bridge refuses git credentials while it is writable. Remove readonly: false for "${e.name}" unless you accept that.`,
      );
    }
    kept.push({
      name: e.name,
      source,
      target: e.target,
      readonly: e.readonly,
      type: e.type,
      createIfMissing,
    });
  }
  return kept;
}

/**
 * Where the workspace is mirrored at its own host path (so `$PWD` means the same thing to the
 * host daemon under docker-outside-of-docker), or undefined when that would shadow `/`,
 * `/workspace` or a system directory of the image.
 */
export function workspaceMirror(workspace: string): string | undefined {
  if (!workspace.startsWith('/')) return undefined;
  const abs = cleanPath(workspace);
  if (abs === '/') return undefined;
  return MIRROR_RESERVED.some((r) => abs === r || abs.startsWith(`${r}/`)) ? undefined : abs;
}

/**
 * The mounts a config asks for, in plan order, before the host is looked at: the default table
 * (on `mountsRoot`), `inheritHostAuth`, the bridge's and proximo's mounts when given, then the
 * user's `mounts:` merged in. Disabled mounts are kept, flagged; a host fallback (`~/.ssh`) is
 * noted, not chosen. Throws as the planner does (an unknown `inherit_host_auth` key, a `target:`
 * without `source:`, a mounts root that holds the home).
 */
export function requestedMounts(input: MountsAsked, warnings: string[] = []): RequestedMount[] {
  const entries = applyInheritHostAuth(defaultEntries(input), input.inheritHostAuth, input);
  if (input.bridge !== undefined) {
    const at = entries.findIndex((e) => e.name === 'docker-sock');
    entries.splice(at < 0 ? entries.length : at, 0, ...bridgeEntries(input.bridge));
  }
  if (input.proximo !== undefined) {
    entries.push({
      name: 'proximo-ca',
      source: cleanPath(input.proximo.caPath),
      target: CONTAINER.proximoCa,
      readonly: true,
      type: 'bind',
      createIfMissing: false,
    });
  }
  return withDockerEndpoint(mergeUserMounts(entries, input.userMounts, input, warnings), input.dockerEndpoint);
}

/**
 * The docker-sock mount, after the user's patches, becomes the scoped Docker endpoint's directory
 * when one is given (issue 27; docs/decisions/0048): read-only at DOCKER_ENDPOINT.containerDir,
 * under its own name so that `mounts:` patches of docker-sock (disabled: true turns Docker off)
 * keep working. A disabled docker-sock stays disabled; no docker-sock entry, no endpoint.
 */
function withDockerEndpoint(entries: RequestedMount[], dir: string | undefined): RequestedMount[] {
  if (dir === undefined) return entries;
  return entries.map((e) =>
    e.name === DOCKER_SOCK_MOUNT && e.target === CONTAINER.dockerSocket
      ? {
          name: DOCKER_ENDPOINT_MOUNT,
          source: cleanPath(dir),
          target: DOCKER_ENDPOINT.containerDir,
          readonly: true,
          type: 'bind',
          createIfMissing: false,
          provided: true,
          ...(e.disabled ? { disabled: true } : {}),
        }
      : e,
  );
}

export function planMounts(input: MountPlanInput): MountPlan {
  const warnings: string[] = [];
  const entries = requestedMounts(input, warnings).filter((e) => !e.disabled);
  const mounts = resolveExistence(entries, input, warnings);

  // Session mounts: not patchable by `mounts:` (upstream appends them after the merge).
  const ws = (name: string, target: string): PlannedMount => ({
    name,
    source: input.workspace,
    target,
    readonly: false,
    type: 'bind',
    createIfMissing: false,
  });
  mounts.push(ws('workspace', CONTAINER.workspace));
  const mirror = workspaceMirror(input.workspace);
  if (mirror !== undefined) mounts.push(ws('workspace-mirror', mirror));
  if (input.peer) {
    // A named volume, not a bind: chmod on a socket fails on Docker Desktop's virtiofs binds.
    // Ignores mounts_root and profiles: one directory for every opted-in container.
    mounts.push({
      name: 'peer-sockets',
      source: input.names.socketVolume,
      target: CONTAINER.peerSocketDir,
      readonly: false,
      type: 'volume',
      createIfMissing: false,
    });
  }

  const ensureDirs = [...new Set(mounts.filter((m) => m.createIfMissing && m.type === 'bind').map((m) => m.source))];
  return { mounts, ensureDirs, workingDir: mirror ?? CONTAINER.workspace, warnings, notes: retiredDataNotes(input) };
}

/**
 * The retired rtk mounts' data under the mounts root, when it is still there: upstream deletes it
 * on every shell start (internal/mountplan/legacy_rtk.go); the extension never deletes the user's
 * data, so it names the directory the user may delete (docs/decisions/0052-newest-upstream-config.md).
 */
export function retiredDataNotes(input: Pick<MountsAsked, 'mountsRoot' | 'profile' | 'home' | 'pathExists'>): string[] {
  let root: string;
  try {
    root = resolveMountsRoot(input.mountsRoot, input.profile, input.home);
  } catch {
    return [];
  }
  const dir = join(root, RETIRED_MOUNTS_DIR);
  if (!input.pathExists(dir)) return [];
  return [
    `${dir} holds the data of the retired rtk mounts, which are no longer mounted into the container. Toolbox leaves it in place; delete it yourself if you no longer need it (the toolbox CLI deletes it).`,
  ];
}

/**
 * Refuses a workspace path Docker's bind format cannot carry, with upstream's reason
 * (`workspace.Validate`): `:` separates the fields of a bind, so `/a:b/proj` would bind `/a` at
 * `b/proj`.
 */
export function validateWorkspaceBindPath(workspace: string): void {
  if (workspace.includes(':')) {
    throw new Error(
      `The folder path "${workspace}" contains ":", which Docker's bind-mount format uses as a separator, so the folder cannot be mounted. Rename the folder, or open one whose path has no ":".`,
    );
  }
}

/**
 * Docker `HostConfig.Binds` strings: `src:dst` or `src:dst:ro`, in plan order. A `:` in a path
 * would be read as a field separator and bind something else, so such a mount is refused here
 * whatever its origin (the workspace is refused earlier, with upstream's words).
 */
export function flattenBinds(mounts: PlannedMount[]): string[] {
  return mounts.map((m) => {
    if (m.source.includes(':') || m.target.includes(':')) {
      throw new Error(
        `Mount "${m.name}" binds ${m.source} at ${m.target}, and a ":" in either path would be read as Docker's bind-mount separator. Rename the path, or change this mount in .toolbox.yaml.`,
      );
    }
    return `${m.source}:${m.target}${m.readonly ? ':ro' : ''}`;
  });
}

/**
 * The host directories behind the container's Claude and Codex homes, for the bridge's
 * `proximo skill` (docs/decisions/0008-proximo-through-the-bridge.md): the parent of the `.claude` source (upstream resolves
 * the Claude dir as $HOME/.claude) and the `.codex` source itself. Undefined when not mounted.
 */
export function agentHomes(mounts: PlannedMount[]): { agentHome?: string; codexHome?: string } {
  const claude = mounts.find((m) => m.type === 'bind' && m.target === containerTarget('.claude'));
  const codex = mounts.find((m) => m.type === 'bind' && m.target === containerTarget('.codex'));
  return {
    agentHome: claude && join(claude.source, '..'),
    codexHome: codex?.source,
  };
}

/** Container paths whose host sources /edit never opens: the bridge's own state and the Docker socket. */
const NOT_EDITABLE_TARGETS: readonly string[] = [
  CONTAINER.bridgeDir,
  CONTAINER.bridgeLegacyDir,
  CONTAINER.bridgeRunDir,
  CONTAINER.dockerSocket,
];

/**
 * The host paths the bridge's /edit may open for this container: the sources of its bind mounts
 * (the workspace among them), without the bridge's own state (tokens) and the Docker socket.
 * Nothing else on the host — in particular not the rest of the mounts root, where other
 * workspaces' bridge tokens live.
 */
export function editRoots(mounts: PlannedMount[]): string[] {
  const roots = mounts.filter((m) => m.type === 'bind' && !NOT_EDITABLE_TARGETS.includes(m.target)).map((m) => m.source);
  return [...new Set(roots)];
}
