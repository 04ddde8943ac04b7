/**
 * Issue 29 in a real VS Code (code-server through Chromium) against the real Docker engine: a
 * codex-style browser login inside a Toolbox shell completes from the host's browser
 * (docs/decisions/0053-login-callbacks-forwarded-per-login.md). A stand-in callback server
 * (test/fixtures/login-callback-server.py) listens on the container's own 127.0.0.1:1455, as
 * `codex login` does; `xdg-open` opens an authorize URL whose redirect_uri is
 * http://localhost:1455/auth/callback; the status bar then says the port is forwarded to the
 * container; Playwright's browser (the host's) goes to http://localhost:1455/auth/callback?code=x&state=y,
 * is redirected to the server's success page, and the server in the container has the query
 * (read back from the folder and through the terminal). The forward then closes by itself.
 * Folder: ws-login. Screenshots: test-output/e2e/login-NN-*.png.
 */
import assert from 'node:assert/strict';
import { copyFileSync, readFileSync } from 'node:fs';
import { basename, join } from 'node:path';
import { describe, it } from 'node:test';
import { repoRoot } from '../support/image';
import { LONG, folder, prefix, shots, uiTestsSkip, workbenchForSuite } from './workbench';

const STAND_IN = join(repoRoot(), 'test', 'fixtures', 'login-callback-server.py');
const PORT = 1455;
/** codex login's authorize URL, shortened, on a loopback host that answers nothing (no network in tests). */
const AUTHORIZE = `http://127.0.0.1:9/oauth/authorize?response_type=code&client_id=app_stand_in&redirect_uri=${encodeURIComponent(
  `http://localhost:${PORT}/auth/callback`,
)}&scope=openid&state=y`;

describe('a browser login inside the container completes from the host (issue 29)', { skip: uiTestsSkip }, () => {
  const { wb, page } = workbenchForSuite('login-', {
    beforeOpen: async () => {
      copyFileSync(STAND_IN, join(folder, 'login-server.py'));
    },
  });
  const containerRe = new RegExp(`^${prefix}-${basename(folder)}-[0-9a-f]{8}$`);
  // ui/loginForwards/loginForwardStatus.ts LoginForwardStatus: `<publisher>.<name>.toolbox.loginForwards`.
  const loginItem = () => page.locator('.part.statusbar .statusbar-item[id$=".toolbox.loginForwards"]');

  const waitForText = async (read: () => Promise<string>, pattern: RegExp, what: string, timeoutMs = 30_000) => {
    for (const end = Date.now() + timeoutMs; ;) {
      const text = await read();
      const m = pattern.exec(text);
      if (m) return m;
      if (Date.now() > end) throw new Error(`${what} never showed ${pattern}; it shows:\n${text}`);
      await page.waitForTimeout(250);
    }
  };

  it(
    "completes a codex-style loopback login: xdg-open forwards port 1455, the host browser's callback reaches the server in the container",
    { timeout: LONG + 180_000 },
    async () =>
      wb.scenario('login', async () => {
        await wb.runCommand('Toolbox: Open Toolbox Shell');
        await page.locator('.terminal-wrapper.active .xterm').filter({ visible: true }).first().waitFor({ timeout: LONG });
        // The login's callback server, on the container's loopback only, in the background.
        await wb.ask(
          `python3 login-server.py ${PORT} got.txt > server.log 2>&1 & until grep -q LISTENING server.log; do sleep 0.1; done; echo "SERVER=$((40+2))"`,
          /SERVER=42/,
        );

        // The login opens its URL the way codex does on Linux: xdg-open (the bridge's shim).
        await wb.ask(`xdg-open '${AUTHORIZE}'; echo "OPEN_EXIT=$((100+$?))"`, /(OPEN_EXIT=\d+|Waiting for confirmation)/);
        // VS Code may ask before it opens the site: Open.
        for (const end = Date.now() + 60_000; !/OPEN_EXIT=\d+/.test(await wb.terminalText());) {
          const open = page.locator('.monaco-dialog-box .monaco-button', { hasText: /^Open$/ });
          if (await open.isVisible()) await open.click();
          if (Date.now() > end) throw new Error(`xdg-open never returned:\n${await wb.terminalText()}`);
          await page.waitForTimeout(250);
        }
        assert.match(await wb.terminalText(), /OPEN_EXIT=100/, 'xdg-open exited 0');

        // The status bar says which port goes to which container.
        const item = loginItem();
        await item.waitFor({ timeout: 30_000 });
        assert.equal(((await item.innerText()) as string).trim(), `Login :${PORT}`);
        const label = (await item.getAttribute('aria-label')) as string;
        const m = new RegExp(
          `^Login callback on port ${PORT} forwarded to (\\S+) \\(127\\.0\\.0\\.1:${PORT} on this host; closes after the login, at the latest in 10 min\\)\\.$`,
        ).exec(label);
        assert.ok(m, label);
        assert.match(m[1]!, containerRe);
        await wb.hoverUntilShown(
          item,
          page.locator('.workbench-hover', { hasText: `Login callback on port ${PORT}` }).first(),
          'the tooltip',
        );
        await wb.shot('forwarded');

        // The provider sends the host's browser back to the callback: a page of the host browser.
        const host = await wb.browser.newPage({ viewport: { width: 900, height: 500 } });
        try {
          const response = await host.goto(`http://localhost:${PORT}/auth/callback?code=x&state=y`, { waitUntil: 'load', timeout: 30_000 });
          assert.equal(new URL(host.url()).pathname, '/success', 'redirected to the success page');
          assert.equal(response?.status(), 200);
          assert.equal(((await host.locator('body').innerText()) as string).trim(), 'Signed in to the stand-in. You can close this page.');
          await host.screenshot({ path: join(shots, 'login-host-browser-success.png') });
        } finally {
          await host.close();
        }

        // The server in the container got the query: in the folder, and through the terminal.
        assert.equal(readFileSync(join(folder, 'got.txt'), 'utf8'), 'code=x&state=y\n');
        await wb.ask('cat got.txt server.log; echo "GOT=$((6*7))"', /GOT=42/);
        const text = await wb.terminalText();
        assert.match(text, /^code=x&state=y$/m);
        assert.match(text, /^CALLBACK code=x&state=y$/m);
        assert.match(text, /^LOGIN DONE$/m);
        await wb.shot('container-got-the-callback');

        // The login is over: the forward closes by itself (LOGIN_FORWARD.idleAfterAnswerMs) and says so.
        await item.waitFor({ state: 'hidden', timeout: 60_000 });
        await page
          .locator('.part.statusbar', { hasText: `Login callback on port ${PORT} closed: the login callback was answered.` })
          .waitFor({ timeout: 10_000 });
        await wb.shot('forward-closed');
        await waitForText(() => wb.terminalText(), /LOGIN DONE/, 'the terminal');
      })(),
  );
});
