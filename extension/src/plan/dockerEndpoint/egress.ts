/**
 * The Docker endpoint under a folder's egress policy (issue 30): a workspace container under `ask`
 * or `allowlist` has no network of its own and reaches the outside only through the host's proxy.
 * Its endpoint must not hand it another way out through the daemon: a sibling container on the
 * default bridge, a process in a container of its own that has a network (one made before the
 * policy), a build (whose FROM and ADD the daemon fetches from this host's network), a push, or a
 * pull, search or login at a registry the policy does not allow. Absent
 * (`scope.egress` undefined, mode `open`), nothing here applies. Pure: no I/O.
 */
import type { EgressMode } from '../egress';
import { forbidden, malformed } from './wire';

/** What the endpoint knows of the folder's egress policy (EndpointScope.egress). */
export interface EndpointEgress {
  mode: Exclude<EgressMode, 'open'>;
  /** Whether the daemon may reach this registry for the caller (pull, search, login): `registry-1.docker.io`, 443 for Docker Hub. */
  registryAllowed(host: string, port: number): boolean;
}

/** Where Docker Hub is reached: pulls, pushes and logins at registry-1.docker.io, searches at index.docker.io. */
const HUB_REGISTRY = 'registry-1.docker.io';
const HUB_INDEX = 'index.docker.io';
const HUB_NAMES = new Set(['docker.io', 'index.docker.io', 'registry-1.docker.io']);

export interface RegistryHost {
  host: string;
  port: number;
}

const HOST = /^[a-z0-9]([a-z0-9.-]{0,252})$/;

/** `host[:port]` as Docker names a registry; the port 443 unless given. */
function hostPort(domain: string, where: string): RegistryHost {
  const d = domain.toLowerCase();
  const colon = d.lastIndexOf(':');
  const host = colon >= 0 ? d.slice(0, colon) : d;
  const portText = colon >= 0 ? d.slice(colon + 1) : '443';
  const port = /^[0-9]{1,5}$/.test(portText) ? Number(portText) : NaN;
  if (!HOST.test(host) || !(port >= 1 && port <= 65535))
    throw malformed('field-type', `${where} names ${domain}, which is not a registry host.`);
  return { host, port };
}

/**
 * The registry the daemon reaches for an image reference, as Docker's reference normalisation
 * (splitDockerDomain) reads it: a first component with a `.` or `:`, `localhost`, or upper case is
 * a registry; else Docker Hub. Upper case counts as a registry here though older engines refuse it:
 * the policy then asks about a host it would not allow, which refuses, never the reverse.
 */
export function registryOfImage(ref: string): RegistryHost {
  const slash = ref.indexOf('/');
  const first = slash >= 0 ? ref.slice(0, slash) : '';
  const isDomain = first !== '' && (/[.:]/.test(first) || first === 'localhost' || first !== first.toLowerCase());
  if (!isDomain || HUB_NAMES.has(first.toLowerCase())) return { host: HUB_REGISTRY, port: 443 };
  return hostPort(first, `The image ${ref}`);
}

/** The index a search term names (Docker's splitReposSearchTerm): Docker Hub's is index.docker.io. */
export function registryOfSearch(term: string): RegistryHost {
  const slash = term.indexOf('/');
  const first = slash >= 0 ? term.slice(0, slash) : '';
  const isDomain = first !== '' && (/[.:]/.test(first) || first === 'localhost' || first !== first.toLowerCase());
  if (!isDomain || HUB_NAMES.has(first.toLowerCase())) return { host: HUB_INDEX, port: 443 };
  return hostPort(first, `The search ${term}`);
}

