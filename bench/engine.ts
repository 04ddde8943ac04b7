/**
 * Engine benchmarks against the real daemon, each a pair of contestants interleaved in one run:
 * - warm open: openContainer (connect path) + a TTY shell exec until its first output, against the
 *   engine's own floor (a bare exec of `true` through the API, in-process) and the docker CLI;
 * - cold open: no anchor, no socket volume, no container → first output, against the same
 *   steps done one by one with the docker CLI;
 * - terminal throughput: 256 MiB through the TTY exec stream vs `docker exec -t` with the CLI,
 *   and keystroke echo latency.
 * Objects live under a bench prefix and are removed at the end.
 */
import { execFile, spawn } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import type Docker from 'dockerode';
import { DEFAULT_CONFIG } from '../extension/src/config/model';
import { startShellExec } from '../extension/src/engine/exec';
import type { EngineContext } from '../extension/src/engine/context';
import { openContainer } from '../extension/src/engine/open';
import { planSession } from '../extension/src/plan/session';
import type { HostFacts, ObjectNames } from '../extension/src/contract/types';
import type { SessionPlan } from '../extension/src/plan/types';
import { docker as testDocker, removeNamespaceObjects } from '../test/support/docker';
import { ensureTestRuntimeImage } from '../test/support/image';
import { objectNames } from '../extension/src/contract/objects';
import { fmtMs, interleave, spreadOf, stats, type ResultRow } from './harness';

const run = promisify(execFile);
const UID = 1000;
const GID = 1000;

interface Rig {
  docker: Docker;
  names: ObjectNames;
  image: string;
  home: string;
  ctx: EngineContext;
  plan(workspace: string, peer?: boolean): SessionPlan;
  cleanup(): Promise<void>;
}

async function rig(): Promise<Rig> {
  const d = testDocker();
  const names = objectNames(`tbxbench${process.pid}`);
  const image = await ensureTestRuntimeImage();
  const home = mkdtempSync(join(tmpdir(), 'tbxbench-home-'));
  const host: HostFacts = { uid: UID, gid: GID, home, platform: process.platform, pathExists: existsSync };
  const ctx: EngineContext = { docker: d, names };
  return {
    docker: d,
    names,
    image,
    home,
    ctx,
    plan: (workspace, peer = true) => planSession({ workspace, config: DEFAULT_CONFIG, peer, image, names }, { ...host }).plan,
    async cleanup() {
      await removeNamespaceObjects(d, names);
      rmSync(home, { recursive: true, force: true });
    },
  };
}

/** Resolves with the time of the first output chunk of a TTY exec, then ends it. */
async function firstOutput(d: Docker, id: string, cmd: string[]): Promise<void> {
  const shell = await startShellExec(d, id, { cmd, cols: 120, rows: 40, user: `${UID}:${GID}` });
  await new Promise<void>((resolve, reject) => {
    shell.stream.once('data', () => resolve());
    shell.stream.once('error', reject);
  });
  shell.dispose();
}

async function bareExecTrue(d: Docker, id: string): Promise<void> {
  const exec = await d.getContainer(id).exec({ Cmd: ['true'], AttachStdout: true, AttachStderr: true, Tty: true });
  const stream = await exec.start({ hijack: true, stdin: false, Tty: true });
  await new Promise<void>((resolve) => {
    stream.on('end', resolve);
    stream.on('close', resolve);
    stream.resume();
  });
}

export async function benchWarmOpen(): Promise<ResultRow[]> {
  const r = await rig();
  try {
    const ws = mkdtempSync(join(tmpdir(), 'tbxbench-ws-'));
    const plan = r.plan(ws);
    const opened = await openContainer(r.ctx, plan, { ensureImage: async () => undefined });
    // `printf x` prints at once: the first output marks the shell being live, like a prompt.
    const res = await interleave(
      {
        extension: async () => {
          const o = await openContainer(r.ctx, plan, { ensureImage: async () => undefined });
          await firstOutput(r.docker, o.id, ['printf', 'x']);
        },
        apiFloor: () => bareExecTrue(r.docker, opened.id),
        cli: async () => void (await run('docker', ['exec', opened.name, 'true'])),
      },
      { rounds: 15, warmup: 3 },
    );
    rmSync(ws, { recursive: true, force: true });
    const ext = res.extension!;
    const floor = res.apiFloor!;
    const cli = res.cli!;
    return [
      {
        benchmark: 'Warm open',
        measure: 'openContainer (connect) + TTY exec to first output',
        value: `${fmtMs(ext.median)} (+${fmtMs(ext.median - floor.median)} over the API floor ${fmtMs(floor.median)})`,
        spread: spreadOf(ext),
        goal: '≤ 5 ms over the floor',
        met: ext.median - floor.median <= 5,
      },
      {
        benchmark: 'Warm open',
        measure: 'vs `docker exec <c> true` (CLI)',
        value: `${(ext.median / cli.median).toFixed(2)}× (CLI ${fmtMs(cli.median)})`,
        spread: spreadOf(cli),
        goal: '≤ 0.7×',
        met: ext.median / cli.median <= 0.7,
      },
    ];
  } finally {
    await r.cleanup();
  }
}

