import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { containerSummary, engineSnapshot, viewState } from '../support/summary';
import { driftWarning } from '../../extension/src/plan/drift';
import { objectNames } from '../../extension/src/contract/objects';
import {
  folderOf,
  projectFileOverriddenBy,
  sortForWorkspacesView,
  type ContainerSummary,
  type PeerSetting,
  type PeerSettingSource,
} from '../../extension/src/ui/views/model';
import { driftStatus, findDrift } from '../../extension/src/ui/containers/driftFindings';
import { stopContainerConfirmation } from '../../extension/src/ui/containers/confirmations';
import { numberedTitle } from '../../extension/src/ui/shells/numberedTitle';
import { PROXIMO_DOCS_URL, peerNodes, proximoNodes, treeKey, workspacesNodes } from '../../extension/src/ui/views/treeNodes';
import {
  anchorItem,
  containerContextValue,
  containerDescription,
  containerIcon,
  containerTooltip,
  errorItem,
  folderPeerItem,
  proximoCaItem,
  proximoHostsItem,
  proximoItem,
  proximoWorkspaceDescription,
  proximoWorkspaceItem,
  startedText,
  reachGroupItem,
  reachItem,
  socketVolumeItem,
  sinceText,
} from '../../extension/src/ui/views/treeItems';
import type { HostReach } from '../../extension/src/plan/posture';

const names = objectNames();
const anchorId = 'a1b2c3d4e5f6';

const container = containerSummary;

/** An engine snapshot with these containers, no anchor, no socket volume and no peer sessions. */
const snap = (containers: ContainerSummary[]) => engineSnapshot(containers);

describe('container tree items', () => {
  it('encode state, peer and drift in the contextValue so menus can match on them', () => {
    const c = container();
    assert.equal(
      containerContextValue({ container: c, drift: 'joined-but-planned-off', inThisWindow: true }),
      'container.running.peer.drifted.window',
    );
    assert.equal(
      containerContextValue({ container: container({ state: 'exited', peer: false }), inThisWindow: false }),
      'container.stopped.nopeer',
    );
  });

  it('describe the state and peer messaging in words', () => {
    assert.equal(containerDescription({ container: container(), inThisWindow: true }), 'running · peer on');
    assert.equal(
      containerDescription({ container: container({ state: 'exited', peer: false }), drift: 'planned-on-but-outside', inThisWindow: true }),
      'stopped · peer off · drifted',
    );
  });

  it('show a warning icon for a drifted container and a running icon otherwise', () => {
    assert.equal(containerIcon({ container: container(), drift: 'planned-on-but-outside', inThisWindow: true }).id, 'warning');
    assert.equal(containerIcon({ container: container(), inThisWindow: true }).id, 'vm-running');
    assert.equal(containerIcon({ container: container({ state: 'exited' }), inThisWindow: true }).id, 'vm-outline');
  });

  it('put the drift explanation and the folder in the tooltip', () => {
    const msg = driftWarning('joined-but-planned-off', 'toolbox-app-1234abcd', names);
    const tip = containerTooltip({ container: container(), drift: 'joined-but-planned-off', inThisWindow: true }, msg);
    assert.match(tip, /Folder: \/src\/app/);
    assert.match(tip, /already runs in the shared PID namespace/);
  });
});

describe('drift findings for this window', () => {
  it('name only running containers of this window whose folder setting disagrees', () => {
    const list = [
      container({ name: 'toolbox-app-1', workspace: '/src/app/' }),
      container({ name: 'toolbox-other-2', workspace: '/src/other' }),
      container({ name: 'toolbox-app-3', workspace: '/src/app', state: 'exited' }),
      container({ name: 'toolbox-peer-anchor', kind: 'anchor', workspace: undefined }),
    ];
    const found = findDrift(list, anchorId, new Map([['/src/app', false]]), names);
    assert.deepEqual(
      found.map((f) => [f.container.name, f.drift]),
      [['toolbox-app-1', 'joined-but-planned-off']],
    );
    assert.match(found[0]!.message, /^peer messaging: toolbox-app-1 /);
  });

  it('is empty once the container matches the setting again', () => {
    const found = findDrift([container()], anchorId, new Map([['/src/app', true]]), names);
    assert.deepEqual(found, []);
  });

  it('reports a container outside the namespace, or without the socket volume, when its folder wants peers', () => {
    const outside = container({ name: 'toolbox-app-out', pidMode: '', peer: false });
    const noVolume = container({ name: 'toolbox-app-novol', mountsSocketVolume: false });
    const staleAnchor = container({ name: 'toolbox-app-stale', pidMode: 'container:0ldanch0r000', peer: false });
    const found = findDrift([outside, noVolume, staleAnchor], anchorId, new Map([['/src/app', true]]), names);
    assert.deepEqual(
      found.map((f) => [f.container.name, f.drift]),
      [
        ['toolbox-app-out', 'planned-on-but-outside'],
        ['toolbox-app-novol', 'missing-socket-volume'],
        ['toolbox-app-stale', 'planned-on-but-outside'],
      ],
    );
  });
});

