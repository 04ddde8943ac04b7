/**
 * A second, private Docker engine for tests that must stop or restart a daemon without touching
 * the machine's main one (other tests run on it at the same time). It has its own socket,
 * data-root, exec-root (and so its own managed containerd), pidfile and config file, no bridge
 * network and no iptables rules, and uses the vfs storage driver so it works on any filesystem.
 * It only ever holds volumes; its containers would have no network.
 *
 * It runs in a network namespace of its own (`unshare --net`): a dockerd started with
 * `--bridge none` deletes any interface named docker0 it can see, which in the host's namespace
 * is the main engine's default bridge — every later container on the default network would then
 * fail with "could not find bridge docker0".
 *
 * For remote-engine tests it can also speak TLS on 127.0.0.1:<port> (client certificates
 * required): the port is bound in the host's network namespace by systemd-socket-activate and
 * handed to `dockerd -H fd://`, since the daemon's own namespace has a loopback of its own. And it
 * can have a host name of its own (a UTS namespace), which its GET /info reports as Name, as an
 * engine on another machine would.
 */
import { execFile, execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { closeSync, existsSync, mkdtempSync, openSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { connect } from 'node:net';
import { join } from 'node:path';
import { promisify } from 'node:util';
import Docker from 'dockerode';

export interface SecondEngine {
  socketPath: string;
  /** A fresh client for the engine's socket. */
  client(): Docker;
  /** Ends the daemon with the signal (SIGKILL simulates a crash) and waits until it has exited. */
  stop(signal?: NodeJS.Signals): Promise<void>;
  /** Starts the daemon again on the same state and waits until it answers. */
  start(): Promise<void>;
  /** Stops the daemon and its containerd, unmounts what it mounted, removes its temp dirs. */
  dispose(): Promise<void>;
}

export interface SecondEngineOptions {
  /** Also listen on 127.0.0.1:<port> with --tlsverify, with these server files (PEM paths). */
  tls?: { port: number; ca: string; cert: string; key: string };
  /** The daemon's own host name (what GET /info reports as Name). */
  hostname?: string;
}

const READY_TIMEOUT_MS = 60_000;
const EXIT_TIMEOUT_MS = 30_000;

function dockerdSupports(flag: string): boolean {
  try {
    return execFileSync('dockerd', ['--help'], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] }).includes(flag);
  } catch {
    return false;
  }
}

