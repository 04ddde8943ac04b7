import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { DEFAULT_CONFIG, type ToolboxConfig } from '../../extension/src/config/model';
import { objectNames } from '../../extension/src/contract/objects';
import { planSession, sessionContainerName } from '../../extension/src/plan/session';
import { CONTAINER } from '../../extension/src/contract/upstream';
import { ENV } from '../../extension/src/contract/shims';
import { EXTENSION_VERSION } from '../../extension/src/contract/manifest';
import { agentHomes, editRoots, workspaceMirror } from '../../extension/src/plan/mounts';
import type { HostFacts } from '../../extension/src/contract/types';
import type { SessionRequest } from '../../extension/src/plan/types';

// Pure planning: the production object names are only strings here, no Docker object is touched.
const names = objectNames();
const h8 = (seed: string) => createHash('sha256').update(seed, 'utf8').digest('hex').slice(0, 8);

const R = '/home/u/.toolbox';
const H = '/home/toolbox';

function hostFacts(existing: string[] = ['/home/u/.ssh', '/home/u/.gitconfig', '/var/run/docker.sock'], gid?: number): HostFacts {
  const set = new Set(existing);
  return {
    uid: 1000,
    gid: 1001,
    home: '/home/u',
    platform: 'linux',
    arch: 'arm64',
    pathExists: (p) => set.has(p),
    ...(gid !== undefined ? { dockerSocketGid: gid } : {}),
  };
}

function request(over: Partial<SessionRequest> = {}, config: Partial<ToolboxConfig> = {}): SessionRequest {
  return {
    workspace: '/home/u/proj',
    config: { ...DEFAULT_CONFIG, ...config },
    peer: true,
    bridge: { stateDir: `${R}/toolbox/bridge`, runDir: `${R}/toolbox/bridge/run` },
    image: 'toolbox-runtime:test',
    names,
    ...over,
  };
}

/** The default mount binds for a root, in upstream order, before the bridge mounts. */
function defaultBinds(root: string): string[] {
  return [
    `${root}/.claude:${H}/.claude`,
    `${root}/.codex:${H}/.codex`,
    `${root}/.pi:${H}/.pi`,
    `${root}/toolbox/state:${H}/.toolbox-state`,
    `/home/u/.ssh:${H}/.ssh:ro`,
    `/home/u/.gitconfig:${H}/.gitconfig:ro`,
    `${root}/gh:${H}/.config/gh`,
    `${root}/glab:${H}/.config/glab-cli`,
    `${root}/gcloud:${H}/.config/gcloud`,
    `${root}/gws:${H}/.config/gws`,
    `${root}/atuin:${H}/.local/share/atuin`,
    `${root}/azure:${H}/.azure`,
    `${root}/oci:${H}/.oci`,
    `${root}/sonar:${H}/.sonar`,
    `${root}/docker:${H}/.docker`,
    `${root}/cf/auth:${H}/.config/cloudflare`,
    `${root}/cf/config:${H}/.config/.cf`,
    `${root}/wrangler:${H}/.config/.wrangler`,
    `${root}/kube:${H}/.kube`,
    `${root}/playwright-cache:${H}/.cache/ms-playwright`,
    `${root}/playwright-config:${H}/.playwright`,
    `${root}/startup.d:${H}/.toolbox-startup.d:ro`,
    `${root}/certs:/etc/toolbox/certs:ro`,
    `${root}/npm-global:${H}/.npm-global`,
    `${root}/npm-cache:${H}/.npm`,
    `${root}/bun:${H}/.bun`,
    `${root}/pnpm:${H}/.local/share/pnpm`,
    `${root}/uv:${H}/.local/share/uv`,
    `${root}/uv-cache:${H}/.cache/uv`,
    `${root}/pip-cache:${H}/.cache/pip`,
    `${root}/gradle-cache:${H}/.gradle`,
    `${root}/android-sdk:${H}/.android-sdk`,
    `${root}/go:${H}/go`,
    `${root}/go-build:${H}/.cache/go-build`,
    `${root}/golangci-cache:${H}/.cache/golangci-lint`,
    `${root}/herdr/config:${H}/.config/herdr`,
    `${root}/herdr/state:${H}/.local/state/herdr`,
  ];
}

const BRIDGE_BINDS = [
  `${R}/toolbox/bridge:${H}/.toolbox/bridge:ro`,
  `${R}/toolbox/bridge:${H}/.toolbox/browser:ro`,
  `${R}/toolbox/bridge/run:${H}/.toolbox/bridge/run`,
];

