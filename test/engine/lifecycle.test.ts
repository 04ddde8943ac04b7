import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import type Docker from 'dockerode';
import { listToolboxContainers, stopAll, stopContainer } from '../../extension/src/engine/lifecycle';
import { CONTAINER, LABELS } from '../../extension/src/contract/upstream';
import { objectNames } from '../../extension/src/contract/objects';
import { TEST_LABEL, testNamespace, type TestNamespace } from '../support/docker';
import { ensureTestRuntimeImage } from '../support/image';

const SLEEP = [CONTAINER.tini, '--', 'sleep', 'infinity'];

async function exists(docker: Docker, name: string): Promise<boolean> {
  try {
    await docker.getContainer(name).inspect();
    return true;
  } catch (err) {
    if ((err as { statusCode?: number }).statusCode === 404) return false;
    throw err;
  }
}

describe('container lifecycle against the real engine', () => {
  let ns: TestNamespace;
  let image: string;
  const other = `othertbx-${randomBytes(3).toString('hex')}`;
  let n: { ws: string; plain: string; exited: string; compose: string; bare: string; composeLookalike: string };

  const run = async (
    name: string,
    opts: { entrypoint?: string[]; autoRemove: boolean; pidMode?: string; labels?: Record<string, string>; start?: boolean },
  ) => {
    const c = await ns.docker.createContainer({
      name,
      Image: image,
      Entrypoint: opts.entrypoint ?? SLEEP,
      Cmd: [],
      Labels: { [TEST_LABEL]: ns.names.prefix, ...opts.labels },
      HostConfig: { AutoRemove: opts.autoRemove, NetworkMode: 'none', PidMode: opts.pidMode },
    });
    if (opts.start !== false) await c.start();
    return c;
  };

  before(async () => {
    ns = testNamespace();
    image = await ensureTestRuntimeImage();
    const p = ns.names.prefix;
    // Shells are named as the planners name them (plan/naming.ts): workspace and named shell.
    n = {
      ws: `${p}-ws-0123abcd`,
      plain: `${p}-named-plain`,
      exited: `${p}-exited-89abcdef`,
      // Not ours (issue 11, finding 4): a Compose service container and a hand-named container
      // in our namespace, and a Compose container whose name is in the workspace grammar.
      compose: `${p}-db-1`,
      bare: p,
      composeLookalike: `${p}-api-fedcba98`,
    };
    await run(ns.names.anchor, { entrypoint: [CONTAINER.tini, '-g', '--', 'sleep', 'infinity'], autoRemove: false });
    await run(ns.names.socketVolumeInit, { autoRemove: false, start: false });
    await run(n.ws, { autoRemove: true, pidMode: `container:${ns.names.anchor}`, labels: { [LABELS.workspace]: '/home/dev/project' } });
    await run(n.plain, { autoRemove: false });
    const exited = await run(n.exited, { entrypoint: ['true'], autoRemove: false });
    await exited.wait();
    await run(other, { autoRemove: false });
    const compose = { 'com.docker.compose.project': p, 'com.docker.compose.service': 'db', 'com.docker.compose.container-number': '1' };
    await run(n.compose, { autoRemove: false, labels: compose });
    await run(n.bare, { autoRemove: false });
    await run(n.composeLookalike, { autoRemove: false, labels: { ...compose, 'com.docker.compose.service': 'api' } });
    await ns.docker.createVolume({ Name: ns.names.socketVolume, Labels: { [TEST_LABEL]: p } });
  });

  after(async () => {
    await ns.docker
      .getContainer(other)
      .remove({ force: true })
      .catch(() => undefined);
    await ns.cleanup();
  });

  it('lists the shells that are ours by name, without the anchor, the initialiser or anyone else', async () => {
    // Also not: the Compose containers and the hand-named one that share our prefix.
    const list = await listToolboxContainers({ docker: ns.docker, names: ns.names });
    assert.deepEqual(
      list.map((c) => c.name),
      [n.exited, n.plain, n.ws],
    );
    const ws = list.find((c) => c.name === n.ws)!;
    assert.equal(ws.state, 'running');
    assert.equal(ws.workspace, '/home/dev/project');
    assert.equal(ws.peer, true, 'PidMode container:<anchor> is a peer member');
    assert.equal(ws.image, image);
    assert.ok(ws.createdAt instanceof Date && !Number.isNaN(ws.createdAt.getTime()));
    const plain = list.find((c) => c.name === n.plain)!;
    assert.equal(plain.peer, false);
    assert.equal(plain.workspace, undefined);
    assert.equal(list.find((c) => c.name === n.exited)!.state, 'exited');
  });

  it('refuses to stop a container whose name is not ours, and leaves it running', async () => {
    const ctx = { docker: ns.docker, names: ns.names };
    await assert.rejects(stopContainer(ctx, other), /Refusing to stop "othertbx-.*not a toolbox container/);
    await assert.rejects(stopContainer(ctx, 'toolbox-peer-anchor'), /not a toolbox container/);
    assert.equal((await ns.docker.getContainer(other).inspect()).State.Running, true);
  });

  it('refuses to stop a Compose container or a hand-named one in our namespace, and leaves them running', async () => {
    const ctx = { docker: ns.docker, names: ns.names };
    await assert.rejects(stopContainer(ctx, n.compose), new RegExp(`Refusing to stop "${n.compose}": it is not a toolbox container`));
    await assert.rejects(stopContainer(ctx, n.bare), new RegExp(`Refusing to stop "${n.bare}": it is not a toolbox container`));
    await assert.rejects(
      stopContainer(ctx, n.composeLookalike),
      /its label com\.docker\.compose\.[a-z-]+ marks it as managed by another tool .*not a toolbox container even though its name looks like one/,
    );
    for (const name of [n.compose, n.bare, n.composeLookalike]) {
      assert.equal((await ns.docker.getContainer(name).inspect()).State.Running, true, `${name} still runs`);
    }
  });

  it('stops an AutoRemove shell and returns once Docker has removed it', async () => {
    const ctx = { docker: ns.docker, names: ns.names };
    assert.equal(await stopContainer(ctx, n.ws, { graceSeconds: 2 }), 'stopped');
    assert.equal(await exists(ns.docker, n.ws), false);
    assert.equal(await stopContainer(ctx, n.ws), 'already-gone');
  });

  it('removes an exited container created without AutoRemove, so a stop always ends with it gone', async () => {
    const ctx = { docker: ns.docker, names: ns.names };
    assert.equal(await stopContainer(ctx, `/${n.exited}`), 'stopped');
    assert.equal(await exists(ns.docker, n.exited), false);
  });

  it('stops only the names it was given (what the user confirmed), not a container of ours that appeared since', async () => {
    const ctx = { docker: ns.docker, names: ns.names };
    const late = `${ns.names.prefix}-late-0a0b0c0d`;
    await run(late, { autoRemove: false });
    assert.deepEqual(await stopAll(ctx, { graceSeconds: 2, only: new Set([late]) }), [late]);
    assert.equal(await exists(ns.docker, late), false);
    assert.equal(await exists(ns.docker, n.plain), true, 'a container of ours that was not confirmed is left alone');
  });

  it('stops everything of ours including the anchor and the initialiser, but not the socket volume or other containers', async () => {
    const ctx = { docker: ns.docker, names: ns.names };
    const stopped = await stopAll(ctx, { graceSeconds: 2 });
    assert.deepEqual(stopped, [ns.names.anchor, ns.names.socketVolumeInit, n.plain].sort());
    for (const name of stopped) assert.equal(await exists(ns.docker, name), false, `${name} is gone`);
    assert.equal((await ns.docker.getContainer(other).inspect()).State.Running, true, 'the non-prefixed container survives');
    for (const name of [n.compose, n.bare, n.composeLookalike]) {
      assert.equal((await ns.docker.getContainer(name).inspect()).State.Running, true, `${name} (not ours) survives Stop All`);
    }
    await ns.docker.getVolume(ns.names.socketVolume).inspect();
    assert.deepEqual(await listToolboxContainers(ctx), []);
  });
});

describe('container listing rules (stubbed engine)', () => {
  it('ignores a container Docker is removing and one that vanishes between list and inspect', async () => {
    const names = objectNames('tbxstub');
    const listed = [
      { Id: 'a', Names: ['/tbxstub-alive-0123abcd'], State: 'running', Status: 'Up', Image: 'img', Labels: {}, Created: 1 },
      {
        Id: 'r',
        Names: ['/tbxstub-removing-0123abcd'],
        State: 'removing',
        Status: 'Removal In Progress',
        Image: 'img',
        Labels: {},
        Created: 1,
      },
      { Id: 'g', Names: ['/tbxstub-gone-0123abcd'], State: 'exited', Status: 'Exited', Image: 'img', Labels: {}, Created: 1 },
      { Id: 'x', Names: ['/tbxstubby'], State: 'running', Status: 'Up', Image: 'img', Labels: {}, Created: 1 },
    ];
    const docker = {
      listContainers: async () => listed,
      getContainer: (id: string) => ({
        inspect: async () => {
          if (id === 'g') throw Object.assign(new Error('no such container'), { statusCode: 404 });
          return { State: { Status: 'running' }, HostConfig: { PidMode: '' } };
        },
      }),
    } as unknown as Docker;
    const list = await listToolboxContainers({ docker, names });
    assert.deepEqual(
      list.map((c) => c.name),
      ['tbxstub-alive-0123abcd'],
    );
  });
});
