/**
 * ssh:// engines, reached as the docker CLI reaches them: an SSH connection to the host, and per
 * HTTP connection one channel running `docker system dial-stdio` there. One SSH connection serves
 * every request of a client (dockerode's own ssh transport makes a new one per request).
 *
 * Authentication is the CLI's (it runs ssh): ssh-agent through SSH_AUTH_SOCK, then the user's keys
 * (IdentityFile from ~/.ssh/config for the host, else ~/.ssh/id_ed25519, id_ecdsa, id_rsa). The
 * host key is checked against ~/.ssh/known_hosts and /etc/ssh/ssh_known_hosts; an unknown or
 * changed key is refused with what to do, never trusted silently.
 *
 * The parsing (known_hosts, ~/.ssh/config, the messages) is pure and unit-tested
 * (test/unit/engine-ssh.test.ts); the transport is exercised against a loopback sshd
 * (test/engine/remote.test.ts).
 */
import { createHmac } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import type { Agent as HttpAgent } from 'node:http';
import { join } from 'node:path';
import type { Duplex } from 'node:stream';

/** One line of a known_hosts file. */
export interface KnownHost {
  file: string;
  /** 1-based line number, for the message that names it. */
  line: number;
  marker?: 'revoked' | 'cert-authority';
  /** The host field as written: `host,alias`, `[host]:2222`, or hashed `|1|salt|hash`. */
  hosts: string;
  keyType: string;
  /** The key blob, base64 as written. */
  key: string;
}

/** Reads known_hosts text: comments, blank and malformed lines are skipped. Pure. */
export function parseKnownHosts(text: string, file: string): KnownHost[] {
  const out: KnownHost[] = [];
  const lines = text.split(/\r?\n/);
  for (let i = 0; i < lines.length && i < 100_000; i++) {
    const trimmed = lines[i]!.trim();
    if (trimmed === '' || trimmed.startsWith('#')) continue;
    const fields = trimmed.split(/\s+/);
    let marker: KnownHost['marker'];
    if (fields[0] === '@revoked' || fields[0] === '@cert-authority') {
      marker = fields[0] === '@revoked' ? 'revoked' : 'cert-authority';
      fields.shift();
    }
    const [hosts, keyType, key] = fields;
    if (!hosts || !keyType || !key) continue;
    out.push({ file, line: i + 1, ...(marker ? { marker } : {}), hosts, keyType, key });
  }
  return out;
}

/** How ssh writes a host in known_hosts: `host` on port 22, `[host]:port` otherwise. */
export function knownHostsName(host: string, port: number): string {
  return port === 22 ? host : `[${host}]:${port}`;
}

function globMatches(pattern: string, text: string): boolean {
  const re = new RegExp(
    `^${pattern
      .replace(/[.+^${}()|[\]\\]/g, '\\$&')
      .replace(/\*/g, '.*')
      .replace(/\?/g, '.')}$`,
    'i',
  );
  return re.test(text);
}

/**
 * ssh's pattern lists (known_hosts host fields, `Host` lines): some pattern names `text` and no
 * `!pattern` does.
 */
function patternsMatch(patterns: readonly string[], text: string): boolean {
  let matched = false;
  for (const raw of patterns) {
    const negated = raw.startsWith('!');
    const pattern = negated ? raw.slice(1) : raw;
    if (pattern === '' || !globMatches(pattern, text)) continue;
    if (negated) return false;
    matched = true;
  }
  return matched;
}

/** Whether a known_hosts host field (hashed, or patterns with `!` negation) names the host. Pure. */
export function hostFieldMatches(hosts: string, host: string, port: number): boolean {
  const name = knownHostsName(host, port);
  if (hosts.startsWith('|1|')) {
    const [, , salt, hash] = hosts.split('|');
    if (!salt || !hash) return false;
    const mac = createHmac('sha1', Buffer.from(salt, 'base64')).update(name).digest('base64');
    return mac === hash;
  }
  return patternsMatch(hosts.split(','), name);
}

export type HostKeyCheck =
  { kind: 'known'; entry: KnownHost } | { kind: 'unknown' } | { kind: 'changed'; entry: KnownHost } | { kind: 'revoked'; entry: KnownHost };