export async function startSecondEngine(opts: SecondEngineOptions = {}): Promise<SecondEngine> {
  if (process.getuid?.() !== 0) throw new Error('A second dockerd needs root; these tests run as root.');
  // A short path: the engine's and containerd's unix sockets live under it (108-byte limit).
  const root = mkdtempSync('/tmp/tbx2d-');
  const socketPath = join(root, 'docker.sock');
  const execRoot = join(root, 'exec');
  const logPath = join(root, 'dockerd.log');
  const pidFile = join(root, 'docker.pid');
  writeFileSync(join(root, 'daemon.json'), '{}\n');
  const args = [
    '--host',
    `unix://${socketPath}`,
    '--data-root',
    join(root, 'data'),
    '--exec-root',
    execRoot,
    '--pidfile',
    pidFile,
    '--config-file',
    join(root, 'daemon.json'),
    '--bridge',
    'none',
    '--iptables=false',
    ...(dockerdSupports('--ip6tables') ? ['--ip6tables=false'] : []),
    '--storage-driver',
    'vfs',
  ];

  let child: ChildProcess | undefined;
  let exited: Promise<void> = Promise.resolve();
  const onExit = () => child?.kill('SIGKILL');
  process.once('exit', onExit);

  const logTail = () => {
    try {
      return readFileSync(logPath, 'utf8').trim().split('\n').slice(-8).join('\n');
    } catch {
      return '(no log)';
    }
  };

  const ctrPidFile = join(execRoot, 'containerd', 'containerd.pid');
  /** The managed containerd of this engine, if one is alive. */
  const containerdPid = (): number | undefined => {
    if (!existsSync(ctrPidFile)) return undefined;
    const pid = Number(readFileSync(ctrPidFile, 'utf8').trim());
    return Number.isInteger(pid) && pid > 1 && isContainerdOf(pid, execRoot) && !isZombie(pid) ? pid : undefined;
  };

  const start = async () => {
    if (child) throw new Error('The second dockerd is already running.');
    // A killed daemon leaves its pidfile, and its containerd's; while either names a pid that
    // still exists (a zombie not yet reaped by init counts), the new daemon refuses to start or
    // adopts the dead containerd and times out.
    rmSync(pidFile, { force: true });
    if (containerdPid() === undefined) rmSync(ctrPidFile, { force: true });
    const log = openSync(logPath, 'a');
    const { tls, hostname } = opts;
    const dockerd = [
      'dockerd',
      ...args,
      ...(tls ? ['--host', 'fd://', '--tlsverify', '--tlscacert', tls.ca, '--tlscert', tls.cert, '--tlskey', tls.key] : []),
    ];
    // `sh -c 'hostname …; exec …'` and unshare both exec, so the daemon keeps the pid that
    // systemd-socket-activate named in LISTEN_PID.
    const inNamespaces = [
      'unshare',
      '--net',
      ...(hostname ? ['--uts', '--', 'sh', '-c', 'hostname "$0" && exec "$@"', hostname] : ['--']),
      ...dockerd,
    ];
    if (tls && !existsSync('/usr/bin/systemd-socket-activate')) {
      throw new Error('The TLS test engine needs systemd-socket-activate (Debian package systemd): apt-get install systemd.');
    }
    const argv = tls ? ['systemd-socket-activate', '-l', `127.0.0.1:${tls.port}`, ...inNamespaces] : inNamespaces;
    const proc = spawn(argv[0]!, argv.slice(1), { stdio: ['ignore', log, log] });
    closeSync(log);
    child = proc;
    let exitInfo: string | undefined;
    exited = new Promise<void>((resolve) => {
      proc.once('exit', (code, signal) => {
        exitInfo = `exit code ${code ?? '-'}, signal ${signal ?? '-'}`;
        if (child === proc) child = undefined;
        resolve();
      });
      proc.once('error', (err) => {
        exitInfo = err.message;
        if (child === proc) child = undefined;
        resolve();
      });
    });
    const docker = new Docker({ socketPath });
    const deadline = Date.now() + READY_TIMEOUT_MS;
    // systemd-socket-activate runs the daemon on the first connection to the port: knock once.
    let knocked = !tls;
    for (;;) {
      if (!knocked && tls) knocked = await knock(tls.port);
      if (exitInfo !== undefined) {
        throw new Error(`The second dockerd exited while starting (${exitInfo}). Its log ends with:\n${logTail()}`);
      }
      try {
        await docker.ping();
        return;
      } catch {
        // not listening yet
      }
      if (Date.now() > deadline) {
        throw new Error(`The second dockerd did not answer on ${socketPath} within ${READY_TIMEOUT_MS / 1000} s. Log:\n${logTail()}`);
      }
      await new Promise((r) => setTimeout(r, 100));
    }
  };

  /**
   * Like a service manager stopping the unit: the daemon and then its containerd. A killed
   * dockerd's containerd shuts down on its own a moment later, and a dockerd started before it
   * is gone adopts the dying one and fails ("timeout waiting for containerd to start").
   */
  const stop = async (signal: NodeJS.Signals = 'SIGTERM') => {
    const proc = child;
    if (!proc) return;
    const ctr = containerdPid();
    proc.kill(signal);
    const timer = setTimeout(() => proc.kill('SIGKILL'), EXIT_TIMEOUT_MS);
    await exited;
    clearTimeout(timer);
    if (ctr !== undefined && !(await exitsWithin(ctr, EXIT_TIMEOUT_MS))) {
      killQuietly(ctr);
      await exitsWithin(ctr, EXIT_TIMEOUT_MS);
    }
  };

  const dispose = async () => {
    process.removeListener('exit', onExit);
    await stop('SIGTERM').catch(() => undefined);
    // stop() waits for the managed containerd; if it is somehow still there, end it.
    const ctr = containerdPid();
    if (ctr !== undefined) killQuietly(ctr);
    // dockerd bind-mounts its data-root onto itself and leaves it mounted: unmount deepest first.
    for (const mount of mountsUnder(root)) {
      await promisify(execFile)('umount', ['-l', mount]).catch(() => undefined);
    }
    rmSync(root, { recursive: true, force: true });
  };

  try {
    await start();
  } catch (err) {
    await dispose();
    throw err;
  }
  return { socketPath, client: () => new Docker({ socketPath }), stop, start, dispose };
}

/** Connects to 127.0.0.1:port and hangs up at once; false when nothing listens yet. */
function knock(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const s = connect(port, '127.0.0.1', () => {
      s.destroy();
      resolve(true);
    });
    s.on('error', () => resolve(false));
  });
}

function killQuietly(pid: number): void {
  try {
    process.kill(pid, 'SIGKILL');
  } catch {
    // already gone
  }
}

/** Polls until the process is gone (or a zombie, which holds nothing); false on timeout. */
async function exitsWithin(pid: number, timeoutMs: number): Promise<boolean> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (!existsSync(`/proc/${pid}`) || isZombie(pid)) return true;
    if (Date.now() > deadline) return false;
    await new Promise((r) => setTimeout(r, 50));
  }
}

function isZombie(pid: number): boolean {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2).startsWith('Z');
  } catch {
    return false;
  }
}

function isContainerdOf(pid: number, execRoot: string): boolean {
  try {
    return readFileSync(`/proc/${pid}/cmdline`, 'utf8').includes(execRoot);
  } catch {
    return false;
  }
}

function mountsUnder(root: string): string[] {
  const lines = readFileSync('/proc/self/mountinfo', 'utf8').split('\n');
  const points = lines.map((l) => l.split(' ')[4]).filter((p): p is string => p !== undefined && (p === root || p.startsWith(`${root}/`)));
  return [...new Set(points)].sort((a, b) => b.length - a.length);
}
