/**
 * Issue 25, "Done means": a container-written `core.fsmonitor` does not run when VS Code's own git
 * extension looks at the folder. In a real VS Code (code-server through Chromium) on a git
 * repository, against the real Docker engine: the agent's shell tries every way to name a host
 * program in the repository (appending `core.fsmonitor` to `.git/config`, `git config`, a hook,
 * `core.hooksPath`, attributes, moving `.git` aside) and is refused by the protected paths
 * (docs/decisions/0042-protected-paths-read-only.md); it then changes a file, VS Code's git
 * extension runs `git status` on the folder (the Source Control view lists the change), and the
 * marker program never ran on the host. Screenshots land in test-output/e2e/ (vscode-git-NN-*.png).
 */
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { folder, LONG, openWorkbench, uiTestsSkip, type Workbench } from './workbench';

describe("VS Code's git and a container that writes the repository (issue 25, item 1)", { skip: uiTestsSkip }, () => {
  let wb: Workbench;
  const marker = join(folder, 'FSMONITOR-RAN');
  const git = (...args: string[]) =>
    execFileSync('git', ['-c', 'user.name=Test', '-c', 'user.email=test@example.com', ...args], {
      cwd: folder,
      env: { ...process.env, GIT_CONFIG_NOSYSTEM: '1' },
      stdio: 'pipe',
    }).toString();

  before(async () => {
    // A repository before the window opens, so VS Code's git extension opens it.
    git('init', '-q', '-b', 'main');
    writeFileSync(join(folder, '.gitignore'), 'FSMONITOR-RAN\n');
    git('add', '.');
    git('commit', '-q', '-m', 'initial');
    wb = await openWorkbench('vscode-git-');
  });

  after(async () => {
    await wb?.close();
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
        // VS Code's git wrote its own key (branch.main.vscode-merge-base) into the config: the
        // Worktrees view still reads the repository (host git's allowlist, plan/gitConfig.ts).
        await wb.openToolboxView();
        await wb.page.getByText('No agent worktrees yet').first().waitFor({ timeout: 30_000 });
        assert.equal(await wb.page.getByText(/Host git refused/).count(), 0, 'the repository is not refused');
      })(),
  );
});
