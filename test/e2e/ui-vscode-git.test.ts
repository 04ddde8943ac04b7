/**
 * Issue 25, "Done means": a container-written `core.fsmonitor` does not run when VS Code's own git
 * extension looks at the folder. In a real VS Code (code-server through Chromium) on a git
 * repository, against the real Docker engine: the agent's shell tries every way to name a host
 * program in the repository (appending `core.fsmonitor` to `.git/config`, `git config`, a hook,
 * `core.hooksPath`, attributes, moving `.git` aside) and is refused by the protected paths
 * (docs/decisions/0042-protected-paths-read-only.md); it then changes a file, VS Code's git
 * extension runs `git status` on the folder (the Source Control view lists the change), and the
 * marker program never ran on the host, and the `.gitmodules` placeholder it could not write is
 * not listed (issue 38, item 8). Issue 38, item 1: the same for git's ways from `.git` to
 * another repository (`commondir`, alternates, `modules`; decision 0059), and for a repository the
 * agent makes inside the folder, opened in an editor, reloaded, staged as a submodule: VS Code's git
 * never runs git in it under Toolbox's defaults, and does once the user turns each back on.
 * Screenshots land in test-output/e2e/ (vscode-git-NN-*.png).
 */
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';
import { describe, it } from 'node:test';
import { folder, LONG, uiTestsSkip, workbenchForSuite } from './workbench';

const settingsFile = join(process.env.E2E_USER_DATA ?? '', 'User', 'settings.json');
const originalSettings = process.env.E2E_USER_DATA ? readFileSync(settingsFile, 'utf8') : '{}';

