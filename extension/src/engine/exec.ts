/**
 * An interactive shell inside a container: one TTY exec through the Engine API (no docker CLI).
 * Each call is its own exec, so several shells can share one container.
 */
import { Duplex, PassThrough } from 'node:stream';
import type Docker from 'dockerode';
import { statusOf } from './errors';

export interface ShellExecOptions {
  cmd: string[];
  /** `KEY=value` entries added to the container's environment for this shell only. */
  env?: string[];
  workdir?: string;
  user?: string;
  cols: number;
  rows: number;
}

export interface ShellExec {
  /** Raw TTY stream: write keystrokes, read terminal output (no stdout/stderr framing). */
  stream: Duplex;
  resize(cols: number, rows: number): Promise<void>;
  /** The shell's exit code once its stream ends; rejects when the exec or container is gone. */
  exitCode: Promise<number>;
  dispose(): void;
  /**
   * Bytes at the stream's start that are restored history, not new output (a held session
   * attached again replays its recent output: engine/sessions.ts). Absent: none.
   */
  replayBytes?: number;
}

/** Docker rejects a zero-sized TTY; VS Code can report 0 before layout settles. */
function clampSize(n: number, fallback: number): number {
  return Number.isFinite(n) && n > 0 ? Math.floor(n) : fallback;
}

export async function startShellExec(docker: Docker, containerId: string, options: ShellExecOptions): Promise<ShellExec> {
  const cols = clampSize(options.cols, 80);
  const rows = clampSize(options.rows, 24);
  const exec = await docker.getContainer(containerId).exec({
    Cmd: options.cmd,
    Env: options.env,
    WorkingDir: options.workdir,
    User: options.user,
    AttachStdin: true,
    AttachStdout: true,
    AttachStderr: true,
    Tty: true,
    // The first frame has the right size only when the size is known before the process starts.
    ConsoleSize: [rows, cols],
  });
  // ConsoleSize on start is honoured from API 1.42; older engines ignore it, hence the resize below.
  const startOptions = { hijack: true, stdin: true, Tty: true, ConsoleSize: [rows, cols] };
  const stream = (await exec.start(startOptions as Docker.ExecStartOptions)) as Duplex;
  const resize = async (c: number, r: number): Promise<void> => {
    await exec.resize({ w: clampSize(c, cols), h: clampSize(r, rows) }).catch((err: unknown) => {
      // Podman answers a successful resize with 201, which dockerode reports as an error.
      if (statusOf(err) !== 201) throw err;
    });
  };
  // Engines before API 1.42 start the process at 0x0 or the daemon default: size it right away.
  // Not awaited: the daemon answers a resize only once the process runs (~50-90 ms), and the
  // first output must not wait for that answer.
  void resize(cols, rows).catch(() => undefined);

  const exitCode = new Promise<number>((resolve, reject) => {
    let settled = false;
    const finish = () => {
      if (settled) return;
      settled = true;
      void readExitCode(docker, containerId, exec).then(resolve, reject);
    };
    stream.once('end', finish);
    stream.once('close', finish);
    stream.once('error', finish);
  });
  exitCode.catch(() => undefined);

  return {
    stream,
    resize,
    exitCode,
    dispose: () => stream.destroy(),
  };
}

/** The shell ended because its container stopped or was removed, not by itself. */
export class ContainerGoneError extends Error {
  constructor(containerId: string) {
    super(`The container ${containerId.slice(0, 12)} stopped or was removed, which ended the shell.`);
    this.name = 'ContainerGoneError';
  }
}

/**
 * The exec may still be marked running for a moment after its stream closes. A stopped
 * container also ends the stream: that is reported as ContainerGoneError, not an exit code.
 */
async function readExitCode(docker: Docker, containerId: string, exec: Docker.Exec): Promise<number> {
  const running = await docker
    .getContainer(containerId)
    .inspect()
    .then(
      (i) => i.State.Running,
      () => false,
    );
  if (!running) throw new ContainerGoneError(containerId);
  for (let attempt = 0; attempt < 20; attempt++) {
    const info = await exec.inspect();
    if (!info.Running && info.ExitCode !== null) return info.ExitCode;
    await new Promise((r) => setTimeout(r, 50));
  }
  const info = await exec.inspect();
  if (info.ExitCode === null) throw new Error('The shell stopped but Docker reported no exit code.');
  return info.ExitCode;
}

/**
 * A non-TTY exec's hijacked stream as one byte stream: reads are its stdout (demultiplexed),
 * writes go to its stdin, `end()` half-closes its stdin. Each stderr chunk goes to `onStderr`
 * (dropped without one); `onEnd` runs once the exec's stream has ended. Used by the holder's exec
 * transport (engine/sessions.ts) and the login relay (engine/loginRelay.ts).
 */
export function execByteStream(
  docker: Docker,
  raw: Duplex,
  hooks: { onStderr?: (chunk: Buffer) => void; onEnd?: () => void } = {},
): Duplex {
  const out = new PassThrough();
  const err = new PassThrough();
  docker.modem.demuxStream(raw, out, err);
  if (hooks.onStderr) err.on('data', hooks.onStderr);
  else err.resume();
  let ended = false;
  const endOut = () => {
    if (!out.writableEnded) out.end();
    if (!ended) {
      ended = true;
      hooks.onEnd?.();
    }
  };
  raw.once('end', endOut);
  raw.once('close', endOut);
  const duplex = new Duplex({
    read() {
      out.resume();
    },
    write(chunk, _enc, done) {
      raw.write(chunk, done);
    },
    final(done) {
      raw.end();
      done();
    },
    destroy(error, done) {
      raw.destroy();
      done(error);
    },
  });
  out.on('data', (chunk: Buffer) => {
    if (!duplex.push(chunk)) out.pause();
  });
  out.once('end', () => duplex.push(null));
  raw.once('error', (error: Error) => duplex.destroy(error));
  return duplex;
}

/**
 * Reads a short exec's multiplexed output until it ends, keeping the first `maxBytes` (raw frames:
 * engine/containers.ts `demux` reads them); after `timeoutMs` the stream is destroyed and
 * `finished` is false. For the execs that answer with a line or two: the holder's start
 * (engine/sessions.ts ensureHolder) and the bridge path probe (engine/bridgePath.ts).
 */
export function collectExecOutput(stream: Duplex, timeoutMs: number, maxBytes = 4096): Promise<{ output: Buffer; finished: boolean }> {
  const chunks: Buffer[] = [];
  let size = 0;
  stream.on('data', (c: Buffer) => {
    if (size < maxBytes) chunks.push(c);
    size += c.length;
  });
  return new Promise((resolve) => {
    const settle = (finished: boolean) => {
      clearTimeout(timer);
      resolve({ output: Buffer.concat(chunks), finished });
    };
    const timer = setTimeout(() => {
      stream.destroy();
      settle(false);
    }, timeoutMs);
    stream.once('end', () => settle(true));
    stream.once('close', () => settle(true));
    stream.once('error', () => settle(true));
  });
}
