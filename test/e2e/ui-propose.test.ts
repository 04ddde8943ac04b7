/**
 * Issue 25 item 4 in a real VS Code (code-server through Chromium) against the real Docker
 * engine: the agent in the container runs `toolbox-propose` for a protected file; VS Code shows a
 * notification naming the container and the path, Review opens the diff (read-only documents),
 * and only Apply writes the host file. Screenshots land in test-output/e2e/ (propose-NN-*.png).
 */
import assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { folder, LONG, uiTestsSkip, workbenchForSuite } from './workbench';

const PROPOSED = '{"version": "2.0.0", "tasks": []}';

describe('a proposed change to a protected file in VS Code (issue 25, item 4)', { skip: uiTestsSkip }, () => {
  const { wb, page } = workbenchForSuite('propose-');

  it('shows the notification, opens the diff on Review, and writes the file only on Apply', { timeout: LONG }, async () =>
    wb.scenario('apply', async () => {
      await wb.runCommand('Toolbox: Open Toolbox Shell');
      await page.locator('.terminal-wrapper.active .xterm').filter({ visible: true }).first().waitFor({ timeout: LONG });
      const target = join(folder, '.vscode', 'tasks.json');
      const denied = await wb.ask(`echo x > .vscode/tasks.json; echo "WRITE_EXIT=$?"`, /WRITE_EXIT=(\d+)/);
      assert.notEqual(denied, '0', 'the container cannot write it itself');
      const exit = await wb.ask(
        `printf '%s\\n' '${PROPOSED}' | toolbox-propose .vscode/tasks.json; echo "PROPOSE_EXIT=$?"`,
        /PROPOSE_EXIT=(\d+)/,
      );
      assert.equal(exit, '0', await wb.terminalText());

      const toast = page.locator('.notification-toast', { hasText: 'proposes a change to .vscode/tasks.json' });
      await toast.waitFor({ timeout: 30_000 });
      const message = ((await toast.locator('.notification-list-item-message').innerText()) as string).trim();
      assert.match(message, /^The agent in \S+ proposes a change to \.vscode\/tasks\.json\.$/);
      await wb.shot('notification');
      assert.equal(existsSync(target), false, 'nothing is written before the click');

      await toast.locator('.monaco-button', { hasText: /^Review$/ }).click();
      await page.locator('.monaco-diff-editor').first().waitFor({ timeout: 30_000 });
      const tab = page.locator('.tabs-container .tab', { hasText: 'tasks.json' });
      await tab.first().waitFor({ timeout: 30_000 });
      const ask = page.locator('.notification-toast', { hasText: 'Apply the change' });
      await ask.waitFor({ timeout: 30_000 });
      await page.locator('.monaco-diff-editor .view-line', { hasText: '"tasks"' }).first().waitFor({ timeout: 30_000 });
      await wb.shot('diff');
      assert.equal(
        await page.locator('.editor-actions .action-label[aria-label*="Apply Proposed Change"]').count(),
        1,
        'Apply is an editor title action too',
      );
      assert.equal(existsSync(target), false, 'still nothing written while the diff is open');

      await ask.locator('.monaco-button', { hasText: /^Apply$/ }).click();
      await page.locator('.notification-toast', { hasText: 'Applied: .vscode/tasks.json was written.' }).waitFor({ timeout: 30_000 });
      await wb.shot('applied');
      assert.equal(readFileSync(target, 'utf8'), `${PROPOSED}\n`);
      const seen = await wb.ask('cat .vscode/tasks.json; echo "CAT_EXIT=$?"', /CAT_EXIT=(\d+)/);
      assert.equal(seen, '0');
      assert.match(await wb.terminalText(), /"tasks": \[\]/);
    })(),
  );

  it(
    'lists the protected paths, read-only, and the extensions that run the folder\'s files under "Can reach on this host" (issue 25, item 8; issue 38, item 5)',
    { timeout: 120_000 },
    async () =>
      wb.scenario('posture', async () => {
        await wb.openToolboxView();
        await page.locator('.monaco-list-row', { hasText: 'Can reach on this host' }).first().click();
        const row = page.locator('.monaco-list-row', { hasText: 'Protected paths' }).first();
        await row.waitFor({ timeout: 30_000 });
        assert.match((await row.innerText()) as string, /read-only in this container/);
        // Then what no protection covers (docs/decisions/0060): code-server has no extension that runs the folder's files on its own.
        const tools = page.locator('.monaco-list-row', { hasText: 'Extensions on this host' }).first();
        await tools.waitFor({ timeout: 30_000 });
        assert.match((await tools.innerText()) as string, /none known runs this folder's files on its own/);
        await row.hover();
        await page.waitForTimeout(1500);
        await wb.shot('posture-row');
      })(),
  );
});