describe('per-run containers (issue 13, item 5)', () => {
  const folderOff = new Map([['/src/app', false]]);

  it('are not drift when they match what their own open asked for, whatever the folder says', () => {
    // Opened with "with Peer Messaging (this run)" while the folder is set to off: in the namespace, as asked.
    const perRunOn = container({ name: 'toolbox-app-run', peerRun: true });
    assert.deepEqual(findDrift([perRunOn], anchorId, folderOff, names), []);
    // Opened "without Peer Messaging (this run)" while the folder wants peers: outside, as asked.
    const perRunOff = container({ name: 'toolbox-app-solo', peerRun: false, pidMode: '', peer: false, mountsSocketVolume: false });
    assert.deepEqual(findDrift([perRunOff], anchorId, new Map([['/src/app', true]]), names), []);
  });

  it('the same container without the label (opened with the setting) is drift once the folder says otherwise', () => {
    const found = findDrift([container({ name: 'toolbox-app-run' })], anchorId, folderOff, names);
    assert.deepEqual(
      found.map((f) => [f.container.name, f.drift, f.perRun]),
      [['toolbox-app-run', 'joined-but-planned-off', false]],
    );
  });

  it('are drift when they no longer match their own request (the anchor was restarted)', () => {
    const stale = container({ name: 'toolbox-app-run', peerRun: true, pidMode: 'container:0ldanch0r000', peer: false });
    const [f] = findDrift([stale], anchorId, folderOff, names);
    assert.equal(f?.drift, 'planned-on-but-outside');
    assert.equal(f?.perRun, true);
    assert.equal(f?.want, true, 'the fix reopens it with peer messaging on, as that run asked');
    assert.match(
      f?.notice.message ?? '',
      /was opened with peer messaging on for that run, but it is no longer in the shared namespace \(the peer anchor was restarted\)/,
    );
  });

  it('are shown as such in the tree', () => {
    assert.equal(containerDescription({ container: container({ peerRun: true }), inThisWindow: true }), 'running · peer on (this run)');
    assert.equal(
      containerDescription({ container: container({ peerRun: false, peer: false }), inThisWindow: true }),
      'running · peer off (this run)',
    );
    assert.match(containerTooltip({ container: container({ peerRun: true }), inThisWindow: true }), /for that run only/);
  });
});

