/**
 * The policy of the Docker Engine API endpoint each workspace container gets in place of the host's
 * raw socket (root on this host): which requests pass, rewritten how, and which are refused
 * (docs/decisions/0047-docker-endpoint-policy.md). The forwarding server (engine/dockerEndpoint/server.ts)
 * does the I/O; this module only judges. Pure: no I/O.
 *
 * The adapter calls it in this order for each request:
 *   1. classify(head, scope): the method, target and headers alone. A refusal is answered at once;
 *      otherwise the Classified says what to forward (target, headers), the body to expect, whether
 *      Docker takes over the connection, and which objects named in the path must be the caller's.
 *   2. checkOwned(classified, owner): the adapter inspects each object in `owned` and answers
 *      whose it is (isOwned over its labels; an exec by its container's).
 *   3. For a JSON body (classified.body.kind === 'json'): read at most body.limit bytes,
 *      parseBody, then bodyLookups (the bind sources to resolve with realpath on the host and the
 *      objects to inspect), then checkBody with those facts. Create volumesToCreate first (and
 *      check the answer's labels with isOwned: a name someone else took in between is refused),
 *      then forward the body checkBody returns, never the client's.
 *   4. classified.recheckBinds (start, restart): inspect the container, resolve startBindSources,
 *      checkStartBinds.
 *   5. classified.response === 'scrub-info': pass Docker's answer through scrubInfo.
 */
import { LABELS, CONTAINER } from '../../contract/upstream';
import { DROPPED_BODY, hasBodySchema, judgeBody, judgeStartMounts, lookupsOf, readBody } from './bodies';
import {
  classifyHead,
  type Classified,
  type EndpointScope,
  type ObjectKind,
  type ObjectRefs,
  type Ownership,
  type ProtectedPath,
  REF_LIST,
  type RequestHead,
  type RouteId,
} from './routes';
import { connectRefused, type ContainerNetwork, hasNetwork, networkedContainer } from './egress';
import { malformed, Refused, type Refusal, type RuleId } from './wire';
import { cleanPath } from '../naming';
import type { InspectedMount } from '../posture';

export type { ContainerNetwork } from './egress';
export type {
  BodyPlan,
  EndpointEgress,
  EndpointPublish,
  Classified,
  EndpointScope,
  ObjectKind,
  ObjectRefs,
  Ownership,
  ProtectedPath,
  RequestHead,
  RouteId,
} from './routes';
export { ENDPOINT_LIMITS, OPT_OUT, type Refusal, type RefusalStatus, type RuleId } from './wire';
export { DROPPED_BODY } from './bodies';
export { containerOwnership, forwardTarget, imageOwnership, imageNamespace, type InspectedImage } from './routes';

