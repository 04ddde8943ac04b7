/**
 * Issue 30 in a real VS Code (code-server through Chromium) against the real Docker engine: a
 * folder whose egress mode is `ask` (toolbox.egressForFolder in the settings, set before the
 * window opens) gets a container with no network of its own; its connections go through this
 * window's proxy (docs/decisions/0056-egress-through-a-host-proxy.md). The test serves two HTTP
 * servers on the host's loopback (an IP-literal destination there is askable, and allowed only by
 * an explicit rule) and curls them from a Toolbox shell through the proxy:
 *
 * 1. the first port: the notification `<container> (folder <name>) wants to connect to
 *    127.0.0.1:<port>` with Allow Once, Allow for This Folder and Deny; Allow for This Folder
 *    writes `127.0.0.1:<port>` into the folder's `allow` (its mode kept) and curl gets the page;
 * 2. the same port again: the page, no new question;
 * 3. the second port: Deny, and curl prints the policy's 403 (it names the egress policy);
 * 4. the Workspaces view: the network row, the connections under it, "1 denied" on the container,
 *    and Open Connection Log's document.
 *
 * Folder: ws-egress. Screenshots: test-output/e2e/egress-NN-*.png.
 */
import assert from 'node:assert/strict';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { basename, join, resolve } from 'node:path';
import { after, describe, it } from 'node:test';
import { EGRESS } from '../../extension/src/contract/egress';
import { SETTINGS } from '../../extension/src/contract/manifest';
import { LONG, folder, prefix, uiTestsSkip, workbenchForSuite } from './workbench';

/**
 * toolbox.egressForFolder is machine-scoped: where the extension host runs remotely (as in
 * code-server) VS Code reads and writes it in the Machine settings, else in the User settings
 * (test/e2e/ui.test.ts says the same of toolbox.turnedOffForFolder). The test sets it in both and
 * puts both back after.
 */
const userData = process.env.E2E_USER_DATA ?? '';
const settingsFiles = ['Machine', 'User'].map((d) => join(userData, d, 'settings.json'));
const originals = userData ? settingsFiles.map((f) => (existsSync(f) ? readFileSync(f, 'utf8') : undefined)) : [];
const folderKey = resolve(folder || '.');

function readSettings(file: string): Record<string, unknown> {
  try {
    return JSON.parse(readFileSync(file, 'utf8')) as Record<string, unknown>;
  } catch {
    return {};
  }
}

/** The folder's entry of toolbox.egressForFolder, from whichever settings file has one. */
function folderEntry(): { mode?: string; allow?: string[] } | undefined {
  for (const file of settingsFiles) {
    const all = readSettings(file)[SETTINGS.egressForFolder] as Record<string, { mode?: string; allow?: string[] }> | undefined;
    if (all?.[folderKey] !== undefined) return all[folderKey];
  }
  return undefined;
}

/** An HTTP server on the host's loopback that answers `egress-ok <tag>` and counts its requests. */
async function serve(tag: string): Promise<{ server: Server; port: number; hits: () => number }> {
  let hits = 0;
  const server = createServer((_req, res) => {
    hits++;
    res.writeHead(200, { 'content-type': 'text/plain' });
    res.end(`egress-ok ${tag}\n`);
  });
  await new Promise<void>((done) => server.listen(0, '127.0.0.1', done));
  return { server, port: (server.address() as AddressInfo).port, hits: () => hits };
}

