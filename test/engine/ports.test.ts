/**
 * Issue 15, item 12 and the seccomp follow-up, against the real engine: a container opened with
 * upstream's -p specs publishes them on loopback (a server inside answers on the host port), the
 * Workspaces view lists them from inspect, a reattach that asks for another port or another
 * seccomp profile reports drift, and toolbox.seccomp reaches the container. The views read each
 * container's profile from the listing's inspect, so the status bar sees seccomp drift until the fix
 * recreates the container.
 */
import assert from 'node:assert/strict';
import { mkdirSync } from 'node:fs';
import { createServer } from 'node:net';
import { request } from 'node:http';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import type Docker from 'dockerode';
import type { EngineContext } from '../../extension/src/engine/context';
import { listToolboxContainers, stopContainer } from '../../extension/src/engine/lifecycle';
import { openContainer } from '../../extension/src/engine/open';
import { DEFAULT_CONFIG } from '../../extension/src/config/model';
import { parsePublishSpecs, publishedPorts } from '../../extension/src/plan/publish';
import { planSession } from '../../extension/src/plan/session';
import type { SeccompProfile } from '../../extension/src/contract/types';
import { workspacesNodes } from '../../extension/src/ui/views/treeNodes';
import { type ContainerSummary } from '../../extension/src/ui/views/model';
import { driftStatus, findDrift } from '../../extension/src/ui/containers/driftFindings';
import { testNamespace, type TestNamespace } from '../support/docker';
import { ensureTestRuntimeImage } from '../support/image';
import { freePort } from '../support/ports';

const UID = 4321;
const GID = 4322;

/** Runs a command in the container, detached (a server that keeps running). */
async function execDetached(docker: Docker, id: string, cmd: string[]): Promise<void> {
  const exec = await docker.getContainer(id).exec({ Cmd: cmd, User: `${UID}:${GID}`, AttachStdout: false, AttachStderr: false });
  const answer: unknown = await exec.start({ Detach: true });
  // Podman answers a detached start on a connection it keeps open: close it.
  (answer as { destroy?: () => void } | undefined)?.destroy?.();
}

/** The Seccomp: line of /proc/self/status for a process in the container. */
async function seccompMode(docker: Docker, id: string): Promise<string> {
  const exec = await docker.getContainer(id).exec({ Cmd: ['sh', '-c', 'grep ^Seccomp: /proc/self/status'], AttachStdout: true, Tty: true });
  const stream = await exec.start({ hijack: true, stdin: false, Tty: true });
  const chunks: Buffer[] = [];
  stream.on('data', (c: Buffer) => chunks.push(c));
  await new Promise((resolve) => stream.on('end', resolve));
  // Podman keeps the hijacked connection open after the output ends.
  stream.destroy();
  return Buffer.concat(chunks)
    .toString('utf8')
    .replace(/^Seccomp:\s*/, '')
    .trim();
}

/** GET on the host, retried while the server inside starts (bounded: 50 tries, 200 ms apart). */
async function getFromHost(url: string): Promise<{ status: number; body: string }> {
  let last: unknown;
  for (let i = 0; i < 50; i++) {
    try {
      return await new Promise((resolve, reject) => {
        const req = request(url, { timeout: 2000 }, (res) => {
          const chunks: Buffer[] = [];
          res.on('data', (c: Buffer) => chunks.push(c));
          res.on('end', () => resolve({ status: res.statusCode ?? 0, body: Buffer.concat(chunks).toString('utf8') }));
        });
        req.on('error', reject);
        req.on('timeout', () => req.destroy(new Error('timeout')));
        req.end();
      });
    } catch (err) {
      last = err;
      await new Promise((r) => setTimeout(r, 200));
    }
  }
  throw new Error(`${url} never answered: ${String(last)}`);
}

