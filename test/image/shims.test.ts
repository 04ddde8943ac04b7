/**
 * The real shims, run inside the runtime image (real entrypoint, non-root user), against a
 * stand-in bridge on a unix socket in the bind-mounted run/ dir and on 127.0.0.1 (the
 * container uses host networking with host.docker.internal pinned to 127.0.0.1). Each test
 * asserts the exact requests each transport saw and the shim's exit code and output.
 */
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { chownSync, mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, afterEach, before, describe, it } from 'node:test';
import type Docker from 'dockerode';
import { BRIDGE_FILES, ENV, SHIM_EXIT } from '../../extension/src/contract/shims';
import { CONTAINER, HOST_DOCKER_INTERNAL } from '../../extension/src/contract/upstream';
import {
  closedLoopbackPort,
  startBridgeListener,
  type BridgeListener,
  type BridgeReply,
  type RecordedRequest,
} from '../support/bridge-listener';
import { TEST_LABEL, testNamespace, type TestNamespace } from '../support/docker';
import { execIn as execCommand, type ExecResult } from '../support/exec';
import { ensureTestRuntimeImage } from '../support/image';

const HOST_WS = '/srv/tbx-host-ws';
const TOKEN = randomBytes(32).toString('hex');
const SOCKET_IN_CONTAINER = `${CONTAINER.bridgeRunDir}/${BRIDGE_FILES.socket}`;

/** The container runs as the host user, or as uid 1000 (with files chowned) when tests run as root. */
const hostUid = process.getuid?.() ?? 1000;
const owner = hostUid === 0 ? { uid: 1000, gid: 1000 } : { uid: hostUid, gid: process.getgid?.() ?? hostUid };

type Run = ExecResult;

function execIn(container: Docker.Container, script: string, env: string[] = []): Promise<Run> {
  return execCommand(container, ['sh', '-c', script], { env: [`${ENV.hostWorkspace}=${HOST_WS}`, ...env], workdir: CONTAINER.workspace });
}

