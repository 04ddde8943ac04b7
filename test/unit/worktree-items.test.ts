import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { refusedRow, worktreeRow } from '../../extension/src/ui/worktrees/worktreeItems';
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

/** The row for a key host git refused in /r/.git/config, with the refusal's message. */
const configRefusedRow = (message: string, key: string) =>
  refusedRow({ folder: '/r', code: 'repo-config-unsafe', message, file: '/r/.git/config', key });

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

  it('shows a repository host git refused as one row: the key, the file, Open File (decision 0039)', () => {
    const row = configRefusedRow('The key core.fsmonitor in /r/.git/config (line 7) names a program git would run. …', 'core.fsmonitor');
    assert.equal(row.label, 'Host git refused: core.fsmonitor');
    assert.equal(row.description, '/r/.git/config');
    assert.equal(row.contextValue, 'gitRefused');
    assert.match(row.tooltip, /line 7/);
    assert.doesNotMatch(row.contextValue, /^worktree/, 'none of the worktree actions apply');
  });

  it('shows a hostile key only in a strict character set, and a symbolic link without Open File', () => {
    const row = configRefusedRow('refused\u001b]8;;https://evil\u0007click', 'filter.\u202e\u001b[31mx.clean');
    assert.equal(row.label, 'Host git refused: filter.<…>.clean');
    assert.ok(!row.tooltip.includes('\u001b') && !row.tooltip.includes('\u0007'), row.tooltip);
    const link = refusedRow({ folder: '/r', code: 'path-unsafe', message: '/r/.worktrees is a symbolic link, …' });
    assert.equal(link.label, 'Host git refused a symbolic link');
    assert.equal(link.contextValue, 'gitRefused.path');
    assert.equal(link.description, '/r');
  });
});
