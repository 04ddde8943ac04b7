/**
 * Host git, for agent worktrees: `git` run through host/process.ts (an argument array, never a
 * shell, bounded in time and output), without a terminal prompt.
 */
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
  const what = `git ${args[0] === '-C' ? args[2] : args[0]}`;
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
