/**
 * Issue 26, items 10 and 12 in a real VS Code (code-server through Chromium) against the real
 * Docker engine, at the side bar's default width:
 * - 10: a typo key in .toolbox.yaml (`peer_mesaging`) is said once when a shell opens, with Open
 *   .toolbox.yaml; a second open says nothing; the editor's quick fix (Ctrl+.) writes the key it meant.
 * - 12: this window's container is at the top of Workspaces, every other toolbox container under one
 *   collapsed "Other toolbox containers (N)" group; the terminal tabs read the folder's name, uncut.
 * Screenshots land in test-output/e2e/ (polish-NN-*.png).
 */
import assert from 'node:assert/strict';
import { existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { basename, join } from 'node:path';
import { after, describe, it } from 'node:test';
import type Dockerode from 'dockerode';
import { folder, LONG, prefix, uiTestsSkip, workbenchForSuite } from './workbench';

const NOTICE = /peer_mesaging.*not a Toolbox setting|not a Toolbox setting.*peer_mesaging/;

describe('Toolbox polish at the default width (issue 26, items 10 and 12)', { skip: uiTestsSkip }, () => {
  let engine: Dockerode;
  const folderName = basename(folder);
  // Another folder's toolbox container on the same engine (as another window or the CLI makes).
  const otherName = `${prefix}-other-project-0123abcd`;
  const { wb, page } = workbenchForSuite('polish-', {
    defaultWidth: true,
    beforeOpen: async () => {
      writeFileSync(join(folder, '.toolbox.yaml'), '# ui test workspace\npeer_mesaging: false\n');
      const { docker } = await import('../support/docker');
      engine = docker();
      const other = await engine.createContainer({
        name: otherName,
        Image: 'debian:bookworm-slim',
        Cmd: ['sleep', 'infinity'],
        Env: ['TOOLBOX_HOST_WORKSPACE=/tmp/other-project'],
      });
      await other.start();
    },
  });

  after(async () => {
    await engine
      ?.getContainer(otherName)
      .remove({ force: true })
      .catch(() => undefined);
  });

  const toasts = () => page.locator('.notification-toast', { hasText: NOTICE });
  /** Whether an element's text is cut (it is wider than the room it has). */
  const cut = (selector: string) =>
    page
      .locator(selector)
      .evaluateAll((els: { scrollWidth: number; clientWidth: number; textContent: string | null }[]) =>
        els.filter((e) => e.scrollWidth > e.clientWidth + 1).map((e) => (e.textContent ?? '').trim()),
      ) as Promise<string[]>;

  it('says an unknown key once when a shell opens, with the key it meant and Open .toolbox.yaml', { timeout: LONG }, async () =>
    wb.scenario('unknown-key-notice', async () => {
      await wb.runCommand('Toolbox: Open Toolbox Shell');
      const toast = toasts().first();
      await toast.waitFor({ timeout: LONG });
      const text = ((await toast.innerText()) as string).replace(/\s+/g, ' ');
      assert.match(text, /“peer_mesaging” \(\.toolbox\.yaml line 2; did you mean peer_messaging\?\)/, text);
      await page.locator('.terminal-wrapper.active .xterm').filter({ visible: true }).first().waitFor({ timeout: LONG });
      await wb.shot('unknown-key-notice');
      await toast.locator('.monaco-button', { hasText: 'Open .toolbox.yaml' }).click();
      await page.locator('.tab.active', { hasText: '.toolbox.yaml' }).waitFor({ timeout: 30_000 });
      assert.equal(await toasts().count(), 0);

      // A second shell of the same folder, the file unchanged: nothing more is said.
      await wb.runCommand('Toolbox: Open Toolbox Shell');
      await page.locator('.terminal-tabs-entry').nth(1).waitFor({ timeout: LONG });
      await page.waitForTimeout(3000);
      assert.equal(await toasts().count(), 0, 'the same file content is said once');
    })(),
  );

  it('names the terminals after the folder, without a "Toolbox:" prefix', { timeout: 120_000 }, async () =>
    wb.scenario('terminal-tabs', async () => {
      const entries = page.locator('.terminal-tabs-entry');
      await entries.nth(1).waitFor({ timeout: 30_000 });
      const names = ((await entries.allInnerTexts()) as string[]).map((t) => t.trim());
      await wb.shot('terminal-tabs');
      assert.equal(names.length, 2, names.join(' | '));
      assert.equal(names[0], folderName, names.join(' | '));
      assert.ok(!names.some((n) => n.startsWith('Toolbox:')), `no "Toolbox:" prefix: ${names.join(' | ')}`);
    })(),
  );

  it("keeps the bridge's loopback port out of the Ports view (issue 26, item 8)", { timeout: 120_000 }, async () =>
    wb.scenario('ports-view', async () => {
      const stateRoot = join(homedir(), '.toolbox/toolbox/vscode');
      const ports = readdirSync(stateRoot)
        .map((d) => join(stateRoot, d, 'port'))
        .filter((f) => existsSync(f))
        .map((f) => readFileSync(f, 'utf8').trim());
      assert.ok(ports.length > 0, 'the bridge wrote its port');
      await page
        .locator('.panel .composite-bar .action-item', { hasText: /^PORTS/i })
        .first()
        .click();
      await page.waitForTimeout(5000); // auto-forwarding polls the host's listeners
      await wb.shot('ports-view');
      const rows = ((await page.locator('.panel .monaco-list-row, .panel .monaco-table-tr').allInnerTexts()) as string[]).join('\n');
      for (const port of ports) assert.doesNotMatch(rows, new RegExp(`\\b${port}\\b`), `the bridge's port ${port} is not listed: ${rows}`);
      await page
        .locator('.panel .composite-bar .action-item', { hasText: /^TERMINAL/i })
        .first()
        .click();
    })(),
  );

  it("lists this window's container first and the other toolbox containers in one collapsed group", { timeout: 120_000 }, async () =>
    wb.scenario('workspaces-grouped', async () => {
      await wb.openToolboxView();
      const pane = page.locator('.pane', { has: page.locator('.pane-header', { hasText: 'Workspaces' }) });
      const rows = pane.locator('.monaco-list-row');
      const group = rows.filter({ hasText: 'Other toolbox containers (1)' }).first();
      await group.waitFor({ timeout: 60_000 });
      const ours = rows.filter({ hasText: new RegExp(`^${prefix}-${folderName}-[0-9a-f]{8}`) }).first();
      await ours.waitFor({ timeout: 60_000 });
      assert.equal(await group.getAttribute('aria-expanded'), 'false', 'the group starts collapsed');
      assert.equal(await rows.filter({ hasText: otherName }).count(), 0, 'the other container is inside the collapsed group');
      const labels = ((await rows.allInnerTexts()) as string[]).map((t) => t.split('\n')[0]!.trim());
      assert.ok(
        labels.findIndex((l) => l.startsWith(`${prefix}-${folderName}-`)) <
          labels.findIndex((l) => l.startsWith('Other toolbox containers')),
        `this window's container comes first: ${labels.join(' | ')}`,
      );
      await wb.shot('workspaces-grouped');
      assert.deepEqual(
        await cut(`.pane-body .monaco-list-row[aria-label^="Other toolbox containers"] .label-name`),
        [],
        'the group row is uncut',
      );
      await group.click();
      await rows.filter({ hasText: otherName }).first().waitFor({ timeout: 30_000 });
      await wb.shot('workspaces-others-expanded');
      assert.equal(await group.getAttribute('aria-expanded'), 'true');
    })(),
  );

  it('offers the key it meant as a quick fix (Ctrl+.) that rewrites the key', { timeout: 120_000 }, async () =>
    wb.scenario('quick-fix', async () => {
      await page.locator('.tab', { hasText: '.toolbox.yaml' }).first().click();
      const editor = page.locator('.editor-group-container.active .monaco-editor').first();
      const line = editor.locator('.view-line', { hasText: 'peer_mesaging' }).first();
      await line.waitFor({ timeout: 30_000 });
      // The diagnostic's squiggle first: the quick fix belongs to it.
      await editor.locator('.squiggly-warning').first().waitFor({ timeout: 60_000 });
      await line.click({ position: { x: 20, y: 5 } });
      await page.keyboard.press('Control+.');
      const fix = page.locator('.action-widget .monaco-list-row', { hasText: 'Change to peer_messaging' }).first();
      await fix.waitFor({ timeout: 30_000 });
      await wb.shot('quick-fix-offered');
      await page.keyboard.press('Enter'); // the preferred fix is the focused row
      await editor.locator('.view-line', { hasText: 'peer_messaging: false' }).first().waitFor({ timeout: 30_000 });
      await page.keyboard.press('Control+S');
      for (
        const end = Date.now() + 15_000;
        !readFileSync(join(folder, '.toolbox.yaml'), 'utf8').includes('peer_messaging') && Date.now() < end;
      ) {
        await page.waitForTimeout(200);
      }
      assert.equal(readFileSync(join(folder, '.toolbox.yaml'), 'utf8'), '# ui test workspace\npeer_messaging: false\n');
      await editor.locator('.squiggly-warning').first().waitFor({ state: 'detached', timeout: 30_000 });
      await wb.shot('quick-fix-applied');
    })(),
  );
});