/** What each rule refuses, in a line: the ids a Refusal carries. */
export const RULES: Record<RuleId, string> = {
  target:
    'A request target that is not a plain origin-form path: absolute-form, fragment, non-ASCII, percent-encoded path, dot or empty segments, backslash, over-long.',
  'api-version': `A version prefix other than /v1.${24}…/v1.99 (older versions take a HostConfig on start).`,
  query: 'A malformed query: a bad percent-escape, a semicolon, a parameter given twice, a value of the wrong kind.',
  method: 'A method the route does not take (HEAD only on /_ping and a container archive).',
  headers:
    'Ambiguous framing or hop-by-hop headers: Content-Length with Transfer-Encoding, two lengths, Expect other than 100-continue, form bodies.',
  upgrade: 'An Upgrade (tcp, h2c) on a route that does not take over the connection, or the wrong protocol.',
  'body-size': 'A JSON body over its bound (1 MiB for create and commit, 256 KiB otherwise).',
  'unknown-route': 'Anything the policy does not recognise.',
  swarm: 'Swarm: swarm, services, nodes, tasks, secrets, configs, cluster volumes.',
  plugins: 'Plugins.',
  'not-owned': 'An object (container, exec, volume, network, removed image) that is not labelled as this workspace container’s own.',
  json: 'A body that is not strict JSON (encoding, depth, numbers, trailing data).',
  'duplicate-key': 'A key given twice in a body, compared as Docker does (without regard to case).',
  'unknown-field': 'A field Docker’s structs do not have in exactly that spelling (Docker would match it case-insensitively).',
  'field-type': 'A value of the wrong type or grammar.',
  'owner-label': 'A client that sets the owner label itself.',
  privileged: 'Privileged containers and execs.',
  'pid-mode': 'The host PID namespace.',
  'ipc-mode': 'The host IPC namespace.',
  'uts-mode': 'The host UTS namespace.',
  'network-mode': 'The host network (NetworkMode, EndpointsConfig).',
  'userns-mode': 'The host user namespace.',
  'cgroupns-mode': 'The host cgroup namespace.',
  devices: 'Host devices.',
  'device-requests': 'Device requests (GPUs).',
  'device-cgroup-rules': 'Device cgroup rules.',
  'cap-add': 'Added capabilities.',
  'security-opt': 'Security options other than no-new-privileges.',
  sysctls: 'Sysctls.',
  'masked-paths': 'A MaskedPaths list (an empty one unmasks /proc).',
  'readonly-paths': 'A ReadonlyPaths list.',
  runtime: 'A runtime other than the engine’s default.',
  'cgroup-parent': 'A cgroup parent (container, update or build).',
  'log-driver': 'Log drivers other than json-file, local and none, and their unknown options.',
  oom: 'OomKillDisable and a negative OomScoreAdj.',
  'storage-opt': 'Storage driver options.',
  annotations: 'Runtime annotations.',
  'blkio-devices': 'Block IO settings that name host devices.',
  realtime: 'Real-time CPU time: CpuRealtimePeriod, CpuRealtimeRuntime, and the rtprio and rttime ulimits (create, update, build).',
  'container-id-file': 'ContainerIDFile (a path on the host).',
  'volume-driver': 'Volume drivers other than local, in HostConfig, a mount or a volume create.',
  'volume-options': 'Local volumes with driver options (type, o, device: a bind of any host path).',
  'mount-type': 'Mounts other than bind, volume and tmpfs.',
  'bind-source': 'A bind outside the workspace folder (by realpath), or one whose path changed before a start.',
  'bind-missing': 'A bind of a path that does not exist (Docker would create it as root).',
  'bind-options': 'Bind modes that relabel (z, Z) or propagate (shared, slave), CreateMountpoint, ReadOnlyNonRecursive.',
  'bind-restart': 'A restart policy on a container with a bind below the folder, or VolumesFrom.',
  'protected-path': 'A read-write bind at or inside a protected path of the folder.',
  'docker-socket': 'A bind of the Docker socket when the endpoint has no socket of its own to give.',
  'network-driver': 'Network and IPAM drivers other than bridge and default.',
  'network-options': 'Network, IPAM and endpoint driver options; Swarm network settings.',
  'update-restart': 'An update that sets a restart policy.',
  checkpoint: 'Starting from a checkpoint.',
  'build-remote': 'A build from a remote context (remote=).',
  'build-network': 'A build with a network mode other than default, bridge or none.',
  'build-option': 'Build security options and outputs.',
  'buildkit-grpc':
    'BuildKit’s own API (/grpc: docker buildx, Compose builds), whose requests the policy cannot read and where the daemon grants network.host; the classic /build is offered.',
  'image-import': 'Image import (fromSrc).',
  'commit-changes':
    'A commit change that is not one plain instruction: ONBUILD, a comment or parser directive, a line continued into the next, odd white space, a label key quoted, escaped or expanded.',
  'runtime-image': 'A pull, tag, build or commit that names Toolbox’s own runtime image repository.',
  'image-name': 'A tag, build or commit onto a name outside the workspace’s own (localhost/<workspace container>/…).',
  'owner-image': 'A container made from an image that carries the workspace’s owner label (it could not be told from one the host made).',
  'reserved-name':
    'A container, volume or network named in Toolbox’s own namespace (its workspace containers, the peer anchor, the socket volume).',
  'published-port':
    'A published port on an address other than loopback or the one the workspace container reaches this host at (unless the user allows any), PublishAllPorts, a host port below 1024 or one Toolbox listens on.',
  egress:
    'Under a folder’s egress policy (ask, allowlist): a container with a network of its own (anything but none or a container of its own, internal networks included), a network create, a network connect, a build, a push, a pull, search or login at a registry the policy does not allow, and an exec, start, attach or copy into a container of its own that has a network.',
};