describe('planSession: a typical workspace', () => {
  const { plan, warnings } = planSession(request({}, { env: { ZED: '1', ALPHA: 'a' } }), hostFacts(undefined, 998));

  it('produces the exact create spec the engine sends', () => {
    assert.deepEqual(plan.create, {
      name: `toolbox-proj-${h8('/home/u/proj\x00profile=\x00peer=1')}`,
      Hostname: `toolbox-proj-${h8('/home/u/proj\x00profile=\x00peer=1')}`,
      Image: 'toolbox-runtime:test',
      Cmd: ['/bin/zsh'],
      Env: [
        'TOOLBOX_HOST_WORKSPACE=/home/u/proj',
        'PWD=/home/u/proj',
        'CLAUDE_REMOTE_CONTROL_SESSION_NAME_PREFIX=proj',
        `TOOLBOX_VSCODE_VERSION=${EXTENSION_VERSION}`,
        'TOOLBOX_HOST_OS=linux',
        'TOOLBOX_HOST_ARCH=arm64',
        'TOOLBOX_HOST_AGENT_HOME=/home/u/.toolbox',
        'TOOLBOX_HOST_CODEX_HOME=/home/u/.toolbox/.codex',
        'SHELL=/bin/zsh',
        'ALPHA=a',
        'ZED=1',
      ],
      User: '1000:1001',
      WorkingDir: '/home/u/proj',
      Tty: true,
      OpenStdin: true,
      AttachStdin: false,
      Labels: { 'dev.toolbox.workspace': '/home/u/proj' },
      HostConfig: {
        Binds: [
          ...defaultBinds(R),
          ...BRIDGE_BINDS,
          '/var/run/docker.sock:/var/run/docker.sock',
          '/home/u/proj:/workspace',
          '/home/u/proj:/home/u/proj',
          'toolbox-cc-socks:/tmp/cc-socks',
        ],
        ExtraHosts: ['host.docker.internal:host-gateway'],
        SecurityOpt: ['seccomp=unconfined'],
        PidMode: 'container:toolbox-peer-anchor',
        AutoRemove: true,
        GroupAdd: ['0', '998'],
      },
    });
    assert.deepEqual(warnings, []);
  });

  it('runs the same command in the interactive shell', () => {
    assert.deepEqual(plan.shellCmd, ['/bin/zsh']);
  });

  it('describes the peer socket mount as a volume, not a host directory', () => {
    const peer = plan.mounts.find((m) => m.target === '/tmp/cc-socks');
    assert.deepEqual(peer && { type: peer.type, source: peer.source }, { type: 'volume', source: 'toolbox-cc-socks' });
  });

  it('asks the adapter to create every created-if-missing source, and nothing else', () => {
    assert.ok(plan.ensureDirs.includes(`${R}/.claude`));
    assert.ok(plan.ensureDirs.includes(`${R}/toolbox/bridge/run`));
    assert.ok(plan.ensureDirs.includes(`${R}/certs`));
    for (const absent of ['/var/run/docker.sock', '/home/u/.ssh', '/home/u/proj', 'toolbox-cc-socks']) {
      assert.ok(!plan.ensureDirs.includes(absent), absent);
    }
    assert.equal(new Set(plan.ensureDirs).size, plan.ensureDirs.length);
    // 35 created defaults (all but ssh, gitconfig, docker-sock; rtk and rtk-data retired) + the two bridge dirs.
    assert.equal(plan.ensureDirs.length, 35 + 2);
  });

  it('gives the same plan for the same inputs', () => {
    const again = planSession(request({}, { env: { ZED: '1', ALPHA: 'a' } }), hostFacts(undefined, 998));
    assert.deepEqual(again.plan, plan);
  });
});

describe('planSession: an agent worktree', () => {
  it('mounts <root>/.git at its own absolute path', () => {
    const { plan } = planSession(request({ workspace: '/home/u/repo/.worktrees/tbx-x', worktreeRoot: '/home/u/repo' }), hostFacts());
    assert.ok(plan.create.HostConfig.Binds.includes('/home/u/repo/.git:/home/u/repo/.git'));
  });
});

