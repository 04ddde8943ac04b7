/**
 * Where the engines behind the Docker Engine API differ, and what this extension does about it
 * (docs/engines.md). Which engine a client talks to is learnt once per client, from the answer
 * connect already has; everything else here is a pure rule or one small request.
 */
import { request } from 'node:http';
import { createServer } from 'node:net';
import type Docker from 'dockerode';
import { DOCKER_ENDPOINT } from '../contract/dockerEndpoint';
import { ENV } from '../contract/shims';
import { HOST_GATEWAY } from '../contract/upstream';

export interface EngineIdentity {
  product: 'Docker' | 'Podman';
  /** The engine's own version (`20.10.24`, `4.3.1`); '' when it did not say. */
  version: string;
  /** The Docker Engine API version it speaks (`1.41`). */
  apiVersion: string;
}

/** Podman names itself in /version's components ("Podman Engine"); Docker never does. Pure. */
export function identityFromVersion(v: { Version?: unknown; ApiVersion?: unknown; Components?: unknown }): EngineIdentity {
  const components = Array.isArray(v.Components) ? (v.Components as Array<{ Name?: unknown }>) : [];
  const podman = components.some((c) => typeof c?.Name === 'string' && /podman/i.test(c.Name));
  return {
    product: podman ? 'Podman' : 'Docker',
    version: typeof v.Version === 'string' ? v.Version.slice(0, 64) : '',
    apiVersion: typeof v.ApiVersion === 'string' ? v.ApiVersion : String(v.ApiVersion ?? ''),
  };
}

/**
 * The same from /_ping's headers (`Server: Docker/20.10.24 (linux)` or `Server: Libpod/4.3.1
 * (linux)`, `Api-Version: 1.41`): Podman answers /version in ~0.5 s, /_ping in under 1 ms. Pure;
 * undefined when the headers do not say enough.
 */
export function identityFromPingHeaders(headers: Readonly<Record<string, string | string[] | undefined>>): EngineIdentity | undefined {
  const one = (h: string | string[] | undefined) => (Array.isArray(h) ? h[0] : h);
  const apiVersion = one(headers['api-version'])?.trim();
  const server = /^(Docker|Libpod)\/(\S{1,64})/.exec(one(headers['server'])?.trim() ?? '');
  if (!apiVersion || !server) return undefined;
  return { product: server[1] === 'Libpod' ? 'Podman' : 'Docker', version: server[2], apiVersion };
}

/** GET /_ping on a unix socket, for its headers; undefined on any failure (the caller asks /version). */
export function pingUnixSocket(socketPath: string, timeoutMs: number): Promise<EngineIdentity | undefined> {
  return new Promise((resolve) => {
    const req = request({ socketPath, path: '/_ping', method: 'GET', timeout: timeoutMs }, (res) => {
      res.resume();
      resolve(res.statusCode === 200 ? identityFromPingHeaders(res.headers) : undefined);
    });
    req.on('timeout', () => req.destroy());
    req.on('error', () => resolve(undefined));
    req.end();
  });
}

const identities = new WeakMap<Docker, Promise<EngineIdentity>>();

/** Records what connect learnt about the engine behind this client. */
export function rememberEngine(docker: Docker, identity: EngineIdentity): void {
  identities.set(docker, Promise.resolve(identity));
}

/** The engine behind this client: what connect recorded, else one /version (kept per client). */
export function engineIdentity(docker: Docker): Promise<EngineIdentity> {
  let known = identities.get(docker);
  if (!known) {
    known = docker.version().then(identityFromVersion);
    identities.set(docker, known);
    known.catch(() => identities.delete(docker));
  }
  return known;
}

function atLeast(version: string, major: number, minor: number): boolean {
  const m = /^(\d+)\.(\d+)/.exec(version);
  if (!m) return false;
  return Number(m[1]) > major || (Number(m[1]) === major && Number(m[2]) >= minor);
}

const rootlessness = new WeakMap<Docker, Promise<boolean>>();

/**
 * Whether this Podman runs rootless (libpod's /info: host.security.rootless; ~0.25 s, asked once
 * per client, started at connect). False for Docker and whenever the answer is not readable.
 */