function attempt<T>(work: () => T): T | Refusal {
  try {
    return work();
  } catch (e) {
    if (e instanceof Refused) return e.refusal;
    throw e;
  }
}

export function isRefusal(v: unknown): v is Refusal {
  return typeof v === 'object' && v !== null && (v as { kind?: unknown }).kind === 'refuse';
}

/** Phase 1: the request head. */
export function classify(head: RequestHead, scope: EndpointScope): Classified | Refusal {
  return attempt(() => classifyHead(head, scope));
}

/** Whether an existing object is the caller's: its owner label names the caller. */
export function isOwned(labels: Readonly<Record<string, string>> | null | undefined, scope: EndpointScope): boolean {
  return labels?.[scope.ownLabel ?? LABELS.dockerOwner] === scope.owner;
}

/**
 * Phase 1's objects, proven: each must be 'own'. An object of someone else's is answered as one
 * that does not exist (404), so the endpoint does not tell the caller what else is on the engine.
 */
export function checkOwned(
  c: Classified,
  owner: (kind: ObjectKind, ref: string) => Ownership,
  internal?: (network: string) => boolean | undefined,
): Refusal | undefined {
  for (const kind of Object.keys(REF_LIST) as ObjectKind[]) {
    for (const ref of c.owned[REF_LIST[kind]]) {
      if (owner(kind, ref) !== 'own') {
        return new Refused(
          404,
          'not-owned',
          `No ${kind} ${ref} here: through this endpoint a container reaches only the objects it created through it (labelled ${LABELS.dockerOwner}).`,
        ).refusal;
      }
    }
  }
  // Under an egress policy a connect is refused, to an internal network too: a container on one
  // reaches this host at its gateway (docs/decisions/0056). `internal` serves the sentence only:
  // an internal network is named as such, so the caller sees why it is refused all the same.
  const connect = c.internalNetworks[0];
  if (connect !== undefined) return attempt(() => connectRefused(c.egressMode ?? 'allowlist', connect, internal?.(connect) === true));
  return undefined;
}

/**
 * Phase 1, under an egress policy, for a request that runs something in the container or exec of
 * its path (classified.runsInside): that container must have no network of its own (none, or the
 * namespace of one that has none), else the request would reach the network outside the policy.
 * `network` answers from the adapter's inspect (for an exec, its container's), with the mode of the
 * container a `container:` mode names looked up one step; undefined counts as a network.
 */
export function checkReach(
  c: Classified,
  network: (kind: 'container' | 'exec', ref: string) => ContainerNetwork | undefined,
): Refusal | undefined {
  if (c.runsInside === undefined) return undefined;
  const what = c.runsInside;
  const mode = c.egressMode ?? 'allowlist';
  for (const [kind, refs] of [
    ['container', c.owned.containers],
    ['exec', c.owned.execs],
  ] as const) {
    for (const ref of refs) {
      if (hasNetwork(network(kind, ref)))
        return attempt(() => networkedContainer(mode, kind === 'exec' ? `of the exec ${ref}` : ref, what));
    }
  }
  return undefined;
}

/** A JSON body read and shaped, not yet judged. */
export interface ParsedBody {
  readonly route: RouteId;
  readonly value: Readonly<Record<string, unknown>>;
}

