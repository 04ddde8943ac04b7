import assert from 'node:assert/strict';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { call, startRig, tcpTarget, unixTarget, type Rig } from './support';

const SECRET = 'pa55-w0rd-s3cret';

describe('/credential against the host git (credential.helper store in a temp HOME)', () => {
  let rig: Rig;
  let store: string;
  before(async () => {
    rig = await startRig({
      prepare({ root, home, workspace }) {
        const file = join(root, 'git-credentials');
        writeFileSync(join(home, '.gitconfig'), `[credential]\n\thelper = store --file ${file}\n`);
        // git.example is the workspace's own remote, so it is allowed without asking.
        mkdirSync(join(workspace, '.git'));
        writeFileSync(join(workspace, '.git', 'config'), '[remote "origin"]\n\turl = https://git.example/team/repo.git\n');
      },
      hub: ({ home }) => ({ env: { PATH: process.env.PATH, HOME: home, GIT_CONFIG_NOSYSTEM: '1' } }),
    });
    store = join(rig.root, 'git-credentials');
  });
  after(async () => {
    await rig.cleanup();
  });

  const credential = (op: string, input: string) => call(unixTarget(rig), '/credential', { token: rig.token, body: { op, input } });
  const parse = (text: string) => JSON.parse(text) as { exit: number; output: string };

  it('stores a credential with approve, returns it with fill, and forgets it with reject', async () => {
    const stored = await credential('store', `protocol=https\nhost=git.example\nusername=alice\npassword=${SECRET}\n`);
    assert.equal(stored.status, 200);
    assert.equal(parse(stored.text).exit, 0);
    assert.match(readFileSync(store, 'utf8'), new RegExp(`https://alice:${SECRET}@git\\.example`));

    const filled = await call(tcpTarget(rig), '/credential', {
      token: rig.token,
      body: { op: 'get', input: 'protocol=https\nhost=git.example\n' },
    });
    assert.equal(filled.status, 200);
    const fill = parse(filled.text);
    assert.equal(fill.exit, 0);
    assert.match(fill.output, /^username=alice$/m);
    assert.match(fill.output, new RegExp(`^password=${SECRET}$`, 'm'));

    const erased = await credential('erase', 'protocol=https\nhost=git.example\nusername=alice\n');
    assert.equal(erased.status, 200);
    assert.equal(existsSync(store) ? readFileSync(store, 'utf8').includes(SECRET) : false, false);

    // Nothing stored any more and prompts are disabled: git fails, its exit passes through.
    const missing = parse((await credential('get', 'protocol=https\nhost=git.example\n')).text);
    assert.notEqual(missing.exit, 0);
    assert.equal(missing.output.includes(SECRET), false);
  });

  it('refuses input that is not git credential protocol, and unknown ops', async () => {
    for (const input of ['protocol=https\nevil=1\n', 'protocol=https\nno-equals-sign\n', '=value\n', 'host=a\0b\n']) {
      const reply = await credential('get', input);
      assert.equal(reply.status, 400, JSON.stringify(input));
    }
    assert.equal((await credential('list', 'protocol=https\n')).status, 400);
    assert.equal((await call(unixTarget(rig), '/credential', { token: rig.token, body: { op: 'get', input: '', extra: 1 } })).status, 400);
    const accepted = await credential('get', 'protocol=https\nhost=git.example\ncapability[]=authtype\nwwwauth[]=Basic realm="x"\n');
    assert.equal(accepted.status, 200);
  });

  it('never writes a credential into the log', () => {
    const logged = JSON.stringify(rig.recorded.events);
    assert.ok(rig.recorded.events.some((e) => e.kind === 'request' && e.route === '/credential' && e.status === 400));
    assert.equal(logged.includes(SECRET), false);
    assert.equal(logged.includes('alice'), false);
    assert.equal(logged.includes('evil'), false);
  });
});
