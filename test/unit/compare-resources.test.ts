/**
 * Compare with Base's rows (issue 26 item 6): an added file has no original side and a deleted
 * one no modified side, so VS Code's multi-file diff shows them as added and deleted, never as
 * renamed; a rename keeps its old name on the left.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { installVscodeLite } from '../support/vscodeLite';

describe('Compare with Base rows', () => {
  it('gives an added file no original and a deleted one no modified side', async () => {
    installVscodeLite();
    const { changeResources } = await import('../../extension/src/ui/worktrees/compareAgentWorktree');
    const rows = changeResources(
      {
        changes: [
          { path: 'hello.txt', status: 'added' },
          { path: 'gone.txt', status: 'deleted' },
          { path: 'src/a.ts', status: 'modified' },
          { path: 'src/new-name.ts', oldPath: 'src/old-name.ts', status: 'renamed' },
        ],
      },
      (file) => `wt:${file}`,
      (file) => `base:${file}`,
    );
    assert.deepEqual(rows, [
      ['wt:hello.txt', undefined, 'wt:hello.txt'],
      ['wt:gone.txt', 'base:gone.txt', undefined],
      ['wt:src/a.ts', 'base:src/a.ts', 'wt:src/a.ts'],
      ['wt:src/new-name.ts', 'base:src/old-name.ts', 'wt:src/new-name.ts'],
    ]);
  });
});
