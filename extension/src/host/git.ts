/**
 * Host git, for agent worktrees: `git` run through host/process.ts (an argument array, never a
 * shell, bounded in time and output), without a terminal prompt; on a repository only through
 * `RepoGit`, which never lets git read what the container wrote as config
 * (docs/decisions/0039-host-git-on-a-checked-copy-of-the-config.md).
 */
import { realpath } from 'node:fs/promises';
import {
  checkRepositoryConfig,
  findRepository,
  localRemotes,
  shadowCommonDir,
  toolboxRegistrations,
  type Registration,
  type Repository,
} from './gitRepo';
import { runHostProcess, type HostProcessResult } from './process';

/** Host git runs bounded: reads are quick, network steps (fetch, push) get longer. */
export const GIT_LIMITS_MS = {
  local: 30_000,
  network: 120_000,
} as const;

/** Host git output a call may write (stdout and stderr together) before git is stopped and the call fails. */
export const GIT_OUTPUT_BYTES = 4 * 1024 * 1024;

export interface GitResult {
  code: number;
  stdout: string;
  stderr: string;
}

export interface GitOptions {
  /** Working directory (`-C` is preferred in the args; this is for the process itself). */
  cwd?: string;
  timeoutMs?: number;
  /** Added to the environment. */
  env?: Record<string, string>;
}

export type GitRunner = (args: readonly string[], opts?: GitOptions) => Promise<GitResult>;

/**
 * Runs host git. Resolves with the exit code (never rejects for a non-zero one); rejects when git
 * cannot start, runs out of time, or writes more than GIT_OUTPUT_BYTES (it is stopped then).
 */
export const runGit: GitRunner = async (args, opts = {}) => {
  const limit = opts.timeoutMs ?? GIT_LIMITS_MS.local;
  let r: HostProcessResult;
  try {
    r = await runHostProcess({
      file: 'git',
      args,
      cwd: opts.cwd,
      timeoutMs: limit,
      maxOutputBytes: GIT_OUTPUT_BYTES,
      env: {
        // The user's git: their credential helpers, ssh agent and proxies need their session.
        from: process.env,
        pass: 'all',
        set: {
          // Never wait on a prompt nobody sees; English messages, so errors can be recognised.
          GIT_TERMINAL_PROMPT: '0',
          GIT_ASKPASS: '',
          SSH_ASKPASS: '',
          LC_ALL: 'C',
          LANGUAGE: '',
          ...opts.env,
        },
      },
    });
  } catch (e) {
    throw (e as NodeJS.ErrnoException).code === 'ENOENT'
      ? new Error('Git is not installed on this machine (or not on PATH). Install git, then try again.')
      : e;
  }
  const what = `git ${subcommand(args)}`;
  if (r.timedOut) throw new Error(`${what} did not finish within ${Math.round(limit / 1000)} s and was stopped.`);
  if (r.truncated) throw new Error(`${what} wrote more than ${GIT_OUTPUT_BYTES} bytes of output and was stopped.`);
  return { code: r.exit, stdout: r.stdout, stderr: r.stderr };
};

/** git's own last error line(s), for a message: `fatal: …` without the prefix. */
export function gitReason(r: GitResult): string {
  const lines = r.stderr
    .split('\n')
    .map((l) => l.trim())
    .filter((l) => l !== '' && !l.startsWith('hint:'));
  const last = lines.filter((l) => /^(fatal|error):/.test(l));
  const pick = (last.length > 0 ? last : lines).slice(-2).join(' ');
  return pick.replace(/^(fatal|error):\s*/, '').replace(/\s+/g, ' ') || `git exited with code ${r.code}`;
}

/** The git command in an argument list, past `-C <dir>` and `-c <key=value>`. */
function subcommand(args: readonly string[]): string | undefined {
  let i = 0;
  while (args[i] === '-C' || args[i] === '-c') i += 2;
  return args[i];
}

/**
 * What a call may do, which decides where git reads the repository's config from and which
 * transports it may use:
 * - `read`: a private copy of the checked config (`shadowCommonDir`), no transport at all (so no
 *   partial-clone fetch), no optional locks: status, rev-list, show, diff, ls-files, …
 * - `write`: the same copy, no transport: steps that check out, merge or delete a worktree
 *   (reset, rebase, worktree remove and prune), where filters, merge drivers and hooks live.
 * - `network`: the same copy; only the transports the checked remotes use (https, http, ssh,
 *   git; file for a local remote, whose other end runs hardened): fetch and push.
 * - `local`: the repository's own config, no transport: steps that rewrite the files a private
 *   copy would only shadow (`worktree add --no-checkout`, `branch -d/-D`, `update-ref -d`, `config`),
 *   none of which runs a program git reads from config (hooks and fsmonitor are off below).
 */
