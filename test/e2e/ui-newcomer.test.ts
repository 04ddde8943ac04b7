/**
 * Issue 13, "The first ten minutes", items 1, 4, 5 and 6, as a newcomer meets them in a real VS
 * Code (code-server through Chromium) against the real Docker engine: the palette runs the
 * command whose title was typed, a destructive confirmation keeps things on Enter, drift reads
 * as a sentence with short buttons, a per-run container is not drift, and the Peer Messaging view
 * says where the folder's setting comes from. Runs on its own folder, ws-newcomer.
 */
import assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { folder, LONG, prefix, uiTestsSkip, workbenchForSuite } from './workbench';

describe('Toolbox for a newcomer (issue 13)', { skip: uiTestsSkip }, () => {
  const { wb, page } = workbenchForSuite('newcomer-');
  const shot = (name: string) => wb.shot(name);
  const scenario = (name: string, body: () => Promise<void>) => async () => wb.scenario(name, body)();
  const runCommand = (title: string) => wb.runCommand(title);
  const ours = new RegExp(`^${prefix}-ws-newcomer-[0-9a-f]{8}$`);

  /** This folder's running containers, by name. */
  const running = async (): Promise<string[]> => {
    const { docker } = await import('../support/docker');
    const list = await docker().listContainers({ filters: { name: [`${prefix}-ws-newcomer-`] } });
    return list
      .flatMap((c) => c.Names.map((n) => n.slice(1)))
      .filter((n) => ours.test(n))
      .sort();
  };
  const labelOf = async (name: string) => {
    const { docker } = await import('../support/docker');
    return (await docker().getContainer(name).inspect()).Config.Labels?.['dev.toolbox.peer-run'];
  };
  const activeTerminal = () => page.locator('.terminal-wrapper.active .xterm').filter({ visible: true }).first();
  const dialog = () => page.locator('.monaco-dialog-box');
  /** The button Enter presses in a modal: the first one that is not secondary. */
  const defaultButton = async () =>
    ((await dialog().locator('.dialog-buttons .monaco-button:not(.secondary)').first().innerText()) as string).trim();
  const statusItem = () => page.locator('.statusbar-item', { hasText: 'drifted' });
  const treeRow = (text: string | RegExp) => page.locator('.pane-body .monaco-list-row').filter({ hasText: text }).first();

  it(
    'item 1: typing "Toolbox: Stop Container" lists Stop Container… first, not the command that stops every container',
    scenario('palette-stop', async () => {
      const ranked = await wb.paletteLabels('Toolbox: Stop Container', 'palette-stop-container');
      assert.equal(ranked[0], 'Toolbox: Stop Container…', `the palette lists: ${ranked.join(' | ')}`);
      assert.ok(ranked.includes('Toolbox: Stop Every Container…'), `Stop Every Container… is listed after it: ${ranked.join(' | ')}`);
    }),
  );

  it(
    'item 1: Stop Container… asks first, and Enter (the default button) keeps the container running',
    { timeout: LONG },
    scenario('stop-confirm', async () => {
      await runCommand('Toolbox: Open Toolbox Shell');
      await activeTerminal().waitFor({ timeout: LONG });
      assert.equal(await wb.ask('echo "UP=$((20+22))"', /UP=(\d+)/), '42');
      const before = await running();
      assert.equal(before.length, 1, `one container for the folder: ${before.join(', ')}`);
      await runCommand('Toolbox: Stop Container…');
      const pick = page.locator('.quick-input-list .monaco-list-row', { hasText: before[0]! });
      await pick.waitFor({ timeout: 30_000 });
      await pick.click();
      await dialog().waitFor({ timeout: 15_000 });
      const text = (await dialog().innerText()) as string;
      // One shell is attached (this test's terminal): the dialog names it (item 8).
      assert.match(text, new RegExp(`Stop ${before[0]}\\? A shell is attached to it\\.`));
      assert.match(text, /• ws-newcomer\n/);
      assert.equal(await defaultButton(), 'Keep Running', 'Enter keeps it running');
      await shot('stop-container-confirm');
      await page.keyboard.press('Enter');
      await dialog().waitFor({ state: 'detached', timeout: 15_000 });
      await page.waitForTimeout(3000);
      assert.deepEqual(await running(), before, 'Enter stopped nothing');
    }),
  );

  it(
    "item 6: the Peer Messaging view shows this folder's setting and its source; Toggle asks where to write and says where it wrote",
    { timeout: LONG },
    scenario('peer-setting', async () => {
      await wb.openToolboxView();
      const row = treeRow(/^This folder: on/);
      await row.waitFor({ timeout: 30_000 });
      assert.match((await row.innerText()) as string, /default/);
      await row.hover();
      await shot('peer-setting-default');

      const file = join(folder, '.toolbox.yaml');
      const settings = join(folder, '.vscode', 'settings.json');
      await page.mouse.move(700, 400); // no tooltip over the quick pick's title
      await runCommand('Toolbox: Toggle Peer Messaging for This Folder…');
      const options = page.locator('.quick-input-list .monaco-list-row');
      await options.nth(1).waitFor({ timeout: 15_000 });
      const texts = (await options.allInnerTexts()) as string[];
      assert.match(texts[0] ?? '', /\.vscode\/settings\.json[\s\S]*VS Code only/);
      assert.match(texts[1] ?? '', /\.toolbox\.yaml[\s\S]*VS Code and the toolbox CLI[\s\S]*peer_messaging: false/);
      await shot('peer-toggle-where');
      await options.filter({ hasText: '.toolbox.yaml' }).first().click();
      const toast = page.locator('.notification-toast', { hasText: 'Peer messaging is now off for this folder' });
      await toast.waitFor({ timeout: 15_000 });
      assert.match((await toast.innerText()) as string, /written to \.toolbox\.yaml/);
      const yaml = readFileSync(file, 'utf8');
      assert.match(yaml, /^# ui test workspace\n/, 'the file keeps its comment');
      assert.match(yaml, /\npeer_messaging: false\n$/);
      assert.equal(existsSync(settings), false, 'nothing was written into .vscode/settings.json');
      await treeRow(/^This folder: off/).waitFor({ timeout: 30_000 });
      assert.match((await treeRow(/^This folder: off/).innerText()) as string, /from \.toolbox\.yaml/);
      await shot('peer-setting-from-toolbox-yaml');
    }),
  );

  it(
    'item 4: the drift warning is a sentence with short buttons, and its details say which setting and what a restart does',
    { timeout: LONG },
    scenario('drift-text', async () => {
      const [name] = await running();
      assert.ok(name);
      const item = statusItem();
      await item.waitFor({ timeout: 30_000 });
      await runCommand('Notifications: Clear All Notifications');
      await item.click();
      const toast = page.locator('.notification-toast', { hasText: 'still has peer messaging on' });
      await toast.waitFor({ timeout: 15_000 });
      const message = ((await toast.locator('.notification-list-item-message').innerText()) as string).trim();
      assert.equal(
        message,
        `The container ${name} still has peer messaging on; this folder is now set to off. Restart it? Its open shells will close.`,
      );
      const buttons = toast.locator('.monaco-button');
      assert.deepEqual(
        ((await buttons.allInnerTexts()) as string[]).map((b) => b.trim()),
        ['Restart', 'Details…', 'Dismiss'],
      );
      for (const b of await buttons.all()) {
        const fits = (await b.evaluate((el: { scrollWidth: number; clientWidth: number }) => el.scrollWidth <= el.clientWidth)) as boolean;
        assert.ok(fits, `the button "${(await b.innerText()) as string}" is not cut off`);
      }
      await shot('drift-notification');

      await toast.locator('.monaco-button', { hasText: 'Details…' }).click();
      await dialog().waitFor({ timeout: 15_000 });
      const detail = (await dialog().innerText()) as string;
      assert.match(detail, /This folder's peer messaging is off \(from \.toolbox\.yaml\)\./);
      assert.match(detail, /It runs in the shared PID namespace of the peer anchor/);
      assert.match(detail, /Restart stops .*which closes its open shells/);
      assert.equal(await defaultButton(), 'Keep Running');
      await shot('drift-details');
      await page.keyboard.press('Enter');
      await dialog().waitFor({ state: 'detached', timeout: 15_000 });
      await page.waitForTimeout(2000);
      assert.deepEqual(await running(), [name], 'Enter on the details kept the container');

      // Restart from the warning: the container is replaced by one with peer messaging off.
      await item.click();
      await toast.locator('.monaco-button', { hasText: /^Restart$/ }).click();
      await item.waitFor({ state: 'detached', timeout: LONG });
      // The old container goes first, then the new shell opens: wait for the new container.
      let after = await running();
      for (const end = Date.now() + LONG; Date.now() < end && (after.length !== 1 || after[0] === name); after = await running()) {
        await page.waitForTimeout(500);
      }
      await activeTerminal().waitFor({ timeout: LONG });
      assert.equal(after.length, 1, `one container again: ${after.join(', ')}`);
      assert.notEqual(after[0], name, 'peer messaging is part of the name, so it is a new container');
      await shot('drift-restarted');
    }),
  );

  it(
    'item 5: a shell opened with peer messaging for this run is not drift, and the tree says it is per run',
    { timeout: LONG },
    scenario('per-run', async () => {
      const [solo] = await running();
      await runCommand('Toolbox: Open Toolbox Shell with Peer Messaging (this run)');
      let both = await running();
      for (const end = Date.now() + LONG; Date.now() < end && both.length < 2; both = await running()) await page.waitForTimeout(500);
      assert.equal(both.length, 2, `the per-run container next to the folder's: ${both.join(', ')}`);
      const perRun = both.find((n) => n !== solo)!;
      assert.equal(await labelOf(perRun), 'on', 'the container records what its open asked for');
      await wb.openToolboxView();
      const row = treeRow(perRun);
      await row.waitFor({ timeout: 30_000 });
      for (const end = Date.now() + 30_000; Date.now() < end && !/\(this run\)/.test((await row.innerText()) as string);) {
        await page.waitForTimeout(500);
      }
      assert.match((await row.innerText()) as string, /peer on \(this run\)/);
      // The folder is set to off, yet nothing is drifted: give the refresh time to say otherwise.
      await page.waitForTimeout(5000);
      assert.equal(await statusItem().count(), 0, 'no drift warning for a per-run container');
      assert.doesNotMatch((await row.innerText()) as string, /drifted/);
      await row.hover();
      await shot('per-run-not-drift');
    }),
  );

  it(
    'item 1: End Shell… on a shell in the tree asks first, and Enter (the default button) keeps the shell',
    { timeout: LONG },
    scenario('end-shell', async () => {
      await wb.openToolboxView();
      // The held shell of this window's terminal: its row shows the session's state (ui/views/treeItems/ agentRowItem).
      const shellRow = page.locator('.pane-body .monaco-list-row', { hasText: /^shell\s*(idle|working|needs you) · / }).first();
      await shellRow.waitFor({ timeout: 30_000 });
      const before = await running();
      await shellRow.hover();
      await shellRow.locator('.action-label[aria-label="End Shell…"]').click();
      await dialog().waitFor({ timeout: 15_000 });
      assert.match((await dialog().innerText()) as string, /End the shell/);
      assert.equal(await defaultButton(), 'Keep Shell', 'Enter keeps the shell');
      await shot('end-shell-confirm');
      await page.keyboard.press('Enter');
      await dialog().waitFor({ state: 'detached', timeout: 15_000 });
      await page.waitForTimeout(3000);
      assert.deepEqual(await running(), before, 'Enter ended nothing');
      await shellRow.waitFor({ timeout: 5_000 });
    }),
  );
});
