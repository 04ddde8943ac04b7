import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type Docker from 'dockerode';
import { demux, subscribeWait } from '../../extension/src/engine/containers';
import type { EngineContext } from '../../extension/src/engine/context';
import { stopContainer } from '../../extension/src/engine/lifecycle';
import { ANCHOR_CMD, ANCHOR_ENTRYPOINT, ensureAnchor, ensureSocketVolume } from '../../extension/src/engine/peer';
import { CONTAINER } from '../../extension/src/contract/upstream';
import { TEST_ENGINE, testNamespace, type TestNamespace } from '../support/docker';
import { ensureTestRuntimeImage } from '../support/image';

/** Runs `sh -c script` in a throwaway container of ours and returns its exit code and output. */
async function runScript(ns: TestNamespace, image: string, script: string, binds: string[] = []) {
  const c = await ns.docker.createContainer({
    name: `${ns.names.prefix}-probe-${Math.random().toString(16).slice(2, 8)}`,
    Image: image,
    User: '0:0',
    Entrypoint: ['sh', '-c'],
    Cmd: [script],
    HostConfig: { Binds: binds, AutoRemove: false, NetworkMode: 'none' },
  });
  try {
    const { exited } = await subscribeWait(ns.docker, c.id, 'next-exit');
    await c.start();
    const { StatusCode } = await exited;
    const logs = (await c.logs({ stdout: true, stderr: true })) as unknown as Buffer;
    return { code: StatusCode, out: demux(logs).trim() };
  } finally {
    await c.remove({ force: true });
  }
}

async function exists(fn: () => Promise<unknown>): Promise<boolean> {
  return fn().then(
    () => true,
    (err: { statusCode?: number }) => {
      if (err.statusCode === 404) return false;
      throw err;
    },
  );
}

