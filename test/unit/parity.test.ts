/**
 * Parity with the toolbox CLI (issue 15, "Switch between the CLI and the editor for real"): for a
 * set of configs and folders, what the extension does on an open (refuse, or the container's
 * binds, GroupAdd, SecurityOpt and Cmd) equals what upstream's code produces for the same input.
 *
 * The expected side is not the extension's code: it is upstream's, transcribed below and cited as
 * `filippolmt/toolbox@<commit> <path>` (public source). Where the extension differs on purpose,
 * the case says so and names the decision record; those are the only differences allowed.
 *
 * Everything here is pure: config texts go through the resolver, issues through the open's rule
 * (config/openIssues.ts), then the planner, with host facts from a fixed set. No file, no engine.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { parse as parseYaml } from 'yaml';
import { resolveConfig } from '../../extension/src/config/resolve';
import { issuesForOpen } from '../../extension/src/config/openIssues';
import { objectNames } from '../../extension/src/contract/objects';
import { goarch, goos, planSession, withImageDigest } from '../../extension/src/plan/session';
import { EXTENSION_VERSION } from '../../extension/src/contract/manifest';
import { HOST } from '../../extension/src/contract/upstream';
import type { HostFacts } from '../../extension/src/contract/types';
import { setShellPath } from '../../extension/src/config/edit';
import { namedShellFolder, shellKeyIn, type PathKind } from '../../extension/src/plan/namedShell';
import { profileProblem } from '../../extension/src/plan/profiles';

const HOME = '/home/u';
const names = objectNames();
/** The extension's per-workspace bridge dirs (docs/decisions/0002-bridge-per-workspace.md). */
const BRIDGE = { stateDir: `${HOME}/.toolbox/toolbox/vscode/ws`, runDir: '/run/user/1000/toolbox/ws' };

// ---------------------------------------------------------------------------------------------
// Upstream's default mount table.
//
// Rows, sources, modes, targets and order: filippolmt/toolbox@23a92d5ea8e13fa918e05b30068f31e9be47b56e
//   internal/mountplan/defaults.go (38 rows before the bridge's three and docker-sock; rtk and
//   rtk-data retired, pi, the tool caches, gradle-cache and android-sdk in place).
// ---------------------------------------------------------------------------------------------
interface UpstreamMount {
  name: string;
  source: string;
  target: string;
  ro: boolean;
  create: boolean;
  symlinkFrom?: string;
}
const T = (name: string, source: string, target: string, ro = false, create = true): UpstreamMount => ({
  name,
  source: `~/.toolbox/${source}`,
  target: `/home/toolbox/${target}`,
  ro,
  create,
});
const UPSTREAM_DEFAULTS: readonly UpstreamMount[] = [
  T('claude', '.claude', '.claude'),
  T('codex', '.codex', '.codex'),
  T('pi', '.pi', '.pi'),
  T('state', 'toolbox/state', '.toolbox-state'),
  { name: 'ssh', source: '~/.toolbox/ssh', target: '/home/toolbox/.ssh', ro: true, create: false, symlinkFrom: '~/.ssh' },
  // Upstream binds it read-write; the extension read-only (docs/decisions/0011-git-credentials-with-consent.md).
  {
    name: 'gitconfig',
    source: '~/.toolbox/gitconfig',
    target: '/home/toolbox/.gitconfig',
    ro: false,
    create: false,
    symlinkFrom: '~/.gitconfig',
  },
  T('gh', 'gh', '.config/gh'),
  T('glab', 'glab', '.config/glab-cli'),
  T('gcloud', 'gcloud', '.config/gcloud'),
  T('gws', 'gws', '.config/gws'),
  T('atuin', 'atuin', '.local/share/atuin'),
  T('azure', 'azure', '.azure'),
  T('oci', 'oci', '.oci'),
  T('sonar', 'sonar', '.sonar'),
  T('docker', 'docker', '.docker'),
  T('cf-auth', 'cf/auth', '.config/cloudflare'),
  T('cf-config', 'cf/config', '.config/.cf'),
  T('wrangler', 'wrangler', '.config/.wrangler'),
  T('kube', 'kube', '.kube'),
  T('playwright-cache', 'playwright-cache', '.cache/ms-playwright'),
  T('playwright-config', 'playwright-config', '.playwright'),
  T('startup.d', 'startup.d', '.toolbox-startup.d', true),
  { ...T('certs', 'certs', ''), target: '/etc/toolbox/certs', ro: true },
  T('npm-global', 'npm-global', '.npm-global'),
  T('npm-cache', 'npm-cache', '.npm'),
  T('bun', 'bun', '.bun'),
  T('pnpm', 'pnpm', '.local/share/pnpm'),
  T('uv', 'uv', '.local/share/uv'),
  T('uv-cache', 'uv-cache', '.cache/uv'),
  T('pip-cache', 'pip-cache', '.cache/pip'),
  T('gradle-cache', 'gradle-cache', '.gradle'),
  T('android-sdk', 'android-sdk', '.android-sdk'),
  T('go', 'go', 'go'),
  T('go-build', 'go-build', '.cache/go-build'),
  T('golangci-cache', 'golangci-cache', '.cache/golangci-lint'),
  T('herdr', 'herdr/config', '.config/herdr'),
  T('herdr-state', 'herdr/state', '.local/state/herdr'),
  // Upstream's sources are ~/.toolbox/toolbox/bridge{,/run}; the extension's are per workspace
  // (docs/decisions/0002-bridge-per-workspace.md), so the oracle takes them from the request.
  { name: 'bridge', source: BRIDGE.stateDir, target: '/home/toolbox/.toolbox/bridge', ro: true, create: true },
  { name: 'bridge-legacy', source: BRIDGE.stateDir, target: '/home/toolbox/.toolbox/browser', ro: true, create: true },
  { name: 'bridge-run', source: BRIDGE.runDir, target: '/home/toolbox/.toolbox/bridge/run', ro: false, create: true },
  { name: 'docker-sock', source: '/var/run/docker.sock', target: '/var/run/docker.sock', ro: false, create: false },
];
/** Retired upstream: gone from the table, and a `mounts:` entry naming one is dropped before the merge. */
const UPSTREAM_RETIRED = ['rtk', 'rtk-data'];

/** One `mounts:` entry as a user writes it (upstream's config.Mount fields, by their YAML keys). */
interface Patch {
  name?: string;
  source?: string;
  target?: string;
  readonly?: boolean;
  create_if_missing?: boolean;
  symlink_from?: string;
  disabled?: boolean;
}

/**
 * Upstream's bind set for a workspace, in its order. Transcribed from
 * filippolmt/toolbox@23a92d5ea8e13fa918e05b30068f31e9be47b56e internal/mountplan/merge.go
 * (applyMountsRoot; withoutLegacyRTKMounts; mergeMounts: a named patch overlays source and
 * symlink_from and only turns flags on, a name with a target replaces the whole entry or is
 * appended, an entry without a name is appended (a source is required), disabled entries drop out,
 * an unknown patch name refuses) and plan.go at the same commit (Merge, then resolve, then
 * `<ws>:/workspace` and the host-path mirror); the resolve is
 * @21cea3e3887ebe95453793025b1f1d484414ef2d internal/mountplan/resolve.go (resolveAll /
 * ensureSource: `~` expands to HOME, a relative source is taken from the working directory (the
 * folder); a missing source with symlink_from is linked to it when that exists and skipped when it
 * does not, before create_if_missing; else created when create_if_missing, else skipped). Binds as
 * `src:target[:ro]` (upstream writes `:rw` too; Docker reads both alike). mounts_root as
 * @7ebd141d7d563c78ccfa7add7759be5df566adef internal/config/config.go ValidateMountsRoot: a bare
 * `~` and a relative path are refused, anything else is used.
 */