describe('container shims against a stand-in bridge', () => {
  let ns: TestNamespace;
  let stateDir: string;
  let runDir: string;
  let withCa: Docker.Container;
  let withoutCa: Docker.Container;
  let bridge: BridgeListener | undefined;

  /** Starts the stand-in: on the socket, on TCP, both or neither; writes the port file. */
  async function startBridge(opts: { unix: boolean; tcp: boolean; reply?: (r: RecordedRequest) => BridgeReply }) {
    bridge = await startBridgeListener({
      socketPath: opts.unix ? join(runDir, BRIDGE_FILES.socket) : undefined,
      owner,
      tcp: opts.tcp,
      reply: opts.reply ?? (() => ({ status: 204 })),
    });
    writePortFile(bridge.port ?? (await closedLoopbackPort()));
    return bridge;
  }

  function writePortFile(port: number) {
    const p = join(stateDir, BRIDGE_FILES.port);
    writeFileSync(p, `${port}\n`, { mode: 0o644 });
    chownSync(p, owner.uid, owner.gid);
  }

  function writeToken() {
    const p = join(stateDir, BRIDGE_FILES.token);
    writeFileSync(p, `${TOKEN}\n`, { mode: 0o600 });
    chownSync(p, owner.uid, owner.gid);
  }

  async function startContainer(name: string, caFile?: string): Promise<Docker.Container> {
    const binds = [`${stateDir}:${CONTAINER.bridgeDir}:ro`, `${runDir}:${CONTAINER.bridgeRunDir}`];
    if (caFile) binds.push(`${caFile}:${CONTAINER.proximoCa}:ro`);
    const container = await ns.docker.createContainer({
      name,
      Image: await ensureTestRuntimeImage(),
      User: `${owner.uid}:${owner.gid}`,
      Labels: { [TEST_LABEL]: ns.names.prefix },
      HostConfig: {
        Binds: binds,
        NetworkMode: 'host',
        ExtraHosts: [`${HOST_DOCKER_INTERNAL}:127.0.0.1`],
      },
    });
    await container.start();
    return container;
  }

  /** The one JSON request the bridge saw, after checking transport, method, route and headers. */
  function onlyRequest(transport: 'unix' | 'tcp', route: string): unknown {
    assert.ok(bridge);
    assert.equal(bridge.requests.length, 1, `expected one request, got ${JSON.stringify(bridge.requests)}`);
    const [req] = bridge.requests;
    assert.equal(req.transport, transport);
    assert.equal(req.method, 'POST');
    assert.equal(req.url, route);
    assert.equal(req.authorization, `Bearer ${TOKEN}`);
    assert.equal(req.contentType, 'application/json');
    return JSON.parse(req.body);
  }

  before(async () => {
    ns = testNamespace();
    stateDir = join(ns.home, 'bridge');
    runDir = join(stateDir, BRIDGE_FILES.runDir);
    mkdirSync(runDir, { recursive: true, mode: 0o700 });
    chownSync(stateDir, owner.uid, owner.gid);
    chownSync(runDir, owner.uid, owner.gid);
    writeToken();
    writePortFile(await closedLoopbackPort());
    const caFile = join(ns.home, 'proximo-ca.pem');
    writeFileSync(caFile, 'not a real certificate: the shim only tests that the file exists\n', { mode: 0o644 });
    [withCa, withoutCa] = await Promise.all([
      startContainer(`${ns.names.prefix}-shims-ca`, caFile),
      startContainer(`${ns.names.prefix}-shims-noca`),
    ]);
  });

  afterEach(async () => {
    await bridge?.close();
    bridge = undefined;
    rmSync(join(runDir, BRIDGE_FILES.socket), { force: true });
    writeToken();
  });

  after(async () => {
    await bridge?.close();
    await ns?.cleanup();
  });

  describe('transport', () => {
    it('sends xdg-open over the unix socket with the bearer token and exits 0', async () => {
      await startBridge({ unix: true, tcp: true });
      const run = await execIn(withCa, 'xdg-open https://example.test/login?x=1');
      assert.equal(run.code, SHIM_EXIT.ok, run.stderr);
      assert.equal(run.stderr, '', 'a URL that opens at once says nothing about waiting');
      assert.deepEqual(onlyRequest('unix', '/open'), { url: 'https://example.test/login?x=1' });
    });

    it('uses TCP to host.docker.internal when there is no socket file', async () => {
      await startBridge({ unix: false, tcp: true });
      const run = await execIn(withCa, 'code /workspace/a');
      assert.equal(run.code, SHIM_EXIT.ok, run.stderr);
      assert.deepEqual(onlyRequest('tcp', '/edit'), { editor: 'code', path: `${HOST_WS}/a` });
    });

    it('falls back to TCP exactly once when the socket file exists but nobody listens on it', async () => {
      await startBridge({ unix: false, tcp: true });
      const stale = `python3 -c 'import socket; socket.socket(socket.AF_UNIX).bind("${SOCKET_IN_CONTAINER}")'`;
      const run = await execIn(withCa, `${stale} && test -S ${SOCKET_IN_CONTAINER} && code /workspace/a`);
      assert.equal(run.code, SHIM_EXIT.ok, run.stderr);
      assert.deepEqual(onlyRequest('tcp', '/edit'), { editor: 'code', path: `${HOST_WS}/a` });
    });

    it('does not retry over TCP after the socket answered with a real status', async () => {
      await startBridge({ unix: true, tcp: true, reply: () => ({ status: 502, body: 'proximo is not installed on the host' }) });
      const run = await execIn(withCa, 'proximo up');
      assert.equal(run.code, SHIM_EXIT.unavailable);
      onlyRequest('unix', '/proximo');
      assert.match(run.stderr, /^proximo: .*HTTP 502: proximo is not installed on the host/);
    });

    it('does not retry over TCP when the socket took the request but never answered', async () => {
      await startBridge({ unix: true, tcp: true, reply: () => ({ status: 0, hang: true }) });
      const run = await execIn(withCa, 'code /workspace/slow');
      assert.equal(run.code, SHIM_EXIT.unavailable);
      assert.match(run.stderr, /no answer within the time limit; the command may still be running on the host/);
      onlyRequest('unix', '/edit');
    });

    it('reports every shim as unavailable when neither socket nor TCP answers', async () => {
      await startBridge({ unix: false, tcp: false });
      const code = await execIn(withCa, 'code /workspace/a');
      assert.equal(code.code, SHIM_EXIT.unavailable);
      assert.match(code.stderr, /^code: the host bridge is not reachable .*toolbox bridge/);
      const proximo = await execIn(withCa, 'proximo status');
      assert.equal(proximo.code, SHIM_EXIT.unavailable);
      assert.match(proximo.stderr, /^proximo: the host bridge is not reachable .*VS Code with the Toolbox extension/);
      const open = await execIn(withCa, 'xdg-open https://example.test/');
      assert.equal(open.code, 0);
      assert.match(open.stderr, /open it by hand: https:\/\/example\.test\/$/m);
      const cred = await execIn(withCa, "printf 'host=example.test\\n' | git-credential-toolbox get");
      assert.deepEqual([cred.code, cred.stdout, cred.stderr], [0, '', '']);
      const sound = await execIn(withCa, 'printf ID3 > /tmp/c.mp3 && paplay /tmp/c.mp3');
      assert.equal(sound.code, SHIM_EXIT.failed);
      assert.match(sound.stderr, /^paplay: the host bridge is not reachable /);
    });

    it('reports the bridge as not installed when the token file is missing, without a request', async () => {
      await startBridge({ unix: true, tcp: true });
      rmSync(join(stateDir, BRIDGE_FILES.token));
      const run = await execIn(withCa, 'code /workspace/a');
      assert.equal(run.code, SHIM_EXIT.unavailable);
      assert.match(run.stderr, /no bridge token and port under \/home\/toolbox\/\.toolbox\/bridge/);
      assert.equal(bridge?.requests.length, 0);
    });
  });

  describe('xdg-open', () => {
    it('exits 0 and prints the URL for the user when the host refuses it', async () => {
      await startBridge({ unix: true, tcp: true, reply: () => ({ status: 400, body: 'scheme must be http or https' }) });
      const run = await execIn(withCa, 'xdg-open file:///etc/passwd');
      assert.equal(run.code, 0);
      assert.equal(
        run.stderr,
        'xdg-open: the host did not open the URL (HTTP 400: scheme must be http or https) — open it by hand: file:///etc/passwd\n',
      );
      assert.deepEqual(onlyRequest('unix', '/open'), { url: 'file:///etc/passwd' });
    });
  });

  describe('xdg-open while VS Code asks the user (issue 13, item 2)', () => {
    it('says it is waiting for confirmation in VS Code, and exits 77 with "cancelled in VS Code" on Cancel', async () => {
      await startBridge({ unix: true, tcp: true, reply: () => ({ status: 403, body: 'Cancelled in VS Code.', delayMs: 2_500 }) });
      const run = await execIn(withCa, 'xdg-open https://example.test/login');
      assert.equal(run.code, SHIM_EXIT.refused);
      assert.equal(
        run.stderr,
        'xdg-open: Waiting for confirmation in VS Code…\nxdg-open: cancelled in VS Code; the URL was not opened: https://example.test/login\n',
      );
      onlyRequest('unix', '/open');
    });

    it('exits 0 once the user says Open, however long that takes within the limit', async () => {
      await startBridge({ unix: true, tcp: true, reply: () => ({ status: 204, delayMs: 7_000 }) });
      const run = await execIn(withCa, 'xdg-open https://example.test/later');
      assert.equal(run.code, SHIM_EXIT.ok, run.stderr);
      assert.equal(run.stderr, 'xdg-open: Waiting for confirmation in VS Code…\n');
    });
  });

  describe('code / codium', () => {
    it('maps /workspace paths to the host workspace and sends one request per path', async () => {
      await startBridge({ unix: true, tcp: false });
      const run = await execIn(withCa, 'code /workspace/a/b "/workspace/with space"');
      assert.equal(run.code, SHIM_EXIT.ok, run.stderr);
      assert.deepEqual(
        bridge?.requests.map((r) => JSON.parse(r.body)),
        [
          { editor: 'code', path: `${HOST_WS}/a/b` },
          { editor: 'code', path: `${HOST_WS}/with space` },
        ],
      );
    });

    it('opens the current directory with no arguments and sends host-path mirror paths unchanged', async () => {
      await startBridge({ unix: true, tcp: false });
      const run = await execIn(withCa, `code && codium ${HOST_WS}/src/main.ts`);
      assert.equal(run.code, SHIM_EXIT.ok, run.stderr);
      assert.deepEqual(
        bridge?.requests.map((r) => JSON.parse(r.body)),
        [
          { editor: 'code', path: HOST_WS },
          { editor: 'codium', path: `${HOST_WS}/src/main.ts` },
        ],
      );
    });

    it('refuses a path outside the workspace before sending anything', async () => {
      await startBridge({ unix: true, tcp: true });
      const run = await execIn(withCa, 'code /workspace/a /workspace/../etc/passwd');
      assert.equal(run.code, SHIM_EXIT.refused);
      assert.equal(
        run.stderr,
        `code: refusing '/workspace/../etc/passwd': only paths under /workspace or ${HOST_WS} can be opened on the host\n`,
      );
      assert.equal(bridge?.requests.length, 0);
    });

    it('refuses a symlink that leads out of the workspace', async () => {
      await startBridge({ unix: true, tcp: true });
      const run = await execIn(withCa, 'ln -sfn /etc /workspace/tbx-escape && code /workspace/tbx-escape/passwd');
      assert.equal(run.code, SHIM_EXIT.refused);
      assert.equal(bridge?.requests.length, 0);
    });

    it('refuses flags', async () => {
      await startBridge({ unix: true, tcp: true });
      const run = await execIn(withCa, 'code --install-extension evil.vsix');
      assert.equal(run.code, SHIM_EXIT.refused);
      assert.match(run.stderr, /^code: refusing '--install-extension': options are not passed to the host editor/);
      assert.equal(bridge?.requests.length, 0);
    });

    it('is unavailable without TOOLBOX_HOST_WORKSPACE', async () => {
      await startBridge({ unix: true, tcp: true });
      const run = await execIn(withCa, `unset ${ENV.hostWorkspace}; code /workspace/a`);
      assert.equal(run.code, SHIM_EXIT.unavailable);
      assert.match(run.stderr, /TOOLBOX_HOST_WORKSPACE is not set/);
      assert.equal(bridge?.requests.length, 0);
    });

    it('exits refused on a 4xx and unavailable on a 5xx, with the server text', async () => {
      let status = 400;
      await startBridge({ unix: true, tcp: true, reply: () => ({ status, body: 'path does not exist on the host' }) });
      const refused = await execIn(withCa, 'code /workspace/a');
      assert.equal(refused.code, SHIM_EXIT.refused);
      assert.equal(refused.stderr, `code: the host refused to open ${HOST_WS}/a (HTTP 400: path does not exist on the host)\n`);
      status = 502;
      const failed = await execIn(withCa, 'code /workspace/a');
      assert.equal(failed.code, SHIM_EXIT.unavailable);
      assert.match(failed.stderr, /^code: the host could not open .* \(HTTP 502: path does not exist on the host\)$/m);
      assert.deepEqual(
        bridge?.requests.map((r) => r.transport),
        ['unix', 'unix'],
      );
    });
  });

  describe('proximo', () => {
    it('refuses without a request when the proximo CA is not mounted', async () => {
      await startBridge({ unix: true, tcp: true });
      const run = await execIn(withoutCa, 'proximo status');
      assert.equal(run.code, SHIM_EXIT.refused);
      assert.match(
        run.stderr,
        /^proximo: not available in this container: either proximo is not installed on the host, or this workspace set `proximo: false` in \.toolbox\.yaml/,
      );
      assert.equal(run.stderr.trimEnd().split('\n').length, 1);
      assert.equal(bridge?.requests.length, 0);
    });

    it('forwards command, args and the host agent homes, and passes the host exit code through', async () => {
      await startBridge({ unix: true, tcp: false, reply: () => ({ status: 200, body: { exit: 3, output: 'x' } }) });
      const run = await execIn(withCa, 'proximo errors transcript --since "5 min"', [
        `${ENV.hostAgentHome}=/home/u/.toolbox`,
        `${ENV.hostCodexHome}=/home/u/.toolbox/.codex`,
      ]);
      assert.equal(run.code, 3);
      assert.equal(run.stdout, 'x');
      assert.deepEqual(onlyRequest('unix', '/proximo'), {
        command: 'errors',
        args: ['transcript', '--since', '5 min'],
        home: '/home/u/.toolbox',
        codex_home: '/home/u/.toolbox/.codex',
      });
    });

    it('omits the agent homes when they are not set and exits 0 on success', async () => {
      await startBridge({ unix: true, tcp: false, reply: () => ({ status: 200, body: { exit: 0, output: 'stack is up\n' } }) });
      const run = await execIn(withCa, 'proximo status');
      assert.deepEqual([run.code, run.stdout], [0, 'stack is up\n']);
      assert.deepEqual(onlyRequest('unix', '/proximo'), { command: 'status', args: [] });
    });

    it('refuses host-only verbs locally and names the host command', async () => {
      await startBridge({ unix: true, tcp: true });
      const install = await execIn(withCa, 'proximo install');
      assert.equal(install.code, SHIM_EXIT.refused);
      assert.match(install.stderr, /run `proximo install` on the host/);
      const tld = await execIn(withCa, 'proximo config tld dev');
      assert.equal(tld.code, SHIM_EXIT.refused);
      assert.match(tld.stderr, /run `proximo config tld dev` on the host/);
      assert.equal(bridge?.requests.length, 0);
    });

    it('prints usage without arguments', async () => {
      const run = await execIn(withCa, 'proximo');
      assert.equal(run.code, SHIM_EXIT.usage);
      assert.match(run.stderr, /^proximo: usage: proximo COMMAND/);
    });

    it('exits refused on a 4xx and prints the server text', async () => {
      await startBridge({ unix: true, tcp: true, reply: () => ({ status: 400, body: 'errors dom is not available through the bridge' }) });
      const run = await execIn(withCa, 'proximo errors dom');
      assert.equal(run.code, SHIM_EXIT.refused);
      assert.match(run.stderr, /errors dom is not available through the bridge/);
      assert.equal(bridge?.requests.length, 1);
    });
  });

  describe('git-credential-toolbox', () => {
    it('sends the op and stdin verbatim and prints the host output', async () => {
      const output = 'protocol=https\nhost=example.test\nusername=u\npassword=p\n';
      await startBridge({ unix: true, tcp: false, reply: () => ({ status: 200, body: { exit: 0, output } }) });
      const run = await execIn(withCa, "printf 'protocol=https\\nhost=example.test\\n' | git-credential-toolbox get");
      assert.deepEqual([run.code, run.stdout, run.stderr], [0, output, '']);
      assert.deepEqual(onlyRequest('unix', '/credential'), { op: 'get', input: 'protocol=https\nhost=example.test\n' });
    });

    it('is the credential helper git uses, as configured by the entrypoint', async () => {
      await startBridge({ unix: true, tcp: false, reply: () => ({ status: 200, body: { exit: 0, output: 'username=u\npassword=p\n' } }) });
      const run = await execIn(withCa, "printf 'protocol=https\\nhost=example.test\\n\\n' | git credential fill");
      assert.equal(run.code, 0, run.stderr);
      assert.match(run.stdout, /^username=u$/m);
      assert.match(run.stdout, /^password=p$/m);
      const body = onlyRequest('unix', '/credential') as { op: string; input: string };
      assert.equal(body.op, 'get');
      assert.match(body.input, /^protocol=https\nhost=example\.test\n/);
    });

    it('does nothing when GIT_CREDENTIAL_BRIDGE is off or the arguments are wrong', async () => {
      await startBridge({ unix: true, tcp: true, reply: () => ({ status: 200, body: { exit: 0, output: 'password=p\n' } }) });
      const off = await execIn(withCa, "printf 'host=example.test\\n' | git-credential-toolbox get", [`${ENV.gitCredentialBridge}=OFF`]);
      const twoArgs = await execIn(withCa, "printf 'host=example.test\\n' | git-credential-toolbox get extra");
      assert.deepEqual([off.code, off.stdout, twoArgs.code, twoArgs.stdout], [0, '', 0, '']);
      assert.equal(bridge?.requests.length, 0);
    });

    it('says why on stderr when the host refuses a get (403), and stays quiet for store and erase', async () => {
      const why = 'The host refused git credentials for evil.example to this container: the user denied it.';
      await startBridge({ unix: true, tcp: false, reply: () => ({ status: 403, body: why }) });
      const get = await execIn(withCa, "printf 'protocol=https\\nhost=evil.example\\n' | git-credential-toolbox get");
      assert.deepEqual([get.code, get.stdout], [0, '']);
      assert.equal(get.stderr, `git-credential-toolbox: ${why}\n`);
      const store = await execIn(withCa, "printf 'protocol=https\\nhost=evil.example\\npassword=x\\n' | git-credential-toolbox store");
      assert.deepEqual([store.code, store.stdout, store.stderr], [0, '', '']);
    });

    it('prints nothing on a non-2xx answer and still exits 0', async () => {
      await startBridge({ unix: true, tcp: true, reply: () => ({ status: 400, body: 'unknown op' }) });
      const run = await execIn(withCa, "printf 'host=example.test\\n' | git-credential-toolbox capability");
      assert.deepEqual([run.code, run.stdout], [0, '']);
      assert.equal(bridge?.requests.length, 1);
    });
  });

  describe('paplay (upstream internal/build/assets/bin/paplay @0db16470: exit 2 usage, 1 failure)', () => {
    it('sends the file name and its bytes as base64, and exits 0 on a 2xx', async () => {
      await startBridge({ unix: true, tcp: false, reply: () => ({ status: 200, body: {} }) });
      const run = await execIn(withCa, "printf 'ID3\\377\\373x' > /tmp/chime-1.mp3 && paplay /tmp/chime-1.mp3");
      assert.deepEqual([run.code, run.stdout, run.stderr], [0, '', '']);
      assert.deepEqual(onlyRequest('unix', '/sound'), {
        name: 'chime-1.mp3',
        data: Buffer.from('ID3\xff\xfbx', 'latin1').toString('base64'),
      });
    });

    it('exits 1 with the reason on a refusal or a failure, and 2 on a wrong command line', async () => {
      await startBridge({
        unix: true,
        tcp: true,
        reply: () => ({ status: 502, body: 'No audio player on this host, so the sound was not played.' }),
      });
      const failed = await execIn(withCa, 'printf ID3 > /tmp/c.mp3 && paplay /tmp/c.mp3');
      assert.equal(failed.code, SHIM_EXIT.failed);
      assert.match(failed.stderr, /^paplay: the host did not play \/tmp\/c\.mp3 \(HTTP 502: No audio player on this host/);
      const missing = await execIn(withCa, 'paplay /tmp/nope.mp3');
      assert.equal(missing.code, SHIM_EXIT.failed);
      assert.match(missing.stderr, /^paplay: cannot read \/tmp\/nope\.mp3/);
      for (const args of ['', 'a.mp3 b.mp3']) {
        const usage = await execIn(withCa, `paplay ${args}`);
        assert.equal(usage.code, SHIM_EXIT.misuse, args);
        assert.match(usage.stderr, /^paplay: usage: paplay FILE/);
      }
      assert.equal(bridge?.requests.length, 1);
    });
  });
});
