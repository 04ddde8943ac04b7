import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { DEFAULT_CONFIG, type ToolboxConfig } from '../../extension/src/config/model';
import { objectNames } from '../../extension/src/contract/objects';
import type { HostFacts, HostPathFact } from '../../extension/src/contract/types';
import {
  folderTurnOff,
  hostReach,
  protectedPathsOf,
  reachTitle,
  settingWithTurnOff,
  tildePath,
  turnOffChange,
  withTurnOff,
  type HostReach,
  type InspectedMount,
} from '../../extension/src/plan/posture';
import { planSession } from '../../extension/src/plan/session';
import type { SessionRequest } from '../../extension/src/plan/types';

// Issue 11, finding 10: what a container can reach on the host, read only from its mounts.
const HOME = '/home/u';
const R = `${HOME}/.toolbox`;
const H = '/home/toolbox';

function facts(existing: string[]): HostFacts {
  const set = new Set(existing);
  return { uid: 1000, gid: 1000, home: HOME, platform: 'linux', pathExists: (p) => set.has(p) };
}

/** The container's inspect Mounts as Docker reports them for the planned Binds. */
function inspected(binds: string[]): InspectedMount[] {
  return binds.map((b) => {
    const [source, target, mode] = b.split(':') as [string, string, string | undefined];
    return source.startsWith('/')
      ? { Type: 'bind', Source: source, Destination: target, RW: mode !== 'ro' }
      : { Type: 'volume', Source: `/var/lib/docker/volumes/${source}/_data`, Destination: target, RW: true };
  });
}

function planned(config: Partial<ToolboxConfig>, existing: string[], over: Partial<SessionRequest> = {}): InspectedMount[] {
  const { plan } = planSession(
    {
      workspace: `${HOME}/proj`,
      config: { ...DEFAULT_CONFIG, ...config },
      peer: true,
      bridge: { stateDir: `${R}/toolbox/vscode/x`, runDir: `${R}/toolbox/vscode/x/run` },
      proximo: { caPath: `${HOME}/.proximo/tls/ca.pem`, hosts: [] },
      image: 'img',
      names: objectNames(),
      ...over,
    },
    facts(existing),
  );
  return inspected(plan.create.HostConfig.Binds);
}

const brief = (list: HostReach[]) => list.map((r) => [r.kind, r.source, r.target, r.readonly, r.defaultMount ?? r.authKey ?? '-']);