describe('planSession: mount roots and profiles', () => {
  it('moves the default sources to mounts_root but keeps the bridge mounts on the host root', () => {
    const { plan } = planSession(request({}, { mountsRoot: '~/alt' }), hostFacts());
    const binds = plan.create.HostConfig.Binds;
    const defaults = defaultBinds('/home/u/alt');
    assert.deepEqual(binds.slice(0, defaults.length), defaults);
    assert.deepEqual(binds.slice(defaults.length, defaults.length + 3), BRIDGE_BINDS);
    assert.ok(plan.create.Env.includes('TOOLBOX_HOST_AGENT_HOME=/home/u/alt'));
    assert.ok(plan.create.Env.includes('TOOLBOX_HOST_CODEX_HOME=/home/u/alt/.codex'));
    assert.ok(plan.ensureDirs.includes('/home/u/alt/gh'));
  });

  it('accepts an absolute mounts_root', () => {
    const { plan } = planSession(request({}, { mountsRoot: '/data/tb/' }), hostFacts());
    assert.equal(plan.create.HostConfig.Binds[0], `/data/tb/.claude:${H}/.claude`);
  });

  it('rejects a bare ~ as mounts_root', () => {
    assert.throws(() => planSession(request({}, { mountsRoot: '~' }), hostFacts()), /mounts_root "~" is not usable/);
  });

  it('rejects a mounts_root that binds the home itself, whatever the config came from (decision 0052)', () => {
    for (const root of ['/home/u', '/home/u/', '/home/u/x/..', '/home/u/./']) {
      assert.throws(
        () => planSession(request({}, { mountsRoot: root }), hostFacts()),
        /would bind your home directory itself, so the container would mount your own credentials/,
        root,
      );
    }
    // A user named after a default source: root /home would bind /home/docker, the home, as "docker".
    const docker = { ...hostFacts(), home: '/home/docker' };
    assert.throws(() => planSession(request({}, { mountsRoot: '/home' }), docker), /would bind your home directory itself/);
    assert.doesNotThrow(() => planSession(request({}, { mountsRoot: '/home/uv' }), hostFacts()));
  });

  it('accepts a mounts_root above the home, as upstream: its defaults are directories of their own there', () => {
    for (const root of ['/', '/home']) {
      const { plan } = planSession(request({}, { mountsRoot: root }), hostFacts());
      const base = root === '/' ? '' : root;
      assert.equal(plan.create.HostConfig.Binds[0], `${base}/.claude:${H}/.claude`, root);
      assert.ok(plan.ensureDirs.includes(`${base}/gh`), root);
    }
  });

  it('retired rtk: not mounted; its data directory is named once in the notes and never deleted', () => {
    const plain = planSession(request({}, {}), hostFacts());
    assert.ok(!plain.plan.create.HostConfig.Binds.some((b) => b.includes('rtk')));
    assert.deepEqual(plain.notes, []);
    const withData = planSession(request({}, {}), hostFacts(['/home/u/.ssh', '/home/u/.gitconfig', `${R}/rtk`]));
    assert.equal(withData.notes.length, 1);
    assert.match(
      withData.notes[0]!,
      new RegExp(`^${R}/rtk holds the data of the retired rtk mounts.*Toolbox leaves it in place; delete it yourself`),
    );
    assert.ok(!withData.plan.ensureDirs.some((d) => d.includes('rtk')));
    const moved = planSession(request({}, { mountsRoot: '/data/tb' }), hostFacts(['/data/tb/rtk']));
    assert.match(moved.notes[0] ?? '', /^\/data\/tb\/rtk holds/);
    const profile = planSession(request({ profile: 'work' }), hostFacts([`${R}/rtk`]));
    assert.deepEqual(profile.notes, [], 'a profile root has its own rtk directory, not the default one');
  });

  it('a --share token naming rtk or rtk-data is accepted and changes nothing (upstream validateShare)', () => {
    const a = planSession(request({ profile: 'work', share: ['gh', 'rtk'] }), hostFacts()).plan.create.HostConfig.Binds;
    const b = planSession(request({ profile: 'work', share: ['gh'] }), hostFacts()).plan.create.HostConfig.Binds;
    assert.deepEqual(a, b);
    assert.throws(
      () => planSession(request({ profile: 'work', share: ['rtkx'] }), hostFacts()),
      /Share token\(s\) rtkx match no shareable mount/,
    );
  });

  it('gives a profile its own root, keeps shared mounts on the host root, and folds it into the name', () => {
    const { plan } = planSession(request({ profile: 'work', share: ['gh', 'cf'] }), hostFacts());
    const binds = plan.create.HostConfig.Binds;
    const P = `${R}/profiles/work`;
    assert.ok(binds.includes(`${P}/.claude:${H}/.claude`));
    assert.ok(binds.includes(`${R}/gh:${H}/.config/gh`));
    assert.ok(binds.includes(`${R}/cf/auth:${H}/.config/cloudflare`));
    assert.ok(binds.includes(`${R}/cf/config:${H}/.config/.cf`));
    assert.ok(binds.includes(`${P}/glab:${H}/.config/glab-cli`));
    assert.ok(binds.includes(BRIDGE_BINDS[0]));
    assert.equal(plan.name, `toolbox-proj-${h8('/home/u/proj\x00profile=work\x00share=bridge,cf,gh\x00peer=1')}`);
    assert.ok(plan.create.Env.includes(`TOOLBOX_HOST_AGENT_HOME=${P}`));
  });

  it('treats an empty profile as no profile', () => {
    assert.equal(planSession(request({ profile: '' }), hostFacts()).plan.name, planSession(request(), hostFacts()).plan.name);
  });

  it('refuses a named-shell profile that would escape the profiles directory', () => {
    assert.throws(() => planSession(request({ namedShell: 'infra', profile: '..' }), hostFacts()), /Invalid profile name/);
  });

  it('refuses a share token that matches no shareable mount', () => {
    assert.throws(() => planSession(request({ profile: 'work', share: ['ghh'] }), hostFacts()), /ghh match no shareable mount/);
  });

  it('refuses the host links (ssh, gitconfig) and docker-sock as share tokens, as upstream', () => {
    for (const token of ['ssh', 'gitconfig', 'docker-sock']) {
      assert.throws(() => planSession(request({ profile: 'work', share: [token] }), hostFacts()), /match no shareable mount/, token);
    }
  });

  it('takes bridge as a share token, as upstream (every profile shares it anyway)', () => {
    const plain = planSession(request({ profile: 'work' }), hostFacts()).plan;
    const shared = planSession(request({ profile: 'work', share: ['bridge'] }), hostFacts()).plan;
    assert.deepEqual(shared.create.HostConfig.Binds, plain.create.HostConfig.Binds);
  });

  it('refuses a profile name with a backslash, as upstream', () => {
    assert.throws(() => planSession(request({ profile: 'a\\b' }), hostFacts()), /Invalid profile name/);
  });

  it('labels a profile container with its profile, and only a profile container', () => {
    assert.equal(planSession(request({ profile: 'work' }), hostFacts()).plan.create.Labels['dev.toolbox.profile'], 'work');
    assert.equal(planSession(request(), hostFacts()).plan.create.Labels['dev.toolbox.profile'], undefined);
  });

  it("creates the profile's own directories (the engine makes them 0700), never the default root's shared ones", () => {
    const { plan } = planSession(request({ profile: 'work', share: ['gh'] }), hostFacts());
    const P = `${R}/profiles/work`;
    assert.ok(plan.ensureDirs.includes(`${P}/.claude`));
    assert.ok(plan.ensureDirs.includes(`${P}/certs`));
    assert.ok(plan.ensureDirs.includes(`${R}/gh`));
    assert.ok(!plan.ensureDirs.includes(`${R}/.claude`));
  });

  it('says so when a mounts: entry of its own stays on ~/.toolbox under a profile, and keeps its source', () => {
    const { plan, warnings } = planSession(
      request(
        { profile: 'work' },
        {
          mounts: [
            { name: 'gws', source: '~/.toolbox/gws-alt' },
            { name: 'kube', source: '/srv/kube' },
          ],
        },
      ),
      hostFacts(),
    );
    assert.ok(plan.create.HostConfig.Binds.includes(`${R}/gws-alt:${H}/.config/gws`));
    const said = warnings.filter((w) => w.includes('outside the profile'));
    assert.equal(said.length, 1, warnings.join('\n'));
    assert.match(said[0]!, /Mount "gws" keeps its own source \/home\/u\/\.toolbox\/gws-alt/);
    assert.equal(planSession(request({}, { mounts: [{ name: 'gws', source: '~/.toolbox/gws-alt' }] }), hostFacts()).warnings.length, 0);
  });
});

