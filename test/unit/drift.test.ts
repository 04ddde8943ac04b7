import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import {
  driftAgainstPlan,
  openDriftNotice,
  peerRunOf,
  driftWarning,
  missingSocketVolume,
  peerDrift,
  peerSetupWarning,
  pidModeDrift,
  seccompDrift,
  warningsFor,
  type InspectedMount,
} from '../../extension/src/plan/drift';
import { objectNames } from '../../extension/src/contract/objects';

const names = objectNames();
const ANCHOR_ID = 'f'.repeat(64);
const FIX = ' — stop it with `toolbox stop toolbox-proj-1234abcd` or the Toolbox: Stop Container command, then open the shell again';

/** The one warning shown for a container (peerDrift picks the kind, driftWarning words it). */
function peerDriftWarning(
  inspected: { pidMode: string; mounts: InspectedMount[] },
  plannedPeer: boolean,
  anchorId: string | undefined,
  containerName: string,
  names: ReturnType<typeof objectNames>,
): string | undefined {
  const observed = { pidMode: inspected.pidMode, mountsSocketVolume: !missingSocketVolume(inspected.mounts, names) };
  const kind = peerDrift(observed, plannedPeer, anchorId, names);
  return kind && driftWarning(kind, containerName, names);
}

describe('pidModeDrift', () => {
  it('matches the anchor by the id Docker stores', () => {
    assert.equal(pidModeDrift(`container:${ANCHOR_ID}`, true, ANCHOR_ID, names), undefined);
  });

  it('matches the anchor by name too', () => {
    assert.equal(pidModeDrift('container:toolbox-peer-anchor', true, undefined, names), undefined);
  });

  it('reports a peer-on plan whose container is outside the namespace', () => {
    assert.deepEqual(pidModeDrift('', true, ANCHOR_ID, names), { kind: 'planned-on-but-outside' });
  });

  it('reports a container joined to another (stale) anchor id as outside', () => {
    assert.deepEqual(pidModeDrift(`container:${'e'.repeat(64)}`, true, ANCHOR_ID, names), {
      kind: 'planned-on-but-outside',
    });
  });

  it('treats an uninspectable anchor as a mismatch for an id-form PidMode', () => {
    assert.deepEqual(pidModeDrift(`container:${ANCHOR_ID}`, true, undefined, names), { kind: 'planned-on-but-outside' });
  });

  it('reports a peer-off plan whose container is in a shared namespace', () => {
    assert.deepEqual(pidModeDrift(`container:${ANCHOR_ID}`, false, ANCHOR_ID, names), {
      kind: 'joined-but-planned-off',
    });
  });

  it('accepts a peer-off plan with the container in its own namespace', () => {
    assert.equal(pidModeDrift('', false, ANCHOR_ID, names), undefined);
  });

  it('compares against the anchor of the given namespace', () => {
    const test = objectNames('tbxtunit');
    assert.equal(pidModeDrift('container:tbxtunit-peer-anchor', true, undefined, test), undefined);
    assert.deepEqual(pidModeDrift('container:toolbox-peer-anchor', true, undefined, test), {
      kind: 'planned-on-but-outside',
    });
  });
});

describe('missingSocketVolume', () => {
  it('is false when the volume is mounted at /tmp/cc-socks', () => {
    assert.equal(missingSocketVolume([{ Type: 'volume', Name: 'toolbox-cc-socks', Destination: '/tmp/cc-socks' }], names), false);
  });

  it('is true for a host bind at the same place (the pre-volume layout)', () => {
    assert.equal(missingSocketVolume([{ Type: 'bind', Destination: '/tmp/cc-socks' }], names), true);
  });

  it('is true when the volume is mounted elsewhere, or there are no mounts', () => {
    assert.equal(missingSocketVolume([{ Type: 'volume', Name: 'toolbox-cc-socks', Destination: '/tmp/x' }], names), true);
    assert.equal(missingSocketVolume(null, names), true);
  });
});