function upstreamBinds(o: {
  workspace: string;
  mountsRoot?: string;
  profile?: { name: string; share: string[] };
  mounts?: Patch[];
  exists: Set<string>;
}): string[] | Error {
  const expand = (p: string) => {
    const e = p === '~' ? HOME : p.startsWith('~/') ? `${HOME}/${p.slice(2)}` : p;
    return e.startsWith('/') ? e : `${o.workspace}/${e}`;
  };
  if (o.mountsRoot === '~' || (o.mountsRoot && !o.mountsRoot.startsWith('/') && !o.mountsRoot.startsWith('~/'))) {
    return new Error(`mounts_root ${JSON.stringify(o.mountsRoot)} is refused`);
  }
  let base = UPSTREAM_DEFAULTS.map((m) => ({ ...m }));
  // A profile: its own root, which wins over mounts_root, and the share skip-set (profileRoot below).
  const { root: profileRoot, shared, refused } = upstreamProfile(o.profile);
  if (refused) return refused;
  const mountsRoot = profileRoot ?? o.mountsRoot;
  if (mountsRoot) {
    const root = mountsRoot.replace(/\/$/, '');
    base = base.map((m) =>
      m.source.startsWith('~/.toolbox/') && !shareCovers(shared, m.name)
        ? { ...m, source: `${root}/${m.source.slice('~/.toolbox/'.length)}` }
        : m,
    );
  }
  const out: Array<UpstreamMount & { disabled?: boolean }> = base;
  const unknown: string[] = [];
  for (const u of (o.mounts ?? []).filter((m) => !UPSTREAM_RETIRED.includes(m.name ?? ''))) {
    const idx = u.name ? out.findIndex((m) => m.name === u.name) : -1;
    if (u.name && u.target === undefined) {
      if (idx < 0) {
        unknown.push(u.name);
        continue;
      }
      const m = out[idx]!;
      out[idx] = {
        ...m,
        ...(u.source ? { source: u.source } : {}),
        ...(u.symlink_from ? { symlinkFrom: u.symlink_from } : {}),
        ro: m.ro || !!u.readonly,
        create: m.create || !!u.create_if_missing,
        disabled: m.disabled || !!u.disabled,
      };
      continue;
    }
    if (!u.source) return new Error(`mounts: entry ${JSON.stringify(u)} has no source`);
    const e = {
      name: u.name ?? '',
      source: u.source,
      target: u.target ?? '',
      ro: !!u.readonly,
      create: !!u.create_if_missing,
      ...(u.symlink_from ? { symlinkFrom: u.symlink_from } : {}),
      disabled: !!u.disabled,
    };
    if (idx >= 0) out[idx] = e;
    else out.push(e);
  }
  if (unknown.length > 0) return new Error(`mounts: patch references unknown mount name(s): ${unknown.sort().join(', ')}`);
  const binds: string[] = [];
  for (const m of out.filter((x) => !x.disabled)) {
    let source = expand(m.source);
    // Upstream symlinks the missing source to symlink_from and binds the link; Docker resolves it,
    // so the container sees symlink_from itself, which is what the extension binds.
    if (!o.exists.has(source)) {
      if (m.symlinkFrom !== undefined) {
        const link = expand(m.symlinkFrom);
        if (!o.exists.has(link)) continue;
        source = link;
      } else if (!m.create) continue;
    }
    binds.push(`${source}:${m.target}${m.ro ? ':ro' : ''}`);
  }
  // Decided differences, applied to upstream's result rather than hidden in the table:
  // ~/.gitconfig is bound read-only (docs/decisions/0011-git-credentials-with-consent.md).
  const gitconfig = binds.indexOf(`${HOME}/.gitconfig:/home/toolbox/.gitconfig`);
  if (gitconfig >= 0) binds[gitconfig] += ':ro';
  // The folders below are not under a reserved prefix, so upstream mirrors them at their own path.
  binds.push(`${o.workspace}:/workspace`, `${o.workspace}:${o.workspace}`);
  return binds;
}

/**
 * Upstream's profile, transcribed from filippolmt/toolbox@2818a99f09e808fc036fd3abae9d1928665d617a
 * internal/mountplan/profile.go (Root: `~/.toolbox/profiles/<name>`; EffectiveShare: the --share
 * tokens plus `bridge`) and cmd/shell.go resolveShellProfile (refuses `.`, `..`, a `/` or `\`),
 * @c57367ddd99661ecf15224466c97fa558eded1ac internal/mountplan/plan.go (Merge: the profile's root
 * wins over mounts_root; validateShare before applyMountsRoot) and
 * @0abcf12205eff7a6fe58c1593f9c6315f543e3be internal/mountplan/merge.go (applyMountsRoot leaves a
 * mount the share set covers on ~/.toolbox; shareCovers: the token, or `<token>-` as a prefix;
 * validateShare: only ~/.toolbox sources without SymlinkFrom are shareable, an unknown token is
 * refused). Upstream's bridge rows live under ~/.toolbox/toolbox/bridge, so `bridge` is shareable
 * there (share_test.go TestMergeShareBridgeKeepsInfraOnHostRoot); this table's bridge rows carry the
 * extension's per-workspace sources instead (decision 0002), so the oracle counts them as upstream's.
 */
function upstreamProfile(p: { name: string; share: string[] } | undefined): { root?: string; shared: string[]; refused?: Error } {
  if (p === undefined) return { shared: [] };
  if (p.name === '.' || p.name === '..' || /[/\\]/.test(p.name)) {
    return {
      shared: [],
      refused: new Error(`--profile ${JSON.stringify(p.name)}: name must not be '.', '..', or contain a path separator`),
    };
  }
  const shared = [...p.share, 'bridge'];
  const shareable = UPSTREAM_DEFAULTS.filter((m) => (m.source.startsWith('~/.toolbox/') || m.name.startsWith('bridge')) && !m.symlinkFrom);
  const unknown = shared.filter((t) => !shareable.some((m) => shareCovers([t], m.name))).sort();
  if (unknown.length > 0) {
    return { shared, refused: new Error(`share references unknown or non-shareable mount name(s): ${unknown.join(', ')}`) };
  }
  return { root: `~/.toolbox/profiles/${p.name}`, shared };
}

function shareCovers(shared: string[], name: string): boolean {
  return shared.some((t) => t === name || name.startsWith(`${t}-`));
}

// ---------------------------------------------------------------------------------------------
// The extension's side: the same inputs through resolve → the open's rule → the planner.
// ---------------------------------------------------------------------------------------------
interface Input {
  workspace?: string;
  user?: string;
  project?: string;
  env?: Record<string, string>;
  /** Host paths that exist besides the created-if-missing ones. */
  exists?: string[];
  socketGid?: number;
  /** This run's profile and share tokens (Open Toolbox Shell with Profile…, toolbox.profileForFolder). */
  profile?: string;
  share?: string[];
}
type Outcome =
  | { opened: true; binds: string[]; groupAdd?: string[]; securityOpt: string[]; cmd: string[]; warnings: string[] }
  | { opened: false; reason: string };

const DEFAULT_EXISTS = [`${HOME}/.ssh`, `${HOME}/.gitconfig`, '/var/run/docker.sock'];

function extensionOpen(input: Input): Outcome {
  const workspace = input.workspace ?? `${HOME}/proj`;
  const exists = new Set(input.exists ?? DEFAULT_EXISTS);
  const host: HostFacts = {
    uid: 1000,
    gid: 1000,
    home: HOME,
    platform: 'linux',
    pathExists: (p) => exists.has(p),
    ...(input.socketGid !== undefined ? { dockerSocketGid: input.socketGid } : {}),
  };
  try {
    const resolved = resolveConfig({
      ...(input.user !== undefined ? { userFile: { path: `${HOME}/.toolbox.yaml`, text: input.user } } : {}),
      ...(input.project !== undefined ? { projectFile: { path: `${workspace}/.toolbox.yaml`, text: input.project } } : {}),
      env: input.env ?? {},
      settings: {},
      trusted: true,
      home: HOME,
    });
    const { warnings } = issuesForOpen(resolved.issues, HOME);
    const { plan, warnings: planWarnings } = planSession(
      {
        workspace,
        config: resolved.config,
        peer: false,
        bridge: BRIDGE,
        image: 'toolbox-runtime:test',
        names,
        ...(input.profile !== undefined ? { profile: input.profile, share: input.share ?? [] } : {}),
      },
      host,
    );
    return {
      opened: true,
      binds: plan.create.HostConfig.Binds,
      ...(plan.create.HostConfig.GroupAdd ? { groupAdd: plan.create.HostConfig.GroupAdd } : {}),
      securityOpt: plan.create.HostConfig.SecurityOpt,
      cmd: plan.create.Cmd,
      warnings: [...warnings, ...planWarnings],
    };
  } catch (err) {
    return { opened: false, reason: (err as Error).message };
  }
}

