/**
 * Issue 18, items 1 and 3 in a real VS Code (code-server through Chromium): the Workspaces view
 * says which engine is in use and where its endpoint came from, and Toolbox: Select Engine… lists
 * the reachable engines with their version. Nothing is chosen (the User settings stay untouched).
 * Screenshots land in test-output/e2e/ (engine-NN-*.png).
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { uiTestsSkip, workbenchForSuite } from './workbench';

describe('The engine in use, and Select Engine (issue 18)', { skip: uiTestsSkip }, () => {
  const { wb, page } = workbenchForSuite('engine-');

  it('shows the engine and its source as the Workspaces view description', { timeout: 120_000 }, async () =>
    wb.scenario('view-description', async () => {
      const text = await wb.engineDescription('view-description');
      assert.match(
        text,
        /^Docker \d+\.\d+\S* at (unix|tcp|npipe):\/\/\S+ \((the platform default|from DOCKER_HOST|from the toolbox\.dockerHost setting|from Docker context \S+|the .+ socket)\)$/,
        text,
      );
    })(),
  );

  it('lists the reachable engines with their version in Select Engine', { timeout: 120_000 }, async () =>
    wb.scenario('select-engine', async () => {
      await wb.runCommand('Toolbox: Select Engine…');
      const row = page.locator('.quick-input-list .monaco-list-row', { hasText: /Docker \d+\.\d+/ });
      await row.first().waitFor({ timeout: 30_000 });
      await wb.shot('select-engine');
      const text = (await row.first().innerText()).replace(/\s+/g, ' ');
      assert.match(text, /(unix|tcp):\/\/\S+/, text);
      assert.match(text, /Docker \d+\.\d+\S* \(API 1\.\d+\)/, text);
      await page.keyboard.press('Escape');
    })(),
  );
});
