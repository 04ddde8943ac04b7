/**
 * The real shims in a container of the runtime image, against the real bridge (BridgeHub) with
 * its state dir and run dir bind-mounted the way the planner mounts them. The container runs as
 * uid 1000 with host networking (host.docker.internal pinned to 127.0.0.1); when the tests run
 * as root the bridge's files are chowned to 1000, standing in for "container uid = host uid".
 */
import type Docker from 'dockerode';
import assert from 'node:assert/strict';
import { chownSync, readFileSync, writeFileSync } from 'node:fs';
import { delimiter, join, resolve } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { BRIDGE_FILES, CONTAINER, ENV, HOST_DOCKER_INTERNAL, SHIM_EXIT } from '../../extension/src/contract/constants';
import { TEST_LABEL, testNamespace, type TestNamespace } from '../support/docker';
import { execIn as execCommand, type ExecResult } from '../support/exec';
import { ensureTestRuntimeImage } from '../support/image';
import { installFakeProximo, startRig, type Rig } from '../bridge/support';

const GIT_SERVER = resolve(__dirname, '../../../test/fixtures/git-http-server.py');
const hostUid = process.getuid?.() ?? 1000;
const owner = hostUid === 0 ? { uid: 1000, gid: 1000 } : { uid: hostUid, gid: process.getgid?.() ?? hostUid };
const PASSWORD = 'only-in-the-host-store-7f3a';

type Run = ExecResult;

