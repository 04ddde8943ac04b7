/**
 * Issue 26, item 12: the Workspaces view lists this window's containers first, at the top level,
 * and every other toolbox container on the engine under one group that starts collapsed
 * (ui/views/treeNodes.ts groupOthers); a named shell a terminal of this window runs in counts as this
 * window's. Terminal names are the folder's name (backend/shells.ts), short enough for a tab.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { ToolboxState } from '../../extension/src/ui/views/refreshManager';
import { OTHER_CONTAINERS_ID, workspacesNodes } from '../../extension/src/ui/views/treeNodes';
import { containerSummary as container, viewState } from '../support/summary';

const snap = (containers: ReturnType<typeof container>[]): ToolboxState => viewState(containers);

const mine = container({ id: 'm', name: 'toolbox-app-1234abcd', workspace: '/src/app' });
const a = container({ id: 'a', name: 'toolbox-alpha-0000aaaa', workspace: '/src/alpha' });
const z = container({ id: 'z', name: 'toolbox-zeta-0000ffff', workspace: '/src/zeta', state: 'exited' });
const named = container({ id: 'n', name: 'toolbox-named-docs', kind: 'named', workspace: '/srv/docs' });

describe('the Workspaces view groups other folders’ containers (issue 26, item 12)', () => {
  it("puts this window's containers first and the rest in one collapsed group, by name", () => {
    const nodes = workspacesNodes(snap([z, a, mine]), ['/src/app']);
    assert.deepEqual(
      nodes.map((n) => [n.label, n.collapsed ?? false]),
      [
        ['toolbox-app-1234abcd', false],
        ['Other toolbox containers (2)', true],
      ],
    );
    const group = nodes[1]!;
    assert.equal(group.id, OTHER_CONTAINERS_ID);
    assert.equal(group.contextValue, 'otherContainers');
    assert.equal(group.container, undefined, 'the group is no container: no container action applies to it');
    assert.deepEqual(
      group.children!.map((n) => n.label),
      ['toolbox-alpha-0000aaaa', 'toolbox-zeta-0000ffff'],
    );
    assert.match(group.tooltip!, /^2 toolbox containers on this engine for folders this window does not have open/);
    // The rows inside keep their own actions (Stop, …): the same contextValue as at the top level.
    assert.match(group.children![0]!.contextValue!, /^container\.running\.peer$/);
  });

  it('has no group when every container is this window’s, and only the group when none is', () => {
    assert.deepEqual(
      workspacesNodes(snap([mine]), ['/src/app']).map((n) => n.label),
      ['toolbox-app-1234abcd'],
    );
    const nodes = workspacesNodes(snap([a]), ['/src/app']);
    assert.deepEqual(
      nodes.map((n) => n.label),
      ['Other toolbox containers (1)'],
    );
    assert.match(nodes[0]!.tooltip!, /^1 toolbox container on this engine/);
    assert.deepEqual(workspacesNodes(snap([]), ['/src/app']), []);
  });

  it("counts a named shell one of this window's terminals runs in as this window's", () => {
    const agents = [
      { key: 1, container: named.name, title: 'docs', status: { agent: 'shell' as const, state: 'idle' as const, since: 0 } },
    ];
    const nodes = workspacesNodes(snap([named, a, mine]), ['/src/app'], '', agents, 0);
    assert.deepEqual(
      nodes.map((n) => n.label),
      ['toolbox-app-1234abcd', 'toolbox-named-docs', 'Other toolbox containers (1)'],
    );
  });

  it('shows the engine error alone, never inside the group', () => {
    const nodes = workspacesNodes({ ...snap([a]), error: 'Docker is not reachable.' }, ['/src/app']);
    assert.ok(!nodes.some((n) => n.id === OTHER_CONTAINERS_ID));
  });
});
