/**
 * An agent worktree under its repository's egress entry (backend/egress.ts, issue 30): the
 * worktree folder has no entry of its own in toolbox.egressForFolder, its repository has one;
 * the worktree's containers take the stricter mode and both allow lists, and the Docker
 * endpoint's registry check reads them too. No engine, no proxy served.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { EgressPolicies } from '../../extension/src/backend/egress';
import type { FolderEgress } from '../../extension/src/plan/egressPolicy';
import { standInSettings } from '../support/settings';

const REPO = '/home/u/repo';
const TREE = '/home/u/repo/.worktrees/tbx-task';

function policies(entries: Record<string, FolderEgress>): EgressPolicies {
  return new EgressPolicies({
    settings: standInSettings({ egress: (folder) => (entries[folder] ? { folder: entries[folder] } : {}) }),
    log: { info: () => undefined, warn: () => undefined },
    configFor: async () => ({ defaults: false }),
  });
}

describe('an agent worktree takes its repository’s egress entry', () => {
  it('without the repository named, the worktree is open; with it, the repository’s mode applies', async () => {
    const p = policies({ [REPO]: { mode: 'allowlist', allow: ['registry.example:443'] } });
    assert.equal(await p.mode(TREE), 'open');
    assert.equal(await p.mode(TREE, REPO), 'allowlist');
    const e = p.endpointEgress(TREE, 'tbx-task-container');
    assert.equal(e?.mode, 'allowlist');
    assert.equal(e?.registryAllowed('registry.example', 443), true, 'the repository’s rule');
    assert.equal(e?.registryAllowed('evil.example', 443), false);
  });

  it('the stricter of the two modes, and both allow lists', async () => {
    const p = policies({
      [REPO]: { mode: 'ask', allow: ['a.example:443'] },
      [TREE]: { mode: 'allowlist', allow: ['b.example:443'] },
    });
    assert.equal(await p.mode(TREE, REPO), 'allowlist');
    const e = p.endpointEgress(TREE, 'c');
    assert.equal(e?.registryAllowed('a.example', 443), true);
    assert.equal(e?.registryAllowed('b.example', 443), true);
  });

  it('an open folder gives the Docker endpoint no policy', async () => {
    const p = policies({});
    assert.equal(await p.mode(REPO), 'open');
    assert.equal(p.endpointEgress(REPO, 'c'), undefined);
    assert.equal(p.summary('unix:///var/run/docker.sock', 'c', {}, REPO), undefined);
  });
});
