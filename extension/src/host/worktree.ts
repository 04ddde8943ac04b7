/**
 * Agent worktrees on the host: create, list, remove, sync and prune, with host git (host/git.ts)
 * and the layout plan/worktree.ts decides, after upstream's internal/worktree (worktree.go).
 * No Docker here: the backend stops or opens the worktree's container around these calls.
 *
 * Every refusal is a WorktreeError with one message that says what to do next, and a create that
 * fails leaves nothing behind: no worktree, no branch, no recorded base (rollbackCreate).
 */
import { cp, lstat, mkdir, readdir, readFile, rm, rmdir, stat, writeFile } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';
import { GIT_LIMITS_MS } from './git';
import {
  baseConfigKey,
  branchDeleteArgs,
  branchInputProblem,
  continueSteps,
  ensureExcludeLine,
  findToolboxWorktree,
  parseAheadBehind,
  parseBranchList,
  parseWorktreeList,
  pruneCandidates,
  seedCandidates,
  shouldDeleteRemote,
  syncSteps,
  toolboxWorktrees,
  worktreePath,
  type WorktreeEntry,
} from '../plan/worktree';
import { gitReason, runGit, type GitResult, type GitRunner } from './git';
import { ToolboxError, type WorktreeErrorCode } from '../contract/errors';

export class WorktreeError extends ToolboxError {
  declare readonly code: WorktreeErrorCode;

  constructor(code: WorktreeErrorCode, message: string) {
    super(code, message);
    this.name = 'WorktreeError';
  }
}

export interface WorktreeGit {
  git?: GitRunner;
}

async function git(runner: GitRunner, args: string[], timeoutMs?: number): Promise<GitResult> {
  return runner(args, { timeoutMs });
}

async function ok(runner: GitRunner, args: string[], timeoutMs?: number): Promise<string | undefined> {
  const r = await git(runner, args, timeoutMs);
  return r.code === 0 ? r.stdout.trim() : undefined;
}

/**
 * The main repository's root for any folder inside it, a linked worktree included: the parent of
 * the common `.git` (upstream repoRoot). A bare repository, or none, is refused.
 */
export async function repositoryRoot(folder: string, opts: WorktreeGit = {}): Promise<string> {
  const runner = opts.git ?? runGit;
  const common = await ok(runner, ['-C', folder, 'rev-parse', '--path-format=absolute', '--git-common-dir']);
  if (common === undefined) {
    throw new WorktreeError(
      'not-a-repo',
      `${folder} is not in a git repository, so it cannot have agent worktrees. Open a folder that is a git repository (or run git init in it), then try again.`,
    );
  }
  if (basename(common) !== '.git') {
    throw new WorktreeError(
      'not-a-repo',
      `${folder} is in a bare git repository (${common}), which has no working tree to branch from. Open a checkout of it instead.`,
    );
  }
  return dirname(common);
}

