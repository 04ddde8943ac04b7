/**
 * Finding and reaching the Docker engine. The endpoint is chosen like the docker CLI chooses it
 * (setting → DOCKER_HOST → current context → the well-known sockets in order), by reading files,
 * never by running the CLI (docs/decisions/0033-engine-endpoint-probe-order.md). The choice is
 * pure and unit-tested, the file reads and the ping are the thin I/O around it. An engine older
 * than MIN_API_VERSION is refused at connect (docs/decisions/0034-engine-api-floor.md).
 */
import { createHash } from 'node:crypto';
import { readFile, stat } from 'node:fs/promises';
import { homedir, userInfo } from 'node:os';
import { join } from 'node:path';
import type Docker from 'dockerode';
import { identityFromVersion, pingUnixSocket, podmanRootless, rememberEngine, type EngineIdentity } from './compat';
import { clause, engineMessage, statusOf } from './errors';
import { SshError, sshTransport } from '../host/ssh';
import { MIN_API_VERSION } from '../contract/constants';

/** The oldest Docker Engine API the extension speaks (contract/constants.ts; docs/decisions/0034-engine-api-floor.md). */
export { MIN_API_VERSION };

/**
 * Where an endpoint came from. `default` is /var/run/docker.sock (or the Windows pipe);
 * `well-known <label>` is one of the other sockets tried when nothing is configured.
 */
export type EndpointSource = 'setting' | 'DOCKER_HOST' | `context ${string}` | 'default' | `well-known ${string}`;

/** The subset of dockerode's constructor options we set. */
export interface DockerodeOptions {
  socketPath?: string;
  /** Explicitly undefined for sockets, so a DOCKER_HOST the modem reads itself cannot win. */
  host?: string;
  port?: number;
  protocol?: 'http' | 'https' | 'ssh';
  username?: string;
}

export interface ResolvedEndpoint {
  /** The endpoint as a URL (`unix:///var/run/docker.sock`, `tcp://host:2375`, …). */
  endpoint: string;
  source: EndpointSource;
  options: DockerodeOptions;
  /** Directory holding ca.pem / cert.pem / key.pem when the endpoint speaks TLS. */
  tlsDir?: string;
  /** The context says `SkipTLSVerify`: the server certificate is not checked. */
  skipTlsVerify?: boolean;
}

export interface ResolveEndpointInput {
  /** `toolbox.dockerHost`; empty or whitespace means unset. */
  setting?: string;
  env: Readonly<Record<string, string | undefined>>;
  /** Text of `~/.docker/config.json`, when it exists. */
  dockerConfigText?: string;
  /** Text of the current context's `meta.json`, when it exists. */
  contextMetaText?: string;
  /** The context's TLS directory (`contexts/tls/<sha256>/docker`) when it holds any .pem file. */
  contextTlsDir?: string;
  /** The docker config directory (DOCKER_CONFIG or ~/.docker): DOCKER_CERT_PATH's default. */
  dockerConfigDir?: string;
  platform: NodeJS.Platform;
}

export const DEFAULT_UNIX_ENDPOINT = 'unix:///var/run/docker.sock';
export const DEFAULT_NPIPE_ENDPOINT = 'npipe:////./pipe/docker_engine';
const DEFAULT_TCP_PORT = 2375;
const DEFAULT_TLS_PORT = 2376;

/** The context the docker CLI would use: DOCKER_CONTEXT, else `currentContext` in config.json. */
export function currentContextName(
  env: Readonly<Record<string, string | undefined>>,
  dockerConfigText: string | undefined,
): string | undefined {
  const fromEnv = env.DOCKER_CONTEXT?.trim();
  if (fromEnv) return fromEnv;
  if (!dockerConfigText) return undefined;
  try {
    const parsed = JSON.parse(dockerConfigText) as { currentContext?: unknown };
    return typeof parsed.currentContext === 'string' && parsed.currentContext.trim() !== '' ? parsed.currentContext.trim() : undefined;
  } catch {
    // An unreadable config.json does not stop the CLI either: it falls back to the default.
    return undefined;
  }
}