/** The key type inside an SSH public key blob (its first length-prefixed string). Pure. */
export function keyTypeOf(blob: Buffer): string | undefined {
  if (blob.length < 4) return undefined;
  const len = blob.readUInt32BE(0);
  if (len === 0 || len > 64 || blob.length < 4 + len) return undefined;
  return blob.subarray(4, 4 + len).toString('latin1');
}

/** Judges the server's host key against the known_hosts entries, as ssh's StrictHostKeyChecking=yes does. Pure. */
export function checkHostKey(entries: readonly KnownHost[], host: string, port: number, blob: Buffer): HostKeyCheck {
  const type = keyTypeOf(blob);
  const key = blob.toString('base64');
  const mine = entries.filter((e) => e.marker !== 'cert-authority' && hostFieldMatches(e.hosts, host, port));
  const revoked = entries.find((e) => e.marker === 'revoked' && e.key === key);
  if (revoked) return { kind: 'revoked', entry: revoked };
  const same = mine.find((e) => e.marker === undefined && e.keyType === type && e.key === key);
  if (same) return { kind: 'known', entry: same };
  // ssh calls a key "changed" only when a key of the same type is recorded for the host.
  const other = mine.find((e) => e.marker === undefined && e.keyType === type);
  if (other) return { kind: 'changed', entry: other };
  return { kind: 'unknown' };
}

/** The host key algorithms to offer first: those known_hosts holds for this host (as ssh does). Pure. */
export function preferredHostKeyAlgorithms(entries: readonly KnownHost[], host: string, port: number): string[] {
  const types = entries.filter((e) => e.marker === undefined && hostFieldMatches(e.hosts, host, port)).map((e) => e.keyType);
  const out: string[] = [];
  for (const t of types) {
    const algos = t === 'ssh-rsa' ? ['rsa-sha2-512', 'rsa-sha2-256', 'ssh-rsa'] : [t];
    for (const a of algos) if (!out.includes(a)) out.push(a);
  }
  return out;
}

/** What ~/.ssh/config says for one host alias (only the keys Toolbox reads). */
export interface SshHostConfig {
  hostName?: string;
  user?: string;
  port?: number;
  identityFiles: string[];
}

/**
 * The HostName, User, Port and IdentityFile that ~/.ssh/config gives a host alias, first value
 * wins as in ssh. `Host` patterns (with `*`, `?`, `!`) are matched; `Match` blocks and `Include`
 * are not followed (their settings are not applied). Pure.
 */
export function sshConfigFor(text: string, alias: string): SshHostConfig {
  const out: SshHostConfig = { identityFiles: [] };
  let applies = true;
  for (const rawLine of text.split(/\r?\n/).slice(0, 10_000)) {
    const line = rawLine.trim();
    if (line === '' || line.startsWith('#')) continue;
    const m = /^(\S+?)(?:\s*=\s*|\s+)(.*)$/.exec(line);
    if (!m) continue;
    const keyword = m[1]!.toLowerCase();
    const value = m[2]!.trim().replace(/^"(.*)"$/, '$1');
    if (keyword === 'host') {
      applies = patternsMatch(value.split(/\s+/), alias);
      continue;
    }
    if (keyword === 'match') {
      applies = false;
      continue;
    }
    if (!applies) continue;
    if (keyword === 'hostname' && out.hostName === undefined) out.hostName = value;
    else if (keyword === 'user' && out.user === undefined) out.user = value;
    else if (keyword === 'port' && out.port === undefined) {
      const port = Number(value);
      if (Number.isInteger(port) && port > 0 && port < 65536) out.port = port;
    } else if (keyword === 'identityfile' && value !== '' && value.toLowerCase() !== 'none') out.identityFiles.push(value);
  }
  return out;
}

