/**
 * The second day, issue 26 item 1: after a window reload, the shims work in every reattached
 * shell. A window's backend opens a held shell (the bridge serves its container), the window
 * goes away (its backend and bridge shut down, the shell lives on in the holder), a new window's
 * backend reattaches from the record alone, and `code` inside that same shell reaches the new
 * window's editor. Before the fix the reattach served no bridge and `code` exited 69.
 */
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { objectNames } from '../../extension/src/contract/objects';
import { probeBridgePath } from '../../extension/src/engine/bridgePath';
import type { SessionRecord, StartedShell } from '../../extension/src/backend/api';
import { docker, removeNamespaceObjects } from '../support/docker';
import { testBackend, type TestBackend } from '../support/backend';
import { ensureTestRuntimeImage } from '../support/image';
import { screen } from '../support/screen';

/** The shell's output, with a wait for a pattern in it (test/support/screen.ts). */
function output(shell: StartedShell) {
  return screen({ onDidWrite: (listener: (text: string) => void) => shell.stream.on('data', (d: Buffer) => listener(d.toString('utf8'))) });
}

describe('a reloaded window serves the bridge of the shells it reattaches (issue 26, item 1)', () => {
  const names = objectNames(`tbxt${Math.random().toString(16).slice(2, 8)}`);
  let home: string;
  let folder: string;
  const backends: TestBackend[] = [];
  const opened: string[] = [];

  before(async () => {
    const image = await ensureTestRuntimeImage();
    home = mkdtempSync(join(tmpdir(), 'tbxt-reattach-bridge-'));
    folder = join(home, 'project');
    mkdirSync(folder);
    writeFileSync(join(folder, 'README.md'), 'hello\n');
    // The image in ~/.toolbox.yaml: from the project file it would wait for the user's approval (docs/decisions/0041).
    writeFileSync(join(home, '.toolbox.yaml'), `image: ${image}\n`);
    writeFileSync(join(folder, '.toolbox.yaml'), 'peer_messaging: false\n');
  });

  after(async () => {
    for (const b of backends) b.dispose();
    await removeNamespaceObjects(docker(), names).catch(() => undefined);
    rmSync(home, { recursive: true, force: true });
  });

  /** A window's backend; `code` in its containers lands in `opened`. */
  function windowBackend(): TestBackend {
    const b = testBackend(names, home, {
      editor: { openInEditor: (path) => void opened.push(path), openUntitled: () => undefined, openExternal: () => undefined },
    });
    backends.push(b);
    return b;
  }

  it('runs `code` in a reattached shell against the new window', async () => {
    const first = windowBackend();
    const prepared = await first.prepareShell({ folder });
    const session = await prepared.open({ log: () => undefined, step: () => undefined }, new AbortController().signal);
    const shell = await session.start({ cols: 100, rows: 30 });
    const record: SessionRecord = shell.record!;
    assert.ok(record.bridge, 'the record keeps the bridge registration');
    const before = output(shell);
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
    const after = output(again);
    again.stream.write('code README.md; echo "again exit $?"\r');
    const [, code] = await after.waitFor(/again exit (\d+)/);
    assert.equal(code, '0', 'code reached the reloaded window');
    assert.deepEqual(opened, [join(folder, 'README.md'), join(folder, 'README.md')]);
    again.dispose();
  });
});
