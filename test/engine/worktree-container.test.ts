/**
 * An agent worktree's container on the real engine, through the real backend and its bridge:
 * New Agent Worktree with a hostile prompt (a stand-in agent records the argv it got), git inside
 * the container (the main `.git` mounted at its own path, cmd/worktree.go applyWorktreeSession
 * @ c7b5e7a836c6074b4860db7a08d92bf6845cfa61), a commit pushed through the credential bridge to a
 * local HTTP origin (test/fixtures/git-http-server.py, basic auth), and a failed create that leaves
 * nothing behind. The container starts while git fetches and adds (decision 0032): its holder is
 * started by the container (no exec), a checkout that brings another .toolbox.yaml than git had
 * when the container was planned starts it again, and a refused fetch leaves no container either.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { createServer } from 'node:net';
import assert from 'node:assert/strict';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { objectNames } from '../../extension/src/contract/objects';
import { WorktreeError } from '../../extension/src/host/worktree';
import { docker, removeNamespaceObjects } from '../support/docker';
import { execIn } from '../support/exec';
import { testBackend, type TestBackend } from '../support/backend';
import { ensureTestRuntimeImage } from '../support/image';
import { installStandInAgent } from '../support/standInAgent';

const GIT_SERVER = resolve(__dirname, '../../../test/fixtures/git-http-server.py');
const PASSWORD = `pw-${Math.random().toString(16).slice(2)}`;
/** The host as containers on the default bridge network reach it. */
const GATEWAY = '172.17.0.1';
const PROMPT =
  'Fix it: $(touch /home/toolbox/.toolbox-state/pwned) `touch /home/toolbox/.toolbox-state/pwned2`; echo "quoted" \'single\'\nsecond line & | > x';

function git(cwd: string, env: NodeJS.ProcessEnv, ...args: string[]): string {
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  return (require('node:child_process') as typeof import('node:child_process'))
    .execFileSync('git', args, { cwd, env, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] })
    .trim();
}

