/**
 * The real shims in a container of the runtime image, against the real bridge (BridgeHub) with
 * its state dir and run dir bind-mounted the way the planner mounts them. The container runs as
 * uid 1000 with host networking (host.docker.internal pinned to 127.0.0.1); when the tests run
 * as root the bridge's files are chowned to 1000, standing in for "container uid = host uid".
 */
import assert from 'node:assert/strict';
import { chownSync, existsSync, mkdirSync, readFileSync, realpathSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { delimiter, join, resolve } from 'node:path';
import { after, before, describe, it } from 'node:test';
import type Docker from 'dockerode';
import type { ConsentQuestion } from '../../extension/src/bridge/credentialConsent';
import { BRIDGE_FILES, CREDENTIAL_LIMITS_MS, ENV, SHIM_EXIT } from '../../extension/src/contract/shims';
import { CONTAINER, HOST_DOCKER_INTERNAL } from '../../extension/src/contract/upstream';
import { findSoundPlayer } from '../../extension/src/bridge/sound';
import { objectNames } from '../../extension/src/contract/objects';
import { planMounts } from '../../extension/src/plan/mounts';
import { TEST_LABEL, testNamespace, type TestNamespace } from '../support/docker';
import { execIn as execCommand, type ExecResult } from '../support/exec';
import { ensureTestRuntimeImage } from '../support/image';
import { installFakeProximo, startRig, type Rig } from '../bridge/support';
import { freePort } from '../support/ports';

const GIT_SERVER = resolve(__dirname, '../../../test/fixtures/git-http-server.py');
const hostUid = process.getuid?.() ?? 1000;
const owner = hostUid === 0 ? { uid: 1000, gid: 1000 } : { uid: hostUid, gid: process.getgid?.() ?? hostUid };
const PASSWORD = 'only-in-the-host-store-7f3a';

/** A loopback port free right now (the container uses host networking, so it is free there too). */

type Run = ExecResult;

describe('shims in the runtime image against the real bridge', () => {
  let ns: TestNamespace;
  let rig: Rig;
  let fake: ReturnType<typeof installFakeProximo>;
  let container: Docker.Container;
  let credentialStore: string;
  let gitPort: number;
  let marker: string;
  const asked: ConsentQuestion[] = [];
  /** What VS Code's openExternal answers in the next test: true (opened) unless a test says otherwise. */
  let openAnswer: (url: string) => Promise<boolean> = async () => true;
  const openedUrls: string[] = [];

  function execIn(script: string): Promise<Run> {
    return execCommand(container, ['sh', '-c', script], {
      env: [`${ENV.hostWorkspace}=${rig.workspace}`, 'GIT_TERMINAL_PROMPT=0'],
      workdir: CONTAINER.workspace,
    });
  }

  before(async () => {
    ns = testNamespace();
    gitPort = await freePort();
    rig = await startRig({
      prepare({ root, home, workspace }) {
        fake = installFakeProximo(join(root, 'bin'));
        writeFileSync(join(workspace, 'hello.txt'), 'hello\n');
        mkdirSync(join(root, 'outside-dir'));
        symlinkSync(join(root, 'outside-dir'), join(workspace, 'out'));
        credentialStore = join(root, 'git-credentials');
        marker = join(root, 'MARKER');
        writeFileSync(join(home, '.gitconfig'), `[credential]\n\thelper = store --file ${credentialStore}\n`);
        writeFileSync(join(root, 'proximo-ca.pem'), 'stand-in CA: the shim only checks that it exists\n');
        // The git server the clone test starts is the workspace's own remote: allowed by default.
        mkdirSync(join(workspace, '.git'));
        writeFileSync(join(workspace, '.git', 'config'), `[remote "origin"]\n\turl = http://127.0.0.1:${gitPort}/repo.git\n`);
      },
      hub: ({ root, home }) => ({
        env: { PATH: `${join(root, 'bin')}${delimiter}${process.env.PATH}`, HOME: home, GIT_CONFIG_NOSYSTEM: '1' },
        proximoFallbackDirs: [],
        openExternal: (url: string) => (openedUrls.push(url), openAnswer(url)),
        // Nobody answers: any other host is refused when the consent time runs out.
        credentialConsent: { prompt: (question) => (asked.push(question), new Promise(() => undefined)) },
      }),
    });
    const { stateDir, runDir, socketPath } = rig.bridge;
    for (const p of [stateDir, join(stateDir, BRIDGE_FILES.token), join(stateDir, BRIDGE_FILES.port), runDir, socketPath]) {
      chownSync(p, owner.uid, owner.gid);
    }
    // The gitconfig mount exactly as the planner makes it when ~/.toolbox/gitconfig is missing:
    // the host's own ~/.gitconfig, owned by the container's user (container uid = host uid).
    const planned = planMounts({
      workspace: rig.workspace,
      home: rig.home,
      pathExists: existsSync,
      userMounts: [],
      inheritHostAuth: [],
      peer: false,
      names: objectNames(ns.names.prefix),
    }).mounts.find((m) => m.name === 'gitconfig');
    assert.equal(planned?.source, join(rig.home, '.gitconfig'));
    chownSync(planned.source, owner.uid, owner.gid);
    const gitconfigBind = `${planned.source}:${planned.target}${planned.readonly ? ':ro' : ''}`;
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
          gitconfigBind,
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

  it('`code brand-new.txt` opens an untitled editor bound to the host path and writes nothing (issue 13, item 3)', async () => {
    const run = await execIn('code brand-new.txt');
    assert.equal(run.code, SHIM_EXIT.ok, run.stderr);
    assert.equal(run.stderr, '');
    assert.deepEqual(rig.recorded.edits.at(-1), {
      path: join(realpathSync(rig.workspace), 'brand-new.txt'),
      isDirectory: false,
      untitled: true,
    });
    assert.equal(existsSync(join(rig.workspace, 'brand-new.txt')), false);
    // The host path of a folder symlinked out of the workspace: the shim cannot see where it
    // leads (it is not a path in the container), the bridge resolves it and refuses.
    const edits = rig.recorded.edits.length;
    const outside = await execIn(`code "$${ENV.hostWorkspace}/out/new.conf"`);
    assert.equal(outside.code, SHIM_EXIT.refused);
    assert.match(outside.stderr, /^code: the host refused to open .*\/out\/new\.conf \(HTTP 400: Refused to open/);
    assert.equal(rig.recorded.edits.length, edits);
    assert.equal(existsSync(join(rig.root, 'outside-dir', 'new.conf')), false);
  });

  it('`xdg-open` waits for the answer in VS Code; Cancel exits 77 with "cancelled in VS Code" (issue 13, item 2)', async () => {
    openAnswer = () => new Promise((resolve) => setTimeout(() => resolve(false), 2_500));
    try {
      const run = await execIn('xdg-open https://example.test/login');
      assert.equal(run.code, SHIM_EXIT.refused, run.stderr);
      assert.equal(
        run.stderr,
        'xdg-open: Waiting for confirmation in VS Code…\nxdg-open: cancelled in VS Code; the URL was not opened: https://example.test/login\n',
      );
      assert.equal(openedUrls.at(-1), 'https://example.test/login');
      openAnswer = () => new Promise((resolve) => setTimeout(() => resolve(true), 6_000));
      const later = await execIn('xdg-open https://example.test/later');
      assert.equal(later.code, SHIM_EXIT.ok, later.stderr);
      assert.equal(later.stderr, 'xdg-open: Waiting for confirmation in VS Code…\n');
    } finally {
      openAnswer = async () => true;
    }
  });

  it('`proximo status` runs the host binary and passes its output and exit code through', async () => {
    const run = await execIn('proximo status --fake-exit=4');
    assert.equal(run.code, 4, run.stderr);
    assert.match(run.stdout, /fake proximo ran: status --fake-exit=4/);
    assert.deepEqual(fake.calls().at(-1)?.argv, ['status', '--fake-exit=4']);
  });

  it('paplay plays through the host player, from the bytes the container sent (issue 15, item 10)', async () => {
    const bin = join(rig.root, 'bin');
    const log = join(rig.root, 'played');
    mkdirSync(log, { recursive: true });
    if (findSoundPlayer(process.platform, `${bin}${delimiter}${process.env.PATH}`) === undefined) {
      const none = await execIn("printf 'ID3\\003' > /tmp/chime.mp3 && paplay /tmp/chime.mp3");
      assert.equal(none.code, SHIM_EXIT.failed);
      assert.match(none.stderr, /^paplay: the host did not play \/tmp\/chime\.mp3 \(HTTP 502: No audio player on this host.*paplay/);
    }
    // A stand-in paplay on the bridge's PATH that keeps what it was given.
    writeFileSync(join(bin, 'paplay'), `#!/bin/sh\ncp "$1" ${log}/got.mp3\nprintf '%s' "$1" > ${log}/path\n`, { mode: 0o755 });
    try {
      const run = await execIn("printf 'ID3\\003chime' > /tmp/chime.mp3 && paplay /tmp/chime.mp3");
      assert.deepEqual([run.code, run.stderr], [0, '']);
      for (let i = 0; i < 200 && !existsSync(join(log, 'path')); i++) await new Promise((r) => setTimeout(r, 25));
      assert.equal(readFileSync(join(log, 'got.mp3'), 'latin1'), 'ID3\x03chime');
      assert.match(readFileSync(join(log, 'path'), 'utf8'), /\/toolbox-sound-[^/]+\/sound\.mp3$/);
    } finally {
      rmSync(join(bin, 'paplay'), { force: true });
    }
  });

  it('exits with the codes of docs/shim-exit-codes.md through the real shims (issue 15, item 11)', async () => {
    const table: Array<[string, number, RegExp]> = [
      ['code -n hello.txt', SHIM_EXIT.refused, /^code: refusing '-n'/],
      ['code /etc/passwd', SHIM_EXIT.refused, /only paths under \/workspace/],
      ['env -u TOOLBOX_HOST_WORKSPACE code hello.txt', SHIM_EXIT.unavailable, /TOOLBOX_HOST_WORKSPACE is not set/],
      ['proximo', SHIM_EXIT.usage, /^proximo: usage:/],
      ['proximo trust', SHIM_EXIT.refused, /on the host/],
      ['proximo errors dom', SHIM_EXIT.refused, /errors dom is refused/],
      [
        'TOOLBOX_HOST_AGENT_HOME=/root proximo skill install web',
        SHIM_EXIT.unavailable,
        /HTTP 502: .*is not the agent home this container mounts/,
      ],
      ['proximo status --fake-exit=1', 1, /^$/],
      ['xdg-open', 0, /usage: xdg-open URL/],
      ['git-credential-toolbox', 0, /^$/],
      ['paplay', SHIM_EXIT.misuse, /^paplay: usage: paplay FILE/],
      ['paplay /nonexistent.mp3', SHIM_EXIT.failed, /^paplay: cannot read/],
    ];
    for (const [script, code, stderr] of table) {
      const run = await execIn(script);
      assert.equal(run.code, code, `${script}: ${run.stderr}`);
      assert.match(run.stderr, stderr, script);
    }
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
        `nohup python3 /opt/git-http-server.py /tmp/srv alice ${PASSWORD} /tmp/git-port ${gitPort} >/tmp/git-server.log 2>&1 &`,
        'for i in $(seq 100); do [ -f /tmp/git-port ] && break; sleep 0.1; done',
        'cat /tmp/git-port',
      ].join('\n'),
    );
    assert.equal(setup.code, 0, setup.stderr);
    const port = Number(setup.stdout.trim());
    assert.equal(port, gitPort, setup.stdout);

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

  it("cannot write the host's ~/.gitconfig to plant a credential helper the host then runs (issue 11, finding 1)", async () => {
    const helper = `[credential]\n\thelper = "!sh -c 'touch ${marker}'"\n`;
    const write = await execIn(`printf '%s' '${helper.replace(/'/g, "'\\''")}' >> ~/.gitconfig`);
    assert.notEqual(write.code, 0, 'the container appended to the host ~/.gitconfig');
    assert.match(write.stderr, /Read-only file system/);
    assert.equal(readFileSync(join(rig.home, '.gitconfig'), 'utf8').includes('touch'), false);
    // The host's git, asked through the bridge, runs nothing the container chose.
    await execIn(`printf 'protocol=http\\nhost=127.0.0.1:${gitPort}\\nusername=nobody\\n\\n' | git credential fill`);
    assert.equal(existsSync(marker), false);
  });

  it('refuses an unknown host when nobody answers the consent prompt, and the shim waits for that answer', async () => {
    const started = performance.now();
    const run = await execIn("printf 'protocol=https\\nhost=unknown.example\\n' | git-credential-toolbox get");
    const seconds = (performance.now() - started) / 1000;
    assert.equal(run.code, 0);
    assert.equal(run.stdout, '');
    // The bridge's refusal, not the shim's own time limit (curl would print nothing and give up at 65 s).
    assert.match(run.stderr, /refused git credentials for unknown\.example to this container: the user did not answer within 30 s/);
    assert.deepEqual(
      asked.map((q) => q.host),
      ['unknown.example'],
    );
    const consent = CREDENTIAL_LIMITS_MS.consent / 1000;
    assert.ok(seconds >= consent && seconds < consent + 5, `refused after ${seconds.toFixed(1)} s`);
    console.log(`  time to refuse on timeout, through the shim: ${seconds.toFixed(2)} s`);
  });
});