/** Where the docker CLI keeps a context's metadata: `contexts/meta/<sha256(name)>/meta.json`. */
export function contextMetaPath(dockerConfigDir: string, name: string): string {
  const digest = createHash('sha256').update(name).digest('hex');
  return join(dockerConfigDir, 'contexts', 'meta', digest, 'meta.json');
}

/** Where the docker CLI keeps a context's TLS files: `contexts/tls/<sha256(name)>/docker`. */
export function contextTlsPath(dockerConfigDir: string, name: string): string {
  const digest = createHash('sha256').update(name).digest('hex');
  return join(dockerConfigDir, 'contexts', 'tls', digest, 'docker');
}

/** Decides which endpoint to use and how dockerode should reach it. Pure. */
export function resolveEndpoint(input: ResolveEndpointInput): ResolvedEndpoint {
  const { env, platform } = input;
  const certDefault = input.dockerConfigDir;
  const setting = input.setting?.trim();
  if (setting) return withOptions(setting, 'setting', env, certDefault);
  const dockerHost = env.DOCKER_HOST?.trim();
  if (dockerHost) return withOptions(dockerHost, 'DOCKER_HOST', env, certDefault);
  const context = currentContextName(env, input.dockerConfigText);
  if (context && context !== 'default') {
    const { host, skipTlsVerify } = contextEndpoint(context, input.contextMetaText);
    // A context carries its own TLS material; DOCKER_TLS_VERIFY and DOCKER_CERT_PATH do not apply.
    const resolved = withOptions(host, `context ${context}`, {}, undefined, input.contextTlsDir !== undefined);
    if (resolved.options.protocol === 'https') {
      if (input.contextTlsDir) resolved.tlsDir = input.contextTlsDir;
      if (skipTlsVerify) resolved.skipTlsVerify = true;
    }
    return resolved;
  }
  const fallback = platform === 'win32' ? DEFAULT_NPIPE_ENDPOINT : DEFAULT_UNIX_ENDPOINT;
  return withOptions(fallback, 'default', env);
}

export interface WellKnownSocket {
  /** Who puts a socket there: `rootless Docker`, `Colima`, … */
  label: string;
  endpoint: string;
}

/**
 * The sockets tried, in order, when nothing is configured (no setting, no DOCKER_HOST, no
 * context other than "default"): docs/decisions/0033-engine-endpoint-probe-order.md. Pure.
 */
export function wellKnownSockets(
  home: string,
  env: Readonly<Record<string, string | undefined>>,
  platform: NodeJS.Platform,
): WellKnownSocket[] {
  if (platform === 'win32') return [{ label: 'Docker', endpoint: DEFAULT_NPIPE_ENDPOINT }];
  const runtime = env.XDG_RUNTIME_DIR?.trim();
  const list: WellKnownSocket[] = [{ label: 'Docker', endpoint: DEFAULT_UNIX_ENDPOINT }];
  if (runtime) list.push({ label: 'rootless Docker', endpoint: `unix://${join(runtime, 'docker.sock')}` });
  list.push(
    { label: 'Colima', endpoint: `unix://${join(home, '.colima', 'default', 'docker.sock')}` },
    { label: 'Colima', endpoint: `unix://${join(home, '.colima', 'docker.sock')}` },
    { label: 'OrbStack', endpoint: `unix://${join(home, '.orbstack', 'run', 'docker.sock')}` },
    { label: 'Rancher Desktop', endpoint: `unix://${join(home, '.rd', 'docker.sock')}` },
  );
  if (runtime) list.push({ label: 'Podman', endpoint: `unix://${join(runtime, 'podman', 'podman.sock')}` });
  list.push({ label: 'Podman', endpoint: 'unix:///run/podman/podman.sock' });
  return list;
}

/** The well-known socket as a resolved endpoint; the first one keeps the source `default`. */
export function wellKnownEndpoint(socket: WellKnownSocket, index: number): ResolvedEndpoint {
  return withOptions(socket.endpoint, index === 0 ? 'default' : `well-known ${socket.label}`, {});
}

