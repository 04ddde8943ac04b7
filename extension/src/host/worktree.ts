/**
 * Agent worktrees on the host: create, list, remove, sync and prune, with host git (host/git.ts)
 * and the layout plan/worktree.ts decides, after upstream's internal/worktree (worktree.go).
 * No Docker here: the backend stops or opens the worktree's container around these calls.
 *
 * Every refusal is a WorktreeError with one message that says what to do next, and a create that
 * fails leaves nothing behind: no worktree, no branch, no recorded base (rollbackCreate).
 */
import { constants } from 'node:fs';
import { cp, lstat, mkdir, open, readdir, rm, rmdir } from 'node:fs/promises';
import { dirname, join, relative, sep } from 'node:path';
import { WORKTREE } from '../contract/upstream';
import {
  baseConfigKey,
  branchDeleteArgs,
  branchInputProblem,
  continueSteps,
  ensureExcludeLine,
  findToolboxWorktree,
  parseAheadBehind,
  parseBranchList,
  pruneCandidates,
  seedCandidates,
  shouldDeleteRemote,
  syncSteps,
  toolboxWorktrees,
  worktreePath,
} from '../plan/worktree';
import { GIT_LIMITS_MS, gitReason, RepoGit, runGit, type GitPlace, type GitResult, type GitRunner } from './git';
import {
  checkedValue,
  checkRepositoryConfig,
  findRepository,
  readRealFile,
  realDirectory,
  toolboxRegistrations,
  WorktreeError,
  type Registration,
  type Repository,
} from './gitRepo';

export { WorktreeError } from './gitRepo';

export interface WorktreeGit {
  /** The git runner under the hardening (tests give one with their own HOME). */
  git?: GitRunner;
}

/** Host git on the repository holding `folder`, found and checked as data (host/gitRepo.ts). */
async function repoGit(folder: string, opts: WorktreeGit): Promise<RepoGit> {
  return new RepoGit(await findRepository(folder), opts.git ?? runGit);
}

/**
 * The main repository's root for any folder inside it, a linked worktree included: the parent of
 * the common `.git` (upstream repoRoot), read from the files. A bare repository, or none, is refused.
 */
export async function repositoryRoot(folder: string, _opts: WorktreeGit = {}): Promise<string> {
  return (await findRepository(folder)).root;
}

/**
 * Why host git refuses the repository holding `folder`, when it does: its config holds a key
 * outside the allowlist, or a symbolic link stands where git keeps a folder or file. undefined for
 * a repository host git runs on, and for a folder in no repository.
 */
export async function repositoryRefusal(folder: string): Promise<WorktreeError | undefined> {
  try {
    const repo = await findRepository(folder);
    await checkRepositoryConfig(repo);
    await toolboxRegistrations(repo);
    return undefined;
  } catch (err) {
    return err instanceof WorktreeError && (err.code === 'repo-config-unsafe' || err.code === 'path-unsafe') ? err : undefined;
  }
}

