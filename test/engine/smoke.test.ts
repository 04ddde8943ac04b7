/**
 * Foundation smoke test for the real engine: a labelled, namespaced container can be created
 * from the local base image, inspected and removed through dockerode.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { isNotFound } from '../../extension/src/engine/errors';
import { TEST_LABEL, testNamespace, type TestNamespace } from '../support/docker';

const BASE_IMAGE = process.env.TOOLBOX_TEST_BASE_IMAGE ?? 'debian:bookworm-slim';

describe('engine smoke test', () => {
  let ns: TestNamespace;

  before(async () => {
    ns = testNamespace();
    await ns.docker
      .getImage(BASE_IMAGE)
      .inspect()
      .catch((err: unknown) => {
        throw new Error(`The base image ${BASE_IMAGE} is missing (${String(err)}); run 'bash scripts/ensure-base-image.sh' first.`);
      });
  });
  after(async () => {
    await ns?.cleanup();
  });

  it('creates a labelled container under the test prefix, inspects it, removes it and it is gone', async () => {
    const name = `${ns.names.prefix}-named-smoke`;
    const created = await ns.docker.createContainer({
      name,
      Image: BASE_IMAGE,
      Cmd: ['true'],
      Labels: { [TEST_LABEL]: ns.names.prefix },
      HostConfig: { NetworkMode: 'none' },
    });

    const info = await ns.docker.getContainer(name).inspect();
    assert.equal(info.Id, created.id);
    assert.equal(info.Name, `/${name}`);
    assert.equal(info.Config.Labels[TEST_LABEL], ns.names.prefix);
    assert.ok(ns.names.isOurs(info.Name));

    const listed = await ns.docker.listContainers({ all: true, filters: { label: [`${TEST_LABEL}=${ns.names.prefix}`] } });
    assert.deepEqual(
      listed.map((c) => c.Id),
      [created.id],
    );

    await created.remove({ force: true });

    const err = await ns.docker
      .getContainer(name)
      .inspect()
      .then(
        () => undefined,
        (e: unknown) => e,
      );
    assert.ok(err !== undefined, 'inspect should fail after removal');
    assert.ok(isNotFound(err), `inspect after removal should answer 404, got ${String(err)}`);
    const after = await ns.docker.listContainers({ all: true, filters: { label: [`${TEST_LABEL}=${ns.names.prefix}`] } });
    assert.deepEqual(after, []);
  });
});
