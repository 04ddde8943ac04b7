/**
 * The second day, issue 26 item 1: after a window reload, the shims work in every reattached
 * shell. A window's backend opens a held shell (the bridge serves its container), the window
 * goes away (its backend and bridge shut down, the shell lives on in the holder), a new window's
 * backend reattaches from the record alone, and `code` inside that same shell reaches the new
 * window's editor. Before the fix the reattach served no bridge and `code` exited 69.
 */
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { probeBridgePath } from '../../extension/src/engine/bridgePath';
import type { SessionRecord } from '../../extension/src/backend/api';
import { docker } from '../support/docker';
import { openShell, shellOutput, shellProjectSuite } from '../support/shellProject';

describe('a reloaded window serves the bridge of the shells it reattaches (issue 26, item 1)', () => {
  const opened: string[] = [];
  const project = shellProjectSuite('tbxt-reattach-bridge-', { readme: true });
  const { folder } = project;

  /** A window's backend; `code` in its containers lands in `opened`. */
  const windowBackend = () =>
    project.windowBackend({
      editor: { openInEditor: (path) => void opened.push(path), openUntitled: () => undefined, openExternal: () => undefined },
    });

  it('runs `code` in a reattached shell against the new window', async () => {
    const first = windowBackend();
    const shell = await openShell(first, folder);
    const record: SessionRecord = shell.record!;
    assert.ok(record.bridge, 'the record keeps the bridge registration');
    const before = shellOutput(shell);
    shell.stream.write('code README.md; echo "first exit $?"\r');
    await before.waitFor(/first exit 0/);
    assert.deepEqual(opened, [join(folder, 'README.md')]);
    const path = await probeBridgePath(docker(), record.containerId);
    assert.equal(path.mode, 'unix', `by default the shims take the socket: ${path.why}`);

    // The window goes away: the terminal detaches, its bridge stops, the shell lives on in the holder.
    shell.dispose();
    first.dispose();
    await new Promise((r) => setTimeout(r, 200));

    const reloaded = windowBackend();
    const again = await reloaded.reattachShell(record);
    const after = shellOutput(again);
    again.stream.write('code README.md; echo "again exit $?"\r');
    const [, code] = await after.waitFor(/again exit (\d+)/);
    assert.equal(code, '0', 'code reached the reloaded window');
    assert.deepEqual(opened, [join(folder, 'README.md'), join(folder, 'README.md')]);
    again.dispose();
  });
});
