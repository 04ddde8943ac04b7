import assert from 'node:assert/strict';
import { chmodSync, mkdirSync, rmSync, statSync } from 'node:fs';
import { createServer, type Server } from 'node:net';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import type Docker from 'dockerode';
import type { EngineContext } from '../../extension/src/engine/context';
import { ensureImage } from '../../extension/src/engine/image';
import { ANCHOR_ENTRYPOINT } from '../../extension/src/engine/peer';
import { openContainer, type OpenResult } from '../../extension/src/engine/open';
import { CONTAINER } from '../../extension/src/contract/upstream';
import { EXTENSION_VERSION } from '../../extension/src/contract/manifest';
import { RUNTIME_IMAGE_LABELS } from '../../extension/src/contract/image';
import { runtimeContextHash } from '../../extension/src/engine/imageBuild';
import { DEFAULT_CONFIG } from '../../extension/src/config/model';
import { storedPidMode } from '../../extension/src/plan/drift';
import { containerHostname } from '../../extension/src/plan/naming';
import { planSession, withImageDigest } from '../../extension/src/plan/session';
import type { SessionPlan } from '../../extension/src/plan/types';
import { TEST_ENGINE, TEST_ROOTLESS, testNamespace, testUser, type TestNamespace } from '../support/docker';
import { ensureTestRuntimeImage, repoRoot, TEST_BUILD_ARGS, TEST_RUNTIME_IMAGE_REPO } from '../support/image';
import { freePort } from '../support/ports';

const { uid: UID, gid: GID } = testUser(4321, 4322);

interface PlanOptions {
  peer: boolean;
  /** Keep the container after it stops (the start test stops it). */
  keep?: boolean;
  ports?: number[];
  /** Test-only: drop the socket-volume bind while keeping the namespace. */
  withoutVolume?: boolean;
  ensureDirs?: string[];
}

/** A SessionPlan built by hand: the smallest create body the engine code must handle. */
function planFor(ns: TestNamespace, image: string, opts: PlanOptions): SessionPlan {
  const name = `${ns.names.prefix}-ws-demo-0a1b2c3d`;
  const binds = opts.peer && !opts.withoutVolume ? [`${ns.names.socketVolume}:${CONTAINER.peerSocketDir}`] : [];
  const ports = opts.ports ?? [];
  const hostConfig: SessionPlan['create']['HostConfig'] & { NetworkMode?: string } = {
    Binds: binds,
    ExtraHosts: [],
    SecurityOpt: [],
    AutoRemove: !opts.keep,
    ...(opts.peer ? { PidMode: `container:${ns.names.anchor}` } : {}),
    ...(ports.length
      ? { PortBindings: Object.fromEntries(ports.map((p) => [`${p}/tcp`, [{ HostIp: '127.0.0.1', HostPort: String(p) }]])) }
      : // Nothing here needs a network; this keeps the tests independent of the default bridge.
        { NetworkMode: 'none' }),
  };
  return {
    name,
    workspace: '/work/demo',
    peer: opts.peer,
    mounts: [],
    ensureDirs: opts.ensureDirs ?? [],
    shellCmd: [CONTAINER.shell],
    create: {
      name,
      Hostname: containerHostname(name),
      Image: image,
      Cmd: [CONTAINER.shell],
      Env: [],
      User: `${UID}:${GID}`,
      WorkingDir: CONTAINER.workspace,
      Tty: true,
      OpenStdin: true,
      AttachStdin: false,
      Labels: {},
      ...(ports.length ? { ExposedPorts: Object.fromEntries(ports.map((p) => [`${p}/tcp`, {}])) } : {}),
      HostConfig: hostConfig,
    },
  };
}

async function execOut(docker: Docker, id: string, cmd: string[]): Promise<string> {
  const exec = await docker.getContainer(id).exec({ Cmd: cmd, AttachStdout: true, AttachStderr: true, Tty: true });
  const stream = await exec.start({ hijack: true, stdin: false, Tty: true });
  const chunks: Buffer[] = [];
  stream.on('data', (c: Buffer) => chunks.push(c));
  await new Promise((resolve) => stream.on('end', resolve));
  return Buffer.concat(chunks).toString('utf8').trim();
}

