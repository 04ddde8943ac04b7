/**
 * Issue 15, item 9 in a real VS Code (code-server through Chromium): a project .toolbox.yaml that
 * is not valid YAML stops Open Toolbox Shell, as the CLI's `toolbox shell` fails, and the error
 * names the file, the line and the fix. No container is created for the folder.
 * Screenshots land in test-output/e2e/ (config-NN-*.png).
 */
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { folder, prefix, uiTestsSkip, workbenchForSuite } from './workbench';

describe('A broken project .toolbox.yaml in VS Code (issue 15)', { skip: uiTestsSkip }, () => {
  const { wb, page } = workbenchForSuite('config-');

  it('stops the open with file:line and the fix, and creates no container', { timeout: 120_000 }, async () =>
    wb.scenario('broken-project-file', async () => {
      // Line 3 opens a flow mapping that never closes.
      writeFileSync(join(folder, '.toolbox.yaml'), 'pull: never\nmounts:\n  - {name: kube, disabled: true\nenv: {A: "1"}\n');
      await wb.runCommand('Toolbox: Open Toolbox Shell');
      const toast = page.locator('.notification-toast', { hasText: 'Toolbox did not open the shell because of a configuration error' });
      await toast.first().waitFor({ timeout: 60_000 });
      await wb.shot('broken-project-file');
      const text = (await toast.first().innerText()).replace(/\s+/g, ' ');
      assert.match(text, /\.toolbox\.yaml:\d+: is not valid YAML/, text);
      assert.match(text, /Fix that file around line \d+, then open the shell again/, text);
      assert.equal(await page.locator('.terminal-wrapper .xterm').count(), 0, 'no terminal was opened');
      const { docker } = await import('../support/docker');
      const ours = await docker().listContainers({ all: true, filters: { name: [`${prefix}-ws-config-`] } });
      assert.deepEqual(
        ours.map((c) => c.Names[0]),
        [],
        'no container for this folder',
      );
    })(),
  );
});
