/**
 * Agent worktrees in a real VS Code (code-server through Chromium): the Worktrees view lists a
 * worktree made by hand in the CLI's layout (.worktrees/tbx-<branch>, branch.<b>.base), Compare
 * with Base opens the multi-file diff from the host, and New Agent Worktree… creates a branch,
 * its container and the agent's terminal (a stand-in agent that prints its task).
 * Screenshots land in test-output/e2e/ (worktrees-NN-*.png).
 */
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { chmodSync, mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { docker } from '../support/docker';
import { folder, LONG, uiTestsSkip, workbenchForSuite } from './workbench';

const env = {
  ...process.env,
  GIT_AUTHOR_NAME: 'Test',
  GIT_AUTHOR_EMAIL: 'test@example.com',
  GIT_COMMITTER_NAME: 'Test',
  GIT_COMMITTER_EMAIL: 'test@example.com',
};
const git = (cwd: string, ...args: string[]) =>
  execFileSync('git', args, { cwd, env, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] }).trim();

describe('Agent worktrees in VS Code (issue 16)', { skip: uiTestsSkip }, () => {
  const { wb, page } = workbenchForSuite('worktrees-', {
    beforeOpen: async () => {
      // The folder becomes a clone of a bare origin on disk, with a worktree as the CLI leaves it.
      const origin = `${folder}-origin.git`;
      git(folder, 'init', '--bare', '-b', 'main', origin);
      git(folder, 'init', '-b', 'main');
      writeFileSync(join(folder, 'README.md'), 'hello\nworld\n');
      writeFileSync(join(folder, '.gitignore'), '.env\n');
      git(folder, 'add', '.');
      git(folder, 'commit', '-m', 'initial');
      git(folder, 'remote', 'add', 'origin', origin);
      git(folder, 'push', '-u', 'origin', 'main');
      git(folder, 'remote', 'set-head', 'origin', 'main');
      const wt = join(folder, '.worktrees', 'tbx-cli-made');
      git(folder, 'worktree', 'add', '--no-track', '-b', 'cli-made', wt, 'origin/main');
      git(folder, 'config', 'branch.cli-made.base', 'main');
      writeFileSync(join(wt, 'README.md'), 'hello\nworld, from the agent\n');
      writeFileSync(join(wt, 'feature.txt'), 'a new file\n');
      git(wt, 'add', 'feature.txt');
      git(wt, 'commit', '-m', 'agent work');
      writeFileSync(join(folder, '.git', 'info', 'exclude'), '.worktrees/\n');
      // The stand-in agent, first on the image's PATH (~/.npm-global/bin from the mounts root).
      const bin = join(process.env.HOME ?? '', '.toolbox', 'npm-global', 'bin');
      mkdirSync(bin, { recursive: true });
      writeFileSync(join(bin, 'claude'), '#!/bin/sh\nprintf "STAND-IN AGENT got %s argument(s): [%s]\\n" "$#" "$1"\n');
      chmodSync(join(bin, 'claude'), 0o755);
    },
  });

  /** Runs New Agent Worktree… and answers its first question; the input then asks for the task. */
  async function newAgentWorktreeBranch(branch: string) {
    await wb.runCommand('Toolbox: New Agent Worktree…');
    const input = page.locator('.quick-input-widget input');
    await input.waitFor({ timeout: 30_000 });
    await input.fill(branch);
    await input.press('Enter');
    return input;
  }
  const worktreeRow = (label: string) => page.locator('.pane', { hasText: 'Worktrees' }).locator('.monaco-list-row', { hasText: label });

  it('lists a worktree made in the CLI layout, with its git state', { timeout: 120_000 }, async () =>
    wb.scenario('view', async () => {
      const row = worktreeRow('cli-made');
      await row.first().waitFor({ timeout: 60_000 });
      const text = (await row.first().innerText()).replace(/\s+/g, ' ');
      assert.match(text, /↑1 ↓0/, text);
      assert.match(text, /uncommitted changes/, text);
      assert.match(text, /no container/, text);
      await wb.shot('view-cli-worktree');
    })(),
  );

  it('compares it with its base in the multi-file diff editor, without a container', { timeout: 120_000 }, async () =>
    wb.scenario('compare', async () => {
      await worktreeRow('cli-made').first().click();
      const tab = page.locator('.tabs-container .tab', { hasText: 'cli-made ↔ origin/main' });
      await tab.first().waitFor({ timeout: 60_000 });
      const editor = page.locator('.multiDiffEditor, .multi-diff-editor, [class*="multiDiff"]').first();
      await editor.waitFor({ timeout: 30_000 });
      await page.getByText('feature.txt').first().waitFor({ timeout: 30_000 });
      await page.getByText('world, from the agent').first().waitFor({ timeout: 30_000 });
      // Issue 26 item 6: a modified file is one name (a rename would show its old name struck
      // through beside it), and the added one has no left side.
      const shown = ((await editor.innerText()) as string).replace(/\u00a0/g, ' ');
      assert.equal(shown.split('README.md').length - 1, 1, `README.md is shown once, not as a rename: ${shown.slice(0, 400)}`);
      assert.equal(shown.split('feature.txt').length - 1, 1, `feature.txt is shown once: ${shown.slice(0, 400)}`);
      await wb.shot('compare-with-base');
    })(),
  );

  it('creates a worktree, its container and the agent terminal from New Agent Worktree…', { timeout: LONG }, async () =>
    wb.scenario('new', async () => {
      await wb.runCommand('Toolbox: New Agent Worktree…');
      const input = page.locator('.quick-input-widget input');
      await input.waitFor({ timeout: 30_000 });
      await input.fill('bad..name');
      await page
        .locator('.quick-input-message', { hasText: /./ })
        .first()
        .waitFor({ timeout: 10_000 })
        .catch(() => undefined);
      await input.fill('task/one');
      await input.press('Enter');
      await page.locator('.quick-input-widget', { hasText: 'New Agent Worktree (2/2)' }).waitFor({ timeout: 30_000 });
      await input.fill('Say $(echo hi) and `id`; done');
      // The worktree and its container are made while the task is typed: ready before Enter.
      await page
        .getByText(/waiting for the task/)
        .first()
        .waitFor({ timeout: LONG });
      assert.match(git(folder, 'branch', '--list', 'task/one'), /task\/one/, 'the branch exists before the task is given');
      await wb.shot('new-prompt');
      await input.press('Enter');
      await page.locator('.terminal-wrapper.active .xterm').filter({ visible: true }).first().waitFor({ timeout: LONG });
      const deadline = Date.now() + LONG;
      let text = await wb.terminalText();
      while (!/STAND-IN AGENT got 1 argument/.test(text) && Date.now() < deadline) {
        await page.waitForTimeout(500);
        text = await wb.terminalText();
      }
      assert.match(text, /STAND-IN AGENT got 1 argument\(s\): \[Say \$\(echo hi\) and `id`; done\]/, text);
      const row = worktreeRow('task/one');
      await row.first().waitFor({ timeout: 60_000 });
      await row.filter({ hasText: 'running' }).first().waitFor({ timeout: 60_000 });
      await wb.shot('new-worktree-agent');
      assert.equal(git(folder, 'config', '--get', 'branch.task/one.base'), 'main');
    })(),
  );

  it('removes the worktree, its branch and its container again when the task question is escaped', { timeout: LONG }, async () =>
    wb.scenario('escape', async () => {
      const input = await newAgentWorktreeBranch('task/escaped');
      await page.locator('.quick-input-widget', { hasText: 'New Agent Worktree (2/2)' }).waitFor({ timeout: 30_000 });
      await page
        .getByText(/waiting for the task/)
        .first()
        .waitFor({ timeout: LONG });
      assert.match(git(folder, 'branch', '--list', 'task/escaped'), /task\/escaped/, 'made while the task was typed');
      await input.press('Escape');
      const deadline = Date.now() + 60_000;
      while (git(folder, 'branch', '--list', 'task/escaped') !== '' && Date.now() < deadline) await page.waitForTimeout(250);
      assert.equal(git(folder, 'branch', '--list', 'task/escaped'), '', 'the branch is gone');
      assert.ok(!git(folder, 'worktree', 'list').includes('tbx-task-escaped'), 'the worktree is gone');
      const containers = async () =>
        (await docker().listContainers({ all: true })).flatMap((c) => c.Names).filter((n) => n.includes('tbx-task-escaped'));
      while ((await containers()).length > 0 && Date.now() < deadline) await page.waitForTimeout(250);
      assert.deepEqual(await containers(), [], 'the container is gone');
      // The view follows git's files and Docker's events: the row goes without a refresh.
      await worktreeRow('task/escaped').first().waitFor({ state: 'detached', timeout: 30_000 });
      await worktreeRow('task/one').first().waitFor({ timeout: 30_000 });
      await wb.shot('escaped');
    })(),
  );

  it('refuses a branch that exists while the task is typed: the question closes, the error says what to do', { timeout: LONG }, async () =>
    wb.scenario('refused', async () => {
      await newAgentWorktreeBranch('task/one');
      const error = page.locator('.notification-toast', { hasText: 'A branch named task/one already exists' });
      await error.first().waitFor({ timeout: LONG });
      await page.locator('.quick-input-widget').waitFor({ state: 'hidden', timeout: 10_000 });
      await wb.shot('refused-while-typing');
      assert.equal(
        git(folder, 'worktree', 'list')
          .split('\n')
          .filter((l) => l.includes('tbx-task-one')).length,
        1,
        'the existing worktree is untouched',
      );
    })(),
  );

  it('Remove Agent Worktree closes its terminal, shows progress on the row and leaves no shell elsewhere', { timeout: LONG }, async () =>
    wb.scenario('remove', async () => {
      const row = worktreeRow('task/one').first();
      await row.waitFor({ timeout: 30_000 });
      const agentTabs = page.locator('.terminal-tabs-entry, .single-terminal-tab', { hasText: /task.one/ });
      assert.ok((await agentTabs.count()) > 0, 'the agent terminal of the worktree is open');
      await row.click({ button: 'right' });
      // Hover focuses the item and Enter runs it: a click on a menu that is still settling was
      // sometimes lost (the menu stayed open with the item highlighted).
      const item = page.locator('.context-view .action-label', { hasText: /^Remove Agent Worktree/ }).first();
      await item.hover();
      await page.keyboard.press('Enter');
      const dialog = page.locator('.monaco-dialog-box');
      await dialog.waitFor({ timeout: 30_000 });
      // One safe answer beside Remove: Keep (no Cancel that does the same).
      assert.equal(await dialog.locator('.monaco-button', { hasText: /^Cancel$/ }).count(), 0, 'no Cancel beside Keep');
      await wb.shot('remove-confirm');
      await dialog
        .locator('.monaco-button', { hasText: /^Remove( and Discard)?$/ })
        .first()
        .click();
      // Its terminal goes first; the row then goes with the worktree.
      await agentTabs.first().waitFor({ state: 'detached', timeout: 30_000 });
      await page.locator('.notification-toast', { hasText: 'Removed the agent worktree task/one' }).first().waitFor({ timeout: LONG });
      await row.waitFor({ state: 'detached', timeout: 60_000 });
      await wb.shot('removed');
      assert.equal(git(folder, 'branch', '--list', 'task/one'), '', 'the branch is gone');
      assert.equal(
        await page.locator('.terminal-tabs-entry, .single-terminal-tab', { hasText: /task.one/ }).count(),
        0,
        'no terminal reopened for it',
      );
    })(),
  );
});
