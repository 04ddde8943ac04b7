/**
 * A loopback sshd the test owns, for ssh:// engine endpoints: its own config, host key,
 * authorized_keys and pid file in a temporary directory, listening on 127.0.0.1:<free port>, and
 * a client home (`.ssh/id_ed25519`, `.ssh/known_hosts` naming the host key) to connect with. A
 * login runs `docker system dial-stdio` against this machine's engine, so ssh:// here reaches the
 * same engine as the unix socket. Never the system's ssh service (scripts/ensure-sshd.sh installs
 * the package without starting it).
 */
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync, existsSync } from 'node:fs';
import { connect } from 'node:net';
import { userInfo } from 'node:os';
import { join } from 'node:path';
import { freePort } from './ports';

export const SSHD_BIN = '/usr/sbin/sshd';

export interface LoopbackSshd {
  port: number;
  user: string;
  /** `ssh://<user>@127.0.0.1:<port>` */
  endpoint: string;
  /** A client home: `.ssh/id_ed25519` is authorized, `.ssh/known_hosts` holds the host key. */
  home: string;
  /** The known_hosts line for this server (`[127.0.0.1]:<port> ssh-ed25519 …`). */
  knownHostsLine: string;
  /** A second client home whose key is authorized but whose known_hosts is empty. */
  strangerHome: string;
  /** Ends the sshd (its sessions too) and removes its directory. */
  stop(): Promise<void>;
}

function keygen(file: string): string {
  execFileSync('ssh-keygen', ['-q', '-t', 'ed25519', '-N', '', '-C', 'toolbox-test', '-f', file], { stdio: 'ignore' });
  return readFileSync(`${file}.pub`, 'utf8').trim();
}

function clientHome(root: string, knownHosts: string): { home: string; pub: string } {
  const home = mkdtempSync(join(root, 'home-'));
  mkdirSync(join(home, '.ssh'), { mode: 0o700 });
  const pub = keygen(join(home, '.ssh', 'id_ed25519'));
  writeFileSync(join(home, '.ssh', 'known_hosts'), knownHosts, { mode: 0o600 });
  return { home, pub };
}

export async function startLoopbackSshd(opts: { dockerSocket?: string; forceCommand?: string } = {}): Promise<LoopbackSshd> {
  if (!existsSync(SSHD_BIN)) throw new Error(`${SSHD_BIN} is missing: run bash scripts/ensure-sshd.sh install (scripts/setup.sh does).`);
  // sshd's privilege separation needs this directory; the package's service makes it at boot.
  mkdirSync('/run/sshd', { recursive: true, mode: 0o755 });
  const dir = mkdtempSync('/tmp/tbxssh-');
  const port = await freePort();
  const user = userInfo().username;
  const hostPub = keygen(join(dir, 'host_ed25519'));
  const [type, key] = hostPub.split(' ');
  const knownHostsLine = `[127.0.0.1]:${port} ${type} ${key}`;
  const a = clientHome(dir, `${knownHostsLine}\n`);
  const b = clientHome(dir, '');
  writeFileSync(join(dir, 'authorized_keys'), `${a.pub}\n${b.pub}\n`, { mode: 0o600 });
  const socket = opts.dockerSocket ?? process.env.TOOLBOX_TEST_DOCKER_SOCKET ?? '/var/run/docker.sock';
  const config = [
    `Port ${port}`,
    'ListenAddress 127.0.0.1',
    `HostKey ${join(dir, 'host_ed25519')}`,
    `PidFile ${join(dir, 'sshd.pid')}`,
    `AuthorizedKeysFile ${join(dir, 'authorized_keys')}`,
    'PubkeyAuthentication yes',
    'PasswordAuthentication no',
    'KbdInteractiveAuthentication no',
    'PermitRootLogin prohibit-password',
    `AllowUsers ${user}`,
    'UsePAM no',
    'StrictModes no',
    'PrintMotd no',
    // The login's docker CLI talks to the engine the tests use.
    `SetEnv DOCKER_HOST=unix://${socket}`,
    'LogLevel VERBOSE',
    // A far host without a working docker, for the dial-stdio failure messages.
    ...(opts.forceCommand ? [`ForceCommand ${opts.forceCommand}`] : []),
  ].join('\n');
  writeFileSync(join(dir, 'sshd_config'), `${config}\n`);
  const log = join(dir, 'sshd.log');
  const child: ChildProcess = spawn(SSHD_BIN, ['-D', '-f', join(dir, 'sshd_config'), '-E', log], { stdio: 'ignore' });
  const onExit = () => child.kill('SIGKILL');
  process.once('exit', onExit);
  let exited = false;
  const gone = new Promise<void>((resolve) =>
    child.once('exit', () => {
      exited = true;
      resolve();
    }),
  );
  const stop = async () => {
    process.removeListener('exit', onExit);
    if (!exited) child.kill('SIGTERM');
    await gone;
    rmSync(dir, { recursive: true, force: true });
  };
  const deadline = Date.now() + 15_000;
  for (;;) {
    if (exited) {
      const text = existsSync(log) ? readFileSync(log, 'utf8').trim() : '';
      await stop();
      throw new Error(`The test sshd exited while starting. Its log: ${text}`);
    }
    const up = await new Promise<boolean>((resolve) => {
      const s = connect(port, '127.0.0.1', () => {
        s.destroy();
        resolve(true);
      });
      s.on('error', () => resolve(false));
    });
    if (up) break;
    if (Date.now() > deadline) {
      await stop();
      throw new Error(`The test sshd did not listen on 127.0.0.1:${port} within 15 s.`);
    }
    await new Promise((r) => setTimeout(r, 50));
  }
  return {
    port,
    user,
    endpoint: `ssh://${user}@127.0.0.1:${port}`,
    home: a.home,
    strangerHome: b.home,
    knownHostsLine,
    stop,
  };
}

/** An ssh-agent of the test's own (its socket in a temporary directory) holding one key. */
export async function startSshAgent(keyFile: string): Promise<{ socket: string; stop(): Promise<void> }> {
  const dir = mkdtempSync('/tmp/tbxagent-');
  const socket = join(dir, 'agent.sock');
  const child = spawn('ssh-agent', ['-D', '-a', socket], { stdio: 'ignore' });
  const gone = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const stop = async () => {
    child.kill('SIGTERM');
    await gone;
    rmSync(dir, { recursive: true, force: true });
  };
  const deadline = Date.now() + 10_000;
  while (!existsSync(socket)) {
    if (Date.now() > deadline) {
      await stop();
      throw new Error('ssh-agent did not create its socket within 10 s.');
    }
    await new Promise((r) => setTimeout(r, 25));
  }
  execFileSync('ssh-add', ['-q', keyFile], { env: { ...process.env, SSH_AUTH_SOCK: socket }, stdio: 'ignore' });
  return { socket, stop };
}
