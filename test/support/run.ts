/**
 * A command run to its end with its output captured: what the engine tests use to drive the host's
 * docker CLI (and a CLI inside a container, through `docker exec`) and read what it said.
 */
import { spawn } from 'node:child_process';

/** How a command ended, and what it wrote. */
export interface Run {
  code: number | null;
  stdout: string;
  stderr: string;
}

/**
 * Runs `cmd` with `args`, stdin closed, in an environment of PATH plus `env` only, and answers its
 * exit code and output; the command is killed (code null) after `timeoutMs`.
 */
export function spawnRun(cmd: string, args: string[], env: Record<string, string>, timeoutMs = 120_000): Promise<Run> {
  return new Promise((resolve, reject) => {
    const child = spawn(cmd, args, { env: { PATH: process.env.PATH ?? '/usr/bin:/bin', ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
    child.on('error', reject);
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
  });
}