describe('planSession: user mounts', () => {
  const binds = (config: Partial<ToolboxConfig>, existing?: string[]) => planSession(request({}, config), hostFacts(existing));

  it('patches a known mount when no target is given', () => {
    const { plan } = binds({
      mounts: [
        { name: 'gh', readonly: true },
        { name: 'ssh', readonly: false },
      ],
    });
    assert.ok(plan.create.HostConfig.Binds.includes(`${R}/gh:${H}/.config/gh:ro`));
    assert.ok(plan.create.HostConfig.Binds.includes(`/home/u/.ssh:${H}/.ssh`));
  });

  it('replaces a known mount in place when a target is given', () => {
    const { plan } = binds({ mounts: [{ name: 'docker', source: '~/dockercfg', target: '/home/toolbox/.docker' }] }, ['/home/u/dockercfg']);
    const all = plan.create.HostConfig.Binds;
    assert.equal(all[all.indexOf(`${R}/sonar:${H}/.sonar`) + 1], `/home/u/dockercfg:${H}/.docker`);
    assert.ok(!all.includes(`${R}/docker:${H}/.docker`));
  });

  it('appends an unknown mount, resolving a relative source against the workspace', () => {
    const { plan, warnings } = binds({ mounts: [{ name: 'data', source: './data', target: '/data', readonly: true }] }, [
      '/home/u/proj/data',
      '/var/run/docker.sock',
    ]);
    const all = plan.create.HostConfig.Binds;
    assert.equal(all[all.indexOf('/var/run/docker.sock:/var/run/docker.sock') + 1], '/home/u/proj/data:/data:ro');
    assert.deepEqual(warnings, []);
  });

  it('skips an appended mount whose host path is missing, with a warning naming it', () => {
    const { plan, warnings } = binds({ mounts: [{ name: 'data', source: '/nope', target: '/data' }] });
    assert.ok(!plan.create.HostConfig.Binds.some((b) => b.endsWith(':/data')));
    assert.equal(warnings.length, 1);
    assert.match(warnings[0], /Mount "data" skipped: host path \/nope does not exist/);
  });

  it('creates an appended mount source when create_if_missing is set', () => {
    const { plan } = binds({ mounts: [{ name: 'cache', source: '~/cache', target: 'cache', createIfMissing: true }] });
    assert.ok(plan.create.HostConfig.Binds.includes(`/home/u/cache:${H}/cache`));
    assert.ok(plan.ensureDirs.includes('/home/u/cache'));
  });

  it('drops a disabled mount', () => {
    const { plan } = binds({
      mounts: [
        { name: 'kube', disabled: true },
        { name: 'docker-sock', disabled: true },
      ],
    });
    assert.ok(!plan.create.HostConfig.Binds.some((b) => b.includes('/.kube')));
    assert.ok(!plan.create.HostConfig.Binds.some((b) => b.includes('docker.sock')));
    assert.equal(plan.create.HostConfig.GroupAdd, undefined);
  });

  it('ignores a patch of an unknown mount name with a warning naming it, and plans the rest', () => {
    const plain = binds({}).plan.create.HostConfig.Binds;
    const { plan, warnings } = binds({
      mounts: [
        { name: 'nope', readonly: true },
        { name: 'kube', disabled: true },
      ],
    });
    assert.deepEqual(
      plan.create.HostConfig.Binds,
      plain.filter((b) => !b.endsWith(`:${H}/.kube`)),
    );
    assert.equal(warnings.length, 1);
    assert.match(warnings[0], /named nope, but the container has no default mount by that name, so that entry is ignored/);
  });

  it('refuses a target without a source', () => {
    assert.throws(() => binds({ mounts: [{ name: 'x', target: '/x' }] }), /sets a target but no source/);
  });

  // Read-write as upstream (filippolmt/toolbox@690a7eac56b4480a76f011992f0f0ee2c5d9ff86 internal/mountplan/inherit_host_auth.go): token refreshes write there.
  it('binds the host credential path read-write for inherit_host_auth, keeping the mount name', () => {
    const { plan } = binds({ inheritHostAuth: ['claude'] }, ['/home/u/.claude', '/var/run/docker.sock']);
    assert.equal(plan.create.HostConfig.Binds[0], `/home/u/.claude:${H}/.claude`);
    assert.equal(plan.mounts[0].name, 'claude');
    assert.ok(plan.create.Env.includes('TOOLBOX_HOST_AGENT_HOME=/home/u'));
    assert.ok(plan.create.Env.includes(`TOOLBOX_HOST_CODEX_HOME=${R}/.codex`));
  });

  it('refuses inherit_host_auth when the host path is missing or the CLI is unknown', () => {
    assert.throws(() => binds({ inheritHostAuth: ['gh'] }), /host path \/home\/u\/.config\/gh does not exist/);
    assert.throws(() => binds({ inheritHostAuth: ['bat'] }), /"bat", which has no known host credential path/);
  });
});