describe('peer messaging objects against the real engine', () => {
  let image: string;
  let ns: TestNamespace;
  let ctx: EngineContext;
  const lines: string[] = [];

  before(async () => {
    image = await ensureTestRuntimeImage();
  });

  const fresh = () => {
    ns = testNamespace();
    ctx = { docker: ns.docker, names: ns.names, log: (l) => lines.push(l) };
    return ns;
  };
  const spaces: TestNamespace[] = [];
  after(async () => {
    await Promise.all(spaces.map((s) => s.cleanup()));
  });

  describe('ensureSocketVolume', () => {
    it('creates the volume owned by the given uid:gid with mode 0700 and removes its initialiser', async () => {
      spaces.push(fresh());
      await ensureSocketVolume(ctx, image, 4321, 8765);
      const stat = await runScript(ns, image, `stat -c '%u:%g %a' ${CONTAINER.peerSocketDir}`, [
        `${ns.names.socketVolume}:${CONTAINER.peerSocketDir}`,
      ]);
      assert.equal(stat.out, '4321:8765 700');
      assert.equal(await exists(() => ns.docker.getContainer(ns.names.socketVolumeInit).inspect()), false);
    });

    it('initialises the volume once when two callers ensure it at the same moment', async () => {
      spaces.push(fresh());
      await Promise.all([ensureSocketVolume(ctx, image, 4321, 8765), ensureSocketVolume(ctx, image, 4321, 8765)]);
      const stat = await runScript(ns, image, `stat -c '%u:%g %a' ${CONTAINER.peerSocketDir}`, [
        `${ns.names.socketVolume}:${CONTAINER.peerSocketDir}`,
      ]);
      assert.equal(stat.out, '4321:8765 700');
    });

    it('leaves a volume that already exists alone (initialised on first sight only)', async () => {
      spaces.push(fresh());
      await ns.docker.createVolume({ Name: ns.names.socketVolume });
      await ensureSocketVolume(ctx, image, 4321, 8765);
      const stat = await runScript(ns, image, `stat -c '%u:%g' ${CONTAINER.peerSocketDir}`, [
        `${ns.names.socketVolume}:${CONTAINER.peerSocketDir}`,
      ]);
      assert.equal(stat.out, '0:0', 'no initialiser ran over an existing volume');
    });

    it('removes the volume again when the initialiser fails, and says so with its output', async () => {
      spaces.push(fresh());
      await assert.rejects(
        ensureSocketVolume(ctx, image, 1000, 1000, { initCommand: 'echo cannot chown here >&2; exit 3' }),
        (err: Error) => {
          assert.equal(
            err.message,
            `The initialiser of the volume ${ns.names.socketVolume} exited with code 3 (cannot chown here); ` +
              `the volume ${ns.names.socketVolume} was removed again so the next shell starts clean.`,
          );
          return true;
        },
      );
      assert.equal(await exists(() => ns.docker.getVolume(ns.names.socketVolume).inspect()), false);
      assert.equal(await exists(() => ns.docker.getContainer(ns.names.socketVolumeInit).inspect()), false);
    });

    it('tells the user to run docker volume rm when the failed volume cannot be removed', async () => {
      spaces.push(fresh());
      // While the initialiser sleeps, another container takes the volume, so removal must fail.
      let blocker: Docker.Container | undefined;
      const grab = (async () => {
        for (let i = 0; i < 100 && !blocker; i++) {
          if (await exists(() => ns.docker.getVolume(ns.names.socketVolume).inspect())) {
            blocker = await ns.docker.createContainer({
              name: `${ns.names.prefix}-holder`,
              Image: image,
              HostConfig: { Binds: [`${ns.names.socketVolume}:/held`], NetworkMode: 'none' },
            });
          } else {
            await new Promise((r) => setTimeout(r, 50));
          }
        }
      })();
      await assert.rejects(ensureSocketVolume(ctx, image, 1000, 1000, { initCommand: 'sleep 2; exit 1' }), (err: Error) => {
        assert.match(err.message, new RegExp(`exited with code 1; the volume ${ns.names.socketVolume} could not be removed either \\(`));
        assert.match(err.message, new RegExp(`Remove it with \`docker volume rm ${ns.names.socketVolume}\` before the next shell\\.$`));
        return true;
      });
      await grab;
      assert.ok(blocker, 'the holder container was created while the initialiser ran');
      assert.equal(await exists(() => ns.docker.getContainer(ns.names.socketVolumeInit).inspect()), false);
    });

    it('removes the initialiser and the volume when the caller gives up mid-way', async () => {
      spaces.push(fresh());
      const controller = new AbortController();
      setTimeout(() => controller.abort(), 500);
      await assert.rejects(
        ensureSocketVolume(ctx, image, 1000, 1000, { initCommand: 'sleep 30', signal: controller.signal }),
        /was removed again/,
      );
      assert.equal(await exists(() => ns.docker.getContainer(ns.names.socketVolumeInit).inspect()), false);
      assert.equal(await exists(() => ns.docker.getVolume(ns.names.socketVolume).inspect()), false);
    });
  });

  describe('ensureAnchor', () => {
    it('creates a running anchor with the bare-sleep entrypoint, no binds and no auto-remove', async () => {
      spaces.push(fresh());
      const id = await ensureAnchor(ctx, image);
      const info = await ns.docker.getContainer(ns.names.anchor).inspect();
      assert.equal(info.Id, id);
      assert.equal(info.State.Running, true);
      assert.deepEqual(info.Config.Entrypoint, [...ANCHOR_ENTRYPOINT]);
      assert.deepEqual(info.Config.Cmd, [...ANCHOR_CMD]);
      assert.equal(info.HostConfig.AutoRemove, false);
      assert.deepEqual(info.HostConfig.Binds ?? [], []);
      assert.equal(await ensureAnchor(ctx, image), id, 'a second call reuses it');
    });

    it('starts a stopped anchor instead of replacing it', async () => {
      spaces.push(fresh());
      const id = await ensureAnchor(ctx, image);
      await ns.docker.getContainer(id).stop({ t: 0 });
      assert.equal(await ensureAnchor(ctx, image), id);
      assert.equal((await ns.docker.getContainer(id).inspect()).State.Running, true);
    });

    it('ends with one anchor when two callers create it at the same moment', async () => {
      spaces.push(fresh());
      const [a, b] = await Promise.all([ensureAnchor(ctx, image), ensureAnchor(ctx, image)]);
      assert.equal(a, b);
      assert.equal((await ns.docker.getContainer(a).inspect()).State.Running, true);
    });

    it('replaces a stale anchor that nothing shares', async () => {
      spaces.push(fresh());
      const stale = await ns.docker.createContainer({
        name: ns.names.anchor,
        Image: image,
        Entrypoint: ['sleep'],
        Cmd: ['infinity'],
        HostConfig: { NetworkMode: 'none' },
      });
      await stale.start();
      const id = await ensureAnchor(ctx, image);
      assert.notEqual(id, stale.id);
      assert.deepEqual((await ns.docker.getContainer(id).inspect()).Config.Entrypoint, [...ANCHOR_ENTRYPOINT]);
    });

    it('keeps a stale anchor whose namespace a running container of ours still shares', async () => {
      spaces.push(fresh());
      const stale = await ns.docker.createContainer({
        name: ns.names.anchor,
        Image: image,
        Entrypoint: ['sleep'],
        Cmd: ['infinity'],
        HostConfig: { NetworkMode: 'none' },
      });
      await stale.start();
      const member = await ns.docker.createContainer({
        name: `${ns.names.prefix}-named-member`,
        Image: image,
        Entrypoint: ['sleep'],
        Cmd: ['infinity'],
        HostConfig: { PidMode: `container:${ns.names.anchor}`, NetworkMode: 'none' },
      });
      await member.start();
      assert.equal(await ensureAnchor(ctx, image), stale.id);
      assert.ok(lines.some((l) => l.includes('is stale but other containers share its namespace')));
    });

    it('replaces a stale anchor only an exited container joined; Podman keeps it, and it still holds a namespace', async () => {
      spaces.push(fresh());
      const stale = await ns.docker.createContainer({
        name: ns.names.anchor,
        Image: image,
        Entrypoint: ['sleep'],
        Cmd: ['infinity'],
        HostConfig: { NetworkMode: 'none' },
      });
      await stale.start();
      const member = await ns.docker.createContainer({
        name: `${ns.names.prefix}-named-exited`,
        Image: image,
        Entrypoint: ['true'],
        HostConfig: { PidMode: `container:${ns.names.anchor}`, NetworkMode: 'none' },
      });
      const { exited } = await subscribeWait(ns.docker, member.id, 'next-exit');
      await member.start();
      await exited;
      const id = await ensureAnchor(ctx, image);
      const info = await ns.docker.getContainer(id).inspect();
      assert.equal(info.State.Running, true, 'the anchor runs');
      if (TEST_ENGINE === 'docker') {
        assert.notEqual(id, stale.id, 'Docker removes it: nothing running shares it');
        assert.deepEqual(info.Config.Entrypoint, [...ANCHOR_ENTRYPOINT]);
      } else {
        assert.equal(id, stale.id, 'Podman refuses to remove a container another one joined');
        assert.ok(lines.some((l) => l.includes('the engine keeps the stale anchor')));
      }
    });
  });

  describe('stopContainer', () => {
    it('stops the anchor even when a container that is not ours joined it (Podman then keeps it, stopped)', async () => {
      spaces.push(fresh());
      const id = await ensureAnchor(ctx, image);
      // Not one of ours by name: stop-all would not stop it first.
      const foreign = await ns.docker.createContainer({
        name: `${ns.names.prefix}-foreign`,
        Image: image,
        Entrypoint: ['sleep'],
        Cmd: ['infinity'],
        HostConfig: { PidMode: `container:${ns.names.anchor}`, NetworkMode: 'none' },
      });
      await foreign.start();
      assert.equal(await stopContainer(ctx, ns.names.anchor, { graceSeconds: 0 }), 'stopped');
      const left = await ns.docker
        .getContainer(id)
        .inspect()
        .catch(() => undefined);
      if (TEST_ENGINE === 'docker') assert.equal(left, undefined, 'Docker removes it');
      else assert.equal(left?.State.Running, false, 'Podman keeps it, stopped');
    });
  });
});
