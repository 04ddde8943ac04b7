import assert from 'node:assert/strict';
import { mkdirSync } from 'node:fs';
import { delimiter, join } from 'node:path';
import { after, before, beforeEach, describe, it } from 'node:test';
import { call, installFakeProximo, startRig, unixTarget, type Rig } from './support';

type Fake = ReturnType<typeof installFakeProximo>;

/**
 * A rig whose PATH finds the fake proximo first; no fallback dirs, so only that binary can run.
 * The workspace's agent homes (what its container mounts) are <root>/agent and <root>/agent/.codex.
 */
async function proximoRig(registration: { proximoEnabled?: boolean } = {}): Promise<{ rig: Rig; fake: Fake }> {
  let fake: Fake | undefined;
  let root = '';
  const rig = await startRig({
    prepare(dirs) {
      root = dirs.root;
      fake = installFakeProximo(join(root, 'bin'));
      mkdirSync(join(root, 'agent', '.codex'), { recursive: true });
    },
    hub: (dirs) => ({
      env: { PATH: `${join(dirs.root, 'bin')}${delimiter}${process.env.PATH}` },
      proximoFallbackDirs: [],
    }),
    registration,
  });
  await rig.hub.ensureWorkspace({
    ...rig.registration,
    defaultAgentHome: join(root, 'agent'),
    defaultCodexHome: join(root, 'agent', '.codex'),
  });
  return { rig, fake: fake as Fake };
}