/** `~/`, `%d` (home), `%u` (local user), `%h` (host) and `%%` in an IdentityFile; undefined for other tokens. Pure. */
export function expandIdentityFile(path: string, ctx: { home: string; localUser: string; host: string }): string | undefined {
  let unknown = false;
  const expanded = path.replace(/%(.)/g, (_all, t: string) => {
    if (t === 'd') return ctx.home;
    if (t === 'u') return ctx.localUser;
    if (t === 'h') return ctx.host;
    if (t === '%') return '%';
    unknown = true;
    return '';
  });
  if (unknown) return undefined;
  if (expanded === '~') return ctx.home;
  if (expanded.startsWith('~/')) return join(ctx.home, expanded.slice(2));
  return expanded.startsWith('/') ? expanded : join(ctx.home, expanded);
}

/** The keys the docker CLI's ssh offers when the config names none (the common ones). */
export const DEFAULT_IDENTITY_FILES = ['id_ed25519', 'id_ecdsa', 'id_rsa'] as const;

/** Where an ssh:// endpoint leads, after ~/.ssh/config. */
export interface SshTarget {
  /** The host as the endpoint names it (the alias ~/.ssh/config is asked about). */
  alias: string;
  /** The host to connect to (HostName, else the alias). */
  host: string;
  port: number;
  username: string;
  /** Key files to offer, in order (config IdentityFile, else the defaults). */
  identityFiles: string[];
}

/** Combines the endpoint with ~/.ssh/config: the endpoint's user and port win, as for ssh. Pure. */
export function sshTarget(
  endpoint: { host: string; port?: number; username?: string },
  config: SshHostConfig,
  ctx: { home: string; localUser: string },
): SshTarget {
  const host = config.hostName ? config.hostName.replace(/%h/g, endpoint.host) : endpoint.host;
  const files = config.identityFiles.length
    ? config.identityFiles.map((f) => expandIdentityFile(f, { ...ctx, host })).filter((f): f is string => f !== undefined)
    : DEFAULT_IDENTITY_FILES.map((f) => join(ctx.home, '.ssh', f));
  return {
    alias: endpoint.host,
    host,
    port: endpoint.port ?? config.port ?? 22,
    username: endpoint.username ?? config.user ?? ctx.localUser,
    identityFiles: files,
  };
}

/** A failure on the SSH leg of an ssh:// endpoint; the message says what happened and what to do. */
export class SshError extends Error {
  constructor(
    message: string,
    /** A few words for lists of endpoints (Select Engine). */
    readonly short: string,
    readonly code?: string,
  ) {
    super(message);
  }
}

function tilde(path: string, home: string): string {
  return path.startsWith(`${home}/`) ? `~/${path.slice(home.length + 1)}` : path;
}

/** How to connect once by hand with ssh, accepting the key: `ssh -p 2222 root@host`. */
export function sshCommandFor(t: SshTarget): string {
  return `ssh ${t.port !== 22 ? `-p ${t.port} ` : ''}${t.username}@${t.alias}`;
}

/** The refusal for a host key that is not accepted. Pure. */
export function hostKeyMessage(check: Exclude<HostKeyCheck, { kind: 'known' }>, t: SshTarget, home: string): SshError {
  const where = t.port === 22 ? t.host : `${t.host} port ${t.port}`;
  if (check.kind === 'unknown') {
    return new SshError(
      `the SSH host ${where} is not in ~/.ssh/known_hosts, so its identity cannot be checked. ` +
        `Connect once in a terminal with ${sshCommandFor(t)}, check the fingerprint and accept it, then try again.`,
      'unknown SSH host key',
    );
  }
  const file = `${tilde(check.entry.file, home)} line ${check.entry.line}`;
  if (check.kind === 'revoked') {
    return new SshError(
      `the SSH host key of ${where} is marked as revoked in ${file}, so the connection was refused. Ask the host's administrator for its current key.`,
      'revoked SSH host key',
    );
  }
  return new SshError(
    `the SSH host key of ${where} is not the one recorded in ${file}: the host was reinstalled, or someone is intercepting the connection. ` +
      `If you know why it changed, remove the old key with ssh-keygen -R ${knownHostsName(t.host, t.port)}, then connect once with ${sshCommandFor(t)} to accept the new one.`,
    'SSH host key changed',
  );
}

export interface SshTransportOptions {
  endpoint: { host: string; port?: number; username?: string };
  home: string;
  localUser: string;
  env: Readonly<Record<string, string | undefined>>;
  /** The whole SSH handshake (TCP, key exchange, authentication) must finish within this. */
  timeoutMs: number;
  /** known_hosts files; ~/.ssh/known_hosts and /etc/ssh/ssh_known_hosts unless a test gives its own. */
  knownHostsFiles?: string[];
}