/** The default branch from origin/HEAD, without `origin/`; undefined when unset. */
async function defaultBranchOf(g: RepoGit): Promise<string | undefined> {
  const ref = await g.ok('read', g.main, ['symbolic-ref', '--short', 'refs/remotes/origin/HEAD']);
  return ref?.replace(/^origin\//, '') || undefined;
}

/** The repository's default branch from origin/HEAD, without `origin/`; undefined when unset. */
export async function defaultBranch(root: string, opts: WorktreeGit = {}): Promise<string | undefined> {
  return defaultBranchOf(await repoGit(root, opts));
}

/** The base recorded for a branch, read from the checked config. */
async function recordedBaseOf(repo: Repository, branch: string): Promise<string | undefined> {
  return checkedValue(await checkRepositoryConfig(repo), 'branch', branch, WORKTREE.baseKeySuffix.slice(1)) || undefined;
}

/** The base recorded for a branch at create, if any. */
export async function recordedBase(root: string, branch: string, _opts: WorktreeGit = {}): Promise<string | undefined> {
  return recordedBaseOf(await findRepository(root), branch);
}

/** The recorded base, else the default branch. */
async function baseOf(g: RepoGit, branch: string): Promise<string | undefined> {
  return (await recordedBaseOf(g.repo, branch)) ?? (await defaultBranchOf(g));
}

export interface CreateWorktreeOptions extends WorktreeGit {
  /** Any folder inside the repository. */
  folder: string;
  branch: string;
  /** The base branch; the repository's default branch (origin/HEAD) when undefined. */
  base?: string;
  /** Do not contact origin: branch from the base as last fetched (offline). */
  noFetch?: boolean;
  /** `worktree.seed`: more gitignored paths to copy. */
  seed?: readonly string[];
  log?: (line: string) => void;
}

export interface CreatedWorktree {
  root: string;
  path: string;
  branch: string;
  base: string;
  /** What the branch was made from: `origin/<base>`, or the local base offline. */
  startRef: string;
  /** Repo-relative paths copied into the worktree. */
  seeded: string[];
  /** Things the user should know (offline create, a base not recorded…). */
  notes: string[];
}

/** What the refusals found: where the worktree goes and what it branches from. Nothing is created yet. */
export interface CheckedWorktree {
  root: string;
  path: string;
  branch: string;
  base: string;
}

/**
 * The refusals of a create (branch name, no origin, unknown base, existing branch or folder, a
 * symbolic link where `.worktrees` goes), all reads. A caller that works alongside the rest (the
 * backend starts the container while git fetches and adds) may make the empty folder itself once
 * this passes: `git worktree add` fills an existing empty folder in place, so a bind mount of it
 * sees the checkout.
 */
export async function checkWorktreeCreate(opts: CreateWorktreeOptions): Promise<CheckedWorktree> {
  const branch = opts.branch;
  const problem = branchInputProblem(branch);
  if (problem) throw new WorktreeError('bad-branch', problem);
  const g = await repoGit(opts.folder, opts);
  const root = g.repo.root;
  const path = worktreePath(root, branch);
  const config = await checkRepositoryConfig(g.repo);
  await realDirectory(join(root, WORKTREE.dir));
  // The checks are independent reads: they run side by side, and refuse in this order.
  const [valid, base, taken, pathTaken] = await Promise.all([
    g.run('read', g.main, ['check-ref-format', '--branch', branch]),
    opts.base !== undefined ? opts.base : defaultBranchOf(g),
    g.run('read', g.main, ['rev-parse', '--verify', '--quiet', `refs/heads/${branch}`]),
    exists(path),
  ]);
  if (valid.code !== 0) {
    throw new WorktreeError(
      'bad-branch',
      `Git does not accept "${branch}" as a branch name (no spaces, "..", "~", "^", ":", "?", "*", "[" or a trailing "/" or ".lock"). Choose another name, such as fix/login-timeout.`,
    );
  }
  if (checkedValue(config, 'remote', 'origin', 'url') === undefined) {
    throw new WorktreeError(
      'no-origin',
      `The repository ${root} has no remote named origin. An agent worktree branches from origin's base branch and pushes there: add one with git remote add origin <url>, then try again.`,
    );
  }
  if (base === undefined) {
    throw new WorktreeError(
      'no-default-branch',
      `Could not tell the default branch of ${root}: origin/HEAD is not set. Choose the base branch yourself, or run git remote set-head origin --auto once.`,
    );
  }
  if (taken.code === 0) {
    throw new WorktreeError(
      'branch-exists',
      `A branch named ${branch} already exists in ${root}. Choose another name, or open that branch's worktree if it has one.`,
    );
  }
  if (pathTaken) {
    throw new WorktreeError(
      'dir-exists',
      `The folder ${path} already exists (another branch maps to the same folder name, or it was left behind). Choose another branch name, or remove that folder.`,
    );
  }
  return { root, path, branch, base };
}

/**
 * The create after its checks: fetch, `worktree add` (without checkout) and the checkout on the
 * checked config, the base, push.autoSetupRemote, the branch's upstream (its own name on origin),
 * the exclude line and the seed. A failure after the add rolls back; before it nothing was created
 * (but an empty folder the caller made for the worktree, which the caller removes).
 */
export async function addWorktree(checked: CheckedWorktree, opts: CreateWorktreeOptions): Promise<CreatedWorktree> {
  const g = await repoGit(checked.root, opts);
  const log = opts.log ?? (() => undefined);
  const { root, path, branch, base } = checked;
  const notes: string[] = [];
  let startRef = `origin/${base}`;
  if (opts.noFetch) {
    // Upstream branches from the local base offline; one that only exists as origin/<base> still works.
    const local = (await g.run('read', g.main, ['rev-parse', '--verify', '--quiet', `refs/heads/${base}`])).code === 0;
    startRef = local ? base : `origin/${base}`;
    if (!local && (await g.run('read', g.main, ['rev-parse', '--verify', '--quiet', `refs/remotes/origin/${base}`])).code !== 0) {
      throw new WorktreeError(
        'no-base',
        `There is no branch ${base} here, not even as last fetched from origin. Connect and create it with a fetch, or choose another base.`,
      );
    }
    notes.push(
      `Created without contacting origin: ${branch} starts from ${startRef} as last fetched, which may be behind origin. Sync it once you are online.`,
    );
  } else {
    log(`git fetch origin ${base}`);
    const fetched = await g.run('network', g.main, ['fetch', '--no-prune', 'origin', '--', base]);
    if (fetched.code !== 0) {
      const why = gitReason(fetched);
      const missing = /couldn't find remote ref/i.test(fetched.stderr);
      throw new WorktreeError(
        missing ? 'no-base' : 'fetch-failed',
        missing
          ? `origin has no branch ${base}. Choose another base branch.`
          : `Could not fetch ${base} from origin (${why}). Check the connection and try again, or create the worktree offline from the last fetched ${base}.`,
      );
    }
  }

  log(`git worktree add --no-track -b ${branch} ${path} ${startRef}`);
  // The add runs on the repository's own files (it writes the registration) without a checkout;
  // the checkout, where filters and hooks would run, is a reset on the checked config.
  await realDirectory(join(root, WORKTREE.dir));
  let added = await g.run('local', g.main, ['worktree', 'add', '--no-checkout', '--no-track', '-b', branch, '--', path, startRef], {
    timeoutMs: GIT_LIMITS_MS.network,
  });
  if (added.code === 0) {
    const registration = (await toolboxRegistrations(g.repo)).find((r) => r.path === path);
    added = registration
      ? await g.run('write', g.at(registration), ['reset', '--hard', '--quiet'], { timeoutMs: GIT_LIMITS_MS.network })
      : { code: 1, stdout: '', stderr: `fatal: ${path} is not registered as a worktree after the add` };
  }
  if (added.code !== 0) {
    await rollbackCreate(root, branch, path, opts);
    throw new WorktreeError(
      'add-failed',
      `Git could not create the worktree (${gitReason(added)}). Nothing was created; fix the cause and try again.`,
    );
  }
  // The steps after the add touch different files, so they run side by side; the two config
  // writes stay one after the other (git locks .git/config for each write).
  const seeding = seedWorktree(root, path, opts.seed ?? [], opts).catch((err: unknown) => {
    notes.push(`Some gitignored files could not be copied into the worktree: ${err instanceof Error ? err.message : String(err)}`);
    return [] as string[];
  });
  try {
    const [recorded, autoSetup] = await Promise.all([
      g.run('local', g.main, ['config', baseConfigKey(branch), base]),
      checkRepositoryConfig(g.repo).then((c) => checkedValue(c, 'push', undefined, 'autosetupremote')),
      excludeWorktreesDir(g.repo),
    ]);
    if (recorded.code !== 0)
      notes.push(`The base ${base} could not be recorded for ${branch}; sync and prune will use the default branch.`);
    if (autoSetup === undefined) await g.run('local', g.main, ['config', 'push.autoSetupRemote', 'true']);
    // The branch tracks its own name on origin from the start: the container's git cannot write
    // .git/config (a protected path, plan/protect.ts), so its `git push` could not record it, and
    // Remove's `branch -d` compares with that upstream.
    await g.run('local', g.main, ['config', `branch.${branch}.remote`, 'origin']);
    await g.run('local', g.main, ['config', `branch.${branch}.merge`, `refs/heads/${branch}`]);
  } catch (err) {
    await seeding;
    await rollbackCreate(root, branch, path, opts);
    throw err;
  }
  const seeded = await seeding;
  return { root, path, branch, base, startRef, seeded, notes };
}

/**
 * Undoes a create, for a failure at any step after `git worktree add` (its own, or the
 * container's): the worktree, its folder, the branch and the recorded base. Best effort, each step
 * on its own, so one that fails does not keep the others from running.
 */
export async function rollbackCreate(root: string, branch: string, path: string, opts: WorktreeGit = {}): Promise<void> {
  const g = await repoGit(root, opts).catch(() => undefined);
  await g?.run('write', g.main, ['worktree', 'remove', '--force', '--', path]).catch(() => undefined);
  // rm does not follow a symbolic link: one the container put there is removed, not its target.
  await rm(path, { recursive: true, force: true }).catch(() => undefined);
  await g?.run('write', g.main, ['worktree', 'prune']).catch(() => undefined);
  await g?.run('local', g.main, ['branch', '-D', '--', branch]).catch(() => undefined);
  await g?.run('local', g.main, ['config', '--unset', baseConfigKey(branch)]).catch(() => undefined);
}

/**
 * `.worktrees/` in the repository's own `.git/info/exclude`, once; the tracked .gitignore is left
 * alone. `.git/info` must be a real folder and the exclude file a regular one: neither is followed
 * if it is a symbolic link.
 */
async function excludeWorktreesDir(repo: Repository): Promise<void> {
  const info = join(repo.common, 'info');
  const file = join(info, 'exclude');
  if (!(await realDirectory(info))) await mkdir(info);
  const body = (await readRealFile(file, 1024 * 1024)) ?? '';
  const next = ensureExcludeLine(body);
  if (!next.changed) return;
  const handle = await open(file, constants.O_WRONLY | constants.O_CREAT | constants.O_TRUNC | (constants.O_NOFOLLOW ?? 0), 0o644).catch(
    (err: NodeJS.ErrnoException) => {
      throw err.code === 'ELOOP'
        ? new WorktreeError('path-unsafe', `${file} is a symbolic link, where git keeps a real file. Remove it, then try again.`)
        : err;
    },
  );
  try {
    await handle.writeFile(next.body);
  } finally {
    await handle.close();
  }
}

/** The first symbolic link (or non-folder) on the way from `base` down to `path`'s parent, if any. */
async function linkOnTheWay(base: string, path: string): Promise<string | undefined> {
  let dir = base;
  for (const part of relative(base, dirname(path))
    .split(sep)
    .filter((p) => p !== '')) {
    dir = join(dir, part);
    const info = await lstat(dir).catch(() => undefined);
    if (info === undefined) return undefined;
    if (info.isSymbolicLink() || !info.isDirectory()) return dir;
  }
  return undefined;
}

/**
 * Copies the gitignored per-repo state into a worktree (upstream's seed): each candidate only when
 * git ignores it in the main checkout, and never over something already in the worktree, nor
 * through a symbolic link the checkout has where the copy would go.
 * Returns the paths copied (a directory counts once).
 */
export async function seedWorktree(root: string, path: string, extra: readonly string[], opts: WorktreeGit = {}): Promise<string[]> {
  const g = await repoGit(root, opts);
  const entries = await readdir(root).catch(() => [] as string[]);
  const copied: string[] = [];
  for (const rel of seedCandidates(entries, extra)) {
    const src = join(root, rel);
    const info = await lstat(src).catch(() => undefined);
    if (!info) continue;
    const probe = info.isDirectory() ? `${rel}/` : rel;
    if ((await g.run('read', g.main, ['check-ignore', '-q', '--', probe])).code !== 0) continue;
    const dst = join(path, rel);
    const link = (await linkOnTheWay(path, dst)) ?? (await linkOnTheWay(root, src));
    if (link !== undefined) throw new WorktreeError('path-unsafe', `${link} is a symbolic link, so ${rel} was not copied through it.`);
    if (await lstat(dst).catch(() => undefined)) continue;
    await mkdir(dirname(dst), { recursive: true });
    await cp(src, dst, { recursive: true, force: false, errorOnExist: false, verbatimSymlinks: true, preserveTimestamps: true });
    copied.push(rel);
  }
  return copied;
}

export interface WorktreeInfo {
  root: string;
  path: string;
  /** undefined while detached (mid-rebase). */
  branch?: string;
  /** The recorded base, else the default branch; undefined when neither is known. */
  base?: string;
  baseRecorded: boolean;
  /** The folder is still there (git keeps a registration after a hand delete). */
  present: boolean;
  dirty: boolean;
  /** Commits on the branch not on origin/<base>, and the other way round. */
  ahead?: number;
  behind?: number;
  rebasing: boolean;
}

/** A worktree's uncommitted files (`status --porcelain` lines), on the checked config. */
async function statusOf(g: RepoGit, place: GitPlace): Promise<GitResult> {
  return g.run('read', place, ['status', '--porcelain']);
}

/** The toolbox worktrees of the repository holding `folder`, with their git state. */
export async function listWorktrees(folder: string, opts: WorktreeGit = {}): Promise<WorktreeInfo[]> {
  const g = await repoGit(folder, opts);
  const root = g.repo.root;
  const registrations = await toolboxRegistrations(g.repo);
  const fallback = await defaultBranchOf(g);
  return Promise.all(
    toolboxWorktrees(root, registrations).map(async (e): Promise<WorktreeInfo> => {
      const r = e as Registration;
      const recorded = e.branch ? await recordedBaseOf(g.repo, e.branch) : undefined;
      const base = recorded ?? fallback;
      const present = !e.prunable;
      const status = present ? await statusOf(g, g.at(r)) : undefined;
      const counts =
        base && e.branch
          ? await g.ok('read', g.main, ['rev-list', '--left-right', '--count', `origin/${base}...refs/heads/${e.branch}`])
          : undefined;
      const ab = counts ? parseAheadBehind(counts) : undefined;
      return {
        root,
        path: e.path,
        branch: e.branch,
        base,
        baseRecorded: recorded !== undefined,
        present,
        dirty: status !== undefined && status.code === 0 && status.stdout.trim() !== '',
        ahead: ab?.ahead,
        behind: ab?.behind,
        rebasing: present ? await rebaseInProgress(r) : false,
      };
    }),
  );
}

/** The toolbox worktree of a branch (its checked registration), or a not-found error naming the way forward. */
async function resolveIn(g: RepoGit, branch: string): Promise<Registration> {
  const found = findToolboxWorktree(g.repo.root, branch, await toolboxRegistrations(g.repo));
  if (!found)
    throw new WorktreeError(
      'not-found',
      `There is no agent worktree for the branch ${branch} in ${g.repo.root}. Refresh the Worktrees view.`,
    );
  return found as Registration;
}

/** The toolbox worktree of a branch, or a not-found error naming the way forward. */
export async function resolveWorktree(root: string, branch: string, opts: WorktreeGit = {}): Promise<Registration> {
  return resolveIn(await repoGit(root, opts), branch);
}

/** A rebase stopped in the worktree: git's state folder is in its own git directory. */
async function rebaseInProgress(r: Pick<Registration, 'gitDir'>): Promise<boolean> {
  for (const dir of ['rebase-merge', 'rebase-apply']) if (await lstat(join(r.gitDir, dir)).catch(() => undefined)) return true;
  return false;
}

/** What removing a worktree would lose: uncommitted files, and commits neither on its base nor pushed. */
export interface RemovalRisk {
  path: string;
  dirtyFiles: string[];
  unmergedCommits: number;
  /** The branch exists on origin (so unmerged commits may still be there). */
  pushed: boolean;
}

export async function removalRisk(root: string, branch: string, opts: WorktreeGit = {}): Promise<RemovalRisk> {
  const g = await repoGit(root, opts);
  const wt = await resolveIn(g, branch);
  const status = wt.prunable ? undefined : await statusOf(g, g.at(wt));
  const dirtyFiles =
    status && status.code === 0
      ? status.stdout
          .split('\n')
          .filter((l) => l.trim() !== '')
          .map((l) => l.slice(3))
      : [];
  const base = await baseOf(g, branch);
  const pushed = (await g.run('read', g.main, ['rev-parse', '--verify', '--quiet', `refs/remotes/origin/${branch}`])).code === 0;
  const excludes = [base ? `origin/${base}` : undefined, pushed ? `origin/${branch}` : undefined].filter(
    (x): x is string => x !== undefined,
  );
  const count = await g.ok('read', g.main, ['rev-list', '--count', `refs/heads/${branch}`, ...excludes.map((x) => `^${x}`)]);
  return { path: wt.path, dirtyFiles, unmergedCommits: count ? Number(count) : 0, pushed };
}

export interface RemoveWorktreeOptions extends WorktreeGit {
  folder: string;
  branch: string;
  /** Discard uncommitted changes and delete the branch even if unmerged (`-D`). */
  force?: boolean;
  /** Also delete the branch on origin (only after the local delete). */
  deleteRemote?: boolean;
}

export interface RemovedWorktree {
  root: string;
  path: string;
  branchDeleted: boolean;
  /** Why the branch was kept, when it was. */
  branchKept?: string;
  remoteDeleted: boolean;
  notes: string[];
}

/**
 * Deletes branches on origin, then their remote-tracking refs here: the push runs on the checked
 * config, whose copy of packed-refs is not the repository's, so a packed one is deleted after.
 */
async function deleteOnOrigin(g: RepoGit, branches: readonly string[]): Promise<GitResult> {
  const pushed = await g.run('network', g.main, ['push', 'origin', '--delete', '--', ...branches]);
  if (pushed.code === 0)
    for (const b of branches) await g.run('local', g.main, ['update-ref', '-d', `refs/remotes/origin/${b}`]).catch(() => undefined);
  return pushed;
}

/** The worktree folder's own checks before git deletes it: a real folder, in `.worktrees`. */
async function checkWorktreeFolder(root: string, path: string): Promise<void> {
  await realDirectory(join(root, WORKTREE.dir));
  await realDirectory(path);
}

/**
 * Removes a worktree (upstream Rm): refuses a dirty one without force, `git worktree remove`,
 * then deletes the branch safely (`-d`; `-D` with force), and on origin only when asked.
 */
export async function removeWorktree(opts: RemoveWorktreeOptions): Promise<RemovedWorktree> {
  const g = await repoGit(opts.folder, opts);
  const root = g.repo.root;
  const wt = await resolveIn(g, opts.branch);
  await checkWorktreeFolder(root, wt.path);
  const force = opts.force === true;
  if (!force && !wt.prunable) {
    const status = await statusOf(g, g.at(wt));
    if (status.code === 0 && status.stdout.trim() !== '') {
      throw new WorktreeError(
        'dirty',
        `The worktree of ${opts.branch} has uncommitted changes. Commit (or stash) them first, or remove it with Force, which discards them.`,
      );
    }
  }
  const removed = await g.run('write', g.main, ['worktree', 'remove', ...(force ? ['--force', '--force'] : []), '--', wt.path]);
  if (removed.code !== 0) {
    throw new WorktreeError(
      'remove-failed',
      `Git did not remove the worktree of ${opts.branch}: ${gitReason(removed)}. Nothing was deleted.`,
    );
  }
  const notes: string[] = [];
  let branchDeleted = false;
  let branchKept: string | undefined;
  if (opts.branch) {
    let del = await g.run('local', g.main, branchDeleteArgs(opts.branch, force));
    if (del.code !== 0 && !force && (await mergedIntoBase(g, opts.branch))) {
      // -d tests the main checkout's HEAD, which may lag origin; merged into origin/<base> is the
      // proof prune uses too, so the branch loses nothing.
      del = await g.run('local', g.main, branchDeleteArgs(opts.branch, true));
    }
    branchDeleted = del.code === 0;
    if (!branchDeleted) {
      branchKept = /not fully merged/i.test(del.stderr)
        ? `The branch ${opts.branch} was kept: it has commits that are not merged. Delete it with Force once you no longer need them.`
        : `The branch ${opts.branch} was kept: ${gitReason(del)}.`;
      notes.push(branchKept);
    }
  }
  const hasRemote = (await g.run('read', g.main, ['rev-parse', '--verify', '--quiet', `refs/remotes/origin/${opts.branch}`])).code === 0;
  let remoteDeleted = false;
  if (shouldDeleteRemote(branchDeleted, opts.deleteRemote === true, hasRemote)) {
    const pushed = await deleteOnOrigin(g, [opts.branch]);
    remoteDeleted = pushed.code === 0;
    if (!remoteDeleted) notes.push(`The branch ${opts.branch} could not be deleted on origin: ${gitReason(pushed)}.`);
  }
  if (branchDeleted) await g.run('local', g.main, ['config', '--unset', baseConfigKey(opts.branch)]);
  return { root, path: wt.path, branchDeleted, branchKept, remoteDeleted, notes };
}

export interface SyncWorktreeOptions extends WorktreeGit {
  folder: string;
  branch: string;
  noFetch?: boolean;
  noPush?: boolean;
  log?: (line: string) => void;
}

export interface SyncedWorktree {
  path: string;
  base: string;
  resumed: boolean;
  pushed: boolean;
}

/**
 * Rebases a worktree's branch onto its recorded base and pushes with `--force-with-lease` (upstream
 * Sync); resumes a rebase a previous sync stopped on. A conflict stops with the rebase in progress
 * and says how to continue.
 */
export async function syncWorktree(opts: SyncWorktreeOptions): Promise<SyncedWorktree> {
  const log = opts.log ?? (() => undefined);
  const g = await repoGit(opts.folder, opts);
  const wt = await resolveIn(g, opts.branch);
  if (wt.prunable) {
    throw new WorktreeError(
      'dir-missing',
      `The folder of the worktree ${opts.branch} (${wt.path}) is gone. Remove the worktree, or create it again.`,
    );
  }
  await checkWorktreeFolder(g.repo.root, wt.path);
  const resumed = await rebaseInProgress(wt);
  const base = await baseOf(g, opts.branch);
  if (base === undefined) {
    throw new WorktreeError(
      'no-base',
      `No base is recorded for ${opts.branch} and origin/HEAD is not set, so there is nothing to rebase onto.`,
    );
  }
  const steps = resumed ? continueSteps(!opts.noPush) : syncSteps(base, { fetch: !opts.noFetch, push: !opts.noPush });
  for (const step of steps) {
    log(`git ${step.join(' ')}`);
    const network = step[0] === 'fetch' || step[0] === 'push';
    const args = step[0] === 'fetch' ? ['fetch', '--no-prune', ...step.slice(1)] : step;
    const r = await g.run(network ? 'network' : 'write', g.at(wt), args);
    if (r.code === 0) continue;
    if (step[0] === 'rebase' && (await rebaseInProgress(wt))) {
      throw new WorktreeError(
        'rebase-conflict',
        `The rebase of ${opts.branch} onto origin/${base} stopped on a conflict; nothing was pushed. Resolve the conflicting files in ${wt.path} and stage them, then run Sync again to continue (or run git rebase --abort there to go back).`,
      );
    }
    throw new WorktreeError('sync-failed', `Sync of ${opts.branch} stopped at git ${step[0]}: ${gitReason(r)}.`);
  }
  return { path: wt.path, base, resumed, pushed: !opts.noPush };
}

export interface PruneOptions extends WorktreeGit {
  folder: string;
  dryRun?: boolean;
  deleteRemote?: boolean;
  /** Called before a worktree is removed (the backend stops its container there). */
  beforeRemove?: (path: string) => Promise<void>;
  log?: (line: string) => void;
}

export interface PruneResult {
  removed: { branch: string; path: string }[];
  kept: { branch: string; path: string; why: string }[];
  notes: string[];
}

/** Removes the toolbox worktrees whose branch is merged into its own base (upstream Prune). */
export async function pruneMerged(opts: PruneOptions): Promise<PruneResult> {
  const log = opts.log ?? (() => undefined);
  const g = await repoGit(opts.folder, opts);
  const root = g.repo.root;
  const entries = await toolboxRegistrations(g.repo);
  const fallback = await defaultBranchOf(g);
  const notes: string[] = [];
  const baseBy = new Map<string, string>();
  for (const e of toolboxWorktrees(root, entries)) {
    if (!e.branch) continue;
    const base = (await recordedBaseOf(g.repo, e.branch)) ?? fallback;
    if (base) baseBy.set(e.branch, base);
    else notes.push(`${e.branch} was skipped: no base is recorded and origin/HEAD is not set.`);
  }
  const merged = new Map<string, Set<string>>();
  for (const base of new Set(baseBy.values())) {
    const fetched = await g.run('network', g.main, ['fetch', '--no-prune', 'origin', '--', base]);
    if (fetched.code !== 0) {
      notes.push(`Worktrees based on ${base} were skipped: ${gitReason(fetched)}.`);
      continue;
    }
    const list = await g.run('read', g.main, ['branch', '--merged', `origin/${base}`]);
    if (list.code === 0) merged.set(base, parseBranchList(list.stdout));
  }
  const candidates = pruneCandidates(
    root,
    entries,
    (b) => baseBy.get(b),
    (base, b) => merged.get(base)?.has(b) === true,
  ) as Registration[];
  const result: PruneResult = { removed: [], kept: [], notes };
  const remote: string[] = [];
  for (const c of candidates) {
    const branch = c.branch as string;
    if (!c.prunable) {
      const status = await statusOf(g, g.at(c));
      if (status.code === 0 && status.stdout.trim() !== '') {
        result.kept.push({ branch, path: c.path, why: 'it has uncommitted changes' });
        continue;
      }
    }
    if (opts.dryRun) {
      result.removed.push({ branch, path: c.path });
      continue;
    }
    log(`Removing the merged worktree ${branch} (${c.path})`);
    await opts.beforeRemove?.(c.path);
    await checkWorktreeFolder(root, c.path);
    const removed = await g.run('write', g.main, ['worktree', 'remove', '--', c.path]);
    if (removed.code !== 0) {
      result.kept.push({ branch, path: c.path, why: gitReason(removed) });
      continue;
    }
    // -D: merged into origin/<base> is the proof; -d would test the local HEAD (upstream's reason).
    const del = await g.run('local', g.main, branchDeleteArgs(branch, true));
    const hasRemote = (await g.run('read', g.main, ['rev-parse', '--verify', '--quiet', `refs/remotes/origin/${branch}`])).code === 0;
    if (shouldDeleteRemote(del.code === 0, opts.deleteRemote === true, hasRemote)) remote.push(branch);
    await g.run('local', g.main, ['config', '--unset', baseConfigKey(branch)]);
    result.removed.push({ branch, path: c.path });
  }
  if (remote.length > 0) {
    const pushed = await deleteOnOrigin(g, remote);
    if (pushed.code !== 0) notes.push(`Could not delete ${remote.join(', ')} on origin: ${gitReason(pushed)}.`);
  }
  return result;
}

async function mergedIntoBase(g: RepoGit, branch: string): Promise<boolean> {
  const base = await baseOf(g, branch);
  if (base === undefined) return false;
  return (await g.run('read', g.main, ['merge-base', '--is-ancestor', `refs/heads/${branch}`, `refs/remotes/origin/${base}`])).code === 0;
}

/** Something is at the path (a symbolic link counts: it is not followed). */
async function exists(p: string): Promise<boolean> {
  return lstat(p).then(
    () => true,
    () => false,
  );
}

/** One file that differs between a worktree (its working tree, uncommitted included) and its base. */
export interface WorktreeChange {
  /** Repo-relative path in the worktree (the new path of a rename). */
  path: string;
  /** The path at the base, for a rename. */
  oldPath?: string;
  status: 'added' | 'modified' | 'deleted' | 'renamed';
}

export interface WorktreeChanges {
  path: string;
  base: string;
  /** The commit the branch left its base at: `git merge-base origin/<base> HEAD`. */
  mergeBase: string;
  changes: WorktreeChange[];
}

/**
 * What the worktree changed against its base, from the host (no container): the working tree,
 * uncommitted and untracked files included, against the merge base with origin/<base>.
 */
export async function worktreeChanges(root: string, branch: string, opts: WorktreeGit = {}): Promise<WorktreeChanges> {
  const g = await repoGit(root, opts);
  const wt = await resolveIn(g, branch);
  const at = g.at(wt);
  const base = await baseOf(g, branch);
  if (base === undefined)
    throw new WorktreeError(
      'no-base',
      `No base is recorded for ${branch} and origin/HEAD is not set, so there is nothing to compare with.`,
    );
  const mergeBase = await g.ok('read', at, ['merge-base', `refs/remotes/origin/${base}`, 'HEAD']);
  if (mergeBase === undefined)
    throw new WorktreeError('no-base', `${branch} shares no history with origin/${base} here. Fetch the base, then compare again.`);
  const diff = await g.run('read', at, ['diff', '--no-ext-diff', '--no-textconv', '--name-status', '-z', '-M', mergeBase, '--']);
  if (diff.code !== 0) throw new WorktreeError('sync-failed', `Could not compare ${branch} with ${base}: ${gitReason(diff)}.`);
  const changes: WorktreeChange[] = [];
  const parts = diff.stdout.split('\0');
  for (let i = 0; i < parts.length - 1;) {
    const code = parts[i++] ?? '';
    if (code.startsWith('R') || code.startsWith('C')) {
      const from = parts[i++] ?? '';
      const to = parts[i++] ?? '';
      changes.push({ path: to, oldPath: from, status: 'renamed' });
    } else {
      const p = parts[i++] ?? '';
      changes.push({ path: p, status: code === 'A' ? 'added' : code === 'D' ? 'deleted' : 'modified' });
    }
  }
  const untracked = await g.run('read', at, ['ls-files', '--others', '--exclude-standard', '-z']);
  if (untracked.code === 0) for (const p of untracked.stdout.split('\0')) if (p !== '') changes.push({ path: p, status: 'added' });
  changes.sort((a, b) => a.path.localeCompare(b.path));
  return { path: wt.path, base, mergeBase, changes };
}

/** A file's content at a commit of a worktree's repository; empty when the file is not there. */
export async function fileAtCommit(worktreePath: string, commit: string, file: string, opts: WorktreeGit = {}): Promise<string> {
  if (!/^[0-9a-f]{40,64}$/.test(commit)) throw new Error(`"${commit}" is not a commit id.`);
  if (file === '' || file.startsWith('/') || file.split('/').includes('..'))
    throw new Error(`"${file}" is not a path inside the repository.`);
  const g = await repoGit(worktreePath, opts);
  const wt = (await toolboxRegistrations(g.repo)).find((r) => r.path === worktreePath && !r.prunable);
  const r = await g.run('read', wt ? g.at(wt) : g.main, ['show', '--no-textconv', `${commit}:${file}`]);
  return r.code === 0 ? r.stdout : '';
}

/**
 * Makes a checked worktree's folder, empty, before `git worktree add` fills it (in place: the
 * folder stays the same, so a container that bind-mounts it sees the checkout). Answers the
 * `.worktrees` folder when this made it too, for a failed create to remove again (while empty).
 * `.worktrees` must be a real folder, not a symbolic link to somewhere else.
 */
export async function makeWorktreeFolder(path: string): Promise<string | undefined> {
  const parent = dirname(path);
  await realDirectory(parent);
  const madeParent = await mkdir(parent, { recursive: true });
  try {
    await mkdir(path);
  } catch (err) {
    if (madeParent !== undefined) await rmdir(parent).catch(() => undefined);
    if ((err as NodeJS.ErrnoException).code === 'EEXIST') {
      throw new WorktreeError(
        'dir-exists',
        `The folder ${path} was made just now by something else. Choose another branch name, or remove that folder.`,
      );
    }
    throw new WorktreeError(
      'add-failed',
      `Could not make the folder ${path} (${(err as Error).message}). Nothing was created; fix the cause and try again.`,
    );
  }
  return madeParent === undefined ? undefined : parent;
}

/**
 * A file as the worktree's checkout will have it: its text at `ref` (`origin/<base>` as last
 * fetched, or the local base offline), or undefined when git does not have it there.
 */
export async function fileAtRef(checked: CheckedWorktree, ref: string, file: string, opts: WorktreeGit = {}): Promise<string | undefined> {
  // Never a failure of its own: a wrong guess only costs the create a second container start.
  const r = await repoGit(checked.root, opts)
    .then((g) => g.run('read', g.main, ['show', '--no-textconv', `${ref}:${file}`]))
    .catch(() => undefined);
  return r?.code === 0 ? r.stdout : undefined;
}
