/**
 * Issue 25, items 1 and 7, on the real engine: a real container writes each attack into the
 * repository through its read-write bind mount (the workspace folder, `.git` included), then
 * every host git operation the extension makes runs from the host, and a marker program (a host
 * script that records that it ran) must never run (docs/decisions/0039).
 *
 * - With the attack in the config, every operation is refused by its key before git starts.
 * - With the config rewritten by the container between the check and git's own read (the race,
 *   made deterministic by a runner that has the container write it just before each git call),
 *   the operations work and still nothing runs: git reads a private copy of the checked config.
 * - Hooks the container drops into `.git/hooks` need no config key: they never run either.
 * - A fake worktree made of plain files, a symlinked `.worktrees`, worktree, `.git/info` or
 *   `.git/info/exclude` refuse the step, saying where, and nothing outside the repository is touched.
 * The container is one for the whole file; it needs no git, only sh.
 */
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { chmodSync, existsSync, lstatSync, mkdirSync, readFileSync, readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import type Docker from 'dockerode';
import { runGit, type GitRunner } from '../../extension/src/host/git';
import {
  addWorktree,
  checkWorktreeCreate,
  defaultBranch,
  fileAtCommit,
  fileAtRef,
  listWorktrees,
  makeWorktreeFolder,
  pruneMerged,
  recordedBase,
  removalRisk,
  removeWorktree,
  repositoryRefusal,
  rollbackCreate,
  syncWorktree,
  worktreeChanges,
  WorktreeError,
  type CreateWorktreeOptions,
} from '../../extension/src/host/worktree';
import { displayConfigKey } from '../../extension/src/plan/gitConfig';
import { testNamespace, type TestNamespace } from '../support/docker';
import { shellSession, type ShellSession } from '../support/exec';
import { gitEnv, makeGitRig, type GitRig } from '../support/gitRepo';

const IMAGE = 'debian:bookworm-slim';

describe('host git never runs what the container wrote (issue 25, items 1 and 7; real engine)', () => {
  let ns: TestNamespace;
  let rig: GitRig;
  let container: Docker.Container;
  let shell: ShellSession;
  let marker: string;
  let ran: string;
  let git: GitRunner;
  let pristine: string;
  let victimWt: string;

  /** Runs a line of shell inside the container, in the repository, as the host user. */
  async function inside(script: string): Promise<void> {
    const r = await shell.run(script);
    assert.equal(r.code, 0, `${script}: ${r.output}`);
  }

  /**
   * A runner that has the container write `config.evil` over the repository's config just before
   * each git call, and the pristine one back after it: the race between the check and git's read.
   */
  let swaps = 0;
  const inFlight = new Set<Promise<unknown>>();
  const racing: GitRunner = (args, opts) => {
    swaps++;
    const call = (async () => {
      await inside(`cp ${rig.dir}/config.evil .git/config`);
      try {
        return await git(args, opts);
      } finally {
        await inside(`cp ${rig.dir}/config.pristine .git/config`);
      }
    })();
    const tracked = call.catch(() => undefined).finally(() => inFlight.delete(tracked));
    inFlight.add(tracked);
    return call;
  };
  /** Waits until no racing call still has the container swapping the config. */
  const quiet = async () => {
    while (inFlight.size > 0) await Promise.all([...inFlight]);
  };

  const noMarker = () => assert.equal(existsSync(ran) ? readFileSync(ran, 'utf8') : '', '', 'the marker program ran');

  before(async () => {
    ns = testNamespace();
    rig = makeGitRig(`${ns.names.prefix}-gh-`);
    const env = gitEnv(rig.home) as Record<string, string>;
    const pick = [
      'HOME',
      'XDG_CONFIG_HOME',
      'GIT_CONFIG_NOSYSTEM',
      'GIT_AUTHOR_NAME',
      'GIT_AUTHOR_EMAIL',
      'GIT_COMMITTER_NAME',
      'GIT_COMMITTER_EMAIL',
    ];
    const hostEnv = Object.fromEntries(pick.map((k) => [k, env[k] as string]));
    git = (args, opts) => runGit(args, { ...opts, env: { ...hostEnv, ...opts?.env } });
    rig.git(rig.repo, 'remote', 'set-head', 'origin', 'main');
    marker = join(rig.dir, 'marker.sh');
    ran = join(rig.dir, 'marker-ran');
    writeFileSync(marker, `#!/bin/sh\necho "$0 $*" >> ${ran}\ncat >/dev/null 2>&1 || true\n`);
    chmodSync(marker, 0o755);
    mkdirSync(join(rig.dir, 'outside'));
    writeFileSync(join(rig.dir, 'outside', 'keep.txt'), 'the user’s\n');
    // A worktree made while the repository is clean: the attacks then go after it.
    const made = await addWorktree(await checkWorktreeCreate({ folder: rig.repo, branch: 'victim/one', git }), {
      folder: rig.repo,
      branch: 'victim/one',
      git,
    });
    victimWt = made.path;
    rig.commit(victimWt, 'work.txt', 'work\n');
    pristine = readFileSync(join(rig.repo, '.git', 'config'), 'utf8');
    container = await ns.docker.createContainer({
      name: `${ns.names.prefix}-githard`,
      Image: IMAGE,
      Cmd: ['sleep', 'infinity'],
      User: `${process.getuid!()}:${process.getgid!()}`,
      HostConfig: { Binds: [`${rig.dir}:${rig.dir}`], AutoRemove: false },
    });
    await container.start();
    shell = await shellSession(container, rig.repo);
  });

  after(async () => {
    shell?.close();
    await ns?.cleanup();
    rig?.cleanup();
  });

  /** The config as git init/clone and our create left it, written back by the container. */
  async function restore(): Promise<void> {
    writeFileSync(join(rig.dir, 'config.pristine'), pristine);
    await inside(`cp ${rig.dir}/config.pristine .git/config`);
  }

  /** Every host git operation the extension makes, each on its own, for the refusal loop. */
  function operations(): Array<[string, () => Promise<unknown>]> {
    const create = (branch: string): CreateWorktreeOptions => ({ folder: rig.repo, branch, git });
    return [
      ['listWorktrees (the Worktrees view: status, rev-list)', () => listWorktrees(rig.repo, { git })],
      ['checkWorktreeCreate', () => checkWorktreeCreate(create('attack/check'))],
      [
        'addWorktree (fetch, worktree add, checkout)',
        () =>
          addWorktree(
            { root: rig.repo, path: join(rig.repo, '.worktrees', 'tbx-attack-add'), branch: 'attack/add', base: 'main' },
            create('attack/add'),
          ),
      ],
      ['syncWorktree (fetch, rebase, push)', () => syncWorktree({ folder: rig.repo, branch: 'victim/one', git })],
      ['removalRisk', () => removalRisk(rig.repo, 'victim/one', { git })],
      ['worktreeChanges (diff, ls-files)', () => worktreeChanges(rig.repo, 'victim/one', { git })],
      [
        'fileAtCommit (Compare with Base: show)',
        () => fileAtCommit(victimWt, rig.git(rig.repo, 'rev-parse', 'origin/main'), 'README.md', { git }),
      ],
      ['removeWorktree', () => removeWorktree({ folder: rig.repo, branch: 'victim/one', git })],
      ['pruneMerged (fetch, branch --merged)', () => pruneMerged({ folder: rig.repo, git })],
      ['defaultBranch', () => defaultBranch(rig.repo, { git })],
      ['recordedBase', () => recordedBase(rig.repo, 'victim/one', { git })],
    ];
  }

  /** Each config attack as the container appends it, and the key git would read. */
  const attacks = (m: string): Array<[string, string]> => [
    [`[core]\n\tfsmonitor = ${m}\n`, 'core.fsmonitor'],
    [`[Core]\n\tHooksPath = ${rig.dir}/hooks\n`, 'core.hookspath'],
    [`[core]\n\tsshCommand = ${m}\n`, 'core.sshcommand'],
    [`[core]\n\tgitProxy = ${m}\n`, 'core.gitproxy'],
    [`[core]\n\taskPass = ${m}\n`, 'core.askpass'],
    [`[core]\n\tpager = ${m}\n`, 'core.pager'],
    [`[core]\n\teditor = ${m}\n`, 'core.editor'],
    [`[core]\n\tworktree = ${rig.dir}/outside\n`, 'core.worktree'],
    [`[sequence]\n\teditor = ${m}\n`, 'sequence.editor'],
    [`[credential]\n\thelper = !${m}\n`, 'credential.helper'],
    [`[gpg]\n\tprogram = ${m}\n[commit]\n\tgpgSign = true\n`, 'gpg.program'],
    [`[diff "x"]\n\ttextconv = ${m}\n`, 'diff.x.textconv'],
    [`[diff "x"]\n\tcommand = ${m}\n`, 'diff.x.command'],
    [`[filter "x"]\n\tclean = ${m}\n\tsmudge = ${m}\n`, 'filter.x.clean'],
    [`[filter "X"]\n\tprocess = ${m}\n`, 'filter.X.process'],
    [`[merge "x"]\n\tdriver = ${m} %O %A %B\n`, 'merge.x.driver'],
    [`[remote "origin"]\n\tuploadpack = ${m}\n`, 'remote.origin.uploadpack'],
    [`[remote "origin"]\n\treceivepack = ${m}\n`, 'remote.origin.receivepack'],
    [`[remote "origin"]\n\tproxy = http://127.0.0.1:9\n`, 'remote.origin.proxy'],
    [`[url "ext::${m} %S "]\n\tinsteadOf = ${rig.origin}\n`, `url.ext::${m} %S .insteadof`],
    [`[uploadpack]\n\tpackObjectsHook = ${m}\n`, 'uploadpack.packobjectshook'],
    [`[include]\n\tpath = ${rig.dir}/evil.config\n`, 'include.path'],
    [`[includeIf "gitdir:/"]\n\tpath = ${rig.dir}/evil.config\n`, 'includeif.gitdir:/.path'],
    [`[extensions]\n\tpartialClone = origin\n[remote "origin"]\n\tpromisor = true\n`, 'extensions.partialclone'],
    [`[remote "origin"]\n\tpromisor = true\n`, 'remote.origin.promisor'],
  ];

  it('refuses every operation on a repository whose config names a program, by its key, before git runs', async () => {
    writeFileSync(join(rig.dir, 'evil.config'), `[core]\n\tfsmonitor = ${marker}\n`);
    for (const [text, key] of attacks(marker)) {
      writeFileSync(join(rig.dir, 'attack.config'), text);
      await inside(`cat ${rig.dir}/attack.config >> .git/config`);
      for (const [name, op] of operations()) {
        await assert.rejects(op(), (err: unknown) => {
          assert.ok(err instanceof WorktreeError, `${key} / ${name}: ${String(err)}`);
          assert.equal(err.code, 'repo-config-unsafe', `${key} / ${name}: ${err.message}`);
          assert.equal(err.key, key, `${key} / ${name}`);
          assert.ok(err.message.includes(displayConfigKey(key)), err.message);
          assert.ok(err.message.includes(join(rig.repo, '.git', 'config')), err.message);
          assert.deepEqual(err.actions, ['open-file']);
          assert.equal(err.file, join(rig.repo, '.git', 'config'));
          return true;
        });
      }
      // The two best-effort steps refuse silently: no content, no git step of the rollback, nothing run.
      assert.equal(
        await fileAtRef({ root: rig.repo, path: '', branch: 'x', base: 'main' }, 'origin/main', 'README.md', { git }),
        undefined,
      );
      await rollbackCreate(rig.repo, 'victim/one', join(rig.repo, '.worktrees', 'tbx-not-there'), { git });
      assert.notEqual(rig.git(rig.repo, 'branch', '--list', 'victim/one'), '', 'the branch is kept: git did not run');
      const refusal = await repositoryRefusal(rig.repo);
      assert.equal(refusal?.key, key);
      noMarker();
      await restore();
    }
  });

  it('proves the attacks are real: plain host git on the same repository runs the marker', async () => {
    await inside(`printf '[core]\\n\\tfsmonitor = ${marker}\\n' >> .git/config && echo changed >> ${victimWt}/README.md`);
    execFileSync('git', ['-C', victimWt, 'status', '--porcelain'], { env: gitEnv(rig.home), stdio: 'ignore' });
    assert.notEqual(existsSync(ran) ? readFileSync(ran, 'utf8') : '', '', 'fsmonitor ran under plain git');
    writeFileSync(ran, '');
    await restore();
    rig.git(victimWt, 'checkout', '--', 'README.md');
  });

  it('runs nothing when the container rewrites the config between the check and git’s read, and the operations still work', async () => {
    // Everything at once: program keys, an include, a partial clone, filters and a merge driver
    // named by attributes the container also wrote, hooks in .git/hooks and in a hooksPath.
    const evil =
      pristine +
      `[core]\n\tfsmonitor = ${marker}\n\thooksPath = ${rig.dir}/hooks\n\tsshCommand = ${marker}\n\tpager = ${marker}\n\teditor = ${marker}\n` +
      `[sequence]\n\teditor = ${marker}\n[credential]\n\thelper = !${marker}\n[gpg]\n\tprogram = ${marker}\n[commit]\n\tgpgSign = true\n` +
      `[filter "x"]\n\tclean = ${marker}\n\tsmudge = ${marker}\n\trequired = false\n[merge "x"]\n\tdriver = ${marker} %O %A %B\n[diff "x"]\n\ttextconv = ${marker}\n\tcommand = ${marker}\n` +
      `[remote "origin"]\n\tuploadpack = ${marker}\n\treceivepack = ${marker}\n[uploadpack]\n\tpackObjectsHook = ${marker}\n` +
      `[include]\n\tpath = ${rig.dir}/evil.config\n[extensions]\n\tpartialClone = origin\n`;
    writeFileSync(join(rig.dir, 'config.evil'), evil);
    writeFileSync(join(rig.dir, 'evil.config'), `[core]\n\tfsmonitor = ${marker}\n`);
    await inside(
      `mkdir -p ${rig.dir}/hooks .git/info && for h in post-checkout pre-push reference-transaction post-rewrite pre-rebase pre-auto-gc post-merge post-commit pre-commit; do cp ${marker} ${rig.dir}/hooks/$h; cp ${marker} .git/hooks/$h; done && echo '* filter=x merge=x diff=x' > .git/info/attributes && echo '* filter=x merge=x diff=x' > ${victimWt}/.gitattributes`,
    );
    writeFileSync(join(rig.dir, 'config.pristine'), pristine);
    const listed = await listWorktrees(rig.repo, { git: racing });
    assert.equal(listed.find((w) => w.branch === 'victim/one')?.dirty, true, 'the untracked .gitattributes makes it dirty');
    const changes = await worktreeChanges(rig.repo, 'victim/one', { git: racing });
    assert.deepEqual(changes.changes.map((c) => c.path).sort(), ['.gitattributes', 'work.txt']);
    assert.equal(await fileAtCommit(victimWt, changes.mergeBase, 'README.md', { git: racing }), 'hello\n');
    rig.git(victimWt, 'add', '.gitattributes');
    // The test's own git, too, keeps away from the hooks the container dropped.
    rig.git(victimWt, '-c', 'core.hooksPath=/dev/null', 'commit', '-q', '-m', 'attributes');
    const theirs = rig.commit(rig.other, 'theirs.txt', 'theirs\n');
    rig.git(rig.other, 'push', 'origin', 'main');
    const synced = await syncWorktree({ folder: rig.repo, branch: 'victim/one', git: racing });
    assert.equal(synced.pushed, true);
    assert.equal(rig.git(victimWt, 'merge-base', '--is-ancestor', theirs, 'HEAD'), '');
    const made = await addWorktree(await checkWorktreeCreate({ folder: rig.repo, branch: 'race/add', git: racing }), {
      folder: rig.repo,
      branch: 'race/add',
      git: racing,
    });
    assert.equal(readFileSync(join(made.path, 'theirs.txt'), 'utf8'), 'theirs\n', 'checked out without the filter');
    const risk = await removalRisk(rig.repo, 'race/add', { git: racing });
    assert.deepEqual(risk.dirtyFiles, []);
    const removed = await removeWorktree({ folder: rig.repo, branch: 'race/add', deleteRemote: true, git: racing });
    assert.equal(removed.branchDeleted, true);
    const pruned = await pruneMerged({ folder: rig.repo, dryRun: true, git: racing });
    assert.ok(Array.isArray(pruned.removed));
    await quiet();
    assert.ok(swaps > 20, `the config was swapped before each of ${swaps} git calls`);
    noMarker();
    await inside(`rm -f .git/hooks/* .git/info/attributes`);
  });

  it('lists a fake worktree made of plain files only as git would, and runs nothing in it', async () => {
    const fake = join(rig.repo, '.worktrees', 'tbx-fake');
    await inside(
      `mkdir -p .git/worktrees/tbx-fake ${fake} && echo ${fake}/.git > .git/worktrees/tbx-fake/gitdir && echo ../.. > .git/worktrees/tbx-fake/commondir && ` +
        `echo 'ref: refs/heads/victim/one' > .git/worktrees/tbx-fake/HEAD && echo 'gitdir: ${rig.repo}/.git/worktrees/tbx-fake' > ${fake}/.git && ` +
        `printf '[core]\\n\\tfsmonitor = ${marker}\\n' >> .git/config`,
    );
    // With the key in the config: refused, saying the key.
    await assert.rejects(listWorktrees(rig.repo, { git }), (err: unknown) => err instanceof WorktreeError && err.key === 'core.fsmonitor');
    await restore();
    // Without the key, the fake is a registration like any other (its .git file and gitdir point
    // at each other).
    const listed = await listWorktrees(rig.repo, { git });
    assert.ok(listed.some((w) => w.path === fake));
    // With the key written between each check and git's read, its status runs on the checked
    // config: nothing runs. The entries are listed side by side, so one entry's check can meet
    // the key another's swap wrote and refuse the listing: a refusal is safe, a run is not.
    const before = swaps;
    await listWorktrees(rig.repo, { git: racing }).catch((err: unknown) => {
      assert.ok(err instanceof WorktreeError && err.code === 'repo-config-unsafe', String(err));
    });
    await quiet();
    assert.ok(swaps > before, 'a git call ran on the swapped config');
    noMarker();
    // A registration whose gitdir and .git file do not point at each other is not listed.
    await inside(`echo 'gitdir: ${rig.dir}/outside' > ${fake}/.git`);
    await assert.rejects(listWorktrees(rig.repo, { git }), (err: unknown) => err instanceof WorktreeError && err.code === 'path-unsafe');
    await inside(`rm -rf .git/worktrees/tbx-fake ${fake}`);
  });

  it('refuses a symlinked .worktrees, worktree, .git/info and .git/info/exclude, saying where, and touches nothing outside', async () => {
    const outside = join(rig.dir, 'outside');
    const before = readdirSync(outside).sort();
    const pathRefusal = (where: string) => (err: unknown) => {
      assert.ok(err instanceof WorktreeError, String(err));
      assert.equal(err.code, 'path-unsafe', err.message);
      assert.ok(err.message.includes(where), err.message);
      return true;
    };
    // .worktrees as a symbolic link into a folder the user can write.
    await inside(`mv .worktrees ${rig.dir}/worktrees.real && ln -s ${outside} .worktrees`);
    const dotWorktrees = join(rig.repo, '.worktrees');
    await assert.rejects(checkWorktreeCreate({ folder: rig.repo, branch: 'via/link', git }), pathRefusal(dotWorktrees));
    await assert.rejects(makeWorktreeFolder(join(dotWorktrees, 'tbx-via-link')), pathRefusal(dotWorktrees));
    await assert.rejects(listWorktrees(rig.repo, { git }), pathRefusal(dotWorktrees));
    assert.equal((await repositoryRefusal(rig.repo))?.code, 'path-unsafe');
    await inside(`rm .worktrees && mv ${rig.dir}/worktrees.real .worktrees`);
    // One worktree swapped for a link to a folder outside: remove must not delete through it.
    await inside(
      `mv ${victimWt} ${rig.dir}/victim.real && ln -s ${outside} ${victimWt} && echo 'gitdir: ${rig.repo}/.git/worktrees/tbx-victim-one' > ${outside}/.git`,
    );
    await assert.rejects(removeWorktree({ folder: rig.repo, branch: 'victim/one', force: true, git }), pathRefusal(victimWt));
    await assert.rejects(syncWorktree({ folder: rig.repo, branch: 'victim/one', git }), pathRefusal(victimWt));
    await inside(`rm ${victimWt} ${outside}/.git && mv ${rig.dir}/victim.real ${victimWt}`);
    // .git/info/exclude as a link to a file outside: the create refuses and leaves nothing behind.
    writeFileSync(join(outside, 'victim'), 'do not touch\n');
    await inside(`rm -f .git/info/exclude && ln -s ${outside}/victim .git/info/exclude`);
    const exclude = join(rig.repo, '.git', 'info', 'exclude');
    await assert.rejects(
      addWorktree(await checkWorktreeCreate({ folder: rig.repo, branch: 'via/exclude', git }), {
        folder: rig.repo,
        branch: 'via/exclude',
        git,
      }),
      pathRefusal(exclude),
    );
    assert.equal(readFileSync(join(outside, 'victim'), 'utf8'), 'do not touch\n');
    assert.equal(existsSync(join(rig.repo, '.worktrees', 'tbx-via-exclude')), false, 'rolled back');
    // .git/info itself as a link.
    await inside(`rm .git/info/exclude && mv .git/info ${rig.dir}/info.real && ln -s ${outside} .git/info`);
    await assert.rejects(
      addWorktree(await checkWorktreeCreate({ folder: rig.repo, branch: 'via/info', git }), { folder: rig.repo, branch: 'via/info', git }),
      pathRefusal(join(rig.repo, '.git', 'info')),
    );
    await inside(`rm .git/info && mv ${rig.dir}/info.real .git/info`);
    assert.deepEqual(readdirSync(outside).sort(), [...before, 'victim'].sort());
    assert.ok(lstatSync(join(rig.repo, '.git', 'info')).isDirectory());
    noMarker();
  });
});