describe('published ports and the seccomp profile against the real engine', () => {
  let image: string;
  let ns: TestNamespace;
  let ctx: EngineContext;

  before(async () => {
    image = await ensureTestRuntimeImage();
    ns = testNamespace();
    ctx = { docker: ns.docker, names: ns.names, log: () => undefined };
  });
  after(async () => {
    await ns?.cleanup();
  });

  function planAt(folder: string, specs: string[], seccomp?: SeccompProfile) {
    const workspace = join(ns.home, folder);
    mkdirSync(workspace, { recursive: true });
    return planSession(
      {
        workspace,
        config: DEFAULT_CONFIG,
        peer: false,
        image,
        names: ns.names,
        ports: parsePublishSpecs(specs),
        ...(seccomp ? { seccomp } : {}),
      },
      { uid: UID, gid: GID, home: ns.home, platform: 'linux', pathExists: () => false },
    ).plan;
  }
  const open = (plan: ReturnType<typeof planAt>) => openContainer(ctx, plan, { ensureImage: async () => undefined });

  it('publishes -p specs on 127.0.0.1 only: a server in the container answers on the host port, and the view lists it', async () => {
    const fixed = await freePort();
    const plan = planAt('web', [`${fixed}:8000`, '8001']);
    const opened = await open(plan);
    assert.equal(opened.action, 'create');

    const info = await ns.docker.getContainer(opened.id).inspect();
    const ports = info.NetworkSettings.Ports as Record<string, Array<{ HostIp: string; HostPort: string }> | null>;
    assert.deepEqual(ports['8000/tcp'], [{ HostIp: '127.0.0.1', HostPort: String(fixed) }], 'only on loopback, no :: or 0.0.0.0 entry');
    const picked = ports['8001/tcp'];
    assert.equal(picked?.length, 1);
    assert.equal(picked[0]!.HostIp, '127.0.0.1');
    assert.match(picked[0]!.HostPort, /^[1-9][0-9]*$/, 'Docker picked a host port for the bare 8001, as for upstream -p 8001');

    await execDetached(ns.docker, opened.id, ['python3', '-m', 'http.server', '8000', '--bind', '0.0.0.0', '--directory', '/etc']);
    const got = await getFromHost(`http://127.0.0.1:${fixed}/hostname`);
    assert.equal(got.status, 200);
    assert.equal(got.body.trim(), plan.create.Hostname);

    // What the Workspaces view shows: the list the backend's snapshot reads, the same pure parse, the rows.
    const listed = (await listToolboxContainers(ctx)).find((c) => c.name === plan.name)!;
    const published = publishedPorts(listed.detail.NetworkSettings?.Ports, listed.detail.HostConfig?.PortBindings);
    assert.deepEqual(published, [
      { containerPort: 8000, protocol: 'tcp', hostIp: '127.0.0.1', hostPort: fixed },
      { containerPort: 8001, protocol: 'tcp', hostIp: '127.0.0.1', hostPort: Number(picked[0]!.HostPort) },
    ]);
    const summary: ContainerSummary = {
      id: listed.id,
      name: listed.name,
      state: listed.state,
      kind: 'workspace',
      pidMode: '',
      peer: false,
      mountsSocketVolume: false,
      workspace: plan.workspace,
      ports: published,
    };
    const state = {
      wantPeer: new Map<string, boolean>(),
      findings: [],
      loading: false,
      takenAt: Date.now(),
      snapshot: {
        containers: [summary],
        anchor: { name: ns.names.anchor, state: 'missing' as const },
        volume: { name: ns.names.socketVolume, exists: false },
        members: [],
        sessions: [],
      },
    };
    const rows = workspacesNodes(state, [plan.workspace])[0]?.children?.map((n) => n.label);
    assert.deepEqual(rows, [`8000 → 127.0.0.1:${fixed}`, `8001 → 127.0.0.1:${picked[0]!.HostPort}`]);
  });

  it('reports a port the running container does not publish on reattach, as upstream, without recreating it', async () => {
    const first = planAt('reattach', ['8000']);
    const created = await open(first);
    const other = await freePort();
    const again = await open(planAt('reattach', ['8000', `${other}:9000`]));
    assert.equal(again.action, 'connect');
    assert.equal(again.id, created.id);
    assert.deepEqual(
      again.drift.map((d) => [d.kind, d.port]),
      [['missing-port', `127.0.0.1:${other} (container port 9000/tcp)`]],
    );
  });

  it('refuses to create when the host port is taken, naming the port and what to do', async () => {
    const server = createServer();
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const port = (server.address() as { port: number }).port;
    try {
      await assert.rejects(open(planAt('busy', [`${port}:8000`])), (err: Error) => {
        assert.match(
          err.message,
          new RegExp(`^Port 127\\.0\\.0\\.1:${port} is already in use on this machine by .*\\. Stop it, or choose another port`),
        );
        return true;
      });
    } finally {
      server.close();
    }
  });

  it('creates the container with the toolbox.seccomp profile, and reports the other one on reattach', async () => {
    const confined = await open(planAt('seccomp', [], 'default'));
    const info = await ns.docker.getContainer(confined.id).inspect();
    assert.ok(
      !(info.HostConfig.SecurityOpt ?? []).some((o: string) => o.includes('unconfined')),
      JSON.stringify(info.HostConfig.SecurityOpt),
    );
    // The kernel says so from inside: mode 2 is a seccomp filter, 0 none.
    assert.equal(await seccompMode(ns.docker, confined.id), '2');
    const again = await open(planAt('seccomp', [], 'unconfined'));
    assert.equal(again.action, 'connect');
    assert.deepEqual(
      again.drift.map((d) => [d.kind, d.seccomp]),
      [['seccomp', 'unconfined']],
    );

    const loose = await open(planAt('seccomp-unconfined', []));
    const looseInfo = await ns.docker.getContainer(loose.id).inspect();
    assert.deepEqual(looseInfo.HostConfig.SecurityOpt, ['seccomp=unconfined']);
    assert.equal(await seccompMode(ns.docker, loose.id), '0');
    const back = await open(planAt('seccomp-unconfined', [], 'default'));
    assert.deepEqual(
      back.drift.map((d) => [d.kind, d.seccomp]),
      [['seccomp', 'default']],
    );
  });

  it("the views read each container's profile from the listing's inspect: drift until the fix recreates it with Docker's profile", async () => {
    // Created unconfined (the default, as upstream's CLI creates it); then the folder asks for Docker's profile.
    const plan = planAt('seccomp-views', []);
    const first = await open(plan);
    assert.equal(first.action, 'create');
    // What the status bar judges: the listing the backend's snapshot reads, the same pure rule.
    const judge = async () => {
      const listed = (await listToolboxContainers(ctx)).find((c) => c.name === plan.name);
      const summary: ContainerSummary | undefined = listed && {
        id: listed.id,
        name: listed.name,
        state: listed.state,
        kind: 'workspace',
        pidMode: listed.pidMode,
        peer: listed.peer,
        mountsSocketVolume: false,
        workspace: plan.workspace,
        seccomp: listed.seccomp,
      };
      const findings = findDrift(
        summary ? [summary] : [],
        undefined,
        new Map([[plan.workspace, false]]),
        ns.names,
        '',
        new Map([[plan.workspace, { profile: 'default' as const, scope: 'folder' as const }]]),
      );
      return { listed, findings };
    };
    const before = await judge();
    assert.equal(before.listed?.seccomp, 'unconfined');
    assert.deepEqual(
      before.findings.map((f) => [f.container.name, f.drift, f.seccomp]),
      [[plan.name, 'seccomp', 'default']],
    );
    assert.equal(driftStatus(before.findings)?.text, `$(warning) ${plan.name} drifted`);

    // The fix (ui/containers/recreateContainer.ts stopAndReopen): stop that one container, open it again with the setting now.
    assert.equal(await stopContainer(ctx, plan.name), 'stopped');
    const fixed = await open(planAt('seccomp-views', [], 'default'));
    assert.equal(fixed.action, 'create');
    assert.notEqual(fixed.id, first.id);
    const info = await ns.docker.getContainer(fixed.id).inspect();
    assert.ok(
      !(info.HostConfig.SecurityOpt ?? []).some((o: string) => o.includes('unconfined')),
      JSON.stringify(info.HostConfig.SecurityOpt),
    );
    assert.equal(await seccompMode(ns.docker, fixed.id), '2');
    const after = await judge();
    assert.equal(after.listed?.seccomp, 'default');
    assert.deepEqual(after.findings, []);
  });
});