describe('drift warnings', () => {
  it('use upstream shapes and end with the one fix for that container', () => {
    assert.equal(
      driftWarning('joined-but-planned-off', 'toolbox-proj-1234abcd'),
      'peer messaging: toolbox-proj-1234abcd already runs in the shared PID namespace, so this session can see the process table of every opted-in shell' +
        FIX,
    );
    assert.equal(
      driftWarning('planned-on-but-outside', 'toolbox-proj-1234abcd'),
      'peer messaging: toolbox-proj-1234abcd was created without the shared PID namespace, so this session will see no peers' + FIX,
    );
    assert.equal(
      driftWarning('missing-socket-volume', 'toolbox-proj-1234abcd'),
      'peer messaging: toolbox-proj-1234abcd does not mount the toolbox-cc-socks volume at /tmp/cc-socks, so this session can reach no peer' +
        FIX,
    );
  });

  it('shows only one warning, the namespace first', () => {
    const w = peerDriftWarning({ pidMode: '', mounts: [] }, true, ANCHOR_ID, 'toolbox-proj-1234abcd', names);
    assert.match(w ?? '', /was created without the shared PID namespace/);
  });

  it('shows the socket warning when the namespace matches but the volume is missing', () => {
    const w = peerDriftWarning({ pidMode: `container:${ANCHOR_ID}`, mounts: [] }, true, ANCHOR_ID, 'toolbox-proj-1234abcd', names);
    assert.match(w ?? '', /does not mount the toolbox-cc-socks volume/);
  });

  it('does not ask for the socket volume when peer is off', () => {
    assert.equal(peerDriftWarning({ pidMode: '', mounts: [] }, false, undefined, 'toolbox-proj-1234abcd', names), undefined);
  });

  it('is silent for a container that matches the plan', () => {
    const mounts = [{ Type: 'volume', Name: 'toolbox-cc-socks', Destination: '/tmp/cc-socks' }];
    assert.equal(
      peerDriftWarning({ pidMode: `container:${ANCHOR_ID}`, mounts }, true, ANCHOR_ID, 'toolbox-proj-1234abcd', names),
      undefined,
    );
  });

  it('says the shell starts without peers when setup fails', () => {
    assert.equal(
      peerSetupWarning('the anchor could not start'),
      'peer messaging: the anchor could not start — starting this shell without it',
    );
  });
});

describe('peerRunOf: the per-run label as read from the engine', () => {
  it('takes only the two exact values', () => {
    assert.equal(peerRunOf({ 'dev.toolbox.peer-run': 'on' }), true);
    assert.equal(peerRunOf({ 'dev.toolbox.peer-run': 'off' }), false);
    for (const odd of ['ON', 'true', '1', ' on', '', 'on\n']) assert.equal(peerRunOf({ 'dev.toolbox.peer-run': odd }), undefined, odd);
    assert.equal(peerRunOf({ 'dev.toolbox.peer-run': 1 as unknown as string }), undefined);
    assert.equal(peerRunOf(undefined), undefined);
    assert.equal(peerRunOf(null), undefined);
    assert.equal(peerRunOf({ 'dev.toolbox.workspace': '/src' }), undefined);
  });
});

describe('openDriftNotice: what an open shows the user (issue 13, item 4)', () => {
  it('says what differs and the fix in a sentence, without backticks or the CLI', () => {
    const kinds = ['joined-but-planned-off', 'planned-on-but-outside', 'missing-socket-volume', 'missing-port'] as const;
    for (const kind of kinds) {
      const text = openDriftNotice({ kind, container: 'toolbox-proj-1234abcd', port: '127.0.0.1:8080 (container port 80/tcp)' }, names);
      assert.match(text, /^The container toolbox-proj-1234abcd /);
      assert.match(
        text,
        /To fix it, stop the container \(Toolbox: Stop Container…\) and open the shell again; its open shells will close\.$/,
      );
      assert.doesNotMatch(text, /`|toolbox stop/);
    }
  });

  it('names the missing port, which driftAgainstPlan records', () => {
    const plan = {
      name: 'toolbox-proj-1234abcd',
      peer: false,
      create: { HostConfig: { PortBindings: { '80/tcp': [{ HostIp: '127.0.0.1', HostPort: '8080' }] } } },
    } as unknown as Parameters<typeof driftAgainstPlan>[1];
    const [d] = driftAgainstPlan({ HostConfig: { PidMode: '' } }, plan, names, undefined);
    assert.equal(d?.port, '127.0.0.1:8080 (container port 80/tcp)');
    assert.match(
      openDriftNotice(d!, names),
      /does not publish port 127\.0\.0\.1:8080 \(container port 80\/tcp\) that this folder asks for/,
    );
  });
});

describe('seccomp drift: the container runs with another profile than toolbox.seccomp asks for', () => {
  const planWith = (securityOpt: string[]) =>
    ({ name: 'toolbox-proj-1234abcd', peer: false, create: { HostConfig: { SecurityOpt: securityOpt } } }) as unknown as Parameters<
      typeof driftAgainstPlan
    >[1];

  it("is none when both are unconfined, or both run Docker's profile", () => {
    assert.equal(seccompDrift(['seccomp=unconfined'], ['seccomp=unconfined']), undefined);
    assert.equal(seccompDrift(['seccomp:unconfined'], ['seccomp=unconfined']), undefined);
    assert.equal(seccompDrift(null, []), undefined);
    assert.equal(seccompDrift([], []), undefined);
    assert.equal(seccompDrift(['label=disable'], []), undefined);
  });

  it('names the profile the open asks for when they differ', () => {
    assert.equal(seccompDrift(['seccomp=unconfined'], []), 'default');
    assert.equal(seccompDrift(null, ['seccomp=unconfined']), 'unconfined');
    // A custom profile file is not unconfined.
    assert.equal(seccompDrift(['seccomp=/etc/docker/custom.json'], ['seccomp=unconfined']), 'unconfined');
  });

  it("driftAgainstPlan reports it with upstream's warning shape and the fix", () => {
    const [d] = driftAgainstPlan({ HostConfig: { PidMode: '', SecurityOpt: ['seccomp=unconfined'] } }, planWith([]), names, undefined);
    assert.deepEqual(d, {
      kind: 'seccomp',
      container: 'toolbox-proj-1234abcd',
      seccomp: 'default',
      message: `toolbox-proj-1234abcd runs with seccomp=unconfined although toolbox.seccomp asks for Docker's default profile${FIX}`,
    });
    assert.deepEqual(warningsFor([d!]), [d!.message]);
    const [u] = driftAgainstPlan({ HostConfig: { PidMode: '', SecurityOpt: null } }, planWith(['seccomp=unconfined']), names, undefined);
    assert.equal(u?.seccomp, 'unconfined');
    assert.deepEqual(driftAgainstPlan({ HostConfig: { PidMode: '' } }, planWith([]), names, undefined), []);
  });

  it('tells the user what the difference means, and the fix', () => {
    assert.match(
      openDriftNotice({ kind: 'seccomp', container: 'toolbox-proj-1234abcd', seccomp: 'default' }),
      /^The container toolbox-proj-1234abcd runs without a seccomp filter, although the toolbox\.seccomp setting asks for Docker's default profile, .* To fix it, stop the container/,
    );
    assert.match(
      openDriftNotice({ kind: 'seccomp', container: 'toolbox-proj-1234abcd', seccomp: 'unconfined' }),
      /^The container toolbox-proj-1234abcd runs under Docker's default seccomp profile, .* so Codex's sandbox cannot start in it\. To fix it/,
    );
  });

  it('comes after the peer warning and before the port ones', () => {
    const plan = {
      name: 'toolbox-proj-1234abcd',
      peer: true,
      create: { HostConfig: { SecurityOpt: [], PortBindings: { '80/tcp': [{ HostIp: '127.0.0.1', HostPort: '8080' }] } } },
    } as unknown as Parameters<typeof driftAgainstPlan>[1];
    const drift = driftAgainstPlan(
      { HostConfig: { PidMode: '', SecurityOpt: ['seccomp=unconfined'] }, Mounts: [] },
      plan,
      names,
      undefined,
    );
    assert.deepEqual(
      drift.map((d) => d.kind),
      ['planned-on-but-outside', 'missing-socket-volume', 'seccomp', 'missing-port'],
    );
    assert.deepEqual(
      warningsFor(drift).map((w) => w.split(' ')[0] + ' ' + w.split(' ')[1]),
      ['peer messaging:', 'toolbox-proj-1234abcd runs', 'toolbox-proj-1234abcd does'],
    );
  });
});