describe('drift notices (issue 13, item 4)', () => {
  const setting = (from: PeerSettingSource, on = false): PeerSetting => ({ on, source: from, projectFileUsable: true });
  const noticeFor = (s: PeerSetting, c = container()) => findDrift([c], anchorId, new Map([['/src/app', s]]), names, '/home/u')[0]!.notice;

  it('read as sentences a newcomer understands: a capital first, no backticks, no CLI, the question the fix answers', () => {
    const cases = [
      noticeFor(setting({ from: 'setting', scope: 'folder' })),
      noticeFor(setting({ from: 'default' }, true), container({ pidMode: '', peer: false })),
      noticeFor(setting({ from: 'default' }, true), container({ mountsSocketVolume: false })),
      noticeFor(setting({ from: 'default' }, true), container({ pidMode: 'container:0ldanch0r000', peer: false })),
    ];
    for (const n of cases) {
      assert.match(n.message, /^[A-Z]/);
      assert.doesNotMatch(n.message + n.detail, /`|toolbox stop|^peer messaging: /);
      assert.match(n.message, /Restart it\? Its open shells will close\.$/);
    }
    assert.equal(
      cases[0]!.message,
      'The container toolbox-app-1234abcd still has peer messaging on; this folder is now set to off. Restart it? Its open shells will close.',
    );
    assert.equal(
      cases[1]!.message,
      'The container toolbox-app-1234abcd still has peer messaging off; this folder is now set to on. Restart it? Its open shells will close.',
    );
  });

  it('details add which setting, set where, what the container has now and what a restart does', () => {
    const d = noticeFor(setting({ from: 'setting', scope: 'folder' })).detail;
    assert.match(
      d,
      /This folder's peer messaging is off \(from the toolbox\.peerMessaging setting in this folder's \.vscode\/settings\.json\)\./,
    );
    assert.match(d, /It runs in the shared PID namespace of the peer anchor and mounts the shared inbox volume toolbox-cc-socks\./);
    assert.match(
      d,
      /Restart stops toolbox-app-1234abcd, which closes its open shells and ends the programs running in them, in every window, then opens a new shell with peer messaging off\./,
    );
    assert.match(noticeFor(setting({ from: 'project-file', file: '/src/app/.toolbox.yaml' })).detail, /\(from \.toolbox\.yaml\)/);
    assert.match(
      noticeFor(setting({ from: 'project-file', file: '/home/u/src/.toolbox.yaml' })).detail,
      /\(from ~\/src\/\.toolbox\.yaml\)/,
    );
    assert.match(noticeFor(setting({ from: 'user-file', file: '/home/u/.toolbox.yaml' })).detail, /\(from ~\/\.toolbox\.yaml\)/);
    assert.match(
      noticeFor(setting({ from: 'env', variable: 'TOOLBOX_PEER_MESSAGING' })).detail,
      /from the TOOLBOX_PEER_MESSAGING environment variable/,
    );
    assert.match(noticeFor(setting({ from: 'setting', scope: 'user' })).detail, /setting in your user settings/);
  });
});

describe('the folder row of the Peer Messaging view (issue 13, item 6)', () => {
  const on: PeerSetting = { on: true, source: { from: 'default' }, projectFileUsable: true };
  const off: PeerSetting = { on: false, source: { from: 'project-file', file: '/src/app/.toolbox.yaml' }, projectFileUsable: true };

  it("shows this folder's setting and where it comes from", () => {
    assert.deepEqual(
      [folderPeerItem('/src/app', on, '', false).label, folderPeerItem('/src/app', on, '', false).description],
      ['This folder: on', 'default'],
    );
    const item = folderPeerItem('/src/app', off, '', false);
    assert.deepEqual([item.label, item.description, item.contextValue], ['This folder: off', 'from .toolbox.yaml', 'folderPeer.off']);
    const set = folderPeerItem('/src/app', { on: false, source: { from: 'setting', scope: 'folder' }, projectFileUsable: true }, '', false);
    assert.equal(set.description, 'from .vscode/settings.json');
    assert.match(set.tooltip, /Set by the toolbox\.peerMessaging setting in this folder's \.vscode\/settings\.json\./);
    const user = folderPeerItem('/src/app', { on: false, source: { from: 'setting', scope: 'user' }, projectFileUsable: true }, '', false);
    assert.equal(user.description, 'from user settings');
    const env = folderPeerItem(
      '/src/app',
      { on: false, source: { from: 'env', variable: 'TOOLBOX_PEER_MESSAGING' }, projectFileUsable: true },
      '',
      false,
    );
    assert.equal(env.description, 'from TOOLBOX_PEER_MESSAGING');
    assert.match(set.tooltip, /Toggle Peer Messaging for This Folder… asks where to write/);
    assert.match(set.tooltip, /\.toolbox\.yaml \(peer_messaging:, read by the toolbox CLI too/);
  });

  it('names the folder when the window has several, and comes first in the view', () => {
    assert.equal(folderPeerItem('/src/app', on, '', true).label, 'app: on');
    const snapshot = {
      containers: [],
      anchor: { name: 'toolbox-peer-anchor', state: 'missing' as const },
      volume: { name: 'toolbox-cc-socks', exists: false },
      members: [],
      sessions: [],
    };
    const nodes = peerNodes({
      snapshot,
      wantPeer: new Map(),
      peerSettings: new Map([['/src/app', off]]),
      findings: [],
      loading: false,
      takenAt: 0,
    });
    assert.equal(nodes[0]?.label, 'This folder: off');
    assert.equal(nodes[0]?.folder, '/src/app', 'Toggle takes the folder from the row');
    assert.equal(nodes[1]?.id, 'anchor');
  });

  it('has the toggle on its line in package.json', () => {
    const pkg = JSON.parse(readFileSync(join(__dirname, '../../../package.json'), 'utf8')) as {
      contributes: { menus: Record<string, Array<{ command: string; when?: string; group?: string }>> };
    };
    const inline = pkg.contributes.menus['view/item/context']!.find(
      (m) => m.command === 'toolbox.togglePeerMessaging' && m.group?.startsWith('inline'),
    );
    assert.ok(inline?.when);
    const re = /viewItem =~ \/(.*)\/$/.exec(inline.when)![1]!;
    assert.match('folderPeer.off', new RegExp(re));
    assert.doesNotMatch('anchor.running', new RegExp(re));
  });
});

describe('where Toggle may write (issue 13, item 6)', () => {
  it('offers .toolbox.yaml unless something that wins over it decides', () => {
    assert.equal(projectFileOverriddenBy({ from: 'default' }), undefined);
    assert.equal(projectFileOverriddenBy({ from: 'project-file', file: '/src/app/.toolbox.yaml' }), undefined);
    assert.equal(projectFileOverriddenBy({ from: 'user-file', file: '/home/u/.toolbox.yaml' }), undefined);
    assert.equal(projectFileOverriddenBy({ from: 'setting', scope: 'folder' }), undefined, 'the toggle removes the folder setting');
    assert.equal(projectFileOverriddenBy({ from: 'setting', scope: 'user' }), 'your user settings set toolbox.peerMessaging');
    assert.equal(projectFileOverriddenBy({ from: 'setting', scope: 'workspace' }), 'the workspace settings set toolbox.peerMessaging');
    assert.equal(
      projectFileOverriddenBy({ from: 'env', variable: 'TOOLBOX_PEER_MESSAGING' }),
      'the TOOLBOX_PEER_MESSAGING environment variable is set',
    );
  });
});

describe('workspaces view ordering', () => {
  it('lists this window folders first, hides infrastructure and containers being removed', () => {
    const list = [
      container({ name: 'toolbox-zzz', workspace: '/src/other' }),
      container({ name: 'toolbox-b', workspace: '/src/b' }),
      container({ name: 'toolbox-a', workspace: '/src/a' }),
      container({ name: 'toolbox-peer-anchor', kind: 'anchor' }),
      container({ name: 'toolbox-gone', workspace: '/src/a', state: 'removing' }),
    ];
    assert.deepEqual(
      sortForWorkspacesView(list, ['/src/b', '/src/a']).map((c) => c.name),
      ['toolbox-b', 'toolbox-a', 'toolbox-zzz'],
    );
    assert.equal(folderOf(list[0]!, ['/src/b']), undefined);
  });
});

describe('peer messaging and proximo items', () => {
  it('show a missing anchor and volume as such, with contextValues for menus', () => {
    assert.equal(anchorItem({ name: 'toolbox-peer-anchor', state: 'missing' }).contextValue, 'anchor.missing');
    const v = socketVolumeItem({ name: 'toolbox-cc-socks', exists: true, owner: '1000:1000', mode: '0700' });
    assert.equal(v.description, 'volume · owner 1000:1000 · mode 0700');
    assert.equal(socketVolumeItem({ name: 'toolbox-cc-socks', exists: false }).contextValue, 'socketVolume.missing');
  });

  it('say whether a workspace has proximo on and how many hosts it routes', () => {
    assert.equal(proximoWorkspaceDescription(container({ proximoCa: true, proximoHosts: ['a.test', 'b.test'] })), 'proximo on · 2 hosts');
    assert.equal(proximoWorkspaceDescription(container()), 'proximo off');
  });

  it('show a container being stopped as stopping, with a spinner and no Stop action', () => {
    const input = { container: container(), inThisWindow: true, stopping: true };
    assert.equal(containerDescription(input), 'stopping… · peer on');
    assert.deepEqual(containerIcon(input), { id: 'loading~spin' });
    const value = containerContextValue(input);
    assert.equal(value, 'container.stopping.peer.window');
    const pkg = JSON.parse(readFileSync(join(__dirname, '../../../package.json'), 'utf8')) as {
      contributes: { menus: Record<string, Array<{ command: string; when: string }>> };
    };
    const stops = pkg.contributes.menus['view/item/context']!.filter((m) => m.command === 'toolbox.stopContainer');
    assert.equal(stops.length, 2);
    for (const m of stops) {
      const re = new RegExp(/viewItem =~ \/(.*)\/$/.exec(m.when)![1]!);
      assert.equal(re.test(value), false, `${m.when} must not match a container being stopped`);
      assert.equal(re.test(containerContextValue({ container: container(), inThisWindow: true })), true, `${m.when} matches a running one`);
    }
    assert.match(containerTooltip(input), /State: stopping/);
  });

  it("say when a running container started, not Docker's 'Up N minutes' that goes stale", () => {
    const started = Date.UTC(2026, 11, 3, 8, 15);
    const tip = containerTooltip({ container: container({ status: 'Up 3 minutes', startedAt: started }), inThisWindow: true });
    assert.ok(tip.includes(`Running since ${startedText(started)}`), tip);
    assert.doesNotMatch(tip, /Up 3 minutes/);
    assert.match(
      containerTooltip({ container: container({ state: 'exited', status: 'Exited (0) 2 hours ago' }), inThisWindow: true }),
      /State: stopped/,
    );
  });

  it('turn an error into an item whose label is its first sentence', () => {
    const e = errorItem('Docker is not reachable at unix:///var/run/docker.sock. Is the daemon running?');
    assert.equal(e.label, 'Docker is not reachable at unix:///var/run/docker.sock.');
    assert.equal(e.contextValue, 'error');
  });
});

describe('status bar drift warning', () => {
  it('names the drifted container with a warning codicon and counts the others', () => {
    const list = [container({ name: 'toolbox-app-1' }), container({ name: 'toolbox-app-2', id: 'other' })];
    const status = driftStatus(findDrift(list, anchorId, new Map([['/src/app', false]]), names));
    assert.equal(status?.text, '$(warning) toolbox-app-1 drifted +1');
    assert.match(status?.tooltip ?? '', /^The container toolbox-app-1 still has peer messaging on; this folder is now set to off\./);
  });

  it('disappears when nothing drifted', () => {
    assert.equal(driftStatus([]), undefined);
  });
});

describe('view contents', () => {
  const base = { wantPeer: new Map<string, boolean>(), findings: [], loading: false, takenAt: 0 };
  const snapshot = {
    containers: [container({ name: 'toolbox-app-1' }), container({ name: 'toolbox-peer-anchor', kind: 'anchor' as const })],
    anchor: { name: 'toolbox-peer-anchor', id: anchorId, state: 'running' as const },
    volume: { name: 'toolbox-cc-socks', exists: true, owner: '1000:1000', mode: '0700' },
    members: ['toolbox-app-1'],
    sessions: [{ pid: 42, name: 'fix-the-bug' }],
  };

  it('shows an engine failure once, at the top of the Workspaces view, with Retry and Show Log', () => {
    const state = { ...base, error: 'Docker is not reachable at unix:///var/run/docker.sock: connection refused.' };
    const nodes = workspacesNodes(state, []);
    assert.deepEqual(
      nodes.map((n) => n.command),
      [undefined, 'toolbox.refresh', 'toolbox.showLog'],
    );
    assert.equal(nodes[0]!.contextValue, 'error');
    assert.deepEqual(peerNodes(state), [], 'Peer Messaging does not repeat it (its welcome waits for Docker)');
    assert.deepEqual(proximoNodes(state, []), [], 'nor does Proximo');
  });

  it('offers Open Setting first on an engine failure the toolbox.dockerHost setting can fix', () => {
    const message =
      'Docker is not reachable at unix:///nope.sock (from the toolbox.dockerHost setting): no socket exists at /nope.sock. Start Docker, or correct toolbox.dockerHost.';
    const nodes = workspacesNodes({ ...base, error: message, errorActions: ['open-docker-host-setting'] }, []);
    assert.deepEqual(
      nodes.map((n) => n.label),
      [
        'Docker is not reachable at unix:///nope.sock (from the toolbox.dockerHost setting): no socket exists at /nope.sock.',
        'Open Setting',
        'Retry',
        'Show Log',
      ],
    );
    assert.equal(nodes[1]!.command, 'workbench.action.openSettings');
    assert.deepEqual(nodes[1]!.commandArgs, ['toolbox.dockerHost']);
    assert.equal(nodes[0]!.description, 'Open Setting · Retry · Show Log');
    const other = workspacesNodes({ ...base, error: 'The image build failed: no space left on device.' }, []);
    assert.ok(!other.some((n) => n.label === 'Open Setting'), 'only an error that offers the setting gets its row');
  });

  it('still shows proximo (a host lookup) while Docker fails, without the containers', () => {
    const proximo = { installed: true, binary: '/usr/local/bin/proximo', caPath: '/home/u/.proximo/tls/ca.pem', hosts: ['app.test'] };
    const nodes = proximoNodes({ ...base, error: 'Docker is not reachable.', snapshot, proximo }, ['/src/app']);
    assert.deepEqual(
      nodes.map((n) => n.id),
      ['proximo.about', 'proximo', 'ca', 'hosts'],
    );
  });

  it('leaves the Workspaces view empty (so the welcome view shows) when there are no shells', () => {
    assert.deepEqual(workspacesNodes({ ...base, snapshot: { ...snapshot, containers: [] } }, ['/src/app']), []);
  });

  it('lists shells but not the anchor in Workspaces, and anchor members and agent sessions in Peer Messaging', () => {
    const state = { ...base, snapshot };
    assert.deepEqual(
      workspacesNodes(state, ['/src/app']).map((n) => n.label),
      ['toolbox-app-1'],
    );
    const peer = peerNodes(state);
    assert.deepEqual(
      peer.map((n) => n.id),
      ['anchor', 'volume', 'sessions'],
    );
    assert.deepEqual(
      peer[0]!.children?.map((n) => n.label),
      ['toolbox-app-1'],
    );
    assert.deepEqual(
      peer[2]!.children?.map((n) => n.label),
      ['fix-the-bug'],
    );
  });
});

describe('held shells under their container', () => {
  const now = Date.UTC(2026, 11, 2, 12, 0, 0);
  const holder = { containerSocket: '/run/s.sock', hostSocket: '/tmp/r/s.sock', user: '1000:1000' };
  const shells = [
    { id: 's1', pid: 31, command: '/bin/zsh -l', title: 'Toolbox: toolbox-app-1234abcd', started: now - 5 * 60_000, attached: 1 },
    { id: 's2', pid: 77, command: 'claude', started: now - 3 * 3_600_000, attached: 0 },
  ];
  const state = viewState([container({ holder, shells })], {
    takenAt: now,
    snapshot: {
      anchor: { name: 'toolbox-peer-anchor', id: anchorId, state: 'running' },
      volume: { name: 'toolbox-cc-socks', exists: true },
    },
  });

  it('lists each shell with its state and age, attached ones and detached ones apart', () => {
    const [node] = workspacesNodes(state, ['/src/app']);
    assert.deepEqual(
      node?.children?.map((c) => [c.label, c.description, c.contextValue, c.icon?.id]),
      [
        ['zsh -l', 'attached · started 5 min ago', 'heldShell.attached', 'terminal'],
        ['claude', 'detached · started 3 h ago', 'heldShell.detached', 'debug-disconnect'],
      ],
    );
  });

  it('attaches on click, carrying the container and the shell for Attach and End', () => {
    const child = workspacesNodes(state, ['/src/app'])[0]?.children?.[1];
    assert.equal(child?.command, 'toolbox.attachShell');
    assert.equal(child?.shell?.id, 's2');
    assert.equal(child?.container?.holder, holder);
  });

  it('shows no children for a container without a reachable holder', () => {
    const plain = { ...state, snapshot: { ...state.snapshot!, containers: [container()] } };
    assert.equal(workspacesNodes(plain, ['/src/app'])[0]?.children, undefined);
  });

  it('says how long ago a shell started, coarsely', () => {
    assert.equal(sinceText(now - 10_000, now), 'started just now');
    assert.equal(sinceText(now - 90 * 60_000, now), 'started 2 h ago');
    assert.equal(sinceText(now - 72 * 3_600_000, now), 'started 3 days ago');
  });
});

// Issue 11, finding 10: per container, what it can reach on this host, each with "Turn off for this folder".
describe('"Can reach on this host" under each container', () => {
  const HOME = '/home/u';
  const socket: HostReach = {
    kind: 'docker-socket',
    source: '/var/run/docker.sock',
    target: '/var/run/docker.sock',
    readonly: false,
    defaultMount: 'docker-sock',
  };
  const ssh: HostReach = { kind: 'host-ssh', source: `${HOME}/.ssh`, target: '/home/toolbox/.ssh', readonly: true, defaultMount: 'ssh' };
  const gh: HostReach = {
    kind: 'host-auth',
    source: `${HOME}/.config/gh`,
    target: '/home/toolbox/.config/gh',
    readonly: false,
    defaultMount: 'gh',
    authKey: 'gh',
  };
  const aws: HostReach = { kind: 'host-path', source: `${HOME}/.aws`, target: '/home/toolbox/.aws', readonly: false };
  const base = { wantPeer: new Map<string, boolean>(), findings: [], loading: false, takenAt: 0 };

  it('are a collapsed group under the container, after its held shells, listing each item in order', () => {
    const c = container({ reach: [socket, ssh, gh, aws] });
    const [node] = workspacesNodes({ ...base, snapshot: snap([c]) }, ['/src/app'], HOME);
    assert.equal(node!.folder, '/src/app');
    const group = node!.children![0]!;
    assert.equal(group.label, 'Can reach on this host');
    assert.equal(group.description, '4 things beyond its workspace');
    assert.equal(group.collapsed, true);
    const shell = { id: 's1', pid: 3, command: 'zsh', started: 0, attached: 1 };
    const [withShell] = workspacesNodes({ ...base, snapshot: snap([container({ reach: [socket], shells: [shell] })]) }, ['/src/app'], HOME);
    assert.deepEqual(
      withShell!.children!.map((n) => n.id),
      ['shell:toolbox-app-1234abcd:s1', 'reach:toolbox-app-1234abcd'],
    );
    assert.deepEqual(
      group.children!.map((n) => [n.label, n.description, n.contextValue]),
      [
        ['Protected paths', 'not protected', 'protection.off'],
        ['Docker socket', '/var/run/docker.sock · root on this host', 'reach.docker-socket.window'],
        ['Your SSH keys', '~/.ssh · read-only', 'reach.host-ssh.window'],
        ['gh credentials', '~/.config/gh · read-write, for token refresh · inherit_host_auth', 'reach.host-auth.window'],
        ['~/.aws', 'read-write at /home/toolbox/.aws in the container', 'reach.host-path.window'],
      ],
    );
    assert.deepEqual(group.children![1]!.reach, socket, 'the command gets the item');
    assert.equal(group.children![1]!.folder, '/src/app');
    assert.equal(group.children![1]!.container, c);
  });

  it('list the protected paths first: read-only, or not, and the opt-out only in User settings (issue 25 item 8)', () => {
    const [on] = workspacesNodes(
      { ...base, snapshot: snap([container({ reach: [], protectedPaths: ['.git/config', '.vscode'] })]) },
      ['/src/app'],
      HOME,
    );
    const row = on!.children![0]!.children![0]!;
    assert.deepEqual([row.label, row.description, row.contextValue], ['Protected paths', 'read-only in this container', 'protection.on']);
    for (const p of ['.git/config', '.git/hooks/', '.vscode/', '.envrc', '.mcp.json', '.claude/settings*.json', '.toolbox.yaml']) {
      assert.ok(row.tooltip!.includes(p), p);
    }
    assert.match(row.tooltip!, /toolbox-propose/);
    assert.match(row.tooltip!, /toolbox\.protectedPaths in your User settings \(a workspace or folder setting does not count/);
    const [off] = workspacesNodes({ ...base, snapshot: snap([container({ reach: [] })]) }, ['/src/app'], HOME);
    const offRow = off!.children![0]!.children![0]!;
    assert.equal(offRow.description, 'not protected');
    assert.match(offRow.tooltip!, /before it existed, by the toolbox CLI, or with toolbox\.protectedPaths off/);
    assert.equal(offRow.icon?.color, 'list.warningForeground');
  });

  it('say so when the container reaches nothing beyond its workspace', () => {
    const [node] = workspacesNodes({ ...base, snapshot: snap([container({ reach: [] })]) }, ['/src/app'], HOME);
    const group = node!.children![0]!;
    assert.equal(group.description, 'nothing beyond its workspace');
    assert.deepEqual(
      group.children!.map((n) => n.label),
      ['Protected paths'],
    );
    assert.equal(group.icon?.color, undefined);
  });

  it('have no Turn Off action for a container of another window', () => {
    const [group] = workspacesNodes({ ...base, snapshot: snap([container({ reach: [socket] })]) }, ['/elsewhere'], HOME);
    const item = group!.children![0]!.children![0]!.children![1]!;
    assert.equal(item.contextValue, 'reach.docker-socket');
    assert.equal(item.folder, undefined);
    assert.match(item.tooltip!, /Open its folder in a window to turn it off there\./);
  });

  it('explain each capability and how to turn it off', () => {
    assert.match(
      reachItem(socket, HOME, true).tooltip,
      /start a container that mounts \/ and so has root on this host.*Turn it off for this folder/,
    );
    assert.match(
      reachItem(ssh, HOME, true).tooltip,
      /because ~\/\.toolbox\/ssh does not exist: the container can read your private keys.*~\/\.toolbox\/ssh instead, or turn it off/,
    );
    assert.match(
      reachItem(gh, HOME, true).tooltip,
      /inherit_host_auth mounts your own gh credentials \(~\/\.config\/gh\) read-write at \/home\/toolbox\/\.config\/gh.*so the CLI can refresh its tokens\. Anything running in the container can read these credentials and change them: replace or delete tokens and change the settings your host's own gh then uses\. Turn it off for this folder with the button on this line \(it leaves gh out of inherit_host_auth, kept in your User settings\)\./,
    );
    // A container an older version created binds them read-only: the row says what it has.
    const ghRo = reachItem({ ...gh, readonly: true }, HOME, true);
    assert.equal(ghRo.description, '~/.config/gh · read-only · inherit_host_auth');
    assert.match(ghRo.tooltip, /\(~\/\.config\/gh\) read-only at/);
    assert.doesNotMatch(ghRo.tooltip, /refresh/);
    assert.match(reachItem(aws, HOME, true).tooltip, /~\/\.aws on this host is mounted read-write at \/home\/toolbox\/\.aws/);
    assert.equal(reachItem(socket, HOME, true).icon.color, 'list.errorForeground');
    assert.equal(reachGroupItem([socket]).description, '1 thing beyond its workspace');
  });

  it('match the package.json menus: Turn Off inline only on items of this window', () => {
    const pkg = JSON.parse(readFileSync(join(__dirname, '../../../package.json'), 'utf8')) as {
      contributes: { menus: { 'view/item/context': Array<{ command: string; when: string; group: string }> } };
    };
    const entries = pkg.contributes.menus['view/item/context'].filter((m) => m.command === 'toolbox.turnOffReach');
    const inline = entries.find((m) => m.group.startsWith('inline'));
    assert.ok(inline, 'an inline button');
    const re = new RegExp(/viewItem =~ \/(.*)\/$/.exec(inline.when)![1]!);
    for (const r of [socket, ssh, gh, aws]) {
      assert.equal(re.test(reachItem(r, HOME, true).contextValue), true);
      assert.equal(re.test(reachItem(r, HOME, false).contextValue), false);
    }
    assert.equal(re.test(reachGroupItem([socket]).contextValue), false);
    assert.equal(re.test(containerContextValue({ container: container(), inThisWindow: true })), false);
  });
});

describe('the Proximo view', () => {
  const base = { wantPeer: new Map<string, boolean>(), findings: [], loading: false, takenAt: 0 };
  const installed = {
    installed: true,
    binary: '/usr/local/bin/proximo',
    caPath: '/home/u/.proximo/tls/ca.pem',
    hosts: ['app.test', 'api.test'],
  };

  it('is empty when proximo is not on this host, so its welcome says what proximo is', () => {
    assert.deepEqual(proximoNodes({ ...base, proximo: { installed: false, hosts: [] } }, []), []);
    const pkg = JSON.parse(readFileSync(join(__dirname, '../../../package.json'), 'utf8')) as {
      contributes: { viewsWelcome: Array<{ view: string; contents: string; when?: string }> };
    };
    const welcome = pkg.contributes.viewsWelcome.filter((w) => w.view === 'toolbox.proximo');
    const missing = welcome.find((w) => w.when === 'toolbox.proximo == missing');
    assert.ok(missing, 'a welcome for a host without proximo');
    assert.match(missing.contents, /^proximo gives the apps you run on this host HTTPS names/);
    assert.match(missing.contents, /not installed on this host/);
    for (const w of welcome) assert.ok(w.contents.includes(`(${PROXIMO_DOCS_URL})`), 'links its docs');
  });

  it('starts with what proximo is, linked to its docs, and explains every item in its tooltip', () => {
    const nodes = proximoNodes({ ...base, proximo: installed }, []);
    assert.equal(nodes[0]!.label, 'What is proximo?');
    assert.equal(nodes[0]!.link, PROXIMO_DOCS_URL);
    for (const n of nodes) assert.ok(n.tooltip && n.tooltip.length > 40, `${n.id} has a tooltip that explains it`);
    assert.match(proximoItem(installed).tooltip, /^proximo gives the apps you run on this host HTTPS names/);
    assert.deepEqual(
      nodes.find((n) => n.id === 'hosts')?.children?.map((c) => c.label),
      ['app.test', 'api.test'],
    );
  });

  it('says what to do when something is missing', () => {
    const none = { installed: true, binary: '/usr/local/bin/proximo', hosts: [] };
    assert.equal(proximoCaItem(none).description, 'not found');
    assert.match(proximoCaItem(none).tooltip, /Run proximo install on this host/);
    assert.equal(proximoHostsItem(none).description, 'none right now');
    assert.match(proximoHostsItem(none).tooltip, /proximo up/);
    assert.match(proximoItem({ installed: false, hosts: [] }).tooltip, /install proximo on this host, then click Refresh/);
    const off = proximoWorkspaceItem(container({ proximoCa: false }));
    assert.match(off.tooltip, /Stop it and open a new shell/);
    assert.match(proximoWorkspaceItem(container({ proximoCa: true, proximoHosts: ['app.test'] })).tooltip, /resolves 1 routed host/);
  });
});

describe('terminal names', () => {
  it('number a second shell of the same folder, taking the lowest free number', () => {
    assert.equal(numberedTitle('Toolbox: app', []), 'Toolbox: app');
    assert.equal(numberedTitle('Toolbox: app', ['Toolbox: app']), 'Toolbox: app (2)');
    assert.equal(numberedTitle('Toolbox: app', ['Toolbox: app', 'Toolbox: app (2)']), 'Toolbox: app (3)');
    assert.equal(numberedTitle('Toolbox: app', ['Toolbox: app', 'Toolbox: app (3)']), 'Toolbox: app (2)');
    assert.equal(numberedTitle('Toolbox: app', ['Toolbox: web']), 'Toolbox: app');
  });
});

describe('the Stop Container confirmation', () => {
  it('is not asked when no shell is attached', () => {
    assert.equal(stopContainerConfirmation('toolbox-app-1234abcd', []), undefined);
  });

  it('names the attached shells and says they end', () => {
    const text = stopContainerConfirmation('toolbox-app-1234abcd', ['Toolbox: app', 'zsh -l (in another window)']);
    assert.equal(text?.message, 'Stop toolbox-app-1234abcd? 2 shells are attached to it.');
    assert.match(text?.detail ?? '', /• Toolbox: app\n• zsh -l \(in another window\)/);
    assert.match(text?.detail ?? '', /These shells end/);
    assert.equal(text?.stopLabel, 'Stop Container');
    assert.match(stopContainerConfirmation('toolbox-app-1234abcd', ['Toolbox: app'])?.message ?? '', /A shell is attached/);
  });
});

describe('redraw key (ui/views/nodeTreeProvider.ts redraws only when it changes)', () => {
  const base = { wantPeer: new Map<string, boolean>(), findings: [], loading: false, takenAt: 1_000 };
  const shell = { id: 's1', pid: 3, command: 'zsh', started: 0, attached: 1 };
  const key = (containers: ContainerSummary[]) =>
    treeKey(workspacesNodes({ ...base, snapshot: snap(containers) }, ['/src/app'], '/home/u', [], 5_000));

  it('is the same for two renders of the same engine state, so a burst of engine events redraws nothing', () => {
    const a = key([container({ shells: [shell] })]);
    assert.equal(typeof a, 'string');
    assert.equal(key([container({ shells: [shell] })]), a);
  });

  it('changes with what a row shows and with what its commands act on', () => {
    const a = key([container({ shells: [shell] })]);
    assert.notEqual(key([container({ shells: [{ ...shell, attached: 0 }] })]), a, 'a shell that was detached');
    assert.notEqual(key([container({ shells: [shell], state: 'exited' })]), a, 'a container that stopped');
    assert.notEqual(
      key([container({ shells: [shell], id: 'f'.repeat(64) })]),
      a,
      'the same name recreated: Stop and Attach must act on the new one',
    );
    assert.notEqual(key([container({ shells: [{ ...shell, pid: 4 }] })]), a, 'a held shell replaced under the same id');
  });

  it('gives no key (always redraw) for a node that does not serialise', () => {
    const loop: Record<string, unknown> = {};
    loop.self = loop;
    assert.equal(treeKey([{ id: 'x', label: 'x', commandArgs: [loop] }]), undefined);
  });
});
