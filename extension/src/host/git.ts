/**
 * Host git, for agent worktrees: `git` spawned with an argument array (never a shell), bounded in
 * time and output, without a terminal prompt. The one place outside the bridge that runs a host
 * program; the bridge's own runner (bridge/hostProcess.ts) stays the bridge's.
 */
import { spawn } from 'node:child_process';
import { GIT_LIMITS_MS, GIT_OUTPUT_BYTES } from '../contract/constants';

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

/** Runs host git. Resolves with the exit code (never rejects for a non-zero one); rejects when git cannot start or runs out of time. */
export const runGit: GitRunner = (args, opts = {}) =>
  new Promise<GitResult>((resolve, reject) => {
    const child = spawn('git', [...args], {
      cwd: opts.cwd,
      shell: false,
      stdio: ['ignore', 'pipe', 'pipe'],
      env: {
        ...process.env,
        // Never wait on a prompt nobody sees; English messages, so errors can be recognised.
        GIT_TERMINAL_PROMPT: '0',
        GIT_ASKPASS: '',
        SSH_ASKPASS: '',
        LC_ALL: 'C',
        LANGUAGE: '',
        ...opts.env,
      },
    });
    const out: Buffer[] = [];
    const err: Buffer[] = [];
    let outBytes = 0;
    let errBytes = 0;
    child.stdout.on('data', (b: Buffer) => {
      if (outBytes < GIT_OUTPUT_BYTES) out.push(b);
      outBytes += b.length;
    });
    child.stderr.on('data', (b: Buffer) => {
      if (errBytes < GIT_OUTPUT_BYTES) err.push(b);
      errBytes += b.length;
    });
    const limit = opts.timeoutMs ?? GIT_LIMITS_MS.local;
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`git ${args[0] === '-C' ? args[2] : args[0]} did not finish within ${Math.round(limit / 1000)} s and was stopped.`));
    }, limit);
    child.on('error', (e) => {
      clearTimeout(timer);
      reject(
        (e as NodeJS.ErrnoException).code === 'ENOENT'
          ? new Error('Git is not installed on this machine (or not on PATH). Install git, then try again.')
          : e,
      );
    });
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve({
        code: code ?? 1,
        stdout: Buffer.concat(out).toString('utf8').slice(0, GIT_OUTPUT_BYTES),
        stderr: Buffer.concat(err).toString('utf8').slice(0, GIT_OUTPUT_BYTES),
      });
    });
  });

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
