/**
 * images/runtime/toolbox-egress, the forwarder a container under an egress policy (issue 30) runs
 * on its loopback: held to the contract (EGRESS, ENV.egressSocket) with the Dockerfile and the
 * entrypoint that install and start it, then run by python3 on this host against a stand-in
 * proxy, a node:net server on a unix socket in a temp dir. Bytes go both ways untouched, a
 * half-close passes through in each direction, an unreachable proxy socket closes the client, a
 * broken connection never takes the listener with it, a second forwarder on the port leaves at
 * once with exit 0, and --supervise starts a failed one again.
 */
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { createServer, connect, type Server, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { textResponse } from '../../extension/src/bridge/egressWire';
import { EGRESS } from '../../extension/src/contract/egress';
import { ENV } from '../../extension/src/contract/shims';
import { repoRoot } from '../support/image';
import { readHttpHead } from '../support/httpHead';
import { hasPython } from '../support/python';

const RUNTIME = join(repoRoot(), 'images', 'runtime');
const FORWARDER = join(RUNTIME, 'toolbox-egress');

interface ForwarderFiles {
  forwarder: string;
  dockerfile: string;
  entrypoint: string;
  sshConfig: string;
}

/** Where the image puts images/runtime/ssh-egress.conf (Debian's ssh_config includes ssh_config.d/*.conf). */
const SSH_CONFIG = '/etc/ssh/ssh_config.d/toolbox-egress.conf';

/** What the forwarder, the Dockerfile and the entrypoint say, against the contract; empty when they agree. */
export function forwarderMismatches(files: ForwarderFiles): string[] {
  const out: string[] = [];
  const { forwarder, dockerfile, entrypoint, sshConfig } = files;
  const constant = (name: string): string | undefined => new RegExp(`^${name} = (.+?)(?:\\s+#.*)?$`, 'm').exec(forwarder)?.[1];
  const want: Array<[string, string]> = [
    ['SOCKET_ENV', JSON.stringify(ENV.egressSocket)],
    ['DEFAULT_PORT', String(EGRESS.proxyPort)],
    ['INSTALL_PATH', JSON.stringify(EGRESS.forwarder)],
  ];
  for (const [name, value] of want) {
    if (constant(name) !== value) out.push(`toolbox-egress: ${name} is ${constant(name)}, contract says ${value}`);
  }
  if (!/os\.environ\.get\(SOCKET_ENV\b/.test(forwarder)) out.push('toolbox-egress: never reads SOCKET_ENV');
  if (!/"--port": str\(DEFAULT_PORT\)/.test(forwarder)) out.push('toolbox-egress: DEFAULT_PORT is not the default --port');
  // The exec that starts it where the entrypoint did not: the documented command is the contract's.
  const exec = /^ {2}docker exec -d CONTAINER (\S+) --supervise --socket (\S+)$/m.exec(forwarder);
  if (exec?.[1] !== EGRESS.forwarder || exec?.[2] !== EGRESS.containerSocket)
    out.push(`toolbox-egress: the documented exec runs ${exec?.[1]} --socket ${exec?.[2]}`);

  if (!dockerfile.split('\n').includes(`COPY images/runtime/toolbox-egress ${EGRESS.forwarder}`))
    out.push(`Dockerfile: does not COPY images/runtime/toolbox-egress to ${EGRESS.forwarder}`);
  if (!new RegExp(`chmod 0755 [^&]*${EGRESS.forwarder}(?=\\s)`).test(dockerfile.replace(/\\\n/g, ' ')))
    out.push(`Dockerfile: ${EGRESS.forwarder} is not made 0755`);

  const shellVar = (name: string): string | undefined => new RegExp(`^${name}=(\\S+)$`, 'm').exec(entrypoint)?.[1];
  if (shellVar('EGRESS_FORWARDER') !== EGRESS.forwarder) out.push(`entrypoint.sh: EGRESS_FORWARDER is ${shellVar('EGRESS_FORWARDER')}`);
  if (shellVar('EGRESS_PORT') !== String(EGRESS.proxyPort)) out.push(`entrypoint.sh: EGRESS_PORT is ${shellVar('EGRESS_PORT')}`);
  if (!entrypoint.includes(`--supervise --port "$EGRESS_PORT" --socket "$${ENV.egressSocket}"`))
    out.push(`entrypoint.sh: does not start the forwarder supervised on $${ENV.egressSocket}`);
  if (!/^step egress-forwarder start_egress_forwarder$/m.test(entrypoint)) out.push('entrypoint.sh: has no egress-forwarder step');
  const ready = entrypoint.search(/^step egress-ready wait_egress_forwarder$/m);
  const shellsMayStart = entrypoint.search(/^rm -f "\$ACCOUNT_PENDING"/m);
  if (ready < 0 || shellsMayStart < 0 || ready > shellsMayStart)
    out.push("entrypoint.sh: the holder's shells may start before the forwarder listens");

  // ssh (git over SSH): every host through --connect, only while the socket variable is set.
  const directives = sshConfig.split('\n').filter((l) => l.trim() !== '' && !l.trimStart().startsWith('#'));
  if (directives[0] !== `Match exec "test x\${${ENV.egressSocket}:+1} = x1"`)
    out.push(`ssh-egress.conf: does not match on ${ENV.egressSocket} being set (first line: ${directives[0]})`);
  if (directives[1]?.trim() !== `ProxyCommand ${EGRESS.forwarder} --connect %h %p` || directives.length !== 2)
    out.push(`ssh-egress.conf: its ProxyCommand is not ${EGRESS.forwarder} --connect %h %p`);
  if (!dockerfile.split('\n').includes(`COPY images/runtime/ssh-egress.conf ${SSH_CONFIG}`))
    out.push(`Dockerfile: does not COPY images/runtime/ssh-egress.conf to ${SSH_CONFIG}`);
  if (!/apt-get install[^&]*\sopenssh-client\s/.test(dockerfile.replace(/\\\n/g, ' ')))
    out.push('Dockerfile: does not install openssh-client');
  if (shellVar('EGRESS_SSH_CONFIG') !== SSH_CONFIG) out.push(`entrypoint.sh: EGRESS_SSH_CONFIG is ${shellVar('EGRESS_SSH_CONFIG')}`);
  if (!/^ {2}toolbox-egress --connect HOST PORT /m.test(forwarder)) out.push('toolbox-egress: does not document --connect HOST PORT');
  return out;
}

describe('egress forwarder contract (images/runtime/toolbox-egress, its install and its start)', () => {
  const files: ForwarderFiles = {
    forwarder: readFileSync(FORWARDER, 'utf8'),
    dockerfile: readFileSync(join(RUNTIME, 'Dockerfile'), 'utf8'),
    entrypoint: readFileSync(join(RUNTIME, 'entrypoint.sh'), 'utf8'),
    sshConfig: readFileSync(join(RUNTIME, 'ssh-egress.conf'), 'utf8'),
  };

  it('holds the socket env, port and install path to EGRESS and ENV', () => {
    assert.deepEqual(forwarderMismatches(files), []);
  });

  it('is an executable file in the image build context', () => {
    assert.ok((statSync(FORWARDER).mode & 0o111) !== 0, 'toolbox-egress is not executable in the repository');
    assert.ok(files.forwarder.startsWith('#!/usr/bin/env python3\n'));
  });

  const mutations: Array<{ file: keyof ForwarderFiles; from: string; to: string; expect: RegExp }> = [
    { file: 'forwarder', from: 'DEFAULT_PORT = 3128', to: 'DEFAULT_PORT = 8080', expect: /DEFAULT_PORT is 8080/ },
    { file: 'forwarder', from: '"TOOLBOX_EGRESS_SOCKET"', to: '"TOOLBOX_EGRESS"', expect: /SOCKET_ENV is "TOOLBOX_EGRESS"/ },
    {
      file: 'forwarder',
      from: 'CONTAINER /usr/local/lib/toolbox/toolbox-egress --supervise',
      to: 'CONTAINER /usr/local/bin/toolbox-egress --supervise',
      expect: /documented exec/,
    },
    {
      file: 'dockerfile',
      from: 'COPY images/runtime/toolbox-egress /usr/local/lib/toolbox/toolbox-egress',
      to: 'COPY images/runtime/toolbox-egress /usr/local/bin/toolbox-egress',
      expect: /does not COPY/,
    },
    { file: 'dockerfile', from: '/usr/local/lib/toolbox/toolbox-egress \\', to: '\\', expect: /not made 0755/ },
    { file: 'entrypoint', from: 'EGRESS_PORT=3128', to: 'EGRESS_PORT=3129', expect: /EGRESS_PORT is 3129/ },
    { file: 'entrypoint', from: 'step egress-forwarder ', to: 'step egress ', expect: /no egress-forwarder step/ },
    {
      file: 'entrypoint',
      from: 'step egress-ready wait_egress_forwarder\n',
      to: '',
      expect: /shells may start before the forwarder listens/,
    },
    { file: 'sshConfig', from: ':+1} = x1', to: '} != x', expect: /does not match on TOOLBOX_EGRESS_SOCKET/ },
    { file: 'sshConfig', from: '--connect %h %p', to: '--connect %h 22', expect: /its ProxyCommand is not/ },
    {
      file: 'dockerfile',
      from: 'COPY images/runtime/ssh-egress.conf',
      to: 'COPY images/runtime/ssh.conf',
      expect: /does not COPY images\/runtime\/ssh-egress/,
    },
    { file: 'dockerfile', from: ' openssh-client ', to: ' ', expect: /does not install openssh-client/ },
  ];
  for (const m of mutations) {
    it(`catches ${m.file}: ${m.from} → ${m.to}`, () => {
      assert.ok(files[m.file].includes(m.from), `${m.file} no longer has ${m.from}`);
      const mutated = { ...files, [m.file]: files[m.file].replace(m.from, m.to) };
      assert.match(forwarderMismatches(mutated).join('\n'), m.expect);
    });
  }
});

// --- the program, run on this host ---------------------------------------------------------------

const temps: string[] = [];
const children = new Set<ChildProcess>();
const dialed = new Set<Socket>();
after(() => {
  for (const sock of dialed) sock.destroy();
  for (const child of children) child.kill('SIGKILL');
  for (const dir of temps) rmSync(dir, { recursive: true, force: true });
});

function tempDir(): string {
  const dir = mkdtempSync(join(tmpdir(), 'tbxfwd-'));
  temps.push(dir);
  return dir;
}

/** A port nothing listens on just now. */
async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as { port: number }).port;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

interface Running {
  child: ChildProcess;
  port: number;
  stderr: () => string;
  exited: Promise<number | null>;
}

/** Starts the forwarder; resolves once its log matches `until` (it listens), or it has exited. */
async function startForwarder(args: string[], port: number, env: Record<string, string> = {}, until = /listening on/): Promise<Running> {
  const child = spawn('python3', [FORWARDER, '--port', String(port), ...args], {
    env: { PATH: process.env.PATH ?? '/usr/bin:/bin', LANG: 'C.UTF-8', ...env },
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  children.add(child);
  let stderr = '';
  const exited = new Promise<number | null>((resolve) =>
    child.on('close', (code) => {
      children.delete(child);
      resolve(code);
    }),
  );
  const up = new Promise<void>((resolve) => {
    child.stderr!.on('data', (c: Buffer) => {
      stderr += c.toString('utf8');
      if (until.test(stderr)) resolve();
    });
  });
  await Promise.race([up, exited, delay(10_000)]);
  return { child, port, stderr: () => stderr, exited };
}

async function stop(running: Running): Promise<number | null> {
  running.child.kill('SIGTERM');
  return running.exited;
}

function delay(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

type Handler = (sock: Socket) => void;

/** The stand-in proxy: a unix socket server; each connection goes to `handler`, half-open allowed. */
async function standIn(path: string, handler: Handler): Promise<Server> {
  const server = createServer({ allowHalfOpen: true }, (sock) => {
    accepted.set(server, [...(accepted.get(server) ?? []), sock]);
    handler(sock);
  });
  await new Promise<void>((resolve) => server.listen(path, resolve));
  return server;
}

const accepted = new Map<Server, Socket[]>();

/** Stops listening and drops the connections still open (half-open ones would hold close() up). */
async function closeServer(server: Server): Promise<void> {
  for (const sock of accepted.get(server) ?? []) sock.destroy();
  await new Promise<void>((resolve) => server.close(() => resolve()));
}

/** What a socket receives until its reader ends or it closes, and whether it ended cleanly. */
function collect(sock: Socket): Promise<{ data: Buffer; ended: boolean; error?: string }> {
  return new Promise((resolve) => {
    const chunks: Buffer[] = [];
    let ended = false;
    let error: string | undefined;
    sock.on('data', (c: Buffer) => chunks.push(c));
    sock.on('end', () => {
      ended = true;
      resolve({ data: Buffer.concat(chunks), ended, error });
    });
    sock.on('error', (err: NodeJS.ErrnoException) => (error = err.code ?? err.message));
    sock.on('close', () => resolve({ data: Buffer.concat(chunks), ended, error }));
  });
}

function dial(port: number, host = '127.0.0.1'): Promise<Socket> {
  return new Promise((resolve, reject) => {
    const sock = connect({ port, host, allowHalfOpen: true });
    dialed.add(sock);
    sock.once('connect', () => resolve(sock));
    sock.once('error', reject);
  });
}

describe('toolbox-egress relays loopback connections to the proxy socket', { skip: hasPython ? false : 'no python3 on this host' }, () => {
  it('passes 8 MiB each way untouched, at once, and ends each direction on its own', { timeout: 30_000 }, async () => {
    const dir = tempDir();
    const path = join(dir, EGRESS.socket);
    const upload = randomBytes(8 << 20);
    const download = randomBytes(8 << 20);
    let received: Promise<{ data: Buffer; ended: boolean }> | undefined;
    const server = await standIn(path, (sock) => {
      received = collect(sock);
      // Sends its whole answer while the upload is still coming: both directions at once.
      sock.end(download);
    });
    const fwd = await startForwarder([], await freePort(), { [ENV.egressSocket]: path });
    try {
      assert.match(fwd.stderr(), new RegExp(`listening on 127\\.0\\.0\\.1.* port ${fwd.port}, relaying to ${path}`));
      const client = await dial(fwd.port);
      const got = collect(client);
      client.end(upload);
      const down = await got;
      assert.ok(down.ended, 'the client did not see the end of the answer');
      assert.ok(down.data.equals(download), `the client got ${down.data.length} bytes, not the ${download.length} sent`);
      const up = await received!;
      assert.ok(up.ended);
      assert.ok(up.data.equals(upload), `the proxy got ${up.data.length} bytes, not the ${upload.length} sent`);
      client.destroy();
    } finally {
      await stop(fwd);
      await closeServer(server);
    }
  });

  it(
    'passes a half-close: the client shuts its write and still gets the answer, and the other way round',
    { timeout: 20_000 },
    async () => {
      const dir = tempDir();
      const path = join(dir, EGRESS.socket);
      const seen: Array<Promise<{ data: Buffer; ended: boolean }>> = [];
      const server = await standIn(path, (sock) => {
        const got = collect(sock);
        seen.push(got);
        // "question": answered only once the client's end has arrived. "both": the proxy ends
        // first, and what the client sends after that must still arrive.
        sock.once('data', (c: Buffer) => {
          if (c.toString() === 'both') sock.end('first ');
        });
        void got.then(({ data }) => {
          if (data.toString() === 'question') sock.end('answer to question');
        });
      });
      const fwd = await startForwarder(['--socket', path], await freePort());
      try {
        const client = await dial(fwd.port);
        const got = collect(client);
        client.end('question');
        const answer = await got;
        assert.equal(answer.data.toString(), 'answer to question');
        assert.ok(answer.ended);

        const other = await dial(fwd.port);
        const first = collect(other);
        other.write('both');
        const head = await first;
        assert.equal(head.data.toString(), 'first ');
        assert.ok(head.ended, 'the proxy’s end did not reach the client');
        other.end('and after the end');
        const late = await seen[1];
        assert.equal(late.data.toString(), 'bothand after the end');
        assert.ok(late.ended, 'the client’s end did not reach the proxy');
      } finally {
        await stop(fwd);
        await closeServer(server);
      }
    },
  );

  it('closes the client when the proxy socket is not there, and serves once it is', { timeout: 20_000 }, async () => {
    const dir = tempDir();
    const path = join(dir, EGRESS.socket);
    const fwd = await startForwarder(['--socket', path, '--connect-wait', '0.3'], await freePort());
    try {
      const started = Date.now();
      const client = await dial(fwd.port);
      const got = await collect(client);
      assert.equal(got.data.length, 0);
      const ms = Date.now() - started;
      assert.ok(ms >= 280 && ms < 5_000, `closed after ${ms} ms, not after the 0.3 s connect wait`);
      await delay(100);
      assert.match(fwd.stderr(), /cannot reach the egress proxy at .*egress\.sock/);

      const server = await standIn(path, (sock) => sock.end('late but here'));
      const again = await dial(fwd.port);
      const answer = await collect(again);
      assert.equal(answer.data.toString(), 'late but here');
      await closeServer(server);
      assert.equal(fwd.child.exitCode, null, 'the forwarder left');
    } finally {
      assert.equal(await stop(fwd), 0);
    }
  });

  it('waits for a proxy that comes up within the connect wait', { timeout: 20_000 }, async () => {
    const dir = tempDir();
    const path = join(dir, EGRESS.socket);
    const fwd = await startForwarder(['--socket', path, '--connect-wait', '5'], await freePort());
    let server: Server | undefined;
    try {
      const client = await dial(fwd.port);
      const got = collect(client);
      client.end('hello');
      await delay(400);
      server = await standIn(path, (sock) => sock.on('data', (c: Buffer) => sock.end(c.toString().toUpperCase())));
      assert.equal((await got).data.toString(), 'HELLO');
    } finally {
      await stop(fwd);
      if (server) await closeServer(server);
    }
  });

  it('survives clients that reset and a proxy that drops them, and keeps serving', { timeout: 20_000 }, async () => {
    const dir = tempDir();
    const path = join(dir, EGRESS.socket);
    const server = await standIn(path, (sock) => {
      sock.on('error', () => undefined);
      sock.once('data', (c: Buffer) => {
        if (c.toString() === 'drop me') sock.destroy();
        else sock.end(`echo ${c.toString()}`);
      });
    });
    const fwd = await startForwarder(['--socket', path], await freePort());
    try {
      for (let i = 0; i < 20; i++) {
        const rude = await dial(fwd.port);
        rude.write('half a request');
        rude.resetAndDestroy();
      }
      const cut = await dial(fwd.port);
      const cutGot = collect(cut);
      cut.write('drop me');
      const cutEnd = await cutGot;
      assert.equal(cutEnd.data.length, 0);
      const polite = await dial(fwd.port);
      const got = collect(polite);
      polite.write('hi');
      assert.equal((await got).data.toString(), 'echo hi');
      assert.equal(fwd.child.exitCode, null);
      assert.doesNotMatch(fwd.stderr(), /Traceback/);
    } finally {
      assert.equal(await stop(fwd), 0);
      await closeServer(server);
    }
  });

  it('listens on [::1] too where there is IPv6 loopback', { timeout: 20_000 }, async (t) => {
    const probe = createServer();
    const v6 = await new Promise<boolean>((resolve) => {
      probe.once('error', () => resolve(false));
      probe.listen(0, '::1', () => probe.close(() => resolve(true)));
    });
    if (!v6) return t.skip('no IPv6 loopback on this host');
    const dir = tempDir();
    const path = join(dir, EGRESS.socket);
    const server = await standIn(path, (sock) => sock.end('over v6'));
    const fwd = await startForwarder(['--socket', path], await freePort());
    try {
      assert.match(fwd.stderr(), /listening on 127\.0\.0\.1 and \[::1\]/);
      const got = await collect(await dial(fwd.port, '::1'));
      assert.equal(got.data.toString(), 'over v6');
    } finally {
      await stop(fwd);
      await closeServer(server);
    }
  });

  it('leaves with exit 0 when a forwarder already serves the port, and 69 when something else holds it', { timeout: 20_000 }, async () => {
    const dir = tempDir();
    const path = join(dir, EGRESS.socket);
    const port = await freePort();
    const first = await startForwarder(['--socket', path], port);
    try {
      const second = await startForwarder(['--socket', path], port);
      assert.equal(await second.exited, 0);
      assert.match(second.stderr(), new RegExp(`a forwarder already serves port ${port} here`));
      assert.equal(first.child.exitCode, null);
    } finally {
      assert.equal(await stop(first), 0);
    }
    const squatter = createServer();
    await new Promise<void>((resolve) => squatter.listen(port, '127.0.0.1', resolve));
    try {
      const blocked = await startForwarder(['--socket', path], port);
      assert.equal(await blocked.exited, 69);
      assert.match(blocked.stderr(), new RegExp(`cannot listen on 127\\.0\\.0\\.1:${port}`));
    } finally {
      await closeServer(squatter);
    }
  });

  it('--supervise starts it again after a failure, and stops on SIGTERM', { timeout: 30_000 }, async () => {
    const dir = tempDir();
    const path = join(dir, EGRESS.socket);
    const server = await standIn(path, (sock) => sock.end('supervised'));
    const port = await freePort();
    const squatter = createServer();
    await new Promise<void>((resolve) => squatter.listen(port, '127.0.0.1', resolve));
    const fwd = await startForwarder(['--socket', path, '--supervise'], port, {}, /cannot listen/);
    try {
      assert.match(fwd.stderr(), /cannot listen/);
      await closeServer(squatter);
      for (let i = 0; i < 100 && !fwd.stderr().includes('listening on'); i++) await delay(50);
      assert.match(fwd.stderr(), /the forwarder exited 69; starting it again in 1 s \(1 of \d+\)/);
      assert.match(fwd.stderr(), /listening on/);
      const got = await collect(await dial(port));
      assert.equal(got.data.toString(), 'supervised');
    } finally {
      assert.equal(await stop(fwd), 0);
      await closeServer(server);
    }
    // The child went with it: the port is free again.
    const again = createServer();
    await new Promise<void>((resolve, reject) => {
      again.once('error', reject);
      again.listen(port, '127.0.0.1', resolve);
    });
    await closeServer(again);
  });

  it('says how to use it, and refuses to start without a proxy socket', async () => {
    const noSocket = await startForwarder([], await freePort());
    assert.equal(await noSocket.exited, 64);
    assert.match(noSocket.stderr(), new RegExp(`set ${ENV.egressSocket} or pass --socket`));
    const help = spawn('python3', [FORWARDER, '--help'], { stdio: ['ignore', 'pipe', 'ignore'] });
    let text = '';
    help.stdout.on('data', (c: Buffer) => (text += c.toString()));
    const code = await new Promise<number | null>((resolve) => help.on('close', resolve));
    assert.equal(code, 0);
    assert.match(text, /--supervise/);
  });

  it('--self-test relays through a throwaway proxy socket', async () => {
    const child = spawn('python3', [FORWARDER, '--self-test'], { stdio: ['ignore', 'pipe', 'pipe'] });
    let text = '';
    child.stdout.on('data', (c: Buffer) => (text += c.toString()));
    const code = await new Promise<number | null>((resolve) => child.on('close', resolve));
    assert.equal(code, 0);
    assert.equal(text, 'ok\n');
  });
});

// --- --connect HOST PORT: ssh's ProxyCommand -----------------------------------------------------

interface Tunnel {
  child: ChildProcess;
  stdout: Promise<{ data: Buffer; ended: boolean }>;
  stderr: () => string;
  exited: Promise<number | null>;
}

/** Runs `toolbox-egress --connect HOST PORT ...` with stdin and stdout as the tunnel's ends, as ssh does. */
function tunnel(host: string, port: string, args: string[], env: Record<string, string> = {}): Tunnel {
  const child = spawn('python3', [FORWARDER, '--connect', host, port, ...args], {
    env: { PATH: process.env.PATH ?? '/usr/bin:/bin', LANG: 'C.UTF-8', ...env },
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  children.add(child);
  let stderr = '';
  child.stderr!.on('data', (c: Buffer) => (stderr += c.toString('utf8')));
  child.stdin!.on('error', () => undefined);
  const stdout = new Promise<{ data: Buffer; ended: boolean }>((resolve) => {
    const chunks: Buffer[] = [];
    child.stdout!.on('data', (c: Buffer) => chunks.push(c));
    child.stdout!.on('end', () => resolve({ data: Buffer.concat(chunks), ended: true }));
    child.stdout!.on('close', () => resolve({ data: Buffer.concat(chunks), ended: false }));
  });
  const exited = new Promise<number | null>((resolve) =>
    child.on('close', (code) => {
      children.delete(child);
      resolve(code);
    }),
  );
  return { child, stdout, stderr: () => stderr, exited };
}

/** The stand-in's side of a CONNECT: the request head, then `answer` (given the head) with the bytes after it. */
function onConnect(sock: Socket, answer: (head: string, rest: Buffer) => void): void {
  readHttpHead(sock).then(
    ({ head, rest }) => answer(head.toString('latin1'), rest),
    () => undefined,
  );
}

/** Collects what arrives on a socket after the CONNECT head (`rest` first) until its end. */
function collectAfter(sock: Socket, rest: Buffer): Promise<{ data: Buffer; ended: boolean }> {
  const got = collect(sock);
  return got.then(({ data, ended }) => ({ data: Buffer.concat([rest, data]), ended }));
}

describe(
  'toolbox-egress --connect: a CONNECT tunnel on stdin and stdout (ssh ProxyCommand)',
  { skip: hasPython ? false : 'no python3 on this host' },
  () => {
    it('asks for HOST:PORT and, on 200, relays bytes both ways, the proxy’s first bytes included', { timeout: 30_000 }, async () => {
      const path = join(tempDir(), EGRESS.socket);
      const heads: string[] = [];
      const upload = randomBytes(2 << 20);
      const download = randomBytes(2 << 20);
      let up: Promise<{ data: Buffer; ended: boolean }> | undefined;
      const server = await standIn(path, (sock) =>
        onConnect(sock, (head, rest) => {
          heads.push(head);
          up = collectAfter(sock, rest);
          // The server's banner in the same write as the answer, as a fast server's arrives.
          sock.write(Buffer.concat([Buffer.from('HTTP/1.1 200 Connection established\r\n\r\nSSH-2.0-standin\r\n'), download]));
          sock.end();
        }),
      );
      try {
        const t = tunnel('example.test', '22', [], { [ENV.egressSocket]: path });
        t.child.stdin!.end(upload);
        const down = await t.stdout;
        assert.equal(await t.exited, 0, t.stderr());
        assert.deepEqual(heads, ['CONNECT example.test:22 HTTP/1.1\r\nHost: example.test:22']);
        assert.ok(down.ended);
        assert.ok(down.data.equals(Buffer.concat([Buffer.from('SSH-2.0-standin\r\n'), download])), `stdout got ${down.data.length} bytes`);
        const got = await up!;
        assert.ok(got.ended, 'stdin’s end did not reach the proxy');
        assert.ok(got.data.equals(upload), `the proxy got ${got.data.length} bytes, not the ${upload.length} sent`);
        assert.equal(t.stderr(), '');
      } finally {
        await closeServer(server);
      }
    });

    it(
      'passes a half-close each way: stdin’s end still gets the answer; the proxy’s end closes stdout while stdin goes on',
      { timeout: 20_000 },
      async () => {
        const path = join(tempDir(), EGRESS.socket);
        const late: Array<Promise<{ data: Buffer; ended: boolean }>> = [];
        const server = await standIn(path, (sock) =>
          onConnect(sock, (head, rest) => {
            sock.write('HTTP/1.1 200 Connection established\r\n\r\n');
            const got = collectAfter(sock, rest);
            if (head.startsWith('CONNECT first.test:')) {
              sock.end('first ');
              late.push(got);
            } else {
              void got.then(({ data }) => sock.end(`answer to ${data.toString()}`));
            }
          }),
        );
        try {
          const q = tunnel('question.test', '22', ['--socket', path]);
          q.child.stdin!.end('question');
          assert.equal((await q.stdout).data.toString(), 'answer to question');
          assert.equal(await q.exited, 0, q.stderr());

          const f = tunnel('first.test', '22', ['--socket', path]);
          const out = await f.stdout;
          assert.equal(out.data.toString(), 'first ');
          assert.ok(out.ended, 'the proxy’s end did not close stdout');
          assert.equal(f.child.exitCode, null, 'it left before stdin ended');
          f.child.stdin!.end('and after the end');
          assert.equal(await f.exited, 0, f.stderr());
          const got = await late[0];
          assert.equal(got.data.toString(), 'and after the end');
          assert.ok(got.ended);
        } finally {
          await closeServer(server);
        }
      },
    );

    it(
      'on a refusal prints the status line and the policy’s sentence, control characters removed, and exits 255',
      { timeout: 20_000 },
      async () => {
        const path = join(tempDir(), EGRESS.socket);
        const sentence = 'Toolbox egress policy (allowlist) refused example.test:22: no rule allows it. Allow it from VS Code.';
        const server = await standIn(path, (sock) =>
          onConnect(sock, () => sock.end(textResponse(403, `${sentence}\x1b[2J\r\x07`, { 'X-Toolbox-Egress': 'denied' }))),
        );
        try {
          const t = tunnel('example.test', '22', ['--socket', path]);
          t.child.stdin!.end();
          assert.equal(await t.exited, 255);
          assert.equal((await t.stdout).data.length, 0);
          assert.match(t.stderr(), /^toolbox-egress: the egress proxy refused example\.test:22: HTTP\/1\.1 403 Forbidden\n/);
          assert.ok(t.stderr().includes(`\n${sentence}[2J\n`), t.stderr());
          const controls = [...t.stderr()].filter((ch) => (ch < ' ' && ch !== '\n') || ch === '\x7f');
          assert.deepEqual(controls, [], 'control characters reached stderr');
        } finally {
          await closeServer(server);
        }
      },
    );

    it('refuses a host or port that could write a header before anything is sent', { timeout: 30_000 }, async () => {
      const path = join(tempDir(), EGRESS.socket);
      let connections = 0;
      const server = await standIn(path, (sock) => {
        connections += 1;
        sock.end('HTTP/1.1 200 Connection established\r\n\r\n');
      });
      try {
        const bad: Array<[string, string]> = [
          ['example.test:22 HTTP/1.1\r\nX-Injected: 1\r\n\r\nGET', '22'],
          ['example.test\r\nHost: evil.test', '22'],
          ['example .test', '22'],
          ['example.test\n', '22'],
          ['', '22'],
          ['a'.repeat(254), '22'],
          ['user@example.test', '22'],
          ['example.test/path', '22'],
          ['example.test', '0'],
          ['example.test', '65536'],
          ['example.test', '+22'],
          ['example.test', '22\r\nX: 1'],
        ];
        for (const [host, port] of bad) {
          const t = tunnel(host, port, ['--socket', path]);
          t.child.stdin!.end();
          assert.equal(await t.exited, 255, `${JSON.stringify([host, port])}: ${t.stderr()}`);
          assert.match(t.stderr(), /^toolbox-egress: no connection made: /, JSON.stringify([host, port]));
          assert.doesNotMatch(t.stderr().trimEnd(), /[\r\n]/, 'the refusal is one line');
        }
        assert.equal(connections, 0, 'the proxy was reached');
      } finally {
        await closeServer(server);
      }
    });

    it('brackets an IPv6 address, and takes a 253-character name', { timeout: 20_000 }, async () => {
      const path = join(tempDir(), EGRESS.socket);
      const lines: string[] = [];
      const server = await standIn(path, (sock) =>
        onConnect(sock, (head) => {
          lines.push(head.split('\r\n')[0]);
          sock.end(textResponse(403, 'no'));
        }),
      );
      const long = `${'a'.repeat(63)}.${'b'.repeat(63)}.${'c'.repeat(63)}.${'d'.repeat(61)}`;
      try {
        for (const host of ['::1', '[2001:db8::1]', long]) {
          const t = tunnel(host, '2222', ['--socket', path]);
          t.child.stdin!.end();
          assert.equal(await t.exited, 255);
        }
        assert.deepEqual(lines, ['CONNECT [::1]:2222 HTTP/1.1', 'CONNECT [2001:db8::1]:2222 HTTP/1.1', `CONNECT ${long}:2222 HTTP/1.1`]);
      } finally {
        await closeServer(server);
      }
    });

    it('gives up on a proxy that does not answer, or is not there, with a sentence and 255', { timeout: 20_000 }, async () => {
      const path = join(tempDir(), EGRESS.socket);
      const server = await standIn(path, (sock) => sock.on('error', () => undefined));
      try {
        const silent = tunnel('example.test', '22', ['--socket', path, '--answer-wait', '0.5']);
        assert.equal(await silent.exited, 255);
        assert.match(silent.stderr(), /the egress proxy did not answer about example\.test:22 within 0\.5 s/);
      } finally {
        await closeServer(server);
      }
      const missing = tunnel('example.test', '22', ['--socket', join(tempDir(), 'none.sock'), '--connect-wait', '0.2']);
      assert.equal(await missing.exited, 255);
      assert.match(missing.stderr(), /cannot reach the egress proxy at .*none\.sock: No such file or directory/);
    });
  },
);