const sorted = (a: string[]) => [...a].sort();
function assertOpenedWith(outcome: Outcome, binds: string[] | Error, label: string): Extract<Outcome, { opened: true }> {
  assert.ok(!(binds instanceof Error), `${label}: upstream refuses: ${String(binds)}`);
  assert.ok(outcome.opened, `${label}: the extension refused: ${outcome.opened ? '' : outcome.reason}`);
  assert.deepEqual(sorted(outcome.binds), sorted(binds), label);
  return outcome;
}

/** A `.toolbox.yaml` with one `mounts:` entry, written as a user would. */
const mountsYaml = (...entries: Patch[]) =>
  'mounts:\n' +
  entries
    .map(
      (e) =>
        `  - {${Object.entries(e)
          .map(([k, v]) => `${k}: ${typeof v === 'string' ? JSON.stringify(v) : String(v)}`)
          .join(', ')}}`,
    )
    .join('\n') +
  '\n';

describe('parity with the toolbox CLI: mounts', () => {
  const exists = new Set(DEFAULT_EXISTS);

  // filippolmt/toolbox@0f3409a67973e5cb5dd431f8183f56187b8ef2d7 internal/catalog/catalog.go: the
  // keys with a HostAuthMount, and their host and container paths.
  // The mode: filippolmt/toolbox@690a7eac56b4480a76f011992f0f0ee2c5d9ff86 internal/mountplan/inherit_host_auth.go
  // (hostAuthMountFor sets no ReadOnly: "Mount is read-write because most CLIs refresh tokens"),
  // pinned by @2fc646d2c7da429ba399202c60f77b9e960055e9 inherit_host_auth_test.go ("ReadOnly = true, want false").
  const HOST_AUTH: Record<string, [string, string]> = {
    atuin: ['.local/share/atuin', '.local/share/atuin'],
    azure: ['.azure', '.azure'],
    claude: ['.claude', '.claude'],
    codex: ['.codex', '.codex'],
    docker: ['.docker', '.docker'],
    gcloud: ['.config/gcloud', '.config/gcloud'],
    gh: ['.config/gh', '.config/gh'],
    glab: ['.config/glab-cli', '.config/glab-cli'],
    oci: ['.oci', '.oci'],
    pi: ['.pi', '.pi'],
  };
  for (const [key, [hostPath, target]] of Object.entries(HOST_AUTH)) {
    it(`inherit_host_auth: [${key}] binds ~/${hostPath} at /home/toolbox/${target} read-write instead of the isolated copy`, () => {
      const outcome = extensionOpen({ project: `inherit_host_auth: [${key}]\n`, exists: [...DEFAULT_EXISTS, `${HOME}/${hostPath}`] });
      assert.ok(outcome.opened, key);
      const at = outcome.binds.filter((b) => b.split(':')[1] === `/home/toolbox/${target}`);
      assert.deepEqual(at, [`${HOME}/${hostPath}:/home/toolbox/${target}`], key);
    });
  }

  it("plans upstream's default bind set for a folder with no config", () => {
    assertOpenedWith(extensionOpen({}), upstreamBinds({ workspace: `${HOME}/proj`, exists }), 'defaults');
  });

  for (const m of UPSTREAM_DEFAULTS) {
    it(`a patch disabling ${m.name} opens, without that mount, as in the CLI`, () => {
      const patch = { name: m.name, disabled: true };
      const outcome = assertOpenedWith(
        extensionOpen({ project: mountsYaml(patch) }),
        upstreamBinds({ workspace: `${HOME}/proj`, mounts: [patch], exists }),
        m.name,
      );
      assert.ok(!outcome.binds.some((b) => b.split(':')[1] === m.target), m.name);
    });
  }

  for (const m of UPSTREAM_DEFAULTS.filter((x) => x.create && !x.name.startsWith('bridge'))) {
    it(`a patch moving ${m.name} to another source keeps its target and mode, as in the CLI`, () => {
      const patch = { name: m.name, source: `/srv/alt/${m.name}` };
      assertOpenedWith(
        extensionOpen({ project: mountsYaml(patch) }),
        upstreamBinds({ workspace: `${HOME}/proj`, mounts: [patch], exists }),
        m.name,
      );
    });
  }

  it('mounts_root moves every ~/.toolbox default and nothing else, as in the CLI', () => {
    assertOpenedWith(
      extensionOpen({ user: 'mounts_root: /data/tb\n' }),
      upstreamBinds({ workspace: `${HOME}/proj`, mountsRoot: '/data/tb', exists }),
      'mounts_root',
    );
  });

  it('appends a new mount and replaces a default by name with a target, as in the CLI', () => {
    const mounts = [
      { name: 'data', source: '/srv/data', target: '/data', readonly: true },
      { name: 'kube', source: '/srv/kube', target: '/home/toolbox/.kube' },
    ];
    assertOpenedWith(
      extensionOpen({ project: mountsYaml(...mounts), exists: [...DEFAULT_EXISTS, '/srv/data', '/srv/kube'] }),
      upstreamBinds({ workspace: `${HOME}/proj`, mounts, exists: new Set([...exists, '/srv/data', '/srv/kube']) }),
      'append and replace',
    );
  });

  it('an unknown name in a patch: upstream refuses, the extension opens without it and warns (decision 0017)', () => {
    const patch = { name: 'nope', disabled: true };
    const upstream = upstreamBinds({ workspace: `${HOME}/proj`, mounts: [patch], exists });
    assert.ok(upstream instanceof Error && /unknown mount name\(s\): nope/.test(upstream.message));
    const outcome = extensionOpen({ project: mountsYaml(patch, { name: 'kube', disabled: true }) });
    assertOpenedWith(outcome, upstreamBinds({ workspace: `${HOME}/proj`, mounts: [{ name: 'kube', disabled: true }], exists }), 'unknown');
    assert.ok(outcome.opened && outcome.warnings.some((w) => /named nope, but the container has no default mount by that name/.test(w)));
  });

  it("binds the defaults in upstream's order", () => {
    const outcome = extensionOpen({});
    assert.ok(outcome.opened);
    assert.deepEqual(outcome.binds, upstreamBinds({ workspace: `${HOME}/proj`, exists }));
  });

  // filippolmt/toolbox@23a92d5ea8e13fa918e05b30068f31e9be47b56e internal/mountplan/merge.go withoutLegacyRTKMounts / legacyRTKWarnings: any entry named rtk or rtk-data
  // (patch, replace or append) is dropped before the merge, with a warning; the directory upstream
  // then deletes (legacy_rtk.go) is left in place (docs/decisions/0052-newest-upstream-config.md).
  for (const [label, entry] of [
    ['disabled', { name: 'rtk', disabled: true }],
    ['a new source', { name: 'rtk-data', source: '/srv/rtk' }],
    ['a replacement with a target', { name: 'rtk', source: '/srv/rtk', target: '/home/toolbox/.config/rtk' }],
  ] as Array<[string, Patch]>) {
    it(`a mounts: entry naming the retired ${entry.name} (${label}) is ignored with a warning, as in the CLI`, () => {
      const mounts = [entry, { name: 'kube', disabled: true }];
      const outcome = extensionOpen({ project: mountsYaml(...mounts), exists: [...DEFAULT_EXISTS, '/srv/rtk'] });
      assertOpenedWith(outcome, upstreamBinds({ workspace: `${HOME}/proj`, mounts, exists: new Set([...exists, '/srv/rtk']) }), label);
      assert.ok(outcome.opened && !outcome.binds.some((b) => b.includes('rtk')), label);
      assert.ok(
        outcome.opened && outcome.warnings.some((w) => /no longer mounts \(rtk is retired\).*Remove rtk and rtk-data from mounts/.test(w)),
      );
    });
  }

  it('an entry without a name is appended, as in the CLI (no later entry can address it)', () => {
    const mounts: Patch[] = [
      { source: '/srv/data', target: '/data', readonly: true },
      { source: 'cache', target: '/home/toolbox/.cache/extra', create_if_missing: true },
      { name: '', source: '/srv/more', target: '/more' },
    ];
    const exist = ['/srv/data', '/srv/more'];
    const outcome = extensionOpen({ project: mountsYaml(...mounts), exists: [...DEFAULT_EXISTS, ...exist] });
    const upstream = upstreamBinds({ workspace: `${HOME}/proj`, mounts, exists: new Set([...exists, ...exist]) });
    assertOpenedWith(outcome, upstream, 'anonymous');
    assert.ok(
      outcome.opened &&
        outcome.binds.includes('/srv/data:/data:ro') &&
        outcome.binds.includes(`${HOME}/proj/cache:/home/toolbox/.cache/extra`),
    );
  });

  it('an entry without a name and without a source: both refuse', () => {
    const mounts: Patch[] = [{ target: '/data' }];
    assert.ok(upstreamBinds({ workspace: `${HOME}/proj`, mounts, exists }) instanceof Error);
    const outcome = extensionOpen({ project: mountsYaml(...mounts) });
    assert.ok(!outcome.opened);
    assert.match(outcome.reason, /an entry without a name \(target \/data\) must have a source/);
  });

  // symlink_from, filippolmt/toolbox@7ebd141d7d563c78ccfa7add7759be5df566adef internal/config/config.go Mount.SymlinkFrom; patched by merge.go
  // applyMountPatch and honoured by resolve.go ensureSource before create_if_missing.
  const symlinkCases: Array<[string, Patch[], string[]]> = [
    ['a patch: a missing source binds symlink_from instead', [{ name: 'kube', symlink_from: '~/.kube' }], [`${HOME}/.kube`]],
    [
      'a patch: symlink_from missing too, the mount is skipped even with create_if_missing',
      [{ name: 'kube', symlink_from: '~/.kube' }],
      [],
    ],
    [
      'a patch: an existing source wins over symlink_from',
      [{ name: 'kube', source: '/srv/kube', symlink_from: '~/.kube' }],
      ['/srv/kube', `${HOME}/.kube`],
    ],
    ['a patched source keeps the default symlink_from (ssh)', [{ name: 'ssh', source: '/srv/keys' }], [`${HOME}/.ssh`]],
    [
      'a new mount with symlink_from',
      [{ name: 'aws', source: '~/.toolbox/aws', target: '/home/toolbox/.aws', readonly: true, symlink_from: '~/.aws' }],
      [`${HOME}/.aws`],
    ],
    ['a new mount without a name, with symlink_from', [{ source: '/srv/none', target: '/x', symlink_from: '/srv/real' }], ['/srv/real']],
  ];
  for (const [label, mounts, present] of symlinkCases) {
    it(`symlink_from, ${label}, as in the CLI`, () => {
      const outcome = extensionOpen({ project: mountsYaml(...mounts), exists: [...DEFAULT_EXISTS, ...present] });
      assertOpenedWith(outcome, upstreamBinds({ workspace: `${HOME}/proj`, mounts, exists: new Set([...exists, ...present]) }), label);
    });
  }

  // filippolmt/toolbox@7ebd141d7d563c78ccfa7add7759be5df566adef internal/config/config.go ValidateMountsRoot: only a bare ~ and a relative path are refused.
  for (const root of ['/', '/home', '/data/tb/', '~/tbx']) {
    it(`mounts_root ${root} opens with every ~/.toolbox default moved there, as in the CLI`, () => {
      assertOpenedWith(
        extensionOpen({ user: `mounts_root: ${root}\n` }),
        upstreamBinds({ workspace: `${HOME}/proj`, mountsRoot: root, exists }),
        root,
      );
    });
  }
  for (const root of [HOME, `${HOME}/`, '~/.']) {
    it(`mounts_root ${root}, the home itself: upstream opens, the extension refuses (decision 0052)`, () => {
      assert.ok(!(upstreamBinds({ workspace: `${HOME}/proj`, mountsRoot: root, exists }) instanceof Error));
      const outcome = extensionOpen({ user: `mounts_root: ${root}\n` });
      assert.ok(!outcome.opened);
      assert.match(outcome.reason, /is your home directory, so the container would mount your own agent homes/);
    });
  }
  it('mounts_root "~" or relative: both refuse', () => {
    for (const root of ['"~"', 'state']) {
      assert.ok(
        upstreamBinds({ workspace: `${HOME}/proj`, mountsRoot: JSON.parse(root.startsWith('"') ? root : `"${root}"`), exists }) instanceof
          Error,
      );
      assert.ok(!extensionOpen({ user: `mounts_root: ${root}\n` }).opened, root);
    }
  });
});