describe('shims in the runtime image against the real bridge', () => {
  let ns: TestNamespace;
  let rig: Rig;
  let fake: ReturnType<typeof installFakeProximo>;
  let container: Docker.Container;
  let credentialStore: string;

  function execIn(script: string): Promise<Run> {
    return execCommand(container, ['sh', '-c', script], {
      env: [`${ENV.hostWorkspace}=${rig.workspace}`, 'GIT_TERMINAL_PROMPT=0'],
      workdir: CONTAINER.workspace,
    });
  }

  before(async () => {
    ns = testNamespace();
    rig = await startRig({
      prepare({ root, home, workspace }) {
        fake = installFakeProximo(join(root, 'bin'));
        writeFileSync(join(workspace, 'hello.txt'), 'hello\n');
        credentialStore = join(root, 'git-credentials');
        writeFileSync(join(home, '.gitconfig'), `[credential]\n\thelper = store --file ${credentialStore}\n`);
        writeFileSync(join(root, 'proximo-ca.pem'), 'stand-in CA: the shim only checks that it exists\n');
      },
      hub: ({ root, home }) => ({
        env: { PATH: `${join(root, 'bin')}${delimiter}${process.env.PATH}`, HOME: home, GIT_CONFIG_NOSYSTEM: '1' },
        proximoFallbackDirs: [],
      }),
    });
    const { stateDir, runDir, socketPath } = rig.bridge;
    for (const p of [stateDir, join(stateDir, BRIDGE_FILES.token), join(stateDir, BRIDGE_FILES.port), runDir, socketPath]) {
      chownSync(p, owner.uid, owner.gid);
    }
    container = await ns.docker.createContainer({
      name: `${ns.names.prefix}-bridge-e2e`,
      Image: await ensureTestRuntimeImage(),
      User: `${owner.uid}:${owner.gid}`,
      Labels: { [TEST_LABEL]: ns.names.prefix },
      HostConfig: {
        Binds: [
          `${stateDir}:${CONTAINER.bridgeDir}:ro`,
          `${runDir}:${CONTAINER.bridgeRunDir}`,
          `${rig.workspace}:${CONTAINER.workspace}`,
          `${join(rig.root, 'proximo-ca.pem')}:${CONTAINER.proximoCa}:ro`,
          `${GIT_SERVER}:/opt/git-http-server.py:ro`,
        ],
        NetworkMode: 'host',
        ExtraHosts: [`${HOST_DOCKER_INTERNAL}:127.0.0.1`],
      },
    });
    await container.start();
    // The entrypoint sets the git credential helper before it execs the command.
    let ready: Run = { code: 1, stdout: '', stderr: '' };
    for (let i = 0; i < 100 && ready.code !== 0; i++) {
      ready = await execIn('git config --system --get credential.helper');
      if (ready.code !== 0) await new Promise((r) => setTimeout(r, 100));
    }
    assert.equal(ready.code, 0, `the entrypoint never configured the credential helper: ${ready.stderr}`);
  });

  after(async () => {
    await ns?.cleanup();
    await rig?.cleanup();
  });

  it('`code /workspace/<file>` reaches openInEditor with the host path', async () => {
    const run = await execIn('code /workspace/hello.txt');
    assert.equal(run.code, SHIM_EXIT.ok, run.stderr);
    assert.deepEqual(rig.recorded.edits.at(-1), { path: join(rig.workspace, 'hello.txt'), isDirectory: false });
  });

  it('`proximo status` runs the host binary and passes its output and exit code through', async () => {
    const run = await execIn('proximo status --fake-exit=4');
    assert.equal(run.code, 4, run.stderr);
    assert.match(run.stdout, /fake proximo ran: status --fake-exit=4/);
    assert.deepEqual(fake.calls().at(-1)?.argv, ['status', '--fake-exit=4']);
  });

  it('`proximo install` is refused in the container without reaching the host', async () => {
    const requests = rig.recorded.events.filter((e) => e.kind === 'request').length;
    const calls = fake.calls().length;
    const run = await execIn('proximo install');
    assert.equal(run.code, SHIM_EXIT.refused);
    assert.match(run.stderr, /on the host/);
    assert.equal(rig.recorded.events.filter((e) => e.kind === 'request').length, requests);
    assert.equal(fake.calls().length, calls);
  });

  it('`proximo errors transcript --out=/x` is refused by the bridge', async () => {
    const calls = fake.calls().length;
    const run = await execIn('proximo errors transcript --out=/x');
    assert.equal(run.code, SHIM_EXIT.refused);
    assert.match(run.stderr, /output flags/);
    assert.equal(fake.calls().length, calls);
  });

  it('git clones a password-protected HTTP repository with the password only in the host store', async () => {
    const setup = await execIn(
      [
        'set -e',
        'rm -rf /tmp/srv /tmp/clone /tmp/git-port',
        'mkdir -p /tmp/srv/seed',
        'cd /tmp/srv/seed && git init -q -b main && echo secret-repo > README && git add README',
        'git -c user.name=t -c user.email=t@e commit -q -m init',
        'git clone -q --bare /tmp/srv/seed /tmp/srv/repo.git',
        `nohup python3 /opt/git-http-server.py /tmp/srv alice ${PASSWORD} /tmp/git-port >/tmp/git-server.log 2>&1 &`,
        'for i in $(seq 100); do [ -f /tmp/git-port ] && break; sleep 0.1; done',
        'cat /tmp/git-port',
      ].join('\n'),
    );
    assert.equal(setup.code, 0, setup.stderr);
    const port = Number(setup.stdout.trim());
    assert.ok(port > 0, setup.stdout);

    // Without the host store's entry, the clone fails: the container has no password of its own.
    const denied = await execIn(`git clone -q http://127.0.0.1:${port}/repo.git /tmp/clone-denied`);
    assert.notEqual(denied.code, 0);

    writeFileSync(credentialStore, `http://alice:${PASSWORD}@127.0.0.1%3a${port}\n`, { mode: 0o600 });
    const clone = await execIn(`git clone -q http://127.0.0.1:${port}/repo.git /tmp/clone && cat /tmp/clone/README`);
    assert.equal(clone.code, 0, clone.stderr);
    assert.equal(clone.stdout.trim(), 'secret-repo');
    const inContainer = await execIn(
      'grep -rl "$0" /home/toolbox /etc/gitconfig /tmp/clone/.git/config 2>/dev/null; true'.replace('$0', PASSWORD),
    );
    assert.equal(inContainer.stdout.trim(), '', 'the password must not be stored in the container');
    assert.ok(readFileSync(credentialStore, 'utf8').includes(PASSWORD));
    assert.equal(JSON.stringify(rig.recorded.events).includes(PASSWORD), false, 'never logged');
  });
});
