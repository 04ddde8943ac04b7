/**
 * Issue 15 leftover: seccomp drift is never silent. A running container of this window's folders
 * whose seccomp profile differs from the folder's toolbox.seccomp now shows in the status bar and
 * on its tree row, judged by the same pure rule as the open (plan/drift.ts), and one finding per
 * container when its peer state differs too.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { containerSummary } from '../support/summary';
import { objectNames } from '../../extension/src/contract/objects';
import { openDriftNotice, profileDrift, seccompDifference, seccompProfileOf } from '../../extension/src/plan/drift';
import { type ContainerSummary, type SeccompSetting } from '../../extension/src/ui/views/model';
import { driftStatus, findDrift, findingKey } from '../../extension/src/ui/containers/driftFindings';
import { workspacesNodes } from '../../extension/src/ui/views/treeNodes';

const names = objectNames();
const anchorId = 'a1b2c3d4e5f6';
const folder = '/src/app';

/** A container of /src/app in the peer namespace, as the folder's default (peer on) wants it. */
const container = (over: Partial<ContainerSummary> = {}) => containerSummary({ seccomp: 'unconfined', ...over });

const peerOn = new Map([[folder, true]]);
const seccompIs = (profile: SeccompSetting['profile'], scope?: SeccompSetting['scope']) =>
  new Map<string, SeccompSetting>([[folder, scope ? { profile, scope } : { profile }]]);

describe('the profile a container runs with, from its inspected SecurityOpt', () => {
  it("is unconfined only for seccomp=unconfined (or the older colon form); anything else is Docker's default", () => {
    assert.equal(seccompProfileOf(['seccomp=unconfined']), 'unconfined');
    assert.equal(seccompProfileOf(['label=disable', 'seccomp:unconfined']), 'unconfined');
    assert.equal(seccompProfileOf(null), 'default');
    assert.equal(seccompProfileOf(undefined), 'default');
    assert.equal(seccompProfileOf([]), 'default');
    assert.equal(seccompProfileOf(['seccomp=/etc/docker/custom.json']), 'default');
  });

  it('is judged only when known', () => {
    assert.equal(profileDrift('unconfined', 'default'), 'default');
    assert.equal(profileDrift('default', 'unconfined'), 'unconfined');
    assert.equal(profileDrift('default', 'default'), undefined);
    assert.equal(profileDrift(undefined, 'default'), undefined);
  });
});