describe('hostReach from a planned container', () => {
  it("upstream's defaults with ~/.ssh, ~/.gitconfig and the Docker socket on the host", () => {
    const list = hostReach(planned({}, [`${HOME}/.ssh`, `${HOME}/.gitconfig`, '/var/run/docker.sock']), HOME);
    assert.deepEqual(brief(list), [
      ['docker-socket', '/var/run/docker.sock', '/var/run/docker.sock', false, 'docker-sock'],
      ['host-ssh', `${HOME}/.ssh`, `${H}/.ssh`, true, 'ssh'],
      ['host-path', `${HOME}/.gitconfig`, `${H}/.gitconfig`, true, 'gitconfig'], // read-only: the host's git reads it (issue 11)
    ]);
  });

  it('nothing beyond the workspace when the socket, ~/.ssh and ~/.gitconfig are absent', () => {
    assert.deepEqual(hostReach(planned({}, []), HOME), []);
  });

  it("the bridge's mounts are toolbox's own, wherever their host directories are (XDG_RUNTIME_DIR, /tmp)", () => {
    const bridge = { stateDir: `${R}/toolbox/vscode/x`, runDir: '/run/user/1000/toolbox-1000/x' };
    assert.deepEqual(hostReach(planned({}, [], { bridge }), HOME), []);
    const tmp = { stateDir: '/tmp/toolbox-0/state', runDir: '/tmp/toolbox-0/x' };
    assert.deepEqual(hostReach(planned({}, [], { bridge: tmp }), HOME), []);
  });

  it('~/.toolbox/ssh (keys meant for the container) is not the host keys', () => {
    const list = hostReach(planned({}, [`${R}/ssh`, `${HOME}/.ssh`]), HOME);
    assert.deepEqual(brief(list), []);
  });

  it('inherit_host_auth credential directories, with their key', () => {
    const list = hostReach(planned({ inheritHostAuth: ['gh', 'gcloud'] }, [`${HOME}/.config/gh`, `${HOME}/.config/gcloud`]), HOME);
    assert.deepEqual(brief(list), [
      ['host-auth', `${HOME}/.config/gcloud`, `${H}/.config/gcloud`, false, 'gcloud'],
      ['host-auth', `${HOME}/.config/gh`, `${H}/.config/gh`, false, 'gh'],
    ]);
    assert.equal(list[1]!.defaultMount, 'gh');
  });

  it('an extra mount outside the workspace, but not one inside it', () => {
    const mounts = [
      { name: 'aws', source: '~/.aws', target: '.aws', readonly: true },
      { name: 'data', source: '/srv/data', target: '/data' },
      { name: 'sub', source: 'vendor', target: '/vendor' }, // relative: inside the workspace
    ];
    const list = hostReach(planned({ mounts }, [`${HOME}/.aws`, '/srv/data', `${HOME}/proj/vendor`]), HOME);
    assert.deepEqual(brief(list), [
      ['host-path', '/srv/data', '/data', false, '-'],
      ['host-path', `${HOME}/.aws`, `${H}/.aws`, true, '-'],
    ]);
  });

  it("a moved mounts root is the container's own, not a host path", () => {
    assert.deepEqual(hostReach(planned({ mountsRoot: '/data/tb' }, []), HOME), []);
    assert.deepEqual(hostReach(planned({}, []), HOME), []);
  });

  it("a profile root and its shared mounts stay the container's own", () => {
    assert.deepEqual(hostReach(planned({}, [], { profile: 'work', share: ['gh'] }), HOME), []);
  });

  it('a default mount patched to a host directory is listed', () => {
    const list = hostReach(planned({ mounts: [{ name: 'kube', source: '~/.kube' }] }, []), HOME);
    assert.deepEqual(brief(list), [['host-path', `${HOME}/.kube`, `${H}/.kube`, false, 'kube']]);
  });

  it('a patched gh source at the host path reads as host credentials', () => {
    const list = hostReach(planned({ mounts: [{ name: 'gh', source: '~/.config/gh' }] }, []), HOME);
    assert.deepEqual(brief(list), [['host-auth', `${HOME}/.config/gh`, `${H}/.config/gh`, false, 'gh']]);
  });
});

describe('hostReach from raw inspect data', () => {
  const ws = { Type: 'bind', Source: '/src/app', Destination: '/workspace', RW: true };
  it('a Docker or podman socket mounted anywhere', () => {
    const list = hostReach(
      [ws, { Type: 'bind', Source: '/run/user/1000/podman/podman.sock', Destination: '/run/podman.sock', RW: true }],
      HOME,
    );
    assert.deepEqual(brief(list), [['docker-socket', '/run/user/1000/podman/podman.sock', '/run/podman.sock', false, '-']]);
  });
  it('ignores volumes, the proximo CA, the workspace mirror and malformed entries', () => {
    const list = hostReach(
      [
        ws,
        { Type: 'bind', Source: '/src/app', Destination: '/src/app', RW: true },
        { Type: 'volume', Source: '/var/lib/docker/volumes/x/_data', Destination: '/x', RW: true },
        { Type: 'bind', Source: `${HOME}/.proximo/tls/ca.pem`, Destination: '/etc/ssl/proximo-ca.pem', RW: false },
        { Type: 'bind', Destination: '/nowhere' },
        {},
      ],
      HOME,
    );
    assert.deepEqual(list, []);
  });
  it('no mounts at all', () => {
    assert.deepEqual(hostReach(undefined, HOME), []);
    assert.deepEqual(hostReach(null, HOME), []);
  });
  it('a host path next to the workspace is outside it', () => {
    const list = hostReach([ws, { Type: 'bind', Source: '/src/app-secrets', Destination: '/s', RW: false }], HOME);
    assert.deepEqual(brief(list), [['host-path', '/src/app-secrets', '/s', true, '-']]);
  });
  it('the whole home mounted somewhere is listed', () => {
    const list = hostReach([ws, { Type: 'bind', Source: HOME, Destination: '/h', RW: true }], HOME);
    assert.deepEqual(brief(list), [['host-path', HOME, '/h', false, '-']]);
  });
});

