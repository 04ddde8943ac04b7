/**
 * Issue 27, item 4: a workspace container's children (what it started through its Docker
 * endpoint) under it in the Workspaces view, and named in the Stop confirmations: containers and
 * networks go with it, named volumes stay.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { childrenLines, stopAllConfirmation, stopContainerConfirmation } from '../../extension/src/ui/containers/confirmations';
import { dockerChildrenCount } from '../../extension/src/ui/views/treeItems';
import { workspacesNodes } from '../../extension/src/ui/views/treeNodes';
import type { ContainerSummary } from '../../extension/src/ui/views/model';
import type { DockerChildrenSummary } from '../../extension/src/engine/dockerEndpoint/children';
import { viewState, containerSummary } from '../support/summary';

const children: DockerChildrenSummary = {
  containers: [
    { name: 'app-db-1', image: 'postgres:16', state: 'running' },
    { name: 'app-web-1', image: 'app-web', state: 'exited' },
  ],
  networks: ['app_default'],
  volumes: ['app_data'],
};

const c: ContainerSummary = containerSummary({ pidMode: '', peer: false, dockerChildren: children });

const state = (containers: ContainerSummary[]) =>
  viewState(containers, { snapshot: { volume: { name: 'toolbox-cc-socks', exists: true } } });

describe('Docker children in the tree and the Stop confirmations', () => {
  it('lists them in a group under their container: containers with image and state, networks, volumes kept', () => {
    const [node] = workspacesNodes(state([c]), ['/src/app']);
    const group = node?.children?.find((n) => n.id === `children:${c.name}`);
    assert.ok(group, JSON.stringify(node?.children?.map((n) => n.id)));
    assert.equal(group.label, 'Started with Docker');
    assert.equal(group.description, '2 containers · 1 network · 1 volume');
    assert.deepEqual(
      group.children?.map((n) => [n.label, n.description]),
      [
        ['app-db-1', 'postgres:16 · running'],
        ['app-web-1', 'app-web · exited'],
        ['app_default', 'network'],
        ['app_data', 'volume · kept when the container goes'],
      ],
    );
  });

  it('no group for a container that started nothing', () => {
    const bare = { ...c, dockerChildren: undefined };
    const [node] = workspacesNodes(state([bare]), ['/src/app']);
    assert.ok(!node?.children?.some((n) => n.id.startsWith('children:')));
  });

  it('a child’s name is shown as text, never markdown or a link', () => {
    const hostile = { ...children, containers: [{ name: 'x', image: '[click](command:workbench.action.terminal.new)', state: 'running' }] };
    const [node] = workspacesNodes(state([{ ...c, dockerChildren: hostile }]), ['/src/app']);
    const row = node?.children?.find((n) => n.id.startsWith('children:'))?.children?.[0];
    assert.ok(typeof row?.tooltip === 'string', 'a plain string tooltip, not MarkdownString');
  });

  it('Stop Container asks even with no shell attached when it would remove children, and names them and the kept volumes', () => {
    const text = stopContainerConfirmation(c.name, [], children);
    assert.ok(text);
    assert.match(text.message, /What it started with Docker goes with it/);
    assert.match(text.detail, /Removed with it, started through its Docker endpoint:\n• app-db-1\n• app-web-1\n• network app_default/);
    assert.match(text.detail, /Kept \(named volumes, they hold data\):\n• volume app_data/);
  });

  it('named volumes alone are kept, so they need no question; nothing at all, none either', () => {
    assert.equal(stopContainerConfirmation(c.name, [], { containers: [], networks: [], volumes: ['v'] }), undefined);
    assert.equal(stopContainerConfirmation(c.name, []), undefined);
    assert.equal(childrenLines({ containers: [], networks: [], volumes: [] }), undefined);
  });

  it('with a shell attached, both the shells and the children', () => {
    const text = stopContainerConfirmation(c.name, ['app'], children)!;
    assert.match(text.message, /A shell is attached/);
    assert.match(text.detail, /• app\n\nThis shell ends.*\n\nRemoved with it/s);
  });

  it('Stop Every Container names every container’s children', () => {
    const text = stopAllConfirmation([c.name], 'toolbox-peer-anchor', [children, { containers: [], networks: ['n2'], volumes: [] }]);
    assert.match(
      text.detail,
      /Removed with them, started through their Docker endpoint:\n• app-db-1\n• app-web-1\n• network app_default\n• network n2/,
    );
    assert.equal(dockerChildrenCount({ containers: [], networks: [], volumes: ['a', 'b'] }), '2 volumes');
  });
});