describe('seccomp drift in the status bar and the tree', () => {
  it("flags an unconfined container when the folder now asks for Docker's default profile, naming it", () => {
    const found = findDrift([container()], anchorId, peerOn, names, '', seccompIs('default', 'folder'));
    assert.deepEqual(
      found.map((f) => [f.container.name, f.drift, f.seccomp]),
      [['toolbox-app-1234abcd', 'seccomp', 'default']],
    );
    const f = found[0]!;
    assert.equal(
      f.notice.message,
      "The container toolbox-app-1234abcd runs without a seccomp filter, although the toolbox.seccomp setting asks for Docker's default profile, so programs in it can make system calls that profile blocks. Restart it? Its open shells will close.",
    );
    assert.match(
      f.notice.detail,
      /^This folder's toolbox\.seccomp is default \(set in this folder's \.vscode\/settings\.json\); the container runs unconfined \(without a seccomp filter\)\./,
    );
    assert.match(f.notice.detail, /then opens a new shell with Docker's default seccomp profile\. The files in your folder are kept\.$/);
    // Nothing about peer messaging: it is not what differs.
    assert.doesNotMatch(f.notice.detail, /peer messaging|PID namespace/);
    assert.match(
      f.message,
      /^toolbox-app-1234abcd runs with seccomp=unconfined although toolbox\.seccomp asks for Docker's default profile/,
    );
    const status = driftStatus(found);
    assert.equal(status?.text, '$(warning) toolbox-app-1234abcd drifted');
    assert.equal(status?.name, 'toolbox-app-1234abcd');
    assert.match(status?.tooltip ?? '', /^The container toolbox-app-1234abcd runs without a seccomp filter/);
  });

  it("flags a container under Docker's profile when the folder asks for unconfined again", () => {
    const [f, ...rest] = findDrift([container({ seccomp: 'default' })], anchorId, peerOn, names, '', seccompIs('unconfined'));
    assert.equal(rest.length, 0);
    assert.equal(f?.drift, 'seccomp');
    assert.equal(f?.seccomp, 'unconfined');
    assert.match(
      f?.notice.message ?? '',
      /runs under Docker's default seccomp profile, .* so Codex's sandbox cannot start in it\. Restart it\?/,
    );
    assert.match(
      f?.notice.detail ?? '',
      /^This folder's toolbox\.seccomp is unconfined; the container runs under Docker's default seccomp profile\./,
    );
    assert.match(f?.notice.detail ?? '', /then opens a new shell with no seccomp filter \(unconfined\)\./);
  });

  it('says the same words as the open does about what differs', () => {
    for (const wants of ['default', 'unconfined'] as const) {
      const [f] = findDrift(
        [container({ seccomp: wants === 'default' ? 'unconfined' : 'default' })],
        anchorId,
        peerOn,
        names,
        '',
        seccompIs(wants),
      );
      const said = `The container toolbox-app-1234abcd ${seccompDifference(wants)}.`;
      assert.ok(f?.notice.message.startsWith(said));
      assert.ok(openDriftNotice({ kind: 'seccomp', container: 'toolbox-app-1234abcd', seccomp: wants }).startsWith(said));
    }
  });

  it('is not flagged when the profile matches the setting', () => {
    assert.deepEqual(findDrift([container()], anchorId, peerOn, names, '', seccompIs('unconfined')), []);
    assert.deepEqual(findDrift([container({ seccomp: 'default' })], anchorId, peerOn, names, '', seccompIs('default')), []);
  });

  it('judges a container the toolbox CLI made (no labels of ours, unconfined as upstream) right', () => {
    // Upstream sets seccomp=unconfined and no peer-run label: the default setting matches it.
    const cli = container({ name: 'toolbox-app-cafe0001', peerRun: undefined, seccomp: seccompProfileOf(['seccomp=unconfined']) });
    assert.deepEqual(findDrift([cli], anchorId, peerOn, names, '', seccompIs('unconfined')), []);
    // With toolbox.seccomp default, the open path says it differs: so do the views (decision 0024).
    assert.deepEqual(
      findDrift([cli], anchorId, peerOn, names, '', seccompIs('default')).map((f) => [f.drift, f.seccomp]),
      [['seccomp', 'default']],
    );
  });

  it('never judges on a guess: an unknown profile, a folder whose setting was not read, another folder, a stopped container', () => {
    assert.deepEqual(findDrift([container({ seccomp: undefined })], anchorId, peerOn, names, '', seccompIs('default')), []);
    assert.deepEqual(findDrift([container()], anchorId, peerOn, names, ''), []);
    assert.deepEqual(findDrift([container({ workspace: '/src/other' })], anchorId, peerOn, names, '', seccompIs('default')), []);
    assert.deepEqual(findDrift([container({ state: 'exited' })], anchorId, peerOn, names, '', seccompIs('default')), []);
  });

  it('makes one finding, one warning and one fix when the peer state differs too', () => {
    const peerOff = new Map([[folder, false]]);
    const found = findDrift([container()], anchorId, peerOff, names, '', seccompIs('default'));
    assert.equal(found.length, 1);
    const f = found[0]!;
    assert.deepEqual([f.drift, f.seccomp, f.want, f.perRun], ['joined-but-planned-off', 'default', false, false]);
    assert.equal(
      f.notice.message,
      "The container toolbox-app-1234abcd still has peer messaging on; this folder is now set to off. It also runs without a seccomp filter, although the toolbox.seccomp setting asks for Docker's default profile, so programs in it can make system calls that profile blocks. Restart it? Its open shells will close.",
    );
    assert.match(f.notice.detail, /This folder's peer messaging is off/);
    assert.match(f.notice.detail, /This folder's toolbox\.seccomp is default/);
    assert.match(f.notice.detail, /then opens a new shell with peer messaging off and Docker's default seccomp profile\./);
    assert.deepEqual(
      f.message.split('\n').map((l) => l.split(' ').slice(0, 3).join(' ')),
      ['peer messaging: toolbox-app-1234abcd', 'toolbox-app-1234abcd runs with'],
    );
    assert.equal(driftStatus(found)?.text, '$(warning) toolbox-app-1234abcd drifted');
  });

  it('keeps a per-run peer choice for the fix while the seccomp profile is judged against the setting', () => {
    const perRun = container({ peerRun: true });
    const [f] = findDrift([perRun], anchorId, new Map([[folder, false]]), names, '', seccompIs('default'));
    assert.deepEqual([f?.drift, f?.perRun, f?.want], ['seccomp', true, true]);
  });

  it('a dismissed peer warning does not silence a seccomp difference that comes later on the same container', () => {
    const peerOff = new Map([[folder, false]]);
    const [peerOnly] = findDrift([container()], anchorId, peerOff, names, '', seccompIs('unconfined'));
    const [both] = findDrift([container()], anchorId, peerOff, names, '', seccompIs('default'));
    const [again] = findDrift([container()], anchorId, peerOff, names, '', seccompIs('unconfined'));
    assert.notEqual(findingKey(peerOnly!), findingKey(both!));
    assert.equal(findingKey(peerOnly!), findingKey(again!), 'the same difference stays dismissed across refreshes');
  });

  it('shows on the tree row: warning icon, drifted, the Recreate menu, and the sentence in the tooltip', () => {
    const c = container();
    const findings = findDrift([c], anchorId, peerOn, names, '', seccompIs('default'));
    const snapshot = {
      containers: [c],
      anchor: { name: names.anchor, id: anchorId, state: 'running' as const },
      volume: { name: names.socketVolume, exists: true },
      members: [c.name],
      sessions: [],
    };
    const [row] = workspacesNodes({ snapshot, wantPeer: peerOn, findings, loading: false, takenAt: 0 }, [folder]);
    assert.equal(row?.description, 'running · peer on · drifted');
    assert.equal(row?.icon?.id, 'warning');
    assert.match(row?.contextValue ?? '', /\.drifted/);
    assert.match(row?.tooltip ?? '', /Seccomp: unconfined/);
    assert.match(
      row?.tooltip ?? '',
      /runs without a seccomp filter, although the toolbox\.seccomp setting asks for Docker's default profile/,
    );
    const [clean] = workspacesNodes({ snapshot, wantPeer: peerOn, findings: [], loading: false, takenAt: 0 }, [folder]);
    assert.equal(clean?.description, 'running · peer on');
  });
});
