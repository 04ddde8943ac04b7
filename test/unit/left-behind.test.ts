/**
 * Issue 29, item 6: what a container of ours started through its Docker endpoint and left running
 * when something other than this editor removed it (the toolbox CLI, docker rm). The snapshot
 * lists it by gone owner (engine/dockerEndpoint/children.ts leftBehindOf), the Workspaces view shows a row
 * per owner, and Remove What Was Left Behind refuses while a container of the owner's name exists.
 * The engine's answers are stand-ins here; test/engine/left-behind.test.ts runs it on a real one.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type Docker from 'dockerode';
import { LABELS } from '../../extension/src/contract/upstream';
import { objectNames } from '../../extension/src/contract/objects';
import type { EngineContext } from '../../extension/src/engine/context';
import { leftBehindOf, removeLeftBehind, type DockerChildrenSummary } from '../../extension/src/engine/dockerEndpoint/children';
import { leftBehindConfirmation } from '../../extension/src/ui/containers/confirmations';
import { workspacesNodes } from '../../extension/src/ui/views/treeNodes';
import type { ContainerSummary } from '../../extension/src/ui/views/model';
import { viewState, containerSummary } from '../support/summary';

const names = objectNames('toolbox');
const owner = 'toolbox-app-1234abcd';
const children: DockerChildrenSummary = {
  containers: [{ name: 'app-db-1', image: 'postgres:16', state: 'running' }],
  networks: ['app_default'],
  volumes: ['app_data'],
};

/** An engine where `existing` are the containers there are; records every call. */
function engine(existing: readonly string[]) {
  const calls: string[] = [];
  const notFound = () => Object.assign(new Error('no such container'), { statusCode: 404 });
  const docker = {
    getContainer: (name: string) => ({
      inspect: async () => {
        calls.push(`inspect ${name}`);
        if (!existing.includes(name)) throw notFound();
        return { Name: `/${name}` };
      },
      remove: async () => void calls.push(`remove ${name}`),
    }),
    getNetwork: (id: string) => ({ remove: async () => void calls.push(`remove network ${id}`) }),
    listContainers: async () => (
      calls.push('listContainers'),
      // c2 carries the owner label because its image does: the host made it (dockerEndpoint/children.ts labelledImages).
      [
        { Id: 'c1', Names: ['/app-db-1'], ImageID: 'sha256:plain' },
        { Id: 'c2', Names: ['/hosts-own'], ImageID: 'sha256:labelled' },
      ]
    ),
    listImages: async () => (
      calls.push('listImages'),
      [{ Id: 'sha256:labelled', Labels: { [LABELS.dockerOwner]: 'toolbox-app-1234abcd' } }]
    ),
    listNetworks: async () => (calls.push('listNetworks'), [{ Id: 'n1', Name: 'app_default' }]),
    listVolumes: async () => (calls.push('listVolumes'), { Volumes: [{ Name: 'app_data' }] }),
  };
  return { ctx: { docker: docker as unknown as Docker, names } satisfies EngineContext, calls };
}

const state = (containers: ContainerSummary[], leftBehind?: Array<{ owner: string; children: DockerChildrenSummary }>) =>
  viewState(containers, { snapshot: { volume: { name: 'toolbox-cc-socks', exists: true }, ...(leftBehind ? { leftBehind } : {}) } });

