/**
 * New Agent Worktree → the agent's first output, with the image present: the extension's whole
 * path (backend.createAgentWorktree: checks, fetch, worktree add, base, seed, bridge, container,
 * session holder, agent) against the same steps typed by hand with git and the docker CLI
 * (fetch, worktree add, base, `docker run` with the worktree and the main .git mounted,
 * `docker exec` of the agent). A stand-in agent prints one line; a bare origin on disk.
 *
 * A second row types the same steps by hand for the same container the extension makes (every
 * mount, variable, user and option of its create, copied from the first round's container): the
 * engine's start grows with the number of mounts, and the first row's hand-made container has 3.
 *
 * A third row times what is left after the last input. The extension makes the worktree and its
 * container while the task is typed (ui/worktrees/newAgentWorktree.ts), so what the user waits for
 * after Enter is the agent's start; by hand, the last typed step is the `docker exec` of the agent
 * with the task, into the container the earlier steps made.
 */
import { execFile, spawn } from 'node:child_process';
import { chmodSync, existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { promisify } from 'node:util';
import { objectNames } from '../extension/src/contract/objects';
import { docker, removeNamespaceObjects } from '../test/support/docker';
import { testBackend } from '../test/support/backend';
import { ensureTestRuntimeImage } from '../test/support/image';
import { fmtMs, spreadOf, stats, type ResultRow } from './harness';

const run = promisify(execFile);
const MARKER = 'AGENT-FIRST-OUTPUT';

/** Runs a command and resolves when its output first shows the marker. */
function firstMarker(cmd: string, args: string[]): Promise<void> {
  return new Promise((resolve, reject) => {
    const child = spawn(cmd, args, { stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    child.stdout.on('data', (b: Buffer) => {
      out += b.toString();
      if (out.includes(MARKER)) resolve();
    });
    child.on('error', reject);
    child.on('close', (code) => (out.includes(MARKER) ? resolve() : reject(new Error(`${cmd} ${args.join(' ')} exited ${code}: ${out}`))));
  });
}

export async function benchWorktree(): Promise<ResultRow[]> {
  const image = await ensureTestRuntimeImage();
  const names = objectNames(`tbxb${Math.random().toString(16).slice(2, 8)}`);
  const dir = mkdtempSync(join(tmpdir(), `${names.prefix}-wt-`));
  const home = join(dir, 'home');
  mkdirSync(home);
  const savedHome = process.env.HOME;
  process.env.HOME = home;
  const gitEnv = {
    ...process.env,
    GIT_AUTHOR_NAME: 'B',
    GIT_AUTHOR_EMAIL: 'b@example.com',
    GIT_COMMITTER_NAME: 'B',
    GIT_COMMITTER_EMAIL: 'b@example.com',
  };
  const git = (cwd: string, ...args: string[]) => run('git', args, { cwd, env: gitEnv });
  const origin = join(dir, 'origin.git');
  const repo = join(dir, 'repo');
  await git(dir, 'init', '--bare', '-b', 'main', origin);
  await git(dir, 'clone', origin, repo);
  await git(repo, 'checkout', '-b', 'main');
  writeFileSync(join(repo, 'README.md'), 'bench\n');
  // The image in ~/.toolbox.yaml: from the project file it would wait for the user's approval (docs/decisions/0041).
  writeFileSync(join(home, '.toolbox.yaml'), `image: ${image}\n`);
  writeFileSync(join(repo, '.toolbox.yaml'), 'peer_messaging: false\n');
  await git(repo, 'add', '.');
  await git(repo, 'commit', '-m', 'initial');
  await git(repo, 'push', '-u', 'origin', 'main');
  await git(repo, 'remote', 'set-head', 'origin', 'main');
  const bin = join(home, '.toolbox', 'npm-global', 'bin');
  mkdirSync(bin, { recursive: true });
  writeFileSync(join(bin, 'claude'), `#!/bin/sh\necho ${MARKER}\n`);
  chmodSync(join(bin, 'claude'), 0o755);
  const backend = testBackend(names, home, { pathExists: existsSync });
  const samples = { extension: [] as number[], cli: [] as number[], same: [] as number[], typed: [] as number[], exec: [] as number[] };
  // The extension's container of round 0, as `docker run` options with its worktree path as a placeholder.
  let template: { path: string; args: string[] } | undefined;
  const rounds = 8;
  try {
    for (let i = 0; i < rounds + 1; i++) {
      const order = (['extension', 'cli', 'same', 'typed'] as const).map((_, k, all) => all[(k + i) % all.length]!);
      for (const who of i === 0 ? (['extension', 'cli', 'same', 'typed'] as const) : order) {
        const branch = `${who}-${i}`;
        const path = join(repo, '.worktrees', `tbx-${branch}`);
        let t0 = performance.now();
        if (who === 'extension' || who === 'typed') {
          // 'typed': the task is given once the backend waits for it, and the clock starts then.
          let give!: (task: string) => void;
          const task = new Promise<string>((resolve) => (give = resolve));
          let waiting!: () => void;
          const ready = new Promise<void>((resolve) => (waiting = resolve));
          const creating = backend.createAgentWorktree(
            { folder: repo, branch, prompt: who === 'typed' ? task : 'do the task' },
            { step: (message: string) => (/waiting for the task/.test(message) ? waiting() : undefined), log: () => undefined },
            new AbortController().signal,
          );
          if (who === 'typed') {
            await Promise.race([ready, creating]);
            t0 = performance.now();
            give('do the task');
          }
          const opened = await creating;
          if (!opened) throw new Error('New Agent Worktree was cancelled');
          const shell = await opened.session.start({ cols: 120, rows: 30 });
          await new Promise<void>((resolve) => {
            let out = '';
            shell.stream.on('data', (b: Buffer) => {
              out += b.toString();
              if (out.includes(MARKER)) resolve();
            });
          });
          shell.dispose();
          template ??= { path, args: await runOptionsOf(opened.session.name) };
        } else {
          await git(repo, 'fetch', 'origin', 'main');
          await git(repo, 'worktree', 'add', '--no-track', '-b', branch, path, 'origin/main');
          await git(repo, 'config', `branch.${branch}.base`, 'main');
          const name = `${names.prefix}-${who}-${i}`;
          if (who === 'same') {
            const args = template!.args.map((a) => a.split(template!.path).join(path));
            await run('docker', ['run', '-d', '-it', '--rm', '--name', name, ...args, image, '/bin/zsh']);
          } else {
            await run('docker', [
              'run',
              '-d',
              '-it',
              '--rm',
              '--name',
              name,
              '--user',
              `${process.getuid!()}:${process.getgid!()}`,
              '-w',
              path,
              '-v',
              `${path}:${path}`,
              '-v',
              `${repo}/.git:${repo}/.git`,
              '-v',
              `${join(home, '.toolbox', 'npm-global')}:/home/toolbox/.npm-global`,
              '--security-opt',
              'seccomp=unconfined',
              image,
              '/bin/zsh',
            ]);
          }
          const exec = performance.now();
          await firstMarker('docker', ['exec', '-t', name, '/bin/zsh', '-i', '-c', 'claude "$1"', 'x', 'do the task']);
          if (who === 'same' && i > 0) samples.exec.push(performance.now() - exec);
        }
        const dt = performance.now() - t0;
        if (i > 0) samples[who].push(dt);
      }
      await removeNamespaceObjects(docker(), names);
      await git(repo, 'worktree', 'prune');
    }
  } finally {
    backend.dispose();
    await removeNamespaceObjects(docker(), names).catch(() => undefined);
    if (savedHome === undefined) delete process.env.HOME;
    else process.env.HOME = savedHome;
    rmSync(dir, { recursive: true, force: true });
  }
  const ext = stats(samples.extension);
  const cli = stats(samples.cli);
  const same = stats(samples.same);
  const ratio = ext.median / cli.median;
  const sameRatio = ext.median / same.median;
  const typed = stats(samples.typed);
  const exec = stats(samples.exec);
  const typedRatio = typed.median / exec.median;
  return [
    {
      benchmark: 'New Agent Worktree',
      measure: 'command → agent’s first output, image present, vs the same steps by hand (git + docker CLI)',
      value: `${ratio.toFixed(2)}× (extension ${fmtMs(ext.median)}, by hand ${fmtMs(cli.median)})`,
      spread: `extension ${spreadOf(ext)}; by hand ${spreadOf(cli)}`,
      goal: '≤ 0.8×',
      met: ratio <= 0.8,
    },
    {
      benchmark: 'New Agent Worktree',
      measure: 'the same, against the same steps by hand for the same container (its mounts, variables, user and options)',
      value: `${sameRatio.toFixed(2)}× (extension ${fmtMs(ext.median)}, by hand ${fmtMs(same.median)})`,
      spread: `extension ${spreadOf(ext)}; by hand ${spreadOf(same)}`,
      goal: '≤ 0.8×',
      met: sameRatio <= 0.8,
    },
    {
      benchmark: 'New Agent Worktree',
      measure:
        'after the last input: task entered → agent’s first output (worktree and container made while it was typed), vs the by-hand docker exec of the agent with the task',
      value: `${typedRatio.toFixed(2)}× (extension ${fmtMs(typed.median)}, by hand ${fmtMs(exec.median)})`,
      spread: `extension ${spreadOf(typed)}; by hand ${spreadOf(exec)}`,
      goal: '≤ 0.8×',
      met: typedRatio <= 0.8,
    },
  ];
}

/** A container's create as `docker run` options: what typing the same container by hand takes. */
async function runOptionsOf(name: string): Promise<string[]> {
  const info = await docker().getContainer(name).inspect();
  const args = ['--user', info.Config.User, '-w', info.Config.WorkingDir];
  for (const b of info.HostConfig.Binds ?? []) {
    // The bridge's directories went with the first container: made again, as the extension makes them.
    if (!existsSync(b.split(':')[0]!)) mkdirSync(b.split(':')[0]!, { recursive: true });
    args.push('-v', b);
  }
  for (const e of info.Config.Env ?? []) args.push('-e', e);
  for (const o of info.HostConfig.SecurityOpt ?? []) args.push('--security-opt', o);
  for (const g of info.HostConfig.GroupAdd ?? []) args.push('--group-add', g);
  for (const h of info.HostConfig.ExtraHosts ?? []) args.push('--add-host', h);
  if (info.HostConfig.PidMode) args.push('--pid', info.HostConfig.PidMode);
  return args;
}
