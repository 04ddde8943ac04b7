/**
 * The first ten minutes (issue 13, items 7–10 and the walkthrough), in a real VS Code: an engine
 * that cannot be reached says so once and offers Open Setting, the Proximo view says what proximo
 * is, the walkthrough, the first open's progress, numbered and focused terminals, the container's
 * start time, and Stop Container's confirmation, stopping row and focus. Folder: ws-firstrun.
 */
import assert from 'node:assert/strict';
import { readFileSync, writeFileSync } from 'node:fs';
import { basename, join } from 'node:path';
import { after, describe, it } from 'node:test';
import { LONG, folder, prefix, uiTestsSkip, workbenchForSuite } from './workbench';

/** The user settings file of this code-server (scripts/e2e.sh writes it). */
const settingsFile = join(process.env.E2E_USER_DATA ?? '', 'User', 'settings.json');
const original = process.env.E2E_USER_DATA ? readFileSync(settingsFile, 'utf8') : '';
/** A Docker endpoint nobody listens on. */
const NOWHERE = 'unix:///nonexistent/toolbox-firstrun/docker.sock';

function setUserSetting(key: string, value: unknown): void {
  const settings = JSON.parse(original) as Record<string, unknown>;
  if (value !== undefined) settings[key] = value;
  writeFileSync(settingsFile, JSON.stringify(settings, null, 2));
}