describe('children left behind by a container something else removed', () => {
  it('the snapshot counts an owner as gone only when it is not listed and the engine says 404', async () => {
    const byOwner = new Map([
      [owner, children],
      ['toolbox-listed-00000000', children],
      ['toolbox-recreated-11111111', children],
      // Not a name of ours (another tool's, another namespace's): never offered.
      ['someone-else', children],
      // Named volumes alone: what every removal keeps, the editor's Stop too.
      ['toolbox-volumes-33333333', { containers: [], networks: [], volumes: ['v'] }],
    ]);
    const { ctx, calls } = engine(['toolbox-recreated-11111111']);
    const gone = await leftBehindOf(ctx, byOwner, new Set(['toolbox-listed-00000000']));
    assert.deepEqual(
      gone.map((g) => g.owner),
      [owner],
    );
    assert.deepEqual(calls.sort(), [`inspect ${owner}`, 'inspect toolbox-recreated-11111111']);
  });

  it('an engine error on the inspect is no proof the owner is gone', async () => {
    const { ctx } = engine([]);
    (ctx.docker as unknown as { getContainer: unknown }).getContainer = () => ({
      inspect: async () => Promise.reject(Object.assign(new Error('boom'), { statusCode: 500 })),
    });
    assert.deepEqual(await leftBehindOf(ctx, new Map([[owner, children]]), new Set()), []);
  });

  it('a row per gone owner after the containers, listing its children, with Remove on it', () => {
    const c: ContainerSummary = containerSummary({ id: 'x', name: 'toolbox-other-22222222', pidMode: '', peer: false });
    const nodes = workspacesNodes(state([c], [{ owner, children }]), ['/src/app']);
    assert.deepEqual(
      nodes.map((n) => n.id),
      [`container:${c.name}`, `leftBehind:${owner}`],
    );
    const row = nodes[1]!;
    assert.equal(row.label, `Left behind by ${owner}`);
    assert.equal(row.description, '1 container · 1 network · 1 volume');
    assert.equal(row.contextValue, 'leftBehind');
    assert.equal(row.leftBehind, owner);
    assert.match(row.tooltip!, /is gone.*removes its containers and networks; its named volumes are kept/);
    assert.deepEqual(
      row.children?.map((n) => [n.label, n.description]),
      [
        ['app-db-1', 'postgres:16 · running'],
        ['app_default', 'network'],
        ['app_data', 'volume · kept when the container goes'],
      ],
    );
  });

  it('no row when nothing is left behind; the row shows even with no container at all', () => {
    assert.deepEqual(workspacesNodes(state([]), []), []);
    assert.deepEqual(
      workspacesNodes(state([], [{ owner, children }]), []).map((n) => n.id),
      [`leftBehind:${owner}`],
    );
  });

  it('the owner’s name from the label is plain text in the row and the confirmation', () => {
    const hostile = 'toolbox-x\n[click](command:workbench.action.terminal.new)\u202e';
    const [row] = workspacesNodes(state([], [{ owner: hostile, children }]), []);
    assert.ok(!row!.label.includes('\n') && !row!.label.includes('](') && !row!.label.includes('\u202e'), row!.label);
    assert.ok(!row!.tooltip!.includes('](') && !row!.tooltip!.includes('\n'));
    const text = leftBehindConfirmation(hostile, children);
    assert.ok(!text.message.includes('](') && !text.detail.includes(']('));
  });

  it('the confirmation says what goes and what stays', () => {
    const text = leftBehindConfirmation(owner, children);
    assert.equal(text.message, `Remove what ${owner} left behind?`);
    assert.match(text.detail, /Removed \(containers with their anonymous volumes, then networks\):\n• app-db-1\n• network app_default/);
    assert.match(text.detail, /Kept \(named volumes, they hold data\):\n• volume app_data/);
  });

  it('Remove refuses while a container of the owner’s name exists, and lists or removes nothing', async () => {
    const { ctx, calls } = engine([owner]);
    await assert.rejects(removeLeftBehind(ctx, owner), /A container named toolbox-app-1234abcd exists again.*nothing was removed/);
    assert.deepEqual(calls, [`inspect ${owner}`]);
  });

  it('Remove refuses a name that is not one of ours without asking the engine', async () => {
    const { ctx, calls } = engine([]);
    await assert.rejects(removeLeftBehind(ctx, 'postgres'), /not the name of a toolbox container/);
    assert.deepEqual(calls, []);
  });

  it('Remove, with the owner gone, removes the containers and networks and keeps the volumes', async () => {
    const { ctx, calls } = engine([]);
    const removed = await removeLeftBehind(ctx, owner);
    assert.deepEqual(removed, { containers: ['app-db-1'], networks: ['app_default'], volumes: ['app_data'] });
    assert.ok(calls.includes('remove c1') && calls.includes('remove network n1'), calls.join(', '));
    assert.ok(!calls.includes('remove c2'), 'a container whose owner label came from its image is not removed');
    assert.ok(!calls.some((c) => c.includes('app_data') && c.startsWith('remove')));
  });
});
