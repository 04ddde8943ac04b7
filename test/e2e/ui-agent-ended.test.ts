/**
 * Issue 26 items 4 and 9 in a real VS Code (code-server through Chromium) against the real Docker
 * engine: Start Claude Code runs a stand-in `claude` (first on the container's PATH, from the
 * mounted ~/.toolbox/npm-global/bin) that prints Claude's "configuration file not found … cp -f …"
 * and a connection error and exits 3 at once. The tree's row says "claude ended (exit 3)", one
 * notification says how to log in inside the container and which host folder is Claude's home
 * (never the agent's words), and its Focus Terminal button focuses the terminal. Screenshots land
 * in test-output/e2e/ (agent-ended-NN-*.png).
 */
import assert from 'node:assert/strict';
import { homedir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { installStandInAgent } from '../support/standInAgent';
import { LONG, uiTestsSkip, workbenchForSuite } from './workbench';

const STAND_IN_CLAUDE = [
  '#!/bin/sh',
  'echo "Claude configuration file not found at: $HOME/.claude.json"',
  'echo "You can manually restore it by running: cp -f $HOME/.claude/backups/x $HOME/.claude.json"',
  'echo "Unable to connect to API (ConnectionRefused)"',
  'exit 3',
  '',
].join('\n');

describe('an agent that is gone (issue 26, items 4 and 9)', { skip: uiTestsSkip }, () => {
  const { wb, page } = workbenchForSuite('agent-ended-', {
    beforeOpen: async () => {
      installStandInAgent(homedir(), 'claude', STAND_IN_CLAUDE);
    },
  });
  const treeRow = (text: RegExp) => page.locator('.pane-body .monaco-list-row').filter({ hasText: text }).first();
  // scripts/e2e.sh runs the tests with a temporary HOME: the mounts root is its ~/.toolbox.
  const claudeHome = join(homedir(), '.toolbox', '.claude');

  it(
    'Start Claude Code whose agent exits 3 at once: the row says ended (exit 3), one notification says how to log in, Focus Terminal focuses it',
    { timeout: LONG },
    async () =>
      wb.scenario('quick-exit', async () => {
        await wb.runCommand('Toolbox: Start Claude Code');
        const toast = page.locator('.notification-toast', { hasText: 'exited with status 3' });
        await toast.waitFor({ timeout: LONG });
        const message = ((await toast.locator('.notification-list-item-message').innerText()) as string).trim();
        assert.match(message, /^Claude Code in \S+-ws-agent-ended-[0-9a-f]{8} exited with status 3, \d+ s after it started\. /);
        assert.match(message, /in its terminal, run claude, then type \/login\./);
        assert.ok(message.includes(`Its home in the container, /home/toolbox/.claude, is ${claudeHome} on this computer`), message);
        assert.doesNotMatch(message, /cp -f|configuration file|Unable to connect/);
        await wb.openToolboxView();
        await treeRow(/claude.*ended \(exit 3\)/).waitFor({ timeout: 15_000 });
        await wb.waitForTerminal(/Unable to connect to API/);
        await wb.shot('agent-ended');

        // The user goes to an editor; the button brings the terminal back with the keyboard in it.
        await wb.runCommand('File: New Untitled Text File');
        await toast.locator('.monaco-button', { hasText: /^Focus Terminal$/ }).click();
        await page.waitForFunction("document.activeElement?.closest('.terminal-wrapper') != null", undefined, { timeout: 10_000 });
        // Still the agent's end while the shell after it sits at its prompt.
        assert.match((await treeRow(/claude/).innerText()) as string, /ended \(exit 3\)/);
        assert.equal(await page.locator('.notification-toast', { hasText: 'exited with status' }).count(), 0, 'one notification');
        await wb.shot('focused');
      })(),
  );
});