/** Phase 2, first step: the body read strictly and held to its route's shape. */
export function parseBody(c: Classified, body: Uint8Array): ParsedBody | Refusal {
  return attempt(() => {
    const route = c.route;
    if (c.body.kind !== 'json' || !hasBodySchema(route)) throw malformed('headers', `${c.route} takes no JSON body.`);
    if (body.length > c.body.limit)
      throw malformed('body-size', `The body is larger than the ${c.body.limit} bytes this endpoint reads here.`, 413);
    if (body.length === 0 && !c.body.optional) throw malformed('json', 'The body is empty.');
    return { route, value: readBody(route, body, c.body.optional) };
  });
}

/** What the adapter must look up on the host and the engine before checkBody. */
export interface BodyLookups {
  /** Bind sources as the client wrote them: resolve each with realpath on the host. */
  bindSources: string[];
  /** Objects the body names: answer each with own, other or missing. */
  objects: ObjectRefs;
}

export function bodyLookups(parsed: ParsedBody, scope: EndpointScope): BodyLookups | Refusal {
  return attempt(() => lookupsOf(bodyRoute(parsed), { ...parsed.value }, scope));
}

/** The bind sources of a body, for realpath on the host (bodyLookups has them with the objects). */
export function bindSources(parsed: ParsedBody, scope: EndpointScope): string[] {
  const l = bodyLookups(parsed, scope);
  return isRefusal(l) ? [] : l.bindSources;
}

/** What the adapter looked up for a body. */
export interface Facts {
  owner(kind: ObjectKind, ref: string): Ownership;
  /**
   * Whether a network the body names (one owner answered 'own' for) was created internal, from the
   * engine's inspect (its Internal field), never from the client. Asked only under an egress
   * policy; absent or undefined is not internal.
   */
  internal?(network: string): boolean | undefined;
  /**
   * A container's network, from the engine's inspect (HostConfig.NetworkMode, and one step further
   * for a `container:` mode). Asked under an egress policy for the container a new one shares the
   * network of; absent or undefined counts as a network.
   */
  network?(container: string): ContainerNetwork | undefined;
  /** Each of bodyLookups' bindSources → its realpath on the host, or undefined when it does not exist. */
  realpaths: ReadonlyMap<string, string | undefined>;
  /** The id the engine answered for an object owner said is the caller's (forwarded in its place). */
  id?(kind: ObjectKind, ref: string): string | undefined;
  /** Whether an image (a create's) carries the caller's owner label, from the engine's inspect. */
  imageCarriesOwner?(ref: string): boolean;
}

export interface CheckedBody {
  /** What to forward, in place of the client's body: empty for a route whose body Docker does not read (DROPPED_BODY). */
  body: Buffer;
  /** Volumes to create first (POST /volumes/create with this body each), since Docker would create them without the owner label. */
  volumesToCreate: Array<{ name: string; body: Buffer }>;
}

/** Phase 2: the body judged against the facts and written again. */
export function checkBody(parsed: ParsedBody, scope: EndpointScope, facts: Facts): CheckedBody | Refusal {
  return attempt(() => {
    const judged = judgeBody(bodyRoute(parsed), { ...parsed.value }, scope, {
      owner: (kind, ref) => facts.owner(kind, ref),
      internal: (network) => facts.internal?.(network) === true,
      network: (container) => facts.network?.(container),
      realpath: (source) => facts.realpaths.get(source),
      id: (kind, ref) => facts.id?.(kind, ref),
      imageCarriesOwner: (ref) => facts.imageCarriesOwner?.(ref) === true,
    });
    return {
      body: DROPPED_BODY.has(parsed.route) ? Buffer.alloc(0) : Buffer.from(JSON.stringify(judged.value), 'utf8'),
      volumesToCreate: judged.volumesToCreate.map((name) => ({
        name,
        body: Buffer.from(
          JSON.stringify({ Name: name, Driver: 'local', Labels: { [scope.ownLabel ?? LABELS.dockerOwner]: scope.owner } }),
          'utf8',
        ),
      })),
    };
  });
}