describe('an agent worktree in its container (real engine, real bridge, local HTTP origin)', () => {
  const names = objectNames(`tbxt${Math.random().toString(16).slice(2, 8)}`);
  const saved = {
    HOME: process.env.HOME,
    GIT_CONFIG_NOSYSTEM: process.env.GIT_CONFIG_NOSYSTEM,
    GIT_CONFIG_GLOBAL: process.env.GIT_CONFIG_GLOBAL,
  };
  let dir: string;
  let home: string;
  let repo: string;
  let server: ChildProcess | undefined;
  let env: NodeJS.ProcessEnv;
  let backend: TestBackend;
  let image: string;

  before(async () => {
    image = await ensureTestRuntimeImage();
    dir = mkdtempSync(join(tmpdir(), `${names.prefix}-wt-`));
    home = join(dir, 'home');
    mkdirSync(home);
    // The container sees ~/.gitconfig (read-only, the identity for its commits). The host's
    // credential helper is in a global config the container cannot see: the bridge refuses one
    // set in any file a container mount names.
    writeFileSync(join(home, '.gitconfig'), '[user]\n\tname = Test\n\temail = test@example.com\n');
    const hostConfig = join(dir, 'host-gitconfig');
    writeFileSync(
      hostConfig,
      `[user]\n\tname = Test\n\temail = test@example.com\n[init]\n\tdefaultBranch = main\n[credential]\n\thelper = store --file ${join(dir, 'git-credentials')}\n`,
    );
    env = { ...process.env, HOME: home, GIT_CONFIG_NOSYSTEM: '1', GIT_CONFIG_GLOBAL: hostConfig, GIT_TERMINAL_PROMPT: '0' };
    // The backend's host git and the bridge's credential helper run with this home and config.
    process.env.HOME = home;
    process.env.GIT_CONFIG_NOSYSTEM = '1';
    process.env.GIT_CONFIG_GLOBAL = hostConfig;
    const srv = join(dir, 'srv');
    mkdirSync(srv);
    git(dir, env, 'init', '--bare', '-b', 'main', join(srv, 'origin.git'));
    git(join(srv, 'origin.git'), env, 'config', 'http.receivepack', 'true');
    const portFile = join(dir, 'port');
    server = spawn('python3', [GIT_SERVER, srv, 'alice', PASSWORD, portFile, '0', GATEWAY], { stdio: 'ignore' });
    for (let i = 0; i < 100 && !existsSync(portFile); i++) await new Promise((r) => setTimeout(r, 50));
    const port = readFileSync(portFile, 'utf8').trim();
    const url = `http://${GATEWAY}:${port}/origin.git`;
    writeFileSync(join(dir, 'git-credentials'), `http://alice:${PASSWORD}@${GATEWAY}%3a${port}\n`, { mode: 0o600 });
    const seed = join(dir, 'seed');
    git(dir, env, 'init', '-b', 'main', seed);
    writeFileSync(join(seed, 'README.md'), 'hello\n');
    // The image is the user's choice (~/.toolbox.yaml): from the project file it would wait for approval (docs/decisions/0041).
    writeFileSync(join(home, '.toolbox.yaml'), `image: ${image}\n`);
    writeFileSync(join(seed, '.toolbox.yaml'), 'peer_messaging: false\n');
    git(seed, env, 'add', '.');
    git(seed, env, 'commit', '-m', 'initial');
    git(seed, env, 'push', url, 'main');
    repo = join(dir, 'repo');
    git(dir, env, 'clone', url, repo);
    // The stand-in agent writes each argument NUL-terminated where the host can read it, then says so.
    installStandInAgent(
      home,
      'claude',
      '#!/bin/sh\nout=/home/toolbox/.toolbox-state/agent-argv\n: > "$out"\nfor a in "$@"; do printf \'%s\\0\' "$a" >> "$out"; done\necho "STAND-IN AGENT $# ARGS"\n',
    );
    backend = testBackend(names, home, {
      pathExists: existsSync,
      // Nobody answers: a host that is not a remote of the repository is refused.
      credentialConsent: { prompt: () => new Promise(() => undefined) },
    });
  });

  after(async () => {
    backend?.dispose();
    server?.kill();
    for (const [k, v] of Object.entries(saved)) {
      if (v === undefined) delete process.env[k];
      else process.env[k] = v;
    }
    await removeNamespaceObjects(docker(), names).catch(() => undefined);
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it('creates the worktree, starts the agent with the prompt as one argument, and git works inside', async () => {
    const logged: string[] = [];
    const progress = { step: () => undefined, log: (line: string) => void logged.push(line) };
    const opened = await backend.createAgentWorktree(
      { folder: repo, branch: 'agent/task-1', prompt: PROMPT },
      progress,
      new AbortController().signal,
    );
    assert.ok(opened);
    assert.equal(opened.path, join(repo, '.worktrees', 'tbx-agent-task-1'));
    assert.equal(opened.session.action, 'create');
    assert.ok(
      !logged.some((l) => /own configuration differs/.test(l)),
      `planned from the checkout's own .toolbox.yaml: ${logged.join(' | ')}`,
    );
    // Started while the folder was empty, the container starts again once the checkout is there,
    // with the checkout's protected paths read-only (plan/protect.ts awaitingCheckout).
    assert.ok(
      logged.some((l) => /starts again with its protected paths read-only/.test(l)),
      logged.join(' | '),
    );
    // The image's entrypoint started the session holder: nothing was exec'd into the container.
    assert.deepEqual((await docker().getContainer(opened.session.id).inspect()).ExecIDs ?? [], []);
    const shell = await opened.session.start({ cols: 120, rows: 30 });
    let screen = '';
    shell.stream.on('data', (b: Buffer) => (screen += b.toString('utf8')));
    for (let i = 0; i < 600 && !/STAND-IN AGENT 1 ARGS/.test(screen); i++) await new Promise((r) => setTimeout(r, 100));
    assert.match(screen, /STAND-IN AGENT 1 ARGS/, `the agent did not start: ${JSON.stringify(screen.slice(-400))}`);
    const state = join(home, '.toolbox', 'toolbox', 'state');
    assert.deepEqual(readFileSync(join(state, 'agent-argv'), 'utf8').split('\0').slice(0, -1), [PROMPT], 'the exact text, one argument');
    assert.equal(existsSync(join(state, 'pwned')), false, '$(…) in the prompt ran');
    assert.equal(existsSync(join(state, 'pwned2')), false, 'backticks in the prompt ran');

    const container = docker().getContainer(opened.session.id);
    // Podman reports each bind with the options it added (`:rw,rprivate,rbind`); Docker as sent.
    const binds = ((await container.inspect()).HostConfig.Binds ?? []).map((b) => b.replace(/:rw,rprivate,rbind$/, ''));
    assert.ok(binds.includes(`${repo}/.git:${repo}/.git`), `the main .git is mounted at its own path: ${binds.join(', ')}`);
    const inside = (script: string) => execIn(container, ['sh', '-c', script], { workdir: opened.path, env: ['GIT_TERMINAL_PROMPT=0'] });
    const status = await inside('git status --porcelain=v1 --branch');
    assert.equal(status.code, 0, status.stderr);
    assert.match(status.stdout, /^## agent\/task-1/);
    const commit = await inside('echo work > work.txt && git add work.txt && git commit -q -m "agent work" && git rev-parse HEAD');
    assert.equal(commit.code, 0, commit.stderr);
    const pushed = await inside('git push 2>&1');
    assert.equal(pushed.code, 0, `push through the credential bridge failed: ${pushed.stdout}${pushed.stderr}`);
    assert.equal(git(repo, env, 'ls-remote', 'origin', 'refs/heads/agent/task-1').split('\t')[0], commit.stdout.trim());
    shell.dispose();
  });

  it('re-opens a worktree whose container is gone: a new container, the agent relaunched', async () => {
    const path = join(repo, '.worktrees', 'tbx-agent-task-1');
    const [listed] = (await backend.agentWorktrees([repo])).filter((w) => w.branch === 'agent/task-1');
    assert.equal(listed?.container?.state, 'running');
    await backend.stopContainer(listed.container.name);
    const prepared = await backend.prepareShell({ folder: path, worktree: { root: repo } });
    const session = await prepared.open({ step: () => undefined, log: () => undefined }, new AbortController().signal);
    assert.equal(session.action, 'create');
    const shell = await session.start({ cols: 100, rows: 30 });
    let screen = '';
    shell.stream.on('data', (b: Buffer) => (screen += b.toString('utf8')));
    for (let i = 0; i < 600 && !/STAND-IN AGENT 0 ARGS/.test(screen); i++) await new Promise((r) => setTimeout(r, 100));
    assert.match(screen, /STAND-IN AGENT 0 ARGS/, 'the agent is relaunched, without the first task');
    shell.dispose();
  });

  it('removes a worktree: container stopped, folder and branch gone, origin only when asked', async () => {
    const [before] = (await backend.agentWorktrees([repo])).filter((w) => w.branch === 'agent/task-1');
    assert.ok(before?.container);
    const risk = await backend.agentWorktreeRisk({ root: repo, branch: 'agent/task-1' });
    assert.deepEqual(risk.dirtyFiles, []);
    assert.equal(risk.pushed, true);
    const out = await backend.removeAgentWorktree({ root: repo, branch: 'agent/task-1' }, { force: false, deleteRemote: true });
    assert.equal(out.branchDeleted, true);
    assert.equal(out.remoteDeleted, true);
    assert.equal(existsSync(before.path), false);
    assert.equal(git(repo, env, 'ls-remote', 'origin', 'refs/heads/agent/task-1'), '');
    for (let i = 0; i < 100; i++) {
      const left = await docker().listContainers({ all: true, filters: { name: [before.container.name] } });
      if (left.length === 0) break;
      await new Promise((r) => setTimeout(r, 100));
    }
    assert.deepEqual(await docker().listContainers({ all: true, filters: { name: [before.container.name] } }), []);
  });

  it('makes the worktree and starts its container while the task is typed; the agent gets the task given afterwards', async () => {
    let give!: (task: string | undefined) => void;
    const task = new Promise<string | undefined>((resolve) => (give = resolve));
    let ready!: () => void;
    const waiting = new Promise<void>((resolve) => (ready = resolve));
    const progress = { step: (s: string) => (/waiting for the task/.test(s) ? ready() : undefined), log: () => undefined };
    const creating = backend.createAgentWorktree(
      { folder: repo, branch: 'agent/typed', prompt: task },
      progress,
      new AbortController().signal,
    );
    await waiting;
    // Before the task is given: the worktree is checked out and its container runs.
    const path = join(repo, '.worktrees', 'tbx-agent-typed');
    assert.equal(git(path, env, 'rev-parse', '--abbrev-ref', 'HEAD'), 'agent/typed');
    const running = await docker().listContainers({ filters: { name: [`${names.prefix}-tbx-agent-typed`] } });
    assert.equal(running.length, 1, 'the container runs while the task is typed');
    give('second task; $(touch /tmp/pwned3)');
    const opened = await creating;
    assert.ok(opened);
    const shell = await opened.session.start({ cols: 100, rows: 30 });
    let screen = '';
    shell.stream.on('data', (b: Buffer) => (screen += b.toString('utf8')));
    for (let i = 0; i < 600 && !/STAND-IN AGENT 1 ARGS/.test(screen); i++) await new Promise((r) => setTimeout(r, 100));
    assert.match(screen, /STAND-IN AGENT 1 ARGS/);
    const argv = readFileSync(join(home, '.toolbox', 'toolbox', 'state', 'agent-argv'), 'utf8');
    assert.deepEqual(argv.split('\0').slice(0, -1), ['second task; $(touch /tmp/pwned3)']);
    shell.dispose();
    await backend.removeAgentWorktree({ root: repo, branch: 'agent/typed' }, { force: true, deleteRemote: false });
  });

  it('removes the worktree, its branch and its container again when the task question is cancelled', async () => {
    let give!: (task: string | undefined) => void;
    const task = new Promise<string | undefined>((resolve) => (give = resolve));
    const logged: string[] = [];
    const progress = {
      step: (s: string) => (/waiting for the task/.test(s) ? give(undefined) : undefined),
      log: (line: string) => void logged.push(line),
    };
    const opened = await backend.createAgentWorktree(
      { folder: repo, branch: 'agent/cancelled', prompt: task },
      progress,
      new AbortController().signal,
    );
    assert.equal(opened, undefined);
    assert.ok(
      logged.some((l) => /^Cancelled: the worktree agent\/cancelled and its container were removed again/.test(l)),
      logged.join(' | '),
    );
    assert.equal(existsSync(join(repo, '.worktrees', 'tbx-agent-cancelled')), false);
    assert.equal(git(repo, env, 'branch', '--list', 'agent/cancelled'), '');
    assert.ok(!git(repo, env, 'worktree', 'list').includes('tbx-agent-cancelled'));
    for (let i = 0; i < 100; i++) {
      const left = await docker().listContainers({ all: true, filters: { name: [`${names.prefix}-tbx-agent-cancelled`] } });
      if (left.length === 0) break;
      await new Promise((r) => setTimeout(r, 100));
    }
    assert.deepEqual(await docker().listContainers({ all: true, filters: { name: [`${names.prefix}-tbx-agent-cancelled`] } }), []);
  });

  it('starts the container again when the checkout brings another .toolbox.yaml than git had when it was planned', async () => {
    // origin moves on without this clone fetching: its origin/main still has the old file.
    const seed = join(dir, 'seed');
    writeFileSync(join(seed, '.toolbox.yaml'), 'peer_messaging: false\nenv:\n  TBXT_MARK: fresh\n');
    git(seed, env, 'commit', '-q', '-am', 'mark');
    git(seed, env, 'push', '-q', git(repo, env, 'remote', 'get-url', 'origin'), 'main');
    const logged: string[] = [];
    const progress = { step: () => undefined, log: (line: string) => void logged.push(line) };
    const opened = await backend.createAgentWorktree({ folder: repo, branch: 'agent/moved' }, progress, new AbortController().signal);
    assert.ok(opened);
    assert.ok(
      logged.some((l) => /starts again/.test(l)),
      `the container planned from the stale file was replaced: ${logged.join(' | ')}`,
    );
    const info = await docker().getContainer(opened.session.id).inspect();
    assert.ok(info.Config.Env.includes('TBXT_MARK=fresh'), `the container has the checkout's configuration: ${info.Config.Env.join(' ')}`);
    const shell = await opened.session.start({ cols: 100, rows: 30 });
    let screen = '';
    shell.stream.on('data', (b: Buffer) => (screen += b.toString('utf8')));
    for (let i = 0; i < 600 && !/STAND-IN AGENT 0 ARGS/.test(screen); i++) await new Promise((r) => setTimeout(r, 100));
    assert.match(screen, /STAND-IN AGENT 0 ARGS/);
    shell.dispose();
    const others = await docker().listContainers({ all: true, filters: { name: [`${names.prefix}-tbx-agent-moved`] } });
    assert.deepEqual(
      others.map((c) => c.Id),
      [opened.session.id],
      'the first container is gone',
    );
    git(repo, env, 'pull', '-q', '--ff-only', 'origin', 'main');
  });

  it('leaves nothing behind when the fetch fails after the container started alongside it', async () => {
    // An origin that accepts the connection and answers nothing for a while, then hangs up.
    const hang = createServer((sock) => setTimeout(() => sock.destroy(), 3_000));
    await new Promise<void>((r) => hang.listen(0, '127.0.0.1', r));
    const url = git(repo, env, 'remote', 'get-url', 'origin');
    git(repo, env, 'remote', 'set-url', 'origin', `http://127.0.0.1:${(hang.address() as { port: number }).port}/origin.git`);
    const steps: string[] = [];
    try {
      await assert.rejects(
        backend.createAgentWorktree(
          { folder: repo, branch: 'refused' },
          { step: (s: string) => void steps.push(s), log: () => undefined },
          new AbortController().signal,
        ),
        (err: unknown) => err instanceof WorktreeError && err.code === 'fetch-failed',
      );
    } finally {
      git(repo, env, 'remote', 'set-url', 'origin', url);
      hang.close();
    }
    assert.ok(
      steps.some((s) => /^Starting the container/.test(s)),
      `the container was started while git fetched: ${steps.join(' | ')}`,
    );
    assert.equal(existsSync(join(repo, '.worktrees', 'tbx-refused')), false);
    assert.equal(git(repo, env, 'branch', '--list', 'refused'), '');
    const left = await docker().listContainers({ all: true, filters: { name: [`${names.prefix}-tbx-refused`] } });
    assert.deepEqual(left, []);
  });

  it('leaves nothing behind when the container cannot be made', async () => {
    const progress = { step: () => undefined, log: () => undefined };
    // An image that does not exist and may not be pulled: the open fails after the worktree exists.
    const userFile = join(home, '.toolbox.yaml');
    const userText = readFileSync(userFile, 'utf8');
    writeFileSync(userFile, 'image: tbxt-no-such-image/x:none\npull: never\n');
    try {
      await assert.rejects(
        backend.createAgentWorktree({ folder: repo, branch: 'doomed' }, progress, new AbortController().signal),
        /nothing is left behind/,
      );
    } finally {
      writeFileSync(userFile, userText);
    }
    assert.equal(existsSync(join(repo, '.worktrees', 'tbx-doomed')), false);
    assert.equal(git(repo, env, 'branch', '--list', 'doomed'), '');
    assert.ok(!git(repo, env, 'worktree', 'list').includes('tbx-doomed'));
    const left = await docker().listContainers({ all: true, filters: { name: [`${names.prefix}-tbx-doomed`] } });
    assert.deepEqual(left, []);
  });
});