function contextEndpoint(name: string, metaText: string | undefined): { host: string; skipTlsVerify: boolean } {
  const fix = `Switch with \`docker context use default\`, or set toolbox.dockerHost.`;
  if (metaText === undefined) {
    throw new Error(`The current Docker context "${name}" has no metadata file, so its endpoint is unknown. ${fix}`);
  }
  let host: unknown;
  let skip: unknown;
  try {
    const meta = JSON.parse(metaText) as { Endpoints?: { docker?: { Host?: unknown; SkipTLSVerify?: unknown } } };
    host = meta.Endpoints?.docker?.Host;
    skip = meta.Endpoints?.docker?.SkipTLSVerify;
  } catch (err) {
    throw new Error(`The metadata of Docker context "${name}" is not valid JSON (${clause(engineMessage(err))}). ${fix}`, { cause: err });
  }
  if (typeof host !== 'string' || host.trim() === '') {
    throw new Error(`The Docker context "${name}" names no Docker endpoint (Endpoints.docker.Host is empty). ${fix}`);
  }
  return { host: host.trim(), skipTlsVerify: skip === true };
}

function withOptions(
  endpoint: string,
  source: EndpointSource,
  env: Readonly<Record<string, string | undefined>>,
  certDefault?: string,
  forceTls = false,
): ResolvedEndpoint {
  const lower = endpoint.toLowerCase();
  if (lower.startsWith('unix://')) {
    const socketPath = endpoint.slice('unix://'.length);
    if (socketPath === '') throw badEndpoint(endpoint, source, 'the unix:// endpoint has no socket path');
    return { endpoint, source, options: { socketPath, host: undefined } };
  }
  if (lower.startsWith('npipe://')) {
    const pipe = endpoint.slice('npipe://'.length);
    if (pipe === '') throw badEndpoint(endpoint, source, 'the npipe:// endpoint has no pipe path');
    return { endpoint, source, options: { socketPath: pipe, host: undefined } };
  }
  const withScheme = endpoint.includes('://') ? endpoint : `tcp://${endpoint}`;
  let url: URL;
  try {
    url = new URL(withScheme);
  } catch {
    throw badEndpoint(endpoint, source, 'it is not a URL');
  }
  const scheme = url.protocol.replace(/:$/, '');
  if (url.hostname === '') throw badEndpoint(endpoint, source, 'it names no host');
  if (scheme === 'ssh') {
    return {
      endpoint,
      source,
      options: {
        protocol: 'ssh',
        host: url.hostname,
        port: url.port ? Number(url.port) : 22,
        ...(url.username ? { username: decodeURIComponent(url.username) } : {}),
      },
    };
  }
  if (scheme !== 'tcp' && scheme !== 'http' && scheme !== 'https') {
    throw badEndpoint(endpoint, source, `the scheme "${scheme}" is not supported (use unix://, npipe://, tcp:// or ssh://)`);
  }
  const tlsVerify = env.DOCKER_TLS_VERIFY !== undefined && env.DOCKER_TLS_VERIFY !== '' && env.DOCKER_TLS_VERIFY !== '0';
  const port = url.port ? Number(url.port) : tlsVerify || scheme === 'https' ? DEFAULT_TLS_PORT : DEFAULT_TCP_PORT;
  const tls = scheme === 'https' || tlsVerify || forceTls || port === DEFAULT_TLS_PORT;
  const result: ResolvedEndpoint = {
    endpoint,
    source,
    options: { host: url.hostname, port, protocol: tls ? 'https' : 'http' },
  };
  // As the docker CLI: DOCKER_CERT_PATH, else the docker config directory (~/.docker).
  const certDir = env.DOCKER_CERT_PATH?.trim() || certDefault;
  if (tls && certDir) result.tlsDir = certDir;
  return result;
}

function badEndpoint(endpoint: string, source: EndpointSource, why: string): Error {
  return new Error(
    `The Docker endpoint "${endpoint}" (${describeSource(source)}) cannot be used: ${why}. ` +
      `Use a form like unix:///var/run/docker.sock or tcp://127.0.0.1:2375, or clear toolbox.dockerHost.`,
  );
}

export function describeSource(source: EndpointSource): string {
  if (source === 'setting') return 'from the toolbox.dockerHost setting';
  if (source === 'DOCKER_HOST') return 'from DOCKER_HOST';
  if (source === 'default') return 'the platform default';
  if (source.startsWith('well-known ')) return `the ${source.slice('well-known '.length)} socket`;
  return `from Docker ${source}`;
}