describe('planSession: host paths that must exist', () => {
  it('skips ssh and gitconfig silently when the host has neither', () => {
    const { plan, warnings } = planSession(request(), hostFacts(['/var/run/docker.sock']));
    assert.ok(!plan.create.HostConfig.Binds.some((b) => b.includes('/.ssh') || b.includes('/.gitconfig')));
    assert.deepEqual(warnings, []);
  });

  it("binds the host's own ~/.gitconfig read-only, and the mounts root's gitconfig too (issue 11, finding 1)", () => {
    // A writable host ~/.gitconfig let the container add `[credential] helper = !sh -c …`, which the
    // host's git (and the bridge's `git credential`) then ran as the user.
    const fallback = planSession(request(), hostFacts(['/home/u/.gitconfig'])).plan;
    const git = fallback.mounts.find((m) => m.name === 'gitconfig');
    assert.deepEqual(git && { source: git.source, target: git.target, readonly: git.readonly }, {
      source: '/home/u/.gitconfig',
      target: `${H}/.gitconfig`,
      readonly: true,
    });
    assert.ok(fallback.create.HostConfig.Binds.includes(`/home/u/.gitconfig:${H}/.gitconfig:ro`));
    // Upstream's ~/.toolbox/gitconfig is a symlink to ~/.gitconfig: read-only as well.
    const own = planSession(request(), hostFacts([`${R}/gitconfig`, '/home/u/.gitconfig'])).plan;
    assert.ok(own.create.HostConfig.Binds.includes(`${R}/gitconfig:${H}/.gitconfig:ro`));
    // Every host-home config the defaults share (ssh, gitconfig) is read-only.
    const shared = planSession(request(), hostFacts(['/home/u/.gitconfig', '/home/u/.ssh'])).plan.mounts.filter(
      (m) => m.source.startsWith('/home/u/.') && !m.source.startsWith(R),
    );
    assert.deepEqual(
      shared.map((m) => [m.name, m.readonly]),
      [
        ['ssh', true],
        ['gitconfig', true],
      ],
    );
  });

  it('warns when a mounts: patch makes the host gitconfig or ssh writable, and honours it', () => {
    const { plan, warnings } = planSession(
      request({}, { mounts: [{ name: 'gitconfig', readonly: false }] }),
      hostFacts(['/home/u/.gitconfig', '/var/run/docker.sock']),
    );
    assert.ok(plan.create.HostConfig.Binds.includes(`/home/u/.gitconfig:${H}/.gitconfig`));
    assert.equal(warnings.length, 1);
    assert.match(warnings[0], /Mount "gitconfig" makes your host's ~\/\.gitconfig writable from the container/);
    // A patched source is the user's own file, not the host's config: no warning.
    const moved = planSession(
      request({}, { mounts: [{ name: 'gitconfig', source: '~/box-gitconfig', readonly: false }] }),
      hostFacts(['/home/u/box-gitconfig', '/var/run/docker.sock']),
    );
    assert.deepEqual(moved.warnings, []);
  });

  it('binds an existing ssh source under the mounts root as upstream would', () => {
    const { plan } = planSession(request(), hostFacts([`${R}/ssh`, '/home/u/.ssh']));
    assert.ok(plan.create.HostConfig.Binds.includes(`${R}/ssh:${H}/.ssh:ro`));
  });

  it('drops a missing Docker socket with a warning and adds no docker group', () => {
    const { plan, warnings } = planSession(request(), hostFacts(['/home/u/.ssh'], 998));
    assert.ok(!plan.create.HostConfig.Binds.some((b) => b.includes('docker.sock')));
    assert.equal(plan.create.HostConfig.GroupAdd, undefined);
    assert.equal(warnings.length, 1);
    assert.match(warnings[0], /Docker socket \/var\/run\/docker.sock does not exist/);
  });

  it('adds only the root group when the socket group is unknown or root (Docker Desktop)', () => {
    assert.deepEqual(planSession(request(), hostFacts()).plan.create.HostConfig.GroupAdd, ['0']);
    const desktop = hostFacts(undefined, 0);
    assert.deepEqual(planSession(request(), desktop).plan.create.HostConfig.GroupAdd, ['0']);
  });

  it('adds the root group and the socket group when the socket is mounted under another source', () => {
    const { plan } = planSession(
      request({}, { mounts: [{ name: 'docker-sock', source: '/run/user/1000/docker.sock' }] }),
      hostFacts(['/run/user/1000/docker.sock'], 999),
    );
    assert.ok(plan.create.HostConfig.Binds.includes('/run/user/1000/docker.sock:/var/run/docker.sock'));
    assert.deepEqual(plan.create.HostConfig.GroupAdd, ['0', '999']);
  });
});

describe('planSession: paths Docker cannot bind', () => {
  it('refuses a folder path with ":" before naming or planning anything, with upstream\'s reason', () => {
    for (const ws of ['/home/u/a:b', '/home/u/proj:ro', '/srv/x:/y']) {
      const req = request({ workspace: ws });
      assert.throws(() => planSession(req, hostFacts()), /contains ":", which Docker's bind-mount format uses as a separator/, ws);
      assert.throws(() => sessionContainerName(req), /contains ":"/, ws);
    }
  });

  it('refuses a mount whose source has ":" instead of sending a bind that means something else', () => {
    const req = request({}, { mounts: [{ name: 'data', source: '/srv/a:b', target: '/data' }] });
    assert.throws(() => planSession(req, hostFacts(['/srv/a:b'])), /Mount "data" binds \/srv\/a:b at \/data/);
  });
});

describe('planSession: the workspace mirror', () => {
  const cases: Array<[string, string | undefined]> = [
    ['/', undefined],
    ['/workspace', undefined],
    ['/workspace/sub', undefined],
    ['/usr/x', undefined],
    ['/home/toolbox/x', undefined],
    ['/home/toolbox', undefined],
    ['/root/p', undefined],
    ['/lib64/x', undefined],
    ['/etc/p', undefined],
    ['/var/tmp/x', undefined],
    ['/libfoo/x', '/libfoo/x'],
    ['/home/toolboxer/p', '/home/toolboxer/p'],
    ['/tmp/x', '/tmp/x'],
    ['/srv/a/', '/srv/a'],
  ];
  for (const [path, mirror] of cases) {
    it(`${mirror ? 'mirrors' : 'does not mirror'} ${path}`, () => {
      assert.equal(workspaceMirror(path), mirror);
      const { plan } = planSession(request({ workspace: path }), hostFacts());
      assert.equal(plan.create.WorkingDir, mirror ?? '/workspace');
      assert.ok(plan.create.Env.includes(`PWD=${mirror ?? '/workspace'}`));
      const mirrors = plan.mounts.filter((m) => m.name === 'workspace-mirror');
      assert.deepEqual(
        mirrors.map((m) => m.target),
        mirror ? [mirror] : [],
      );
    });
  }
});

describe('planSession: a per-run peer override (issue 13, item 5)', () => {
  it('labels the container with what that open asked for', () => {
    assert.deepEqual(planSession(request({ peer: true, peerOverride: true }), hostFacts()).plan.create.Labels, {
      'dev.toolbox.workspace': '/home/u/proj',
      'dev.toolbox.peer-run': 'on',
    });
    assert.equal(planSession(request({ peer: false, peerOverride: true }), hostFacts()).plan.create.Labels['dev.toolbox.peer-run'], 'off');
  });

  it('sets no label when the folder setting decided', () => {
    assert.deepEqual(Object.keys(planSession(request({ peer: false }), hostFacts()).plan.create.Labels), ['dev.toolbox.workspace']);
  });
});

describe('planSession: switches', () => {
  it('peer off: bare-path name, no PidMode and no socket volume', () => {
    const { plan } = planSession(request({ peer: false }), hostFacts());
    assert.equal(plan.name, `toolbox-proj-${h8('/home/u/proj')}`);
    assert.equal(plan.create.HostConfig.PidMode, undefined);
    assert.ok(!plan.create.HostConfig.Binds.some((b) => b.includes('/tmp/cc-socks')));
  });

  it('peer on joins the anchor of the given namespace', () => {
    const { plan } = planSession(request({ names: objectNames('tbxtunit') }), hostFacts());
    assert.equal(plan.create.HostConfig.PidMode, 'container:tbxtunit-peer-anchor');
    assert.ok(plan.create.HostConfig.Binds.includes('tbxtunit-cc-socks:/tmp/cc-socks'));
  });

  it('bridge false: no bridge mounts and no host.docker.internal', () => {
    const { plan } = planSession(request({ bridge: undefined }, { bridge: false }), hostFacts());
    assert.ok(!plan.create.HostConfig.Binds.some((b) => b.includes('/.toolbox/bridge') || b.includes('/.toolbox/browser')));
    assert.deepEqual(plan.create.HostConfig.ExtraHosts, []);
  });

  it('always runs unconfined by seccomp and starts zsh: no config switches them (tools: was removed)', () => {
    const { plan } = planSession(request(), hostFacts());
    assert.deepEqual(plan.create.HostConfig.SecurityOpt, ['seccomp=unconfined']);
    assert.deepEqual(plan.create.Cmd, ['/bin/zsh']);
  });

  it("toolbox.seccomp default keeps Docker's profile (no SecurityOpt); unconfined or unset is upstream's seccomp=unconfined", () => {
    assert.deepEqual(planSession(request({ seccomp: 'default' }), hostFacts()).plan.create.HostConfig.SecurityOpt, []);
    assert.deepEqual(planSession(request({ seccomp: 'unconfined' }), hostFacts()).plan.create.HostConfig.SecurityOpt, [
      'seccomp=unconfined',
    ]);
    assert.deepEqual(planSession(request({ seccomp: undefined }), hostFacts()).plan.create.HostConfig.SecurityOpt, ['seccomp=unconfined']);
    // The profile is not part of the container's identity: the same folder, the same container.
    assert.equal(
      planSession(request({ seccomp: 'default' }), hostFacts()).plan.name,
      planSession(request({ seccomp: 'unconfined' }), hostFacts()).plan.name,
    );
  });

  it('managed_statusline false opts out through the env', () => {
    const { plan } = planSession(request({}, { managedStatusline: false }), hostFacts());
    assert.equal(plan.create.Env[6], 'TOOLBOX_MANAGED_STATUSLINE=0');
  });

  it('proximo: CA mounted read-only, CA env before the agent homes, and one host entry per routed name', () => {
    const { plan } = planSession(
      request({ proximo: { caPath: '/home/u/.proximo/tls/ca.pem', hosts: ['app.test', 'api.test'] } }, { env: { A: '1' } }),
      hostFacts(['/home/u/.proximo/tls/ca.pem', '/var/run/docker.sock']),
    );
    assert.ok(plan.create.HostConfig.Binds.includes('/home/u/.proximo/tls/ca.pem:/etc/ssl/proximo-ca.pem:ro'));
    assert.deepEqual(plan.create.Env.slice(6), [
      'NODE_EXTRA_CA_CERTS=/etc/ssl/proximo-ca.pem',
      'TOOLBOX_PROXIMO_CA=/etc/ssl/proximo-ca.pem',
      'TOOLBOX_HOST_AGENT_HOME=/home/u/.toolbox',
      'TOOLBOX_HOST_CODEX_HOME=/home/u/.toolbox/.codex',
      'SHELL=/bin/zsh',
      'A=1',
    ]);
    assert.deepEqual(plan.create.HostConfig.ExtraHosts, [
      'host.docker.internal:host-gateway',
      'app.test:host-gateway',
      'api.test:host-gateway',
    ]);
  });

  it('publishes ports on 127.0.0.1 unless a host IP is given', () => {
    const { plan } = planSession(
      request({
        ports: [
          { hostPort: '8080', containerPort: 80 },
          { hostPort: '8081', containerPort: 80, hostIp: '0.0.0.0' },
          { hostPort: '5353', containerPort: 53, protocol: 'udp' },
        ],
      }),
      hostFacts(),
    );
    assert.deepEqual(plan.create.ExposedPorts, { '80/tcp': {}, '53/udp': {} });
    assert.deepEqual(plan.create.HostConfig.PortBindings, {
      '80/tcp': [
        { HostIp: '127.0.0.1', HostPort: '8080' },
        { HostIp: '0.0.0.0', HostPort: '8081' },
      ],
      '53/udp': [{ HostIp: '127.0.0.1', HostPort: '5353' }],
    });
  });

  it('a named shell gets its name and overlays its env on the user env', () => {
    const { plan } = planSession(
      request({ namedShell: 'Infra' }, { env: { A: 'top', B: 'top' }, shells: { infra: { env: { B: 'shell', C: 'shell' } } } }),
      hostFacts(),
    );
    assert.equal(plan.name, 'toolbox-named-infra.peer');
    assert.deepEqual(plan.create.Env.slice(-3), ['A=top', 'B=shell', 'C=shell']);
  });

  it("names the host after the container, as one RFC 1123 label: a named shell's .peer becomes -peer (issue 13, item 10)", () => {
    const label = /^[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?$/;
    const named = planSession(request({ namedShell: 'Infra' }), hostFacts()).plan;
    assert.equal(named.create.Hostname, 'toolbox-named-infra-peer');
    const long = planSession(request({ namedShell: 'x'.repeat(49) }), hostFacts()).plan;
    assert.ok(long.name.length > 63, long.name);
    assert.equal(long.create.Hostname, long.name.slice(0, 63).replace(/[.]/g, '-').replace(/-+$/, ''));
    for (const plan of [named, long, planSession(request({ workspace: '/home/u/Ünïcode Proj' }), hostFacts()).plan]) {
      assert.match(plan.create.Hostname, label, plan.create.Hostname);
    }
  });

  it('sets SHELL to the shell it runs, unless the user env sets its own', () => {
    assert.ok(planSession(request({}), hostFacts()).plan.create.Env.includes('SHELL=/bin/zsh'));
    const own = planSession(request({}, { env: { SHELL: '/bin/bash' } }), hostFacts()).plan.create.Env;
    assert.deepEqual(
      own.filter((e) => e.startsWith('SHELL=')),
      ['SHELL=/bin/bash'],
    );
  });

  it('refuses a relative workspace path', () => {
    assert.throws(() => planSession(request({ workspace: 'proj' }), hostFacts()), /not absolute/);
  });
});

describe("editRoots: what the bridge's /edit may open for a container", () => {
  it('is the sources of its bind mounts without the bridge state, the run dir and the Docker socket', () => {
    const { plan } = planSession(
      request({}, { mounts: [{ name: 'notes', source: '/srv/notes', target: '/notes', readonly: true }] }),
      hostFacts(['/home/u/.ssh', '/home/u/.gitconfig', '/var/run/docker.sock', '/srv/notes']),
    );
    const roots = editRoots(plan.mounts);
    for (const want of ['/home/u/proj', `${R}/.claude`, `${R}/.codex`, '/home/u/.ssh', '/home/u/.gitconfig', '/srv/notes']) {
      assert.ok(roots.includes(want), want);
    }
    for (const never of [`${R}/toolbox/bridge`, `${R}/toolbox/bridge/run`, '/var/run/docker.sock', R, '/home/u']) {
      assert.ok(!roots.includes(never), never);
    }
    assert.equal(new Set(roots).size, roots.length, 'each root once (the workspace and its mirror share a source)');
    // Other workspaces' bridge tokens live under <mounts root>/toolbox/vscode: no root covers them.
    const otherToken = `${R}/toolbox/vscode/toolbox-other-1a2b3c4d/token`;
    assert.ok(!roots.some((r) => otherToken === r || otherToken.startsWith(`${r}/`)));
  });

  it("gives the agent homes proximo skill is pinned to: the .claude source's parent and the .codex source", () => {
    const { plan } = planSession(request({}, { mountsRoot: '/data/tb' }), hostFacts());
    assert.deepEqual(agentHomes(plan.mounts), { agentHome: '/data/tb', codexHome: '/data/tb/.codex' });
  });
});

describe('sessionContainerName', () => {
  it('names the same container the full plan does, for workspace and named shells, peer on and off', () => {
    const cases: Array<Partial<SessionRequest>> = [
      {},
      { peer: false },
      { profile: '' },
      { namedShell: 'Infra Tools' },
      { namedShell: 'infra', peer: false },
      { workspace: '/home/u/Some Project/' },
    ];
    for (const over of cases) {
      const req = request(over);
      assert.equal(sessionContainerName(req), planSession(req, hostFacts()).plan.name, JSON.stringify(over));
    }
  });
});

describe('the session holder socket in the container env (decision 0032)', () => {
  const socketVar = (env: string[]) => env.filter((e) => e.startsWith(`${ENV.sessionSocket}=`));

  it('names the run dir socket when shells are held and the bridge is mounted', () => {
    const { plan } = planSession(request({ heldSessions: true }), hostFacts());
    assert.deepEqual(socketVar(plan.create.Env), [`${ENV.sessionSocket}=${CONTAINER.bridgeRunDir}/sessions.sock`]);
  });

  it('names the container-only socket without the bridge, and nothing when shells are not held', () => {
    const { plan } = planSession(request({ heldSessions: true, bridge: undefined }), hostFacts());
    assert.deepEqual(socketVar(plan.create.Env), [`${ENV.sessionSocket}=${CONTAINER.sessionFallbackDir}/sessions.sock`]);
    assert.deepEqual(socketVar(planSession(request(), hostFacts()).plan.create.Env), []);
    assert.deepEqual(socketVar(planSession(request({ heldSessions: false }), hostFacts()).plan.create.Env), []);
  });
});

describe('planSession: the scoped Docker endpoint in the docker-sock mount’s place (issue 27)', () => {
  const DIR = '/run/user/1000/toolbox/docker-1a2b3c4d';

  it('binds the endpoint directory read-only and points DOCKER_HOST into it; no host socket, no docker group', () => {
    const { plan, warnings } = planSession(request({ dockerEndpoint: DIR }), hostFacts());
    const binds = plan.create.HostConfig.Binds;
    assert.ok(binds.includes(`${DIR}:/run/toolbox-docker:ro`), binds.join('\n'));
    assert.ok(!binds.some((b) => b.includes('docker.sock')), 'the host socket is not bound');
    assert.equal(plan.create.HostConfig.GroupAdd, undefined);
    assert.ok(plan.create.Env.includes('DOCKER_HOST=unix:///run/toolbox-docker/docker.sock'));
    assert.ok(plan.create.Env.includes('TESTCONTAINERS_HOST_OVERRIDE=host.docker.internal'));
    assert.deepEqual(warnings, []);
    // In docker-sock's place in the plan's order, and never a directory the adapter creates itself.
    assert.ok(!plan.ensureDirs.includes(DIR));
    assert.equal(plan.mounts.find((m) => m.target === '/run/toolbox-docker')?.name, 'docker-endpoint');
  });

  it('needs no Docker socket on the host (the endpoint forwards to the engine in use, Podman too)', () => {
    const { plan, warnings } = planSession(request({ dockerEndpoint: DIR }), hostFacts(['/home/u/.ssh']));
    assert.ok(plan.create.HostConfig.Binds.includes(`${DIR}:/run/toolbox-docker:ro`));
    assert.ok(!warnings.some((w) => w.includes('Docker socket')), warnings.join('\n'));
  });

  it('a disabled docker-sock mount turns Docker off altogether: no endpoint, no DOCKER_HOST', () => {
    const { plan } = planSession(request({ dockerEndpoint: DIR }, { mounts: [{ name: 'docker-sock', disabled: true }] }), hostFacts());
    assert.ok(!plan.create.HostConfig.Binds.some((b) => b.includes('toolbox-docker') || b.includes('docker.sock')));
    assert.ok(!plan.create.Env.some((e) => e.startsWith('DOCKER_HOST=')));
  });

  it('without the bridge, Testcontainers is not told to use host.docker.internal (nothing resolves it)', () => {
    const { plan } = planSession(request({ dockerEndpoint: DIR }, { bridge: false }), hostFacts());
    assert.ok(plan.create.Env.includes('DOCKER_HOST=unix:///run/toolbox-docker/docker.sock'));
    assert.ok(!plan.create.Env.some((e) => e.startsWith('TESTCONTAINERS_HOST_OVERRIDE=')));
  });

  it('the user’s own DOCKER_HOST in env: comes after ours, so it wins', () => {
    const { plan } = planSession(request({ dockerEndpoint: DIR }, { env: { DOCKER_HOST: 'tcp://elsewhere:2375' } }), hostFacts());
    const all = plan.create.Env.filter((e) => e.startsWith('DOCKER_HOST='));
    assert.deepEqual(all, ['DOCKER_HOST=unix:///run/toolbox-docker/docker.sock', 'DOCKER_HOST=tcp://elsewhere:2375']);
  });

  it('without an endpoint (raw-socket), the host socket as the toolbox CLI mounts it', () => {
    const { plan } = planSession(request(), hostFacts());
    assert.ok(plan.create.HostConfig.Binds.includes('/var/run/docker.sock:/var/run/docker.sock'));
    assert.ok(!plan.create.Env.some((e) => e.startsWith('DOCKER_HOST=')));
  });
});
