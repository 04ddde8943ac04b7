/**
 * The Docker endpoint's JSON bodies: their shapes (every field Docker's structs have, in Docker's
 * own spelling, and nothing else) and what the policy allows in them
 * (docs/decisions/0047-docker-endpoint-policy.md). A body is read strictly (wire.ts readJson),
 * held to its shape, judged against the facts the adapter looked up, and written again with the
 * owner label added and bind sources replaced by their realpaths: the bytes Docker gets are the
 * policy's own. Pure: no I/O.
 */
import { z } from 'zod';
import { CONTAINER } from '../../contract/upstream';
import { DOCKER_ENDPOINT } from '../../contract/dockerEndpoint';
import { cleanPath } from '../naming';
import type { InspectedMount } from '../posture';
import {
  checkNoOwnerLabel,
  type EndpointScope,
  type ObjectKind,
  type Ownership,
  type ProtectedPath,
  type RouteId,
  imageOwnerLabel,
  noRefs,
  type ObjectRefs,
  ownerLabel,
  REF_LIST,
} from './routes';
import { checkNotReserved, forbidden, foldKey, isRealtimeUlimit, type Json, malformed, readJson, realtimeUlimit, Refused } from './wire';
import { checkRegistry, type ContainerNetwork, hasNetwork, networkedContainer, networkRefused, noNetwork, registryOfLogin } from './egress';
import { judgePortBindings } from './ports';

/** The facts phase 2 asks for, one at a time. */
export interface FactSource {
  owner(kind: ObjectKind, ref: string): Ownership;
  /** Whether a network of the caller's own was created internal (the engine's inspect says); asked only under an egress policy. */
  internal(network: string): boolean;
  /** A container's network (its inspect), asked under an egress policy for one a new container shares the namespace of. */
  network(container: string): ContainerNetwork | undefined;
  /** The host realpath of a bind source; undefined when it does not exist or cannot be resolved. */
  realpath(source: string): string | undefined;
  /**
   * The id the engine answered for an object `owner` said is the caller's: the body names it so
   * when it is forwarded, since a name can lead to another object by the time the engine reads it.
   */
  id?(kind: ObjectKind, ref: string): string | undefined;
  /** Whether an image carries the caller's owner label (a container made from it would inherit it). */
  imageCarriesOwner?(ref: string): boolean;
}

const nul = <T extends z.ZodType>(t: T) => t.nullable().optional();
const S = nul(z.string());
const B = nul(z.boolean());
const I = nul(z.number().int());
const SA = nul(z.array(z.string()));
const SM = nul(z.record(z.string(), z.string()));
/** A field the policy refuses unless it is empty: its shape does not matter. */
const ANY = nul(z.unknown());
/** Go's struct{}: Docker ignores whatever is inside, so only {} is taken. */
const EMPTY = nul(z.strictObject({}));
/** strslice.StrSlice: a string or a list of strings. */
const STRS = nul(z.union([z.string(), z.array(z.string())]));
const SIZE = nul(z.array(z.number().int().nonnegative()).max(2));

/** Config (api/types/container/config.go): the portable half of a container. */
const CONFIG = {
  Hostname: S,
  Domainname: S,
  User: S,
  AttachStdin: B,
  AttachStdout: B,
  AttachStderr: B,
  ExposedPorts: nul(z.record(z.string(), EMPTY)),
  Tty: B,
  OpenStdin: B,
  StdinOnce: B,
  Env: SA,
  Cmd: STRS,
  Healthcheck: nul(z.strictObject({ Test: SA, Interval: I, Timeout: I, StartPeriod: I, StartInterval: I, Retries: I })),
  ArgsEscaped: B,
  Image: S,
  Volumes: nul(z.record(z.string(), EMPTY)),
  WorkingDir: S,
  Entrypoint: STRS,
  NetworkDisabled: B,
  MacAddress: S,
  OnBuild: SA,
  Labels: SM,
  StopSignal: S,
  StopTimeout: I,
  Shell: STRS,
};

/** Resources (api/types/container/hostconfig.go): the cgroup half, shared by create and update. */
const RESOURCES = {
  CpuShares: I,
  Memory: I,
  NanoCpus: I,
  CgroupParent: S,
  BlkioWeight: I,
  BlkioWeightDevice: ANY,
  BlkioDeviceReadBps: ANY,
  BlkioDeviceWriteBps: ANY,
  BlkioDeviceReadIOps: ANY,
  BlkioDeviceWriteIOps: ANY,
  CpuPeriod: I,
  CpuQuota: I,
  CpuRealtimePeriod: I,
  CpuRealtimeRuntime: I,
  CpusetCpus: S,
  CpusetMems: S,
  Devices: ANY,
  DeviceCgroupRules: ANY,
  DeviceRequests: ANY,
  KernelMemory: I,
  KernelMemoryTCP: I,
  MemoryReservation: I,
  MemorySwap: I,
  MemorySwappiness: I,
  OomKillDisable: B,
  PidsLimit: I,
  Ulimits: nul(z.array(z.strictObject({ Name: S, Hard: I, Soft: I }))),
  CpuCount: I,
  CpuPercent: I,
  IOMaximumIOps: I,
  IOMaximumBandwidth: I,
};

const RESTART = nul(z.strictObject({ Name: S, MaximumRetryCount: I }));

const MOUNT = z.strictObject({
  Type: S,
  Source: S,
  Target: S,
  ReadOnly: B,
  Consistency: S,
  BindOptions: nul(
    z.strictObject({ Propagation: S, NonRecursive: B, CreateMountpoint: B, ReadOnlyNonRecursive: B, ReadOnlyForceRecursive: B }),
  ),
  VolumeOptions: nul(z.strictObject({ NoCopy: B, Labels: SM, Subpath: S, DriverConfig: ANY })),
  TmpfsOptions: nul(z.strictObject({ SizeBytes: I, Mode: I, Options: nul(z.array(z.array(z.string()))) })),
  ImageOptions: ANY,
  ClusterOptions: ANY,
});