export interface ConnectOptions {
  /** `toolbox.dockerHost` as the user wrote it. */
  setting?: string;
  env?: Readonly<Record<string, string | undefined>>;
  home?: string;
  platform?: NodeJS.Platform;
  /** How long the first ping may take. */
  timeoutMs?: number;
  /** The sockets tried when nothing is configured; wellKnownSockets() unless a test substitutes its own. */
  wellKnown?: readonly WellKnownSocket[];
}

export interface EngineConnection {
  docker: Docker;
  endpoint: ResolvedEndpoint;
  /** Which engine answers the Docker Engine API there (docs/engines.md). */
  product: 'Docker' | 'Podman';
  /** The engine's version (`20.10.24`) and the API version it speaks. */
  version: string;
  apiVersion: string;
  /**
   * Ends what the client holds open (an ssh:// endpoint's SSH connection); a later call
   * reconnects. `whenIdle`: only once the streams in use (a terminal, the event feed) have ended.
   */
  close(options?: { whenIdle?: boolean }): void;
}

export const DEFAULT_CONNECT_TIMEOUT_MS = 4_000;
/** An ssh:// endpoint gets longer: TCP, key exchange, authentication, then the engine's answer. */
export const SSH_CONNECT_TIMEOUT_MS = 10_000;

function connectTimeout(endpoint: ResolvedEndpoint, given: number | undefined): number {
  return given ?? (endpoint.options.protocol === 'ssh' ? SSH_CONNECT_TIMEOUT_MS : DEFAULT_CONNECT_TIMEOUT_MS);
}

/** What the files say: one configured endpoint, or the well-known sockets to try in order. */
export interface EndpointPlan {
  configured?: ResolvedEndpoint;
  wellKnown: ResolvedEndpoint[];
}

/** Reads the docker config (and the current context's files) and decides what to try. */
export async function planEndpoints(opts: ConnectOptions = {}): Promise<EndpointPlan> {
  const env = opts.env ?? process.env;
  const platform = opts.platform ?? process.platform;
  const home = opts.home ?? homedir();
  const configDir = env.DOCKER_CONFIG?.trim() || join(home, '.docker');
  const needsContext = !opts.setting?.trim() && !env.DOCKER_HOST?.trim();
  const dockerConfigText = needsContext ? await readOptional(join(configDir, 'config.json')) : undefined;
  const context = needsContext ? currentContextName(env, dockerConfigText) : undefined;
  const named = context && context !== 'default' ? context : undefined;
  const contextMetaText = named ? await readOptional(contextMetaPath(configDir, named)) : undefined;
  const contextTlsDir = named ? await tlsDirIfAny(contextTlsPath(configDir, named)) : undefined;
  const endpoint = resolveEndpoint({
    setting: opts.setting,
    env,
    dockerConfigText,
    contextMetaText,
    contextTlsDir,
    dockerConfigDir: configDir,
    platform,
  });
  const wellKnown = (opts.wellKnown ?? wellKnownSockets(home, env, platform)).map(wellKnownEndpoint);
  return endpoint.source === 'default' ? { wellKnown } : { configured: endpoint, wellKnown };
}

/**
 * Resolves the endpoint, creates the client and asks the engine for its version. A configured
 * endpoint is the only one tried; with nothing configured, each well-known socket that exists is
 * asked in order and the first that answers wins. Any failure is one Error saying where we
 * knocked, why nobody answered, and what to do.
 */
export async function connectEngine(opts: ConnectOptions = {}): Promise<EngineConnection> {
  const plan = await planEndpoints(opts);
  const timeoutMs = opts.timeoutMs ?? DEFAULT_CONNECT_TIMEOUT_MS;
  const env = opts.env ?? process.env;
  const home = opts.home ?? homedir();
  if (plan.configured) return connectTo(plan.configured, connectTimeout(plan.configured, opts.timeoutMs), { env, home });
  const tried: { endpoint: ResolvedEndpoint; cause: unknown }[] = [];
  const windows = (opts.platform ?? process.platform) === 'win32';
  for (const endpoint of plan.wellKnown) {
    if (!windows && endpoint.options.socketPath) {
      try {
        await stat(endpoint.options.socketPath);
      } catch (err) {
        tried.push({ endpoint, cause: err });
        continue;
      }
    }
    try {
      return await connectTo(endpoint, timeoutMs, { env, home });
    } catch (err) {
      tried.push({ endpoint, cause: err instanceof EngineTooOldError ? err : ((err as { cause?: unknown }).cause ?? err) });
    }
  }
  throw noneReachable(tried);
}