function bodyRoute(parsed: ParsedBody) {
  if (!hasBodySchema(parsed.route)) throw malformed('headers', `${parsed.route} takes no JSON body.`);
  return parsed.route;
}

/** The bind sources of a container about to be started again (its inspect's Mounts), for realpath on the host. */
export function startBindSources(mounts: readonly InspectedMount[] | null | undefined): string[] {
  return [...new Set((mounts ?? []).filter((m) => (m.Type ?? 'bind') === 'bind' && m.Source).map((m) => m.Source!))];
}

/** Start and restart: every bind must still be its own realpath inside the folder. */
export function checkStartBinds(
  mounts: readonly InspectedMount[] | null | undefined,
  scope: EndpointScope,
  realpaths: ReadonlyMap<string, string | undefined>,
): Refusal | undefined {
  const r = attempt(() => judgeStartMounts(mounts ?? [], scope, (s) => realpaths.get(s)));
  return isRefusal(r) ? r : undefined;
}

/**
 * The protected paths of a workspace container (its inspect's Mounts): the binds nested in its
 * folder's bind at /workspace, with their host paths rebased onto the folder's realpath
 * (plan/protect.ts refuses links at protected paths, so below the folder the paths are real).
 */
export function scopeProtections(mounts: readonly InspectedMount[] | null | undefined, workspace: string): ProtectedPath[] {
  const binds = (mounts ?? []).filter((m) => (m.Type ?? 'bind') === 'bind' && m.Source && m.Destination);
  const root = binds.find((m) => cleanPath(m.Destination!) === CONTAINER.workspace);
  if (!root) return [];
  const rootSource = cleanPath(root.Source!);
  const out = new Map<string, ProtectedPath>();
  for (const m of binds) {
    const source = cleanPath(m.Source!);
    if (source === rootSource || !source.startsWith(`${rootSource}/`)) continue;
    const rel = source.slice(rootSource.length);
    if (cleanPath(m.Destination!) !== `${CONTAINER.workspace}${rel}`) continue;
    out.set(rel, { path: cleanPath(`${workspace}${rel}`), readonly: m.RW === false });
  }
  return [...out.values()];
}

/** /info fields that are this host's paths, proxy settings (which may carry credentials) or counts of everyone's objects. */
const INFO_BLANK: Record<string, unknown> = {
  DockerRootDir: '',
  HttpProxy: '',
  HttpsProxy: '',
  NoProxy: '',
  CDISpecDirs: [],
  DriverStatus: [],
  Labels: [],
  Containers: 0,
  ContainersRunning: 0,
  ContainersPaused: 0,
  ContainersStopped: 0,
  Images: 0,
};

/**
 * Docker's /info answer without this host's paths (DockerRootDir, runtime binaries, CDI dirs,
 * driver status), its proxy settings, its daemon labels, its Swarm node, or how many containers
 * and images everyone has (lists through the endpoint show only the caller's own). An answer that
 * is not a JSON object is replaced by `{}`.
 */
export function scrubInfo(body: Uint8Array): Buffer {
  let info: unknown;
  try {
    info = JSON.parse(Buffer.from(body).toString('utf8'));
  } catch {
    info = {};
  }
  if (info === null || typeof info !== 'object' || Array.isArray(info)) info = {};
  const out: Record<string, unknown> = { ...(info as Record<string, unknown>) };
  for (const [k, v] of Object.entries(INFO_BLANK)) if (Object.hasOwn(out, k)) out[k] = v;
  if (out.Runtimes !== null && typeof out.Runtimes === 'object') {
    out.Runtimes = Object.fromEntries(Object.keys(out.Runtimes as object).map((name) => [name, { path: '' }]));
  }
  if (Object.hasOwn(out, 'Swarm'))
    out.Swarm = { LocalNodeState: 'inactive', NodeID: '', NodeAddr: '', ControlAvailable: false, Error: '', RemoteManagers: null };
  return Buffer.from(JSON.stringify(out), 'utf8');
}