describe('/proximo with the fake host binary', () => {
  let rig: Rig;
  let fake: Fake;
  let agentHome: string;
  let codexHome: string;
  let runs = 0;
  before(async () => {
    ({ rig, fake } = await proximoRig());
    agentHome = join(rig.root, 'agent');
    codexHome = join(agentHome, '.codex');
  });
  after(async () => {
    await rig.cleanup();
  });
  beforeEach(() => {
    runs = fake.calls().length;
  });
  const post = (body: Record<string, unknown>) => call(unixTarget(rig), '/proximo', { token: rig.token, body });
  const newCalls = () => fake.calls().slice(runs);

  it('runs an allowed verb with its args and returns exit and combined output', async () => {
    const reply = await post({ command: 'status', args: ['--json'] });
    assert.equal(reply.status, 200);
    const body = JSON.parse(reply.text) as { exit: number; output: string };
    assert.equal(body.exit, 0);
    assert.match(body.output, /"bare":"web.test"/);
    const [run] = newCalls();
    assert.ok(run);
    assert.deepEqual(run.argv, ['status', '--json']);
    assert.equal(run.cwd, rig.home);
    assert.equal(run.env.HOME, undefined, 'no HOME rewrite outside skill');
    assert.equal(run.env.PATH?.split(delimiter)[0], join(rig.root, 'bin'), "the binary's dir comes first on PATH");
    assert.ok(run.env.PATH?.split(delimiter).includes('/usr/local/bin'));
  });

  it('passes a non-zero exit code through as a 200 with stderr in the output', async () => {
    const reply = await post({ command: 'up', args: ['--image', 'example/stack:1', '--fake-exit=3'] });
    assert.equal(reply.status, 200);
    const body = JSON.parse(reply.text) as { exit: number; output: string };
    assert.equal(body.exit, 3);
    assert.match(body.output, /fake proximo ran: up --image example\/stack:1 --fake-exit=3/);
    assert.match(body.output, /fake proximo stderr line/);
  });

  it("runs skill install at --scope global with HOME and CODEX_HOME set to the container's agent homes, and asks for a restart", async () => {
    const reply = await post({ command: 'skill', args: ['install'], home: agentHome, codex_home: codexHome });
    assert.equal(reply.status, 200);
    assert.match((JSON.parse(reply.text) as { output: string }).output, /Restart the agent session/);
    const [run] = newCalls();
    assert.deepEqual(run?.argv, ['skill', 'install', '--scope', 'global']);
    assert.equal(run?.env.HOME, agentHome);
    assert.equal(run?.env.CODEX_HOME, codexHome);
  });

  it("uses the container's agent homes when the shim sends neither", async () => {
    assert.equal((await post({ command: 'skill', args: ['uninstall'] })).status, 200);
    const [run] = newCalls();
    assert.deepEqual(run?.argv, ['skill', 'uninstall', '--scope', 'global']);
    assert.equal(run?.env.HOME, agentHome);
    assert.equal(run?.env.CODEX_HOME, codexHome);
  });

  it('adds no scope to a bare skill, keeps an explicit global scope, and puts the scope before a "--"', async () => {
    await post({ command: 'skill', args: ['list'], home: agentHome, codex_home: codexHome });
    await post({ command: 'skill', args: ['install', '--scope=global'], home: agentHome, codex_home: codexHome });
    await post({ command: 'skill', args: ['install', '--', 'extra'], home: agentHome, codex_home: codexHome });
    assert.deepEqual(
      newCalls().map((c) => c.argv),
      [
        ['skill', 'list'],
        ['skill', 'install', '--scope=global'],
        ['skill', 'install', '--scope', 'global', '--', 'extra'],
      ],
    );
  });

  it('refuses skill homes other than the ones this container mounts (HOME=/root, CODEX_HOME=/etc) and runs nothing', async () => {
    const cases: Array<Record<string, unknown>> = [
      { home: '/root', codex_home: '/etc' },
      { home: '/root', codex_home: codexHome },
      { home: agentHome, codex_home: '/etc' },
      { home: rig.home, codex_home: codexHome },
      { home: 'agent', codex_home: codexHome },
      { home: `${agentHome}/../agent`, codex_home: codexHome },
      { home: `${agentHome}/`, codex_home: codexHome },
      { codex_home: join(rig.home, '.toolbox', '.codex') },
    ];
    for (const homes of cases) {
      const reply = await post({ command: 'skill', args: ['install'], ...homes });
      assert.equal(reply.status, 502, `${JSON.stringify(homes)}: upstream answers 502 for a home it cannot use`);
      assert.match(reply.text, /is not the agent home this container mounts/);
    }
    assert.deepEqual(newCalls(), []);
  });

  it('accepts either home sent alone when it is the pinned one (as upstream, which checks only the homes sent)', async () => {
    assert.equal((await post({ command: 'skill', args: ['install'], home: agentHome })).status, 200);
    assert.equal(newCalls()[0]?.env.CODEX_HOME, codexHome);
    assert.equal((await post({ command: 'skill', args: ['install'], codex_home: codexHome })).status, 200);
    assert.deepEqual([newCalls().at(-1)?.env.HOME, newCalls().at(-1)?.env.CODEX_HOME], [agentHome, codexHome]);
  });

  it('accepts an explicit --scope global, in both spellings, and adds no second one', async () => {
    for (const args of [
      ['install', '--scope', 'global', 'web'],
      ['uninstall', '--scope=global', 'web'],
    ]) {
      assert.equal((await post({ command: 'skill', args, home: agentHome, codex_home: codexHome })).status, 200, args.join(' '));
      assert.deepEqual(newCalls().at(-1)?.argv, ['skill', ...args]);
    }
  });

  it('refuses the argument smuggling cases and runs nothing', async () => {
    const cases: Array<[string, string[], RegExp]> = [
      ['errors', ['dom'], /errors dom is refused/],
      ['errors', ['dom', 'web.test'], /errors dom is refused/],
      ['errors', ['web.test', 'dom'], /errors dom is refused/],
      ['errors', ['--since', '1h', 'dom', 'web.test'], /errors dom is refused/],
      ['skill', ['install', '--scope', 'global', '--scope', 'project'], /"--scope" is given more than once/],
      ['skill', ['install', '--scope=global', '--scope=project'], /"--scope" is given more than once/],
      ['skill', ['install', '--scope', 'global', '--scope=project'], /"--scope" is given more than once/],
      ['skill', ['install', '--force', '--force'], /"--force" is given more than once/],
      ['errors', ['transcript', '--out=/x'], /"--out=\/x" is refused/],
      ['errors', ['transcript', '--out', '/x'], /"--out" is refused/],
      ['errors', ['transcript', '--output=/x'], /"--output=\/x" is refused/],
      ['errors', ['transcript', '-o', 'x'], /"-o" is refused/],
      ['errors', ['transcript', '-ao'], /"-ao" is refused/],
      ['errors', ['transcript', '-out=/x'], /"-out=\/x" is refused/],
      ['skill', ['install', '--scope', 'project'], /--scope project is refused: .*host's working directory/],
      ['skill', ['install', '--scope=project'], /--scope project is refused/],
    ];
    for (const [command, args, reason] of cases) {
      const reply = await post({ command, args, home: agentHome, codex_home: codexHome });
      assert.equal(reply.status, 400, `${command} ${args.join(' ')}`);
      assert.match(reply.text, reason);
    }
    assert.deepEqual(newCalls(), []);
  });

  it('lets "-" and "--" through', async () => {
    assert.equal((await post({ command: 'errors', args: ['transcript', '-', '--', 'web.test'] })).status, 200);
    assert.deepEqual(newCalls()[0]?.argv, ['errors', 'transcript', '-', '--', 'web.test']);
  });

  it('refuses host-only verbs naming the command to run on the host, and unknown verbs', async () => {
    for (const command of ['install', 'uninstall', 'trust', 'config']) {
      const reply = await post({ command, args: command === 'config' ? ['tld', 'dev'] : [] });
      assert.equal(reply.status, 400, command);
      assert.match(reply.text, new RegExp(`host-only.*Run \`proximo ${command}`));
    }
    const unknown = await post({ command: 'update' });
    assert.equal(unknown.status, 400);
    assert.match(unknown.text, /allowed: up, down, status, errors, skill/);
    assert.deepEqual(newCalls(), []);
  });

  it('refuses unknown fields and non-string args', async () => {
    const extra = await post({ command: 'status', cwd: '/' });
    assert.equal(extra.status, 400);
    assert.match(extra.text, /unknown field "cwd"/);
    assert.equal((await post({ command: 'status', args: [1] })).status, 400);
    assert.deepEqual(newCalls(), []);
  });
});

describe('/proximo availability', () => {
  it('refuses a workspace with proximo off, saying so', async () => {
    const { rig, fake } = await proximoRig({ proximoEnabled: false });
    try {
      const reply = await call(unixTarget(rig), '/proximo', { token: rig.token, body: { command: 'status' } });
      assert.equal(reply.status, 400);
      assert.match(reply.text, /proximo: false .* or proximo is not installed/);
      assert.deepEqual(fake.calls(), []);
    } finally {
      await rig.cleanup();
    }
  });

  it('answers 502 naming the install command when proximo is not on the host', async () => {
    const rig = await startRig({ hub: { env: { PATH: process.env.PATH }, proximoFallbackDirs: [] } });
    try {
      const reply = await call(unixTarget(rig), '/proximo', { token: rig.token, body: { command: 'status', args: [] } });
      assert.equal(reply.status, 502);
      assert.match(reply.text, /proximo is not installed on the host/);
      assert.match(reply.text, /go install github\.com\/filippolmt\/proximo@latest/);
      assert.match(reply.text, /brew install filippolmt\/tap\/proximo/);
    } finally {
      await rig.cleanup();
    }
  });
});
