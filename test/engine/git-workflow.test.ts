/**
 * The agent's git still works with the protected paths in place (issue 25, item 3;
 * docs/decisions/0042-protected-paths-read-only.md): commit, branch, switch, rebase, stash, tag,
 * fetch and push to a bare origin the container mounts at its own path, inside a real container
 * opened the way a window opens it, and a worktree container's commit seen by the host. What needs
 * a config write (`push -u`'s tracking, `remote add`) fails, and the test records exactly what git
 * prints then.
 */
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { testNamespace, testUser, type TestNamespace } from '../support/docker';
import { execIn } from '../support/exec';
import { makeGitRig, type GitRig } from '../support/gitRepo';
import { ensureTestRuntimeImage } from '../support/image';
import type { MountOverride } from '../../extension/src/config/model';
import { stopContainer } from '../../extension/src/engine/lifecycle';
import { openContainer } from '../../extension/src/engine/open';
import { chownTree, openFolder, planFolder, type OpenedFolder } from '../support/protected';

const USER = testUser(4321, 4322);

describe("the agent's git in a protected container (issue 25, item 3)", () => {
  let ns: TestNamespace;
  let rig: GitRig;
  let image: string;
  let main: OpenedFolder;
  /** The bare origin, bound at its own path so the container's git reaches it as the host's does. */
  let ORIGIN: MountOverride[];

  before(async () => {
    image = await ensureTestRuntimeImage();
    ns = testNamespace();
    rig = makeGitRig(`${ns.names.prefix}-git-`);
    // The host's git, as root, on the user's repository.
    rig.git(rig.dir, 'config', '--global', '--add', 'safe.directory', '*');
    // The identity the agent's commits get comes from the repository's own config (read-only in the container).
    rig.git(rig.repo, 'config', 'user.name', 'Agent');
    rig.git(rig.repo, 'config', 'user.email', 'agent@example.com');
    // As New Agent Worktree writes it (host/worktree.ts). Written before the container starts:
    // a host write after it replaces .git/config, which ends its protection (the last test).
    rig.git(rig.repo, 'config', 'push.autoSetupRemote', 'true');
    chownTree(rig.dir, USER);
    ORIGIN = [{ name: 'origin', source: rig.origin, target: rig.origin }];
    main = await openFolder(ns, rig.repo, { image, user: USER, mounts: ORIGIN });
  });

  after(async () => {
    await ns?.cleanup();
    rig?.cleanup();
  });

  /** Runs a git script in the container, in `cwd` (the folder's mirror unless said). */
  const inContainer = async (opened: OpenedFolder, script: string, cwd: string) => {
    const r = await execIn(opened.container, ['sh', '-c', script], { workdir: cwd, env: ['GIT_TERMINAL_PROMPT=0', 'LC_ALL=C'] });
    return { code: r.code, stdout: r.stdout, stderr: r.stderr, out: `${r.stdout}${r.stderr}` };
  };
  const ok = async (script: string, cwd = rig.repo, opened = main) => {
    const r = await inContainer(opened, script, cwd);
    assert.equal(r.code, 0, `\`${script}\` failed: ${r.out}`);
    return r.stdout.trim();
  };

  it('commits, branches, switches, stashes and rebases', async () => {
    await ok('echo one > one.txt && git add one.txt && git commit -q -m one');
    await ok('git branch feature && git switch -q feature && echo two > two.txt && git add two.txt && git commit -q -m two');
    await ok('git switch -q main && echo three > three.txt && git add three.txt && git commit -q -m three');
    await ok('git switch -q feature && echo dirty >> README.md && git stash -q && test -z "$(git status --porcelain)"');
    await ok('git rebase -q main');
    await ok('git stash pop -q && grep -q dirty README.md && git checkout -q -- README.md');
    assert.equal(await ok('git log --format=%s main..feature'), 'two');
    assert.equal(await ok('git log --format=%s -1 main'), 'three');
    assert.equal(await ok('git log --format=%an -1'), 'Agent');
    // The host sees the same history.
    assert.equal(rig.git(rig.repo, 'log', '--format=%s', '-1', 'feature'), 'two');
  });

  it('tags, fetches and pushes branches and tags to origin', async () => {
    await ok('git tag v1 && git tag -a v2 -m "second"');
    rig.commit(rig.other, 'colleague.txt', 'hi\n');
    rig.git(rig.other, 'push', '-q', 'origin', 'main');
    // The host's push made object directories in origin as this process's user: the container's
    // user must be able to add to them, as it could to an origin of its own.
    chownTree(rig.origin, USER);
    await ok('git fetch -q origin');
    assert.equal(await ok('git log --format=%s -1 origin/main'), 'change colleague.txt');
    await ok('git rebase -q origin/main main');
    await ok('git push -q origin main feature v1 v2');
    assert.equal(rig.git(rig.origin, 'rev-parse', 'refs/heads/feature'), rig.git(rig.repo, 'rev-parse', 'feature'));
    assert.equal(rig.git(rig.origin, 'cat-file', '-t', 'refs/tags/v2'), 'tag');
  });

  it('push -u pushes but cannot record the tracking branch; push.autoSetupRemote still pushes a new branch by its name', async () => {
    await ok('git switch -q -c agent/u && echo u > u.txt && git add u.txt && git commit -q -m u');
    const pushU = await inContainer(main, 'git push -u origin agent/u', rig.repo);
    // Exactly what git 2.39 prints (the image's git): the push is done, the config write refused
    // by the kernel (the rename of config.lock onto the read-only mount point), and git then
    // claims the tracking it could not write. The exit code is 0.
    console.log(`# git push -u (exit ${pushU.code}):\n${pushU.out.replace(/^/gm, '#   ')}`);
    assert.equal(pushU.code, 0);
    assert.match(pushU.stderr, /\* \[new branch\]\s+agent\/u -> agent\/u/);
    // The path is absolute: git names the common directory its commondir file leads to (decision 0059).
    assert.match(pushU.stderr, new RegExp(`^error: could not write config file ${rig.repo}/\\.git/config: Device or resource busy$`, 'm'));
    assert.match(pushU.stdout, /^branch 'agent\/u' set up to track 'origin\/agent\/u'\.$/m);
    const tracking = await inContainer(main, 'git config --get branch.agent/u.merge', rig.repo);
    assert.equal(tracking.code, 1, 'no tracking was recorded');
    assert.equal(rig.git(rig.origin, 'rev-parse', 'refs/heads/agent/u'), rig.git(rig.repo, 'rev-parse', 'agent/u'));

    // With push.autoSetupRemote (New Agent Worktree writes it on the host, host/worktree.ts), a
    // plain `git push` pushes the new branch to its own name every time, tracking or not.
    await ok('git switch -q -c agent/auto && echo a > a.txt && git add a.txt && git commit -q -m a');
    const auto = await inContainer(main, 'git push', rig.repo);
    console.log(`# git push with push.autoSetupRemote (exit ${auto.code}):\n${auto.out.replace(/^/gm, '#   ')}`);
    assert.equal(auto.code, 0, auto.out);
    await ok('echo b >> a.txt && git commit -q -am b && git push -q');
    assert.equal(rig.git(rig.origin, 'rev-parse', 'refs/heads/agent/auto'), rig.git(rig.repo, 'rev-parse', 'agent/auto'));
  });

  it('refuses what writes .git/config: remote add, config', async () => {
    const add = await inContainer(main, `git remote add evil ${rig.origin}`, rig.repo);
    console.log(`# git remote add (exit ${add.code}):\n${add.out.replace(/^/gm, '#   ')}`);
    assert.notEqual(add.code, 0);
    assert.match(add.stderr, new RegExp(`could not (write|lock) config file ${rig.repo}/\\.git/config`));
    assert.equal(rig.git(rig.repo, 'remote'), 'origin');
  });

  it('a host write that replaces .git/config ends its protection in the running container; the next open says so', async () => {
    // Tracking set on the host (it owns .git/config): git writes config.lock and renames it over
    // .git/config, and the kernel detaches the read-only bind of the entry it replaced.
    rig.git(rig.repo, 'branch', '--set-upstream-to', 'origin/agent/auto', 'agent/auto');
    assert.match(await ok('git status -sb'), /^## agent\/auto\.\.\.origin\/agent\/auto$/m, 'the container reads it');
    const now = await inContainer(main, `grep -c ' ${rig.repo}/.git/config ' /proc/self/mountinfo`, rig.repo);
    assert.equal(now.stdout.trim(), '0', 'the read-only bind of .git/config is gone');
    const again = await openContainer(main.ctx, planFolder(ns, rig.repo, { image, user: USER, mounts: ORIGIN }), {
      ensureImage: async () => undefined,
    });
    const drift = again.drift.find((d) => d.kind === 'protections');
    assert.deepEqual(drift?.protections, ['.git/config']);
    // Restarting it (what the notice asks) protects the new file (the user's, as the host's git
    // would have written it).
    chownTree(join(rig.repo, '.git'), USER);
    await stopContainer(main.ctx, main.result.name);
    main = await openFolder(ns, rig.repo, { image, user: USER, mounts: ORIGIN });
    const write = await inContainer(main, 'printf x >> .git/config', rig.repo);
    assert.match(write.out, /Read-only file system/);
  });

  it("a worktree container's commits and pushes are the host's branch", async () => {
    const wt = join(rig.repo, '.worktrees', 'tbx-agent-wt');
    rig.git(rig.repo, 'worktree', 'add', '-q', '-b', 'agent/wt', wt, 'main');
    chownTree(rig.repo, USER);
    const opened = await openFolder(ns, wt, {
      image,
      user: USER,
      worktreeRoot: rig.repo,
      mounts: ORIGIN,
    });
    await ok('echo wt > wt.txt && git add wt.txt && git commit -q -m "from the worktree container"', wt, opened);
    await ok('git switch -q -c agent/wt-2 && git switch -q agent/wt && git stash list >/dev/null && git rebase -q main', wt, opened);
    await ok('git push -q origin agent/wt', wt, opened);
    assert.equal(rig.git(rig.repo, 'log', '--format=%s', '-1', 'agent/wt'), 'from the worktree container');
    assert.equal(rig.git(rig.origin, 'rev-parse', 'refs/heads/agent/wt'), rig.git(rig.repo, 'rev-parse', 'agent/wt'));
    // Its own gitdir is writable, every other worktree's and the main config are not.
    const own = await inContainer(opened, `printf x >> ${rig.repo}/.git/worktrees/tbx-agent-wt/commondir`, wt);
    assert.match(own.out, /Read-only file system/);
    const cfg = await inContainer(opened, `printf x >> ${rig.repo}/.git/config`, wt);
    assert.match(cfg.out, /Read-only file system/);
  });
});
