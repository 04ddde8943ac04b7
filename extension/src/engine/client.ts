/**
 * Finding and reaching the Docker engine. The endpoint is chosen like the docker CLI chooses it
 * (setting → DOCKER_HOST → current context → platform default); the choice is pure and
 * unit-tested, the file reads and the ping are the thin I/O around it.
 */
import type Docker from 'dockerode';
import { createHash } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { homedir } from 'node:os';
import { join } from 'node:path';
import { clause, engineMessage, statusOf } from './errors';

export type EndpointSource = 'setting' | 'DOCKER_HOST' | `context ${string}` | 'default';

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
}

export interface ResolveEndpointInput {
  /** `toolbox.dockerHost`; empty or whitespace means unset. */
  setting?: string;
  env: Readonly<Record<string, string | undefined>>;
  /** Text of `~/.docker/config.json`, when it exists. */
  dockerConfigText?: string;
  /** Text of the current context's `meta.json`, when it exists. */
  contextMetaText?: string;
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

/** Decides which endpoint to use and how dockerode should reach it. Pure. */
export function resolveEndpoint(input: ResolveEndpointInput): ResolvedEndpoint {
  const { env, platform } = input;
  const setting = input.setting?.trim();
  if (setting) return withOptions(setting, 'setting', env);
  const dockerHost = env.DOCKER_HOST?.trim();
  if (dockerHost) return withOptions(dockerHost, 'DOCKER_HOST', env);
  const context = currentContextName(env, input.dockerConfigText);
  if (context && context !== 'default') {
    const host = contextHost(context, input.contextMetaText);
    return withOptions(host, `context ${context}`, env);
  }
  const fallback = platform === 'win32' ? DEFAULT_NPIPE_ENDPOINT : DEFAULT_UNIX_ENDPOINT;
  return withOptions(fallback, 'default', env);
}

function contextHost(name: string, metaText: string | undefined): string {
  const fix = `Switch with \`docker context use default\`, or set toolbox.dockerHost.`;
  if (metaText === undefined) {
    throw new Error(`The current Docker context "${name}" has no metadata file, so its endpoint is unknown. ${fix}`);
  }
  let host: unknown;
  try {
    const meta = JSON.parse(metaText) as { Endpoints?: { docker?: { Host?: unknown } } };
    host = meta.Endpoints?.docker?.Host;
  } catch (err) {
    throw new Error(`The metadata of Docker context "${name}" is not valid JSON (${clause(engineMessage(err))}). ${fix}`, { cause: err });
  }
  if (typeof host !== 'string' || host.trim() === '') {
    throw new Error(`The Docker context "${name}" names no Docker endpoint (Endpoints.docker.Host is empty). ${fix}`);
  }
  return host.trim();
}

function withOptions(endpoint: string, source: EndpointSource, env: Readonly<Record<string, string | undefined>>): ResolvedEndpoint {
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
  const tls = scheme === 'https' || tlsVerify || port === DEFAULT_TLS_PORT;
  const result: ResolvedEndpoint = {
    endpoint,
    source,
    options: { host: url.hostname, port, protocol: tls ? 'https' : 'http' },
  };
  if (tls && env.DOCKER_CERT_PATH) result.tlsDir = env.DOCKER_CERT_PATH;
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
}

export interface EngineConnection {
  docker: Docker;
  endpoint: ResolvedEndpoint;
  /** The engine's version (`20.10.24`) and the API version it speaks. */
  version: string;
  apiVersion: string;
}

export const DEFAULT_CONNECT_TIMEOUT_MS = 4_000;

/**
 * Resolves the endpoint, creates the client and asks the engine for its version. Any failure is
 * one Error saying where we knocked, why nobody answered, and what to do.
 */
export async function connectEngine(opts: ConnectOptions = {}): Promise<EngineConnection> {
  const env = opts.env ?? process.env;
  const platform = opts.platform ?? process.platform;
  const configDir = env.DOCKER_CONFIG?.trim() || join(opts.home ?? homedir(), '.docker');
  const needsContext = !opts.setting?.trim() && !env.DOCKER_HOST?.trim();
  const dockerConfigText = needsContext ? await readOptional(join(configDir, 'config.json')) : undefined;
  const context = needsContext ? currentContextName(env, dockerConfigText) : undefined;
  const contextMetaText = context && context !== 'default' ? await readOptional(contextMetaPath(configDir, context)) : undefined;
  const endpoint = resolveEndpoint({ setting: opts.setting, env, dockerConfigText, contextMetaText, platform });

  const options: Docker.DockerOptions = { ...endpoint.options };
  if (endpoint.tlsDir) {
    options.ca = await readFile(join(endpoint.tlsDir, 'ca.pem'));
    options.cert = await readFile(join(endpoint.tlsDir, 'cert.pem'));
    options.key = await readFile(join(endpoint.tlsDir, 'key.pem'));
  }
  // Loaded here, not at the top: requiring dockerode costs ~70 ms
  // (docs/decisions/0005-lazy-backend-bundle.md).
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const DockerCtor = require('dockerode') as typeof Docker;
  const docker = new DockerCtor(options);

  const timeoutMs = opts.timeoutMs ?? DEFAULT_CONNECT_TIMEOUT_MS;
  const controller = new AbortController();
  let timedOut = false;
  const timer = setTimeout(() => {
    timedOut = true;
    controller.abort();
  }, timeoutMs);
  try {
    // The typings omit the options argument dockerode 5 accepts here.
    const version = docker.version.bind(docker) as unknown as (o: { abortSignal: AbortSignal }) => Promise<Docker.DockerVersion>;
    const info = await version({ abortSignal: controller.signal });
    return { docker, endpoint, version: info.Version, apiVersion: info.ApiVersion };
  } catch (err) {
    throw unreachable(endpoint, timedOut ? { timeoutMs } : err);
  } finally {
    clearTimeout(timer);
  }
}

async function readOptional(path: string): Promise<string | undefined> {
  try {
    return await readFile(path, 'utf8');
  } catch {
    return undefined;
  }
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
  if (cause && typeof cause === 'object' && 'timeoutMs' in cause) {
    const secs = Math.round((cause as { timeoutMs: number }).timeoutMs / 100) / 10;
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