/** The command the far host runs per connection, as the docker CLI's ssh helper. */
export const DIAL_STDIO = 'docker system dial-stdio';

/** An http.Agent whose connections are `docker system dial-stdio` channels of one SSH connection. */
export interface SshTransport {
  agent: HttpAgent;
  target: SshTarget;
  /**
   * Ends the SSH connection (a later request opens a new one). `whenIdle`: idle keep-alive
   * channels now, the connection once the channels in use (a terminal's exec, an event stream)
   * have ended, so switching engines does not cut a running shell.
   */
  close(options?: { whenIdle?: boolean }): void;
}

interface SshClientLike {
  on(event: string, listener: (...args: unknown[]) => void): SshClientLike;
  once(event: string, listener: (...args: unknown[]) => void): SshClientLike;
  connect(config: Record<string, unknown>): void;
  exec(cmd: string, cb: (err: Error | undefined, channel: Duplex & { stderr: NodeJS.ReadableStream }) => void): boolean;
  end(): void;
}

/** Reads ~/.ssh/config (if any) and the known_hosts files, and builds the transport. */
export async function sshTransport(opts: SshTransportOptions): Promise<SshTransport> {
  const { home } = opts;
  const configText = await readFile(join(home, '.ssh', 'config'), 'utf8').catch(() => '');
  const target = sshTarget(opts.endpoint, sshConfigFor(configText, opts.endpoint.host), { home, localUser: opts.localUser });
  const files = opts.knownHostsFiles ?? [join(home, '.ssh', 'known_hosts'), '/etc/ssh/ssh_known_hosts'];
  const known = (await Promise.all(files.map(async (f) => parseKnownHosts(await readFile(f, 'utf8').catch(() => ''), f)))).flat();
  /* eslint-disable @typescript-eslint/no-require-imports */
  const ssh2 = require('ssh2') as typeof import('ssh2');
  const http = require('node:http') as typeof import('node:http');
  const net = require('node:net') as typeof import('node:net');
  /* eslint-enable @typescript-eslint/no-require-imports */

  // What to offer: the agent, then every key file that exists and needs no passphrase.
  const auth: Record<string, unknown>[] = [];
  const agentSock = opts.env.SSH_AUTH_SOCK?.trim();
  if (agentSock) auth.push({ type: 'agent', username: target.username, agent: agentSock });
  const skipped: string[] = [];
  for (const file of target.identityFiles) {
    const bytes = await readFile(file).catch(() => undefined);
    if (!bytes) continue;
    const parsed = ssh2.utils.parseKey(bytes);
    if (parsed instanceof Error) {
      skipped.push(
        `${tilde(file, home)} (${/passphrase|encrypted/i.test(parsed.message) ? 'needs a passphrase' : 'not a key ssh can read'})`,
      );
      continue;
    }
    auth.push({ type: 'publickey', username: target.username, key: bytes });
  }
  const noKeyAdvice =
    `Load your key into ssh-agent (ssh-add), or create one with ssh-keygen and add its .pub line to ~/.ssh/authorized_keys on ${target.host}.` +
    (skipped.length ? ` Skipped: ${skipped.join(', ')}; a key with a passphrase works through ssh-agent.` : '');

  let client: Promise<SshClientLike> | undefined;
  let tcp: import('node:net').Socket | undefined;
  /** Channels a request is using (not idle in the keep-alive pool): while any, the connection holds the process. */
  const busy = new Set<Duplex>();
  let opening = 0;
  const holdsProcess = () => {
    if (busy.size > 0 || opening > 0) tcp?.ref();
    else tcp?.unref();
  };
  let live: SshClientLike | undefined;
  const connect = (): Promise<SshClientLike> => {
    if (auth.length === 0) {
      return Promise.reject(
        new SshError(
          `there is no SSH key to offer to ${target.host}: SSH_AUTH_SOCK is not set and none of ${target.identityFiles.map((f) => tilde(f, home)).join(', ')} can be used. ${noKeyAdvice}`,
          'no SSH key to offer',
        ),
      );
    }
    return new Promise((resolve, reject) => {
      const conn = new ssh2.Client() as unknown as SshClientLike;
      // Our own TCP socket, so an SSH connection with only idle channels can let the process exit
      // (as node's own keep-alive sockets do): see holdsProcess below.
      const sock = net.connect({ host: target.host, port: target.port });
      tcp = sock;
      let hostKeyProblem: SshError | undefined;
      let settled = false;
      conn.once('ready', () => {
        settled = true;
        live = conn;
        // Until a channel is asked for (in the same tick, by the request waiting for this), nothing holds the process.
        holdsProcess();
        resolve(conn);
      });
      conn.on('error', (...args: unknown[]) => {
        const err = args[0] as Error & { level?: string; code?: string };
        if (settled) return;
        settled = true;
        reject(hostKeyProblem ?? sshConnectError(err, target, noKeyAdvice));
      });
      conn.on('close', () => {
        if (live === conn) live = undefined;
        client = undefined;
        if (!settled) {
          settled = true;
          reject(
            hostKeyProblem ??
              new SshError(
                `the SSH connection to ${target.host} closed during the handshake. Check that you can connect with ${sshCommandFor(target)}.`,
                'SSH connection closed',
              ),
          );
        }
      });
      const prefer = preferredHostKeyAlgorithms(known, target.host, target.port);
      conn.connect({
        sock,
        host: target.host,
        port: target.port,
        username: target.username,
        readyTimeout: opts.timeoutMs,
        keepaliveInterval: 15_000,
        authHandler: auth,
        ...(prefer.length ? { algorithms: { serverHostKey: { prepend: prefer } } } : {}),
        hostVerifier: (key: Buffer) => {
          const check = checkHostKey(known, target.host, target.port, key);
          if (check.kind === 'known') return true;
          hostKeyProblem = hostKeyMessage(check, target, home);
          return false;
        },
      });
    });
  };

  // Keep-alive: sequential requests reuse a channel instead of starting dial-stdio again (~150 ms each).
  const agent = new http.Agent({ keepAlive: true, maxFreeSockets: 2 });
  // http.Agent's own hook: returning nothing and calling back later is how node expects it to be async.
  (agent as unknown as { createConnection: unknown }).createConnection = (_o: unknown, cb: (err: Error | null, s?: Duplex) => void) => {
    (client ??= connect()).then(
      (conn) => {
        try {
          opening++;
          holdsProcess();
          conn.exec(DIAL_STDIO, (err, channel) => {
            opening--;
            holdsProcess();
            if (err) {
              cb(new SshError(`${target.host} refused to run ${DIAL_STDIO} (${err.message}).`, 'SSH exec refused'));
              return;
            }
            inUse.add(channel);
            busy.add(channel);
            holdsProcess();
            const held = channel as unknown as Record<string, unknown>;
            // node's http.Agent unrefs a socket it keeps idle for reuse and refs it again on reuse.
            held.unref = () => {
              busy.delete(channel);
              holdsProcess();
              return channel;
            };
            held.ref = () => {
              busy.add(channel);
              holdsProcess();
              return channel;
            };
            channel.once('close', () => {
              busy.delete(channel);
              holdsProcess();
              inUse.delete(channel);
              if (ending && inUse.size === 0) endNow();
            });
            cb(null, dialChannel(channel, target));
          });
        } catch (err) {
          client = undefined;
          cb(err as Error);
        }
      },
      (err: Error) => {
        client = undefined;
        cb(err);
      },
    );
    return undefined;
  };
  const inUse = new Set<Duplex>();
  // After close(): no channel is kept for reuse, and the connection ends whenever none is in use
  // (a request made later, like a finished shell's exit code, opens one that ends the same way).
  let ending = false;
  const endNow = () => {
    const c = live;
    live = undefined;
    client = undefined;
    c?.end();
    agent.destroy();
  };
  agent.on('free', (socket: Duplex) => {
    if (ending) socket.destroy();
  });
  return {
    agent,
    target,
    close: (options) => {
      ending = true;
      if (!options?.whenIdle) return endNow();
      for (const list of Object.values(agent.freeSockets)) for (const idle of list ?? []) idle.destroy();
      if (inUse.size === 0) endNow();
    },
  };
}