export type GitStep = 'read' | 'write' | 'network' | 'local';

/** Given on every call, whatever the config says: no hook, no fsmonitor, no pager, no submodule, no auto gc. */
export const HARDENED_GIT_CONFIG: readonly string[] = [
  'core.fsmonitor=false',
  'core.hooksPath=/dev/null',
  'core.pager=cat',
  'submodule.recurse=false',
  'fetch.recurseSubmodules=false',
  'gc.auto=0',
  'maintenance.auto=false',
];

/** The transports a network step may use: those of the checked remotes (plan/gitConfig.ts remoteUrlProblem). */
const NETWORK_PROTOCOLS = 'https:http:ssh:git';

/** Where a call runs: the main checkout, or a linked worktree with its registration's git files. */
export interface GitPlace {
  gitDir: string;
  workTree: string;
}

/**
 * Host git on one repository. Before every call the config is read as data and checked
 * (gitRepo.ts); a key outside the allowlist refuses the call with the key and the file. The call
 * gets its git directory, common directory and work tree explicitly (no discovery, no
 * `core.worktree`, no `commondir` file), HARDENED_GIT_CONFIG, and GIT_ALLOW_PROTOCOL for its step.
 */
export class RepoGit {
  constructor(
    readonly repo: Repository,
    private readonly runner: GitRunner = runGit,
  ) {}

  /** The main checkout. */
  get main(): GitPlace {
    return { gitDir: this.repo.common, workTree: this.repo.root };
  }

  /** A linked worktree, by its checked registration. */
  at(registration: Pick<Registration, 'gitDir' | 'path'>): GitPlace {
    return { gitDir: registration.gitDir, workTree: registration.path };
  }

  async run(
    step: GitStep,
    place: GitPlace,
    args: readonly string[],
    opts: { timeoutMs?: number; env?: Record<string, string> } = {},
  ): Promise<GitResult> {
    const config = await checkRepositoryConfig(this.repo);
    const shadow = step === 'local' ? undefined : await shadowCommonDir(this.repo, config);
    try {
      const protocols = step === 'network' ? NETWORK_PROTOCOLS + (localRemotes(config.entries).length > 0 ? ':file' : '') : '';
      return await this.runner([...HARDENED_GIT_CONFIG.flatMap((c) => ['-c', c]), ...args], {
        cwd: place.workTree,
        timeoutMs: opts.timeoutMs ?? (step === 'network' ? GIT_LIMITS_MS.network : GIT_LIMITS_MS.local),
        env: {
          GIT_DIR: place.gitDir,
          GIT_COMMON_DIR: shadow?.dir ?? this.repo.common,
          GIT_WORK_TREE: place.workTree,
          GIT_ALLOW_PROTOCOL: protocols,
          GIT_EDITOR: 'true',
          GIT_SEQUENCE_EDITOR: 'true',
          ...(step === 'read' ? { GIT_OPTIONAL_LOCKS: '0' } : {}),
          ...opts.env,
        },
      });
    } finally {
      await shadow?.dispose();
    }
  }

  /** run(), the trimmed stdout on exit 0, else undefined. */
  async ok(step: GitStep, place: GitPlace, args: readonly string[]): Promise<string | undefined> {
    const r = await this.run(step, place, args);
    return r.code === 0 ? r.stdout.trim() : undefined;
  }
}

/**
 * Whether host git in the checkout at `folder` would read a `.gitmodules` from its index or its
 * HEAD, as it does when the working tree has none (git's submodule-config.c: the file, else
 * `:.gitmodules`, else `HEAD:.gitmodules`). Both are the container's to write (it stages and
 * commits), so the `.gitmodules` placeholder stays while either has one
 * (engine/placeholders.ts; docs/decisions/0042-protected-paths-read-only.md). Undefined when it
 * cannot tell: the folder is no main checkout or toolbox worktree of its own repository, the
 * config is refused, or git fails.
 */
export async function gitmodulesBehindWorkTree(folder: string, runner: GitRunner = runGit): Promise<boolean | undefined> {
  try {
    const repo = await findRepository(folder);
    const git = new RepoGit(repo, runner);
    const real = await realpath(folder);
    const registration = real === repo.root ? undefined : (await toolboxRegistrations(repo)).find((r) => r.path === real);
    if (real !== repo.root && registration === undefined) return undefined;
    const place = registration === undefined ? git.main : git.at(registration);
    for (const name of [':.gitmodules', 'HEAD:.gitmodules']) {
      // --verify -q: 0 when it names an object, 1 when not (an unborn HEAD too), anything else a failure.
      const r = await git.run('read', place, ['rev-parse', '--verify', '-q', name]);
      if (r.code === 0) return true;
      if (r.code !== 1) return undefined;
    }
    return false;
  } catch {
    return undefined;
  }
}
