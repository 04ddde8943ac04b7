/**
 * Remote engines for real (issue 18 item 4). ssh:// through a loopback sshd the test owns
 * (test/support/sshd.ts), which runs `docker system dial-stdio` against this machine's engine:
 * open (create, start, the held shell in a terminal, a plain TTY exec), live events, stop and
 * stop-all through the real backend, and the refusals (unknown or changed host key, nothing
 * listening, a server that never speaks). tcp:// with TLS against a private second dockerd with
 * --tlsverify and certificates made here (test/support/tls.ts), in a UTS namespace with another
 * host name: it is an engine on "another machine", so an open of a local folder (shell, named
 * shell, agent worktree) is refused before anything is made, while the tree and stop-all work.
 */
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server, type Socket } from 'node:net';
import { hostname } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import type Docker from 'dockerode';
import { objectNames } from '../../extension/src/contract/objects';
import type { ObjectNames } from '../../extension/src/contract/types';
import { connectEngine } from '../../extension/src/engine/client';
import { startShellExec } from '../../extension/src/engine/exec';
import { holderAddress, listHeldSessions, reachHolder } from '../../extension/src/engine/sessions';
import { engineLocality } from '../../extension/src/engine/remote';
import { docker as mainDocker, removeNamespaceObjects } from '../support/docker';
import { testBackend, type TestBackend } from '../support/backend';
import { ensureTestRuntimeImage } from '../support/image';
import { startSecondEngine, type SecondEngine } from '../support/second-engine';
import { startLoopbackSshd, startSshAgent, type LoopbackSshd } from '../support/sshd';
import { freePort } from '../support/ports';
import { makeTlsFiles, type TlsFiles } from '../support/tls';
import { installVscodeLite, silentLog } from '../support/vscodeLite';
import { screen } from '../support/screen';
import { exitWhenDone } from '../support/exitGuard';

installVscodeLite();
exitWhenDone('remote.test');
/* eslint-disable @typescript-eslint/no-require-imports */
const { ToolboxShellPty } =
  require('../../extension/src/ui/shells/toolboxShellPty') as typeof import('../../extension/src/ui/shells/toolboxShellPty');
/* eslint-enable @typescript-eslint/no-require-imports */

type Pty = InstanceType<typeof ToolboxShellPty>;
type Backend = TestBackend;

function newBackend(names: ObjectNames, home: string): Backend {
  return testBackend(names, home);
}

const quiet = { log: () => undefined, step: () => undefined };

/** Sets process.env entries for the backend (it reads DOCKER_HOST like a user's), and puts them back. */
function envFor(values: Record<string, string | undefined>): () => void {
  const saved = Object.fromEntries(Object.keys(values).map((k) => [k, process.env[k]]));
  const apply = (v: Record<string, string | undefined>) => {
    for (const [k, x] of Object.entries(v)) {
      if (x === undefined) delete process.env[k];
      else process.env[k] = x;
    }
  };
  apply(values);
  return () => apply(saved);
}