describe('turning an item off', () => {
  const config = (over: Partial<ToolboxConfig> = {}) => ({ ...DEFAULT_CONFIG, ...over });
  const item = (over: Partial<HostReach>): HostReach => ({ kind: 'host-path', source: '/x', target: '/x', readonly: false, ...over });
  it('disables the default mount by name', () => {
    assert.deepEqual(
      turnOffChange(item({ kind: 'docker-socket', target: '/var/run/docker.sock', defaultMount: 'docker-sock' }), config()),
      {
        kind: 'disable-mount',
        name: 'docker-sock',
      },
    );
    assert.deepEqual(turnOffChange(item({ kind: 'host-ssh', target: `${H}/.ssh`, defaultMount: 'ssh' }), config()), {
      kind: 'disable-mount',
      name: 'ssh',
    });
  });
  it('drops the inherit_host_auth key when the config lists it', () => {
    const r = item({ kind: 'host-auth', target: `${H}/.config/gh`, defaultMount: 'gh', authKey: 'gh' });
    assert.deepEqual(turnOffChange(r, config({ inheritHostAuth: ['gcloud', 'gh'] })), { kind: 'drop-inherit-host-auth', key: 'gh' });
    assert.deepEqual(turnOffChange(r, config()), { kind: 'disable-mount', name: 'gh' }, 'a gh mount patched by hand');
  });
  it('says why a mount added by an entry without a name cannot be turned off, instead of a patch nothing would match', () => {
    const mounts = [{ source: '~/.aws', target: '.aws' }];
    const change = turnOffChange(item({ target: `${H}/.aws` }), config({ mounts }));
    assert.equal(typeof change, 'string');
    assert.match(
      change as string,
      /The mounts: entry that puts ~\/\.aws at \/home\/toolbox\/\.aws has no name.*Give it a name: in \.toolbox\.yaml/,
    );
  });
  it("disables the user's mount at the target, the last one when several", () => {
    const mounts = [
      { name: 'aws', source: '~/.aws', target: '.aws' },
      { name: 'aws2', source: '~/.aws-other', target: `${H}/.aws` },
    ];
    assert.deepEqual(turnOffChange(item({ target: `${H}/.aws` }), config({ mounts })), { kind: 'disable-mount', name: 'aws2' });
    assert.deepEqual(
      turnOffChange(
        item({ kind: 'docker-socket', target: '/var/run/docker.sock', defaultMount: 'docker-sock' }),
        config({ mounts: [{ name: 'sock', source: '/run/docker.sock', target: '/var/run/docker.sock' }] }),
      ),
      {
        kind: 'disable-mount',
        name: 'sock',
      },
    );
  });
  it('explains when nothing in the config adds it', () => {
    const why = turnOffChange(item({ target: '/data' }), config());
    assert.equal(typeof why, 'string');
    assert.match(why as string, /No mount in this folder's configuration puts anything at \/data/);
  });
  it('titles', () => {
    assert.equal(reachTitle(item({ kind: 'docker-socket' }), HOME), 'Docker socket');
    assert.equal(reachTitle(item({ kind: 'host-ssh' }), HOME), 'Your SSH keys');
    assert.equal(reachTitle(item({ kind: 'host-auth', authKey: 'gh' }), HOME), 'gh credentials');
    assert.equal(reachTitle(item({ source: `${HOME}/.aws` }), HOME), '~/.aws');
    assert.equal(tildePath('/home/uv/x', HOME), '/home/uv/x');
    assert.equal(tildePath(HOME, HOME), '~');
  });
});

describe('toolbox.turnedOffForFolder (where Turn Off for This Folder keeps what it turned off)', () => {
  it('reads the folder’s entry, ignoring anything malformed', () => {
    const setting = { '/home/u/proj': { mounts: ['docker-sock', 3, ''], inherit_host_auth: ['gh'] }, '/other': { mounts: ['ssh'] } };
    assert.deepEqual(folderTurnOff(setting, '/home/u/proj/'), { mounts: ['docker-sock'], inheritHostAuth: ['gh'] });
    assert.deepEqual(folderTurnOff(setting, '/nowhere'), { mounts: [], inheritHostAuth: [] });
    for (const junk of [undefined, null, 'x', [], { '/home/u/proj': 'docker-sock' }, { '/home/u/proj': { mounts: 'ssh' } }]) {
      assert.deepEqual(folderTurnOff(junk, '/home/u/proj'), { mounts: [], inheritHostAuth: [] }, JSON.stringify(junk));
    }
  });

  it('writes the folder’s entry and keeps the others', () => {
    const before = { '/other': { mounts: ['ssh'] } };
    const off = withTurnOff({ mounts: [], inheritHostAuth: [] }, { kind: 'disable-mount', name: 'docker-sock' })!;
    const next = settingWithTurnOff(before, '/home/u/proj', withTurnOff(off, { kind: 'drop-inherit-host-auth', key: 'gh' })!);
    assert.deepEqual(next, { '/other': { mounts: ['ssh'] }, '/home/u/proj': { mounts: ['docker-sock'], inherit_host_auth: ['gh'] } });
    assert.equal(withTurnOff(off, { kind: 'disable-mount', name: 'docker-sock' }), undefined, 'already off');
    assert.deepEqual(folderTurnOff(next, '/home/u/proj'), { mounts: ['docker-sock'], inheritHostAuth: ['gh'] });
  });
});

describe('protected paths in the posture (issue 25, item 2)', () => {
  const WS = `${HOME}/repo/.worktrees/tbx-x`;
  const ROOT = `${HOME}/repo`;
  const OWN = `${ROOT}/.git/worktrees/tbx-x`;
  const tree: Record<string, HostPathFact> = {
    [`${WS}/.git`]: { kind: 'file', links: 1 },
    [`${WS}/.vscode`]: { kind: 'dir' },
    [`${ROOT}/.git`]: { kind: 'dir' },
    [`${ROOT}/.git/config`]: { kind: 'file', links: 1 },
    [`${ROOT}/.git/hooks`]: { kind: 'dir' },
    [`${ROOT}/.git/info`]: { kind: 'dir' },
    [`${ROOT}/.git/worktrees`]: { kind: 'dir' },
    [OWN]: { kind: 'dir' },
  };
  const protectedFacts: HostFacts = {
    ...facts([]),
    lstat: (p) => tree[p] ?? { kind: 'missing' },
    readDir: () => [],
    readSmall: (p) => (p === `${WS}/.git` ? `gitdir: ${OWN}\n` : undefined),
  };
  const plan = planSession(
    {
      workspace: WS,
      config: { ...DEFAULT_CONFIG },
      peer: false,
      image: 'img',
      names: objectNames(),
      worktreeRoot: ROOT,
      protectedPaths: true,
    },
    protectedFacts,
  ).plan;
  const mounts = inspected(plan.create.HostConfig.Binds);

  it('the read-only binds inside the folder and the main .git reach nothing more: only the main .git is listed', () => {
    assert.deepEqual(
      hostReach(mounts, HOME).map((r) => r.source),
      [`${ROOT}/.git`],
    );
  });

  it('lists them, relative to the folder or under the home, and says when a container has none', () => {
    const paths = protectedPathsOf(mounts, plan.create.Labels, HOME);
    assert.ok(paths?.includes('.vscode') && paths.includes('.git') && paths.includes('.envrc'), paths?.join(' '));
    assert.ok(paths?.includes('~/repo/.git/config') && paths.includes('~/repo/.git/worktrees/tbx-x/commondir'), paths?.join(' '));
    assert.ok(!paths?.includes('~/repo/.git/worktrees/tbx-x'), 'its own gitdir is writable');
    assert.equal(protectedPathsOf(mounts, {}, HOME), undefined);
  });
});

describe('hostReach: the scoped Docker endpoint (issue 27)', () => {
  const mounts = [
    { Type: 'bind', Source: '/home/u/proj', Destination: '/workspace', RW: true },
    { Type: 'bind', Source: '/run/user/1000/toolbox/docker-1a2b3c4d', Destination: '/run/toolbox-docker', RW: false },
  ];

  it('is its own kind, not a host path nor the raw socket, and turning it off disables docker-sock', () => {
    const found = hostReach(mounts, '/home/u');
    assert.equal(found.length, 1);
    assert.equal(found[0]?.kind, 'docker-endpoint');
    assert.equal(found[0]?.defaultMount, 'docker-sock');
    assert.equal(reachTitle(found[0]!, '/home/u'), 'Docker');
    assert.deepEqual(turnOffChange(found[0]!, { mounts: [], inheritHostAuth: [] }), { kind: 'disable-mount', name: 'docker-sock' });
  });

  it('the raw socket beside it is still listed first, as root on this host', () => {
    const found = hostReach(
      [...mounts, { Type: 'bind', Source: '/var/run/docker.sock', Destination: '/var/run/docker.sock', RW: true }],
      '/home/u',
    );
    assert.deepEqual(
      found.map((r) => r.kind),
      ['docker-socket', 'docker-endpoint'],
    );
  });
});