export async function benchColdOpen(): Promise<ResultRow[]> {
  const r = await rig();
  let round = 0;
  try {
    const reset = async () => removeNamespaceObjects(r.docker, r.names);
    const samples = { extension: [] as number[], cli: [] as number[] };
    const rounds = 10;
    for (let i = 0; i < rounds + 1; i++) {
      for (const who of i % 2 === 0 ? (['extension', 'cli'] as const) : (['cli', 'extension'] as const)) {
        await reset();
        const ws = mkdtempSync(join(tmpdir(), 'tbxbench-ws-'));
        const plan = r.plan(ws);
        const t0 = performance.now();
        if (who === 'extension') {
          const o = await openContainer(r.ctx, plan, { ensureImage: async () => undefined });
          await firstOutput(r.docker, o.id, ['printf', 'x']);
        } else {
          await cliColdOpen(r, plan, ++round);
        }
        const dt = performance.now() - t0;
        if (i > 0) samples[who].push(dt);
        rmSync(ws, { recursive: true, force: true });
      }
    }
    const ext = stats(samples.extension);
    const cli = stats(samples.cli);
    return [
      {
        benchmark: 'Cold open',
        measure: 'no anchor, volume or container → first output',
        value: `${(ext.median / cli.median).toFixed(2)}× (extension ${fmtMs(ext.median)}, CLI steps ${fmtMs(cli.median)})`,
        spread: `extension ${spreadOf(ext)}; CLI ${spreadOf(cli)}`,
        goal: '≤ 0.8×',
        met: ext.median / cli.median <= 0.8,
      },
    ];
  } finally {
    await r.cleanup();
  }
}

/** The same steps a person would type: volume, ownership init, anchor, container, exec. */
async function cliColdOpen(r: Rig, plan: SessionPlan, round: number): Promise<void> {
  const n = r.names;
  await run('docker', ['volume', 'create', n.socketVolume]);
  await run('docker', [
    'run',
    '--rm',
    '--name',
    `${n.socketVolumeInit}-cli${round}`,
    '--user',
    '0:0',
    '--entrypoint',
    'sh',
    '-v',
    `${n.socketVolume}:/tmp/cc-socks`,
    r.image,
    '-c',
    `chown ${UID}:${GID} /tmp/cc-socks && chmod 0700 /tmp/cc-socks`,
  ]);
  await run('docker', ['run', '-d', '--name', n.anchor, '--entrypoint', '/usr/bin/tini', r.image, '-g', '--', 'sleep', 'infinity']);
  const c = plan.create;
  const args = ['run', '-d', '-it', '--rm', '--name', `${c.name}`, '--user', c.User, '-w', c.WorkingDir, '--pid', `container:${n.anchor}`];
  for (const b of c.HostConfig.Binds) args.push('-v', b);
  for (const h of c.HostConfig.ExtraHosts) args.push('--add-host', h);
  for (const s of c.HostConfig.SecurityOpt) args.push('--security-opt', s);
  for (const e of c.Env) args.push('-e', e);
  args.push(r.image, ...c.Cmd);
  await run('docker', args);
  await run('docker', ['exec', c.name, 'true']);
}

export async function benchThroughput(): Promise<ResultRow[]> {
  const r = await rig();
  try {
    const ws = mkdtempSync(join(tmpdir(), 'tbxbench-ws-'));
    const opened = await openContainer(r.ctx, r.plan(ws, false), { ensureImage: async () => undefined });
    const bytes = 256 * 2 ** 20;
    const cmd = ['head', '-c', String(bytes), '/dev/zero'];
    const res = await interleave(
      {
        extension: async () => {
          const shell = await startShellExec(r.docker, opened.id, { cmd, cols: 120, rows: 40 });
          let n = 0;
          shell.stream.on('data', (b: Buffer) => (n += b.length));
          await shell.exitCode;
          if (n < bytes) throw new Error(`only ${n} of ${bytes} bytes arrived`);
        },
        cli: () =>
          new Promise<void>((resolve, reject) => {
            const p = spawn('docker', ['exec', '-t', opened.name, ...cmd], { stdio: ['ignore', 'pipe', 'inherit'] });
            p.stdout.resume();
            p.on('error', reject);
            p.on('exit', (code) => (code === 0 ? resolve() : reject(new Error(`docker exec exited ${code}`))));
          }),
      },
      { rounds: 10, warmup: 1 },
    );
    const ext = res.extension!;
    const cli = res.cli!;
    const mibs = (s: { median: number }) => (256 / (s.median / 1000)).toFixed(0);

    // Keystroke echo: one byte into a cat on a TTY, timed until it comes back.
    const echo = await startShellExec(r.docker, opened.id, { cmd: ['cat'], cols: 120, rows: 40 });
    const lat: number[] = [];
    for (let i = 0; i < 220; i++) {
      const t0 = performance.now();
      await new Promise<void>((resolve) => {
        echo.stream.once('data', () => resolve());
        echo.stream.write('a');
      });
      if (i >= 20) lat.push(performance.now() - t0);
    }
    echo.dispose();
    const l = stats(lat);
    rmSync(ws, { recursive: true, force: true });
    return [
      {
        benchmark: 'Terminal throughput',
        measure: '256 MiB through the TTY exec stream vs `docker exec -t` (CLI)',
        value: `${(cli.median / ext.median).toFixed(2)}× the CLI's speed (${mibs(ext)} vs ${mibs(cli)} MiB/s)`,
        spread: `extension ${spreadOf(ext)}; CLI ${spreadOf(cli)}`,
        goal: '≥ 0.9×',
        met: cli.median / ext.median >= 0.9,
      },
      {
        benchmark: 'Terminal latency',
        measure: 'keystroke echo through the TTY exec',
        value: `p50 ${fmtMs(l.median)}, p99 ${fmtMs(l.p99)}`,
        spread: spreadOf(l),
        goal: '–',
        met: undefined,
      },
    ];
  } finally {
    await r.cleanup();
  }
}