describe('connections asked about in VS Code (issue 30)', { skip: uiTestsSkip }, () => {
  const { wb, page } = workbenchForSuite('egress-', {
    beforeOpen: async () => {
      if (userData) {
        for (const file of settingsFiles) {
          mkdirSync(join(file, '..'), { recursive: true });
          const settings = readSettings(file);
          settings[SETTINGS.egressForFolder] = { [folderKey]: { mode: 'ask' } };
          writeFileSync(file, JSON.stringify(settings, null, 2));
        }
      }
      allowed = await serve('allowed');
      denied = await serve('denied');
    },
  });
  let allowed: Awaited<ReturnType<typeof serve>>;
  let denied: Awaited<ReturnType<typeof serve>>;
  const shot = (name: string) => wb.shot(name);
  const scenario = (name: string, body: () => Promise<void>) => async () => wb.scenario(name, body)();
  const pane = (title: string) => page.locator('.pane', { has: page.locator('.pane-header', { hasText: title }) });
  const labelled = (label: string | RegExp) =>
    pane('Workspaces')
      .locator('.monaco-list-row', { has: page.locator('.label-name', { hasText: label }) })
      .first();
  const toast = (port: number) => page.locator('.notification-toast', { hasText: `wants to connect to 127.0.0.1:${port}` }).first();
  // ui/views/statusBars.ts EgressStatusBar: `<publisher>.<name>.toolbox.egress`.
  const countItem = () => page.locator('.part.statusbar .statusbar-item[id$=".toolbox.egress"]');
  const containerRe = new RegExp(`^${prefix}-${basename(folder)}-[0-9a-f]{8}$`);

  /**
   * curl through the container's proxy: `--noproxy ''` overrides NO_PROXY (which keeps loopback
   * direct), so 127.0.0.1 names the host's loopback, as the proxy sees it. Typed at the prompt and
   * not waited for: the connection is held while VS Code asks.
   */
  const curl = async (port: number, marker: string) => {
    await wb.ask(
      `curl --noproxy '' -x http://127.0.0.1:${EGRESS.proxyPort} -sS http://127.0.0.1:${port}/; echo "${marker} rc=$?"`,
      /curl --noproxy/,
    );
  };

  /** The question's notification: its exact words and buttons; the container it names. */
  const checkNotification = async (port: number): Promise<string> => {
    const t = toast(port);
    await t.waitFor({ timeout: 60_000 });
    const message = ((await t.locator('.notification-list-item-message').innerText()) as string).trim();
    const m = /^(\S+) \(folder (\S+)\) wants to connect to (\S+)$/.exec(message);
    assert.ok(m, `the notification says who wants what: "${message}"`);
    assert.match(m[1]!, containerRe, message);
    assert.equal(m[2], basename(folder));
    assert.equal(m[3], `127.0.0.1:${port}`);
    const buttons = ((await t.locator('.monaco-button').allInnerTexts()) as string[]).map((b) => b.trim()).filter(Boolean);
    assert.deepEqual(buttons, ['Allow Once', 'Allow for This Folder', 'Deny'], `the buttons: ${buttons.join(' | ')}`);
    await countItem().waitFor({ timeout: 30_000 });
    assert.equal(await countItem().getAttribute('aria-label'), '1 connection question waiting');
    return m[1]!;
  };

  after(async () => {
    allowed?.server.close();
    denied?.server.close();
    settingsFiles.forEach((file, i) => {
      const original = originals[i];
      if (original !== undefined) writeFileSync(file, original);
      else if (userData && existsSync(file)) writeFileSync(file, '{}\n');
    });
  });

  it(
    'asks, writes Allow for This Folder into the settings, lets the next connection through unasked, and refuses after Deny',
    { timeout: LONG + 240_000 },
    scenario('egress', async () => {
      await wb.runCommand('Toolbox: Open Toolbox Shell');
      await page.locator('.terminal-wrapper.active .xterm').filter({ visible: true }).first().waitFor({ timeout: LONG });
      // No network of its own: the proxy variables point at the forwarder on the container's loopback.
      // The pattern needs the value's brackets, so the typed command itself does not match it.
      const proxy = await wb.ask('echo "PROXY=[$HTTPS_PROXY]"', /PROXY=\[(http[^\]]*)\]/);
      assert.equal(proxy, `http://127.0.0.1:${EGRESS.proxyPort}`);

      // 1. The first port: asked, Allow for This Folder.
      await curl(allowed.port, 'FIRST');
      const container = await checkNotification(allowed.port);
      await shot('question');
      assert.equal(allowed.hits(), 0, 'held while VS Code asks');
      await toast(allowed.port)
        .locator('.monaco-button', { hasText: /^Allow for This Folder$/ })
        .click();
      await wb.waitForTerminal(/egress-ok allowed\s+FIRST rc=0/);
      assert.equal(allowed.hits(), 1);
      // VS Code writes the settings file after the update resolves: read until the rule is there.
      for (const end = Date.now() + 15_000; !folderEntry()?.allow?.length && Date.now() < end;) await page.waitForTimeout(250);
      assert.deepEqual(folderEntry(), { mode: 'ask', allow: [`127.0.0.1:${allowed.port}`] }, 'the rule, and the mode kept');
      assert.ok(!existsSync(join(folder, '.vscode', 'settings.json')), "nothing is written into the folder's .vscode");
      await countItem().waitFor({ state: 'hidden', timeout: 30_000 });

      // 2. The same port again: through, without a question.
      await curl(allowed.port, 'SECOND');
      await wb.waitForTerminal(/egress-ok allowed\s+SECOND rc=0/);
      assert.equal(allowed.hits(), 2);
      assert.equal(await toast(allowed.port).isVisible(), false, 'no new question');
      assert.equal(await countItem().isVisible(), false);

      // 3. The second port: Deny; curl gets the policy's 403.
      await curl(denied.port, 'THIRD');
      await checkNotification(denied.port);
      await toast(denied.port)
        .locator('.monaco-button', { hasText: /^Deny$/ })
        .click();
      const refusal = await wb.waitForTerminal(/([^\n]*egress policy[^\n]*)/);
      assert.match(refusal, /egress policy/);
      await wb.waitForTerminal(/THIRD rc=0/);
      assert.equal(denied.hits(), 0, 'the host never saw it');
      await shot('denied');

      // 4. The Workspaces view: the container counts the denied one; its network row lists both ports.
      const containerRow = labelled(new RegExp(`^${container}$`));
      await containerRow.waitFor({ timeout: 30_000 });
      for (const end = Date.now() + 30_000; Date.now() < end;) {
        if (/1 denied/.test((await containerRow.locator('.label-description').innerText()) as string)) break;
        await page.waitForTimeout(250);
      }
      assert.match((await containerRow.locator('.label-description').innerText()) as string, /· 1 denied$/);
      if ((await containerRow.getAttribute('aria-expanded')) !== 'true') await containerRow.click();
      const network = labelled(/^Network: ask — through this window's proxy$/);
      await network.waitFor({ timeout: 30_000 });
      if ((await network.getAttribute('aria-expanded')) !== 'true') await network.click();
      await labelled(`✓ 127.0.0.1:${allowed.port}`).waitFor({ timeout: 30_000 });
      await labelled(`✗ 127.0.0.1:${denied.port}`).waitFor({ timeout: 30_000 });
      await shot('network-row');

      // Open Connection Log (the network row's inline action): one line per connection.
      await network.hover();
      await network.locator('.action-label[aria-label="Open Connection Log"]').click();
      const editor = page.locator('.editor-instance .view-lines').first();
      await editor.waitFor({ timeout: 30_000 });
      for (const end = Date.now() + 15_000; !/denied/.test((await editor.innerText()) as string) && Date.now() < end;) {
        await page.waitForTimeout(250);
      }
      const text = ((await editor.innerText()) as string).replace(/\u00a0/g, ' ');
      assert.match(text, new RegExp(`allowed +127\\.0\\.0\\.1:${allowed.port} `));
      assert.match(text, new RegExp(`denied +127\\.0\\.0\\.1:${denied.port} `));
      await shot('connection-log');
    }),
  );
});