/**
 * The channel as the socket node's http client expects (the few socket methods it may call), and
 * a failing dial-stdio (no docker CLI there, no access to its engine) as an error with its words.
 */
function dialChannel(channel: Duplex & { stderr: NodeJS.ReadableStream }, target: SshTarget): Duplex {
  const socketLike = channel as unknown as Record<string, unknown>;
  for (const m of ['setKeepAlive', 'setNoDelay', 'setTimeout', 'ref', 'unref']) {
    if (typeof socketLike[m] !== 'function') socketLike[m] = () => channel;
  }
  let stderr = '';
  channel.stderr.on('data', (d: Buffer) => {
    if (stderr.length < 2048) stderr += d.toString('utf8');
  });
  // OpenSSH sends the end of output before the exit status: hold the end until the status says
  // whether it is a failure (else node's http client reports only "socket hang up").
  const push = channel.push.bind(channel);
  let exited = false;
  let endHeld = false;
  socketLike.push = (chunk: unknown, encoding?: BufferEncoding) => {
    if (chunk === null && !exited) {
      endHeld = true;
      return false;
    }
    return push(chunk, encoding);
  };
  const release = () => {
    exited = true;
    if (endHeld) push(null);
  };
  channel.on('close', release);
  channel.on('exit', (code: unknown) => {
    if (typeof code !== 'number' || code === 0) {
      release();
      return;
    }
    exited = true;
    const said = stderr
      .trim()
      .split('\n')
      .slice(-2)
      .join(' ')
      .slice(0, 300)
      .replace(/[.\s]+$/, '');
    const advice =
      code === 127
        ? `the docker command is not installed there (the Docker CLI is needed on that host for ssh:// endpoints). Install it on ${target.host}.`
        : `it said: ${said || `exit code ${code}`}. Check that ${target.username} may use Docker on ${target.host} (for example with docker info there).`;
    // ssh2's Channel.destroy() takes no error: say it as the socket's error to the request using
    // it (an idle keep-alive channel has no listener, and an unheard 'error' would throw), then close.
    if (channel.listenerCount('error') > 0) {
      channel.emit('error', new SshError(`${DIAL_STDIO} failed on ${target.host}: ${advice}`, `${DIAL_STDIO} failed`));
    }
    channel.destroy();
  });
  return channel;
}

