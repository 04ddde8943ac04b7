/**
 * The host side of the `.gitmodules` placeholder (docs/decisions/0042-protected-paths-read-only.md,
 * issue 38 item 8): its line in `info/exclude` (engine/placeholders.ts ensureExcludeLine), appended
 * once, in place, after the user's content as it is, never through a link or into a file with
 * other names, and made with its `info/` when the repository has none; and whether host git would
 * read a `.gitmodules` from the index or HEAD once the placeholder went (host/git.ts
 * gitmodulesBehindWorkTree), which keeps it. On temporary directories and real host git; git reads
 * the placeholder itself in test/engine/protected-paths.test.ts.
 */
import assert from 'node:assert/strict';
import { linkSync, lstatSync, mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { ensureExcludeLine } from '../../extension/src/engine/placeholders';
import { gitmodulesBehindWorkTree, runGit, type GitRunner } from '../../extension/src/host/git';
import { GITMODULES } from '../../extension/src/plan/protect';
import { gitEnv, makeGitRig, type GitRig } from '../support/gitRepo';

describe('the .gitmodules placeholder’s line in info/exclude', () => {
  let dir: string;
  let n = 0;
  before(() => {
    dir = mkdtempSync(join(tmpdir(), 'toolbox-exclude-'));
  });
  after(() => rmSync(dir, { recursive: true, force: true }));

  /** A fresh `info/` (made unless `made` is false) with `exclude` holding `text` (none when undefined). */
  const info = (text: string | undefined, made = true) => {
    const d = join(dir, `git-${n++}`, 'info');
    if (made) mkdirSync(d, { recursive: true });
    else mkdirSync(join(d, '..'), { recursive: true });
    if (text !== undefined) writeFileSync(join(d, 'exclude'), text);
    return join(d, 'exclude');
  };
  const line = GITMODULES.excludeLine;

  it('appends the line after the user’s content as it is, once, and in place', async () => {
    const template = '# git ls-files --others --exclude-from=.git/info/exclude\n# *.[oa]\n*~\n';
    const file = info(template);
    const inode = lstatSync(file).ino;
    await ensureExcludeLine({ file, line }, undefined);
    await ensureExcludeLine({ file, line }, undefined);
    assert.equal(readFileSync(file, 'utf8'), `${template}/.gitmodules\n`);
    assert.equal(lstatSync(file).ino, inode, 'the same file (a read-only bind of info/ in a running container keeps seeing it)');
  });

  it('starts a line of its own after content without a final newline, and adds nothing where the line is already', async () => {
    const open = info('*.log');
    await ensureExcludeLine({ file: open, line }, undefined);
    assert.equal(readFileSync(open, 'utf8'), '*.log\n/.gitmodules\n');
    for (const text of ['/.gitmodules\n', '*.log\n/.gitmodules', '/.gitmodules\r\n*.tmp\n']) {
      const file = info(text);
      await ensureExcludeLine({ file, line }, undefined);
      assert.equal(readFileSync(file, 'utf8'), text, JSON.stringify(text));
    }
    // Another pattern that also matches is the user's: the line is still added (it is ours to find again).
    const other = info('.gitmodules\n');
    await ensureExcludeLine({ file: other, line }, undefined);
    assert.equal(readFileSync(other, 'utf8'), '.gitmodules\n/.gitmodules\n');
  });

  it('makes the file, and info/ when it is missing; an empty file gets just the line', async () => {
    for (const [text, made] of [
      [undefined, true],
      [undefined, false],
      ['', true],
    ] as const) {
      const file = info(text, made);
      await ensureExcludeLine({ file, line }, undefined);
      assert.equal(readFileSync(file, 'utf8'), '/.gitmodules\n', `${String(text)} ${made}`);
    }
  });

  it('writes the line once when two opens ask at the same time', async () => {
    const file = info('*~\n');
    await Promise.all([1, 2, 3].map(() => ensureExcludeLine({ file, line }, undefined)));
    assert.equal(readFileSync(file, 'utf8'), '*~\n/.gitmodules\n');
  });

  it('never writes through a symbolic link, into a file with other names, or below an info that is no folder', async () => {
    const target = join(dir, 'elsewhere');
    writeFileSync(target, 'mine\n');
    const linked = info(undefined);
    symlinkSync(target, linked);
    await assert.rejects(ensureExcludeLine({ file: linked, line }, undefined), /is a symbolic link.*toolbox\.protectedPaths/s);
    const hard = info(undefined);
    linkSync(target, hard);
    await assert.rejects(ensureExcludeLine({ file: hard, line }, undefined), /has other names/);
    const linkedInfo = join(dir, `git-${n++}`, 'info');
    mkdirSync(join(linkedInfo, '..'), { recursive: true });
    symlinkSync(dir, linkedInfo);
    await assert.rejects(ensureExcludeLine({ file: join(linkedInfo, 'exclude'), line }, undefined), /no folder/);
    assert.equal(readFileSync(target, 'utf8'), 'mine\n', 'the file behind them is untouched');
  });
});

describe('whether host git would read a .gitmodules the working tree lacks (host/git.ts)', () => {
  let rig: GitRig;
  let git: GitRunner;
  before(() => {
    rig = makeGitRig('tbxt-gm-');
    const env = gitEnv(rig.home) as Record<string, string>;
    git = (args, opts) =>
      runGit(args, { ...opts, env: { HOME: env.HOME!, XDG_CONFIG_HOME: env.XDG_CONFIG_HOME!, GIT_CONFIG_NOSYSTEM: '1', ...opts?.env } });
  });
  after(() => rig?.cleanup());

  const staged = (file = '.gitmodules') =>
    rig.git(rig.repo, 'update-index', '--add', '--cacheinfo', `100644,${rig.git(rig.repo, 'hash-object', '-w', '--stdin')},${file}`);

  it('no: a checkout whose index and HEAD have none (an unborn branch too)', async () => {
    assert.equal(await gitmodulesBehindWorkTree(rig.repo, git), false);
    const fresh = join(rig.dir, 'fresh');
    rig.git(rig.dir, 'init', '-q', fresh);
    assert.equal(await gitmodulesBehindWorkTree(fresh, git), false);
  });

  it('yes: the agent staged one, or committed one and unstaged it', async () => {
    staged();
    assert.equal(await gitmodulesBehindWorkTree(rig.repo, git), true, 'in the index');
    rig.git(rig.repo, 'commit', '-q', '-m', 'gitmodules');
    rig.git(rig.repo, 'rm', '-q', '--cached', '.gitmodules');
    assert.equal(await gitmodulesBehindWorkTree(rig.repo, git), true, 'in HEAD');
    rig.git(rig.repo, 'reset', '-q', '--hard', 'HEAD~1');
    assert.equal(await gitmodulesBehindWorkTree(rig.repo, git), false, 'gone again');
    // Another path that ends so is no .gitmodules of the folder's.
    staged('sub/.gitmodules');
    assert.equal(await gitmodulesBehindWorkTree(rig.repo, git), false);
    rig.git(rig.repo, 'rm', '-q', '--cached', 'sub/.gitmodules');
  });

  it('a toolbox worktree is asked about its own index and HEAD', async () => {
    const wt = join(rig.repo, '.worktrees', 'tbx-gm');
    rig.git(rig.repo, 'worktree', 'add', '-q', '-b', 'gm', wt);
    try {
      assert.equal(await gitmodulesBehindWorkTree(wt, git), false);
      rig.git(wt, 'update-index', '--add', '--cacheinfo', `100644,${rig.git(wt, 'hash-object', '-w', '--stdin')},.gitmodules`);
      assert.equal(await gitmodulesBehindWorkTree(wt, git), true);
      assert.equal(await gitmodulesBehindWorkTree(rig.repo, git), false, 'the main checkout’s index is another');
    } finally {
      rig.git(rig.repo, 'worktree', 'remove', '--force', wt);
    }
  });

  it('cannot tell (undefined): no repository, a subfolder of one, a config host git refuses', async () => {
    const none = join(rig.dir, 'none');
    mkdirSync(none);
    assert.equal(await gitmodulesBehindWorkTree(none, git), undefined);
    const sub = join(rig.repo, 'sub');
    mkdirSync(sub, { recursive: true });
    assert.equal(await gitmodulesBehindWorkTree(sub, git), undefined);
    rig.git(rig.repo, 'config', 'core.hooksPath', '.husky/_');
    try {
      assert.equal(await gitmodulesBehindWorkTree(rig.repo, git), undefined);
    } finally {
      rig.git(rig.repo, 'config', '--unset', 'core.hooksPath');
    }
    assert.equal(await gitmodulesBehindWorkTree(rig.repo, git), false);
  });
});