describe('missing ports: the request itself is compared, as Docker keeps it', () => {
  const planWith = (bindings: Record<string, Array<{ HostIp: string; HostPort: string }>>) =>
    ({
      name: 'toolbox-proj-1234abcd',
      peer: false,
      create: { HostConfig: { SecurityOpt: [], PortBindings: bindings } },
    }) as unknown as Parameters<typeof driftAgainstPlan>[1];

  it('a port Docker picks is there when the container has the same request for that container port', () => {
    const plan = planWith({ '7171/tcp': [{ HostIp: '127.0.0.1', HostPort: '' }] });
    assert.deepEqual(
      driftAgainstPlan({ HostConfig: { PortBindings: { '7171/tcp': [{ HostIp: '127.0.0.1', HostPort: '' }] } } }, plan, names, undefined),
      [],
    );
    const [d] = driftAgainstPlan({ HostConfig: { PortBindings: {} } }, plan, names, undefined);
    assert.equal(d?.port, '127.0.0.1:any free port (container port 7171/tcp)');
  });

  it('a port Podman picked (it records the port, not the empty request) meets a request for any free port', () => {
    const plan = planWith({ '7171/tcp': [{ HostIp: '127.0.0.1', HostPort: '' }] });
    const podman = { HostConfig: { PortBindings: { '7171/tcp': [{ HostIp: '127.0.0.1', HostPort: '41234' }] } } };
    assert.deepEqual(driftAgainstPlan(podman, plan, names, undefined), []);
    const other = { HostConfig: { PortBindings: { '7172/tcp': [{ HostIp: '127.0.0.1', HostPort: '41234' }] } } };
    assert.equal(driftAgainstPlan(other, plan, names, undefined)[0]?.kind, 'missing-port', 'another container port does not');
  });

  it('a fixed host port must be the one the container publishes', () => {
    const plan = planWith({ '80/tcp': [{ HostIp: '127.0.0.1', HostPort: '8080' }] });
    assert.equal(
      driftAgainstPlan(
        { HostConfig: { PortBindings: { '80/tcp': [{ HostIp: '127.0.0.1', HostPort: '9090' }] } } },
        plan,
        names,
        undefined,
      )[0]?.kind,
      'missing-port',
    );
    assert.deepEqual(
      driftAgainstPlan({ HostConfig: { PortBindings: { '80/tcp': [{ HostIp: '127.0.0.1', HostPort: '8080' }] } } }, plan, names, undefined),
      [],
    );
  });
});