/** An engine answered, but speaks an API older than MIN_API_VERSION. */
export class EngineTooOldError extends Error {
  constructor(
    message: string,
    /** The message without the endpoint and the advice, for lists of endpoints. */
    readonly short: string,
  ) {
    super(message);
  }
}

/** Refuses an API version older than MIN_API_VERSION (or one that is not a version). Pure. */
export function checkApiVersion(apiVersion: unknown, endpoint?: ResolvedEndpoint): void {
  const where = endpoint ? ` at ${endpoint.endpoint} (${describeSource(endpoint.source)})` : '';
  const fix = 'update Docker (20.10 or newer) or Podman (4.3 or newer), or point toolbox.dockerHost at a newer engine.';
  const shown = typeof apiVersion === 'string' ? apiVersion.slice(0, 32) : String(apiVersion).slice(0, 32);
  const parsed = typeof apiVersion === 'string' ? parseApiVersion(apiVersion) : undefined;
  if (!parsed) {
    const short = `the API version "${shown}" is not a Docker Engine API version`;
    throw new EngineTooOldError(
      `The engine${where} reports the API version "${shown}", which is not a Docker Engine API version: ${fix}`,
      short,
    );
  }
  const floor = parseApiVersion(MIN_API_VERSION)!;
  if (parsed[0] < floor[0] || (parsed[0] === floor[0] && parsed[1] < floor[1])) {
    const short = `Docker Engine API ${shown} is older than the oldest supported (${MIN_API_VERSION})`;
    throw new EngineTooOldError(`${short.replace(` ${shown} `, ` ${shown}${where} `)}: ${fix}`, short);
  }
}

function parseApiVersion(v: string): [number, number] | undefined {
  const m = /^(\d{1,4})\.(\d{1,4})$/.exec(v.trim());
  return m ? [Number(m[1]), Number(m[2])] : undefined;
}

/** The local user name, as ssh uses it when neither the endpoint nor ~/.ssh/config names one. */
function localUser(env: Readonly<Record<string, string | undefined>>): string {
  try {
    return userInfo().username;
  } catch {
    return env.USER ?? env.USERNAME ?? 'root';
  }
}