/** The registry a login names (`/auth` serveraddress, read as Docker's ConvertToHostname does); empty is Docker Hub. */
export function registryOfLogin(serveraddress: string): RegistryHost {
  const bare = serveraddress.replace(/^[A-Za-z][A-Za-z0-9+.-]*:\/\//, '').split('/')[0];
  if (bare === '' || HUB_NAMES.has(bare.toLowerCase())) return { host: HUB_REGISTRY, port: 443 };
  return hostPort(bare, 'The login');
}

const policy = (mode: EndpointEgress['mode']) => `This workspace's egress policy (${mode})`;

/** A registry the daemon would reach for the caller: refused unless the policy allows it. */
export function checkRegistry(e: EndpointEgress, r: RegistryHost, what: string): void {
  if (e.registryAllowed(r.host, r.port)) return;
  throw forbidden(
    'egress',
    `${policy(e.mode)} does not allow the registry ${r.host}:${r.port}, and ${what} would make this host's Docker daemon reach it from this host's network, outside the policy. Use a registry the policy allows, or add ${r.host} to the folder's egress allowlist.`,
  );
}

/** What the endpoint offers in place of a network: shared by the refusals below. */
const NO_NETWORK_WAYS =
  'run them with --network none, or with --network container:<a container you started through this endpoint> to share its loopback.';

/** Why an internal network is no way out of the policy either (docs/decisions/0056). */
const INTERNAL_REACHES_HOST = 'a container on an internal network still reaches this host at that network’s gateway';

/** A new container's network under a policy: anything but none or an owned container's namespace. */
export function noNetwork(mode: EndpointEgress['mode'], where: string, what: string): never {
  throw forbidden(
    'egress',
    `${policy(mode)} gives the containers it starts no network of their own, internal ones included (${INTERNAL_REACHES_HOST}), and ${where} asks for ${what}: ${NO_NETWORK_WAYS}`,
  );
}

/** A connect (network connect) under a policy, to any network of the caller's own, an internal one included. */
export function connectRefused(mode: EndpointEgress['mode'], network: string, internal: boolean): never {
  throw forbidden(
    'egress',
    `${policy(mode)} lets the containers it starts join no network, internal ones included, and this connect names ${networkNamed(network, internal)}: ${NO_NETWORK_WAYS}`,
  );
}

/** A network create under a policy, an internal one included. */
export function networkRefused(mode: EndpointEgress['mode']): never {
  throw forbidden(
    'egress',
    `${policy(mode)} does not let it create networks, internal ones included: the containers it starts may join none (${INTERNAL_REACHES_HOST}). Instead, ${NO_NETWORK_WAYS}`,
  );
}

/** How a refusal names a network of the caller's own: an internal one as such, and why it is refused all the same. */
function networkNamed(ref: string, internal: boolean): string {
  return internal ? `the internal network ${ref} (${INTERNAL_REACHES_HOST})` : `the network ${ref}`;
}

/**
 * What the engine's inspect says of a container's network: its HostConfig.NetworkMode, and for
 * `container:<other>` the mode of that other container (looked up one step, no further).
 */
export interface ContainerNetwork {
  mode: string | undefined;
  joined?: string | undefined;
}

/**
 * Whether a container of the caller's own has a network under the policy: anything but `none`,
 * or the namespace of a container that has `none` (one step: a longer chain, or one not looked
 * up, counts as a network). An unknown mode counts as a network too.
 */
export function hasNetwork(net: ContainerNetwork | undefined): boolean {
  const mode = net?.mode;
  if (mode === 'none') return false;
  if (mode !== undefined && mode.startsWith('container:')) return net?.joined !== 'none';
  return true;
}

/**
 * Something run in a container of the caller's own that has a network (one made before the
 * policy, or through the host with the owner label, or sharing such a one's): an exec, a start,
 * an attach, files copied in, or a new container sharing its network namespace.
 */
export function networkedContainer(mode: EndpointEgress['mode'], container: string, what: string): never {
  throw forbidden(
    'egress',
    `${policy(mode)} lets nothing run with a network of its own, and the container ${container} has one (it was made before the policy, or shares the network of one that was): ${what} would reach the network outside the policy. Remove it and start it again with --network none, or use a container without a network.`,
  );
}

/** Builds, pushes: what the daemon would send or fetch whatever the network mode. */
export function refusedRoute(e: EndpointEgress, route: 'build' | 'session' | 'grpc' | 'image-push'): never {
  const why =
    route === 'image-push'
      ? 'does not let it push images: a push sends them out from this host’s Docker daemon, outside the policy. Push from the host instead.'
      : 'does not let the Docker daemon build images for it: whatever the build’s network mode, the daemon fetches its base images (FROM), its ADD URLs and its frontend (# syntax) from this host’s network, outside the policy. Build the image on the host, or pull it from a registry the policy allows.';
  throw forbidden('egress', `${policy(e.mode)} ${why}`);
}