describe('ssh:// to this machine’s engine through a loopback sshd', () => {
  const names = objectNames(`tbxt${Math.random().toString(16).slice(2, 8)}`);
  let sshd: LoopbackSshd;
  let folder: string;
  /** The engine through its unix socket, made before DOCKER_HOST points at ssh:// (docker-modem reads it). */
  let main: Docker;
  let restoreEnv: () => void = () => undefined;
  const backends: Backend[] = [];
  const ptys: Pty[] = [];

  before(async () => {
    const image = await ensureTestRuntimeImage();
    main = mainDocker();
    sshd = await startLoopbackSshd();
    // The client home doubles as the toolbox home: the backend finds ~/.ssh there.
    folder = join(sshd.home, 'project');
    mkdirSync(folder);
    // The user's image (~/.toolbox.yaml): from the project file it would wait for approval (docs/decisions/0041).
    writeFileSync(join(sshd.home, '.toolbox.yaml'), `image: ${image}\n`);
    // Keys from ~/.ssh only: no agent of the machine's user takes part.
    restoreEnv = envFor({ DOCKER_HOST: sshd.endpoint, SSH_AUTH_SOCK: undefined, DOCKER_CONTEXT: undefined });
  });

  after(async () => {
    for (const p of ptys) p.close();
    for (const b of backends) b.dispose();
    restoreEnv();
    await removeNamespaceObjects(main, names);
    await sshd?.stop();
  });

  it('connects with the default key and a known host key, lists and pings, and the engine is this machine’s', async () => {
    const c = await connectEngine({ env: { DOCKER_HOST: sshd.endpoint }, home: sshd.home });
    try {
      assert.equal(c.endpoint.endpoint, sshd.endpoint);
      assert.match(c.version, /^\d+\.\d+/);
      assert.equal(String(await c.docker.ping()), 'OK');
      await c.docker.listContainers({ all: true });
      const info = (await c.docker.info()) as { Name: string; ID: string };
      assert.equal(info.ID, ((await main.info()) as { ID: string }).ID, 'the same engine as the unix socket');
      assert.deepEqual(engineLocality(c.endpoint, info.Name, hostname()), { remote: false });
    } finally {
      c.close();
    }
  });

  it('opens a shell (create, start, held session in a terminal, a plain TTY exec), follows events, stops, stops all', async () => {
    const backend = newBackend(names, sshd.home);
    backends.push(backend);
    let events = 0;
    const watch = await backend.watchEvents(
      () => events++,
      () => undefined,
    );
    try {
      const prepared = await backend.prepareShell({ folder, peer: false });
      const session = await prepared.open(quiet, new AbortController().signal);
      assert.equal(session.action, 'create');
      assert.deepEqual(session.persistence, { held: true, transport: 'socket' });
      const pty: Pty = new ToolboxShellPty({ container: session.name, start: (size) => session.start(size), log: silentLog as never });
      ptys.push(pty);
      const out = screen(pty);
      pty.open({ columns: 100, rows: 30 });
      await new Promise((r) => setTimeout(r, 500)); // the prompt
      pty.handleInput('echo "over ssh $((6*7))"\r');
      await out.waitFor(/over ssh 42/);

      // A plain TTY exec (hijacked attach) through the same ssh:// client.
      const c = await connectEngine({ env: { DOCKER_HOST: sshd.endpoint }, home: sshd.home });
      try {
        const exec = await startShellExec(c.docker, session.id, { cmd: ['sh', '-c', 'read x; echo "got $x"; exit 3'], cols: 80, rows: 24 });
        let text = '';
        exec.stream.on('data', (d: Buffer) => (text += d.toString('utf8')));
        exec.stream.write('hello\r');
        assert.equal(await exec.exitCode, 3);
        assert.match(text, /got hello/);
        exec.dispose();
        // The session holder through an exec (the transport used when its socket is not on this host).
        const user = session.command.user ?? '';
        const viaExec = await reachHolder(c.docker, session.id, { containerSocket: holderAddress('/unused', user).containerSocket, user });
        assert.equal(viaExec.kind, 'exec');
        const held = await listHeldSessions(viaExec);
        assert.ok(
          held.some((h) => !h.ended),
          `the terminal's shell is listed through the exec transport (${JSON.stringify(held)})`,
        );
        // Closing the connection when idle (the endpoint setting changed) does not cut a running shell.
        const cat = await startShellExec(c.docker, session.id, { cmd: ['cat'], cols: 80, rows: 24 });
        let echoed = '';
        cat.stream.on('data', (d: Buffer) => (echoed += d.toString('utf8')));
        c.close({ whenIdle: true });
        cat.stream.write('still-here\r');
        for (const end = Date.now() + 10_000; !echoed.includes('still-here');) {
          assert.ok(Date.now() < end, `the shell works on after close({ whenIdle }) (${JSON.stringify(echoed)})`);
          await new Promise((r) => setTimeout(r, 50));
        }
        cat.dispose();
      } finally {
        c.close();
      }

      const before = events;
      await backend.stopContainer(session.name);
      for (const end = Date.now() + 30_000; events === before;) {
        assert.ok(Date.now() < end, 'a Docker event arrived over ssh:// after the stop');
        await new Promise((r) => setTimeout(r, 50));
      }
      const running = await main
        .getContainer(session.id)
        .inspect()
        .then((i) => i.State.Running)
        .catch(() => false);
      assert.equal(running, false, 'stopped');
      pty.close();

      // Stop Every Container… over ssh://: it lists the new container and stops it.
      const again = await (await backend.prepareShell({ folder, peer: false })).open(quiet, new AbortController().signal);
      assert.ok((await backend.stopAllTargets()).includes(again.name));
      assert.deepEqual(await backend.stopAll([again.name]), [again.name]);
      const snapshot = await backend.snapshot();
      assert.match(snapshot.engine ?? '', /ssh:\/\//);
      assert.doesNotMatch(snapshot.engine ?? '', /on the machine/);
    } finally {
      watch.dispose();
    }
  });

  it('authenticates through ssh-agent (SSH_AUTH_SOCK) when no key file is there', async () => {
    const home = mkdtempSync(join(sshd.home, '..', 'agent-'));
    mkdirSync(join(home, '.ssh'));
    writeFileSync(join(home, '.ssh', 'known_hosts'), `${sshd.knownHostsLine}\n`);
    const agent = await startSshAgent(join(sshd.home, '.ssh', 'id_ed25519'));
    try {
      const c = await connectEngine({ env: { DOCKER_HOST: sshd.endpoint, SSH_AUTH_SOCK: agent.socket }, home });
      assert.equal(String(await c.docker.ping()), 'OK');
      c.close();
    } finally {
      await agent.stop();
    }
    await assert.rejects(connectEngine({ env: { DOCKER_HOST: sshd.endpoint }, home }), (err: Error) => {
      assert.match(
        err.message,
        /there is no SSH key to offer to 127\.0\.0\.1: SSH_AUTH_SOCK is not set and none of .*id_ed25519.* can be used\. Load your key into ssh-agent \(ssh-add\)/,
      );
      return true;
    });
  });

  it('follows ~/.ssh/config for a host alias (HostName, User, Port, IdentityFile)', async () => {
    const home = mkdtempSync(join(sshd.home, '..', 'config-'));
    mkdirSync(join(home, '.ssh'));
    writeFileSync(join(home, '.ssh', 'known_hosts'), `${sshd.knownHostsLine}\n`);
    cpSync(join(sshd.home, '.ssh', 'id_ed25519'), join(home, '.ssh', 'box_key'));
    writeFileSync(
      join(home, '.ssh', 'config'),
      `Host tbxt-box\n  HostName 127.0.0.1\n  Port ${sshd.port}\n  User ${sshd.user}\n  IdentityFile ~/.ssh/box_key\n`,
    );
    const c = await connectEngine({ env: { DOCKER_HOST: 'ssh://tbxt-box' }, home });
    assert.equal(String(await c.docker.ping()), 'OK');
    c.close();
  });

  it('refuses a host whose key is not in known_hosts, and says how to add it', async () => {
    await assert.rejects(connectEngine({ env: { DOCKER_HOST: sshd.endpoint }, home: sshd.strangerHome }), (err: Error) => {
      assert.equal(
        err.message,
        `Docker is not reachable at ${sshd.endpoint} (from DOCKER_HOST): the SSH host 127.0.0.1 port ${sshd.port} is not in ~/.ssh/known_hosts, ` +
          `so its identity cannot be checked. Connect once in a terminal with ssh -p ${sshd.port} ${sshd.user}@127.0.0.1, check the fingerprint and accept it, then try again.`,
      );
      return true;
    });
  });

  it('refuses a host whose key is not the one recorded, naming the line and the fix', async () => {
    const home = mkdtempSync(join(sshd.home, '..', 'changed-'));
    cpSync(join(sshd.strangerHome, '.ssh'), join(home, '.ssh'), { recursive: true });
    execFileSync('ssh-keygen', ['-q', '-t', 'ed25519', '-N', '', '-f', join(home, 'other')], { stdio: 'ignore' });
    const other = execFileSync('cat', [join(home, 'other.pub')], { encoding: 'utf8' }).split(' ');
    writeFileSync(join(home, '.ssh', 'known_hosts'), `# an old key\n[127.0.0.1]:${sshd.port} ${other[0]} ${other[1]}\n`);
    await assert.rejects(connectEngine({ env: { DOCKER_HOST: sshd.endpoint }, home }), (err: Error) => {
      assert.match(err.message, /the SSH host key of 127\.0\.0\.1 port \d+ is not the one recorded in ~\/\.ssh\/known_hosts line 2/);
      assert.match(err.message, /ssh-keygen -R \[127\.0\.0\.1\]:\d+/);
      return true;
    });
  });

  it('says what failed when the far host has no docker command, or its docker cannot reach the engine', async () => {
    for (const [command, expected] of [
      [
        'exec tbxt-no-such-docker system dial-stdio',
        /docker system dial-stdio failed on 127\.0\.0\.1: the docker command is not installed there/,
      ],
      [
        'echo "permission denied while trying to connect to the Docker daemon socket" >&2; exit 1',
        /docker system dial-stdio failed on 127\.0\.0\.1: it said: permission denied while trying to connect to the Docker daemon socket\. Check that \S+ may use Docker on 127\.0\.0\.1/,
      ],
    ] as const) {
      const broken = await startLoopbackSshd({ forceCommand: command });
      try {
        await assert.rejects(connectEngine({ env: { DOCKER_HOST: broken.endpoint }, home: broken.home }), (err: Error) => {
          assert.ok(err.message.startsWith(`Docker is not reachable at ${broken.endpoint} (from DOCKER_HOST): `), err.message);
          assert.match(err.message, expected);
          return true;
        });
      } finally {
        await broken.stop();
      }
    }
  });

  it('says nothing accepts SSH when the port is closed', async () => {
    const port = await freePort();
    const endpoint = `ssh://${sshd.user}@127.0.0.1:${port}`;
    await assert.rejects(connectEngine({ env: { DOCKER_HOST: endpoint }, home: sshd.home }), (err: Error) => {
      assert.equal(
        err.message,
        `Docker is not reachable at ${endpoint} (from DOCKER_HOST): nothing accepts SSH connections at 127.0.0.1 port ${port} (connection refused). Check the host and port in the endpoint.`,
      );
      return true;
    });
  });

  it('gives up on a server that accepts and never speaks, within the bound, naming the endpoint', async () => {
    const held: Socket[] = [];
    const silent: Server = createServer((s) => held.push(s));
    await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve));
    const port = (silent.address() as { port: number }).port;
    const endpoint = `ssh://${sshd.user}@127.0.0.1:${port}`;
    try {
      await assert.rejects(connectEngine({ env: { DOCKER_HOST: endpoint }, home: sshd.home, timeoutMs: 1500 }), (err: Error) => {
        assert.ok(err.message.startsWith(`Docker is not reachable at ${endpoint} (from DOCKER_HOST): `), err.message);
        assert.match(err.message, /did not finish in time|no answer within 1\.5 s/);
        return true;
      });
    } finally {
      for (const s of held) s.destroy();
      await new Promise<void>((resolve) => silent.close(() => resolve()));
    }
  });
});