/** Creates the client for one endpoint and asks the engine for its version, within timeoutMs. */
async function connectTo(
  endpoint: ResolvedEndpoint,
  timeoutMs: number,
  where: { env: Readonly<Record<string, string | undefined>>; home: string },
): Promise<EngineConnection> {
  const options: Docker.DockerOptions = { ...endpoint.options };
  // Always explicit: docker-modem otherwise takes the protocol (and an ssh:// host) from DOCKER_HOST.
  if (options.socketPath !== undefined) options.protocol = 'http';
  let close: EngineConnection['close'] = () => undefined;
  if (endpoint.options.protocol === 'ssh') {
    // Our own transport (host/ssh.ts): one SSH connection, host key checked, the CLI's keys.
    // A port the URL does not name comes from ~/.ssh/config (else 22), as for ssh.
    const namedPort = URL.canParse(endpoint.endpoint) && new URL(endpoint.endpoint).port !== '';
    const transport = await sshTransport({
      endpoint: { host: endpoint.options.host!, port: namedPort ? endpoint.options.port : undefined, username: endpoint.options.username },
      home: where.home,
      localUser: localUser(where.env),
      env: where.env,
      timeoutMs,
    });
    options.protocol = 'http';
    (options as { agent?: unknown }).agent = transport.agent;
    delete options.username;
    close = (o) => transport.close(o);
  }
  if (endpoint.tlsDir) {
    // The docker CLI reads whichever of the three files exist (a context may carry only ca.pem).
    const [ca, cert, key] = await Promise.all(['ca.pem', 'cert.pem', 'key.pem'].map((f) => readOptionalBytes(join(endpoint.tlsDir!, f))));
    if (ca) options.ca = ca;
    if (cert) options.cert = cert;
    if (key) options.key = key;
  }
  if (endpoint.skipTlsVerify) {
    // eslint-disable-next-line @typescript-eslint/no-require-imports
    const https = require('node:https') as typeof import('node:https');
    (options as { agent?: unknown }).agent = new https.Agent({
      ca: options.ca,
      cert: options.cert,
      key: options.key,
      rejectUnauthorized: false,
    });
  }
  // Loaded here, not at the top: requiring dockerode costs ~70 ms
  // (docs/decisions/0005-lazy-backend-bundle.md).
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const DockerCtor = require('dockerode') as typeof Docker;
  const docker = new DockerCtor(options);

  const controller = new AbortController();
  let timedOut = false;
  const timer = setTimeout(() => {
    timedOut = true;
    controller.abort();
  }, timeoutMs);
  let identity: EngineIdentity;
  try {
    // A unix socket's /_ping headers name the engine and both versions (Podman takes ~0.5 s
    // to answer /version); anything else, or a ping that says too little, asks /version.
    const pinged =
      options.socketPath && !options.socketPath.startsWith('//') ? await pingUnixSocket(options.socketPath, timeoutMs) : undefined;
    if (pinged) {
      identity = pinged;
    } else {
      // The typings omit the options argument dockerode 5 accepts here.
      const version = docker.version.bind(docker) as unknown as (o: { abortSignal: AbortSignal }) => Promise<Docker.DockerVersion>;
      identity = identityFromVersion(await version({ abortSignal: controller.signal }));
    }
  } catch (err) {
    close();
    throw unreachable(endpoint, timedOut ? { timeoutMs } : err);
  } finally {
    clearTimeout(timer);
  }
  try {
    checkApiVersion(identity.apiVersion, endpoint);
  } catch (err) {
    close();
    throw err;
  }
  rememberEngine(docker, identity);
  // Whether a Podman runs rootless decides every create (engine/compat.ts): ask now, off the open's path.
  if (identity.product === 'Podman') void podmanRootless(docker);
  return { docker, endpoint, version: identity.version || 'unknown', apiVersion: identity.apiVersion, product: identity.product, close };
}

/** One candidate engine as Select Engine shows it: its version, or why it did not answer. */
export interface EngineProbe {
  endpoint: ResolvedEndpoint;
  product?: 'Docker' | 'Podman';
  version?: string;
  apiVersion?: string;
  /** Short reason (`no socket`, `connection refused`, the floor message…) when unusable. */
  problem?: string;
}

export const PROBE_TIMEOUT_MS = 1_500;

/**
 * Every endpoint the user could pick: the configured one (if any) and the well-known sockets,
 * each asked in parallel with a short timeout. Sockets that do not exist are left out.
 */
export async function probeEngines(opts: ConnectOptions = {}): Promise<EngineProbe[]> {
  let plan: EndpointPlan;
  try {
    plan = await planEndpoints(opts);
  } catch {
    // A broken context must not hide the sockets that work.
    plan = await planEndpoints({
      ...opts,
      setting: undefined,
      env: { ...(opts.env ?? process.env), DOCKER_HOST: undefined, DOCKER_CONTEXT: 'default' },
    });
  }
  const seen = new Set<string>();
  const all = [...(plan.configured ? [plan.configured] : []), ...plan.wellKnown].filter(
    (e) => !seen.has(e.endpoint) && seen.add(e.endpoint),
  );
  const windows = (opts.platform ?? process.platform) === 'win32';
  const results = await Promise.all(
    all.map(async (endpoint): Promise<EngineProbe | undefined> => {
      if (!windows && endpoint.options.socketPath && endpoint !== plan.configured) {
        try {
          await stat(endpoint.options.socketPath);
        } catch {
          return undefined;
        }
      }
      try {
        const c = await connectTo(
          endpoint,
          opts.timeoutMs ?? (endpoint.options.protocol === 'ssh' ? SSH_CONNECT_TIMEOUT_MS : PROBE_TIMEOUT_MS),
          {
            env: opts.env ?? process.env,
            home: opts.home ?? homedir(),
          },
        );
        c.close();
        return { endpoint, version: c.version, apiVersion: c.apiVersion, product: c.product };
      } catch (err) {
        const cause = err instanceof EngineTooOldError ? err : ((err as { cause?: unknown }).cause ?? err);
        return { endpoint, problem: shortReason(cause, endpoint) };
      }
    }),
  );
  return results.filter((r): r is EngineProbe => r !== undefined);
}