describe('The first ten minutes', { skip: uiTestsSkip }, () => {
  const { wb, page } = workbenchForSuite('firstrun-', {
    beforeOpen: async () => {
      // The window starts with toolbox.dockerHost pointing nowhere, set in User settings.
      setUserSetting('toolbox.dockerHost', NOWHERE);
    },
  });
  const shot = (name: string) => wb.shot(name);
  const scenario = (name: string, body: () => Promise<void>) => async () => wb.scenario(name, body)();
  const runCommand = (title: string) => wb.runCommand(title);
  const folderName = basename(folder);
  const pane = (title: string) => page.locator('.pane', { has: page.locator('.pane-header', { hasText: title }) });
  const row = (text: string | RegExp) => pane('Workspaces').locator('.monaco-list-row', { hasText: text }).first();
  /** A row by its label alone (a description may repeat another row's label). */
  const labelled = (label: string) =>
    pane('Workspaces')
      .locator('.monaco-list-row', { has: page.locator('.label-name', { hasText: new RegExp(`^${label}$`) }) })
      .first();
  /** The checkbox of the walkthrough's first step: VS Code gives a done step's the class "complete". */
  const engineDone = () => page.locator('.gettingStartedContainer [data-done-step-id$="#engine"]').first();
  const activeTerminal = () => page.locator('.terminal-wrapper.active .xterm').filter({ visible: true }).first();

  const running = async (pattern: string) => {
    const { docker } = await import('../support/docker');
    const list = await docker().listContainers({ filters: { name: [prefix] } });
    return list.flatMap((c) => c.Names.map((n) => n.slice(1))).filter((n) => n.startsWith(pattern));
  };

  /** Waits for the active terminal's prompt, then types a line into it without clicking it first. */
  const typeHere = async (command: string, pattern: RegExp) => {
    for (const end = Date.now() + 30_000; !/[#%$] *$/.test((await wb.terminalText()).trimEnd() + ' ') && Date.now() < end;) {
      await page.waitForTimeout(200);
    }
    await page.keyboard.type(command);
    await page.keyboard.press('Enter');
    for (const end = Date.now() + 30_000; ;) {
      const m = pattern.exec(await wb.terminalText());
      if (m) return m[1] ?? m[0];
      if (Date.now() > end) throw new Error(`The active terminal never showed ${pattern}; it shows:\n${await wb.terminalText()}`);
      await page.waitForTimeout(200);
    }
  };

  after(async () => {
    if (process.env.E2E_USER_DATA) writeFileSync(settingsFile, original);
  });

  it(
    'says once, at the top, that Docker is not reachable, and offers Open Setting in the tree and the notification',
    { timeout: LONG },
    scenario('engine-error', async () => {
      const error = row(/Docker is not reachable/);
      await error.waitFor({ timeout: 60_000 });
      assert.ok(((await error.innerText()) as string).includes(NOWHERE), 'the User setting is applied in this window');
      await labelled('Open Setting').waitFor();
      await labelled('Retry').waitFor();
      const said = await page.locator('.pane-body .monaco-list-row', { hasText: 'Docker is not reachable' }).count();
      assert.equal(said, 1, 'the error is said once, not once per section');
      await pane('Peer Messaging').getByText('Peer messaging state appears once Docker answers.').waitFor({ timeout: 15_000 });
      await shot('engine-error-once');

      // The same error from a command: the notification offers Open Setting too.
      await runCommand('Toolbox: Open Toolbox Shell');
      const toast = page.locator('.notification-toast', { hasText: 'Docker is not reachable' });
      await toast.waitFor({ timeout: 60_000 });
      await toast.locator('.monaco-button', { hasText: /^Open Setting$/ }).waitFor();
      await shot('engine-error-notification');
      await runCommand('Notifications: Clear All Notifications');

      // The walkthrough, opened while Docker is down: its first step is not checked yet.
      await runCommand('Welcome: Open Walkthrough...');
      const pick = page.locator('.quick-input-list .monaco-list-row', { hasText: 'Get Started with Toolbox' }).first();
      await pick.waitFor({ timeout: 30_000 });
      await pick.click();
      const walk = page.locator('.gettingStartedContainer');
      await walk.getByText('Find the Docker engine').first().waitFor({ timeout: 30_000 });
      for (const title of ['Open your first shell', 'How agents message each other', 'Where settings live']) {
        await walk.getByText(title).first().waitFor();
      }
      assert.doesNotMatch((await engineDone().getAttribute('class')) ?? '', /\bcomplete\b/, 'not checked while Docker is down');
      await shot('walkthrough-engine-down');
    }),
  );

  it(
    "opens toolbox.dockerHost from the tree's Open Setting (the User value applies); clearing it there brings Docker back and checks the walkthrough's first step",
    { timeout: LONG },
    scenario('engine-fixed', async () => {
      await labelled('Open Setting').click();
      const settings = page.locator('.settings-editor');
      await settings.waitFor({ timeout: 30_000 });
      const field = settings.locator('.setting-item-control input').first();
      await field.waitFor({ timeout: 30_000 });
      assert.equal(await field.inputValue(), NOWHERE);
      assert.equal(
        await settings.getByText('cannot be applied in this window', { exact: false }).count(),
        0,
        'no "cannot be applied" warning',
      );
      await shot('engine-error-open-setting');
      await field.fill('');
      await page.keyboard.press('Tab');
      await pane('Workspaces').getByText('No toolbox containers yet.').waitFor({ timeout: 60_000 });
      await shot('engine-error-fixed');

      await page.locator('.tabs-container .tab', { hasText: 'Walkthrough' }).first().click();
      for (const end = Date.now() + 30_000; Date.now() < end && !/\bcomplete\b/.test((await engineDone().getAttribute('class')) ?? '');) {
        await page.waitForTimeout(500);
      }
      await shot('walkthrough-engine-found');
      assert.match((await engineDone().getAttribute('class')) ?? '', /\bcomplete\b/, 'the engine step is checked once Docker answers');
      const walk = page.locator('.gettingStartedContainer');
      await walk.getByText('How agents message each other').first().click();
      await page.waitForTimeout(1500);
      await shot('walkthrough-peer');
      // Focus back in the side bar (its title: no row, button or welcome action is under it).
      await page.locator('.part.sidebar .composite.title').first().click();
      await runCommand('View: Close All Editors');
    }),
  );

  it(
    'names the Proximo view properly and says what proximo is, with a link to its docs',
    scenario('proximo', async () => {
      const header = page.locator('.pane-header', { hasText: 'Proximo' });
      await header.waitFor({ timeout: 30_000 });
      if ((await header.getAttribute('aria-expanded')) !== 'true') await header.click();
      const body = pane('Proximo');
      await body.getByText('proximo gives the apps you run on this host HTTPS names', { exact: false }).waitFor({ timeout: 30_000 });
      await body.getByText('proximo is not installed on this host', { exact: false }).waitFor({ timeout: 30_000 });
      const link = body.getByRole('button', { name: 'Learn about proximo' });
      await link.waitFor();
      await shot('proximo-explained');

      await page.keyboard.press('F1');
      const input = page.locator('.quick-input-widget input');
      await input.waitFor({ state: 'visible' });
      await input.fill('>Focus on Proximo');
      const labels = page.locator('.quick-input-list .monaco-list-row .label-name');
      await labels.first().waitFor();
      const listed = (await labels.allInnerTexts()) as string[];
      await shot('proximo-palette');
      await page.keyboard.press('Escape');
      assert.ok(
        listed.some((l) => /Focus on Proximo View/.test(l)),
        `the palette says "Proximo": ${listed.join(' | ')}`,
      );
      if ((await header.getAttribute('aria-expanded')) === 'true') await header.click();
    }),
  );

  it(
    'shows progress from the first step of the first open, then numbers a second shell and gives it the focus',
    { timeout: LONG },
    scenario('shells', async () => {
      await runCommand('Toolbox: Open Toolbox Shell');
      const progress = page.locator('.notification-toast', { hasText: `Toolbox: ${folderName}` });
      await progress.waitFor({ timeout: 10_000 });
      await shot('first-open-progress');
      await activeTerminal().waitFor({ timeout: LONG });
      await progress.waitFor({ state: 'detached', timeout: LONG });
      await wb.ask('echo "ONE=$((0+1))"', /ONE=(\d)/);

      await runCommand('Toolbox: Open Toolbox Shell');
      const second = page.locator('.terminal-tabs-entry', { hasText: `${folderName} (2)` });
      await second.waitFor({ timeout: LONG });
      await page
        .locator('.terminal-tabs-entry', { hasText: new RegExp(`^\\s*${folderName}\\s*$`) })
        .first()
        .waitFor();
      // No click: the keys go where the focus is, which must be the new shell.
      const answer = await typeHere('echo "FOCUS=$((40+2))"', /FOCUS=(\d+)/);
      assert.equal(answer, '42');
      assert.match((await second.getAttribute('class')) ?? '', /\bis-active\b/, 'the new terminal is the active one');
      await second.hover();
      await shot('second-shell-numbered-focused');
    }),
  );

  it(
    "tells in the container's tooltip when it started",
    scenario('started', async () => {
      const container = row(new RegExp(`^${prefix}-${folderName}-[0-9a-f]{8}`));
      await container.waitFor({ timeout: 30_000 });
      await container.locator('.label-name').first().hover();
      const hover = page.locator('.monaco-hover, .workbench-hover', { hasText: 'Running since' }).first();
      await hover.waitFor({ timeout: 15_000 });
      const text = (await hover.innerText()) as string;
      assert.doesNotMatch(text, /\bUp \d+/, `no stale "Up N minutes": ${text}`);
      await shot('started-tooltip');
    }),
  );

  it(
    'asks before stopping a container with attached shells (naming them; Enter keeps it), shows it as stopping, and leaves no other row focused',
    { timeout: LONG },
    scenario('stop', async () => {
      // A second container below this folder's, whose Stop button must not get the focus.
      // A named shell is configured first (upstream's --create): the picker writes the entry, for this folder.
      await runCommand('Toolbox: Open Toolbox Shell by Name…');
      await page.locator('.quick-input-list .monaco-list-row').filter({ hasText: 'Create a new named shell' }).first().click();
      const input = page.locator('.quick-input-widget input');
      await input.waitFor({ state: 'visible' });
      await input.fill('other');
      await page.locator('.quick-input-message', { hasText: `Container ${prefix}-named-other` }).waitFor();
      await page.keyboard.press('Enter');
      await page.locator('.quick-input-widget', { hasText: 'the folder "other" works in' }).waitFor();
      await page.keyboard.press('Enter');
      const confirm = page.locator('.monaco-dialog-box');
      await confirm.waitFor({ timeout: 30_000 });
      await confirm.locator('.monaco-button', { hasText: /^Create$/ }).click();
      await confirm.waitFor({ state: 'detached', timeout: 15_000 });
      const other = row(new RegExp(`^${prefix}-named-other`));
      await other.waitFor({ timeout: LONG });
      await page.locator('.terminal-tabs-entry', { hasText: /^\s*other\s*$/ }).waitFor({ timeout: LONG });
      await runCommand('Notifications: Clear All Notifications');

      const wsPrefix = `${prefix}-${folderName}-`;
      const [name] = await running(wsPrefix);
      assert.ok(name, 'the folder container runs');
      const container = row(name);
      const dialog = page.locator('.monaco-dialog-box');
      await wb.clickRowAction(container, 'Stop Container…', dialog);
      const text = (await dialog.innerText()) as string;
      assert.ok(text.includes(`Stop ${name}? 2 shells are attached to it.`), text);
      assert.ok(text.includes(`• ${folderName}\n`) && text.includes(`• ${folderName} (2)`), `it names both terminals: ${text}`);
      await shot('stop-confirm');
      await page.keyboard.press('Enter');
      await dialog.waitFor({ state: 'detached', timeout: 15_000 });
      await page.waitForTimeout(2000);
      assert.deepEqual(await running(wsPrefix), [name], 'Enter stopped nothing');

      // Stop the first row (the named container, one shell): the folder's row moves up into its place.
      const [otherName] = await running(`${prefix}-named-other`);
      assert.ok(otherName, 'the named container runs');
      await wb.clickRowAction(other, 'Stop Container…', dialog);
      assert.ok(((await dialog.innerText()) as string).match(/^• other$/m), 'it names the shell by its container name');
      await dialog.getByRole('button', { name: 'Stop Container' }).click();
      await other.getByText('stopping…').waitFor({ timeout: 15_000 });
      assert.equal(await other.locator('.action-label[aria-label="Stop Container…"]').count(), 0, 'no Stop while stopping');
      await shot('stop-stopping');
      await row(new RegExp(`^${prefix}-named-other`)).waitFor({ state: 'detached', timeout: LONG });
      // Away from the tree: only the list's focus shows a row's actions now, not the mouse.
      await page.mouse.move(900, 300);
      await page.waitForTimeout(1000);
      assert.equal(await pane('Workspaces').locator('.monaco-list-row.focused').count(), 0, 'no row took the focus');
      assert.equal(
        await container.locator('.action-label[aria-label="Stop Container…"]').isVisible(),
        false,
        "the next container's Stop button is not shown",
      );
      assert.deepEqual(await running(wsPrefix), [name], 'only the named container was stopped');
      await shot('stop-after');
    }),
  );
});
