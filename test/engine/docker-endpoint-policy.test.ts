/**
 * Issue 27: a workspace container's Docker endpoint with its policy (engine/dockerEndpoint/gate.ts over
 * plan/dockerEndpoint/policy.ts, docs/decisions/0047-docker-endpoint-policy.md), against the real engine. A
 * workspace container stands in for the open path's: its folder at /workspace, the endpoint's
 * directory read-only at /run/toolbox-docker, DOCKER_HOST pointing there, and the host's docker CLI
 * bound in. Everything an agent would try runs as that CLI inside it: what would be root on the
 * host is refused with the rule's sentence, what a developer needs works and is labelled as the
 * workspace's own. A seeded fuzz of hostile create bodies is written to the endpoint's socket from
 * the host, and the engine is then searched for anything it let through.
 *
 * Runs against Podman too (scripts/test-podman.sh: TOOLBOX_TEST_ENGINE=podman).
 * DOCKER_ENDPOINT_FUZZ_SEED=<seed> replays a fuzz failure.
 */
import assert from 'node:assert/strict';
import { mkdirSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { request } from 'node:http';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import type Docker from 'dockerode';
import { DOCKER_ENDPOINT } from '../../extension/src/contract/dockerEndpoint';
import { LABELS } from '../../extension/src/contract/upstream';
import { type DockerEndpoint } from '../../extension/src/engine/dockerEndpoint/server';
import { engineIdentity, hostGatewayAddress } from '../../extension/src/engine/compat';
import { policyGate } from '../../extension/src/engine/dockerEndpoint/gate';
import { TEST_ENGINE, TEST_LABEL, testNamespace } from '../support/docker';
import { BASE_IMAGE, endpointRig } from '../support/endpointRig';
import type { Run } from '../support/run';
import { ensureTestRuntimeImage } from '../support/image';
import { caseVariant, prng, Rng } from '../support/fuzz';

const OWN = LABELS.dockerOwner;
const IMAGE_OWN = LABELS.dockerImageOwner;
const SEED = Number(process.env.DOCKER_ENDPOINT_FUZZ_SEED ?? Math.floor(Math.random() * 2 ** 31));

describe('a workspace container’s Docker endpoint with its policy (issue 27)', () => {
  const ns = testNamespace();
  const prefix = ns.names.prefix;
  const d: Docker = ns.docker;
  const name = (suffix: string) => `${prefix}-${suffix}`;
  const owner = name('ws');
  // The workspace container runs as the test's own user, which owns the folder and the endpoint.
  const rig = endpointRig(ns, owner, (folder) => {
    mkdirSync(join(folder, 'sub'), { recursive: true });
    writeFileSync(join(folder, 'sub', 'hello.txt'), 'from the folder\n');
    // A link in the folder to the host's root, as an agent could make one.
    symlinkSync('/', join(folder, 'link'));
  });
  const { runRoot, folder, workspace, plan, user } = rig;
  const other = name('other');
  const sibling = name('sibling');
  const hostVolume = name('hostvol');
  const refusals: Array<{ rule?: string; message: string }> = [];
  let endpoint: DockerEndpoint;
  let gateway: string | undefined;

  /** host: the host's docker CLI against the engine itself; inside: the docker CLI inside the workspace container, through its endpoint. */
  const { host, inside } = rig;
  /** A shell inside the workspace container, as the agent has one. */
  const shell = (script: string) => host(['exec', owner, 'sh', '-c', script]);

  const refusedBy = (r: Run, rule: string, sentence: RegExp, what: string): void => {
    assert.notEqual(r.code, 0, `${what} passed: ${r.stdout}`);
    assert.match(r.stderr, /Error response from daemon: /, what);
    assert.match(r.stderr, new RegExp(`\\(rule ${rule}\\)`), `${what}: ${r.stderr}`);
    assert.match(r.stderr, sentence, `${what}: ${r.stderr}`);
    assert.match(r.stderr, /toolbox\.dockerEndpoint to raw-socket/, `${what} names the opt-out`);
  };
  const works = (r: Run, what: string): string => {
    assert.equal(r.code, 0, `${what}: ${r.stderr}`);
    return r.stdout;
  };

  /** Containers that carry this workspace's owner label: what went through the endpoint. */
  const ownContainers = async () => d.listContainers({ all: true, filters: { label: [`${OWN}=${owner}`] } });

  before(async () => {
    await rig.requireBaseImage();
    // Where published ports listen, as the extension finds it (backend/dockerEndpoints.ts).
    gateway = await hostGatewayAddress(d);
    endpoint = await rig.startEndpoint(
      policyGate({
        docker: d,
        scope: {
          ...rig.scope,
          publish: gateway !== undefined ? { hostIp: gateway } : {},
          // As backend/dockerEndpoints.ts sets it: Podman's /build runs RUN steps on this host's network.
          ...((await engineIdentity(d)).product === 'Podman' ? { buildsOnHostNetwork: true } : {}),
        },
        log: (e) => refusals.push(e),
      }),
    );
    await Promise.all([
      rig.startSleeper(owner, rig.workspaceContainer()),
      // Another workspace's container (say the peer anchor), and a container another workspace made through its own endpoint.
      rig.startSleeper(other, rig.asUser()),
      rig.startSleeper(sibling, { ...rig.asUser(), Labels: { [OWN]: name('another-ws') } }),
      d.createVolume({ Name: hostVolume, Labels: { [TEST_LABEL]: prefix } }),
    ]);
  });

  after(async () => {
    await endpoint?.close();
    // What the workspace made through its endpoint carries its owner label, whatever its name.
    await rig.removeLabelled('containers', OWN);
    await ns.cleanup();
    await rig.removeLabelled('volumes', OWN);
    await rig.removeLabelled('images', IMAGE_OWN);
    rmSync(runRoot, { recursive: true, force: true });
  });

  describe('refused, from the docker CLI inside the workspace container', () => {
    const run = (...args: string[]) => inside(['run', '--rm', ...args, BASE_IMAGE, 'true']);

    it('binds outside the folder: -v /:/h, -v /etc:/x, --mount type=bind,src=/', async () => {
      refusedBy(await run('-v', '/:/h'), 'bind-source', /binds \/ .*outside this workspace's folder/, '-v /:/h');
      refusedBy(await run('-v', '/etc:/x'), 'bind-source', /binds \/etc .*outside this workspace's folder/, '-v /etc:/x');
      refusedBy(await run('--mount', 'type=bind,src=/,dst=/h'), 'bind-source', /outside this workspace's folder/, '--mount /');
      refusedBy(await run('-v', `${workspace}/../..:/x`), 'bind-source', /outside this workspace's folder/, 'the folder/../..');
      refusedBy(await run('-v', `${workspace}/nothing-here:/x`), 'bind-missing', /does not exist on the host/, 'a missing source');
      refusedBy(await run('-v', `${workspace}/link/etc:/x`), 'bind-source', /\/etc on the host/, 'through a link in the folder');
    });

    it('host namespaces and privileges: --privileged, --pid/--ipc/--userns/--network host, caps, devices, seccomp, sysctls', async (t) => {
      const cases: Array<[string[], string, RegExp]> = [
        [['--privileged'], 'privileged', /privileged container/],
        [['--pid', 'host'], 'pid-mode', /PidMode host shares a namespace of this host/],
        [['--ipc', 'host'], 'ipc-mode', /IpcMode host/],
        [['--userns', 'host'], 'userns-mode', /UsernsMode host/],
        [['--uts', 'host'], 'uts-mode', /UTSMode host/],
        [['--network', 'host'], 'network-mode', /the host's network/],
        [['--cap-add', 'SYS_ADMIN'], 'cap-add', /Adding capabilities/],
        [['--device', '/dev/null'], 'devices', /Host devices/],
        [['--security-opt', 'seccomp=unconfined'], 'security-opt', /security option seccomp=unconfined is not offered/],
        [['--security-opt', 'apparmor=unconfined'], 'security-opt', /apparmor=unconfined/],
        [['--sysctl', 'net.ipv4.ip_forward=1'], 'sysctls', /kernel parameters/],
        [['--cgroup-parent', '/'], 'cgroup-parent', /CgroupParent/],
        [['--log-driver', 'syslog'], 'log-driver', /log driver syslog/],
        [['--runtime', 'runc'], 'runtime', /runtime runc is not offered/],
        // Real-time scheduling ahead of the host's own processes (issue 38, item 11a).
        [
          ['--ulimit', 'rtprio=99'],
          'realtime',
          /sets the rtprio ulimit, which lets the container's processes take real-time CPU scheduling/,
        ],
        [['--ulimit', 'rttime=-1'], 'realtime', /sets the rttime ulimit/],
      ];
      for (const [args, rule, sentence] of cases) {
        const r = await run(...args);
        if (TEST_ENGINE === 'podman' && args[0] === '--device' && /unknown server OS/.test(r.stderr)) {
          // Podman's /_ping has no OSType header, which the CLI needs to read --device; it fails before
          // sending anything (as it does on Podman's own socket). The body it would send, sent here:
          t.diagnostic(`Podman: the docker CLI cannot parse --device without the engine's OSType (${r.stderr.trim().split('\n')[0]})`);
          const body = {
            Image: BASE_IMAGE,
            HostConfig: { Devices: [{ PathOnHost: '/dev/null', PathInContainer: '/dev/null', CgroupPermissions: 'rwm' }] },
          };
          const answer = await send(plan.socketPath, '/v1.41/containers/create', body);
          assert.equal(answer.status, 403);
          assert.match(answer.message, /Host devices .*\(rule devices\)/);
          continue;
        }
        refusedBy(r, rule, sentence, args.join(' '));
      }
      assert.deepEqual(await ownContainers(), [], 'none of them was created');
    });

    it('a local volume with bind options (device=/), made here or by someone else, and used inline', async () => {
      const made = await inside(['volume', 'create', '--opt', 'type=none', '--opt', 'o=bind', '--opt', 'device=/', name('v')]);
      refusedBy(made, 'volume-options', /type, o and device options is a bind of any host path/, 'volume create --opt device=/');
      const inline = await run(
        '--mount',
        `type=volume,src=${name('v2')},dst=/x,volume-opt=type=none,volume-opt=o=bind,volume-opt=device=/`,
      );
      refusedBy(inline, 'volume-driver', /volume driver or its options/, 'an inline volume with device=/');
      // The host's volume (not made through this endpoint): not the workspace's to mount.
      refusedBy(
        await run('-v', `${hostVolume}:/x`),
        'not-owned',
        new RegExp(`volume ${hostVolume}, which another workspace`),
        'a host volume',
      );
      const listed = works(await inside(['volume', 'ls', '--format', '{{.Name}}']), 'volume ls');
      assert.ok(!listed.includes(hostVolume), 'the host volume is not listed either');
      assert.equal(await volumeExists(name('v')), false);
      assert.equal(await volumeExists(name('v2')), false);
    });

    it('another’s containers are not there: exec, inspect, logs, stop, kill, start, top, --volumes-from, container: modes, ps', async () => {
      const missing = name('nobody');
      for (const target of [other, sibling, owner]) {
        // The CLI inspects first and words the 404 itself, as for a container that does not exist.
        for (const args of [
          ['exec', target, 'true'],
          ['container', 'inspect', target],
          ['logs', target],
          ['rm', target],
        ]) {
          const r = await inside(args);
          assert.notEqual(r.code, 0, args.join(' '));
          assert.equal(r.stderr.trim(), `Error: No such container: ${target}`, args.join(' '));
        }
        // rm -f takes a missing container for done (exit 0): what matters is that it stays (checked below).
        await inside(['rm', '-f', target]);
        const inspect = await inside(['inspect', target]);
        assert.equal(inspect.stderr.trim(), `Error: No such object: ${target}`, 'docker inspect, through every kind of object');
        for (const verb of ['stop', 'kill', 'start', 'restart', 'top', 'export']) {
          const r = await inside([verb, target]);
          refusedBy(r, 'not-owned', new RegExp(`No container ${target} here: through this endpoint a container reaches only`), verb);
          // The same answer as for a name nobody has: nothing says that it exists.
          const none = await inside([verb, missing]);
          assert.equal(r.stderr.replaceAll(target, missing), none.stderr, `${verb}: another’s and a missing container answer alike`);
        }
      }
      refusedBy(await run('--volumes-from', other), 'not-owned', /VolumesFrom names the container/, '--volumes-from');
      refusedBy(await run('--pid', `container:${other}`), 'not-owned', /PidMode names the container/, '--pid container:');
      refusedBy(await run('--network', `container:${sibling}`), 'not-owned', /NetworkMode names the container/, '--network container:');
      const ps = works(await inside(['ps', '-a', '--format', '{{.Names}}']), 'ps -a');
      for (const n of [other, sibling, owner]) assert.ok(!ps.includes(n), `ps does not show ${n}: ${ps}`);
      for (const n of [other, sibling, owner]) assert.equal((await d.getContainer(n).inspect()).State.Running, true, `${n} still runs`);
    });
  });

  const volumeExists = (v: string) =>
    d
      .getVolume(v)
      .inspect()
      .then(() => true)
      .catch(() => false);

  describe('what works, from the docker CLI inside the workspace container, labelled as its own', () => {
    it('docker run --rm … echo hi', async () => {
      assert.equal(works(await inside(['run', '--rm', BASE_IMAGE, 'echo', 'hi']), 'run --rm'), 'hi\n');
    });

    it('run -d, logs, exec, stop, start, rm -f of its own container', async () => {
      const child = name('child');
      works(await inside(['run', '-d', '--name', child, BASE_IMAGE, 'sh', '-c', 'echo started; exec sleep infinity']), 'run -d');
      const info = await d.getContainer(child).inspect();
      assert.equal(info.Config.Labels[OWN], owner, 'the endpoint labelled it');
      assert.equal(
        await poll(
          async () => (await inside(['logs', child])).stdout,
          (s) => s === 'started\n',
        ),
        'started\n',
      );
      assert.equal(works(await inside(['exec', child, 'echo', 'in-child']), 'exec'), 'in-child\n');
      works(await inside(['stop', '-t', '1', child]), 'stop');
      works(await inside(['start', child]), 'start');
      works(await inside(['rm', '-f', child]), 'rm -f');
      assert.equal(await containerExists(child), false);
    });

    it('a bind inside the folder by its host path, and a named volume (created labelled, twice: create and run)', async () => {
      const read = await inside(['run', '--rm', '-v', `${workspace}/sub:/x:ro`, BASE_IMAGE, 'cat', '/x/hello.txt']);
      assert.equal(works(read, 'bind of the folder/sub'), 'from the folder\n');
      works(await inside(['volume', 'create', name('vol')]), 'volume create');
      assert.equal((await d.getVolume(name('vol')).inspect()).Labels?.[OWN], owner);
      works(await inside(['run', '--rm', '-v', `${name('auto')}:/d`, BASE_IMAGE, 'sh', '-c', 'echo kept > /d/f']), 'run with a new volume');
      assert.equal((await d.getVolume(name('auto')).inspect()).Labels?.[OWN], owner, 'the volume a run made was created labelled first');
      assert.equal(
        works(await inside(['run', '--rm', '-v', `${name('auto')}:/d`, BASE_IMAGE, 'cat', '/d/f']), 'the volume again'),
        'kept\n',
      );
      const listed = works(await inside(['volume', 'ls', '--format', '{{.Name}}']), 'volume ls').split('\n');
      assert.ok(listed.includes(name('vol')) && listed.includes(name('auto')), listed.join(','));
      works(await inside(['volume', 'rm', name('vol')]), 'volume rm of its own');
    });

    it('docker build with the classic builder, under its own image names; the image carries the image label', async () => {
      await shell(`mkdir -p /workspace/ctx && printf 'FROM ${BASE_IMAGE}\\nRUN echo built > /built\\n' > /workspace/ctx/Dockerfile`);
      const tag = `localhost/${owner}/built:1`;
      const built = await inside(['build', '-t', tag, '/workspace/ctx'], { DOCKER_BUILDKIT: '0' });
      if (TEST_ENGINE === 'podman') {
        // Podman's /build runs RUN steps on this host's network whatever networkmode says (the item-4 test measures it).
        refusedBy(built, 'build-network', /runs a build's RUN steps on this host's network/, 'a build on Podman');
        return;
      }
      works(built, 'docker build (classic)');
      const image = await d.getImage(tag).inspect();
      assert.equal(image.Config.Labels?.[IMAGE_OWN], owner, 'the build was labelled');
      assert.equal(image.Config.Labels?.[OWN], undefined, 'not with the owner label, which containers made from it would inherit');
      assert.equal(works(await inside(['run', '--rm', tag, 'cat', '/built']), 'run the built image'), 'built\n');
    });

    it('docker build with BuildKit through the classic endpoint (DOCKER_BUILDKIT=1, the CLI’s own client: /session and /build?version=2)', async (t) => {
      if (TEST_ENGINE === 'podman') {
        // Podman 4.3 serves no /session (the CLI on its own socket fails "unable to upgrade to h2c, received 404").
        return t.skip('Podman has no BuildKit: its compat API answers /session 404 and builds with Buildah (the classic build above)');
      }
      const tag = `localhost/${owner}/bk:1`;
      const built = await inside(['build', '-t', tag, '/workspace/ctx'], { DOCKER_BUILDKIT: '1' });
      if (built.code !== 0 && /buildx component is missing|BuildKit is enabled but/.test(built.stderr)) {
        return t.skip(`the CLI in the container has no BuildKit client: ${built.stderr.trim().slice(0, 120)}`);
      }
      works(built, 'docker build (BuildKit)');
      // Built through /build (version=2), the labels the policy added reach BuildKit too (buildx's /grpc is refused).
      assert.equal((await d.getImage(tag).inspect()).Config.Labels?.[IMAGE_OWN], owner);
      t.diagnostic('BuildKit (the CLI’s built-in client: /session, then /build?version=2&remote=client-session) built and labelled it');
      await d
        .getImage(tag)
        .remove({ force: true })
        .catch(() => undefined);
    });

    it('ps --filter label=<owner label> lists what it made', async () => {
      works(await inside(['create', '--name', name('listed'), BASE_IMAGE, 'true']), 'create');
      const listed = works(await inside(['ps', '-a', '--filter', `label=${OWN}=${owner}`, '--format', '{{.Names}}']), 'ps --filter');
      assert.ok(listed.split('\n').includes(name('listed')), listed);
      const fromHost = await ownContainers();
      assert.ok(
        fromHost.every((c) => c.Labels[OWN] === owner),
        'the host sees the same label',
      );
    });
  });

  it('a bind whose directory became a link since the create is not started again (bind-source)', async () => {
    const swap = name('swap');
    await shell('mkdir -p /workspace/swap');
    works(await inside(['run', '--name', swap, '-v', `${workspace}/swap:/x`, BASE_IMAGE, 'true']), 'run with a bind of folder/swap');
    works(await inside(['start', '-a', swap]), 'started again while the bind is still a directory');
    // The agent replaces the directory with a link to /etc (of the host, where Docker resolves it).
    works(await shell('rm -rf /workspace/swap && ln -s /etc /workspace/swap'), 'swap');
    const again = await inside(['start', swap]);
    refusedBy(again, 'bind-source', new RegExp(`binds ${workspace}/swap, which now leads to /etc`), 'start after the swap');
    assert.equal((await d.getContainer(swap).inspect()).State.Running, false);
    // And a create through the link is refused at once.
    refusedBy(await inside(['run', '--rm', '-v', `${workspace}/swap:/x`, BASE_IMAGE, 'true']), 'bind-source', /\/etc on the host/, 'link');
  });

  it('a commit’s changes set no label in Toolbox’s namespace, however the key is spelt; ONBUILD is refused (issue 38, item 10)', async () => {
    const source = name('to-commit');
    const forged = `localhost/${owner}/forged:1`;
    const kept = `localhost/${owner}/kept:1`;
    try {
      works(await inside(['create', '--name', source, BASE_IMAGE, 'true']), 'create');
      // Docker reads the changes as a Dockerfile: quotes and escapes go before the key is read. Sent
      // as a hostile client would, with a config ({}), to the endpoint's socket.
      const another = name('another-ws');
      for (const change of [
        `LABEL "dev.toolbox".docker-owner=${another}`,
        `LABEL dev.toolbox.docker\\-owner=${another}`,
        `label 'dev.toolbox.docker-owner' ${another}`,
      ]) {
        const answer = await send(
          plan.socketPath,
          `/v1.41/commit?container=${source}&repo=${encodeURIComponent(`localhost/${owner}/forged`)}&tag=1&changes=${encodeURIComponent(change)}`,
          {},
        );
        assert.equal(answer.status, 403, `${change}: ${answer.message}`);
        assert.match(answer.message, /sets a label in dev\.toolbox\., Toolbox's own namespace.*\(rule owner-label\)/, change);
      }
      refusedBy(
        await inside(['commit', '-c', 'ONBUILD RUN id', source, forged]),
        'commit-changes',
        /is an ONBUILD, which runs its instruction in every build FROM the image/,
        'ONBUILD',
      );
      await assert.rejects(d.getImage(forged).inspect(), 'nothing was committed');
      // What a developer commits: several changes at once, the image labelled as the workspace's own.
      works(await inside(['commit', '-c', 'LABEL purpose=kept', '-c', 'ENV MODE=kept', source, kept]), 'commit with two changes');
      const image = await d.getImage(kept).inspect();
      assert.equal(image.Config.Labels?.[IMAGE_OWN], owner);
      assert.equal(image.Config.Labels?.purpose, 'kept');
      assert.ok(image.Config.Env?.includes('MODE=kept'), JSON.stringify(image.Config.Env));
    } finally {
      for (const ref of [forged, kept])
        await d
          .getImage(ref)
          .remove({ force: true })
          .catch(() => undefined);
    }
  });

  it('publishes ports where the workspace container reaches the host, never on every address, below 1024 or on Toolbox’s own (issue 38, item 6)', async (t) => {
    const own = gateway ?? '127.0.0.1';
    t.diagnostic(`a port published without an address listens on ${own}`);
    const published = name('published');
    works(
      await inside(['run', '-d', '--name', published, '-p', '8080', '-p', '127.0.0.1::8081', BASE_IMAGE, 'sleep', 'infinity']),
      'run -p 8080',
    );
    const ports = await poll(
      async () => (await d.getContainer(published).inspect()).NetworkSettings.Ports ?? {},
      (p) => (p['8080/tcp']?.length ?? 0) > 0 && (p['8081/tcp']?.length ?? 0) > 0,
    );
    // The engine's own record of where it listens: no 0.0.0.0 or :: among them.
    assert.deepEqual(
      (ports['8080/tcp'] ?? []).map((b) => b.HostIp),
      [own],
      JSON.stringify(ports),
    );
    assert.deepEqual(
      (ports['8081/tcp'] ?? []).map((b) => b.HostIp),
      ['127.0.0.1'],
    );
    assert.ok(Number((ports['8080/tcp'] ?? [])[0]?.HostPort) >= 1024, 'a port the engine picked');
    const cases: Array<[string[], RegExp]> = [
      [['-p', '0.0.0.0:18080:80'], /asks to listen on 0\.0\.0\.0, every address of this host/],
      [['-p', '[::]:18081:80'], /asks to listen on ::, every address of this host/],
      [['-p', '80:80'], /asks for host port 80, below 1024/],
      [['-p', '127.0.0.1:17654:80'], /asks for host port 17654, where Toolbox’s bridge listens \(17654–17669\)/],
      [['-p', '127.0.0.1:1455:80'], /where the codex login callback Toolbox forwards listens/],
      [['-P', '--expose', '80'], /HostConfig\.PublishAllPorts publishes every port the image exposes on every address of this host/],
    ];
    for (const [args, sentence] of cases)
      refusedBy(await inside(['run', '--rm', ...args, BASE_IMAGE, 'true']), 'published-port', sentence, args.join(' '));
    works(await inside(['rm', '-f', published]), 'rm -f');
  });

  it('BuildKit’s own API (/grpc): the image’s docker buildx asking for the host’s network is refused with the sentence; the classic builder builds (issue 38, item 4)', async (t) => {
    const image = await ensureTestRuntimeImage();
    mkdirSync(join(folder, 'bk'), { recursive: true });
    // Each RUN step's network interfaces: the host's (docker0 among them) with network.host.
    writeFileSync(join(folder, 'bk', 'Dockerfile'), `FROM ${BASE_IMAGE}\nRUN cut -d: -f1 /proc/net/dev | tail -n +3 | tr -d ' ' > /nets\n`);
    const overGrpc = `localhost/${owner}/bk-host:1`;
    const classic = `localhost/${owner}/bk-classic:1`;
    const script = [
      `docker buildx build --allow network.host --network host --progress=plain -t ${overGrpc} /ctx 2>&1; echo "buildx-rc=$?"`,
      `DOCKER_BUILDKIT=0 docker build -q -t ${classic} /ctx 2>&1; echo "classic-rc=$?"`,
    ].join('\n');
    try {
      // The runtime image's own CLI and buildx (decision 0049), through the endpoint as a workspace container has it.
      const r = await host([
        'run',
        '--rm',
        '--name',
        name('buildx'),
        '--user',
        `${user.uid}:${user.gid}`,
        '-e',
        'HOME=/tmp',
        '-e',
        `DOCKER_HOST=unix://${DOCKER_ENDPOINT.containerSocket}`,
        '-v',
        `${plan.dir}:${DOCKER_ENDPOINT.containerDir}:ro`,
        '-v',
        `${workspace}/bk:/ctx:ro`,
        '--entrypoint',
        'bash',
        image,
        '-c',
        script,
      ]);
      const out = r.stdout + r.stderr;
      assert.match(out, /buildx-rc=[1-9]/, `docker buildx build --network host passed: ${out}`);
      // buildx shows the refusal (the endpoint answers /grpc in gRPC), not "no BuildKit here".
      assert.match(
        out,
        /PermissionDenied: BuildKit's own API \(\/grpc, which docker buildx and Compose build through\) is not offered: .*network\.host.*Build with the classic builder instead: DOCKER_BUILDKIT=0 docker build …, or DOCKER_BUILDKIT=0 docker compose build\. \(rule buildkit-grpc\)/,
        out,
      );
      assert.doesNotMatch(out, /booting buildkit|moby\/buildkit/, 'buildx did not fall back to a BuildKit container of its own');
      await assert.rejects(d.getImage(overGrpc).inspect(), 'nothing was built over /grpc');
      if (TEST_ENGINE === 'podman') {
        // Podman 4.3's compat /build runs RUN steps on this host's network whatever networkmode
        // says (docs/decisions/0047, Consequences), so the endpoint refuses builds there. Measured
        // straight on the engine, not through the endpoint: RUN sees this host's interfaces.
        assert.match(out, /classic-rc=[1-9]/, out);
        assert.match(out, /runs a build's RUN steps on this host's network.*\(rule build-network\)/, out);
        const direct = await host(['build', '-q', '--network', 'none', '-t', classic, join(folder, 'bk')]);
        const seen = works(await host(['run', '--rm', '--network', 'none', classic, 'cat', '/nets']), 'the image built on Podman');
        t.diagnostic(`Podman: a build's RUN with --network none saw ${seen.trim().split(/\s+/).join(' ')} (${direct.code})`);
        return;
      }
      assert.match(out, /classic-rc=0/, out);
      assert.equal((await d.getImage(classic).inspect()).Config.Labels?.[IMAGE_OWN], owner, 'the classic build is labelled');
      const nets = works(await host(['run', '--rm', '--network', 'none', classic, 'cat', '/nets']), 'the classic image');
      assert.doesNotMatch(nets, /docker0|cni-podman0/, `the classic builder's RUN was not on this host's network: ${nets}`);
    } finally {
      for (const ref of [overGrpc, classic])
        await d
          .getImage(ref)
          .remove({ force: true })
          .catch(() => undefined);
    }
  });

  describe('a hostile-body fuzz on the endpoint socket, from the host (seed ' + SEED + ')', () => {
    it('lets no create reach the engine with a privileged, host-namespace or host-bind container', async (t) => {
      t.diagnostic(`DOCKER_ENDPOINT_FUZZ_SEED=${SEED} replays this run`);
      const rng = new Rng(prng(SEED));
      const outcomes = new Map<string, number>();
      let controls = 0;
      for (let i = 0; i < 200; i++) {
        const c = hostileRequest(rng, i, workspace, prefix);
        const status = await post(plan.socketPath, c);
        const key = `${c.control ? 'control' : 'hostile'} ${status}`;
        outcomes.set(key, (outcomes.get(key) ?? 0) + 1);
        if (c.control) {
          assert.equal(status, 201, `control #${i} (${c.what}) must be created: ${c.body.toString().slice(0, 200)}`);
          controls++;
        } else {
          assert.notEqual(status, 201, `#${i} ${c.what} reached the engine (seed ${SEED}): ${c.body.toString().slice(0, 300)}`);
        }
      }
      t.diagnostic(`outcomes: ${[...outcomes].map(([k, n]) => `${k}: ${n}`).join(', ')}`);
      // Whatever the engine holds now of this test, through the endpoint or not, judged from its inspect.
      const all = await d.listContainers({ all: true, filters: { label: [`${TEST_LABEL}=${prefix}`] } });
      const bad: string[] = [];
      for (const c of all) {
        const info = await d.getContainer(c.Id).inspect();
        const hc = info.HostConfig;
        const made = info.Config.Labels?.[OWN] === owner;
        if (!made) continue;
        if (hc.Privileged) bad.push(`${info.Name} privileged`);
        for (const [k, v] of Object.entries({
          PidMode: hc.PidMode,
          IpcMode: hc.IpcMode,
          NetworkMode: hc.NetworkMode,
          UsernsMode: hc.UsernsMode,
          UTSMode: hc.UTSMode,
        }))
          if (v === 'host' || (typeof v === 'string' && v.startsWith('container:'))) bad.push(`${info.Name} ${k} ${v}`);
        if ((hc.CapAdd ?? []).length > 0) bad.push(`${info.Name} CapAdd`);
        if ((hc.Devices ?? []).length > 0) bad.push(`${info.Name} Devices`);
        for (const m of info.Mounts ?? [])
          if (m.Type === 'bind' && !(m.Source === workspace || m.Source.startsWith(`${workspace}/`) || m.Source === plan.socketPath))
            bad.push(`${info.Name} binds ${m.Source}`);
      }
      assert.deepEqual(bad, [], `seed ${SEED}`);
      const created = all.filter((c) => c.Labels[OWN] === owner && c.Names.some((n) => n.includes('-fz')));
      assert.equal(created.length, controls, 'exactly the controls were created');
      assert.ok(controls >= 10, `only ${controls} controls: the fuzz does not show the endpoint forwards`);
    });
  });

  const containerExists = (n: string) =>
    d
      .getContainer(n)
      .inspect()
      .then(() => true)
      .catch(() => false);

  it('logged each refusal with its rule', () => {
    assert.ok(refusals.length > 20, `${refusals.length} refusals logged (${TEST_ENGINE})`);
    assert.ok(refusals.every((r) => typeof r.rule === 'string' && r.message !== ''));
  });
});

/** Polls `read` until `done` holds (at most `ms`), without sleeping longer than it must. */
async function poll<T>(read: () => Promise<T>, done: (v: T) => boolean, ms = 10_000): Promise<T> {
  const until = Date.now() + ms;
  for (;;) {
    const v = await read();
    if (done(v) || Date.now() > until) return v;
    await new Promise((r) => setTimeout(r, 100));
  }
}

interface FuzzRequest {
  target: string;
  body: Buffer;
  chunked: boolean;
  control: boolean;
  what: string;
}

/** A dangerous setting for a real engine: where it goes, its key, dangerous values. */
const DANGERS: ReadonlyArray<{ key: string; values: (ws: string) => unknown[] }> = [
  { key: 'Privileged', values: () => [true] },
  { key: 'PidMode', values: () => ['host'] },
  { key: 'IpcMode', values: () => ['host'] },
  { key: 'UTSMode', values: () => ['host'] },
  { key: 'UsernsMode', values: () => ['host'] },
  { key: 'NetworkMode', values: () => ['host', 'HOST', 'Host'] },
  { key: 'CapAdd', values: () => [['SYS_ADMIN'], ['ALL']] },
  { key: 'Devices', values: () => [[{ PathOnHost: '/dev/null', PathInContainer: '/dev/x', CgroupPermissions: 'rwm' }]] },
  { key: 'SecurityOpt', values: () => [['seccomp=unconfined'], ['apparmor=unconfined'], ['label=disable']] },
  {
    key: 'Binds',
    values: (ws) => [['/:/h'], ['/etc:/x'], [`${ws}/../..:/x`], [`${ws}/link:/x`], [`${ws}/link/etc:/x`], ['/var/lib/docker:/x']],
  },
  { key: 'Mounts', values: () => [[{ Type: 'bind', Source: '/', Target: '/h' }], [{ Type: 'bind', Source: '/etc', Target: '/x' }]] },
];

/** Spellings Go's encoding/json reads as the key (case folding, the Kelvin sign and the long s), and the exact key. */
function spell(key: string, rng: Rng): string {
  switch (rng.int(5)) {
    case 0:
      return key;
    case 1:
      return caseVariant(key, rng);
    case 2:
      return key.toLowerCase();
    case 3:
      // privilegeD, pidmodE.
      return key[0].toLowerCase() + key.slice(1, -1) + key.slice(-1).toUpperCase();
    default:
      return key.replace(/k/i, '\u212a').replace(/s/i, '\u017f');
  }
}

/**
 * One request to the endpoint: a targeted hostile create (a dangerous setting spelt, placed and
 * repeated some way; a hostile target or framing), or, one in ten, a plain create that must pass.
 */
function hostileRequest(rng: Rng, i: number, ws: string, prefix: string): FuzzRequest {
  const base = { Image: BASE_IMAGE, Cmd: ['true'], Labels: { [TEST_LABEL]: prefix } };
  const target = `/v1.41/containers/create?name=${prefix}-fz${i}`;
  if (i % 10 === 0) {
    return {
      target,
      body: Buffer.from(JSON.stringify({ ...base, HostConfig: { Binds: [`${ws}/sub:/x:ro`] } })),
      chunked: rng.chance(0.5),
      control: true,
      what: 'control',
    };
  }
  const danger = rng.pick(DANGERS);
  const value = rng.pick(danger.values(ws));
  const entry = `${JSON.stringify(spell(danger.key, rng))}:${JSON.stringify(value)}`;
  const safe = `${JSON.stringify(danger.key)}:${JSON.stringify(Array.isArray(value) ? [] : typeof value === 'boolean' ? false : '')}`;
  const head = JSON.stringify(base).slice(1, -1);
  let body: string;
  let what: string;
  switch (rng.int(6)) {
    case 0:
      // Docker's deprecated embedding: HostConfig's fields at the top level.
      body = `{${head},${entry}}`;
      what = `top-level ${entry}`;
      break;
    case 1:
      // A duplicate: the safe spelling first, the dangerous one last (Go's last wins), or the other way round.
      body = rng.chance(0.5) ? `{${head},"HostConfig":{${safe},${entry}}}` : `{${head},"HostConfig":{${entry},${safe}}}`;
      what = `duplicate ${entry}`;
      break;
    case 2:
      // Two HostConfigs, one spelt otherwise.
      body = `{${head},"HostConfig":{},${JSON.stringify(caseVariant('HostConfig', rng))}:{${entry}}}`;
      what = `second HostConfig with ${entry}`;
      break;
    case 3:
      // \u escapes that decode to the exact key.
      body = `{${head},"HostConfig":{"${[...danger.key].map((c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`).join('')}":${JSON.stringify(value)}}}`;
      what = `escaped ${danger.key}`;
      break;
    default:
      body = `{${head},"HostConfig":{${entry}}}`;
      what = `HostConfig ${entry}`;
  }
  let t = target;
  switch (rng.int(8)) {
    case 0:
      t = `/v1.12/containers/create?name=${prefix}-fz${i}`;
      break;
    case 1:
      t = `/v1.41/containers/x/%2e%2e/create?name=${prefix}-fz${i}`;
      break;
    case 2:
      t = `/v1.41/containers/%63reate?name=${prefix}-fz${i}`;
      break;
    case 3:
      t = `/v1.41//containers/create?name=${prefix}-fz${i}`;
      break;
    default:
      break;
  }
  const oversized = rng.chance(0.05);
  if (oversized)
    body = body.slice(0, -1) + `,"Env":[${Array.from({ length: 50_000 }, (_, n) => `"V${n}=xxxxxxxxxxxxxxxxxxxx"`).join(',')}]}`;
  return {
    target: t,
    body: Buffer.from(body),
    chunked: oversized || rng.chance(0.3),
    control: false,
    what: `${what} at ${t}${oversized ? ' (oversized)' : ''}`,
  };
}

/** POSTs a JSON body to the endpoint's socket: the answer's status and message. */
function send(socketPath: string, target: string, body: unknown): Promise<{ status: number; message: string }> {
  return new Promise((resolve, reject) => {
    const data = Buffer.from(JSON.stringify(body));
    const headers = { 'Content-Type': 'application/json', 'Content-Length': String(data.length), Host: 'docker' };
    const req = request({ socketPath, method: 'POST', path: target, headers }, (res) => {
      let text = '';
      res.on('data', (d: Buffer) => (text += d.toString()));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, message: (JSON.parse(text) as { message?: string }).message ?? text }));
    });
    req.on('error', reject);
    req.end(data);
  });
}

/** POSTs a fuzz request to the endpoint's socket: chunked in pieces, or with a length. The answer's status. */
function post(socketPath: string, r: FuzzRequest): Promise<number> {
  return new Promise((resolve, reject) => {
    const headers: Record<string, string> = { 'Content-Type': 'application/json', Host: 'docker' };
    if (!r.chunked) headers['Content-Length'] = String(r.body.length);
    const req = request({ socketPath, method: 'POST', path: r.target, headers }, (res) => {
      res.resume();
      res.on('end', () => resolve(res.statusCode ?? 0));
    });
    req.on('error', (e: NodeJS.ErrnoException) => (e.code === 'EPIPE' || e.code === 'ECONNRESET' ? resolve(-1) : reject(e)));
    if (r.chunked) {
      for (let at = 0; at < r.body.length; at += 64 * 1024) req.write(r.body.subarray(at, at + 64 * 1024));
      req.end();
    } else req.end(r.body);
  });
}
