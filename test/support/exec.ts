/**
 * Runs a command in a test container (no TTY) and collects its exit code and its stdout and
 * stderr apart. The exec can still be marked running for a moment after its stream ends, so the
 * exit code is polled until the engine reports it.
 */
import type Docker from 'dockerode';
import { PassThrough } from 'node:stream';

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
