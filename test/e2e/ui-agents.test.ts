/**
 * Issue 17 ("Know what every agent is doing") in a real VS Code (code-server through Chromium)
 * against the real Docker engine: a stand-in agent script in the container prints output, then
 * an OSC 9 notification, then waits for a reply. The tree shows its session as needs you, the
 * tab and the status bar say so, the notification appears with Focus, Focus focuses the
 * terminal, and typing a reply returns the session to working. Screenshots land in
 * test-output/e2e/ (agents-NN-*.png).
 */
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { folder, LONG, uiTestsSkip, workbenchForSuite } from './workbench';

/** What Claude Code does, minus the model: names itself in the title, works, asks through OSC 9, waits. */
const STAND_IN_AGENT = [
  '#!/bin/sh',
  "printf '\\033]0;\\342\\234\\263 Claude Code\\007'",
  "echo 'stand-in agent: working on the task'",
  'sleep 6',
  "printf '\\033]9;Claude needs your permission to use Bash\\007'",
  "printf 'Allow? [y/n] '",
  'read answer',
  'echo "stand-in agent: got $answer, working again"',
  'sleep 600',
  '',
].join('\n');

describe('Toolbox session state in VS Code (issue 17)', { skip: uiTestsSkip }, () => {
  const { wb, page } = workbenchForSuite('agents-', {
    beforeOpen: async () => {
      writeFileSync(join(folder, 'stand-in-agent.sh'), STAND_IN_AGENT, { mode: 0o755 });
    },
  });
  const treeRow = (text: RegExp) => page.locator('.pane-body .monaco-list-row').filter({ hasText: text }).first();

  it(
    'shows a session that asks as needs you (tree, tab, status bar), nudges with Focus, and a reply makes it working',
    { timeout: LONG },
    async () =>
      wb.scenario('needs-you', async () => {
        await wb.runCommand('Toolbox: Open Toolbox Shell');
        await page.locator('.terminal-wrapper.active .xterm').filter({ visible: true }).first().waitFor({ timeout: LONG });
        await wb.ask('sh ./stand-in-agent.sh', /(stand-in agent: working on the task)/);
        // The agent named itself in its title: the tree shows it working.
        await treeRow(/claude.*working/).waitFor({ timeout: 15_000 });
        await wb.shot('agent-working');
        // The user goes on in an editor: no longer looking at that terminal.
        await wb.runCommand('File: New Untitled Text File');
        await page.keyboard.type('notes while the agent works');

        const toast = page.locator('.notification-toast', { hasText: 'needs you' });
        await toast.waitFor({ timeout: 30_000 });
        const message = ((await toast.locator('.notification-list-item-message').innerText()) as string).trim();
        assert.match(message, /^Claude Code in \S+-ws-agents-[0-9a-f]{8} needs you: “Claude needs your permission to use Bash”$/);
        const row = treeRow(/claude.*needs you/);
        await row.waitFor({ timeout: 10_000 });
        assert.match((await row.innerText()) as string, /needs you · just now · “Claude needs your permission to use Bash”/);
        await page.locator('[aria-label^="1 Toolbox session needs you"]').first().waitFor({ timeout: 10_000 });
        // The tab's name says it too (its icon cannot change after creation).
        await page.locator('.part.panel', { hasText: '(needs you)' }).first().waitFor({ timeout: 10_000 });
        await wb.shot('agent-needs-you');

        await toast.locator('.monaco-button', { hasText: /^Focus$/ }).click();
        // The keyboard focus is in the terminal (xterm's input element), no longer in the editor.
        await page.waitForFunction("document.activeElement?.closest('.terminal-wrapper') != null", undefined, { timeout: 10_000 });
        // Looking at it is enough: "needs you" clears before any key (issue 26 item 4).
        await treeRow(/claude.*working/).waitFor({ timeout: 10_000 });
        await page.locator('[aria-label^="1 Toolbox session needs you"]').waitFor({ state: 'hidden', timeout: 10_000 });
        await wb.shot('focused');

        await page.keyboard.type('y');
        await page.keyboard.press('Enter');
        await treeRow(/claude.*working/).waitFor({ timeout: 10_000 });
        assert.equal(await treeRow(/needs you/).count(), 0);
        await page.locator('[aria-label^="1 Toolbox session needs you"]').waitFor({ state: 'hidden', timeout: 10_000 });
        // The row was already working (looking cleared it): the agent's answer is what proves the reply.
        await wb.waitForTerminal(/stand-in agent: got y, working again/);
        await wb.shot('agent-working-again');
      })(),
  );
});