describe('openContainer against the real engine', () => {
  let image: string;
  const spaces: TestNamespace[] = [];
  const servers: Server[] = [];
  const cleanups: Array<() => Promise<void>> = [];

  before(async () => {
    image = await ensureTestRuntimeImage();
  });
  after(async () => {
    for (const s of servers) s.close();
    for (const c of cleanups) await c();
    await Promise.all(spaces.map((s) => s.cleanup()));
  });

  /** A fresh namespace, its context, and a counter of ensureImage calls. */
  function setup() {
    const ns = testNamespace();
    spaces.push(ns);
    const log: string[] = [];
    const made: string[] = [];
    const ctx: EngineContext = { docker: ns.docker, names: ns.names, log: (l) => log.push(l) };
    const imageCalls: string[] = [];
    const open = (plan: SessionPlan, extra: { volumeInitCommand?: string } = {}): Promise<OpenResult> =>
      openContainer(ctx, plan, { ensureImage: async (ref) => void imageCalls.push(ref), ...extra });
    return { ns, ctx, log, made, imageCalls, open };
  }

  it('creates the anchor, the socket volume and the container on the first open, in one namespace', async () => {
    const { ns, open, imageCalls } = setup();
    const dir = join(ns.home, '.toolbox', 'claude-home');
    const plan = planFor(ns, image, { peer: true, ensureDirs: [dir] });
    const result = await open(plan);

    assert.equal(result.action, 'create');
    assert.equal(result.name, plan.name);
    assert.equal(result.peerActive, true);
    assert.deepEqual(result.warnings, []);
    assert.deepEqual(imageCalls, [image]);

    const anchor = await ns.docker.getContainer(ns.names.anchor).inspect();
    assert.equal(anchor.State.Running, true);
    assert.deepEqual(anchor.Config.Entrypoint, [...ANCHOR_ENTRYPOINT]);
    const info = await ns.docker.getContainer(result.id).inspect();
    assert.equal(info.State.Running, true);
    assert.equal(info.HostConfig.PidMode, `container:${anchor.Id}`, 'Docker stores the anchor by id');
    assert.ok(
      info.Mounts.some((m) => m.Type === 'volume' && m.Name === ns.names.socketVolume && m.Destination === CONTAINER.peerSocketDir),
    );

    // The session user owns the shared socket directory, mode 0700, as seen from inside.
    assert.equal(await execOut(ns.docker, result.id, ['stat', '-c', '%u:%g %a', CONTAINER.peerSocketDir]), `${UID}:${GID} 700`);
    // The host directory the plan asked for exists, private.
    assert.equal(statSync(dir).mode & 0o777, 0o700);
  });

  it("gives the planner's container a host name from its name and SHELL, as a shell inside sees them (issue 13, item 10)", async () => {
    const { ns, open } = setup();
    const workspace = join(ns.home, 'My Project');
    mkdirSync(workspace);
    const { plan } = planSession(
      { workspace, config: DEFAULT_CONFIG, peer: false, image, names: ns.names },
      { uid: UID, gid: GID, home: ns.home, platform: 'linux', pathExists: () => false },
    );
    const result = await open(plan);
    const hostname = await execOut(ns.docker, result.id, ['hostname']);
    assert.equal(hostname, plan.name, 'a workspace container name is a valid host name as it is');
    assert.match(hostname, /^[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?$/);
    // What the prompt shows (zsh's %m), and the shell a program would start.
    assert.equal(await execOut(ns.docker, result.id, [CONTAINER.shell, '-fc', 'print -P %m']), hostname);
    assert.equal(await execOut(ns.docker, result.id, ['sh', '-c', 'printf %s "$SHELL"']), CONTAINER.shell);
  });

  it('resolves host.docker.internal to the gateway of its network, on Podman before 5.3 too (it writes host-gateway literally)', async () => {
    const { ns, open } = setup();
    const workspace = join(ns.home, 'gateway');
    mkdirSync(workspace);
    const { plan } = planSession(
      { workspace, config: DEFAULT_CONFIG, peer: false, image, names: ns.names },
      { uid: UID, gid: GID, home: ns.home, platform: 'linux', pathExists: () => false },
    );
    assert.ok(plan.create.HostConfig.ExtraHosts?.includes('host.docker.internal:host-gateway'), 'the plan asks for host-gateway');
    const result = await open(plan);
    const info = await ns.docker.getContainer(result.id).inspect();
    const gateway = Object.values(info.NetworkSettings.Networks ?? {}).find((n) => n.Gateway)?.Gateway;
    assert.match(gateway ?? '', /^\d+\.\d+\.\d+\.\d+$/, 'the container is on a network with a gateway');
    const seen = await execOut(ns.docker, result.id, ['getent', 'hosts', 'host.docker.internal']);
    assert.equal(seen.split(/\s+/)[0], gateway, seen);
  });

  it("gives the container upstream's session identity: the version, the image's repo digest, the host platform (issue 15, item 8)", async () => {
    const { ns, ctx } = setup();
    const workspace = join(ns.home, 'ident');
    mkdirSync(workspace);
    const { plan } = planSession(
      { workspace, config: DEFAULT_CONFIG, peer: false, image, names: ns.names },
      { uid: UID, gid: GID, home: ns.home, platform: 'linux', arch: 'x64', pathExists: () => false },
    );
    const digest = `sha256:${'0f'.repeat(32)}`;
    const result = await openContainer(ctx, plan, { ensureImage: async () => digest });
    const seen = await execOut(ns.docker, result.id, [
      'sh',
      '-c',
      'printf "%s|%s|%s|%s" "$TOOLBOX_VSCODE_VERSION" "$TOOLBOX_IMAGE_DIGEST" "$TOOLBOX_HOST_OS" "$TOOLBOX_HOST_ARCH"',
    ]);
    assert.equal(seen, `${EXTENSION_VERSION}|${digest}|linux|amd64`);
    // Upstream's order, as sent (Podman merges the image's env in and sorts what it reports).
    const env = (await ns.docker.getContainer(result.id).inspect()).Config.Env;
    assert.ok(env.includes(`TOOLBOX_IMAGE_DIGEST=${digest}`));
    const sent = withImageDigest(plan.create.Env ?? [], digest);
    assert.equal(sent.indexOf(`TOOLBOX_IMAGE_DIGEST=${digest}`), sent.indexOf(`TOOLBOX_VSCODE_VERSION=${EXTENSION_VERSION}`) + 1);
  });

  // Rootless Podman: a file the test user makes cannot be root-owned, and host root is nobody inside.
  it(
    'lets the container user reach a root-owned Docker socket, as on Docker Desktop, through GroupAdd "0" (issue 15, item 4)',
    { skip: TEST_ROOTLESS },
    async () => {
      const { ns, open } = setup();
      // Docker Desktop's socket is root:root 0660 inside its VM, whatever group the host reports.
      const sock = join(ns.home, 'desktop.sock');
      const server = createServer((c) => c.end('ok\n'));
      servers.push(server);
      await new Promise<void>((resolve) => server.listen(sock, resolve));
      chmodSync(sock, 0o660);
      assert.equal(statSync(sock).gid, 0, 'the test runs as root, so the socket is root:root');
      const planAt = (folder: string) => {
        const workspace = join(ns.home, folder);
        mkdirSync(workspace);
        return planSession(
          {
            workspace,
            config: { ...DEFAULT_CONFIG, mounts: [{ name: 'docker-sock', source: sock }] },
            peer: false,
            image,
            names: ns.names,
          },
          { uid: UID, gid: GID, home: ns.home, platform: 'linux', pathExists: (p) => p === sock, dockerSocketGid: 998 },
        ).plan;
      };
      const probe = ['zsh', '-fc', 'zmodload zsh/net/socket && zsocket /var/run/docker.sock && read -r line <&$REPLY && print -r -- $line'];

      const plan = planAt('desktop');
      assert.deepEqual(plan.create.HostConfig.GroupAdd, ['0', '998']);
      const opened = await open(plan);
      assert.equal(await execOut(ns.docker, opened.id, probe), 'ok');

      // The group the host reports, alone (what the extension sent before), is refused there.
      const before = planAt('desktop-before');
      const hostGroupOnly = { ...before, create: { ...before.create, HostConfig: { ...before.create.HostConfig, GroupAdd: ['998'] } } };
      const refused = await open(hostGroupOnly);
      assert.match(await execOut(ns.docker, refused.id, probe), /permission denied/);
    },
  );

  it('connects to the running container on the next open, without drift or image work', async () => {
    const { ns, open, imageCalls } = setup();
    const plan = planFor(ns, image, { peer: true });
    const first = await open(plan);
    const again = await open(plan);
    assert.equal(again.action, 'connect');
    assert.equal(again.id, first.id);
    assert.deepEqual(again.drift, []);
    assert.deepEqual(again.warnings, []);
    assert.equal(again.peerActive, true);
    assert.equal(imageCalls.length, 1, 'the image is only ensured on create');
  });

  it('starts a stopped container, and its stopped anchor, instead of creating a new one', async () => {
    const { ns, open } = setup();
    const plan = planFor(ns, image, { peer: true, keep: true });
    const first = await open(plan);
    await ns.docker.getContainer(first.id).stop({ t: 0 });
    // The anchor stopped too (a reboot, say): the start path brings it back first.
    await ns.docker.getContainer(ns.names.anchor).stop({ t: 0 });
    const again = await open(plan);
    assert.equal(again.action, 'start');
    assert.equal((await ns.docker.getContainer(ns.names.anchor).inspect()).State.Running, true);
    assert.equal(again.peerActive, true);
    assert.equal(again.id, first.id);
    assert.equal((await ns.docker.getContainer(first.id).inspect()).State.Running, true);
    assert.deepEqual(again.drift, []);
  });

  it('ends with exactly one container when the same workspace is opened twice at the same moment', async () => {
    const { ns, open } = setup();
    const plan = planFor(ns, image, { peer: true });
    const [a, b] = await Promise.all([open(plan), open(plan)]);
    assert.equal(a.id, b.id);
    assert.equal(a.name, plan.name);
    assert.equal(b.name, plan.name);
    assert.deepEqual(
      [a.action, b.action].filter((x) => x === 'create'),
      ['create'],
    );
    const listed = await ns.docker.listContainers({ all: true, filters: { name: [plan.name] } });
    assert.equal(listed.length, 1);
  });

  it('creates the container without the namespace and says why when the anchor cannot start', async () => {
    const { ns, open } = setup();
    // An anchor that exists but cannot start: the folder it binds is gone. (Not a PID namespace
    // of a stopped container: Podman starts that container first, Docker refuses.)
    const gone = join(ns.home, 'gone');
    mkdirSync(gone);
    await ns.docker.createContainer({
      name: ns.names.anchor,
      Image: image,
      Entrypoint: [...ANCHOR_ENTRYPOINT],
      Cmd: ['infinity'],
      HostConfig: { Mounts: [{ Type: 'bind', Source: gone, Target: '/gone' }], NetworkMode: 'none' },
    });
    rmSync(gone, { recursive: true });
    const plan = planFor(ns, image, { peer: true });
    const result = await open(plan);

    assert.equal(result.action, 'create');
    assert.equal(result.peerActive, false);
    assert.equal(result.warnings.length, 1);
    assert.match(
      result.warnings[0] as string,
      new RegExp(`^peer messaging: The anchor container ${ns.names.anchor} could not start: .+ — starting this shell without it$`),
    );
    const info = await ns.docker.getContainer(result.id).inspect();
    assert.equal(storedPidMode(info.HostConfig.PidMode), '', 'its own PID namespace');
    assert.ok(!info.Mounts.some((m) => m.Name === ns.names.socketVolume), 'no socket volume without the namespace');

    // Every later open reconnects to it and says it is outside the namespace.
    const again = await open(plan);
    assert.equal(again.action, 'connect');
    assert.deepEqual(
      again.drift.map((d) => d.kind),
      ['planned-on-but-outside', 'missing-socket-volume'],
    );
    assert.equal(again.warnings.length, 1, 'only one peer warning, the namespace first');
    assert.equal(
      again.warnings[0],
      `peer messaging: ${plan.name} was created without the shared PID namespace, so this session will see no peers ` +
        `— stop it with \`toolbox stop ${plan.name}\` or the Toolbox: Stop Container command, then open the shell again`,
    );
  });

  it('degrades and removes the volume again when its initialiser fails', async () => {
    const { ns, open } = setup();
    const plan = planFor(ns, image, { peer: true });
    const result = await open(plan, { volumeInitCommand: 'echo no chown for you >&2; exit 1' });
    assert.equal(result.peerActive, false);
    assert.equal(
      result.warnings[0],
      `peer messaging: The initialiser of the volume ${ns.names.socketVolume} exited with code 1 (no chown for you); ` +
        `the volume ${ns.names.socketVolume} was removed again so the next shell starts clean — starting this shell without it`,
    );
    await assert.rejects(ns.docker.getVolume(ns.names.socketVolume).inspect(), { statusCode: 404 });
    const info = await ns.docker.getContainer(result.id).inspect();
    assert.equal(storedPidMode(info.HostConfig.PidMode), '', 'its own PID namespace');
  });

  it('flags a container in the shared namespace when the plan now has peer messaging off', async () => {
    const { ns, open } = setup();
    const on = planFor(ns, image, { peer: true });
    await open(on);
    const off = planFor(ns, image, { peer: false });
    const reattached = await open(off);
    const drift = reattached.drift;
    assert.deepEqual(drift, [
      {
        kind: 'joined-but-planned-off',
        container: off.name,
        message:
          `peer messaging: ${off.name} already runs in the shared PID namespace, so this session can see the process table ` +
          `of every opted-in shell — stop it with \`toolbox stop ${off.name}\` or the Toolbox: Stop Container command, then open the shell again`,
      },
    ]);
    assert.equal(reattached.action, 'connect');
    assert.deepEqual(reattached.warnings, [drift[0]?.message]);
  });

  it('flags a container outside the namespace when the plan now has peer messaging on', async () => {
    const { ns, open } = setup();
    await open(planFor(ns, image, { peer: false }));
    const on = planFor(ns, image, { peer: true });
    const { drift } = await open(on);
    assert.deepEqual(
      drift.map((d) => d.kind),
      ['planned-on-but-outside', 'missing-socket-volume'],
    );
  });

  it('flags a container in the namespace that does not mount the socket volume', async () => {
    const { ns, open } = setup();
    await open(planFor(ns, image, { peer: true, withoutVolume: true }));
    const plan = planFor(ns, image, { peer: true });
    const { drift } = await open(plan);
    assert.deepEqual(drift, [
      {
        kind: 'missing-socket-volume',
        container: plan.name,
        message:
          `peer messaging: ${plan.name} does not mount the ${ns.names.socketVolume} volume at ${CONTAINER.peerSocketDir}, ` +
          `so this session can reach no peer — stop it with \`toolbox stop ${plan.name}\` or the Toolbox: Stop Container command, then open the shell again`,
      },
    ]);
  });

  it('warns on reattach when the container does not publish a planned port', async () => {
    const { ns, open } = setup();
    await open(planFor(ns, image, { peer: false }));
    const port = await freePort();
    const withPort = planFor(ns, image, { peer: false, ports: [port] });
    const result = await open(withPort);
    assert.equal(result.action, 'connect');
    assert.deepEqual(
      result.drift.map((d) => d.kind),
      ['missing-port'],
    );
    assert.deepEqual(result.warnings, [
      `${withPort.name} does not publish port 127.0.0.1:${port} (container port ${port}/tcp) that this workspace asks for ` +
        `— stop it with \`toolbox stop ${withPort.name}\` or the Toolbox: Stop Container command, then open the shell again`,
    ]);
  });

  it('refuses to create when a process on this machine holds a planned port, naming it', async () => {
    const { ns, open, imageCalls } = setup();
    const server = createServer();
    servers.push(server);
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const port = (server.address() as { port: number }).port;
    await assert.rejects(open(planFor(ns, image, { peer: true, ports: [port] })), (err: Error) => {
      assert.match(
        err.message,
        new RegExp(
          `^Port 127\\.0\\.0\\.1:${port} is already in use on this machine by \\S+ \\(pid ${process.pid}\\)\\. ` +
            'Stop it, or choose another port for this workspace\\.$',
        ),
      );
      return true;
    });
    assert.deepEqual(imageCalls, [], 'the pre-flight runs before any image or peer work');
    await assert.rejects(ns.docker.getContainer(ns.names.anchor).inspect(), { statusCode: 404 });
  });

  it('refuses to create when another container publishes a planned port, naming the container', async () => {
    const { ns, open } = setup();
    const port = await freePort();
    // Its own network: this machine's default bridge (docker0) comes and goes.
    const network = await ns.docker.createNetwork({ Name: `${ns.names.prefix}-net` });
    const holder = await ns.docker.createContainer({
      name: `${ns.names.prefix}-named-port-holder`,
      Image: image,
      ExposedPorts: { '80/tcp': {} },
      HostConfig: { NetworkMode: `${ns.names.prefix}-net`, PortBindings: { '80/tcp': [{ HostIp: '127.0.0.1', HostPort: String(port) }] } },
    });
    cleanups.push(async () => {
      await holder.remove({ force: true }).catch(() => undefined);
      await network.remove();
    });
    await holder.start();
    const plan = planFor(ns, image, { peer: false, ports: [port] });
    await assert.rejects(open(plan), {
      message:
        `Port 127.0.0.1:${port} is already published by the container ${ns.names.prefix}-named-port-holder. ` +
        `Stop it with \`toolbox stop ${ns.names.prefix}-named-port-holder\`, or choose another port for this workspace.`,
    });
  });
});

describe('ensureImage against the real engine', () => {
  let image: string;
  const spaces: TestNamespace[] = [];
  const tags: string[] = [];

  before(async () => {
    image = await ensureTestRuntimeImage();
  });
  after(async () => {
    await Promise.all(spaces.map((s) => s.cleanup()));
    for (const t of tags)
      await spaces[0]?.docker
        .getImage(t)
        .remove()
        .catch(() => undefined);
  });

  function setup() {
    const ns = testNamespace();
    spaces.push(ns);
    const ctx: EngineContext = { docker: ns.docker, names: ns.names };
    const checkedImages = new Map<string, string[]>();
    const lines: string[] = [];
    return { ns, ctx, checkedImages, lines, onLog: (l: string) => lines.push(l) };
  }

  it('builds our runtime image when it is missing, streaming the build log', async () => {
    const { ns, ctx, lines, onLog } = setup();
    const ref = `${TEST_RUNTIME_IMAGE_REPO}:${ns.names.prefix}`;
    tags.push(ref);
    const digest = await ensureImage(ctx, { ref, pull: 'never', ours: true, contextRoot: repoRoot(), buildArgs: TEST_BUILD_ARGS, onLog });
    const built = await ns.docker.getImage(ref).inspect();
    if (TEST_ENGINE === 'docker') {
      assert.equal(digest, undefined, 'a local build has no repo digest, so the container gets no TOOLBOX_IMAGE_DIGEST (as upstream)');
    } else {
      // Podman gives every image a repo digest, a local build's included (docs/engines.md).
      assert.equal(
        `${TEST_RUNTIME_IMAGE_REPO}@${digest}`,
        built.RepoDigests.find((d) => d.endsWith(`@${digest}`))?.replace(/^docker\.io\//, ''),
      );
    }
    // The image records the context it was built from (what a pull is checked against), and
    // keeps the runtime image's user and entrypoint. (Its id is not compared with the shared
    // test image's: which cached layers the engine offers depends on earlier builds.)
    assert.equal(built.Config.Labels?.[RUNTIME_IMAGE_LABELS.contextHash], runtimeContextHash(repoRoot(), TEST_BUILD_ARGS));
    const shared = (await ns.docker.getImage(image).inspect()).Config;
    assert.deepEqual([built.Config.User, built.Config.Entrypoint], [shared.User, shared.Entrypoint]);
    assert.ok(lines.some((l) => l.startsWith('Building the toolbox runtime image')));
    assert.ok(lines.length > 1, 'the build log is passed on');
  });

  it('accepts a custom image that carries the shims and python3, and checks it once per image id', async () => {
    const { ns, ctx, checkedImages } = setup();
    await ensureImage(ctx, { ref: image, pull: 'auto', ours: false, contextRoot: repoRoot(), checkedImages });
    const id = (await ns.docker.getImage(image).inspect()).Id;
    assert.deepEqual(checkedImages.get(id), []);
    // The remembered answer is used as is: no second container runs for the same id.
    checkedImages.set(id, ['/remembered']);
    await assert.rejects(
      ensureImage(ctx, { ref: image, pull: 'auto', ours: false, contextRoot: repoRoot(), checkedImages }),
      /lacks \/remembered\./,
    );
  });

  it('fails the open for a custom image without the shims, naming what is missing and the fix', async () => {
    const { ctx } = setup();
    const base = 'debian:bookworm-slim';
    await assert.rejects(ensureImage(ctx, { ref: base, pull: 'never', ours: false, contextRoot: repoRoot() }), (err: Error) => {
      assert.match(
        err.message,
        new RegExp(
          `^The image ${base} cannot run a toolbox shell: it lacks ${CONTAINER.bridgeLib}, ${CONTAINER.shimDir}/code, ` +
            `${CONTAINER.shimDir}/xdg-open, ${CONTAINER.shimDir}/proximo, ${CONTAINER.shimDir}/git-credential-toolbox(, python3)?\\. ` +
            'Base it on the toolbox runtime image, or unset `image:` in \\.toolbox\\.yaml to use the built-in one\\.$',
        ),
      );
      return true;
    });
  });

  it('refuses a missing image when pull is never', async () => {
    const { ns, ctx } = setup();
    const ref = `${ns.names.prefix}/absent:1`;
    await assert.rejects(ensureImage(ctx, { ref, pull: 'never', ours: false, contextRoot: repoRoot() }), {
      message: `The image ${ref} is not on this machine and pull is set to never. Pull or build it yourself, or set \`pull: auto\` in .toolbox.yaml.`,
    });
  });

  it('explains a pull that cannot reach the registry, with the engine’s words and what to do', async () => {
    const { ns, ctx, lines, onLog } = setup();
    const port = await freePort();
    const ref = `127.0.0.1:${port}/${ns.names.prefix}/absent:1`;
    await assert.rejects(ensureImage(ctx, { ref, pull: 'auto', ours: false, contextRoot: repoRoot(), onLog }), (err: Error) => {
      assert.match(
        err.message,
        new RegExp(`^The image ${ref.replace(/[.]/g, '\\.')} could not be pulled from 127\\.0\\.0\\.1:${port}: .*connection refused`),
      );
      assert.match(
        err.message,
        /Build it locally, set `image:` in \.toolbox\.yaml to an image this machine has, or set `pull: never` to use only local images\.$/,
      );
      return true;
    });
    assert.deepEqual(lines, [`Pulling ${ref} from 127.0.0.1:${port}…`]);
  });
});
