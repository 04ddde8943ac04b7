/**
 * Runs one host command on a container's behalf: argv only (never a shell), bounded in time and
 * output, with stdin fed from the request.
 */
import { spawn } from 'node:child_process';
import { constants } from 'node:os';

/** After the deadline kill, how long we wait for pipes held open by grandchildren. */
const PIPE_DRAIN_MS = 2_000;
const MAX_OUTPUT_BYTES = 4 * 1024 * 1024;

export interface RunArgvOptions {
  file: string;
  args: string[];
  env: NodeJS.ProcessEnv;
  cwd: string;
  input?: string;
  timeoutMs: number;
  /** true: stdout and stderr interleaved into output; false: stderr dropped. */
  mergeStderr: boolean;
}

export interface RunArgvResult {
  /** The exit code, or 128 + signal number when a signal ended it. */
  exit: number;
  output: string;
  timedOut: boolean;
}

/** Rejects only when the command could not be started (missing binary, bad cwd). */
export function runArgv(opts: RunArgvOptions): Promise<RunArgvResult> {
  return new Promise((resolve, reject) => {
    const child = spawn(opts.file, opts.args, {
      env: opts.env,
      cwd: opts.cwd,
      shell: false,
      windowsHide: true,
      stdio: ['pipe', 'pipe', opts.mergeStderr ? 'pipe' : 'ignore'],
    });
    const chunks: Buffer[] = [];
    let size = 0;
    const collect = (chunk: Buffer): void => {
      if (size >= MAX_OUTPUT_BYTES) return;
      chunks.push(chunk.subarray(0, MAX_OUTPUT_BYTES - size));
      size += chunk.length;
    };
    child.stdout?.on('data', collect);
    child.stderr?.on('data', collect);

    let timedOut = false;
    let exitCode: number | undefined;
    let settled = false;
    let drainTimer: NodeJS.Timeout | undefined;
    const finish = (): void => {
      if (settled) return;
      settled = true;
      clearTimeout(deadline);
      clearTimeout(drainTimer);
      resolve({ exit: exitCode ?? -1, output: Buffer.concat(chunks).toString('utf8'), timedOut });
    };
    const deadline = setTimeout(() => {
      timedOut = true;
      child.kill('SIGKILL');
    }, opts.timeoutMs);

    child.on('error', (error) => {
      if (settled) return;
      settled = true;
      clearTimeout(deadline);
      clearTimeout(drainTimer);
      reject(error);
    });
    child.on('exit', (code, signal) => {
      exitCode = code ?? 128 + signalNumber(signal);
      // A grandchild may keep our pipes open; stop waiting for them after a short drain.
      drainTimer = setTimeout(() => {
        child.stdout?.destroy();
        child.stderr?.destroy();
        finish();
      }, PIPE_DRAIN_MS);
    });
    child.on('close', finish);

    child.stdin?.on('error', () => undefined); // the command may exit before reading stdin
    child.stdin?.end(opts.input ?? '');
  });
}

function signalNumber(signal: NodeJS.Signals | null): number {
  return signal ? (constants.signals[signal] ?? 0) : 0;
}