/** The one error when nothing is configured and no well-known socket answered. */
export function noneReachable(tried: readonly { endpoint: ResolvedEndpoint; cause: unknown }[]): Error {
  const list = tried.map(
    (t, i) => `(${i + 1}) ${t.endpoint.endpoint} (${describeSource(t.endpoint.source)}): ${shortReason(t.cause, t.endpoint)}`,
  );
  return new Error(
    `Docker is not reachable: nothing is configured (no toolbox.dockerHost, DOCKER_HOST or Docker context), ` +
      `and none of the usual sockets answered. Tried in order: ${list.join('; ')}. ` +
      `Start Docker (or Colima, OrbStack, Rancher Desktop, Podman), or set toolbox.dockerHost.`,
  );
}

/** Why one endpoint failed, in a few words. */
export function shortReason(cause: unknown, endpoint: ResolvedEndpoint): string {
  if (cause instanceof EngineTooOldError) return cause.short;
  if (cause instanceof SshError) return cause.short;
  const tls = tlsReason(cause, endpoint);
  if (tls) return tls.short;
  if (cause && typeof cause === 'object' && 'timeoutMs' in cause) {
    return `no answer within ${Math.round((cause as { timeoutMs: number }).timeoutMs / 100) / 10} s`;
  }
  const status = statusOf(cause);
  if (status !== undefined) return `HTTP ${status}`;
  const code = (cause as { code?: unknown } | undefined)?.code;
  switch (code) {
    case 'ENOENT':
      return 'no socket there';
    case 'ECONNREFUSED':
      return 'connection refused';
    case 'EACCES':
    case 'EPERM':
      return 'permission denied';
    case 'ENOTFOUND':
    case 'EAI_AGAIN':
      return `the host name ${endpoint.options.host ?? ''} could not be resolved`;
    case 'ECONNRESET':
    case 'EPIPE':
      return 'closed without an answer';
    default:
      return clause(engineMessage(cause));
  }
}

/** An engine's one-line description: "Docker 20.10.24 at unix:///var/run/docker.sock (the platform default)". */
export function describeConnection(c: { version: string; endpoint: ResolvedEndpoint; product?: string }): string {
  return `${c.product ?? 'Docker'} ${c.version} at ${c.endpoint.endpoint} (${describeSource(c.endpoint.source)})`;
}

async function tlsDirIfAny(dir: string): Promise<string | undefined> {
  for (const f of ['ca.pem', 'cert.pem', 'key.pem']) {
    try {
      await stat(join(dir, f));
      return dir;
    } catch {
      // Try the next file.
    }
  }
  return undefined;
}

async function readOptionalBytes(path: string): Promise<Buffer | undefined> {
  try {
    return await readFile(path);
  } catch {
    return undefined;
  }
}

async function readOptional(path: string): Promise<string | undefined> {
  try {
    return await readFile(path, 'utf8');
  } catch {
    return undefined;
  }
}

const CERT_CODES = new Set([
  'UNABLE_TO_VERIFY_LEAF_SIGNATURE',
  'UNABLE_TO_GET_ISSUER_CERT_LOCALLY',
  'SELF_SIGNED_CERT_IN_CHAIN',
  'DEPTH_ZERO_SELF_SIGNED_CERT',
  'CERT_HAS_EXPIRED',
  'CERT_NOT_YET_VALID',
  'ERR_TLS_CERT_ALTNAME_INVALID',
]);