/** The repository's default branch from origin/HEAD, without `origin/`; undefined when unset. */
export async function defaultBranch(root: string, opts: WorktreeGit = {}): Promise<string | undefined> {
  const ref = await ok(opts.git ?? runGit, ['-C', root, 'symbolic-ref', '--short', 'refs/remotes/origin/HEAD']);
  return ref?.replace(/^origin\//, '') || undefined;
}

/** The base recorded for a branch at create, if any. */
export async function recordedBase(root: string, branch: string, opts: WorktreeGit = {}): Promise<string | undefined> {
  return (await ok(opts.git ?? runGit, ['-C', root, 'config', '--get', baseConfigKey(branch)])) || undefined;
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
 * The refusals of a create (branch name, no origin, unknown base, existing branch or folder),
 * all reads. A caller that works alongside the rest (the backend starts the container while git
 * fetches and adds) may make the empty folder itself once this passes: `git worktree add` fills
 * an existing empty folder in place, so a bind mount of it sees the checkout.
 */
export async function checkWorktreeCreate(opts: CreateWorktreeOptions): Promise<CheckedWorktree> {
  const runner = opts.git ?? runGit;
  const branch = opts.branch;
  const problem = branchInputProblem(branch);
  if (problem) throw new WorktreeError('bad-branch', problem);
  const root = await repositoryRoot(opts.folder, opts);
  const path = worktreePath(root, branch);
  // The checks are independent reads: they run side by side, and refuse in this order.
  const [valid, originUrl, base, taken, pathTaken] = await Promise.all([
    git(runner, ['-C', root, 'check-ref-format', '--branch', branch]),
    ok(runner, ['-C', root, 'remote', 'get-url', 'origin']),
    opts.base !== undefined ? opts.base : defaultBranch(root, opts),
    git(runner, ['-C', root, 'rev-parse', '--verify', '--quiet', `refs/heads/${branch}`]),
    exists(path),
  ]);
  if (valid.code !== 0) {
    throw new WorktreeError(
      'bad-branch',
      `Git does not accept "${branch}" as a branch name (no spaces, "..", "~", "^", ":", "?", "*", "[" or a trailing "/" or ".lock"). Choose another name, such as fix/login-timeout.`,
    );
  }
  if (originUrl === undefined) {
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
 * The create after its checks: fetch, `worktree add`, the base, push.autoSetupRemote, the
 * branch's upstream (its own name on origin), the exclude line and the seed. A failure after the add rolls back; before it nothing was created
 * (but an empty folder the caller made for the worktree, which the caller removes).
 */
export async function addWorktree(checked: CheckedWorktree, opts: CreateWorktreeOptions): Promise<CreatedWorktree> {
  const runner = opts.git ?? runGit;
  const log = opts.log ?? (() => undefined);
  const { root, path, branch, base } = checked;
  const notes: string[] = [];
  let startRef = `origin/${base}`;
  if (opts.noFetch) {
    // Upstream branches from the local base offline; one that only exists as origin/<base> still works.
    const local = (await git(runner, ['-C', root, 'rev-parse', '--verify', '--quiet', `refs/heads/${base}`])).code === 0;
    startRef = local ? base : `origin/${base}`;
    if (!local && (await git(runner, ['-C', root, 'rev-parse', '--verify', '--quiet', `refs/remotes/origin/${base}`])).code !== 0) {
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
    const fetched = await git(runner, ['-C', root, 'fetch', 'origin', '--', base], GIT_LIMITS_MS.network);
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
  const added = await git(runner, ['-C', root, 'worktree', 'add', '--no-track', '-b', branch, '--', path, startRef], GIT_LIMITS_MS.network);
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
      git(runner, ['-C', root, 'config', baseConfigKey(branch), base]),
      ok(runner, ['-C', root, 'config', '--get', 'push.autoSetupRemote']),
      excludeWorktreesDir(root),
    ]);
    if (recorded.code !== 0)
      notes.push(`The base ${base} could not be recorded for ${branch}; sync and prune will use the default branch.`);
    if (autoSetup === undefined) await git(runner, ['-C', root, 'config', 'push.autoSetupRemote', 'true']);
    // The branch tracks its own name on origin from the start: the container's git cannot write
    // .git/config (a protected path, plan/protect.ts), so its `git push` could not record it, and
    // Remove's `branch -d` compares with that upstream.
    await git(runner, ['-C', root, 'config', `branch.${branch}.remote`, 'origin']);
    await git(runner, ['-C', root, 'config', `branch.${branch}.merge`, `refs/heads/${branch}`]);
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
  const runner = opts.git ?? runGit;
  await git(runner, ['-C', root, 'worktree', 'remove', '--force', '--', path]).catch(() => undefined);
  await rm(path, { recursive: true, force: true }).catch(() => undefined);
  await git(runner, ['-C', root, 'worktree', 'prune']).catch(() => undefined);
  await git(runner, ['-C', root, 'branch', '-D', '--', branch]).catch(() => undefined);
  await git(runner, ['-C', root, 'config', '--unset', baseConfigKey(branch)]).catch(() => undefined);
}

/** `.worktrees/` in the repository's own `.git/info/exclude`, once; the tracked .gitignore is left alone. */
async function excludeWorktreesDir(root: string): Promise<void> {
  const file = join(root, '.git', 'info', 'exclude');
  const body = await readFile(file, 'utf8').catch((err: NodeJS.ErrnoException) => {
    if (err.code === 'ENOENT') return '';
    throw err;
  });
  const next = ensureExcludeLine(body);
  if (!next.changed) return;
  await mkdir(dirname(file), { recursive: true });
  await writeFile(file, next.body);
}

/**
 * Copies the gitignored per-repo state into a worktree (upstream's seed): each candidate only when
 * git ignores it in the main checkout, and never over something already in the worktree.
 * Returns the paths copied (a directory counts once).
 */
export async function seedWorktree(root: string, path: string, extra: readonly string[], opts: WorktreeGit = {}): Promise<string[]> {
  const runner = opts.git ?? runGit;
  const entries = await readdir(root).catch(() => [] as string[]);
  const copied: string[] = [];
  for (const rel of seedCandidates(entries, extra)) {
    const src = join(root, rel);
    const info = await lstat(src).catch(() => undefined);
    if (!info) continue;
    const probe = info.isDirectory() ? `${rel}/` : rel;
    if ((await git(runner, ['-C', root, 'check-ignore', '-q', '--', probe])).code !== 0) continue;
    const dst = join(path, rel);
    if (!info.isDirectory() && (await exists(dst))) continue;
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

/** The toolbox worktrees of the repository holding `folder`, with their git state. */
export async function listWorktrees(folder: string, opts: WorktreeGit = {}): Promise<WorktreeInfo[]> {
  const runner = opts.git ?? runGit;
  const root = await repositoryRoot(folder, opts);
  const entries = await worktreeEntries(root, runner);
  const fallback = await defaultBranch(root, opts);
  return Promise.all(
    toolboxWorktrees(root, entries).map(async (e): Promise<WorktreeInfo> => {
      const recorded = e.branch ? await recordedBase(root, e.branch, opts) : undefined;
      const base = recorded ?? fallback;
      const present = !e.prunable && (await exists(e.path));
      const status = present ? await git(runner, ['-C', e.path, 'status', '--porcelain']) : undefined;
      const counts =
        base && e.branch
          ? await ok(runner, ['-C', root, 'rev-list', '--left-right', '--count', `origin/${base}...refs/heads/${e.branch}`])
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
        rebasing: present ? await rebaseInProgress(e.path, runner) : false,
      };
    }),
  );
}

async function worktreeEntries(root: string, runner: GitRunner): Promise<WorktreeEntry[]> {
  const r = await git(runner, ['-C', root, 'worktree', 'list', '--porcelain']);
  if (r.code !== 0) throw new WorktreeError('not-a-repo', `Could not list the worktrees of ${root}: ${gitReason(r)}.`);
  return parseWorktreeList(r.stdout);
}

/** The toolbox worktree of a branch, or a not-found error naming the way forward. */
export async function resolveWorktree(root: string, branch: string, opts: WorktreeGit = {}): Promise<WorktreeEntry> {
  const found = findToolboxWorktree(root, branch, await worktreeEntries(root, opts.git ?? runGit));
  if (!found)
    throw new WorktreeError('not-found', `There is no agent worktree for the branch ${branch} in ${root}. Refresh the Worktrees view.`);
  return found;
}

async function rebaseInProgress(path: string, runner: GitRunner): Promise<boolean> {
  for (const dir of ['rebase-merge', 'rebase-apply']) {
    const p = await ok(runner, ['-C', path, 'rev-parse', '--path-format=absolute', '--git-path', dir]);
    if (p && (await exists(p))) return true;
  }
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
  const runner = opts.git ?? runGit;
  const wt = await resolveWorktree(root, branch, opts);
  const present = await exists(wt.path);
  const status = present ? await git(runner, ['-C', wt.path, 'status', '--porcelain']) : undefined;
  const dirtyFiles =
    status && status.code === 0
      ? status.stdout
          .split('\n')
          .filter((l) => l.trim() !== '')
          .map((l) => l.slice(3))
      : [];
  const base = (await recordedBase(root, branch, opts)) ?? (await defaultBranch(root, opts));
  const pushed = (await git(runner, ['-C', root, 'rev-parse', '--verify', '--quiet', `refs/remotes/origin/${branch}`])).code === 0;
  const excludes = [base ? `origin/${base}` : undefined, pushed ? `origin/${branch}` : undefined].filter(
    (x): x is string => x !== undefined,
  );
  const count = await ok(runner, ['-C', root, 'rev-list', '--count', `refs/heads/${branch}`, ...excludes.map((x) => `^${x}`)]);
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
 * Removes a worktree (upstream Rm): refuses a dirty one without force, `git worktree remove`,
 * then deletes the branch safely (`-d`; `-D` with force), and on origin only when asked.
 */
export async function removeWorktree(opts: RemoveWorktreeOptions): Promise<RemovedWorktree> {
  const runner = opts.git ?? runGit;
  const root = await repositoryRoot(opts.folder, opts);
  const wt = await resolveWorktree(root, opts.branch, opts);
  const force = opts.force === true;
  if (!force && (await exists(wt.path))) {
    const status = await git(runner, ['-C', wt.path, 'status', '--porcelain']);
    if (status.code === 0 && status.stdout.trim() !== '') {
      throw new WorktreeError(
        'dirty',
        `The worktree of ${opts.branch} has uncommitted changes. Commit (or stash) them first, or remove it with Force, which discards them.`,
      );
    }
  }
  const removed = await git(runner, ['-C', root, 'worktree', 'remove', ...(force ? ['--force', '--force'] : []), '--', wt.path]);
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
    let del = await git(runner, ['-C', root, ...branchDeleteArgs(opts.branch, force)]);
    if (del.code !== 0 && !force && (await mergedIntoBase(root, opts.branch, runner, opts))) {
      // -d tests the main checkout's HEAD, which may lag origin; merged into origin/<base> is the
      // proof prune uses too, so the branch loses nothing.
      del = await git(runner, ['-C', root, ...branchDeleteArgs(opts.branch, true)]);
    }
    branchDeleted = del.code === 0;
    if (!branchDeleted) {
      branchKept = /not fully merged/i.test(del.stderr)
        ? `The branch ${opts.branch} was kept: it has commits that are not merged. Delete it with Force once you no longer need them.`
        : `The branch ${opts.branch} was kept: ${gitReason(del)}.`;
      notes.push(branchKept);
    }
  }
  const hasRemote = (await git(runner, ['-C', root, 'rev-parse', '--verify', '--quiet', `refs/remotes/origin/${opts.branch}`])).code === 0;
  let remoteDeleted = false;
  if (shouldDeleteRemote(branchDeleted, opts.deleteRemote === true, hasRemote)) {
    const pushed = await git(runner, ['-C', root, 'push', 'origin', '--delete', '--', opts.branch], GIT_LIMITS_MS.network);
    remoteDeleted = pushed.code === 0;
    if (!remoteDeleted) notes.push(`The branch ${opts.branch} could not be deleted on origin: ${gitReason(pushed)}.`);
  }
  if (branchDeleted) await git(runner, ['-C', root, 'config', '--unset', baseConfigKey(opts.branch)]);
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
  const runner = opts.git ?? runGit;
  const log = opts.log ?? (() => undefined);
  const root = await repositoryRoot(opts.folder, opts);
  const wt = await resolveWorktree(root, opts.branch, opts);
  if (!(await exists(wt.path))) {
    throw new WorktreeError(
      'dir-missing',
      `The folder of the worktree ${opts.branch} (${wt.path}) is gone. Remove the worktree, or create it again.`,
    );
  }
  const resumed = await rebaseInProgress(wt.path, runner);
  const base = (await recordedBase(root, opts.branch, opts)) ?? (await defaultBranch(root, opts));
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
    const r = await runner(['-C', wt.path, ...step], {
      timeoutMs: network ? GIT_LIMITS_MS.network : GIT_LIMITS_MS.local,
      // `rebase --continue` would otherwise open an editor for the message.
      env: { GIT_EDITOR: 'true' },
    });
    if (r.code === 0) continue;
    if (step[0] === 'rebase' && (await rebaseInProgress(wt.path, runner))) {
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
  const runner = opts.git ?? runGit;
  const log = opts.log ?? (() => undefined);
  const root = await repositoryRoot(opts.folder, opts);
  const entries = await worktreeEntries(root, runner);
  const fallback = await defaultBranch(root, opts);
  const notes: string[] = [];
  const baseBy = new Map<string, string>();
  for (const e of toolboxWorktrees(root, entries)) {
    if (!e.branch) continue;
    const base = (await recordedBase(root, e.branch, opts)) ?? fallback;
    if (base) baseBy.set(e.branch, base);
    else notes.push(`${e.branch} was skipped: no base is recorded and origin/HEAD is not set.`);
  }
  const merged = new Map<string, Set<string>>();
  for (const base of new Set(baseBy.values())) {
    const fetched = await git(runner, ['-C', root, 'fetch', 'origin', '--', base], GIT_LIMITS_MS.network);
    if (fetched.code !== 0) {
      notes.push(`Worktrees based on ${base} were skipped: ${gitReason(fetched)}.`);
      continue;
    }
    const list = await git(runner, ['-C', root, 'branch', '--merged', `origin/${base}`]);
    if (list.code === 0) merged.set(base, parseBranchList(list.stdout));
  }
  const candidates = pruneCandidates(
    root,
    entries,
    (b) => baseBy.get(b),
    (base, b) => merged.get(base)?.has(b) === true,
  );
  const result: PruneResult = { removed: [], kept: [], notes };
  const remote: string[] = [];
  for (const c of candidates) {
    const branch = c.branch as string;
    if (await exists(c.path)) {
      const status = await git(runner, ['-C', c.path, 'status', '--porcelain']);
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
    const removed = await git(runner, ['-C', root, 'worktree', 'remove', '--', c.path]);
    if (removed.code !== 0) {
      result.kept.push({ branch, path: c.path, why: gitReason(removed) });
      continue;
    }
    // -D: merged into origin/<base> is the proof; -d would test the local HEAD (upstream's reason).
    const del = await git(runner, ['-C', root, ...branchDeleteArgs(branch, true)]);
    const hasRemote = (await git(runner, ['-C', root, 'rev-parse', '--verify', '--quiet', `refs/remotes/origin/${branch}`])).code === 0;
    if (shouldDeleteRemote(del.code === 0, opts.deleteRemote === true, hasRemote)) remote.push(branch);
    await git(runner, ['-C', root, 'config', '--unset', baseConfigKey(branch)]);
    result.removed.push({ branch, path: c.path });
  }
  if (remote.length > 0) {
    const pushed = await git(runner, ['-C', root, 'push', 'origin', '--delete', '--', ...remote], GIT_LIMITS_MS.network);
    if (pushed.code !== 0) notes.push(`Could not delete ${remote.join(', ')} on origin: ${gitReason(pushed)}.`);
  }
  return result;
}

async function mergedIntoBase(root: string, branch: string, runner: GitRunner, opts: WorktreeGit): Promise<boolean> {
  const base = (await recordedBase(root, branch, opts)) ?? (await defaultBranch(root, opts));
  if (base === undefined) return false;
  return (await git(runner, ['-C', root, 'merge-base', '--is-ancestor', `refs/heads/${branch}`, `refs/remotes/origin/${base}`])).code === 0;
}

async function exists(p: string): Promise<boolean> {
  return stat(p).then(
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
  const runner = opts.git ?? runGit;
  const wt = await resolveWorktree(root, branch, opts);
  const base = (await recordedBase(root, branch, opts)) ?? (await defaultBranch(root, opts));
  if (base === undefined)
    throw new WorktreeError(
      'no-base',
      `No base is recorded for ${branch} and origin/HEAD is not set, so there is nothing to compare with.`,
    );
  const mergeBase = await ok(runner, ['-C', wt.path, 'merge-base', `refs/remotes/origin/${base}`, 'HEAD']);
  if (mergeBase === undefined)
    throw new WorktreeError('no-base', `${branch} shares no history with origin/${base} here. Fetch the base, then compare again.`);
  const diff = await git(runner, ['-C', wt.path, 'diff', '--name-status', '-z', '-M', mergeBase, '--']);
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
  const untracked = await git(runner, ['-C', wt.path, 'ls-files', '--others', '--exclude-standard', '-z']);
  if (untracked.code === 0) for (const p of untracked.stdout.split('\0')) if (p !== '') changes.push({ path: p, status: 'added' });
  changes.sort((a, b) => a.path.localeCompare(b.path));
  return { path: wt.path, base, mergeBase, changes };
}

/** A file's content at a commit of a worktree's repository; empty when the file is not there. */
export async function fileAtCommit(worktreePath: string, commit: string, file: string, opts: WorktreeGit = {}): Promise<string> {
  if (!/^[0-9a-f]{40,64}$/.test(commit)) throw new Error(`"${commit}" is not a commit id.`);
  if (file === '' || file.startsWith('/') || file.split('/').includes('..'))
    throw new Error(`"${file}" is not a path inside the repository.`);
  const r = await (opts.git ?? runGit)(['-C', worktreePath, 'show', `${commit}:${file}`]);
  return r.code === 0 ? r.stdout : '';
}

/**
 * Makes a checked worktree's folder, empty, before `git worktree add` fills it (in place: the
 * folder stays the same, so a container that bind-mounts it sees the checkout). Answers the
 * `.worktrees` folder when this made it too, for a failed create to remove again (while empty).
 */
export async function makeWorktreeFolder(path: string): Promise<string | undefined> {
  const parent = dirname(path);
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
  const r = await git(opts.git ?? runGit, ['-C', checked.root, 'show', `${ref}:${file}`]).catch(() => undefined);
  return r?.code === 0 ? r.stdout : undefined;
}