function sshConnectError(err: Error & { level?: string; code?: string }, t: SshTarget, noKeyAdvice: string): SshError {
  const where = t.port === 22 ? t.host : `${t.host} port ${t.port}`;
  if (err.level === 'client-authentication') {
    return new SshError(
      `the SSH server at ${where} accepted none of the keys offered for the user ${t.username}. ${noKeyAdvice}`,
      'SSH key not accepted',
      err.code,
    );
  }
  if (err.level === 'client-timeout') {
    return new SshError(
      `the SSH handshake with ${where} did not finish in time. Check that ${t.host} is reachable and that ${sshCommandFor(t)} works.`,
      'SSH handshake timed out',
      err.code,
    );
  }
  switch (err.code) {
    case 'ECONNREFUSED':
      return new SshError(
        `nothing accepts SSH connections at ${where} (connection refused). Check the host and port in the endpoint.`,
        'SSH connection refused',
        err.code,
      );
    case 'ENOTFOUND':
    case 'EAI_AGAIN':
      return new SshError(
        `the host name ${t.host} could not be resolved. Check the endpoint.`,
        `the host name ${t.host} could not be resolved`,
        err.code,
      );
    case 'EHOSTUNREACH':
    case 'ENETUNREACH':
    case 'ETIMEDOUT':
      return new SshError(
        `${where} cannot be reached from this machine. Check the network, or the endpoint.`,
        'host unreachable',
        err.code,
      );
    default:
      return new SshError(
        `the SSH connection to ${where} failed (${err.message.replace(/[.\s]+$/, '')}). Check that ${sshCommandFor(t)} works.`,
        'SSH connection failed',
        err.code,
      );
  }
}