/** A TLS failure of a tcp:// endpoint, said in words: whose certificate, which files, what to do. */
export function tlsReason(cause: unknown, endpoint: ResolvedEndpoint): { long: string; short: string } | undefined {
  const code = (cause as { code?: unknown } | undefined)?.code;
  const message = String((cause as { message?: unknown } | undefined)?.message ?? '');
  const dir = endpoint.tlsDir ? ` in ${endpoint.tlsDir}` : '';
  if (typeof code === 'string' && CERT_CODES.has(code)) {
    return {
      long: `the engine's TLS certificate was not accepted (${code}): it is not signed by the ca.pem${dir}, or does not name ${endpoint.options.host ?? 'the host'}. Put the engine's CA certificate there as ca.pem.`,
      short: `the engine's certificate was not accepted (${code})`,
    };
  }
  if (/alert (bad certificate|certificate required|unknown ca|certificate unknown)/i.test(message)) {
    return {
      long: `the engine refused this client's TLS certificate (${endpoint.tlsDir ? `cert.pem and key.pem${dir}` : 'no certificate directory is set'}). Use a client certificate signed by the CA the engine trusts (its --tlscacert).`,
      short: 'the engine refused the client certificate',
    };
  }
  if (statusOf(cause) === 400 && /HTTP request to an HTTPS server/i.test(engineMessage(cause))) {
    return {
      long: `the engine speaks TLS on this port, and the connection did not. Set DOCKER_TLS_VERIFY=1 and DOCKER_CERT_PATH (ca.pem, cert.pem, key.pem), or use a Docker context that has them.`,
      short: 'the engine expects TLS',
    };
  }
  return undefined;
}

/** The one error shown when the engine does not answer. */
export function unreachable(endpoint: ResolvedEndpoint, cause: unknown): Error {
  const where = `Docker is not reachable at ${endpoint.endpoint} (${describeSource(endpoint.source)})`;
  const err = new Error(`${where}: ${reasonFor(cause, endpoint)}`);
  (err as Error & { cause?: unknown }).cause = cause;
  return err;
}

function reasonFor(cause: unknown, endpoint: ResolvedEndpoint): string {
  const fix = endpoint.source === 'setting' ? 'correct toolbox.dockerHost' : 'set toolbox.dockerHost';
  if (cause instanceof SshError) return cause.message;
  const tls = tlsReason(cause, endpoint);
  if (tls) return `${tls.long} Or ${fix}.`;
  if (cause && typeof cause === 'object' && 'timeoutMs' in cause) {
    const secs = Math.round((cause as { timeoutMs: number }).timeoutMs / 100) / 10;
    if (endpoint.options.protocol === 'ssh') {
      return (
        `no answer within ${secs} s — the SSH connection to ${endpoint.options.host ?? ''} or the engine behind it did not answer. ` +
        `Check that you can connect with ssh and run docker info there, or ${fix}.`
      );
    }
    return `no answer within ${secs} s — the daemon may be hung, or the endpoint is not a Docker engine. ` + `Restart Docker, or ${fix}.`;
  }
  const status = statusOf(cause);
  if (status !== undefined) {
    return `the engine answered with HTTP ${status} (${clause(engineMessage(cause))}). Check the daemon's log, or ${fix}.`;
  }
  const code = (cause as { code?: unknown } | undefined)?.code;
  switch (code) {
    case 'ENOENT':
      return `no socket exists at ${endpoint.options.socketPath ?? endpoint.endpoint} — is Docker installed and running? Start Docker, or ${fix}.`;
    case 'ECONNREFUSED':
      return `connection refused — is the daemon running? Start Docker, or ${fix}.`;
    case 'EACCES':
    case 'EPERM':
      return (
        `permission denied — this user may not open the Docker socket. ` + `Add the user to the docker group and log in again, or ${fix}.`
      );
    case 'ENOTFOUND':
    case 'EAI_AGAIN':
      return `the host name ${endpoint.options.host ?? ''} could not be resolved. Check the endpoint, or ${fix}.`;
    case 'EHOSTUNREACH':
    case 'ENETUNREACH':
      return `the host is unreachable from this machine. Check the network, or ${fix}.`;
    case 'ECONNRESET':
    case 'EPIPE':
      return `the connection was closed without an answer — the endpoint may not be a Docker engine. Check it, or ${fix}.`;
    default:
      return `${clause(engineMessage(cause))}. Check that Docker is running, or ${fix}.`;
  }
}
