import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { worktreeRow } from '../../extension/src/ui/tree/worktreeItems';
import type { AgentWorktreeSummary } from '../../extension/src/backend/api';

const base: AgentWorktreeSummary = {
  root: '/r',
  path: '/r/.worktrees/tbx-fix-x',
  branch: 'fix/x',
  base: 'main',
  present: true,
  dirty: false,
  ahead: 2,
  behind: 1,
  rebasing: false,
};

describe('Worktrees view rows', () => {
  it('shows branch, ahead/behind, clean and the container state', () => {
    const row = worktreeRow({ ...base, container: { name: 'toolbox-tbx-fix-x-1234abcd', state: 'running' } }, 1);
    assert.equal(row.label, 'fix/x');
    assert.equal(row.description, '↑2 ↓1 · clean · agent running');
    assert.equal(row.contextValue, 'worktree.running');
    assert.match(row.tooltip, /2 commits ahead, 1 behind origin\/main/);
  });

  it('says a worktree this window is removing is being removed, with no actions (issue 26 item 5)', () => {
    const row = worktreeRow({ ...base, container: { name: 'toolbox-tbx-fix-x-1234abcd', state: 'running' } }, 1, true);
    assert.equal(row.label, 'fix/x');
    assert.match(row.description ?? '', /^removing/);
    assert.doesNotMatch(row.description ?? '', /running/, 'not "container running" while it goes');
    assert.doesNotMatch(row.contextValue ?? '', /^worktree/, 'no menu action matches it (package.json: viewItem =~ /^worktree/)');
    assert.deepEqual(row.icon, { id: 'loading~spin' });
  });

  it('marks dirty, stopped, missing and rebasing worktrees', () => {
    assert.equal(
      worktreeRow({ ...base, dirty: true, container: { name: 'c', state: 'exited' } }, 0).contextValue,
      'worktree.stopped.dirty',
    );
    assert.match(worktreeRow({ ...base, dirty: true }, 0).description, /uncommitted changes · no container$/);
    const gone = worktreeRow({ ...base, present: false }, 0);
    assert.match(gone.description, /^folder missing/);
    assert.equal(gone.icon.id, 'warning');
    const rebasing = worktreeRow({ ...base, branch: undefined, rebasing: true }, 0);
    assert.equal(rebasing.label, 'tbx-fix-x (rebasing)');
    assert.match(rebasing.tooltip, /Sync again/);
    assert.equal(rebasing.contextValue, 'worktree.none.rebasing');
  });
});
