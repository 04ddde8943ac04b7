/**
 * Run Doctor's checks (plan/doctor/): each check's pass, warn, fail and info branches from
 * hand-made facts, the report's order and shape, and that outside text stays on its own line.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { MIN_API_VERSION } from '../../extension/src/contract/constants';
import {
  doctorChecks,
  doctorCounts,
  doctorSummary,
  oneLine,
  renderDoctorReport,
  REPORT_COLUMNS,
  type ContainerFacts,
  type DoctorCheck,
  type DoctorFacts,
  type EngineFacts,
  type FolderFacts,
  type ImageFacts,
  type PeerObjectFacts,
} from '../../extension/src/plan/doctor';
import { redactReport } from '../../extension/src/plan/redact';

const home = '/home/alice';
const folder = '/home/alice/proj';
const NAME = 'toolbox-proj-1a2b3c4d';
const REF = 'toolbox-vscode/runtime:3f2a9c1b7d4e';

function container(over: Partial<ContainerFacts> = {}): ContainerFacts {
  return {
    name: NAME,
    state: 'running',
    imageId: 'sha256:current',
    transports: {
      bridge: { mode: 'unix', why: 'the bridge run dir is mounted' },
      sessions: { mode: 'socket', why: 'the holder socket is in the run dir' },
    },
    peer: { member: true, socketVolume: true },
    proximoCa: true,
    protection: { labelled: true, count: 3, missing: [], replaced: [] },
    docker: { kind: 'endpoint', served: true },
    egress: { enforced: false },
    ...over,
  };
}

function folderFacts(over: Partial<FolderFacts> = {}): FolderFacts {
  return {
    folder,
    container: NAME,
    peer: { on: true, source: 'default' },
    imageRef: REF,
    proximo: { enabled: true, installed: true, caPath: '/home/alice/.proximo/tls/ca.pem', hosts: 2 },
    protection: { enabled: true, planned: ['.vscode', '.git/config', '.envrc'] },
    dockerEndpoint: { setting: 'scoped', forwardable: true },
    egressMode: 'open',
    vscodeGit: [],
    containers: [container()],
    ...over,
  };
}

const ENGINE: EngineFacts = {
  reachable: true,
  endpoint: 'unix:///var/run/docker.sock',
  foundBy: 'probe',
  source: 'the platform default',
  product: 'Docker',
  version: '20.10.24',
  apiVersion: '1.41',
  rootless: false,
};

const PEER: PeerObjectFacts = {
  anchor: { state: 'running', entrypointOk: true },
  volume: { exists: true, owner: '1000:1000', mode: '0700' },
};

const IMAGE: ImageFacts = {
  ref: REF,
  ours: true,
  present: true,
  id: 'sha256:current',
  tagHash: '3f2a9c1b7d4e',
  labelHash: '3f2a9c1b7d4e',
  pulled: false,
};

function facts(over: Partial<DoctorFacts> = {}): DoctorFacts {
  return {
    about: { extensionVersion: '0.1.0', vscodeVersion: '1.100.0', platform: 'linux', arch: 'x64', osRelease: '6.1.0' },
    home,
    uid: 1000,
    gid: 1000,
    names: { anchor: 'toolbox-peer-anchor', socketVolume: 'toolbox-cc-socks' },
    engine: ENGINE,
    peerObjects: PEER,
    images: [IMAGE],
    folders: [folderFacts()],
    hostTools: { trusted: true, trustEnabled: true, extensions: [{ id: 'vscode.npm', restricted: 'limited' }] },
    ...over,
  };
}

function check(checks: readonly DoctorCheck[], id: string): DoctorCheck {
  const found = checks.find((c) => c.id === id);
  assert.ok(found, `no ${id} among ${checks.map((c) => c.id).join(', ')}`);
  return found;
}

const only = (f: Partial<FolderFacts>) => facts({ folders: [folderFacts(f)] });
const withContainer = (c: Partial<ContainerFacts>, f: Partial<FolderFacts> = {}) => only({ ...f, containers: [container(c)] });

describe('doctorChecks', () => {
  it('passes everything on a healthy setup, in the order engine, transports, peer, image, proximo, protected, host extensions, docker, egress', () => {
    const checks = doctorChecks(facts());
    assert.deepEqual(
      checks.filter((c) => c.status === 'warn' || c.status === 'fail'),
      [],
    );
    assert.deepEqual(
      checks.map((c) => c.id),
      [
        'engine.reachable',
        'engine.product',
        'engine.api',
        `transports:${NAME}`,
        'peer.anchor',
        'peer.volume',
        `peer.folder:${folder}`,
        `image:${REF}`,
        `proximo:${folder}`,
        `protected:${NAME}`,
        `protected.vscode-git:${folder}`,
        'host-tools',
        `docker:${NAME}`,
        `egress:${folder}`,
        `egress.container:${NAME}`,
      ],
    );
  });

  it('gives every warning and failure something to do', () => {
    const variants: DoctorFacts[] = [
      facts({ engine: { reachable: false, reason: 'connection refused', timedOut: false, tooOld: false } }),
      facts({ engine: { reachable: false, reason: 'no answer within 4 s', timedOut: true, tooOld: false } }),
      facts({ engine: { reachable: false, reason: 'API 1.40 is older', timedOut: false, tooOld: true } }),
      facts({ engine: { ...ENGINE, apiVersion: '1.30', remoteHost: 'far' } as EngineFacts }),
      withContainer({ transports: undefined }),
      withContainer({ transports: { bridge: { mode: 'none', why: 'bridge: false' }, sessions: { mode: 'exec', why: 'no run dir' } } }),
      withContainer({ transports: { unread: 'timeout', reason: 'slow' } }),
      facts({ peerObjects: { anchor: { state: 'stopped', entrypointOk: false }, volume: { exists: true, owner: '0:0', mode: '0755' } } }),
      facts({
        peerObjects: {
          anchor: { state: 'running', entrypointOk: true, foreignLabel: 'com.docker.compose.project' },
          volume: { exists: true, foreignLabel: 'x.y' },
        },
      }),
      facts({ images: [{ ...IMAGE, present: false, pullFrom: 'ghcr.io/x:y' }] }),
      facts({ images: [{ ...IMAGE, labelHash: 'other' }] }),
      withContainer({ imageId: 'sha256:old' }),
      only({ proximo: { enabled: true, installed: true, hosts: 0 } }),
      withContainer({ proximoCa: false }),
      only({ protection: { enabled: false, planned: [] } }),
      withContainer({ protection: { labelled: false, count: 0, missing: [], replaced: [] } }),
      withContainer({ protection: { labelled: true, count: 2, missing: ['.vscode'], replaced: ['.git/config'] } }),
      only({ vscodeGit: [{ setting: 'git.detectSubmodules', value: 'true', source: 'folder' }] }),
      withContainer({ docker: { kind: 'raw-socket' } }),
      withContainer({ docker: { kind: 'endpoint', served: false } }),
      only({ containers: [], dockerEndpoint: { setting: 'raw-socket', forwardable: true } }),
      withContainer({ egress: { enforced: true, served: false } }, { egressMode: 'ask' }),
      withContainer({ egress: { enforced: true } }),
      withContainer({ egress: { enforced: false } }, { egressMode: 'allowlist' }),
      withContainer({ peer: { member: false, socketVolume: true } }),
      only({ configProblem: '.toolbox.yaml:3: mounts must be a list.' }),
      facts({ images: { unread: 'error', reason: 'Inspecting the runtime image failed: boom' } }),
    ];
    let seen = 0;
    for (const v of variants) {
      for (const c of doctorChecks(v)) {
        if (c.status !== 'warn' && c.status !== 'fail') continue;
        seen++;
        assert.ok(c.fix && c.fix.trim().length > 10, `${c.id} (${c.status}) has no fix: ${c.detail}`);
      }
    }
    assert.ok(seen >= variants.length, `${seen} warnings and failures`);
  });

  describe('1. the engine', () => {
    it('says where the endpoint came from: the setting, DOCKER_HOST, a context, or the probe', () => {
      const detail = (foundBy: 'setting' | 'DOCKER_HOST' | 'context' | 'probe', source: string) =>
        check(doctorChecks(facts({ engine: { ...ENGINE, foundBy, source } })), 'engine.reachable').detail;
      assert.equal(detail('setting', 'from the toolbox.dockerHost setting'), 'unix:///var/run/docker.sock, set in toolbox.dockerHost.');
      assert.match(detail('DOCKER_HOST', 'from DOCKER_HOST'), /set in the DOCKER_HOST environment variable\.$/);
      assert.match(detail('context', 'from Docker context colima'), /set in the current Docker context \(from Docker context colima\)\.$/);
      assert.match(
        detail('probe', 'the Colima socket'),
        /found by probing the usual sockets in order, nothing being configured: the Colima socket\.$/,
      );
    });

    it('names the product, rootful or rootless, and the version', () => {
      const product = (rootless: Extract<EngineFacts, { reachable: true }>['rootless']) =>
        check(
          doctorChecks(facts({ engine: { ...ENGINE, product: 'Podman', version: '4.3.1', rootless } as EngineFacts })),
          'engine.product',
        ).detail;
      assert.equal(product(true), 'Podman 4.3.1 (rootless).');
      assert.equal(product(false), 'Podman 4.3.1 (rootful).');
      assert.equal(product({ unread: 'timeout', reason: 'slow' }), 'Podman 4.3.1 (rootful or rootless: not told).');
    });

    it('passes the floor, fails below it and on something that is not a version', () => {
      assert.equal(check(doctorChecks(facts({ engine: { ...ENGINE, apiVersion: MIN_API_VERSION } })), 'engine.api').status, 'pass');
      assert.equal(check(doctorChecks(facts({ engine: { ...ENGINE, apiVersion: '1.47' } })), 'engine.api').status, 'pass');
      assert.equal(check(doctorChecks(facts({ engine: { ...ENGINE, apiVersion: '2.0' } })), 'engine.api').status, 'pass');
      const old = check(doctorChecks(facts({ engine: { ...ENGINE, apiVersion: '1.40' } })), 'engine.api');
      assert.equal(old.status, 'fail');
      assert.match(old.detail, /older than the oldest supported \(1\.41\)/);
      assert.equal(check(doctorChecks(facts({ engine: { ...ENGINE, apiVersion: 'banana' } })), 'engine.api').status, 'fail');
    });

    it('fails when unreachable, warns when it only timed out, fails an engine too old, with Select Engine as the fix', () => {
      const down = doctorChecks(facts({ engine: { reachable: false, reason: 'connection refused', timedOut: false, tooOld: false } }));
      assert.equal(check(down, 'engine.reachable').status, 'fail');
      assert.equal(check(down, 'engine.reachable').title, 'Engine not reachable');
      assert.match(check(down, 'engine.reachable').fix!, /Toolbox: Select Engine…/);
      assert.equal(
        down.find((c) => c.id === 'engine.api'),
        undefined,
        'one line for an engine that did not answer',
      );
      const slow = doctorChecks(facts({ engine: { reachable: false, reason: 'no answer within 4 s', timedOut: true, tooOld: false } }));
      assert.equal(check(slow, 'engine.reachable').status, 'warn');
      const old = doctorChecks(facts({ engine: { reachable: false, reason: 'API 1.40', timedOut: false, tooOld: true } }));
      assert.equal(check(old, 'engine.reachable').status, 'fail');
      assert.match(check(old, 'engine.reachable').fix!, /Podman \(4\.3 or newer\)/);
    });

    it('warns about an engine on another machine', () => {
      const remote = check(doctorChecks(facts({ engine: { ...ENGINE, remoteHost: 'build-box' } })), 'engine.remote');
      assert.equal(remote.status, 'warn');
      assert.match(remote.detail, /build-box/);
    });
  });

  describe('2. transports', () => {
    it('passes a unix socket and a holder socket, each with why', () => {
      const c = check(doctorChecks(facts()), `transports:${NAME}`);
      assert.equal(c.status, 'pass');
      assert.equal(
        c.detail,
        'Bridge: unix socket (the bridge run dir is mounted). Sessions: holder socket (the holder socket is in the run dir).',
      );
    });

    it('passes TCP via host.docker.internal and exec, saying so', () => {
      const c = check(
        doctorChecks(
          withContainer({
            transports: { bridge: { mode: 'tcp', why: 'Docker Desktop' }, sessions: { mode: 'exec', why: 'remote engine' } },
          }),
        ),
        `transports:${NAME}`,
      );
      assert.equal(c.status, 'pass');
      assert.match(c.detail, /^Bridge: TCP via host\.docker\.internal \(Docker Desktop\)\. Sessions: exec \(remote engine\)\.$/);
    });

    it('warns with no bridge, and when not measured yet', () => {
      const none = check(
        doctorChecks(
          withContainer({ transports: { bridge: { mode: 'none', why: 'bridge: false' }, sessions: { mode: 'socket', why: 'x' } } }),
        ),
        `transports:${NAME}`,
      );
      assert.equal(none.status, 'warn');
      assert.match(none.fix ?? '', /bridge: false in \.toolbox\.yaml/);
      // No path left because the bridge was forced to TCP on an engine whose host.docker.internal is not this host's loopback.
      const forced = check(
        doctorChecks(
          withContainer({
            transports: {
              bridge: { mode: 'none', why: 'the container was made with toolbox.transport.bridge set to tcp, so it has no bridge socket' },
              sessions: { mode: 'exec', why: 'forced' },
            },
          }),
        ),
        `transports:${NAME}`,
      );
      assert.equal(forced.status, 'warn');
      assert.match(forced.fix ?? '', /^Set toolbox\.transport\.bridge back to auto in your User settings/);
      const unmeasured = check(doctorChecks(withContainer({ transports: undefined })), `transports:${NAME}`);
      assert.equal(unmeasured.status, 'warn');
      assert.match(unmeasured.detail, /^Not measured yet/);
      assert.equal(
        check(
          doctorChecks(withContainer({ transports: { unread: 'timeout', reason: 'Measuring the transports did not answer within 5 s' } })),
          `transports:${NAME}`,
        ).status,
        'warn',
      );
    });

    it('says "no container yet: open a shell first" as info, and nothing to reach in a stopped one', () => {
      const none = check(doctorChecks(only({ containers: [] })), `transports:${folder}`);
      assert.equal(none.status, 'info');
      assert.equal(none.detail, 'No container yet: open a shell first.');
      assert.equal(check(doctorChecks(withContainer({ state: 'exited' })), `transports:${NAME}`).status, 'info');
    });

    it('is skipped, not waited for, without the engine', () => {
      const c = check(
        doctorChecks(only({ containers: { unread: 'no-engine', reason: 'the engine is not reachable' } })),
        `transports:${folder}`,
      );
      assert.equal(c.status, 'info');
      assert.match(c.detail, /^Not checked: the engine is not reachable/);
    });
  });

  describe('3. peer messaging objects', () => {
    const peer = (p: PeerObjectFacts, f: Partial<FolderFacts> = {}) => doctorChecks(facts({ peerObjects: p, folders: [folderFacts(f)] }));

    it('passes a running anchor of ours and a volume owned by the user, 0700', () => {
      const checks = doctorChecks(facts());
      assert.equal(check(checks, 'peer.anchor').status, 'pass');
      assert.equal(check(checks, 'peer.volume').detail, 'Present, owned by you (1000:1000), mode 0700.');
    });

    it('anchor: info when missing, warn when stopped and wanted, info when not wanted, warn when stale, fail when another tool owns the name', () => {
      const vol = PEER.volume;
      assert.equal(check(peer({ anchor: { state: 'missing', entrypointOk: true }, volume: vol }), 'peer.anchor').status, 'info');
      assert.equal(check(peer({ anchor: { state: 'stopped', entrypointOk: true }, volume: vol }), 'peer.anchor').status, 'warn');
      assert.equal(
        check(
          peer({ anchor: { state: 'stopped', entrypointOk: true }, volume: vol }, { peer: { on: false, source: 'default' } }),
          'peer.anchor',
        ).status,
        'info',
      );
      assert.equal(check(peer({ anchor: { state: 'running', entrypointOk: false }, volume: vol }), 'peer.anchor').status, 'warn');
      const foreign = check(
        peer({ anchor: { state: 'running', entrypointOk: true, foreignLabel: 'com.docker.compose.project' }, volume: vol }),
        'peer.anchor',
      );
      assert.equal(foreign.status, 'fail');
      assert.match(foreign.detail, /com\.docker\.compose\.project/);
    });

    it("volume: info when missing, pass when its owner cannot be read, warn for another owner or mode, fail for another tool's", () => {
      const anchor = PEER.anchor;
      assert.equal(check(peer({ anchor, volume: { exists: false } }), 'peer.volume').status, 'info');
      assert.equal(check(peer({ anchor, volume: { exists: true } }), 'peer.volume').status, 'pass');
      const root = check(peer({ anchor, volume: { exists: true, owner: '0:0', mode: '0700' } }), 'peer.volume');
      assert.equal(root.status, 'warn');
      assert.match(root.fix!, /docker volume rm toolbox-cc-socks/);
      assert.equal(check(peer({ anchor, volume: { exists: true, owner: '1000:1000', mode: '0755' } }), 'peer.volume').status, 'warn');
      assert.equal(
        check(peer({ anchor, volume: { exists: true, foreignLabel: 'com.docker.compose.volume' } }), 'peer.volume').status,
        'fail',
      );
    });

    it("the folder's setting: pass when the running containers agree, warn when one does not, a per-run choice is not drift", () => {
      assert.equal(check(doctorChecks(facts()), `peer.folder:${folder}`).detail, 'On (default); the running containers agree.');
      const drift = check(doctorChecks(withContainer({ peer: { member: false, socketVolume: true } })), `peer.folder:${folder}`);
      assert.equal(drift.status, 'warn');
      assert.match(drift.fix!, /Toolbox: Recreate Drifted Container…/);
      assert.equal(
        check(doctorChecks(withContainer({ peer: { member: false, socketVolume: true, perRun: false } })), `peer.folder:${folder}`).status,
        'pass',
      );
      const off = check(doctorChecks(only({ containers: [], peer: { on: false, source: 'from .toolbox.yaml' } })), `peer.folder:${folder}`);
      assert.equal(off.status, 'info');
      assert.equal(off.detail, 'Off (from .toolbox.yaml).');
    });

    it('is one line, not checked, without the engine', () => {
      const checks = doctorChecks(facts({ peerObjects: { unread: 'no-engine', reason: 'the engine is not reachable' } }));
      assert.equal(check(checks, 'peer.objects').status, 'info');
      assert.equal(
        checks.find((c) => c.id === 'peer.anchor'),
        undefined,
      );
    });
  });

  describe('4. the runtime image', () => {
    it('passes the tag it asks for, present, built here or pulled, not stale', () => {
      const built = check(doctorChecks(facts()), `image:${REF}`);
      assert.equal(built.status, 'pass');
      assert.match(built.detail, /built on this machine; not stale/);
      assert.match(check(doctorChecks(facts({ images: [{ ...IMAGE, pulled: true }] })), `image:${REF}`).detail, /pulled from a registry/);
    });

    it('warns when it is not here yet, saying where it would come from', () => {
      const pull = check(
        doctorChecks(
          facts({ images: [{ ...IMAGE, present: false, pullFrom: 'ghcr.io/toolbox-dev/toolbox-vscode-runtime:3f2a9c1b7d4e' }] }),
        ),
        `image:${REF}`,
      );
      assert.equal(pull.status, 'warn');
      assert.match(pull.detail, /pulls it from ghcr\.io\/toolbox-dev\/toolbox-vscode-runtime:3f2a9c1b7d4e/);
      assert.match(
        check(doctorChecks(facts({ images: [{ ...IMAGE, present: false }] })), `image:${REF}`).detail,
        /builds it \(toolbox\.runtimeImage\.pull is off\)/,
      );
    });

    it('fails an image whose label says another context', () => {
      const c = check(doctorChecks(facts({ images: [{ ...IMAGE, labelHash: '000000000000' }] })), `image:${REF}`);
      assert.equal(c.status, 'fail');
      assert.equal(c.fix, 'Run Toolbox: Rebuild Runtime Image.');
    });

    it('warns about a container running an older image', () => {
      const checks = doctorChecks(withContainer({ imageId: 'sha256:older' }));
      assert.match(check(checks, `image:${REF}`).detail, /see the stale containers below/);
      const stale = check(checks, `image.stale:${NAME}`);
      assert.equal(stale.status, 'warn');
      assert.match(stale.fix!, /Toolbox: Stop Container…/);
    });

    it('reports a custom image without judging its tag', () => {
      const custom: ImageFacts = { ref: 'me/my-image:1', ours: false, present: true, pulled: true };
      assert.equal(check(doctorChecks(facts({ images: [custom] })), 'image:me/my-image:1').status, 'info');
      assert.equal(check(doctorChecks(facts({ images: [{ ...custom, present: false }] })), 'image:me/my-image:1').status, 'warn');
    });

    it('warns when its inspect timed out', () => {
      assert.equal(
        check(
          doctorChecks(facts({ images: { unread: 'timeout', reason: 'Inspecting the runtime image did not answer within 5 s' } })),
          'image',
        ).status,
        'warn',
      );
    });
  });

  describe('5. proximo', () => {
    const p = (proximo: FolderFacts['proximo'], c: Partial<ContainerFacts> = {}) => doctorChecks(withContainer(c, { proximo }));

    it('info when off for the folder or not installed, warn without its CA, pass with it', () => {
      assert.equal(check(p({ enabled: false, installed: true, hosts: 0 }), `proximo:${folder}`).status, 'info');
      assert.equal(check(p({ enabled: true, installed: false, hosts: 0 }), `proximo:${folder}`).status, 'info');
      const noCa = check(p({ enabled: true, installed: true, hosts: 0 }), `proximo:${folder}`);
      assert.equal(noCa.status, 'warn');
      assert.match(noCa.fix!, /proximo install/);
      const on = check(p({ enabled: true, installed: true, caPath: '/home/alice/.proximo/tls/ca.pem', hosts: 1 }), `proximo:${folder}`);
      assert.equal(on.status, 'pass');
      assert.equal(on.detail, 'On: its CA at ~/.proximo/tls/ca.pem is mounted into new containers; 1 routed host.');
    });

    it('warns about a running container made without its CA', () => {
      assert.equal(
        check(p({ enabled: true, installed: true, caPath: '/ca.pem', hosts: 0 }, { proximoCa: false }), `proximo.container:${NAME}`).status,
        'warn',
      );
    });
  });

  describe('6. protected paths', () => {
    it('passes a container with every planned path read-only', () => {
      const c = check(doctorChecks(facts()), `protected:${NAME}`);
      assert.equal(c.status, 'pass');
      assert.equal(c.detail, 'Every protected path the plan has is read-only there (3: .vscode, .git/config, .envrc).');
    });

    it('warns when the setting is off, the container was made without them, or some are missing or replaced', () => {
      const off = check(doctorChecks(only({ protection: { enabled: false, planned: [] } })), `protected:${folder}`);
      assert.equal(off.status, 'warn');
      assert.match(off.fix!, /toolbox\.protectedPaths to true/);
      assert.equal(
        check(doctorChecks(withContainer({ protection: { labelled: false, count: 0, missing: [], replaced: [] } })), `protected:${NAME}`)
          .status,
        'warn',
      );
      const gaps = check(
        doctorChecks(
          withContainer({ protection: { labelled: true, count: 2, missing: ['.vscode'], replaced: ['/home/alice/repo/.git/config'] } }),
        ),
        `protected:${NAME}`,
      );
      assert.equal(gaps.status, 'warn');
      assert.equal(
        gaps.detail,
        'not read-only there: .vscode; replaced or removed on the host since it was made (no longer bound): ~/repo/.git/config.',
      );
    });

    it("passes VS Code's git opening only the folder's own repository; warns naming each setting that opens others, and where it is set", () => {
      const ok = check(doctorChecks(facts()), `protected.vscode-git:${folder}`);
      assert.equal(ok.status, 'pass');
      assert.equal(
        ok.detail,
        "VS Code's git keeps to the folder's own repository and never runs git inside another one in it (git.autoRepositoryDetection false, git.detectSubmodules false, git.ignoreSubmodules true).",
      );
      const on = check(
        doctorChecks(
          only({
            vscodeGit: [
              { setting: 'git.autoRepositoryDetection', value: '"subFolders"', source: 'user' },
              { setting: 'git.detectSubmodules', value: 'true', source: 'folder' },
            ],
          }),
        ),
        `protected.vscode-git:${folder}`,
      );
      assert.equal(on.status, 'warn');
      assert.equal(
        on.detail,
        `VS Code's git runs git inside other repositories in the folder on its own (git.autoRepositoryDetection is "subFolders" in your User settings; git.detectSubmodules is true in the folder's .vscode/settings.json): one an agent makes in the container runs, on this host and without a click, the programs its config names.`,
      );
      assert.equal(
        on.fix,
        "Remove git.autoRepositoryDetection and git.detectSubmodules from your User settings and the folder's .vscode/settings.json (Toolbox's defaults keep VS Code's git to the folder's own repository).",
      );
      // Not read (a stand-in without settings): no row.
      assert.equal(
        doctorChecks(only({ vscodeGit: undefined })).some((c) => c.id.startsWith('protected.vscode-git')),
        false,
      );
    });

    it('lists what the plan binds when there is no container yet', () => {
      const c = check(doctorChecks(only({ containers: [] })), `protected:${folder}`);
      assert.equal(c.status, 'info');
      assert.equal(c.detail, 'No container yet; its plan binds 3 read-only: .vscode, .git/config, .envrc.');
    });
  });

  describe("6b. the extensions on this host that run the folder's files (docs/decisions/0060)", () => {
    const ESLINT = { id: 'dbaeumer.vscode-eslint', restricted: 'off' as const };

    it('passes when none Toolbox knows runs them on its own, naming those that wait for the user', () => {
      const c = check(doctorChecks(facts()), 'host-tools');
      assert.equal(c.status, 'pass');
      assert.match(c.detail, /no installed extension Toolbox knows runs its files on its own\. Only when you ask: npm \(built in\) runs/);
      assert.equal(c.fix, undefined);
      assert.equal(c.offer, undefined);
    });

    it('names the ones a trusted window runs, calmly: information, Restricted Mode as the choice, and the button that opens Workspace Trust', () => {
      const f = facts({ hostTools: { trusted: true, trustEnabled: true, extensions: [ESLINT] } });
      const checks = doctorChecks(f);
      const c = check(checks, 'host-tools');
      assert.equal(c.status, 'info');
      assert.equal(c.title, "Extensions on this host that run the folder's files");
      assert.match(
        c.detail,
        /^This window trusts the folder, so 1 installed extension runs files of the folder on this host, files an agent in the container can write: ESLint runs /,
      );
      assert.match(c.fix!, /^Your choice: .*Restricted Mode \(Workspaces: Manage Workspace Trust, then Don't Trust\)/);
      assert.equal(c.offer, 'workspace-trust');
      assert.deepEqual(
        doctorCounts(checks),
        doctorCounts(doctorChecks(facts({ hostTools: undefined }))),
        'it counts as neither a pass, a warning nor a failure',
      );
      const text = renderDoctorReport(f, checks, 'now');
      const at = text.indexOf("[INFO] Extensions on this host that run the folder's files");
      assert.ok(
        at > text.indexOf('\nHost extensions\n') && text.indexOf('\nHost extensions\n') > text.indexOf('\nProtected paths\n'),
        text,
      );
      assert.match(text.slice(at), /^ {7}What to do: Your choice: /m);
    });

    it('passes in Restricted Mode, and is left out when the window was not read or has no folder', () => {
      const restricted = check(
        doctorChecks(
          facts({
            hostTools: { trusted: false, trustEnabled: true, extensions: [{ id: 'esbenp.prettier-vscode', restricted: 'limited' }] },
          }),
        ),
        'host-tools',
      );
      assert.equal(restricted.status, 'pass');
      assert.match(restricted.detail, /^This window is in Restricted Mode: .* Limited now: Prettier\./);
      assert.equal(
        doctorChecks(facts({ hostTools: undefined })).some((c) => c.id === 'host-tools'),
        false,
      );
      assert.equal(
        doctorChecks(facts({ folders: [], hostTools: { trusted: true, trustEnabled: true, extensions: [ESLINT] } })).some(
          (c) => c.id === 'host-tools',
        ),
        false,
      );
    });
  });

  describe('7. the Docker endpoint', () => {
    it('passes its own endpoint and no Docker at all, fails the host socket', () => {
      assert.equal(
        check(doctorChecks(facts()), `docker:${NAME}`).detail,
        "Its own policy endpoint (never the host's socket), served by this window.",
      );
      assert.equal(check(doctorChecks(withContainer({ docker: { kind: 'none' } })), `docker:${NAME}`).status, 'pass');
      const raw = check(
        doctorChecks(withContainer({ docker: { kind: 'raw-socket' } }, { dockerEndpoint: { setting: 'raw-socket', forwardable: true } })),
        `docker:${NAME}`,
      );
      assert.equal(raw.status, 'fail');
      assert.match(raw.detail, /toolbox\.dockerEndpoint is raw-socket/);
      assert.match(raw.fix!, /toolbox\.dockerEndpoint to scoped/);
    });

    it('warns about an endpoint no window serves', () => {
      assert.equal(check(doctorChecks(withContainer({ docker: { kind: 'endpoint', served: false } })), `docker:${NAME}`).status, 'warn');
    });

    it('without a container: fails a raw-socket setting, says what the next one gets otherwise', () => {
      assert.equal(
        check(doctorChecks(only({ containers: [], dockerEndpoint: { setting: 'raw-socket', forwardable: true } })), `docker:${folder}`)
          .status,
        'fail',
      );
      const next = check(doctorChecks(only({ containers: [] })), `docker:${folder}`);
      assert.equal(next.status, 'info');
      assert.match(next.detail, /its own policy endpoint/);
    });
  });

  describe('8. egress', () => {
    const e = (enforced: boolean, served: boolean | undefined, mode: FolderFacts['egressMode']) =>
      check(
        doctorChecks(withContainer({ egress: { enforced, ...(served !== undefined ? { served } : {}) } }, { egressMode: mode })),
        `egress.container:${NAME}`,
      );

    it("says the folder's mode", () => {
      assert.match(
        check(doctorChecks(only({ egressMode: 'ask' })), `egress:${folder}`).detail,
        /^ask: its new containers have no network of their own/,
      );
    });

    it('passes an enforced container whose proxy is served, and an open one', () => {
      assert.equal(e(true, true, 'allowlist').status, 'pass');
      assert.match(e(true, true, 'allowlist').detail, /its proxy socket is served/);
      assert.equal(e(false, undefined, 'open').status, 'pass');
    });

    it('fails an enforced container whose proxy does not answer', () => {
      const c = e(true, false, 'ask');
      assert.equal(c.status, 'fail');
      assert.match(c.fix!, /Toolbox: Open Toolbox Shell/);
    });

    it('warns a container made under another posture than the folder has now', () => {
      assert.equal(e(true, undefined, 'open').status, 'warn');
      assert.equal(e(false, undefined, 'ask').status, 'warn');
    });
  });

  it("a folder whose configuration cannot be read fails once and skips the plan's checks", () => {
    const checks = doctorChecks(
      facts({ folders: [{ folder, configProblem: '/home/alice/proj/.toolbox.yaml:3: mounts must be a list.', containers: [] }] }),
    );
    const c = check(checks, `config:${folder}`);
    assert.equal(c.status, 'fail');
    assert.match(c.fix!, /Toolbox: Show Resolved Configuration/);
    assert.equal(
      checks.find((x) => x.id.startsWith('protected')),
      undefined,
    );
    assert.equal(
      checks.find((x) => x.id.startsWith('proximo')),
      undefined,
    );
  });

  it('says when no folder is open', () => {
    assert.equal(check(doctorChecks(facts({ folders: [] })), 'folders').status, 'info');
  });
});

describe('the report', () => {
  it('counts and says them as the notification does', () => {
    const counts = doctorCounts([
      { id: 'a', status: 'pass', title: '', detail: '' },
      { id: 'b', status: 'warn', title: '', detail: '' },
      { id: 'c', status: 'fail', title: '', detail: '' },
      { id: 'd', status: 'info', title: '', detail: '' },
      { id: 'e', status: 'pass', title: '', detail: '' },
    ]);
    assert.deepEqual(counts, { passed: 2, warnings: 1, failed: 1 });
    assert.equal(doctorSummary(counts), 'Doctor: 2 passed, 1 warning, 1 failed');
    assert.equal(doctorSummary({ passed: 0, warnings: 3, failed: 0 }), 'Doctor: 0 passed, 3 warnings, 0 failed');
  });

  it('starts with where it ran, then one section per check kind, each line with its mark and what to do', () => {
    const f = withContainer({ transports: undefined });
    const checks = doctorChecks(f);
    const text = renderDoctorReport(f, checks, '2025-01-02T03:04:05.000Z');
    const lines = text.split('\n');
    assert.deepEqual(lines.slice(0, 6), [
      'Toolbox Doctor',
      'Toolbox for VS Code 0.1.0 · VS Code 1.100.0 · linux x64 (6.1.0)',
      'Engine: Docker 20.10.24, API 1.41',
      'Folders: ~/proj',
      'Run at: 2025-01-02T03:04:05.000Z',
      'Doctor: 13 passed, 1 warning, 0 failed.',
    ]);
    for (const heading of [
      'Engine',
      'Transports',
      'Peer messaging',
      'Runtime image',
      'proximo',
      'Protected paths',
      'Host extensions',
      'Docker endpoint',
      'Egress',
    ]) {
      assert.ok(lines.includes(heading), heading);
    }
    const warn = lines.indexOf(`[WARN] Transports of ${NAME}`);
    assert.ok(warn > 0, text);
    // Its detail and what to do, indented under it, wrapped at the report's width; they read back whole.
    const block = lines.slice(
      warn + 1,
      lines.findIndex((l, i) => i > warn && !l.startsWith(' ')),
    );
    assert.match(block[0]!, /^ {7}Not measured yet/);
    assert.ok(
      block.every((l) => l.startsWith(' '.repeat(7)) && l.length <= REPORT_COLUMNS),
      block.join('\n'),
    );
    const whatAt = block.findIndex((l) => /^ {7}What to do: /.test(l));
    assert.ok(whatAt > 0, block.join('\n'));
    const c = check(checks, `transports:${NAME}`);
    assert.equal(
      block
        .slice(0, whatAt)
        .map((l) => l.trim())
        .join(' '),
      c.detail,
    );
    assert.equal(
      block
        .slice(whatAt)
        .map((l) => l.trim())
        .join(' '),
      `What to do: ${c.fix}`,
    );
    assert.ok(lines.includes('[PASS] Engine reachable'));
    // Under Protected paths, after the container's own row.
    assert.ok(lines.indexOf(`[PASS] VS Code's git in ~/proj`) > lines.indexOf('Protected paths'), text);
    assert.ok(text.endsWith('\n'));
  });

  it("keeps outside text on its own line: a line break or escape in the engine's words cannot forge a check", () => {
    const f = facts({
      engine: { reachable: false, reason: 'refused\n[PASS] Everything is fine\u001b[2J\u202e', timedOut: false, tooOld: false },
      folders: [folderFacts({ containers: [container({ name: 'toolbox-x-1a2b3c4d\n[PASS] forged' })] })],
    });
    const text = renderDoctorReport(f, doctorChecks(f), 'now');
    assert.ok(!text.split('\n').some((l) => l.startsWith('[PASS] Everything') || l.startsWith('[PASS] forged')), text);
    assert.ok(!text.includes('\u001b') && !text.includes('\u202e'));
  });
});

describe('the redacted report', () => {
  it('redacts before it wraps, so a value with spaces is never cut in two first', () => {
    const secret = 'open sesame my dear old friend';
    const redact = (t: string) => redactReport(t, { home, env: { PASSPHRASE: secret } });
    // Words before it, as many as it takes for the line to break inside it.
    const f = [...Array(40).keys()]
      .map((n) => only({ configProblem: `${'ab '.repeat(n)}then: ${secret}.` }))
      .find((x) => !renderDoctorReport(x, doctorChecks(x), 'now').includes(secret));
    assert.ok(f, 'the plain report wraps it across lines');
    const redacted = renderDoctorReport(f, doctorChecks(f), 'now', redact);
    assert.ok(!redacted.replace(/\n +/g, ' ').includes(secret), redacted);
    assert.match(redacted.replace(/\n +/g, ' '), /then: <\$PASSPHRASE>\./);
    assert.match(redacted, /^Folders: ~\/proj$/m);
  });
});

describe('oneLine', () => {
  it('makes one bounded line of anything', () => {
    assert.equal(oneLine('a\r\nb\tc\u2028d'), 'a b c d');
    assert.equal(oneLine(undefined), '');
    assert.equal(oneLine('x'.repeat(50), 10), `${'x'.repeat(9)}…`);
    assert.equal(oneLine('\u001b]8;;http://evil\u0007link\u001b]8;;\u0007'), 'link');
  });
});