const HOST_CONFIG = z.strictObject({
  Binds: SA,
  ContainerIDFile: S,
  LogConfig: nul(z.strictObject({ Type: S, Config: SM })),
  NetworkMode: S,
  PortBindings: nul(z.record(z.string(), nul(z.array(z.strictObject({ HostIp: S, HostPort: S }))))),
  RestartPolicy: RESTART,
  AutoRemove: B,
  VolumeDriver: S,
  VolumesFrom: SA,
  ConsoleSize: SIZE,
  Annotations: ANY,
  CapAdd: ANY,
  CapDrop: SA,
  CgroupnsMode: S,
  Dns: SA,
  DnsOptions: SA,
  DnsSearch: SA,
  ExtraHosts: SA,
  GroupAdd: SA,
  IpcMode: S,
  Cgroup: S,
  Links: SA,
  OomScoreAdj: I,
  PidMode: S,
  Privileged: B,
  PublishAllPorts: B,
  ReadonlyRootfs: B,
  SecurityOpt: SA,
  StorageOpt: ANY,
  Tmpfs: SM,
  UTSMode: S,
  UsernsMode: S,
  ShmSize: I,
  Sysctls: ANY,
  Runtime: S,
  Isolation: S,
  ...RESOURCES,
  Mounts: nul(z.array(MOUNT)),
  MaskedPaths: ANY,
  ReadonlyPaths: ANY,
  Init: B,
});

const ENDPOINT = z.strictObject({
  IPAMConfig: nul(z.strictObject({ IPv4Address: S, IPv6Address: S, LinkLocalIPs: SA })),
  Links: SA,
  Aliases: SA,
  DriverOpts: ANY,
  GwPriority: I,
  NetworkID: S,
  EndpointID: S,
  Gateway: S,
  IPAddress: S,
  IPPrefixLen: I,
  IPv6Gateway: S,
  GlobalIPv6Address: S,
  GlobalIPv6PrefixLen: I,
  MacAddress: S,
  DNSNames: SA,
});

/**
 * POST /containers/create. Docker's decoder also reads HostConfig's fields at the top level (a
 * deprecated embedding it honours when HostConfig is absent), so a top-level Privileged would be
 * obeyed: the top level takes Config's fields, HostConfig and NetworkingConfig, nothing else.
 */
const CREATE = z.strictObject({
  ...CONFIG,
  // dockerode (Testcontainers' client) sends its options as the body as well as the query, so the
  // query's name and platform come here too; Docker reads them from the query only, and so does the
  // policy: they are dropped from the body it forwards.
  name: S,
  platform: S,
  HostConfig: nul(HOST_CONFIG),
  NetworkingConfig: nul(z.strictObject({ EndpointsConfig: nul(z.record(z.string(), nul(ENDPOINT))) })),
});

const SCHEMAS = {
  'container-create': CREATE,
  'container-update': z.strictObject({ ...RESOURCES, RestartPolicy: RESTART }),
  'exec-create': z.strictObject({
    User: S,
    Privileged: B,
    Tty: B,
    ConsoleSize: SIZE,
    AttachStdin: B,
    AttachStderr: B,
    AttachStdout: B,
    Detach: B,
    DetachKeys: S,
    Env: SA,
    WorkingDir: S,
    Cmd: STRS,
  }),
  // dockerode sends its own options (hijack, stdin) in this body; they are left out, not refused:
  // nothing here can widen what the exec already is.
  'exec-start': z.object({ Detach: B, Tty: B, ConsoleSize: SIZE }),
  // dockerode's options, repeated from the query, which is all Docker reads on these routes: the
  // body is checked for their shape and dropped (DROPPED_BODY), so other keys do not matter.
  'container-stop': z.object({ t: I, signal: S }),
  'container-restart': z.object({ t: I, signal: S }),
  'container-kill': z.object({ signal: S }),
  'network-create': z.strictObject({
    Name: S,
    CheckDuplicate: B,
    Driver: S,
    Scope: S,
    EnableIPv4: B,
    EnableIPv6: B,
    IPAM: nul(
      z.strictObject({
        Driver: S,
        Config: nul(z.array(z.strictObject({ Subnet: S, IPRange: S, Gateway: S, AuxiliaryAddresses: SM }))),
        Options: ANY,
      }),
    ),
    Internal: B,
    Attachable: B,
    Ingress: B,
    ConfigOnly: B,
    ConfigFrom: ANY,
    Options: ANY,
    Labels: SM,
  }),
  'network-connect': z.strictObject({ Container: S, EndpointConfig: nul(ENDPOINT) }),
  'network-disconnect': z.strictObject({ Container: S, Force: B }),
  'volume-create': z.strictObject({ Name: S, Driver: S, DriverOpts: ANY, Labels: SM, ClusterVolumeSpec: ANY }),
  commit: z.strictObject(CONFIG),
  auth: z.strictObject({ username: S, password: S, auth: S, email: S, serveraddress: S, identitytoken: S, registrytoken: S }),
} as const;

type BodyRoute = keyof typeof SCHEMAS;
type Create = z.infer<typeof CREATE>;
type HostConfig = z.infer<typeof HOST_CONFIG>;
type Mount = z.infer<typeof MOUNT>;
type Endpoint = z.infer<typeof ENDPOINT>;

/** Routes whose body Docker does not read: nothing of it is forwarded. */
export const DROPPED_BODY: ReadonlySet<RouteId> = new Set<RouteId>(['container-stop', 'container-restart', 'container-kill']);

export function hasBodySchema(route: RouteId): route is BodyRoute {
  return Object.hasOwn(SCHEMAS, route);
}