// Profiles: upstream's side is upstreamProfile above (profile.go, merge.go, plan.go, cmd/shell.go).
describe('parity with the toolbox CLI: profiles (--profile, --share)', () => {
  const exists = new Set(DEFAULT_EXISTS);
  const ws = `${HOME}/proj`;
  const cases: Array<{ what: string; profile: string; share: string[]; user?: string }> = [
    { what: '--profile work moves every ~/.toolbox default into ~/.toolbox/profiles/work', profile: 'work', share: [] },
    { what: '--share gh,cf keeps gh and both cf mounts on ~/.toolbox', profile: 'work', share: ['gh', 'cf'] },
    { what: '--share cf covers cf-auth and cf-config (a token is also a prefix)', profile: 'personal', share: ['cf'] },
    { what: '--share claude,codex keeps the agents shared, the CLIs apart', profile: 'client-a', share: ['claude', 'codex'] },
    { what: 'the profile wins over mounts_root in ~/.toolbox.yaml', profile: 'work', share: [], user: 'mounts_root: /data/tb\n' },
  ];
  for (const c of cases) {
    it(c.what, () => {
      const outcome = assertOpenedWith(
        extensionOpen({ profile: c.profile, share: c.share, ...(c.user ? { user: c.user } : {}) }),
        upstreamBinds({ workspace: ws, profile: { name: c.profile, share: c.share }, exists }),
        c.what,
      );
      // ~/.ssh and ~/.gitconfig stay the host's under every profile (SymlinkFrom is not retargeted).
      assert.ok(outcome.binds.includes(`${HOME}/.ssh:/home/toolbox/.ssh:ro`), c.what);
      assert.ok(outcome.binds.includes(`${HOME}/.gitconfig:/home/toolbox/.gitconfig:ro`), c.what);
    });
  }

  it('a profile and the default profile of one folder bind different credential roots', () => {
    const work = extensionOpen({ profile: 'work', share: [] });
    const plain = extensionOpen({});
    assert.ok(work.opened && plain.opened);
    const claude = (binds: string[]) => binds.find((b) => b.endsWith(':/home/toolbox/.claude'));
    assert.equal(claude(work.binds), `${HOME}/.toolbox/profiles/work/.claude:/home/toolbox/.claude`);
    assert.equal(claude(plain.binds), `${HOME}/.toolbox/.claude:/home/toolbox/.claude`);
  });

  for (const share of [['ghh'], ['ssh'], ['gitconfig'], ['docker-sock']]) {
    it(`--share ${share.join(',')} is refused by both`, () => {
      assert.ok(upstreamBinds({ workspace: ws, profile: { name: 'work', share }, exists }) instanceof Error);
      const outcome = extensionOpen({ profile: 'work', share });
      assert.ok(!outcome.opened);
      assert.match(outcome.reason, /match no shareable mount/);
    });
  }

  for (const name of ['.', '..', 'a/b', '../escape', 'a\\b']) {
    it(`--profile ${JSON.stringify(name)} is refused by both`, () => {
      assert.ok(upstreamBinds({ workspace: ws, profile: { name, share: [] }, exists }) instanceof Error);
      const outcome = extensionOpen({ profile: name });
      assert.ok(!outcome.opened);
      assert.match(outcome.reason, /Invalid profile name/);
    });
  }

  it('--share without --profile is refused by both (the CLI: "--share requires --profile")', () => {
    assert.match(profileProblem({ share: ['gh'] }, 'the setting') ?? '', /share tokens \(gh\) but no profile/);
    assert.equal(profileProblem({ share: [] }, 'the setting'), undefined);
  });
});

