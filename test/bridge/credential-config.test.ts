/**
 * Issue 11, finding 1: the bridge's host-side `git credential` must run with a configuration and
 * an environment the container cannot influence. Each test performs the attack against the real
 * bridge and real git (credential.helper store in a temp HOME) and asserts that no marker file
 * appears on the host; the last one records the environment a fake git receives.
 */
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { appendFileSync, chmodSync, copyFileSync, existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { delimiter, join, resolve } from 'node:path';
import { describe, it } from 'node:test';
import { FORCED_GIT_CONFIG, GIT_ENV_ALLOWLIST } from '../../extension/src/bridge/hostGit';
import { call, startRig, unixTarget, type Rig, type RigOptions } from './support';

const SECRET = 'host-only-s3cret-91c2';
const REMOTE = '[remote "origin"]\n\turl = https://git.example/team/repo.git\n';
const FAKE_GIT_SOURCE = resolve(__dirname, '../../../test/fixtures/fake-git');

interface Attack {
  rig: Rig;
  marker: string;
  store: string;
  get(host?: string): Promise<{ status: number; text: string }>;
}

/** A rig whose HOME has a credential store holding SECRET for git.example, its workspace that remote. */
async function attackRig(
  extra: { prepare?: (dirs: { root: string; home: string; workspace: string }) => void } & Omit<RigOptions, 'prepare'> = {},
): Promise<Attack> {
  let marker = '';
  let store = '';
  const rig = await startRig({
    ...extra,
    prepare(dirs) {
      marker = join(dirs.root, 'MARKER');
      store = join(dirs.root, 'git-credentials');
      writeFileSync(store, `https://alice:${SECRET}@git.example\n`, { mode: 0o600 });
      writeFileSync(join(dirs.home, '.gitconfig'), `[credential]\n\thelper = store --file ${store}\n`);
      mkdirSync(join(dirs.workspace, '.git'), { recursive: true });
      writeFileSync(join(dirs.workspace, '.git', 'config'), REMOTE);
      extra.prepare?.(dirs);
    },
    hub: extra.hub ?? (({ home }) => ({ env: { PATH: process.env.PATH, HOME: home, GIT_CONFIG_NOSYSTEM: '1' } })),
  });
  return {
    rig,
    marker,
    store,
    get: (host = 'git.example') =>
      call(unixTarget(rig), '/credential', { token: rig.token, body: { op: 'get', input: `protocol=https\nhost=${host}\n` } }),
  };
}

const evilHelper = (marker: string) => `[credential]\n\thelper = "!sh -c 'touch ${marker}'"\n`;
const storeText = (a: Attack) => readFileSync(a.store, 'utf8');

describe('/credential runs host git on config the container cannot write (issue 11, finding 1)', () => {
  it('refuses when a gitconfig the container can write (an older container mounted it read-write) adds a helper', async () => {
    let gitconfig = '';
    const a = await attackRig({
      prepare: ({ home }) => {
        gitconfig = join(home, '.gitconfig');
      },
    });
    try {
      // The engine registers the container's read-write mount sources; here the host ~/.gitconfig.
      await a.rig.hub.ensureWorkspace({ ...a.rig.registration, writableRoots: [gitconfig] });
      const before = storeText(a);
      // What the container does through its read-write /home/toolbox/.gitconfig.
      appendFileSync(gitconfig, evilHelper(a.marker));
      const reply = await a.get();
      assert.equal(reply.status, 403, reply.text);
      assert.match(reply.text, /writable from this container/);
      assert.equal(existsSync(a.marker), false, 'the helper the container added ran on the host');
      assert.equal(storeText(a), before);
      const warning = a.rig.recorded.events.find((e) => e.kind === 'warn' && e.message.includes('credential.helper is set in'));
      assert.ok(warning, JSON.stringify(a.rig.recorded.events));
      assert.match(
        warning.kind === 'warn' ? warning.message : '',
        new RegExp(`set in ${gitconfig.replace(/[.]/g, '\\.')}, which the container can write`),
      );
      assert.equal(JSON.stringify(a.rig.recorded.events).includes(SECRET), false);
    } finally {
      await a.rig.cleanup();
    }
  });

  it("runs the user's own helper from a ~/.gitconfig the container has only read-only", async () => {
    const a = await attackRig();
    try {
      // The default plan binds the host ~/.gitconfig read-only when ~/.toolbox/gitconfig is missing:
      // a mount source (which /edit may open) that is not among the read-write ones.
      const gitconfig = join(a.rig.home, '.gitconfig');
      await a.rig.hub.ensureWorkspace({ ...a.rig.registration, mountsRoots: [gitconfig], writableRoots: [join(a.rig.home, '.toolbox')] });
      const reply = await a.get();
      assert.equal(reply.status, 200, reply.text);
      assert.ok(reply.text.includes(SECRET), 'the host helper answered');
      // The same file bound read-write (an older container) is refused, as above.
      await a.rig.hub.ensureWorkspace({ ...a.rig.registration, mountsRoots: [gitconfig], writableRoots: [gitconfig] });
      assert.equal((await a.get()).status, 403);
    } finally {
      await a.rig.cleanup();
    }
  });

  for (const where of ['workspace', 'mounts root'] as const) {
    it(`refuses a helper that an include.path into the ${where} adds`, async () => {
      let included = '';
      const a = await attackRig({
        prepare: ({ home, workspace }) => {
          included = where === 'workspace' ? join(workspace, '.gitconfig.team') : join(home, '.toolbox', 'gitconfig.extra');
          writeFileSync(included, '');
          appendFileSync(join(home, '.gitconfig'), `[include]\n\tpath = ${included}\n`);
        },
      });
      try {
        // The registration's mounts roots are ~/.toolbox (rig default: []), so name it here.
        await a.rig.hub.ensureWorkspace({ ...a.rig.registration, mountsRoots: [join(a.rig.home, '.toolbox')] });
        assert.equal((await a.get()).status, 200, 'an empty include is harmless');
        writeFileSync(included, evilHelper(a.marker));
        const reply = await a.get();
        assert.equal(reply.status, 403, reply.text);
        assert.equal(existsSync(a.marker), false);
      } finally {
        await a.rig.cleanup();
      }
    });
  }

  it("never reads the workspace's repository-local .git/config, even when the workspace is the home", async () => {
    let marker = '';
    const a = await attackRig({
      prepare: ({ root, home }) => {
        marker = join(root, 'MARKER');
        // The user's config lives outside the workspace (GIT_CONFIG_GLOBAL), the workspace is HOME.
        writeFileSync(join(root, 'global.gitconfig'), `[credential]\n\thelper = store --file ${join(root, 'git-credentials')}\n`);
        execFileSync('git', ['init', '-q', home], { env: { PATH: process.env.PATH, HOME: home, GIT_CONFIG_NOSYSTEM: '1' } });
        appendFileSync(join(home, '.git', 'config'), `${REMOTE}${evilHelper(marker)}`);
      },
      hub: ({ root, home }) => ({
        env: { PATH: process.env.PATH, HOME: home, GIT_CONFIG_NOSYSTEM: '1', GIT_CONFIG_GLOBAL: join(root, 'global.gitconfig') },
      }),
    });
    try {
      const ws = await startWorkspaceAt(a.rig, a.rig.home);
      const reply = await call({ socketPath: ws.socketPath }, '/credential', {
        token: ws.token,
        body: { op: 'get', input: 'protocol=https\nhost=git.example\n' },
      });
      assert.equal(reply.status, 200, reply.text);
      assert.match(reply.text, new RegExp(SECRET), 'the legitimate helper still answers');
      // A user the store has no entry for: git goes on to the next helper, the repository's.
      const other = await call({ socketPath: ws.socketPath }, '/credential', {
        token: ws.token,
        body: { op: 'get', input: 'protocol=https\nhost=git.example\nusername=bob\n' },
      });
      assert.equal(other.status, 200, other.text);
      assert.equal(existsSync(marker), false, 'the repository-local helper ran on the host');
    } finally {
      await a.rig.cleanup();
    }
  });

  it('never runs GIT_ASKPASS, SSH_ASKPASS or core.askPass, and never prompts', async () => {
    let askpass = '';
    const a = await attackRig({
      prepare: ({ root, home }) => {
        askpass = join(root, 'askpass.sh');
        writeFileSync(askpass, `#!/bin/sh\ntouch ${join(root, 'MARKER')}\necho typed-by-user\n`);
        chmodSync(askpass, 0o755);
        appendFileSync(join(home, '.gitconfig'), `[core]\n\taskPass = ${askpass}\n`);
      },
      hub: ({ root, home }) => ({
        env: {
          PATH: process.env.PATH,
          HOME: home,
          GIT_CONFIG_NOSYSTEM: '1',
          GIT_ASKPASS: join(root, 'askpass.sh'),
          SSH_ASKPASS: join(root, 'askpass.sh'),
          GIT_TERMINAL_PROMPT: '1',
        },
      }),
    });
    try {
      // git.example has an entry; ask for a user it has none for, so git would prompt.
      const reply = await call(unixTarget(a.rig), '/credential', {
        token: a.rig.token,
        body: { op: 'get', input: 'protocol=https\nhost=git.example\nusername=bob\n' },
      });
      assert.equal(reply.status, 200, reply.text);
      const result = JSON.parse(reply.text) as { exit: number; output: string };
      assert.notEqual(result.exit, 0, 'git fails instead of asking anyone');
      assert.equal(result.output.includes('typed-by-user'), false);
      assert.equal(existsSync(a.marker), false, 'an askpass program ran on the host');
    } finally {
      await a.rig.cleanup();
    }
  });

  it('gives the child git an allowlisted environment, prompts off, and only the credential config snapshot', async () => {
    let fakeGit = '';
    const a = await attackRig({
      prepare: ({ root }) => {
        mkdirSync(join(root, 'bin'));
        fakeGit = join(root, 'bin', 'git');
        copyFileSync(FAKE_GIT_SOURCE, fakeGit);
        chmodSync(fakeGit, 0o755);
      },
      hub: ({ root, home }) => ({
        env: {
          PATH: `${join(root, 'bin')}${delimiter}${process.env.PATH}`,
          HOME: home,
          GIT_ASKPASS: '/usr/bin/ssh-askpass',
          SSH_ASKPASS: '/usr/bin/ssh-askpass',
          GIT_TERMINAL_PROMPT: '1',
          GCM_INTERACTIVE: 'always',
          GIT_CONFIG_PARAMETERS: "'credential.helper=!evil'",
          GIT_CONFIG_COUNT: '1',
          GIT_CONFIG_KEY_0: 'credential.helper',
          GIT_CONFIG_VALUE_0: '!evil',
          GIT_DIR: '/somewhere/.git',
          GIT_CONFIG_GLOBAL: join(home, '.gitconfig'),
          NODE_OPTIONS: '--require /x',
          LD_PRELOAD: '/x.so',
        },
      }),
    });
    try {
      const reply = await a.get();
      assert.equal(reply.status, 200, reply.text);
      assert.match(reply.text, /fake-secret/);
      const calls = readFileSync(`${fakeGit}.calls.jsonl`, 'utf8')
        .trim()
        .split('\n')
        .map((l) => JSON.parse(l) as { argv: string[]; cwd: string; env: Record<string, string>; stdin: string });
      assert.deepEqual(
        calls.map((c) => c.argv),
        [
          ['--no-pager', 'config', '--list', '--show-origin', '-z'],
          ['credential', 'fill'],
        ],
      );
      const allowed = new Set<string>([
        ...GIT_ENV_ALLOWLIST,
        'GIT_TERMINAL_PROMPT',
        'GCM_INTERACTIVE',
        'GIT_CEILING_DIRECTORIES',
        'GIT_CONFIG_NOSYSTEM',
        'GIT_CONFIG_GLOBAL',
        'GIT_CONFIG_COUNT',
      ]);
      for (const [i, c] of calls.entries()) {
        assert.equal(c.env.GIT_TERMINAL_PROMPT, '0', `call ${i}`);
        assert.equal(c.env.GCM_INTERACTIVE, 'never', `call ${i}`);
        for (const name of ['GIT_ASKPASS', 'SSH_ASKPASS', 'GIT_CONFIG_PARAMETERS', 'GIT_DIR', 'NODE_OPTIONS', 'LD_PRELOAD']) {
          assert.equal(c.env[name], undefined, `call ${i} got ${name}`);
        }
        const unexpected = Object.keys(c.env).filter((k) => !allowed.has(k) && !/^GIT_CONFIG_(KEY|VALUE)_\d+$/.test(k));
        assert.deepEqual(unexpected, [], `call ${i}`);
        for (const dir of [a.rig.workspace, a.rig.home]) assert.ok(!c.cwd.startsWith(dir), `call ${i} ran in ${c.cwd}`);
      }
      // The resolve step reads the user's config where the extension host says it is.
      assert.equal(calls[0]?.env.GIT_CONFIG_GLOBAL, join(a.rig.home, '.gitconfig'));
      // The run step: no system or global config, only the snapshot, prompts and askpass off last.
      const run = calls[1]!;
      assert.equal(run.env.GIT_CONFIG_NOSYSTEM, '1');
      assert.notEqual(run.env.GIT_CONFIG_GLOBAL, join(a.rig.home, '.gitconfig'));
      assert.ok(!run.env.GIT_CONFIG_GLOBAL?.startsWith(a.rig.home));
      const pairs = Array.from({ length: Number(run.env.GIT_CONFIG_COUNT) }, (_, i) => [
        run.env[`GIT_CONFIG_KEY_${i}`],
        run.env[`GIT_CONFIG_VALUE_${i}`],
      ]);
      assert.deepEqual(pairs, [['credential.helper', 'store'], ...FORCED_GIT_CONFIG]);
      assert.deepEqual(FORCED_GIT_CONFIG, [
        ['core.askPass', ''],
        ['credential.interactive', 'false'],
      ]);
      assert.equal(run.stdin, 'protocol=https\nhost=git.example\n');
    } finally {
      await a.rig.cleanup();
    }
  });
});

/** Registers a second workspace on the rig's hub whose folder is `folder`: its socket and token. */
async function startWorkspaceAt(rig: Rig, folder: string): Promise<{ socketPath: string; token: string }> {
  const bridge = await rig.hub.ensureWorkspace({ ...rig.registration, key: `${rig.registration.key}-home`, workspaceFolder: folder });
  return { socketPath: bridge.socketPath, token: readFileSync(join(bridge.stateDir, 'token'), 'utf8').trim() };
}