describe('tcp:// with TLS to an engine on another machine (second dockerd, own host name)', () => {
  const names = objectNames(`tbxt${Math.random().toString(16).slice(2, 8)}`);
  const farHost = `tbxt-far-${Math.random().toString(16).slice(2, 8)}`;
  let dir: string;
  let tls: TlsFiles;
  let port: number;
  let engine: SecondEngine | undefined;
  let restoreEnv: () => void = () => undefined;
  const backends: Backend[] = [];
  const env = () => ({ DOCKER_HOST: `tcp://127.0.0.1:${port}`, DOCKER_TLS_VERIFY: '1', DOCKER_CERT_PATH: tls.clientDir });

  before(async () => {
    dir = mkdtempSync('/tmp/tbxt-tls-');
    tls = makeTlsFiles(dir);
    port = await freePort();
    engine = await startSecondEngine({ tls: { port, ...tls.server }, hostname: farHost });
  });

  after(async () => {
    for (const b of backends) b.dispose();
    restoreEnv();
    await engine?.dispose();
    rmSync(dir, { recursive: true, force: true });
  });

  it('connects with the client certificate, verifying the engine’s, and the engine reports its own host', async () => {
    const c = await connectEngine({ env: env(), home: dir });
    assert.equal(c.endpoint.options.protocol, 'https');
    const info = (await c.docker.info()) as { Name: string };
    assert.equal(info.Name, farHost);
    assert.deepEqual(engineLocality(c.endpoint, info.Name, hostname()), { remote: true, engineHost: farHost, localHost: hostname() });
  });

  it('refuses a client certificate the engine does not trust, an engine certificate ca.pem does not sign, and plain HTTP', async () => {
    await assert.rejects(connectEngine({ env: { ...env(), DOCKER_CERT_PATH: tls.strangerDir }, home: dir }), (err: Error) => {
      assert.match(err.message, /the engine refused this client's TLS certificate \(cert\.pem and key\.pem in /);
      return true;
    });
    const wrongCa = join(dir, 'wrong-ca');
    mkdirSync(wrongCa);
    for (const f of ['cert.pem', 'key.pem']) cpSync(join(tls.clientDir, f), join(wrongCa, f));
    cpSync(join(tls.strangerDir, 'client-cert.pem'), join(wrongCa, 'ca.pem')); // some other certificate as the CA
    await assert.rejects(connectEngine({ env: { ...env(), DOCKER_CERT_PATH: wrongCa }, home: dir }), (err: Error) => {
      assert.match(err.message, /the engine's TLS certificate was not accepted \([A-Z_]+\): it is not signed by the ca\.pem in /);
      return true;
    });
    await assert.rejects(connectEngine({ env: { DOCKER_HOST: `tcp://127.0.0.1:${port}` }, home: dir }), (err: Error) => {
      assert.match(err.message, /the engine speaks TLS on this port, and the connection did not/);
      return true;
    });
  });

  it('refuses to open a local folder there (shell, named shell, agent worktree) before anything is made', async () => {
    const home = join(dir, 'home');
    const folder = join(home, 'project');
    mkdirSync(folder, { recursive: true });
    writeFileSync(join(home, '.toolbox.yaml'), `shells:\n  far:\n    path: ${folder}\n`);
    execFileSync('git', ['init', '-q', '-b', 'main', folder]);
    restoreEnv = envFor({ ...env(), DOCKER_CONTEXT: undefined });
    const backend = newBackend(names, home);
    backends.push(backend);
    const refusal = (err: Error) => {
      assert.match(
        err.message,
        new RegExp(
          `^Toolbox cannot open ${folder} in a container: the Docker engine at tcp://127\\.0\\.0\\.1:${port} runs on another machine \\(${farHost}; this one is `,
        ),
      );
      assert.match(err.message, /a bind mount takes the path on the engine's machine, where this folder does not exist/);
      assert.match(err.message, /VS Code Remote-SSH/);
      assert.match(err.message, /Toolbox: Select Engine…/);
      assert.match(err.message, /Nothing was created\.$/);
      return true;
    };
    const steps: string[] = [];
    const progress = { log: () => undefined, step: (m: string) => steps.push(m) };
    await assert.rejects((await backend.prepareShell({ folder })).open(progress, new AbortController().signal), refusal);
    assert.ok(!steps.some((s) => /bridge/i.test(s)), `the bridge never started (steps: ${steps.join(' | ')})`);
    await assert.rejects((await backend.prepareShell({ folder, namedShell: 'far' })).open(quiet, new AbortController().signal), refusal);
    await assert.rejects(backend.prepareNamedShellCreate(folder, 'farnew', join(home, 'new-folder')), (err: Error) => {
      assert.match(err.message, /^Toolbox cannot open .*new-folder in a container: the Docker engine at tcp:/);
      return true;
    });
    assert.equal(existsSync(join(home, 'new-folder')), false, 'no folder made for the new named shell');
    assert.doesNotMatch(readFileSync(join(home, '.toolbox.yaml'), 'utf8'), /farnew/, '~/.toolbox.yaml unchanged');
    await assert.rejects(
      backend.createAgentWorktree({ folder, branch: 'tbxt-remote', prompt: '' }, quiet, new AbortController().signal),
      refusal,
    );

    const far: Docker = engine!.client();
    assert.deepEqual(await far.listContainers({ all: true }), [], 'no container on the remote engine');
    const volumes = (await far.listVolumes()).Volumes ?? [];
    assert.deepEqual(volumes, [], 'no volume on the remote engine');
    assert.equal(existsSync(join(folder, '.worktrees')), false, 'no worktree folder');
    assert.equal(execFileSync('git', ['-C', folder, 'branch', '--list', 'tbxt-remote'], { encoding: 'utf8' }).trim(), '', 'no branch');
    assert.equal(existsSync(join(home, '.toolbox')), false, `no bridge state in the toolbox home (${readdirSync(home).join(', ')})`);
  });

  it('keeps the tree, stop and stop-all working against it', async () => {
    const backend = newBackend(names, join(dir, 'home'));
    backends.push(backend);
    const snapshot = await backend.snapshot();
    assert.match(
      snapshot.engine ?? '',
      new RegExp(`^Docker \\S+ on the machine ${farHost}, at tcp://127\\.0\\.0\\.1:${port} \\(from DOCKER_HOST\\)$`),
    );
    assert.deepEqual(snapshot.containers, []);
    assert.deepEqual(await backend.stopAllTargets(), []);
    assert.deepEqual(await backend.stopAll(), []);
    await backend.stopContainer(`${names.prefix}-named-nothing`); // already gone: not an error
  });
});
