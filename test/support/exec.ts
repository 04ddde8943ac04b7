/**
 * Runs a command in a test container (no TTY) and collects its exit code and its stdout and
 * stderr apart. The exec can still be marked running for a moment after its stream ends, so the
 * exit code is polled until the engine reports it.
 */
import { PassThrough } from 'node:stream';
import type Docker from 'dockerode';

export interface ExecResult {
  code: number;
  stdout: string;
  stderr: string;
}

export interface ExecOptions {
  env?: string[];
  workdir?: string;
  /** Another user than the container's (`0`: root). */
  user?: string;
}

export async function execIn(container: Docker.Container, cmd: string[], opts: ExecOptions = {}): Promise<ExecResult> {
  const exec = await container.exec({
    Cmd: cmd,
    Env: opts.env,
    WorkingDir: opts.workdir,
    ...(opts.user !== undefined ? { User: opts.user } : {}),
    AttachStdout: true,
    AttachStderr: true,
  });
  const stream = await exec.start({ hijack: true, stdin: false });
  const out: Buffer[] = [];
  const err: Buffer[] = [];
  container.modem.demuxStream(
    stream,
    new PassThrough().on('data', (c: Buffer) => out.push(c)),
    new PassThrough().on('data', (c: Buffer) => err.push(c)),
  );
  await new Promise<void>((resolve, reject) => {
    stream.on('end', resolve);
    stream.on('close', resolve);
    stream.on('error', reject);
  });
  for (let attempt = 0; ; attempt++) {
    const info = await exec.inspect();
    if (!info.Running && info.ExitCode !== null) {
      return { code: info.ExitCode, stdout: Buffer.concat(out).toString('utf8'), stderr: Buffer.concat(err).toString('utf8') };
    }
    if (attempt > 200) throw new Error(`exec ${JSON.stringify(cmd)} reported no exit code`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

/** One long-lived `sh` in a container that runs single-line scripts in order, much faster than an exec each. */
export interface ShellSession {
  /** Runs one line of shell in `workdir` (the session's), resolving with its exit code and output. */
  run(line: string): Promise<{ code: number; output: string }>;
  close(): void;
}

export async function shellSession(container: Docker.Container, workdir?: string): Promise<ShellSession> {
  const exec = await container.exec({
    Cmd: ['sh', '-c', 'while IFS= read -r l; do (eval "$l") 2>&1; echo "__done__ $?"; done'],
    WorkingDir: workdir,
    AttachStdin: true,
    AttachStdout: true,
    AttachStderr: true,
  });
  const stream = await exec.start({ hijack: true, stdin: true });
  let buffered = '';
  let waiting: ((r: { code: number; output: string }) => void) | undefined;
  const out = new PassThrough().on('data', (c: Buffer) => {
    buffered += c.toString('utf8');
    const m = /__done__ (\d+)\n/.exec(buffered);
    if (m && waiting) {
      const done = waiting;
      waiting = undefined;
      const output = buffered.slice(0, m.index);
      buffered = buffered.slice(m.index + m[0].length);
      done({ code: Number(m[1]), output });
    }
  });
  container.modem.demuxStream(stream, out, out);
  let queue = Promise.resolve();
  return {
    run(line) {
      if (line.includes('\n')) throw new Error('a shell session runs one line at a time');
      const result = queue.then(
        () =>
          new Promise<{ code: number; output: string }>((resolve) => {
            waiting = resolve;
            stream.write(`${line}\n`);
          }),
      );
      queue = result.then(() => undefined);
      return result;
    },
    close: () => stream.end(),
  };
}
