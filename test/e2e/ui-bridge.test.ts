/**
 * Issue 13 ("The first ten minutes"), items 2, 3 and 10 in a real VS Code (code-server through
 * Chromium) against the real Docker engine: the prompt names the container and SHELL is set,
 * `code brand-new.txt` opens a new unsaved editor, and `xdg-open` waits for VS Code's "open the
 * external website?" question, exiting 77 with "cancelled in VS Code" when the user cancels.
 * Screenshots land in test-output/e2e/ (bridge-NN-*.png).
 */
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { folder, LONG, prefix, uiTestsSkip, workbenchForSuite } from './workbench';

describe('Toolbox bridge and container in VS Code (issue 13)', { skip: uiTestsSkip }, () => {
  const { wb, page } = workbenchForSuite('bridge-');

  it('names the host after the container in the prompt, and sets SHELL', { timeout: LONG }, async () =>
    wb.scenario('prompt', async () => {
      await wb.runCommand('Toolbox: Open Toolbox Shell');
      await page.locator('.terminal-wrapper.active .xterm').filter({ visible: true }).first().waitFor({ timeout: LONG });
      // The patterns skip the typed command itself (it shows $(hostname) and $SHELL literally).
      const seen = await wb.ask('echo "HOST=[$(hostname)] SHELL=[$SHELL]"', /(HOST=\[[^\]$]*\] SHELL=\[[^\]$]*\])/);
      const host = /HOST=\[([^\]]*)\]/.exec(seen)?.[1] ?? '';
      assert.match(host, new RegExp(`^${prefix}-ws-bridge-[0-9a-f]{8}$`), seen);
      assert.match(seen, /SHELL=\[\/bin\/zsh\]/);
      // zsh's default prompt (%m%#) is the host name: the container's name, not its id.
      assert.match(await wb.terminalText(), new RegExp(`^${host}[%#] `, 'm'));
      await wb.shot('prompt-host-name');
    })(),
  );

  it('opens `code brand-new.txt` as a new, unsaved editor and writes nothing', { timeout: 120_000 }, async () =>
    wb.scenario('code-new-file', async () => {
      const exit = await wb.ask('code brand-new.txt; echo "CODE_EXIT=$?"', /CODE_EXIT=(\d+)/);
      assert.equal(exit, '0', await wb.terminalText());
      const tab = page.locator('.tabs-container .tab', { hasText: 'brand-new.txt' });
      await tab.first().waitFor({ timeout: 30_000 });
      await wb.shot('code-new-file');
      assert.equal(existsSync(join(folder, 'brand-new.txt')), false, 'nothing is written until the user saves');
    })(),
  );

  it(
    "waits for VS Code's question before xdg-open returns, and Cancel exits 77 with 'cancelled in VS Code'",
    { timeout: 120_000 },
    async () =>
      wb.scenario('xdg-open-cancel', async () => {
        // ask() clicks into the terminal first: the new editor took the focus.
        await wb.ask('xdg-open https://example.com/issue-13; echo "OPEN_EXIT=$?"', /(Waiting for confirmation in VS Code…)/);
        const dialog = page.locator('.monaco-dialog-box');
        await dialog.waitFor({ timeout: 30_000 });
        await wb.shot('xdg-open-waiting');
        assert.match(await wb.terminalText(), /Waiting for confirmation in VS Code…/);
        assert.doesNotMatch(await wb.terminalText(), /OPEN_EXIT=\d/, 'xdg-open returned while VS Code was still asking');
        await dialog.locator('.monaco-button', { hasText: /^Cancel$/ }).click();
        const deadline = Date.now() + 30_000;
        let text = await wb.terminalText();
        while (!/OPEN_EXIT=\d+/.test(text) && Date.now() < deadline) {
          await page.waitForTimeout(200);
          text = await wb.terminalText();
        }
        await wb.shot('xdg-open-cancelled');
        assert.match(text, /xdg-open: cancelled in VS Code; the URL was not opened: https:\/\/example\.com\/issue-13/);
        assert.match(text, /OPEN_EXIT=77/);
      })(),
  );
});
