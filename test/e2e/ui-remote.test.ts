/**
 * Issue 18 item 4 in a real VS Code (code-server through Chromium): the user's toolbox.dockerHost
 * points at an engine on "another machine" (a private second dockerd in a UTS namespace with its
 * own host name, TLS-verified on 127.0.0.1, test/support/second-engine.ts). The Workspaces view
 * says which machine the engine is on; Open Toolbox Shell is refused with the explanation and a
 * Select Engine… button, which lists the engines; nothing is created on the remote engine.
 * Screenshots land in test-output/e2e/ (remote-NN-*.png).
 */
import assert from 'node:assert/strict';
import { cpSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { startSecondEngine, type SecondEngine } from '../support/second-engine';
import { freePort } from '../support/ports';
import { makeTlsFiles } from '../support/tls';
import { folder, uiTestsSkip, workbenchForSuite } from './workbench';

describe('An engine on another machine (issue 18 item 4)', { skip: uiTestsSkip }, () => {
  const { wb, page } = workbenchForSuite('remote-', {
    beforeOpen: async () => {
      dir = mkdtempSync('/tmp/tbxt-ui-remote-');
      const tls = makeTlsFiles(dir);
      port = await freePort();
      engine = await startSecondEngine({ tls: { port, ...tls.server }, hostname: farHost });
      mkdirSync(dockerDir, { recursive: true });
      for (const f of certFiles) cpSync(join(tls.clientDir, f), join(dockerDir, f));
      // In the User settings: a folder's .vscode/settings.json, which its container can write, may not pick the engine (docs/decisions/0041).
      savedSettings = readFileSync(settingsFile, 'utf8');
      const settings = JSON.parse(savedSettings) as Record<string, unknown>;
      writeFileSync(settingsFile, JSON.stringify({ ...settings, 'toolbox.dockerHost': `https://127.0.0.1:${port}` }, null, 2));
    },
  });
  let engine: SecondEngine | undefined;
  let dir: string;
  let port: number;
  const farHost = `tbxt-far-${Math.random().toString(16).slice(2, 8)}`;
  // The extension host's HOME is the run's temporary home (scripts/e2e.sh): its ~/.docker holds
  // the client certificates for an https:// endpoint, as the docker CLI's would.
  const dockerDir = join(homedir(), '.docker');
  const certFiles = ['ca.pem', 'cert.pem', 'key.pem'];
  /** The user settings file of this code-server (scripts/e2e.sh writes it). */
  const settingsFile = join(process.env.E2E_USER_DATA ?? '', 'User', 'settings.json');
  let savedSettings: string | undefined;

  after(async () => {
    if (savedSettings !== undefined) writeFileSync(settingsFile, savedSettings);
    for (const f of certFiles) rmSync(join(dockerDir, f), { force: true });
    await engine?.dispose();
    rmSync(dir, { recursive: true, force: true });
  });

  it('says in the Workspaces view which machine the engine is on', { timeout: 120_000 }, async () =>
    wb.scenario('view-description', async () => {
      const text = await wb.engineDescription('view-description');
      assert.match(
        text,
        new RegExp(
          `^Docker \\S+ on the machine ${farHost}, at https://127\\.0\\.0\\.1:${port} \\(from the toolbox\\.dockerHost setting\\)$`,
        ),
        text,
      );
    })(),
  );

  it('refuses Open Toolbox Shell with the reason and Select Engine…, and creates nothing there', { timeout: 180_000 }, async () =>
    wb.scenario('refused', async () => {
      await wb.runCommand('Toolbox: Open Toolbox Shell');
      const toast = page.locator('.notification-toast', { hasText: 'runs on another machine' });
      await toast.waitFor({ timeout: 90_000 });
      await toast.locator('.monaco-button', { hasText: /^Select Engine…$/ }).waitFor();
      await wb.shot('open-refused');
      const said = ((await toast.innerText()) as string).replace(/\s+/g, ' ');
      assert.match(said, new RegExp(`Toolbox cannot open ${folder.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')} in a container`), said);
      assert.match(said, new RegExp(`\\(${farHost}; this one is `), said);
      assert.match(said, /Remote-SSH/, said);
      assert.doesNotMatch(said, /`/, 'no literal backticks');
      assert.deepEqual(await engine!.client().listContainers({ all: true }), [], 'no container on the remote engine');

      await toast.locator('.monaco-button', { hasText: /^Select Engine…$/ }).click();
      const row = page.locator('.quick-input-list .monaco-list-row', { hasText: `127.0.0.1:${port}` });
      await row.first().waitFor({ timeout: 30_000 });
      await wb.shot('select-engine');
      await page.keyboard.press('Escape');
    })(),
  );
});
