/**
 * Agent worktrees against a real git repository with a real bare origin on disk (no Docker):
 * create in upstream's layout, the bad inputs, nothing half-created, list, remove, sync, prune,
 * and a worktree made by hand the way the CLI makes it. Layout citations: test/unit/worktree-plan.test.ts.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, mkdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { PLACEHOLDER } from '../../extension/src/contract/constants';
import { runGit, type GitRunner } from '../../extension/src/host/git';
import {
  addWorktree,
  checkWorktreeCreate,
  fileAtRef,
  makeWorktreeFolder,
  fileAtCommit,
  listWorktrees,
  pruneMerged,
  removalRisk,
  removeWorktree,
  repositoryRoot,
  rollbackCreate,
  syncWorktree,
  worktreeChanges,
  WorktreeError,
  type CreatedWorktree,
  type CreateWorktreeOptions,
} from '../../extension/src/host/worktree';
import { gitEnv, makeGitRig, type GitRig } from '../support/gitRepo';

function runnerFor(rig: GitRig): GitRunner {
  const env = gitEnv(rig.home) as Record<string, string>;
  const pick = {
    HOME: env.HOME!,
    XDG_CONFIG_HOME: env.XDG_CONFIG_HOME!,
    GIT_CONFIG_NOSYSTEM: '1',
    GIT_AUTHOR_NAME: 'Test',
    GIT_AUTHOR_EMAIL: 'test@example.com',
    GIT_COMMITTER_NAME: 'Test',
    GIT_COMMITTER_EMAIL: 'test@example.com',
  };
  return (args, opts) => runGit(args, { ...opts, env: { ...pick, ...opts?.env } });
}

/** A whole create, minus the container and run one step after the other: the checks, then the add. */
async function checkAndAdd(opts: CreateWorktreeOptions): Promise<CreatedWorktree> {
  return addWorktree(await checkWorktreeCreate(opts), opts);
}

async function refused(p: Promise<unknown>, code: string, message: RegExp): Promise<void> {
  await assert.rejects(p, (err: unknown) => {
    assert.ok(err instanceof WorktreeError, `expected a WorktreeError, got ${String(err)}`);
    assert.equal(err.code, code, err.message);
    assert.match(err.message, message);
    return true;
  });
}

