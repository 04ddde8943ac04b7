/**
 * Issue 15, item 12 in a real VS Code (code-server through Chromium) against the real engine:
 * "Open Toolbox Shell with Ports…" checks upstream's -p syntax as the user types, opens the
 * folder's container publishing the port on 127.0.0.1, a python http.server started in its shell
 * is listed under the container in the Workspaces view, and Open in Browser on that row opens
 * the port's address (openExternal: in code-server, a new browser tab).
 * Screenshots land in test-output/e2e/ (ports-NN-*.png).
 */
import assert from 'node:assert/strict';
import { before, describe, it } from 'node:test';
import { LONG, prefix, uiTestsSkip, workbenchForSuite } from './workbench';
import { freePort } from '../support/ports';

describe('Published ports in VS Code (issue 15, item 12)', { skip: uiTestsSkip }, () => {
  const { wb, page } = workbenchForSuite('ports-');
  let hostPort: number;

  before(async () => {
    hostPort = await freePort();
  });

  it('checks the ports as they are typed, then opens the shell publishing them', { timeout: LONG }, async () =>
    wb.scenario('open-with-ports', async () => {
      await wb.runCommand('Toolbox: Open Toolbox Shell with Ports…');
      const input = page.locator('.quick-input-widget input');
      await input.waitFor({ state: 'visible' });
      const message = page.locator('.quick-input-widget .quick-input-message');

      await input.fill('8080:abc');
      await message.filter({ hasText: 'Invalid --publish' }).waitFor({ timeout: 10_000 });
      const refused = ((await message.innerText()) as string).replace(/\s+/g, ' ');
      assert.match(
        refused,
        /Invalid --publish "8080:abc": invalid containerPort: abc\. Write a port as 8080, 8080:80 or 127\.0\.0\.1:8080:80/,
      );
      await wb.shot('refused-spec');

      await input.fill(`${hostPort}:8000`);
      await message.filter({ hasText: 'Publishes' }).waitFor({ timeout: 10_000 });
      assert.match(
        ((await message.innerText()) as string).replace(/\s+/g, ' '),
        new RegExp(`Publishes 127\\.0\\.0\\.1:${hostPort} → 8000/tcp\\.`),
      );
      await wb.shot('accepted-spec');
      await page.keyboard.press('Enter');

      await page.locator('.terminal-wrapper.active .xterm').filter({ visible: true }).first().waitFor({ timeout: LONG });
      await wb.ask('python3 -m http.server 8000 --bind 0.0.0.0 --directory /etc', /(Serving HTTP on 0\.0\.0\.0 port 8000)/);

      const { docker } = await import('../support/docker');
      const ours = await docker().listContainers({ filters: { name: [`${prefix}-ws-ports-`] } });
      assert.equal(ours.length, 1, 'one container for this folder');
      assert.deepEqual(
        ours[0]!.Ports.filter((p) => p.PrivatePort === 8000).map((p) => [p.IP, p.PublicPort, p.Type]),
        [['127.0.0.1', hostPort, 'tcp']],
        'published on loopback only',
      );
    })(),
  );

  it('lists the port under its container, and Open in Browser opens it', { timeout: 180_000 }, async () =>
    wb.scenario('port-row', async () => {
      await wb.openToolboxView();
      const label = `8000 → 127.0.0.1:${hostPort}`;
      const row = page.locator('.monaco-list-row', { hasText: label }).first();
      await row.waitFor({ timeout: 60_000 });
      assert.match((await row.innerText()) as string, /published port/);
      await row.hover();
      await wb.shot('port-row');

      const action = row.locator('.action-label[aria-label="Open in Browser"]');
      await action.waitFor({ state: 'visible', timeout: 10_000 });
      const opened = page.context().waitForEvent('page', { timeout: 30_000 });
      await action.click();
      const tab = await opened;
      await tab.waitForLoadState('domcontentloaded', { timeout: 30_000 }).catch(() => undefined);
      const url = tab.url() as string;
      // code-server maps a localhost address through asExternalUri to its own port proxy; desktop VS Code opens it as is.
      assert.ok(url.includes(`127.0.0.1:${hostPort}`) || url.includes(`/proxy/${hostPort}`), url);
      const body = ((await tab.locator('body').innerText({ timeout: 30_000 })) as string).replace(/\s+/g, ' ');
      console.log(`  Open in Browser opened ${url}: ${body.slice(0, 120)}`);
      await tab.screenshot({ path: `${process.env.E2E_SHOTS ?? 'test-output/e2e'}/ports-browser-tab.png` });
      assert.match(body, /Directory listing for \//, 'the tab shows what the server in the container serves');
      await tab.close();
      await wb.shot('after-open-in-browser');
    })(),
  );

  it('asking the running container for a port it does not publish opens the shell and says how to get it', { timeout: 180_000 }, async () =>
    wb.scenario('missing-port', async () => {
      const other = await freePort();
      await wb.runCommand('Toolbox: Open Toolbox Shell with Ports…');
      const input = page.locator('.quick-input-widget input');
      await input.waitFor({ state: 'visible' });
      await input.fill(`${other}:9000`);
      await page.locator('.quick-input-widget .quick-input-message', { hasText: 'Publishes' }).waitFor({ timeout: 10_000 });
      await page.keyboard.press('Enter');
      const toast = page.locator('.notification-toast', { hasText: 'does not publish port' }).first();
      await toast.waitFor({ timeout: 120_000 });
      await wb.shot('missing-port-notice');
      const text = ((await toast.innerText()) as string).replace(/\s+/g, ' ');
      assert.match(
        text,
        new RegExp(
          `The container ${prefix}-ws-ports-[0-9a-f]{8} does not publish port 127\\.0\\.0\\.1:${other} \\(container port 9000/tcp\\) that this folder asks for\\. ` +
            'To fix it, stop the container \\(Toolbox: Stop Container…\\) and open the shell again',
        ),
        text,
      );
    })(),
  );
});
