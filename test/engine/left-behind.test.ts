/**
 * Issue 29, item 6: what a workspace container started through its Docker endpoint, left running
 * when something other than this editor removed it. Its children are made through a real endpoint
 * with the real policy (engine/dockerEndpoint/gate.ts), so they carry the owner label as the endpoint sets
 * it; the owner is then removed as the upstream CLI's shell exit does (test/support/upstreamTeardown.ts:
 * stop and remove, not through the extension). The backend's snapshot lists them as left behind,
 * and Remove What Was Left Behind removes the child container and network, keeps the named
 * volume, and refuses while a container of the owner's name exists again.
 *
 * Runs against Podman too (scripts/test-podman.sh: TOOLBOX_TEST_ENGINE=podman).
 */
import assert from 'node:assert/strict';
import { rmSync } from 'node:fs';
import { after, before, describe, it } from 'node:test';
import Docker from 'dockerode';
import { LABELS } from '../../extension/src/contract/upstream';
import { type DockerEndpoint } from '../../extension/src/engine/dockerEndpoint/server';
import { policyGate } from '../../extension/src/engine/dockerEndpoint/gate';
import { testBackend, type TestBackend } from '../support/backend';
import { testNamespace } from '../support/docker';
import { endpointRig } from '../support/endpointRig';
import { upstreamOnShellExit } from '../support/upstreamTeardown';

describe('children a removed workspace container left behind (issue 29, item 6)', () => {
  const ns = testNamespace();
  const d = ns.docker;
  const prefix = ns.names.prefix;
  // A workspace container's name as the extension and the CLI give it: <prefix>-<slug>-<8 hex>.
  const owner = `${prefix}-app-0123abcd`;
  const child = `${prefix}-db`;
  const network = `${prefix}-net`;
  const volume = `${prefix}-data`;
  const rig = endpointRig(ns, owner);
  let endpoint: DockerEndpoint | undefined;
  let backend: TestBackend;

  const exists = (inspect: Promise<unknown>) =>
    inspect.then(
      () => true,
      (err: { statusCode?: number }) => (err.statusCode === 404 ? false : Promise.reject(err)),
    );

  before(async () => {
    await rig.requireBaseImage();
    endpoint = await rig.startEndpoint(policyGate({ docker: d, scope: rig.scope, log: () => undefined }));
    await rig.startSleeper(owner);
    // What a Compose stack makes through the endpoint: a network, a named volume, a container on both.
    const through = new Docker({ socketPath: rig.plan.socketPath });
    await through.createNetwork({ Name: network });
    await through.createVolume({ Name: volume });
    await rig.startSleeper(child, { HostConfig: { Binds: [`${volume}:/data`], NetworkMode: network } }, through);
    backend = testBackend(ns.names, ns.home);
  });

  after(async () => {
    backend?.dispose();
    await endpoint?.close();
    await ns.cleanup();
    rmSync(rig.runRoot, { recursive: true, force: true });
  });

  it('the endpoint labelled what it made as the owner’s', async () => {
    for (const labels of [
      (await d.getContainer(child).inspect()).Config.Labels,
      (await d.getNetwork(network).inspect()).Labels as Record<string, string>,
      ((await d.getVolume(volume).inspect()) as { Labels?: Record<string, string> }).Labels,
    ]) {
      assert.equal(labels?.[LABELS.dockerOwner], owner);
    }
    const snap = await backend.snapshot();
    assert.equal(
      snap.leftBehind?.find((g) => g.owner === owner),
      undefined,
      'not left behind while its owner exists',
    );
  });

  it('the owner removed as the toolbox CLI does: its children are listed as left behind, still running', async () => {
    assert.equal(await upstreamOnShellExit(d, owner), 'removed');
    assert.equal(await exists(d.getContainer(owner).inspect()), false);
    // As the engine spells it (Podman: docker.io/library/…).
    const image = (await d.listContainers({ filters: { name: [child] } }))[0]?.Image;
    const snap = await backend.snapshot();
    const mine = snap.leftBehind?.filter((g) => g.owner.startsWith(`${prefix}-`));
    assert.deepEqual(mine, [
      { owner, children: { containers: [{ name: child, image, state: 'running' }], networks: [network], volumes: [volume] } },
    ]);
  });

  it('Remove refuses while a container of the owner’s name exists again, and removes nothing', async () => {
    await rig.startSleeper(owner);
    try {
      await assert.rejects(backend.removeLeftBehind(owner), /A container named .* exists again.*nothing was removed/);
      assert.equal((await d.getContainer(child).inspect()).State.Running, true);
    } finally {
      await d.getContainer(owner).remove({ force: true });
    }
  });

  it('Remove removes the child container and network and keeps the named volume', async () => {
    const removed = await backend.removeLeftBehind(owner);
    assert.deepEqual(removed, { containers: [child], networks: [network], volumes: [volume] });
    assert.equal(await exists(d.getContainer(child).inspect()), false);
    assert.equal(await exists(d.getNetwork(network).inspect()), false);
    assert.equal(await exists(d.getVolume(volume).inspect()), true, 'the named volume is kept');
    // Its named volume alone is what any removal keeps (the editor's Stop too): no row for it.
    const snap = await backend.snapshot();
    assert.equal(
      snap.leftBehind?.find((g) => g.owner === owner),
      undefined,
    );
  });
});