/**
 * Reads and shapes a body; an empty optional body is `{}`, and so is `null` in one: Go decodes
 * `null` into a struct pointer as none, and the docker CLI sends it for a commit without a config.
 */
export function readBody(route: BodyRoute, bytes: Uint8Array, optional: boolean): Record<string, unknown> {
  const read: Json = optional && bytes.length === 0 ? {} : readJson(bytes);
  const json: Json = optional && read === null ? {} : read;
  if (json === null || typeof json !== 'object' || Array.isArray(json)) throw malformed('json', 'The body is not a JSON object.');
  const result = SCHEMAS[route].safeParse(json);
  if (!result.success) throw shapeRefusal(result.error);
  return result.data as Record<string, unknown>;
}

function shapeRefusal(error: z.ZodError): Refused {
  const unknown = error.issues.find((i) => i.code === 'unrecognized_keys');
  if (unknown && unknown.code === 'unrecognized_keys') {
    const at = unknown.path.map(String).join('.');
    const key = unknown.keys[0];
    return forbidden(
      'unknown-field',
      `The body has the field ${at ? `${at}.` : ''}${key}, which this endpoint does not know. It refuses what it does not know rather than let Docker read it (Docker takes field names whatever their case), so write only Docker's own field names, in Docker's own spelling.`,
    );
  }
  const issue = error.issues[0];
  const at = issue.path.map(String).join('.');
  return malformed('field-type', `The body's ${at || 'value'} is not what Docker takes there (${issue.message}).`);
}

function empty(v: unknown): boolean {
  if (v === undefined || v === null) return true;
  if (Array.isArray(v)) return v.length === 0;
  return typeof v === 'object' && Object.keys(v).length === 0;
}

function within(path: string, dir: string): boolean {
  return path === dir || path.startsWith(dir === '/' ? '/' : `${dir}/`);
}

/**
 * Where a container reaches Docker from inside, as a client binds it: the path its DOCKER_HOST
 * names (DOCKER_ENDPOINT.containerSocket, which Testcontainers binds into its reaper) and Docker's
 * usual places. On the host these are the raw socket or nothing; the bind gets the endpoint's own.
 */
const DOCKER_SOCKET_PATHS: readonly string[] = [CONTAINER.dockerSocket, '/run/docker.sock', DOCKER_ENDPOINT.containerSocket];
/** The only security options that tighten: no-new-privileges. Everything else (seccomp, apparmor, label, systempaths) can only loosen. */
const SAFE_SECURITY_OPTS = new Set(['no-new-privileges', 'no-new-privileges:true', 'no-new-privileges=true']);
/** Bind modes that neither relabel the host folder (z, Z) nor propagate mounts back to it (shared, slave). */
const BIND_MODES = new Set(['ro', 'rw', 'nocopy', 'private', 'rprivate', 'consistent', 'cached', 'delegated']);
/** Docker's volume name grammar. */
const VOLUME_NAME = /^[A-Za-z0-9][A-Za-z0-9_.-]+$/;
const NETWORK_NAME = /^[A-Za-z0-9][A-Za-z0-9_.-]{0,254}$/;
/**
 * Networks every engine has, which any container may join; `host` is not one of them here.
 * `default` is the engine's default (bridge), which the docker CLI names in EndpointsConfig for a
 * plain `docker run` (NetworkMode "default" with an endpoint of the same name).
 */
const SHARED_NETWORKS = new Set(['bridge', 'none', 'default']);
/** Log drivers that write on this host only, and the options each may take. */
const LOG_OPTIONS: Record<string, readonly string[]> = {
  '': [],
  'json-file': ['max-size', 'max-file', 'compress', 'labels', 'labels-regex', 'env', 'env-regex', 'tag'],
  local: ['max-size', 'max-file', 'compress'],
  none: [],
};
const RESTART_POLICIES = new Set(['', 'no', 'always', 'unless-stopped', 'on-failure']);

export interface Judged {
  value: Record<string, unknown>;
  /** Named volumes the body uses that do not exist yet: the adapter creates them, labelled, first. */
  volumesToCreate: string[];
}

/** One judgement of one body against the facts. */
class Judge {
  readonly volumes = new Set<string>();

  constructor(
    readonly scope: EndpointScope,
    readonly facts: FactSource,
  ) {}

  /** Refuses an object that is not the caller's; answers the id to forward in place of `ref`. */
  own(kind: ObjectKind, ref: string, where: string): string {
    if (ref === '') throw malformed('field-type', `${where} names an empty ${kind}.`);
    if (this.facts.owner(kind, ref) !== 'own') {
      // 403, not the 404 a path's object gets: the docker CLI reads a 404 on create as a missing
      // image and pulls it. The same answer for another's and a missing object says nothing of which.
      throw new Refused(
        403,
        'not-owned',
        `${where} names the ${kind} ${ref}, which is not one this workspace's container created through this endpoint (or does not exist).`,
      );
    }
    return this.facts.id?.(kind, ref) ?? ref;
  }

