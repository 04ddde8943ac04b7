/**
 * Runs one host command on a container's behalf: argv only (never a shell), bounded in time and
 * output, with stdin fed from the request. A command that writes more than the output cap is
 * stopped: nothing a container asks for needs megabytes back, and one that keeps printing must
 * not keep a host process (and its memory) alive until the deadline.
 */
import { spawn } from 'node:child_process';
import { constants } from 'node:os';
import { HOST_PROCESS_OUTPUT_BYTES } from '../contract/constants';

/** After the deadline kill, how long we wait for pipes held open by grandchildren. */
const PIPE_DRAIN_MS = 2_000;

export interface RunArgvOptions {
  file: string;
  args: string[];
  env: NodeJS.ProcessEnv;
  cwd: string;
  input?: string;
  timeoutMs: number;
  /** true: stdout and stderr interleaved into output; false: stderr dropped. */
  mergeStderr: boolean;
  /** Output kept before the command is stopped; default HOST_PROCESS_OUTPUT_BYTES. */
  maxOutputBytes?: number;
}

export interface RunArgvResult {
  /** The exit code, or 128 + signal number when a signal ended it. */
  exit: number;
  output: string;
  timedOut: boolean;
  /** The command wrote more than the output cap and was stopped; output holds the first bytes. */
  truncated: boolean;
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
    const maxOutput = opts.maxOutputBytes ?? HOST_PROCESS_OUTPUT_BYTES;
    const chunks: Buffer[] = [];
    let size = 0;
    let truncated = false;
    const collect = (chunk: Buffer): void => {
      if (truncated) return;
      if (size + chunk.length > maxOutput) {
        chunks.push(chunk.subarray(0, maxOutput - size));
        size = maxOutput;
        truncated = true;
        child.kill('SIGKILL');
        return;
      }
      chunks.push(chunk);
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
      resolve({ exit: exitCode ?? -1, output: Buffer.concat(chunks).toString('utf8'), timedOut, truncated });
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