// filippolmt/toolbox@4ed29fbfc3f55ec53b2adb640ed62f3afef173a9 internal/workspace/workspace.go
// Validate: a ':' anywhere in the clean absolute path is refused ("Docker bind-mount format uses
// ':' as a separator"); anything else is a usable bind source.
describe('parity with the toolbox CLI: folder paths', () => {
  for (const ws of ['/home/u/a:b', '/home/u/proj:ro', '/srv/x:/y', '/home/u/c:']) {
    it(`refuses ${ws}, naming the ":"`, () => {
      const outcome = extensionOpen({ workspace: ws });
      assert.ok(!outcome.opened, ws);
      assert.match(outcome.reason, /contains ":", which Docker's bind-mount format uses as a separator/);
    });
  }

  for (const ws of ['/home/u/my proj', '/home/u/ünïcødé', '/srv/x-1.2', '/home/u/a,b=c']) {
    it(`opens ${JSON.stringify(ws)} with the folder at /workspace and its own path`, () => {
      const outcome = extensionOpen({ workspace: ws });
      assert.ok(outcome.opened, ws);
      assert.ok(outcome.binds.includes(`${ws}:/workspace`), ws);
      assert.ok(outcome.binds.includes(`${ws}:${ws}`), ws);
    });
  }
});

// ---------------------------------------------------------------------------------------------
// Named shells: filippolmt/toolbox@9196b528b8cfa0fba59e3bc11b5c3a75e2c6e9b7 cmd/shell_named.go
// (resolveShellWorkspace: validateShellName, shellPathFor by the normalised key, then
// ensureNamedShellPath: absolute, Lstat, missing / symlink / not a directory refused; the texts of
// missingShellHint, missingPathHint and createHint; defaultShellPath $HOME/toolbox-shells/<key>;
// --create: upsertShellInUserConfig writes ~/.toolbox.yaml through configedit.SetShell, with the
// key from shellFileKey). @045628d339fdaa373b2b3e773a3ca5d4bbf94e43 internal/configedit/write.go:
// a created file gets headerComment; SetShell sets path and keeps the entry's other keys.
// @0c246484d383bd38e725efe99eb1418bf50b33d6 internal/configedit/mutate.go ShellKeyIn: an existing
// spelling that normalises to the same key, else the normalised key. The container name,
// `<prefix>-named-<sanitized>[.peer]`, does not depend on the path (internal/sessionplan, as
// plan/naming.ts transcribes it). The workspace is then mounted as any folder (upstreamBinds).
// ---------------------------------------------------------------------------------------------
const upstreamKey = (name: string) => name.trim().toLowerCase();
const upstreamDefaultPath = (name: string) => `${HOME}/toolbox-shells/${upstreamKey(name)}`;
const upstreamCreateHint = (name: string, path: string) =>
  `Create the directory:\n\n  mkdir -p ${path}\n\nOr re-run with auto-create:\n\n  toolbox shell ${name} --create`;
const upstreamMissingShellHint = (name: string) =>
  `shell "${name}" not configured\n\nAdd to ~/.toolbox.yaml:\n\n  shells:\n    ${upstreamKey(name)}:\n      path: ${upstreamDefaultPath(name)}\n\n` +
  upstreamCreateHint(upstreamKey(name), upstreamDefaultPath(name));
const upstreamMissingPathHint = (sanitized: string, path: string) =>
  `path ${path} does not exist\n\n${upstreamCreateHint(sanitized, path)}`;
const UPSTREAM_HEADER = [
  '# .toolbox.yaml — toolbox configuration.',
  "# Run 'toolbox config example' for an annotated template covering every field.",
  '# Docs: https://github.com/filippolmt/toolbox',
];

type NamedOutcome = { opened: true; name: string; binds: string[]; env: string[] } | { opened: false; reason: string };

/** `toolbox shell <name>` run from `from`, as the backend's prepareShell and open plan it. */
function extensionOpenNamed(
  shell: string,
  o: { user?: string; project?: string; from?: string; peer?: boolean; kinds?: Record<string, PathKind> },
): NamedOutcome {
  const from = o.from ?? `${HOME}/proj`;
  const exists = new Set(DEFAULT_EXISTS);
  const host: HostFacts = { uid: 1000, gid: 1000, home: HOME, platform: 'linux', pathExists: (p) => exists.has(p) };
  try {
    const resolved = resolveConfig({
      ...(o.user !== undefined ? { userFile: { path: `${HOME}/.toolbox.yaml`, text: o.user } } : {}),
      ...(o.project !== undefined ? { projectFile: { path: `${from}/.toolbox.yaml`, text: o.project } } : {}),
      env: {},
      settings: {},
      trusted: true,
      home: HOME,
    });
    issuesForOpen(resolved.issues, HOME);
    const lstat = (p: string): PathKind => o.kinds?.[p] ?? 'missing';
    const workspace = namedShellFolder(shell, resolved.config.shells, HOME, lstat, names);
    const { plan } = planSession(
      {
        workspace,
        namedShell: shell,
        config: resolved.config,
        peer: o.peer ?? false,
        bridge: BRIDGE,
        image: 'toolbox-runtime:test',
        names,
      },
      host,
    );
    return { opened: true, name: plan.name, binds: plan.create.HostConfig.Binds, env: plan.create.Env };
  } catch (err) {
    return { opened: false, reason: (err as Error).message };
  }
}

describe('parity with the toolbox CLI: named shells', () => {
  const infra = 'shells:\n  infra:\n    path: /srv/infra\n';
  const dir = { '/srv/infra': 'directory' as PathKind };

  it('mounts the configured path, not the folder it was opened from, in the container upstream names', () => {
    const outcome = extensionOpenNamed('infra', { user: infra, kinds: dir });
    assert.ok(outcome.opened, outcome.opened ? '' : outcome.reason);
    assert.equal(outcome.name, 'toolbox-named-infra');
    assert.deepEqual(
      sorted(outcome.binds),
      sorted(upstreamBinds({ workspace: '/srv/infra', exists: new Set(DEFAULT_EXISTS) }) as string[]),
    );
    assert.ok(outcome.binds.includes('/srv/infra:/workspace'));
    assert.ok(!outcome.binds.some((b) => b.startsWith(`${HOME}/proj:`)), 'the folder it was opened from is not mounted');
    assert.ok(outcome.env.includes('TOOLBOX_HOST_WORKSPACE=/srv/infra'));
  });

  it('finds the shell by its normalised key, from a project file too, with peer messaging in the name', () => {
    const outcome = extensionOpenNamed('Infra', { project: infra, kinds: dir, peer: true, from: '/srv/other' });
    assert.ok(outcome.opened, outcome.opened ? '' : outcome.reason);
    assert.equal(outcome.name, 'toolbox-named-infra.peer');
    assert.ok(outcome.binds.includes('/srv/infra:/workspace'));
  });

  for (const name of ['web', 'Web']) {
    it(`refuses an unconfigured name (${name}) with upstream's hint, word for word`, () => {
      const outcome = extensionOpenNamed(name, { user: infra, kinds: dir });
      assert.ok(!outcome.opened);
      assert.equal(outcome.reason, upstreamMissingShellHint(name));
    });
  }

  it('refuses a configured path that does not exist, naming the mkdir and the --create', () => {
    const outcome = extensionOpenNamed('infra', { user: infra });
    assert.ok(!outcome.opened);
    assert.equal(outcome.reason, upstreamMissingPathHint('infra', '/srv/infra'));
  });

  it("refuses a symlink, a file and an empty path with upstream's words", () => {
    const link = extensionOpenNamed('infra', { user: infra, kinds: { '/srv/infra': 'symlink' } });
    assert.ok(!link.opened);
    assert.equal(link.reason, 'shell "infra" path /srv/infra is a symlink; point shells.infra.path at the resolved target directly');
    const file = extensionOpenNamed('infra', { user: infra, kinds: { '/srv/infra': 'file' } });
    assert.ok(!file.opened);
    assert.equal(file.reason, 'shell "infra" path /srv/infra is not a directory');
    const empty = extensionOpenNamed('infra', { user: 'shells:\n  infra:\n    env: {A: "1"}\n' });
    assert.ok(!empty.opened);
    assert.equal(empty.reason, 'shell "infra" has empty path');
  });

  // @7ebd141d7d563c78ccfa7add7759be5df566adef internal/config/keys.go: the shells row validates only
  // each entry's env, so a relative path loads; ensureNamedShellPath refuses it when that shell
  // opens, with internal/workspace/workspace.go ValidateAbsolute's "path %q is not absolute".
  it('a relative shell path refuses only that shell; the folder and the other shells still open', () => {
    const user = 'shells:\n  infra:\n    path: /srv/infra\n  scratch:\n    path: ~/scratch\n';
    const relative = extensionOpenNamed('scratch', { user, kinds: dir });
    assert.ok(!relative.opened);
    assert.equal(relative.reason, 'path "~/scratch" is not absolute');
    const other = extensionOpenNamed('infra', { user, kinds: dir });
    assert.ok(other.opened, other.opened ? '' : other.reason);
    const folder = extensionOpen({ user });
    assert.ok(folder.opened, folder.opened ? '' : folder.reason);
  });

  it("create-on-request writes shells.<key>.path into a new ~/.toolbox.yaml under upstream's header", () => {
    assert.equal(HOST.userConfig, '.toolbox.yaml', 'the file upstream writes: ~/.toolbox.yaml');
    const { text, key } = setShellPath(undefined, (keys) => shellKeyIn(keys, 'Infra'), upstreamDefaultPath('Infra'));
    assert.equal(key, 'infra');
    assert.deepEqual(text.split('\n').slice(0, 3), UPSTREAM_HEADER);
    assert.deepEqual(parseYaml(text), { shells: { infra: { path: `${HOME}/toolbox-shells/infra` } } });
    // What it wrote opens as the CLI would open it.
    const outcome = extensionOpenNamed('infra', { user: text, kinds: { [`${HOME}/toolbox-shells/infra`]: 'directory' } });
    assert.ok(outcome.opened && outcome.binds.includes(`${HOME}/toolbox-shells/infra:/workspace`));
  });

  it("create-on-request edits an entry spelled differently in place, keeping its env and the file's comments", () => {
    const before = '# mine\npull: never\nshells:\n  Infra: # the infra repo\n    env: {KUBECONFIG: /k}\n';
    const { text, key } = setShellPath(before, (keys) => shellKeyIn(keys, 'infra'), '/srv/infra');
    assert.equal(key, 'Infra');
    assert.ok(text.startsWith('# mine\npull: never\n'));
    assert.match(text, /# the infra repo/);
    assert.deepEqual(parseYaml(text), { pull: 'never', shells: { Infra: { env: { KUBECONFIG: '/k' }, path: '/srv/infra' } } });
    assert.ok(!text.includes('toolbox configuration'), 'no header on a file that exists');
  });
});

// filippolmt/toolbox@a420f65fee9bfc9175e4266285d2b2faf7cf6ce2 internal/dockeridentity/dockeridentity.go
// dockerSockGroups: nil unless /var/run/docker.sock is a bind target; else "0" (Docker Desktop
// shows the socket as root:root inside the container), plus the host socket's gid when stat
// works and it is not 0.
describe('parity with the toolbox CLI: GroupAdd', () => {
  const cases: Array<[string, Input, string[] | undefined]> = [
    ['Docker Desktop: root-owned socket', { socketGid: 0 }, ['0']],
    ['Linux: socket in the docker group', { socketGid: 998 }, ['0', '998']],
    ['socket group unknown (stat failed)', {}, ['0']],
    ['docker-sock disabled', { socketGid: 998, project: mountsYaml({ name: 'docker-sock', disabled: true }) }, undefined],
    ['no socket on the host (the mount is skipped)', { socketGid: 998, exists: [`${HOME}/.ssh`] }, undefined],
  ];
  for (const [label, input, groupAdd] of cases) {
    it(label, () => {
      const outcome = extensionOpen(input);
      assert.ok(outcome.opened, label);
      assert.deepEqual(outcome.groupAdd, groupAdd, label);
    });
  }
});

// filippolmt/toolbox@7ebd141d7d563c78ccfa7add7759be5df566adef internal/config/config.go: ValidateEnv
// refuses an empty key, a key with "=", exactly `PWD` and the `TOOLBOX_` prefix, case as written
// (internal/config/plan.go restoreEnvKeyCase at the same commit keeps the
// case viper would lower); ValidateAgent takes claude or codex (SupportedAgents). Either refusal
// fails the command (applyValidationTail), whichever file it is in.
describe('parity with the toolbox CLI: env keys and agent', () => {
  const upstreamEnvRefuses = (key: string) => key === '' || key.includes('=') || key === 'PWD' || key.startsWith('TOOLBOX_');
  for (const key of ['PWD', 'TOOLBOX_IMAGE', 'TOOLBOX_', 'pwd', 'Pwd', 'toolbox_image', 'Toolbox_X', 'PWD_OLD', 'MY_TOOLBOX_X', 'A=B']) {
    it(`env: {${JSON.stringify(key)}: x} ${upstreamEnvRefuses(key) ? 'refuses' : 'opens'}, as in the CLI`, () => {
      for (const file of ['user', 'project'] as const) {
        const outcome = extensionOpen({ [file]: `env:\n  ${JSON.stringify(key)}: x\n` });
        assert.equal(outcome.opened, !upstreamEnvRefuses(key), `${file}: ${outcome.opened ? '' : outcome.reason}`);
        if (outcome.opened) {
          const { plan } = planSession(
            {
              workspace: `${HOME}/proj`,
              config: resolveConfig({
                userFile: { path: `${HOME}/.toolbox.yaml`, text: `env:\n  ${JSON.stringify(key)}: x\n` },
                env: {},
                settings: {},
                trusted: true,
                home: HOME,
              }).config,
              peer: false,
              bridge: BRIDGE,
              image: 'toolbox-runtime:test',
              names,
            },
            { uid: 1000, gid: 1000, home: HOME, platform: 'linux', pathExists: () => false },
          );
          assert.ok(plan.create.Env.includes(`${key}=x`), key);
        }
      }
    });
  }
  for (const agent of ['claude', 'codex', 'pi', 'gemini']) {
    const accepted = agent === 'claude' || agent === 'codex';
    it(`agent: ${agent} ${accepted ? 'opens' : 'refuses'}, as in the CLI`, () => {
      const outcome = extensionOpen({ project: `agent: ${agent}\n` });
      assert.equal(outcome.opened, accepted, outcome.opened ? '' : outcome.reason);
      if (!outcome.opened) assert.match(outcome.reason, /agent: expected claude or codex/);
    });
  }
});

// filippolmt/toolbox@7ebd141d7d563c78ccfa7add7759be5df566adef internal/config/plan.go: warnLegacyTools
// ("'tools:' is no longer supported and has been removed") and warnLegacyToolsEnv for
// TOOLBOX_TOOLS_*; per-tool toggles are no longer read ("Per-tool toggles no longer exist"), so
// @0f8f8110357537d38d3468a238e8e276169984e6 internal/sessionplan/shell.go NestedSandboxSecurityOpt
// always gives seccomp=unconfined and ResolveShellCmd always /bin/zsh.
describe('parity with the toolbox CLI: the removed tools: block and security options', () => {
  for (const [label, input] of [
    ['no config', {}],
    ['tools: {codex: false, zsh: false} in the project file', { project: 'tools: {codex: false, zsh: false}\n' }],
    ['tools: in an odd shape in ~/.toolbox.yaml', { user: 'tools: [codex]\n' }],
    ['TOOLBOX_TOOLS_CODEX=false', { env: { TOOLBOX_TOOLS_CODEX: 'false' } }],
  ] as Array<[string, Input]>) {
    it(`${label}: opens with seccomp=unconfined and zsh`, () => {
      const outcome = extensionOpen(input);
      assert.ok(outcome.opened, label);
      assert.deepEqual(outcome.securityOpt, ['seccomp=unconfined']);
      assert.deepEqual(outcome.cmd, ['/bin/zsh']);
      const warned = outcome.warnings.some((w) => /no longer supported and (is|are) ignored/.test(w));
      assert.equal(warned, label !== 'no config', label);
    });
  }
});

// filippolmt/toolbox@7ebd141d7d563c78ccfa7add7759be5df566adef internal/config/plan.go: LoadLayers
// skips a ~/.toolbox.yaml that does not parse ("skipping global config") and carries on; a project
// file that does not parse fails mergeFileLayers ("parse project config bytes"), and a value that
// fails validation fails the command whichever file it is in (applyValidationTail).
describe('parity with the toolbox CLI: broken config files', () => {
  it('a project .toolbox.yaml that is not YAML stops the open, naming file:line and the fix', () => {
    const outcome = extensionOpen({ project: 'pull: never\nmounts:\n  - {name: x\n' });
    assert.ok(!outcome.opened);
    assert.match(outcome.reason, /~\/proj\/\.toolbox\.yaml:4: is not valid YAML: .*Fix that file around line 4, then open the shell again/);
  });

  it('a project .toolbox.yaml with a bad value stops the open, naming file:line and the key', () => {
    const outcome = extensionOpen({ project: 'mounts_root: /data/tb\npull: sometimes\n' });
    assert.ok(!outcome.opened);
    assert.match(outcome.reason, /~\/proj\/\.toolbox\.yaml:2: pull: expected auto, always or never, got "sometimes"/);
  });

  it('a ~/.toolbox.yaml with a bad value stops the open too', () => {
    const outcome = extensionOpen({ user: 'peer_messaging: maybe\n' });
    assert.ok(!outcome.opened);
    assert.match(outcome.reason, /~\/\.toolbox\.yaml:1: peer_messaging: expected true or false/);
  });

  it('a ~/.toolbox.yaml that is not YAML is skipped with a warning, and the project file applies', () => {
    const outcome = extensionOpen({ user: 'mounts_root: [/data\n', project: mountsYaml({ name: 'kube', disabled: true }) });
    assertOpenedWith(
      outcome,
      upstreamBinds({ workspace: `${HOME}/proj`, mounts: [{ name: 'kube', disabled: true }], exists: new Set(DEFAULT_EXISTS) }),
      'broken user file',
    );
    assert.ok(
      outcome.opened && outcome.warnings.some((w) => /^~\/\.toolbox\.yaml:\d+: is not valid YAML: .*Its settings are not applied/.test(w)),
    );
  });
});

// ---------------------------------------------------------------------------------------------
// The TOOLBOX_* environment layer.
//
// filippolmt/toolbox@7ebd141d7d563c78ccfa7add7759be5df566adef internal/config/plan.go:
//   EnvBoundKeys = bridge, image, registry_mirror, pull, peer_messaging ("the only config keys
//   resolvable from a TOOLBOX_* environment variable"), envVarName = "TOOLBOX_" + upper(key),
//   EnvVarSet treats an empty variable as unset. A boolean key decodes through viper's Unmarshal
//   (mapstructure, weakly typed), which calls Go's strconv.ParseBool: 1 t T TRUE true True / 0 f F
//   FALSE false False; any other text fails Unmarshal, so Merge, so the command.
// ---------------------------------------------------------------------------------------------
const UPSTREAM_ENV_BOUND = ['bridge', 'image', 'registry_mirror', 'pull', 'peer_messaging'] as const;
const UPSTREAM_BOOL_KEYS = new Set(['bridge', 'peer_messaging']);
const GO_PARSE_BOOL: Record<string, boolean> = {
  '1': true,
  t: true,
  T: true,
  TRUE: true,
  true: true,
  True: true,
  '0': false,
  f: false,
  F: false,
  FALSE: false,
  false: false,
  False: false,
};

/** What upstream's Merge makes of the environment: the values it reads, or the error that stops it. */
function upstreamEnvLayer(env: Record<string, string>): Record<string, string | boolean> | Error {
  const out: Record<string, string | boolean> = {};
  for (const key of UPSTREAM_ENV_BOUND) {
    const text = env[`TOOLBOX_${key.toUpperCase()}`];
    if (text === undefined || text === '') continue;
    if (UPSTREAM_BOOL_KEYS.has(key)) {
      if (!Object.hasOwn(GO_PARSE_BOOL, text)) return new Error(`strconv.ParseBool: parsing "${text}": invalid syntax`);
      out[key] = GO_PARSE_BOOL[text]!;
    } else {
      out[key] = text;
    }
  }
  return out;
}

/** The extension's resolved values for the same five keys, or its refusal to open. */
function extensionEnvLayer(env: Record<string, string>): Record<string, string | boolean> | Error {
  const resolved = resolveConfig({ env, settings: {}, trusted: true, home: HOME });
  try {
    issuesForOpen(resolved.issues, HOME);
  } catch (err) {
    return err as Error;
  }
  const c = resolved.config;
  const out: Record<string, string | boolean> = {};
  const fromEnv = (key: string) => (env[`TOOLBOX_${key.toUpperCase()}`] ?? '') !== '';
  if (fromEnv('bridge') && c.bridge !== undefined) out.bridge = c.bridge;
  if (fromEnv('image') && c.image !== undefined) out.image = c.image;
  if (fromEnv('registry_mirror') && c.registryMirror !== undefined) out.registry_mirror = c.registryMirror;
  if (fromEnv('pull')) out.pull = c.pull;
  if (fromEnv('peer_messaging')) out.peer_messaging = c.peerMessaging;
  return out;
}

describe('parity with the toolbox CLI: the TOOLBOX_* environment layer', () => {
  const rows: Array<[string, Record<string, string>]> = [
    [
      'all five bound keys',
      {
        TOOLBOX_IMAGE: 'reg.local/tb:2',
        TOOLBOX_REGISTRY_MIRROR: 'm.local',
        TOOLBOX_PULL: 'never',
        TOOLBOX_BRIDGE: 'F',
        TOOLBOX_PEER_MESSAGING: 'True',
      },
    ],
    ['empty variables count as unset', { TOOLBOX_IMAGE: '', TOOLBOX_BRIDGE: '' }],
    ...Object.keys(GO_PARSE_BOOL).map((w): [string, Record<string, string>] => [`TOOLBOX_BRIDGE=${w}`, { TOOLBOX_BRIDGE: w }]),
    ...['yes', 'no', 'on', 'off', 'tRuE', ' 1', 'enabled'].map((w): [string, Record<string, string>] => [
      `TOOLBOX_PEER_MESSAGING=${JSON.stringify(w)} (not a Go bool: the command stops)`,
      { TOOLBOX_PEER_MESSAGING: w },
    ]),
    [
      'unbound: TOOLBOX_PROXIMO, TOOLBOX_MOUNTS_ROOT, TOOLBOX_SHELL are not read',
      { TOOLBOX_PROXIMO: 'false', TOOLBOX_MOUNTS_ROOT: '/data/tb', TOOLBOX_SHELL: 'bash' },
    ],
  ];
  for (const [label, env] of rows) {
    it(label, () => {
      const upstream = upstreamEnvLayer(env);
      const ours = extensionEnvLayer(env);
      assert.equal(ours instanceof Error, upstream instanceof Error, `${label}: ${String(ours)} vs ${String(upstream)}`);
      if (!(upstream instanceof Error)) assert.deepEqual(ours, upstream, label);
    });
  }

  it('an unbound variable changes nothing in the resolved config', () => {
    const base = resolveConfig({ env: {}, settings: {}, trusted: true, home: HOME }).config;
    const withUnbound = resolveConfig({
      env: { TOOLBOX_PROXIMO: 'false', TOOLBOX_MOUNTS_ROOT: '/data/tb', TOOLBOX_MANAGED_STATUSLINE: 'false' },
      settings: {},
      trusted: true,
      home: HOME,
    }).config;
    assert.deepEqual(withUnbound, base);
  });
});

// ---------------------------------------------------------------------------------------------
// The session environment.
//
// filippolmt/toolbox@adb91cab824e7d22bd7534bef5d49bf945635d70 internal/sessionplan/plan.go:
//   composeEnv = shellEnv (TOOLBOX_HOST_WORKSPACE, PWD, CLAUDE_REMOTE_CONTROL_SESSION_NAME_PREFIX,
//   HERDR_SESSION, SDD) + loopbackBridgeEnv + identityEnv (TOOLBOX_CLI_VERSION, then
//   TOOLBOX_IMAGE_DIGEST only when a repo digest resolved) + hostPlatformEnv (TOOLBOX_HOST_OS =
//   runtime.GOOS, TOOLBOX_HOST_ARCH = runtime.GOARCH, always) + managedStatuslineEnv + extra
//   (proximo.Env, agentHomeEnv, reloadMarkerEnv: TOOLBOX_RELOAD_MARKER =
//   /home/toolbox/.toolbox-state/reload.<container> (internal/reload/reload.go MarkerName) while a
//   mount lands on the state target) + userEnv (sorted). WithImageDigest puts the digest right
//   after the version entry, replaces an existing one, drops it when empty.
// ---------------------------------------------------------------------------------------------
describe('parity with the toolbox CLI: the session environment', () => {
  const WS = `${HOME}/proj`;
  /** Upstream's composeEnv for a plain folder (no SDD, no loopback, no proximo), host linux/amd64. */
  function upstreamEnv(o: { digest?: string; managedStatusline?: boolean; user?: Record<string, string>; noState?: boolean }): string[] {
    return [
      `TOOLBOX_HOST_WORKSPACE=${WS}`,
      `PWD=${WS}`,
      'CLAUDE_REMOTE_CONTROL_SESSION_NAME_PREFIX=proj',
      'HERDR_SESSION=<container>',
      'TOOLBOX_CLI_VERSION=<cli version>',
      ...(o.digest ? [`TOOLBOX_IMAGE_DIGEST=${o.digest}`] : []),
      'TOOLBOX_HOST_OS=linux',
      'TOOLBOX_HOST_ARCH=amd64',
      ...(o.managedStatusline === false ? ['TOOLBOX_MANAGED_STATUSLINE=0'] : []),
      `TOOLBOX_HOST_AGENT_HOME=${HOME}/.toolbox`,
      `TOOLBOX_HOST_CODEX_HOME=${HOME}/.toolbox/.codex`,
      ...(o.noState ? [] : ['TOOLBOX_RELOAD_MARKER=/home/toolbox/.toolbox-state/reload.<container>']),
      ...Object.keys(o.user ?? {})
        .sort()
        .map((k) => `${k}=${o.user![k]}`),
    ];
  }
  /**
   * The decided differences, applied to upstream's list: the version under the extension's own
   * name; no HERDR_SESSION (herdr is not in the runtime image); no TOOLBOX_RELOAD_MARKER (the
   * extension does not read the marker, so it does not declare the capability:
   * docs/decisions/0052-newest-upstream-config.md); SHELL before the user's env
   * (docs/decisions/0012-container-host-name-and-shell.md).
   */
  function decided(env: string[]): string[] {
    const out: string[] = [];
    for (const e of env) {
      if (e.startsWith('HERDR_SESSION=') || e.startsWith('TOOLBOX_RELOAD_MARKER=')) continue;
      if (e.startsWith('TOOLBOX_CLI_VERSION=')) out.push(`TOOLBOX_VSCODE_VERSION=${EXTENSION_VERSION}`);
      else out.push(e);
    }
    const firstUser = out.findIndex((e) => !/^(TOOLBOX_|PWD=|CLAUDE_)/.test(e));
    out.splice(firstUser === -1 ? out.length : firstUser, 0, 'SHELL=/bin/zsh');
    return out;
  }
  function extensionEnv(o: { digest?: string; managedStatusline?: boolean; user?: Record<string, string> }): string[] {
    const host: HostFacts = { uid: 1000, gid: 1000, home: HOME, platform: 'linux', arch: 'x64', pathExists: () => false };
    const resolved = resolveConfig({ env: {}, settings: {}, trusted: true, home: HOME });
    const config = { ...resolved.config, env: o.user ?? {}, ...(o.managedStatusline === false ? { managedStatusline: false } : {}) };
    const { plan } = planSession({ workspace: WS, config, peer: false, bridge: BRIDGE, image: 'toolbox-runtime:test', names }, host);
    // The engine stamps the digest the image step found (engine/open.ts create).
    return withImageDigest(plan.create.Env, o.digest);
  }
  it('TOOLBOX_RELOAD_MARKER: upstream declares it while the state mount is there; the extension never does (decision 0052)', () => {
    assert.ok(upstreamEnv({}).some((e) => e.startsWith('TOOLBOX_RELOAD_MARKER=')));
    assert.ok(!upstreamEnv({ noState: true }).some((e) => e.startsWith('TOOLBOX_RELOAD_MARKER=')));
    for (const env of [extensionEnv({}), extensionEnv({ user: { A: '1' } })]) {
      assert.ok(!env.some((e) => e.startsWith('TOOLBOX_RELOAD_MARKER=')));
    }
  });

  for (const [label, o] of [
    ['a plain folder, a locally built image (no repo digest)', {}],
    ['an image with a repo digest', { digest: 'sha256:' + 'ab'.repeat(32) }],
    ['managed_statusline: false and user env', { managedStatusline: false, user: { ZED: '1', ALPHA: 'a' } }],
  ] as Array<[string, { digest?: string; managedStatusline?: boolean; user?: Record<string, string> }]>) {
    it(label, () => assert.deepEqual(extensionEnv(o), decided(upstreamEnv(o))));
  }

  it('GOOS/GOARCH spelling of the host platform', () => {
    assert.deepEqual(
      [goos('darwin'), goos('linux'), goos('win32'), goarch('x64'), goarch('arm64'), goarch('ia32')],
      ['darwin', 'linux', 'windows', 'amd64', 'arm64', '386'],
    );
  });

  it('WithImageDigest: replaces an existing entry, drops it when the digest is unknown', () => {
    const env = ['A=1', `TOOLBOX_VSCODE_VERSION=${EXTENSION_VERSION}`, 'TOOLBOX_IMAGE_DIGEST=sha256:old', 'B=2'];
    assert.deepEqual(withImageDigest(env, 'sha256:new'), [
      'A=1',
      `TOOLBOX_VSCODE_VERSION=${EXTENSION_VERSION}`,
      'TOOLBOX_IMAGE_DIGEST=sha256:new',
      'B=2',
    ]);
    assert.deepEqual(withImageDigest(env, undefined), ['A=1', `TOOLBOX_VSCODE_VERSION=${EXTENSION_VERSION}`, 'B=2']);
  });
});
