/**
 * The one way the extension runs a program on the host (host git, proximo, the sound player, the
 * `toolbox` CLI): argv only, never a shell; bounded in time (killed at the deadline) and in
 * output (killed once it wrote more than the caller keeps, the result saying so); the pipes
 * waited for only a short while after the program ended, so a grandchild holding them cannot
 * keep the call open; an environment built from the names the caller passes, nothing else.
 *
 * Node built-ins only: host/cliPeerDefault.ts imports this into the activation bundle
 * (docs/decisions/0005-lazy-backend-bundle.md), and node:child_process is required on the first
 * run, not at import: a window that never runs a host program does not load it.
 */
import type * as childProcess from 'node:child_process';
import { constants } from 'node:os';

/** After the program ended (or was killed), how long we wait for pipes a grandchild still holds open. */
export const PIPE_DRAIN_MS = 2_000;

/** Output a host process may write (stdout and stderr together) before it is stopped. */
export const HOST_PROCESS_OUTPUT_BYTES = 1024 * 1024;

/** What the program's environment is made of. */
export interface HostEnv {
  /** Where passed variables are read from (the extension host's environment, usually). */
  from: NodeJS.ProcessEnv;
  /**
   * The names passed through from `from`; every other variable is left out. `'all'` passes the
   * whole of `from`: only for a program of the user's own (their git, proximo, their player) that
   * needs whatever their session sets.
   */
  pass: readonly string[] | 'all';
  /** Set on top of what was passed, whatever `from` has. */
  set?: Readonly<Record<string, string>>;
}

/** The environment `env` describes. Pure. */
export function hostEnv(env: HostEnv): NodeJS.ProcessEnv {
  const out: NodeJS.ProcessEnv = {};
  for (const name of env.pass === 'all' ? Object.keys(env.from) : env.pass) {
    const value = env.from[name];
    if (value !== undefined) out[name] = value;
  }
  return { ...out, ...env.set };
}

export interface HostProcessOptions {
  /** The program: an absolute path, or a name looked up on the PATH of `env`. */
  file: string;
  /** Its arguments, each passed as it is (no shell reads them). */
  args: readonly string[];
  env: HostEnv;
  cwd?: string;
  /** Written to stdin, which is then closed; without it stdin is empty (/dev/null). */
  input?: string;
  /** The program is killed (SIGKILL) when it has not ended by then. */
  timeoutMs: number;
  /** Bytes of output kept, stdout and stderr together; the program is killed when it writes more. */
  maxOutputBytes: number;
  /**
   * What is read: stdout and stderr apart (default), stderr interleaved into stdout, stdout only
   * (stderr to /dev/null), or nothing.
   */
  output?: 'separate' | 'merged' | 'stdout' | 'none';
  /** Aborting kills the program; the result says `aborted`. */
  signal?: AbortSignal;
  /** Called once the program has started (before it ends). */
  onSpawn?: () => void;
}

export interface HostProcessResult {
  /** The exit code, or 128 + the signal's number when a signal ended it. */
  exit: number;
  stdout: string;
  /** Empty unless `output` is `'separate'`. */
  stderr: string;
  /** Killed at the deadline. */
  timedOut: boolean;
  /** Killed for writing more than `maxOutputBytes`; stdout and stderr hold the first bytes. */
  truncated: boolean;
  /** Killed because `signal` aborted. */
  aborted: boolean;
}

/** Runs one program. Rejects only when it could not be started (missing binary, bad cwd). */
export function runHostProcess(opts: HostProcessOptions): Promise<HostProcessResult> {
  const output = opts.output ?? 'separate';
  return new Promise((resolve, reject) => {
    // eslint-disable-next-line @typescript-eslint/no-require-imports
    const { spawn } = require('node:child_process') as typeof childProcess;
    const child = spawn(opts.file, [...opts.args], {
      env: hostEnv(opts.env),
      cwd: opts.cwd,
      shell: false,
      windowsHide: true,
      stdio: [
        opts.input === undefined ? 'ignore' : 'pipe',
        output === 'none' ? 'ignore' : 'pipe',
        output === 'separate' || output === 'merged' ? 'pipe' : 'ignore',
      ],
    });

    let stopped: 'timedOut' | 'truncated' | 'aborted' | undefined;
    const stop = (why: NonNullable<typeof stopped>): void => {
      stopped ??= why;
      child.kill('SIGKILL');
    };

    const out: Buffer[] = [];
    const err: Buffer[] = [];
    let size = 0;
    const collect =
      (into: Buffer[]) =>
      (chunk: Buffer): void => {
        if (stopped === 'truncated') return;
        if (size + chunk.length > opts.maxOutputBytes) {
          into.push(chunk.subarray(0, opts.maxOutputBytes - size));
          size = opts.maxOutputBytes;
          stop('truncated');
          return;
        }
        into.push(chunk);
        size += chunk.length;
      };
    child.stdout?.on('data', collect(out));
    child.stderr?.on('data', collect(output === 'merged' ? out : err));

    const deadline = setTimeout(() => stop('timedOut'), opts.timeoutMs);
    const onAbort = (): void => stop('aborted');
    if (opts.signal?.aborted) onAbort();
    else opts.signal?.addEventListener('abort', onAbort, { once: true });

    let exitCode: number | undefined;
    let settled = false;
    let drainTimer: NodeJS.Timeout | undefined;
    const settle = (): void => {
      settled = true;
      clearTimeout(deadline);
      clearTimeout(drainTimer);
      opts.signal?.removeEventListener('abort', onAbort);
    };
    const finish = (): void => {
      if (settled) return;
      settle();
      resolve({
        exit: exitCode ?? -1,
        stdout: Buffer.concat(out).toString('utf8'),
        stderr: Buffer.concat(err).toString('utf8'),
        timedOut: stopped === 'timedOut',
        truncated: stopped === 'truncated',
        aborted: stopped === 'aborted',
      });
    };

    child.once('spawn', () => opts.onSpawn?.());
    child.on('error', (error) => {
      if (settled) return;
      settle();
      reject(error);
    });
    child.on('exit', (code, signal) => {
      exitCode = code ?? 128 + signalNumber(signal);
      clearTimeout(deadline);
      // A grandchild may keep our pipes open; stop waiting for them after a short drain.
      drainTimer = setTimeout(() => {
        child.stdout?.destroy();
        child.stderr?.destroy();
        finish();
      }, PIPE_DRAIN_MS);
    });
    child.on('close', finish);

    if (opts.input !== undefined) {
      child.stdin?.on('error', () => undefined); // the program may exit before reading stdin
      child.stdin?.end(opts.input);
    }
  });
}

function signalNumber(signal: NodeJS.Signals | null): number {
  return signal ? (constants.signals[signal] ?? 0) : 0;
}
