/**
 * Issue 27, item 1, end to end through the backend a window runs: a workspace container opened
 * with the defaults gets its own Docker endpoint in the docker-sock mount's place (the endpoint's
 * directory read-only at /run/toolbox-docker, DOCKER_HOST pointing into it, no host socket), the
 * endpoint answers from inside the container with only the container's own objects and refuses a
 * privileged container; after a window reload the reattached shell's container is served again at
 * the same path. `toolbox.dockerEndpoint: raw-socket` in the user's settings gives the host socket
 * instead, as the toolbox CLI mounts it.
 */
import assert from 'node:assert/strict';
import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import type { SessionRecord } from '../../extension/src/backend/api';
import { docker } from '../support/docker';
import { shellOutput, shellProjectSuite } from '../support/shellProject';
import { standInSettings } from '../support/settings';

/** curl to the container's endpoint, retried for up to 5 s (a reattached window serves it again in the background). */
const CURL = (path: string, extra = '') =>
  `for i in $(seq 50); do out=$(curl -s --max-time 5 ${extra} --unix-socket "\${DOCKER_HOST#unix://}" "http://docker${path}") && break; sleep 0.1; done; printf '\\074%s\\076\\n' "$out"`;

describe('a workspace container gets its own Docker endpoint (issue 27, item 1)', () => {
  // Children left by a failed test go too (removeShellProject): labelled with the name of one of this test's containers.
  const project = shellProjectSuite('tbxt-endpoint-join-');
  const { home, folder } = project;

  it('mounts the endpoint in docker-sock’s place, answers only with the container’s own, and comes back after a reload', async () => {
    const first = project.windowBackend({ pathExists: existsSync });
    const session = await (
      await first.prepareShell({ folder })
    ).open({ log: () => undefined, step: () => undefined }, new AbortController().signal);
    const info = await docker().getContainer(session.id).inspect();
    const endpointMount = info.Mounts.find((m) => m.Destination === '/run/toolbox-docker');
    assert.ok(endpointMount, JSON.stringify(info.Mounts));
    assert.equal(endpointMount.RW, false);
    assert.ok(!info.Mounts.some((m) => m.Destination === '/var/run/docker.sock'), 'no host socket');
    assert.ok(info.Config.Env.includes('DOCKER_HOST=unix:///run/toolbox-docker/docker.sock'));
    // The endpoint refuses BuildKit's /grpc: the CLI builds with the classic builder (issue 38, item 4).
    assert.ok(info.Config.Env.includes('DOCKER_BUILDKIT=0'), info.Config.Env.join(' '));

    const shell = await session.start({ cols: 200, rows: 30 });
    const record: SessionRecord = shell.record!;
    const screen1 = shellOutput(shell);
    shell.stream.write(`${CURL('/v1.41/containers/json?all=1')}; echo done-1\r`);
    const [, list] = await screen1.waitFor(/<([^<>]*)>\s*done-1/);
    assert.equal(list, '[]', 'the engine has other containers (this very one), the endpoint lists only its own');

    // A privileged container, refused with the rule's message and the opt-out.
    const body = JSON.stringify({ Image: 'debian:bookworm-slim', HostConfig: { Privileged: true } }).replace(/"/g, '\\"');
    shell.stream.write(`${CURL('/v1.41/containers/create', `-X POST -H "Content-Type: application/json" -d "${body}"`)}; echo done-2\r`);
    const [, refused] = await screen1.waitFor(/<([^<>]*)>\s*done-2/);
    assert.match(refused!, /rivileged/, refused);
    assert.match(refused!, /raw-socket/, refused);

    // The window goes away; the next one reattaches the shell and serves its endpoint again.
    shell.dispose();
    first.dispose();
    const reloaded = project.windowBackend({ pathExists: existsSync });
    const again = await reloaded.reattachShell(record);
    const screen2 = shellOutput(again);
    again.stream.write(`${CURL('/v1.41/_ping')}; echo done-3\r`);
    const [, ping] = await screen2.waitFor(/<([^<>]*)>\s*done-3/);
    assert.equal(ping, 'OK', 'the reloaded window serves the endpoint again');
    again.stream.write('exit\r');
    again.dispose();
  });

  it('what the container started through its endpoint goes with it when it is stopped; its named volume stays (item 4)', async () => {
    const other = join(home, 'children');
    mkdirSync(other);
    writeFileSync(join(other, '.toolbox.yaml'), 'peer_messaging: false\n');
    const b = project.windowBackend({ pathExists: existsSync });
    const session = await (
      await b.prepareShell({ folder: other })
    ).open({ log: () => undefined, step: () => undefined }, new AbortController().signal);
    const shell = await session.start({ cols: 200, rows: 30 });
    const out = shellOutput(shell);
    const post = (path: string, body: object, tag: string) =>
      `${CURL(path, `-X POST -H "Content-Type: application/json" -d '${JSON.stringify(body)}'`)}; echo ${tag} | tr a-z A-Z\r`;
    const suffix = Math.random().toString(16).slice(2, 8);
    shell.stream.write(post('/v1.41/volumes/create', { Name: `tbxt-child-vol-${suffix}` }, 'vol-done'));
    await out.waitFor(/VOL-DONE/);
    shell.stream.write(post('/v1.41/networks/create', { Name: `tbxt-child-net-${suffix}` }, 'net-done'));
    await out.waitFor(/NET-DONE/);
    shell.stream.write(
      post(`/v1.41/containers/create?name=tbxt-child-${suffix}`, { Image: 'debian:bookworm-slim', Cmd: ['sleep', 'infinity'] }, 'ctr-done'),
    );
    await out.waitFor(/CTR-DONE/);
    const label = { label: [`dev.toolbox.docker-owner=${session.name}`] };
    const listed = async () => ({
      containers: (await docker().listContainers({ all: true, filters: JSON.stringify(label) })).map((c) => c.Names[0]),
      networks: (await docker().listNetworks({ filters: JSON.stringify(label) })).map((n) => n.Name),
      volumes: ((await docker().listVolumes({ filters: JSON.stringify(label) })).Volumes ?? []).map((v) => v.Name),
    });
    assert.deepEqual(await listed(), {
      containers: [`/tbxt-child-${suffix}`],
      networks: [`tbxt-child-net-${suffix}`],
      volumes: [`tbxt-child-vol-${suffix}`],
    });
    shell.dispose();
    await b.stopContainer(session.name);
    assert.deepEqual(await listed(), { containers: [], networks: [], volumes: [`tbxt-child-vol-${suffix}`] });
    await docker().getVolume(`tbxt-child-vol-${suffix}`).remove();
  });

  it('toolbox.dockerEndpoint raw-socket in the user settings: the host socket, as the toolbox CLI', async () => {
    const other = join(home, 'raw');
    mkdirSync(other);
    writeFileSync(join(other, '.toolbox.yaml'), 'peer_messaging: false\n');
    const b = project.windowBackend({ pathExists: existsSync, settings: standInSettings({ dockerEndpoint: () => 'raw-socket' }) });
    const session = await (
      await b.prepareShell({ folder: other })
    ).open({ log: () => undefined, step: () => undefined }, new AbortController().signal);
    const info = await docker().getContainer(session.id).inspect();
    assert.ok(!info.Mounts.some((m) => m.Destination === '/run/toolbox-docker'));
    assert.ok(!info.Config.Env.some((e) => e.startsWith('DOCKER_HOST=')));
    if (existsSync('/var/run/docker.sock')) assert.ok(info.Mounts.some((m) => m.Destination === '/var/run/docker.sock'));
  });
});