describe('agent worktrees with host git (real repo, bare origin)', () => {
  let rig: GitRig;
  let git: GitRunner;

  before(() => {
    rig = makeGitRig();
    git = runnerFor(rig);
  });
  after(() => rig?.cleanup());

  it("creates the worktree in upstream's place, --no-track from the fetched origin/<base>, base recorded", async () => {
    // A colleague pushed after our clone: the worktree must start from the fetched origin/main.
    const theirs = rig.commit(rig.other, 'theirs.txt', 'theirs\n');
    rig.git(rig.other, 'push', 'origin', 'main');
    const made = await checkAndAdd({ folder: rig.repo, branch: 'feature/login', git });
    assert.equal(made.path, join(rig.repo, '.worktrees', 'tbx-feature-login'));
    assert.equal(made.base, 'main');
    assert.equal(made.startRef, 'origin/main');
    assert.equal(rig.git(made.path, 'rev-parse', 'HEAD'), theirs);
    assert.equal(rig.git(made.path, 'rev-parse', '--abbrev-ref', 'HEAD'), 'feature/login');
    assert.equal(rig.git(rig.repo, 'config', '--get', 'branch.feature/login.base'), 'main');
    // --no-track: never the base; its upstream is its own name on origin, set by the host because
    // the container's git cannot write .git/config (docs/decisions/0042-protected-paths-read-only.md).
    assert.equal(rig.git(rig.repo, 'config', '--get', 'branch.feature/login.merge'), 'refs/heads/feature/login');
    assert.equal(rig.git(rig.repo, 'config', '--get', 'branch.feature/login.remote'), 'origin');
    assert.equal(rig.git(rig.repo, 'config', '--get', 'push.autoSetupRemote'), 'true');
    assert.ok(
      readFileSync(join(rig.repo, '.git', 'info', 'exclude'), 'utf8')
        .split('\n')
        .includes('.worktrees/'),
    );
    assert.equal(rig.git(rig.repo, 'status', '--porcelain'), '', 'the main checkout does not see .worktrees/');
    // The pointer file names the main .git by absolute path: what the container mount mirrors.
    assert.equal(
      readFileSync(join(made.path, '.git'), 'utf8').trim(),
      `gitdir: ${join(rig.repo, '.git', 'worktrees', 'tbx-feature-login')}`,
    );
  });

  it('seeds gitignored state only, never over a file that is there', async () => {
    mkdirSync(join(rig.repo, '.claude'), { recursive: true });
    writeFileSync(join(rig.repo, '.claude', 'settings.local.json'), '{"allow":["x"]}');
    writeFileSync(join(rig.repo, '.env'), 'A=1\n');
    writeFileSync(join(rig.repo, '.env.local'), 'B=2\n');
    mkdirSync(join(rig.repo, 'openspec', 'specs'), { recursive: true });
    writeFileSync(join(rig.repo, 'openspec', 'specs', 'a.md'), 'spec\n');
    mkdirSync(join(rig.repo, 'local-data'));
    writeFileSync(join(rig.repo, 'local-data', 'db.json'), '{}');
    mkdirSync(join(rig.repo, 'notes'));
    writeFileSync(join(rig.repo, 'notes', 'n.txt'), 'untracked, not ignored\n');
    const made = await checkAndAdd({ folder: rig.repo, branch: 'seeded', seed: ['local-data', 'notes'], git });
    assert.deepEqual(made.seeded.sort(), ['.claude/settings.local.json', '.env', '.env.local', 'local-data', 'openspec'].sort());
    assert.equal(readFileSync(join(made.path, '.env'), 'utf8'), 'A=1\n');
    assert.equal(readFileSync(join(made.path, 'openspec', 'specs', 'a.md'), 'utf8'), 'spec\n');
    assert.equal(existsSync(join(made.path, 'notes')), false, 'a path git does not ignore is not seeded');
    assert.equal(rig.git(made.path, 'status', '--porcelain'), '', 'seeded files stay ignored in the worktree');
  });

  it('adds into the empty folder made after the checks, in place (a bind mount of it sees the checkout)', async () => {
    const opts = { folder: rig.repo, branch: 'early/folder', git };
    const checked = await checkWorktreeCreate(opts);
    assert.equal(existsSync(checked.path), false, 'the checks create nothing');
    assert.equal(await fileAtRef(checked, `origin/${checked.base}`, 'README.md', { git }), 'hello\n');
    assert.equal(await fileAtRef(checked, `origin/${checked.base}`, 'no-such-file', { git }), undefined);
    await makeWorktreeFolder(checked.path);
    const inode = statSync(checked.path).ino;
    const made = await addWorktree(checked, opts);
    assert.equal(statSync(made.path).ino, inode, 'the same folder, filled');
    assert.equal(rig.git(made.path, 'rev-parse', '--abbrev-ref', 'HEAD'), 'early/folder');
    // A folder that appeared between the checks and the make is refused, not reused.
    const next = await checkWorktreeCreate({ ...opts, branch: 'early/raced' });
    mkdirSync(next.path);
    await refused(makeWorktreeFolder(next.path), 'dir-exists', /made just now by something else/);
    rmSync(next.path, { recursive: true });
    await removeWorktree({ folder: rig.repo, branch: 'early/folder', force: true, deleteRemote: false, git });
  });

  it('refuses bad input with one message each, and creates nothing', async () => {
    const before = rig.git(rig.repo, 'worktree', 'list', '--porcelain');
    const branches = rig.git(rig.repo, 'branch', '--list');
    await refused(checkAndAdd({ folder: rig.repo, branch: 'bad..name', git }), 'bad-branch', /does not accept "bad\.\.name"/);
    await refused(checkAndAdd({ folder: rig.repo, branch: 'has space', git }), 'bad-branch', /contains a space/);
    await refused(checkAndAdd({ folder: rig.repo, branch: '-x', git }), 'bad-branch', /starts with "-"/);
    await refused(checkAndAdd({ folder: rig.repo, branch: 'main', git }), 'branch-exists', /already exists/);
    mkdirSync(join(rig.repo, '.worktrees', 'tbx-taken'), { recursive: true });
    await refused(checkAndAdd({ folder: rig.repo, branch: 'taken', git }), 'dir-exists', /already exists/);
    // The checks run side by side but refuse in a fixed order: the branch before its folder.
    mkdirSync(join(rig.repo, '.worktrees', 'tbx-main'), { recursive: true });
    await refused(checkAndAdd({ folder: rig.repo, branch: 'main', git }), 'branch-exists', /A branch named main already exists/);
    rmSync(join(rig.repo, '.worktrees', 'tbx-main'), { recursive: true });
    await refused(
      checkAndAdd({ folder: rig.repo, branch: 'ok', base: 'no-such-base', git }),
      'no-base',
      /origin has no branch no-such-base/,
    );
    await refused(checkAndAdd({ folder: rig.dir, branch: 'ok', git }), 'not-a-repo', /is not in a git repository/);
    assert.equal(rig.git(rig.repo, 'worktree', 'list', '--porcelain'), before);
    assert.equal(rig.git(rig.repo, 'branch', '--list'), branches);
  });

  it('says how to go on when the fetch fails, and creates offline when asked', async () => {
    const url = rig.git(rig.repo, 'remote', 'get-url', 'origin');
    rig.git(rig.repo, 'remote', 'set-url', 'origin', join(rig.dir, 'unreachable.git'));
    try {
      await refused(
        checkAndAdd({ folder: rig.repo, branch: 'offline', git }),
        'fetch-failed',
        /Could not fetch main from origin .*offline/,
      );
      assert.equal(existsSync(join(rig.repo, '.worktrees', 'tbx-offline')), false);
      const made = await checkAndAdd({ folder: rig.repo, branch: 'offline', noFetch: true, git });
      assert.equal(made.startRef, 'main');
      assert.match(made.notes.join(' '), /without contacting origin/);
    } finally {
      rig.git(rig.repo, 'remote', 'set-url', 'origin', url);
    }
  });

  it('refuses a repository without origin', async () => {
    const lone = join(rig.dir, 'lone');
    rig.git(rig.dir, 'init', '-b', 'main', lone);
    rig.commit(lone, 'a.txt', 'a\n');
    await refused(checkAndAdd({ folder: lone, branch: 'x', git }), 'no-origin', /no remote named origin/);
    assert.equal(existsSync(join(lone, '.worktrees')), false);
  });

  it('rolls a create back completely (the container step failing uses this)', async () => {
    const made = await checkAndAdd({ folder: rig.repo, branch: 'doomed', git });
    await rollbackCreate(made.root, made.branch, made.path, { git });
    assert.equal(existsSync(made.path), false);
    assert.equal(rig.git(rig.repo, 'branch', '--list', 'doomed'), '');
    assert.throws(() => rig.git(rig.repo, 'config', '--get', 'branch.doomed.base'));
    assert.ok(!rig.git(rig.repo, 'worktree', 'list', '--porcelain').includes('tbx-doomed'));
  });

  it('finds the repository root from inside a worktree', async () => {
    assert.equal(await repositoryRoot(join(rig.repo, '.worktrees', 'tbx-feature-login'), { git }), rig.repo);
  });

  it("reads a protected folder's .git: a commondir naming itself and an empty alternates (placeholders) are the same repository", async () => {
    const commondir = join(rig.repo, '.git', 'commondir');
    const alternates = join(rig.repo, '.git', 'objects', 'info', 'alternates');
    writeFileSync(commondir, PLACEHOLDER.commonDirText);
    writeFileSync(alternates, '');
    try {
      assert.equal(await repositoryRoot(rig.repo, { git }), rig.repo);
      assert.ok((await listWorktrees(rig.repo, { git })).some((w) => w.branch === 'feature/login'));
      // Host git itself follows the placeholder to the same directory.
      assert.equal(rig.git(rig.repo, 'rev-parse', '--git-common-dir'), join(rig.repo, '.git'));
      // Anything else there still names another store, and is refused.
      writeFileSync(commondir, '../elsewhere\n');
      await refused(repositoryRoot(rig.repo, { git }), 'not-a-repo', /has a commondir file/);
      writeFileSync(commondir, PLACEHOLDER.commonDirText);
      writeFileSync(alternates, '/elsewhere/.git/objects\n');
      await refused(listWorktrees(rig.repo, { git }), 'repo-config-unsafe', /alternates makes git read objects from other repositories/);
    } finally {
      rmSync(commondir, { force: true });
      rmSync(alternates, { force: true });
    }
  });

  it('lists toolbox worktrees with base, ahead/behind and dirty, and not the others', async () => {
    rig.git(rig.repo, 'worktree', 'add', '-b', 'agent-own', join(rig.dir, 'agent-own'));
    const wt = join(rig.repo, '.worktrees', 'tbx-feature-login');
    rig.commit(wt, 'login.txt', 'login\n');
    writeFileSync(join(wt, 'scratch.txt'), 'dirty\n');
    const list = await listWorktrees(rig.repo, { git });
    const byBranch = new Map(list.map((w) => [w.branch, w]));
    assert.ok(!byBranch.has('agent-own') && !byBranch.has('main'));
    const login = byBranch.get('feature/login');
    assert.ok(login);
    assert.equal(login.base, 'main');
    assert.equal(login.baseRecorded, true);
    assert.equal(login.ahead, 1);
    assert.equal(login.behind, 0);
    assert.equal(login.dirty, true);
    assert.equal(byBranch.get('seeded')?.dirty, false);
  });

  it('compares a worktree with its base from the host: commits and uncommitted work', async () => {
    const wt = join(rig.repo, '.worktrees', 'tbx-feature-login');
    const diff = await worktreeChanges(rig.repo, 'feature/login', { git });
    assert.equal(diff.base, 'main');
    assert.deepEqual(
      diff.changes.map((c) => `${c.status} ${c.path}`),
      ['added login.txt', 'added scratch.txt'],
    );
    writeFileSync(join(wt, 'README.md'), 'changed\n');
    const again = await worktreeChanges(rig.repo, 'feature/login', { git });
    assert.ok(again.changes.some((c) => c.path === 'README.md' && c.status === 'modified'));
    assert.equal(await fileAtCommit(wt, again.mergeBase, 'README.md', { git }), 'hello\n');
    assert.equal(await fileAtCommit(wt, again.mergeBase, 'login.txt', { git }), '', 'not there at the base');
    await assert.rejects(fileAtCommit(wt, 'HEAD; rm -rf /', 'README.md', { git }), /not a commit id/);
    await assert.rejects(fileAtCommit(wt, again.mergeBase, '../x', { git }), /not a path inside/);
    rig.git(wt, 'checkout', '--', 'README.md');
  });

  it('refuses to remove a dirty worktree, then removes with force and deletes the branch', async () => {
    await refused(removeWorktree({ folder: rig.repo, branch: 'feature/login', git }), 'dirty', /uncommitted changes.*Force/);
    const risk = await removalRisk(rig.repo, 'feature/login', { git });
    assert.deepEqual(risk.dirtyFiles, ['scratch.txt']);
    assert.equal(risk.unmergedCommits, 1);
    assert.equal(risk.pushed, false);
    const out = await removeWorktree({ folder: rig.repo, branch: 'feature/login', force: true, git });
    assert.equal(out.branchDeleted, true);
    assert.equal(existsSync(out.path), false);
    assert.equal(rig.git(rig.repo, 'branch', '--list', 'feature/login'), '');
  });

  it('keeps an unmerged branch on a plain remove, and says so', async () => {
    const made = await checkAndAdd({ folder: rig.repo, branch: 'unmerged', git });
    rig.commit(made.path, 'u.txt', 'u\n');
    const out = await removeWorktree({ folder: rig.repo, branch: 'unmerged', git });
    assert.equal(existsSync(made.path), false);
    assert.equal(out.branchDeleted, false);
    assert.match(out.branchKept ?? '', /not merged/);
    assert.notEqual(rig.git(rig.repo, 'branch', '--list', 'unmerged'), '');
  });

  it('syncs: rebases onto the moved base and pushes with lease', async () => {
    const made = await checkAndAdd({ folder: rig.repo, branch: 'sync-me', git });
    rig.commit(made.path, 'mine.txt', 'mine\n');
    rig.git(rig.other, 'pull', '--ff-only', 'origin', 'main');
    const moved = rig.commit(rig.other, 'base-moved.txt', 'moved\n');
    rig.git(rig.other, 'push', 'origin', 'main');
    const out = await syncWorktree({ folder: rig.repo, branch: 'sync-me', git });
    assert.equal(out.pushed, true);
    assert.equal(rig.git(made.path, 'merge-base', '--is-ancestor', moved, 'HEAD'), '');
    assert.equal(rig.git(rig.origin, 'rev-parse', 'refs/heads/sync-me'), rig.git(made.path, 'rev-parse', 'HEAD'));
  });

  it('stops a sync on a conflict, says how to continue, and resumes after the fix', async () => {
    const made = await checkAndAdd({ folder: rig.repo, branch: 'conflict', git });
    rig.commit(made.path, 'README.md', 'mine\n');
    rig.git(rig.other, 'pull', '--ff-only', 'origin', 'main');
    rig.commit(rig.other, 'README.md', 'theirs\n');
    rig.git(rig.other, 'push', 'origin', 'main');
    await refused(
      syncWorktree({ folder: rig.repo, branch: 'conflict', git }),
      'rebase-conflict',
      /stopped on a conflict; nothing was pushed.*Sync again/,
    );
    assert.throws(() => rig.git(rig.origin, 'rev-parse', '--verify', 'refs/heads/conflict'), 'nothing pushed');
    const listed = (await listWorktrees(rig.repo, { git })).find((w) => w.path === made.path);
    assert.equal(listed?.rebasing, true);
    writeFileSync(join(made.path, 'README.md'), 'resolved\n');
    rig.git(made.path, 'add', 'README.md');
    const out = await syncWorktree({ folder: rig.repo, branch: 'conflict', git });
    assert.equal(out.resumed, true);
    assert.equal(rig.git(rig.origin, 'show', 'refs/heads/conflict:README.md'), 'resolved');
  });

  it('prunes merged worktrees only, keeping dirty and unmerged ones', async () => {
    const merged = await checkAndAdd({ folder: rig.repo, branch: 'merged', git });
    rig.commit(merged.path, 'm.txt', 'm\n');
    rig.git(merged.path, 'push', 'origin', 'HEAD:main');
    const dirty = await checkAndAdd({ folder: rig.repo, branch: 'merged-dirty', git });
    writeFileSync(join(dirty.path, 'wip.txt'), 'wip\n');
    const stopped: string[] = [];
    const dry = await pruneMerged({ folder: rig.repo, dryRun: true, git });
    assert.ok(dry.removed.some((r) => r.branch === 'merged'));
    assert.ok(existsSync(merged.path), 'a dry run removes nothing');
    const out = await pruneMerged({ folder: rig.repo, git, beforeRemove: async (p) => void stopped.push(p) });
    assert.ok(out.removed.some((r) => r.branch === 'merged'));
    assert.ok(!out.removed.some((r) => r.branch === 'unmerged' || r.branch === 'sync-me'));
    assert.ok(out.kept.some((k) => k.branch === 'merged-dirty' && /uncommitted/.test(k.why)));
    // As upstream: a worktree with no commits of its own reads as merged and goes too, unless dirty.
    assert.ok(stopped.includes(merged.path) && !stopped.includes(dirty.path));
    assert.equal(existsSync(merged.path), false);
    assert.equal(rig.git(rig.repo, 'branch', '--list', 'merged'), '');
    assert.ok(existsSync(dirty.path));
  });

  it('picks up a worktree made by hand in the CLI’s layout', async () => {
    // What `toolbox worktree create hand/made` leaves on disk (docs/commands.md): the branch, the
    // folder, the base in git config. The CLI itself is not available here.
    rig.git(rig.repo, 'worktree', 'add', '--no-track', '-b', 'hand/made', join(rig.repo, '.worktrees', 'tbx-hand-made'), 'origin/main');
    rig.git(rig.repo, 'config', 'branch.hand/made.base', 'main');
    const found = (await listWorktrees(rig.repo, { git })).find((w) => w.branch === 'hand/made');
    assert.ok(found);
    assert.equal(found.base, 'main');
    assert.equal(found.baseRecorded, true);
    const out = await removeWorktree({ folder: rig.repo, branch: 'hand/made', git });
    assert.equal(out.branchDeleted, true);
  });
});