  /**
   * A `container:<ref>` mode, a link's `<ref>[:alias]` or a VolumesFrom `<ref>[:mode]`, with the
   * container forwarded by its id (a link keeps the name it gave as its alias).
   */
  ownContainerIn(value: string, prefix: string, where: string, link = false): string {
    const rest = value.slice(prefix.length);
    const colon = rest.indexOf(':');
    const ref = (colon < 0 ? rest : rest.slice(0, colon)).replace(/^\//, '');
    const id = this.own('container', ref, where);
    // A link without an alias is known by the name it gave.
    if (link && colon < 0) return `${id}:${ref}`;
    return `${prefix}${id}${colon < 0 ? '' : rest.slice(colon)}`;
  }

  /**
   * Under an egress policy no network is a new container's own, internal ones included: on this
   * machine's Docker a container on an internal network reaches the host at that network's gateway
   * address (measured in test/engine/docker-endpoint-egress.test.ts), and so every host service
   * listening on all addresses, some of which lead out (docs/decisions/0056). The refusal holds
   * under the lookups' permissive facts, so bodyLookups makes it before any network is looked up:
   * another's network, or one that does not exist, is refused the same way (nothing is told).
   */
  refuseNetwork(ref: string, where: string): never {
    this.own('network', ref, where);
    return noNetwork(this.scope.egress!.mode, where, `the network ${ref}`);
  }

  volume(name: string, where: string): void {
    if (!VOLUME_NAME.test(name)) throw malformed('field-type', `${where}: ${name} is not a volume name.`);
    const o = this.facts.owner('volume', name);
    if (o === 'missing') {
      checkNotReserved(name, this.scope.reservedPrefix, `${where}: the volume`);
      this.volumes.add(name);
    } else if (o !== 'own')
      throw new Refused(
        403,
        'not-owned',
        `${where} names the volume ${name}, which another workspace or the host made; use a volume of this workspace's own.`,
      );
  }

  labels(labels: Record<string, string> | null | undefined, where: string): Record<string, string> {
    checkNoOwnerLabel(Object.keys(labels ?? {}), this.scope, where);
    return { ...(labels ?? {}), [ownerLabel(this.scope)]: this.scope.owner };
  }

  /**
   * A bind's host side: the endpoint's own socket in place of Docker's, or a realpath inside the
   * workspace folder with the folder's protected paths bound over it again.
   */
  bind(source: string, target: string, readonly: boolean, where: string): { source: string; nested: Mount[]; subpath: boolean } {
    const socket = this.scope.endpointSocket;
    const real = DOCKER_SOCKET_PATHS.includes(source) || source === socket ? socket : this.facts.realpath(source);
    if (DOCKER_SOCKET_PATHS.includes(source) && socket === undefined) {
      throw forbidden(
        'docker-socket',
        `${where} binds the Docker socket, and this endpoint has no socket of its own to give a new container.`,
      );
    }
    if (real === undefined) {
      throw forbidden(
        'bind-missing',
        `${where} binds ${source}, which does not exist on the host. Create it first: Docker would make it as root, following any link on the way.`,
      );
    }
    if (real === socket) return { source: real, nested: [], subpath: false };
    if (!within(real, this.scope.workspace)) {
      throw forbidden(
        'bind-source',
        `${where} binds ${source} (${real} on the host), which is outside this workspace's folder ${this.scope.workspace}. Bind a path inside the folder, or use a volume.`,
      );
    }
    const protectedPaths = this.scope.protectedPaths ?? [];
    for (const p of protectedPaths) {
      if (p.readonly && !readonly && within(real, p.path)) {
        throw forbidden(
          'protected-path',
          `${where} binds ${real} read-write, but it is one of the folder's protected paths (read-only in the workspace container, since programs on the host run it). Bind it read-only (:ro).`,
        );
      }
    }
    const nested = readonly
      ? []
      : protectedPaths
          .filter((p: ProtectedPath) => p.path !== real && within(p.path, real))
          .map((p) => ({
            Type: 'bind',
            Source: p.path,
            Target: cleanPath(`${target}/${p.path.slice(real.length)}`),
            ReadOnly: p.readonly,
          }));
    return { source: real, nested, subpath: real !== this.scope.workspace };
  }
}

/** Phase 2: the body judged and rewritten. Throws Refused. */
export function judgeBody(route: BodyRoute, value: Record<string, unknown>, scope: EndpointScope, facts: FactSource): Judged {
  const j = new Judge(scope, facts);
  let out: Record<string, unknown> = value;
  switch (route) {
    case 'container-create':
      out = judgeCreate(value as Create, j);
      break;
    case 'container-update': {
      checkResources(value, j, 'The update');
      const name = (value.RestartPolicy as { Name?: string | null } | null | undefined)?.Name ?? '';
      if (name !== '' && name !== 'no') {
        throw forbidden(
          'update-restart',
          `An update may not give a container the restart policy ${name}: set it when the container is created, where its binds are checked for it.`,
        );
      }
      break;
    }
    case 'exec-create':
      if (value.Privileged === true)
        throw forbidden('privileged', 'A privileged exec (Privileged) is not offered: it has every capability of the host.');
      break;
    case 'network-create':
      out = judgeNetworkCreate(value, j);
      break;
    case 'network-connect': {
      const container = j.own('container', (value.Container as string | null | undefined) ?? '', 'The connect');
      const endpoint = value.EndpointConfig as Endpoint | null | undefined;
      if (scope.egress && endpoint?.NetworkID) j.refuseNetwork(endpoint.NetworkID, 'The connect’s EndpointConfig.NetworkID');
      out = { ...value, Container: container, EndpointConfig: judgeEndpoint(endpoint, j, 'The connect') };
      break;
    }
    case 'network-disconnect':
      out = { ...value, Container: j.own('container', (value.Container as string | null | undefined) ?? '', 'The disconnect') };
      break;
    case 'volume-create':
      out = judgeVolumeCreate(value, j);
      break;
    case 'commit': {
      // The image is the caller's by its image label. The owner label is set empty: the engine
      // would otherwise copy the committed container's into the image, and from the image into
      // every container made from it, the host's too.
      const labels = value.Labels as Record<string, string> | null | undefined;
      checkNoOwnerLabel(Object.keys(labels ?? {}), scope, 'The commit');
      out = { ...value, Labels: { ...(labels ?? {}), [ownerLabel(scope)]: '', [imageOwnerLabel(scope)]: scope.owner } };
      break;
    }
    case 'auth':
      // The daemon logs in at the registry itself (a login is a request to it, with the credentials).
      if (scope.egress) {
        const server = (value.serveraddress as string | null | undefined) ?? '';
        checkRegistry(scope.egress, registryOfLogin(server), `logging in to ${server || 'Docker Hub'}`);
      }
      break;
    case 'exec-start':
    case 'container-stop':
    case 'container-restart':
    case 'container-kill':
      break;
  }
  return { value: out, volumesToCreate: [...j.volumes] };
}

function judgeCreate(v: Create, j: Judge): Create {
  const labels = j.labels(v.Labels, 'The container');
  if (v.Image && j.facts.imageCarriesOwner?.(v.Image)) {
    throw forbidden(
      'owner-image',
      `The image ${v.Image} carries the label ${ownerLabel(j.scope)}=${j.scope.owner}, which the engine would copy into the container: a container made from it, by anyone, would look like this workspace's own, so none is made from it here. Build it again without that label.`,
    );
  }
  const hc: HostConfig = { ...(v.HostConfig ?? {}) };
  checkHostConfig(hc, j);
  checkResources(hc, j, 'HostConfig');

  let subpath = false;
  const nested: Mount[] = [];
  if (hc.Binds) {
    hc.Binds = hc.Binds.map((raw) => {
      const bind = judgeBindSpec(raw, j);
      subpath ||= bind.subpath;
      nested.push(...bind.nested);
      return bind.spec;
    });
  }
  const mounts = (hc.Mounts ?? []).map((m) => {
    const r = judgeMount(m, j);
    subpath ||= r.subpath;
    nested.push(...r.nested);
    return r.mount;
  });
  if (hc.Mounts || nested.length > 0) hc.Mounts = [...mounts, ...nested];

  const restart = hc.RestartPolicy?.Name ?? '';
  if (!RESTART_POLICIES.has(restart)) throw malformed('field-type', `HostConfig.RestartPolicy.Name ${restart} is not a restart policy.`);
  if (restart !== '' && restart !== 'no' && (subpath || !empty(hc.VolumesFrom))) {
    throw forbidden(
      'bind-restart',
      `A container with a bind of a path below the folder (or volumes from another container) may not have the restart policy ${restart}: Docker resolves the path again each time it restarts the container by itself, after the container may have replaced part of it with a link. Bind the folder itself, or leave the restart policy out.`,
    );
  }

  const endpoints: Record<string, Endpoint | null | undefined> = {};
  for (const [name, settings] of Object.entries(v.NetworkingConfig?.EndpointsConfig ?? {})) {
    network(name, j, `NetworkingConfig.EndpointsConfig`);
    endpoints[name] = judgeEndpoint(settings, j, `NetworkingConfig.EndpointsConfig.${name}`);
  }
  // Judged by the client's names (its sentences name what the client wrote), not the ids forwarded.
  if (j.scope.egress) egressNetworks({ ...hc, NetworkMode: v.HostConfig?.NetworkMode }, v.NetworkingConfig?.EndpointsConfig ?? {}, j);
  const ports = judgePortBindings(hc.PortBindings, hc.PublishAllPorts, j.scope);
  if (ports !== undefined) hc.PortBindings = ports;
  const out: Create = { ...v, Labels: labels, HostConfig: hc };
  if (v.NetworkingConfig?.EndpointsConfig) out.NetworkingConfig = { ...v.NetworkingConfig, EndpointsConfig: endpoints };
  delete out.name;
  delete out.platform;
  return out;
}

/**
 * Under an egress policy a new container gets no network of its own: NetworkMode none or an owned
 * container's namespace (container:, whose ownership checkHostConfig proved); any network it names,
 * an internal one included, is refused, and so is every endpoint it names (by key or NetworkID)
 * other than none. An empty NetworkMode is the engine's default (bridge), and so refused.
 */
function egressNetworks(hc: HostConfig, endpoints: Record<string, Endpoint | null | undefined>, j: Judge): void {
  const mode = j.scope.egress!.mode;
  const nm = hc.NetworkMode ?? '';
  if (nm === '' || nm === 'default' || nm === 'bridge')
    noNetwork(mode, 'HostConfig.NetworkMode', nm === '' ? 'the engine’s default network (an empty NetworkMode)' : `the ${nm} network`);
  if (nm !== 'none' && !nm.startsWith('container:')) j.refuseNetwork(nm, 'HostConfig.NetworkMode');
  // A namespace of its own is no network only when that container has none (checkHostConfig proved it is the caller's).
  if (nm.startsWith('container:')) {
    const shared = nm.slice('container:'.length);
    if (hasNetwork(j.facts.network(shared))) networkedContainer(mode, shared, 'a new container sharing its network (--network container:)');
  }
  for (const [name, settings] of Object.entries(endpoints)) {
    const where = `NetworkingConfig.EndpointsConfig.${name}`;
    if (name === 'default' || name === 'bridge') noNetwork(mode, where, `the ${name} network`);
    if (name !== 'none') j.refuseNetwork(name, where);
    if (settings?.NetworkID) j.refuseNetwork(settings.NetworkID, `${where}.NetworkID`);
  }
}

function nonEmpty(value: unknown, rule: Parameters<typeof forbidden>[0], message: string): void {
  if (!empty(value)) throw forbidden(rule, message);
}

function checkHostConfig(hc: HostConfig, j: Judge): void {
  if (hc.Privileged === true)
    throw forbidden(
      'privileged',
      'A privileged container (HostConfig.Privileged) has every device and capability of this host; it is not offered.',
    );
  nonEmpty(
    hc.CapAdd,
    'cap-add',
    'Adding capabilities (HostConfig.CapAdd) is not offered: Docker’s default set is what a container here gets. Dropping them (CapDrop) is fine.',
  );
  for (const opt of hc.SecurityOpt ?? []) {
    if (!SAFE_SECURITY_OPTS.has(opt)) {
      throw forbidden(
        'security-opt',
        `The security option ${opt} is not offered: only no-new-privileges is (seccomp, apparmor, label and systempaths options can only loosen the container's confinement).`,
      );
    }
  }
  nonEmpty(hc.Sysctls, 'sysctls', 'Setting kernel parameters (HostConfig.Sysctls) is not offered.');
  nonEmpty(hc.Devices, 'devices', 'Host devices (HostConfig.Devices) are not offered.');
  nonEmpty(hc.DeviceRequests, 'device-requests', 'Device requests (HostConfig.DeviceRequests, GPUs) are not offered.');
  nonEmpty(
    hc.DeviceCgroupRules,
    'device-cgroup-rules',
    'Device cgroup rules (HostConfig.DeviceCgroupRules) are not offered: they let a container open host devices.',
  );
  if (hc.MaskedPaths !== undefined && hc.MaskedPaths !== null) {
    throw forbidden(
      'masked-paths',
      'HostConfig.MaskedPaths replaces the paths Docker hides under /proc and /sys; leave it out (an empty list unmasks them).',
    );
  }
  if (hc.ReadonlyPaths !== undefined && hc.ReadonlyPaths !== null) {
    throw forbidden(
      'readonly-paths',
      'HostConfig.ReadonlyPaths replaces the paths Docker makes read-only under /proc; leave it out (an empty list makes them writable).',
    );
  }
  if (hc.Runtime)
    throw forbidden('runtime', `The runtime ${hc.Runtime} is not offered: containers here run with the engine's default runtime.`);
  if (!['', 'default'].includes(hc.Isolation ?? ''))
    throw malformed('field-type', `HostConfig.Isolation ${hc.Isolation} is not taken on this engine.`);
  nonEmpty(hc.StorageOpt, 'storage-opt', 'Storage driver options (HostConfig.StorageOpt) are not offered.');
  nonEmpty(hc.Annotations, 'annotations', 'Runtime annotations (HostConfig.Annotations) are not offered: a runtime may act on them.');
  if (hc.ContainerIDFile) throw forbidden('container-id-file', 'HostConfig.ContainerIDFile names a file on the host; leave it out.');
  if (hc.VolumeDriver)
    throw forbidden('volume-driver', `The volume driver ${hc.VolumeDriver} is not offered: volumes here use the local driver.`);
  if ((hc.OomScoreAdj ?? 0) < 0)
    throw forbidden(
      'oom',
      'A negative HostConfig.OomScoreAdj makes the host kill its own processes before this container; it is not offered.',
    );

  const log = hc.LogConfig?.Type ?? '';
  const options = LOG_OPTIONS[log];
  if (options === undefined) {
    throw forbidden(
      'log-driver',
      `The log driver ${log} is not offered: only json-file, local and none, which write on this host alone (others reach the network, or cloud credentials, from the daemon).`,
    );
  }
  const badOption = Object.keys(hc.LogConfig?.Config ?? {}).find((k) => !options.includes(k));
  if (badOption !== undefined)
    throw forbidden('log-driver', `The log option ${badOption} is not offered for the ${log || 'default'} log driver.`);

  hc.PidMode = namespace(hc.PidMode, 'PidMode', 'pid-mode', ['', 'private'], true, j);
  hc.IpcMode = namespace(hc.IpcMode, 'IpcMode', 'ipc-mode', ['', 'none', 'private', 'shareable'], true, j);
  namespace(hc.UTSMode, 'UTSMode', 'uts-mode', [''], false, j);
  namespace(hc.UsernsMode, 'UsernsMode', 'userns-mode', [''], false, j);
  namespace(hc.CgroupnsMode, 'CgroupnsMode', 'cgroupns-mode', ['', 'private'], false, j);
  hc.Cgroup = namespace(hc.Cgroup, 'Cgroup', 'cgroupns-mode', [''], true, j);
  const nm = hc.NetworkMode ?? '';
  if (!['', 'default', 'bridge', 'none'].includes(nm)) {
    if (nm.startsWith('container:')) hc.NetworkMode = j.ownContainerIn(nm, 'container:', 'HostConfig.NetworkMode');
    else network(nm, j, 'HostConfig.NetworkMode');
  }
  if (hc.Links) hc.Links = hc.Links.map((link) => j.ownContainerIn(link, '', 'HostConfig.Links', true));
  if (hc.VolumesFrom) hc.VolumesFrom = hc.VolumesFrom.map((from) => j.ownContainerIn(from, '', 'HostConfig.VolumesFrom'));
}

/** A namespace mode: `host` is refused, `container:<name>` must name the container's own (forwarded by its id). */
function namespace(
  value: string | null | undefined,
  field: string,
  rule: Parameters<typeof forbidden>[0],
  allowed: readonly string[],
  containerMode: boolean,
  j: Judge,
): string | null | undefined {
  const v = value ?? '';
  if (allowed.includes(v)) return value;
  if (foldKey(v) === 'host')
    throw forbidden(rule, `HostConfig.${field} host shares a namespace of this host with the container; it is not offered.`);
  if (containerMode && v.startsWith('container:')) return j.ownContainerIn(v, 'container:', `HostConfig.${field}`);
  throw malformed('field-type', `HostConfig.${field} ${v} is not a mode Docker takes.`);
}

function network(name: string, j: Judge, where: string): void {
  if (SHARED_NETWORKS.has(name)) return;
  if (foldKey(name) === 'host')
    throw forbidden(
      'network-mode',
      `${where} asks for the host's network, which is not offered: it would reach what listens on this host.`,
    );
  if (!NETWORK_NAME.test(name)) throw malformed('field-type', `${where}: ${name} is not a network name.`);
  j.own('network', name, where);
}

function judgeEndpoint(e: Endpoint | null | undefined, j: Judge, where: string): Endpoint | null | undefined {
  if (!e) return e;
  const out: Endpoint = { ...e };
  // Docker joins the network an endpoint's NetworkID names in preference to the map key or the
  // path (getNetworkID in the daemon's container_operations.go), so it must be the container's own too.
  if (e.NetworkID) out.NetworkID = j.own('network', e.NetworkID, `${where}.NetworkID`);
  if (e.Links) out.Links = e.Links.map((link) => j.ownContainerIn(link, '', `${where}.Links`, true));
  nonEmpty(
    e.DriverOpts,
    'network-options',
    `${where}.DriverOpts: network driver options are not offered (some set kernel parameters on the host's side of the link).`,
  );
  return out;
}

function checkResources(r: Record<string, unknown>, _j: Judge, where: string): void {
  nonEmpty(r.Devices, 'devices', `Host devices (${where}.Devices) are not offered.`);
  nonEmpty(r.DeviceRequests, 'device-requests', `Device requests (${where}.DeviceRequests, GPUs) are not offered.`);
  nonEmpty(r.DeviceCgroupRules, 'device-cgroup-rules', `Device cgroup rules (${where}.DeviceCgroupRules) are not offered.`);
  if (r.CgroupParent)
    throw forbidden('cgroup-parent', `${where}.CgroupParent places the container outside the cgroup Docker gives it; leave it out.`);
  for (const k of ['BlkioWeightDevice', 'BlkioDeviceReadBps', 'BlkioDeviceWriteBps', 'BlkioDeviceReadIOps', 'BlkioDeviceWriteIOps']) {
    nonEmpty(r[k], 'blkio-devices', `${where}.${k} names host block devices; it is not offered (BlkioWeight is).`);
  }
  if (r.CpuRealtimePeriod || r.CpuRealtimeRuntime)
    throw forbidden('realtime', `Real-time CPU time (${where}.CpuRealtimePeriod, CpuRealtimeRuntime) is not offered.`);
  const realtime = ((r.Ulimits ?? []) as Array<{ Name?: string | null }>).find((u) => isRealtimeUlimit(u.Name ?? ''));
  if (realtime !== undefined) throw realtimeUlimit(`${where}.Ulimits`, realtime.Name ?? '');
  if (r.OomKillDisable === true)
    throw forbidden('oom', `${where}.OomKillDisable makes the host kill its own processes instead of this container; it is not offered.`);
}

function judgeBindSpec(raw: string, j: Judge): { spec: string; nested: Mount[]; subpath: boolean } {
  const where = `The bind ${raw}`;
  const parts = raw.split(':');
  if (parts.length === 1) {
    if (!raw.startsWith('/')) throw malformed('field-type', `${where} is neither a bind nor a volume.`);
    return { spec: raw, nested: [], subpath: false };
  }
  if (parts.length > 3) throw malformed('field-type', `${where} has more than three parts.`);
  const [source, target, mode = ''] = parts;
  if (!target.startsWith('/')) throw malformed('field-type', `${where} has a target that is not an absolute path.`);
  const modes = mode === '' ? [] : mode.split(',');
  for (const m of modes) {
    if (BIND_MODES.has(m)) continue;
    const why =
      m === 'z' || m === 'Z'
        ? 'it relabels the folder on the host for SELinux'
        : /shared|slave/.test(m)
          ? 'it propagates mounts back to the host'
          : 'it is not a mode this endpoint knows';
    throw forbidden('bind-options', `${where} has the mode ${m}, which is not offered: ${why}.`);
  }
  if (!source.startsWith('/')) {
    j.volume(source, where);
    return { spec: raw, nested: [], subpath: false };
  }
  const b = j.bind(source, target, modes.includes('ro'), where);
  return { spec: [b.source, target, ...(mode !== '' ? [mode] : [])].join(':'), nested: b.nested, subpath: b.subpath };
}

function judgeMount(m: Mount, j: Judge): { mount: Mount; nested: Mount[]; subpath: boolean } {
  const where = `The mount at ${m.Target ?? '(no target)'}`;
  if (!m.Target?.startsWith('/')) throw malformed('field-type', `${where} has no absolute target.`);
  if (!empty(m.ImageOptions) || !empty(m.ClusterOptions))
    throw forbidden('mount-type', `${where} is an image or cluster mount, which is not offered.`);
  switch (m.Type ?? '') {
    case 'bind': {
      if (!m.Source?.startsWith('/')) throw malformed('field-type', `${where} binds a source that is not an absolute path.`);
      if (!empty(m.VolumeOptions) || !empty(m.TmpfsOptions))
        throw malformed('field-type', `${where} is a bind with volume or tmpfs options.`);
      const o = m.BindOptions ?? {};
      if (o.Propagation && !['private', 'rprivate'].includes(o.Propagation)) {
        throw forbidden(
          'bind-options',
          `${where} has the propagation ${o.Propagation}, which would carry mounts back to the host; it is not offered.`,
        );
      }
      if (o.CreateMountpoint === true) {
        throw forbidden(
          'bind-options',
          `${where} asks Docker to create the source (CreateMountpoint): create it first, since Docker would make it as root, following any link on the way.`,
        );
      }
      if (o.ReadOnlyNonRecursive === true)
        throw forbidden('bind-options', `${where} is read-only but not below its own mounts (ReadOnlyNonRecursive); it is not offered.`);
      const b = j.bind(m.Source, m.Target, m.ReadOnly === true, where);
      return { mount: { ...m, Source: b.source }, nested: b.nested, subpath: b.subpath };
    }
    case 'volume': {
      if (!empty(m.BindOptions) || !empty(m.TmpfsOptions))
        throw malformed('field-type', `${where} is a volume with bind or tmpfs options.`);
      const o = m.VolumeOptions ?? {};
      const driver = o.DriverConfig as { Name?: unknown; Options?: unknown } | null | undefined;
      const plainDriver =
        empty(driver) ||
        (typeof driver === 'object' &&
          Object.keys(driver!).every((k) => k === 'Name' || k === 'Options') &&
          ['', 'local', undefined, null].includes(driver!.Name as string) &&
          empty(driver!.Options));
      if (!plainDriver)
        throw forbidden(
          'volume-driver',
          `${where} names a volume driver or its options, which are not offered (a local volume with options can bind any host path).`,
        );
      checkNoOwnerLabel(Object.keys(o.Labels ?? {}), j.scope, `${where}'s volume labels`);
      if (m.Source) j.volume(m.Source, where);
      return { mount: m, nested: [], subpath: false };
    }
    case 'tmpfs':
      if (m.Source) throw malformed('field-type', `${where} is a tmpfs with a source.`);
      return { mount: m, nested: [], subpath: false };
    default:
      throw forbidden('mount-type', `${where} has the type ${m.Type ?? '(none)'}; only bind, volume and tmpfs mounts are offered.`);
  }
}

function judgeNetworkCreate(v: Record<string, unknown>, j: Judge): Record<string, unknown> {
  const name = (v.Name as string | null | undefined) ?? '';
  if (!NETWORK_NAME.test(name)) throw malformed('field-type', `The network name ${name} is not one Docker takes.`);
  checkNotReserved(name, j.scope.reservedPrefix, 'The network');
  if (!['', 'bridge'].includes((v.Driver as string | null | undefined) ?? '')) {
    throw forbidden(
      'network-driver',
      `The network driver ${String(v.Driver)} is not offered: networks here are bridges (macvlan, ipvlan and overlay reach past this host's own bridge).`,
    );
  }
  nonEmpty(
    v.Options,
    'network-options',
    'Network driver options (Options) are not offered: they can name host interfaces and change how the bridge is made.',
  );
  const ipam = v.IPAM as { Driver?: string | null; Options?: unknown } | null | undefined;
  if (!['', 'default'].includes(ipam?.Driver ?? ''))
    throw forbidden('network-driver', `The IPAM driver ${String(ipam?.Driver)} is not offered.`);
  nonEmpty(ipam?.Options, 'network-options', 'IPAM driver options are not offered.');
  if (
    v.Ingress === true ||
    v.ConfigOnly === true ||
    !empty(v.ConfigFrom) ||
    !['', 'local'].includes((v.Scope as string | null | undefined) ?? '')
  ) {
    throw forbidden(
      'network-options',
      'Swarm network settings (Ingress, ConfigOnly, ConfigFrom, a scope other than local) are not offered.',
    );
  }
  if (j.scope.egress) networkRefused(j.scope.egress.mode);
  return { ...v, Labels: j.labels(v.Labels as Record<string, string> | null | undefined, 'The network') };
}

function judgeVolumeCreate(v: Record<string, unknown>, j: Judge): Record<string, unknown> {
  const name = (v.Name as string | null | undefined) ?? '';
  if (name !== '' && !VOLUME_NAME.test(name)) throw malformed('field-type', `The volume name ${name} is not one Docker takes.`);
  checkNotReserved(name, j.scope.reservedPrefix, 'The volume');
  if (!['', 'local'].includes((v.Driver as string | null | undefined) ?? ''))
    throw forbidden('volume-driver', `The volume driver ${String(v.Driver)} is not offered.`);
  nonEmpty(
    v.DriverOpts,
    'volume-options',
    'Volume driver options (DriverOpts) are not offered: a local volume with type, o and device options is a bind of any host path.',
  );
  nonEmpty(v.ClusterVolumeSpec, 'swarm', 'Cluster volumes belong to Swarm, which this endpoint does not offer.');
  return { ...v, Labels: j.labels(v.Labels as Record<string, string> | null | undefined, 'The volume') };
}

/**
 * Runs the judgement with the most permissive facts (every object the container's own, every bind
 * source the folder itself) to learn which facts it needs: a refusal under those facts holds under
 * any facts.
 */
export function lookupsOf(
  route: BodyRoute,
  value: Record<string, unknown>,
  scope: EndpointScope,
): { bindSources: string[]; objects: ObjectRefs } {
  const objects = noRefs();
  const bindSources: string[] = [];
  const add = (list: string[], v: string) => {
    if (!list.includes(v)) list.push(v);
  };
  judgeBody(route, value, scope, {
    owner: (kind, ref) => {
      add(objects[REF_LIST[kind]], ref);
      return 'own';
    },
    internal: () => true,
    imageCarriesOwner: (ref) => {
      add(objects.images, ref);
      return false;
    },
    network: () => ({ mode: 'none' }),
    realpath: (source) => {
      add(bindSources, source);
      return scope.workspace;
    },
  });
  return { bindSources, objects };
}

/**
 * Before Docker starts a container again: every bind must still lead where it led when it was
 * created (the policy wrote realpaths, so the realpath of each source is the source itself), or a
 * path in the folder was replaced by a link since.
 */
export function judgeStartMounts(
  mounts: readonly InspectedMount[],
  scope: EndpointScope,
  realpath: (source: string) => string | undefined,
): void {
  for (const m of mounts) {
    if ((m.Type ?? 'bind') !== 'bind' || !m.Source) continue;
    if (m.Source === scope.endpointSocket) continue;
    const real = realpath(m.Source);
    if (real !== m.Source || !within(real, scope.workspace)) {
      throw forbidden(
        'bind-source',
        `The container binds ${m.Source}, which now leads to ${real ?? 'nothing'} on the host: a path in the folder was replaced since the container was created, so it is not started. Remove the container and create it again.`,
      );
    }
  }
}