describe("VS Code's git and a container that writes the repository (issue 25, item 1)", { skip: uiTestsSkip }, () => {
  const marker = join(folder, 'FSMONITOR-RAN');
  // Beside the folder, not in it: the container's own git may run what it planted too (its commit
  // in the nested repository does), and it cannot write here, so only a host git makes these.
  const commondirMarker = join(dirname(folder), `${basename(folder)}-COMMONDIR-RAN`);
  const nestedMarker = join(dirname(folder), `${basename(folder)}-NESTED-RAN`);
  const git = (...args: string[]) =>
    execFileSync('git', ['-c', 'user.name=Test', '-c', 'user.email=test@example.com', ...args], {
      cwd: folder,
      env: { ...process.env, GIT_CONFIG_NOSYSTEM: '1' },
      stdio: 'pipe',
    }).toString();
  const { wb } = workbenchForSuite('vscode-git-', {
    beforeOpen: async () => {
      // A repository before the window opens, so VS Code's git extension opens it.
      git('init', '-q', '-b', 'main');
      writeFileSync(join(folder, '.gitignore'), 'FSMONITOR-RAN\nnested/\n');
      git('add', '.');
      git('commit', '-q', '-m', 'initial');
    },
  });

  it(
    'every write that would name a host program is refused in the container, and VS Code’s git status runs none',
    { timeout: LONG },
    async () =>
      wb.scenario('fsmonitor', async () => {
        const configBefore = readFileSync(join(folder, '.git', 'config'), 'utf8');
        await wb.runCommand('Toolbox: Open Toolbox Shell');
        await wb.ask('echo "READY=$((6*7))"', /READY=(42)/);
        const attacks: Array<[string, string]> = [
          ['append', `printf '[core]\\n\\tfsmonitor = touch ${marker}\\n' >> .git/config`],
          ['config', `git config core.fsmonitor 'touch ${marker}'`],
          ['hooksPath', `git config core.hooksPath /tmp`],
          ['hook', `printf '#!/bin/sh\\ntouch ${marker}\\n' > .git/hooks/post-checkout && chmod +x .git/hooks/post-checkout`],
          ['info', `echo '* filter=x' > .git/info/attributes`],
          ['move-aside', 'mv .git .git-old'],
          // Issue 38, item 8: the repository has no .gitmodules; its placeholder keeps one from being made.
          ['gitmodules', `printf '[submodule "x"]\\n\\tpath = x\\n\\turl = /tmp/x\\n' > .gitmodules`],
        ];
        for (const [name, command] of attacks) {
          const rc = await wb.ask(`${command} 2>/dev/null; echo "ATTACK_${name}=$?"`, new RegExp(`ATTACK_${name}=(\\d+)`));
          assert.notEqual(rc, '0', `${name} was refused in the container`);
        }
        assert.equal(readFileSync(join(folder, '.git', 'config'), 'utf8'), configBefore, 'the repository config is unchanged');
        assert.equal(existsSync(join(folder, '.git', 'hooks', 'post-checkout')), false);

        // A change VS Code's git must notice: its `git status` runs on the folder.
        await wb.ask('echo changed > from-agent.txt; echo "WROTE=$?"', /WROTE=(\d+)/);
        await wb.runCommand('Source Control: Focus on Changes View');
        await wb.runCommand('Git: Refresh');
        const row = wb.page.locator('.scm-view .monaco-list-row').filter({ hasText: 'from-agent.txt' }).first();
        await row.waitFor({ timeout: 60_000 });
        await wb.shot('source-control');
        // The status that listed the change is the one fsmonitor would have run in (and it worked:
        // a directory placeholder for .gitmodules once failed VS Code's status with EISDIR).
        assert.equal(existsSync(marker), false, 'no program named by the container ran on the host');
        assert.match(git('status', '--porcelain'), /\?\? from-agent\.txt/);
        // That same status ran with the .gitmodules placeholder, an empty file, in the folder: VS Code
        // read it and still shows the repository and its change, and lists no .gitmodules (the line in
        // .git/info/exclude keeps it out; issue 38, item 8).
        assert.equal(readFileSync(join(folder, '.gitmodules'), 'utf8'), '', 'the placeholder is there, empty');
        assert.equal(
          await wb.page.locator('.scm-view .monaco-list-row').filter({ hasText: '.gitmodules' }).count(),
          0,
          'Source Control lists no .gitmodules',
        );
        // VS Code's git wrote its own key (branch.main.vscode-merge-base) into the config: the
        // Worktrees view still reads the repository (host git's allowlist, plan/gitConfig.ts).
        await wb.openToolboxView();
        await wb.page.getByText('No agent worktrees yet').first().waitFor({ timeout: 30_000 });
        assert.equal(await wb.page.getByText(/Host git refused/).count(), 0, 'the repository is not refused');
      })(),
  );

  it(
    '.git/commondir and git’s other ways to another repository are refused in the container; VS Code’s git works on the placeholders (issue 38, item 1)',
    { timeout: LONG },
    async () =>
      wb.scenario('commondir', async () => {
        // The review's attack: a config of the container's making inside .git (the directory is
        // writable, git keeps its lock files there), then commondir pointed at it; VS Code's git
        // ran it 2 s after on the main of that day.
        const planted = await wb.ask(
          `mkdir -p .git/x && printf '[core]\\n\\tfsmonitor = "touch ${commondirMarker}"\\n' > .git/x/config; echo "PLANTED=$?"`,
          /PLANTED=(\d+)/,
        );
        assert.equal(planted, '0', 'the .git directory itself stays writable');
        const attacks: Array<[string, string]> = [
          ['commondir', `printf 'x\\n' > .git/commondir`],
          ['commondir-rm', 'rm -f .git/commondir'],
          ['alternates', `printf '/tmp/objects\\n' > .git/objects/info/alternates`],
          ['objects-aside', 'mv .git/objects/info .git/objects/info-old'],
          ['modules', 'mkdir .git/modules/x'],
        ];
        for (const [name, command] of attacks) {
          const rc = await wb.ask(`${command} 2>/dev/null; echo "ATTACK_${name}=$?"`, new RegExp(`ATTACK_${name}=(\\d+)`));
          assert.notEqual(rc, '0', `${name} was refused in the container`);
        }
        assert.equal(readFileSync(join(folder, '.git', 'commondir'), 'utf8'), '.\n', 'the placeholder names .git itself');

        // VS Code's git runs its status on the folder with the placeholders in place, and lists a new change.
        await wb.ask('echo changed > from-agent-2.txt; echo "WROTE2=$?"', /WROTE2=(\d+)/);
        await wb.runCommand('Source Control: Focus on Changes View');
        await wb.runCommand('Git: Refresh');
        await wb.page.locator('.scm-view .monaco-list-row').filter({ hasText: 'from-agent-2.txt' }).first().waitFor({ timeout: 60_000 });
        await wb.shot('commondir-refused');
        assert.equal(existsSync(commondirMarker), false, 'VS Code’s git never ran the program named in .git/x/config');
        await wb.ask('rm -rf .git/x; echo "CLEANED=$?"', /CLEANED=(\d+)/);
      })(),
  );

  it(
    'a repository the agent makes inside the folder is never entered by VS Code’s git: not after a reload, not from an editor, not as a submodule it stages (Toolbox’s defaults)',
    { timeout: LONG },
    async () =>
      wb.scenario('nested', async () => {
        const made = await wb.ask(
          `git init -q nested && git -C nested config core.fsmonitor "touch ${nestedMarker}" && echo hi > nested/a.txt; echo "NESTED=$?"`,
          /NESTED=(\d+)/,
        );
        assert.equal(made, '0', 'a new repository can be made in the folder');
        // The agent opens one of its files in the editor (the bridge's `code`), then the window reloads.
        await wb.ask('code nested/a.txt; echo "OPENED=$?"', /OPENED=(\d+)/);
        await wb.page.locator('.tab', { hasText: 'a.txt' }).first().waitFor({ timeout: 30_000 });
        await wb.reloadToTerminal();
        await wb.page.locator('.tab', { hasText: 'a.txt' }).first().waitFor({ timeout: 60_000 });
        const scan = await gitScanCompleted();
        assert.match(scan, /scan completed - repositories \(1\),/, `VS Code's git opened only the folder's own repository: ${scan}`);
        assert.equal(existsSync(nestedMarker), false, 'VS Code’s git never ran the nested repository’s fsmonitor');

        // The agent stages it in the folder's own index as a submodule (no .gitmodules needed):
        // git status there runs a second git inside every populated submodule the index lists.
        const staged = await wb.ask(
          'git -C nested -c user.name=a -c user.email=a@b commit -q --allow-empty -m x && ' +
            'git update-index --add --cacheinfo 160000,$(git -C nested rev-parse HEAD),nested; echo "STAGED=$?"',
          /STAGED=(\d+)/,
        );
        assert.equal(staged, '0', 'the index is the agent’s to write');
        await wb.ask('echo changed > from-agent-3.txt; echo "WROTE3=$?"', /WROTE3=(\d+)/);
        await wb.runCommand('Source Control: Focus on Changes View');
        await wb.runCommand('Git: Refresh');
        await wb.page.locator('.scm-view .monaco-list-row').filter({ hasText: 'from-agent-3.txt' }).first().waitFor({ timeout: 60_000 });
        assert.equal(existsSync(nestedMarker), false, 'VS Code’s git status did not enter the staged submodule');

        // What the defaults stop, each turned back on by the user in turn (so this test would see
        // the attack; the window reads a settings.json written behind its back when it reloads):
        // a status that enters submodules runs the agent's program …
        await withUserSettings({ 'git.ignoreSubmodules': false }, async () => {
          await wb.reloadToTerminal();
          await waitForFile(nestedMarker, 90_000);
        });
        rmSync(nestedMarker);
        await wb.ask('git rm -q --cached nested; echo "UNSTAGED=$?"', /UNSTAGED=(\d+)/);
        // … and automatic detection opens the repository on the next reload.
        await withUserSettings({ 'git.autoRepositoryDetection': true }, async () => {
          await wb.reloadToTerminal();
          await waitForFile(nestedMarker, 90_000);
        });
        await wb.ask('rm -rf nested; echo "CLEANED=$?"', /CLEANED=(\d+)/);
        await wb.reloadToTerminal();
      })(),
  );

  /** Runs `body` with `settings` added to the User settings, which are then as they were (for the window, from its next reload). */
  async function withUserSettings(settings: Record<string, unknown>, body: () => Promise<void>): Promise<void> {
    writeFileSync(settingsFile, JSON.stringify({ ...JSON.parse(originalSettings), ...settings }));
    try {
      await body();
    } finally {
      writeFileSync(settingsFile, originalSettings);
    }
  }

  /** The Git output's line that ends VS Code's git initial scan after a (re)load, once it is there. */
  async function gitScanCompleted(): Promise<string> {
    await wb.runCommand('Git: Show Git Output');
    const line = await wb.outputLines('Initial repository scan completed', /Initial\srepository\sscan\scompleted/);
    await wb.shot('nested-not-opened');
    // Back to the Toolbox terminal, which the Output view replaced in the panel.
    await wb.runCommand('Terminal: Focus Terminal');
    await wb.page.locator('.terminal-wrapper.active .xterm').filter({ visible: true }).first().waitFor({ timeout: 30_000 });
    return line;
  }
});

/** Waits for `path` to exist: the state the attack leaves, polled (a marker file has no event to wait on). */
async function waitForFile(path: string, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!existsSync(path)) {
    if (Date.now() > deadline) throw new Error(`${path} did not appear within ${timeoutMs / 1000} s`);
    await new Promise((r) => setTimeout(r, 250));
  }
}
