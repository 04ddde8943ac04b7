/**
 * Issue 31, item 3 in a real VS Code (code-server through Chromium) against the real Docker
 * engine: after a shell is open, Toolbox: Run Doctor shows its report as a read-only document
 * (engine, transports, peer objects, runtime image, proximo, protected paths, Docker endpoint,
 * egress), then "Doctor: N passed, M warnings, K failed" with Copy Report, which puts the
 * redacted report on the clipboard. Screenshots land in test-output/e2e/ (doctor-NN-*.png); the
 * report is printed for the run's log.
 */
import assert from 'node:assert/strict';
import { before, describe, it } from 'node:test';
import { LONG, prefix, uiTestsSkip, workbenchForSuite } from './workbench';

describe('Toolbox: Run Doctor and Copy Report (issue 31, item 3)', { skip: uiTestsSkip }, () => {
  const { wb, page } = workbenchForSuite('doctor-');
  let report = '';

  before(async () => {
    await page.context().grantPermissions(['clipboard-read', 'clipboard-write'], { origin: new URL(page.url()).origin });
  });

  /** The lines the active editor renders now (Monaco shows spaces as nbsp). */
  const visibleLines = async (): Promise<string[]> => {
    const lines = page.locator('.editor-group-container.active .monaco-editor .view-lines').first();
    return ((await lines.innerText()) as string).replace(/\u00a0/g, ' ').split('\n');
  };

  it('opens a shell, then shows the report as a document and the counts with Copy Report', { timeout: LONG }, async () =>
    wb.scenario('run-doctor', async () => {
      await wb.runCommand('Toolbox: Open Toolbox Shell');
      await page.locator('.terminal-wrapper.active .xterm').filter({ visible: true }).first().waitFor({ timeout: LONG });
      await wb.waitForTerminal(/([#%] *)$/m);
      await page.keyboard.press('Control+J'); // hide the panel: more of the report fits in the editor

      await wb.runCommand('Toolbox: Run Doctor');
      const toast = page.locator('.notification-toast', { hasText: /Doctor: \d+ passed/ }).first();
      await toast.waitFor({ timeout: 120_000 });
      await page.locator('.tab.active', { hasText: 'Toolbox Doctor.txt' }).waitFor({ timeout: 30_000 });
      const summary = ((await toast.locator('.notification-list-item-message').innerText()) as string).trim();
      assert.match(summary, /^Doctor: \d+ passed, \d+ warnings?, 0 failed$/, summary);
      const buttons = ((await toast.locator('.monaco-button').allInnerTexts()) as string[]).map((b) => b.trim());
      assert.deepEqual(buttons, ['Copy Report'], 'Show Log only when a check failed');
      await wb.shot('report-top');

      // The whole document: what the editor shows at the top, then at the end.
      const seen = await visibleLines();
      await page.locator('.editor-group-container.active .monaco-editor textarea').first().focus();
      await page.keyboard.press('Control+End');
      await page.waitForTimeout(500);
      await wb.shot('report-end');
      const end = await visibleLines();
      const overlap = end.findIndex((l) => l === seen[seen.length - 1]);
      const lines = overlap >= 0 ? [...seen, ...end.slice(overlap + 1)] : [...seen, ...end];
      report = lines.join('\n');
      console.log(`--- the doctor's report in VS Code ---\n${report}\n---`);

      assert.equal(lines[0], 'Toolbox Doctor');
      assert.match(report, /^Toolbox for VS Code \d+\.\d+\.\d+ · VS Code 1\.\d+\.\d+ · linux /m);
      assert.match(report, /^\[PASS\] Engine reachable$/m);
      assert.match(report, /^ +unix:\/\/\/var\/run\/docker\.sock, /m);
      assert.match(report, /^\[PASS\] Engine product$/m);
      assert.match(report, /^ +Docker \d+\.\d+\.\d+\S* \(rootful\)\.$/m);
      assert.match(report, /^\[PASS\] Engine API$/m);
      const container = new RegExp(`${prefix}-ws-doctor-[0-9a-f]{8}`).exec(report)?.[0];
      assert.ok(container, `the report names the folder's container:\n${report}`);
      assert.match(report, new RegExp(`^\\[PASS\\] Transports of ${container}$\\n +Bridge: unix socket \\(`, 'm'));
      assert.match(
        report.replace(/\n {2,}/g, ' '),
        /Sessions: holder socket \(the holder answers on its socket in the bridge run dir, from this host\)/,
      );
      assert.match(report, new RegExp(`^\\[PASS\\] Peer anchor ${prefix}-peer-anchor$`, 'm'));
      assert.match(report, new RegExp(`^\\[PASS\\] Socket volume ${prefix}-cc-socks$`, 'm'));
      assert.match(report, /^\[PASS\] Runtime image$\n +toolbox-vscode-test\/runtime:[0-9a-f]{12}, present/m);
      assert.match(report, new RegExp(`^\\[PASS\\] Protected paths in ${container}$`, 'm'));
      // code-server has no extension that runs the folder's files on its own; its built-in npm waits for a click (docs/decisions/0060).
      assert.match(report, /^\[PASS\] Extensions on this host that run the folder's files$/m);
      assert.match(report.replace(/\n {2,}/g, ' '), /Only when you ask: npm \(built in\) runs the folder's package\.json scripts/);
      assert.match(
        report,
        new RegExp(
          `^\\[PASS\\] Docker in ${container}$\\n +Its own policy endpoint \\(never the host's socket\\), served by this window\\.$`,
          'm',
        ),
      );
      assert.match(report, new RegExp(`^\\[PASS\\] Egress of ${container}$`, 'm'));
      const passes = (report.match(/^\[PASS\] /gm) ?? []).length;
      const warnings = (report.match(/^\[WARN\] /gm) ?? []).length;
      assert.equal(summary, `Doctor: ${passes} passed, ${warnings} warning${warnings === 1 ? '' : 's'}, 0 failed`);
      assert.ok(report.includes(`${summary}.`), 'the document starts with the same counts');

      // The document is read-only: typing changes nothing.
      await page.keyboard.type('x');
      assert.equal(await page.locator('.tab.active.dirty').count(), 0, 'the report cannot be edited');
    })(),
  );

  it('Copy Report puts the redacted report on the clipboard', { timeout: 120_000 }, async () =>
    wb.scenario('copy-report', async () => {
      const toast = page.locator('.notification-toast', { hasText: /Doctor: \d+ passed/ }).first();
      await toast.locator('.monaco-button', { hasText: /^Copy Report$/ }).click();
      await page
        .locator('.notification-toast', { hasText: 'The doctor report is on the clipboard, redacted' })
        .first()
        .waitFor({ timeout: 30_000 });
      await wb.shot('copied');
      const copied = (await page.evaluate('navigator.clipboard.readText()')) as string;
      assert.match(copied, /^Toolbox Doctor\n/);
      assert.match(copied, /^\[PASS\] Engine reachable$/m);
      assert.ok(!copied.includes(process.env.HOME ?? '/nonexistent-home'), 'no home path in the copy');
      assert.doesNotMatch(copied, /[0-9a-f]{16,}/, 'no long hex run (a token) in the copy');
      // The same checks as the document, line for line: only the redaction differs.
      const marks = (t: string) => t.split('\n').filter((l) => /^\[(PASS|WARN|FAIL|INFO)\] /.test(l));
      assert.deepEqual(marks(copied), marks(report));

      // Toolbox: Copy Report from the palette: the same, after its own run.
      await page.evaluate('navigator.clipboard.writeText("")');
      await wb.runCommand('Toolbox: Copy Report');
      await page
        .locator('.notification-toast', { hasText: /Doctor: \d+ passed.*The report is on the clipboard, redacted/ })
        .first()
        .waitFor({ timeout: 120_000 });
      await wb.shot('copy-report-command');
      const again = (await page.evaluate('navigator.clipboard.readText()')) as string;
      assert.deepEqual(marks(again), marks(report));
    })(),
  );
});