export function podmanRootless(docker: Docker): Promise<boolean> {
  let known = rootlessness.get(docker);
  if (!known) {
    known = engineIdentity(docker).then((id) =>
      id.product !== 'Podman'
        ? false
        : new Promise<boolean>((resolve) => {
            docker.modem.dial(
              { path: '/v4.0.0/libpod/info', method: 'GET', statusCodes: { 200: true }, options: {} },
              (err: unknown, data: unknown) => {
                const info = data as { host?: { security?: { rootless?: unknown } } } | undefined;
                resolve(!err && info?.host?.security?.rootless === true);
              },
            );
          }),
    );
    rootlessness.set(docker, known);
  }
  return known;
}

/**
 * The user namespace a container needs on rootless Podman (adaptCreateBody asks only there). Without one,
 * the container's uids are the user's subordinate ids, so nothing it writes into the workspace or
 * the bridge's run dir belongs to the user, and the bridge's sockets refuse it. `keep-id` maps the
 * user's own uid to itself; a container joining the anchor's PID namespace must also join its
 * user namespace (the kernel will not mount /proc for a PID namespace another user namespace
 * owns), so it takes `container:<anchor>`. Pure.
 */
export function rootlessUsernsMode(pidMode: string | undefined): string {
  return pidMode !== undefined && pidMode.startsWith('container:') ? pidMode : 'keep-id';
}

/** `host-gateway` in ExtraHosts: Docker since 20.10, Podman only from 5.3 (older ones write it literally). Pure. */
export function supportsHostGateway(id: EngineIdentity): boolean {
  return id.product === 'Docker' || atLeast(id.version, 5, 3);
}

/** The entries with `host-gateway` replaced by an address. Pure. */
export function withHostGateway(extraHosts: readonly string[], address: string): string[] {
  return extraHosts.map((h) => (h.endsWith(`:${HOST_GATEWAY}`) ? `${h.slice(0, -HOST_GATEWAY.length)}${address}` : h));
}

/** Podman's network for a container created without one (the compat API maps "bridge" and "default" to it). */
const PODMAN_DEFAULT_NETWORK = 'podman';

/**
 * A create body as this engine understands it. On every engine, the classic builder for a container
 * with the scoped Docker endpoint (withClassicBuilder). On Podman besides: rootless, the user
 * namespace of rootlessUsernsMode(); older than 5.3, `host-gateway` replaced by the gateway of the
 * container's network, which is the host as the container sees it (what Podman itself writes for
 * host.containers.internal). Every container a shell or peer messaging uses goes through here (the
 * image preflight's throwaway container, with no network and no mounts, needs neither).
 */
export async function adaptCreateBody<
  T extends { Env?: string[]; HostConfig?: { ExtraHosts?: string[]; NetworkMode?: string; PidMode?: string; UsernsMode?: string } },
>(docker: Docker, input: T): Promise<T> {
  const id = await engineIdentity(docker);
  let body = withClassicBuilder(input);
  if (id.product !== 'Podman') return body;
  if (body.HostConfig?.UsernsMode === undefined && (await podmanRootless(docker))) {
    body = { ...body, HostConfig: { ...body.HostConfig, UsernsMode: rootlessUsernsMode(body.HostConfig?.PidMode) } };
  }
  const hosts = body.HostConfig?.ExtraHosts ?? [];
  if (!hosts.some((h) => h.endsWith(`:${HOST_GATEWAY}`)) || supportsHostGateway(id)) return body;
  const mode = body.HostConfig?.NetworkMode;
  const network = !mode || mode === 'bridge' || mode === 'default' ? PODMAN_DEFAULT_NETWORK : mode;
  const info = (await docker.getNetwork(network).inspect()) as { IPAM?: { Config?: Array<{ Gateway?: string }> } };
  const gateway = info.IPAM?.Config?.find((c) => typeof c.Gateway === 'string' && c.Gateway !== '')?.Gateway;
  if (!gateway) {
    throw new Error(
      `${id.product} ${id.version} does not support host-gateway, and its network "${network}" reports no gateway address, ` +
        `so the container could not reach this host. Turn the bridge off for this folder (bridge: false) or use Podman 5.3 or newer.`,
    );
  }
  return { ...body, HostConfig: { ...body.HostConfig, ExtraHosts: withHostGateway(hosts, gateway) } };
}

/**
 * The scoped Docker endpoint refuses BuildKit's own API (/grpc, plan/dockerEndpoint/routes.ts
 * BUILDKIT_GRPC_REFUSED), and Podman has none behind its compat API, so the docker CLI in a
 * container with the endpoint builds with the classic builder, whose /build the endpoint reads:
 * DOCKER_BUILDKIT=0, unless the container's environment says otherwise (docs/decisions/0047, 0049).
 */
export function withClassicBuilder<T extends { Env?: string[] }>(body: T): T {
  const env = body.Env ?? [];
  if (!env.includes(`${ENV.dockerHost}=unix://${DOCKER_ENDPOINT.containerSocket}`)) return body;
  if (env.some((e) => e.startsWith(`${ENV.dockerBuildkit}=`))) return body;
  return { ...body, Env: [...env, `${ENV.dockerBuildkit}=0`] };
}

/**
 * The address a workspace container reaches this host at as host.docker.internal (ExtraHosts
 * `host-gateway`; on Podman before 5.3 its network's gateway): the engine's default bridge
 * network's gateway, when that is an address of this machine, which a listen on it proves. The
 * scoped Docker endpoint publishes its containers' ports there (plan/dockerEndpoint/ports.ts), so the
 * workspace container reaches them and other machines do not. Undefined when the engine reports
 * no gateway or it is no address here (Docker Desktop's bridge lives in its VM, rootless Podman's
 * in a namespace of its own, where host.docker.internal names another address): ports then listen
 * on loopback.
 */
export async function hostGatewayAddress(docker: Docker): Promise<string | undefined> {
  let gateway: string | undefined;
  try {
    const info = (await docker.getNetwork('bridge').inspect()) as { IPAM?: { Config?: Array<{ Gateway?: unknown }> | null } };
    gateway = (info.IPAM?.Config ?? [])
      .map((c) => c.Gateway)
      .find((g): g is string => typeof g === 'string' && /^[0-9]{1,3}(\.[0-9]{1,3}){3}$/.test(g));
  } catch {
    return undefined;
  }
  if (gateway === undefined) return undefined;
  const address = gateway;
  return new Promise((resolve) => {
    const probe = createServer();
    probe.once('error', () => resolve(undefined));
    probe.listen({ host: address, port: 0, exclusive: true }, () => probe.close(() => resolve(address)));
  });
}

/**
 * An image reference as `docker ps` shows it: Podman reports `docker.io/library/debian:…` and
 * `docker.io/user/repo:…` for what Docker calls `debian:…` and `user/repo:…`, and `localhost/…`
 * for images that only exist on this engine (docs/engines.md).
 */
export function familiarImageName(ref: string): string {
  for (const prefix of ['docker.io/library/', 'docker.io/', 'localhost/']) {
    if (ref.startsWith(prefix) && ref.length > prefix.length) return ref.slice(prefix.length);
  }
  return ref;
}

let rootlessCreates: Promise<unknown> = Promise.resolve();

/**
 * docker.createContainer with the body adaptCreateBody() gives. On rootless Podman the creates of
 * this process run one at a time: each one in a user namespace reads the subordinate ids through
 * libsubid, which is not thread-safe, and two at once can crash the Podman service (docs/engines.md).
 */
export async function createAdapted(docker: Docker, body: Docker.ContainerCreateOptions): Promise<Docker.Container> {
  const adapted = await adaptCreateBody(docker, body);
  if (adapted.HostConfig?.UsernsMode === undefined || body.HostConfig?.UsernsMode !== undefined) return docker.createContainer(adapted);
  const created = rootlessCreates.then(() => docker.createContainer(adapted));
  rootlessCreates = created.catch(() => undefined);
  return created;
}
