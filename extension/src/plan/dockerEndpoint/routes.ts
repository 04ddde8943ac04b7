/**
 * The Docker endpoint's routes: every method and path a workspace container may send, the query
 * parameters each takes, the body and the connection upgrade each may have, and which objects named
 * in the path must be the container's own (docs/decisions/0047-docker-endpoint-policy.md). A request
 * that matches no row is refused. Pure: no I/O.
 */
import { LABELS } from '../../contract/upstream';
import { RUNTIME_IMAGE_PUBLISHED, RUNTIME_IMAGE_REPO, RUNTIME_IMAGE_TEST_REPO } from '../../contract/image';
import {
  ENDPOINT_LIMITS,
  escapeQuery,
  forbidden,
  foldKey,
  headerValues,
  isRealtimeUlimit,
  malformed,
  mediaType,
  parseTarget,
  readJson,
  realtimeUlimit,
  Refused,
  checkNotReserved,
  type RawHeaders,
  tokens,
  type Json,
} from './wire';
import { checkCommitChange } from './changes';
import { checkRegistry, type EndpointEgress, refusedRoute, registryOfImage, registryOfSearch } from './egress';

export type { EndpointEgress } from './egress';

/** What the adapter knows about the caller. */
export interface EndpointScope {
  /** The workspace container's name: the value of the owner label on everything it creates. */
  owner: string;
  /** The realpath of the workspace folder on the host. */
  workspace: string;
  /** The owner label's key: LABELS.dockerOwner unless a test substitutes its own. */
  ownLabel?: string;
  /**
   * The host path of this endpoint's own socket. A bind of the Docker socket (Testcontainers'
   * reaper binds `/var/run/docker.sock`, the path DOCKER_HOST names inside the container) is
   * rewritten to this path, so the new container talks to the same scoped endpoint. Its directory
   * must be one the workspace container cannot write: the bind is not re-checked, and a container
   * that could put a link there could bind whatever the link names. Undefined: no such bind.
   */
  endpointSocket?: string;
  /**
   * Toolbox's own name prefix (`toolbox-`): a container, volume or network the caller names with it
   * is refused (rule reserved-name), since Toolbox finds its own objects by name.
   */
  reservedPrefix?: string;
  /**
   * The protected paths the workspace container has bound over its folder (plan/protect.ts), as
   * realpaths (scopeProtections makes them from its inspect): a new container that binds the folder
   * gets the same binds over the same paths, and a read-write bind at or inside a read-only one is
   * refused, so a sibling container cannot undo the protection.
   */
  protectedPaths?: readonly ProtectedPath[];
  /**
   * The folder's egress policy when it is `ask` or `allowlist` (issue 30): the workspace container
   * has no network of its own, so nothing it asks of the daemon may reach the network for it
   * (plan/dockerEndpoint/egress.ts). Undefined: `open`, and nothing changes.
   */
  egress?: EndpointEgress;
  /**
   * Where a new container may publish ports (plan/dockerEndpoint/ports.ts). Undefined: on loopback only,
   * and a port published without an address gets 127.0.0.1.
   */
  publish?: EndpointPublish;
  /**
   * The engine runs a build's RUN steps on this host's network whatever `networkmode` says
   * (Podman 4.3's compat /build, measured in test/engine/docker-endpoint-policy.test.ts): every
   * build is refused (rule build-network), since a RUN step would reach what listens on this host.
   */
  buildsOnHostNetwork?: boolean;
}

/** What the adapter knows of where published ports may listen (EndpointScope.publish). */
export interface EndpointPublish {
  /**
   * The address the workspace container reaches this host at (host.docker.internal: the engine's
   * default bridge gateway, when it is an address of this host): a port published without an
   * address gets it, and a client may name it. Undefined: 127.0.0.1.
   */
  hostIp?: string;
  /** toolbox.dockerEndpointPorts is any-address: addresses are left as the client gave them, every address when none. */
  anyAddress?: boolean;
}

export interface ProtectedPath {
  /** Host realpath. */
  path: string;
  /** False for a pin (bound read-write onto itself so that it cannot be renamed aside). */
  readonly: boolean;
}

export type ObjectKind = 'container' | 'volume' | 'network' | 'image' | 'exec';

/** Whose an object is: its labels name this owner (isOwned), they do not, or the engine has no such object. */
export type Ownership = 'own' | 'other' | 'missing';

/** Objects by kind, as the client named them (a name, an id or a prefix of one). */
export interface ObjectRefs {
  containers: string[];
  volumes: string[];
  networks: string[];
  images: string[];
  /** An exec is the container's own when the container it runs in is (the adapter inspects the exec). */
  execs: string[];
}

export const REF_LIST: Record<ObjectKind, keyof ObjectRefs> = {
  container: 'containers',
  volume: 'volumes',
  network: 'networks',
  image: 'images',
  exec: 'execs',
};

export function noRefs(): ObjectRefs {
  return { containers: [], volumes: [], networks: [], images: [], execs: [] };
}

export function ownerLabel(scope: EndpointScope): string {
  return scope.ownLabel ?? LABELS.dockerOwner;
}

/** The label on the images the caller builds or commits (never the owner label, which a container would inherit). */
export function imageOwnerLabel(scope: EndpointScope): string {
  return scope.ownLabel === undefined ? LABELS.dockerImageOwner : `${scope.ownLabel}.image`;
}

/**
 * The repository prefix of the image names the caller may make (a tag, a build's `t`, a commit's
 * `repo`): `localhost/<owner>/`. A name outside it is the host's or another workspace's: an image
 * tagged `node:20` or `debian:bookworm-slim` would be what the host runs next under that name.
 * Undefined when the owner's name is no repository path component (then no name is the caller's).
 */
export function imageNamespace(scope: EndpointScope): string | undefined {
  const owner = scope.owner.toLowerCase();
  return /^[a-z0-9]+(?:(?:[._]|__|-+)[a-z0-9]+)*$/.test(owner) ? `localhost/${owner}/` : undefined;
}

/** Whether an image reference names a repository inside the caller's namespace. */
export function inImageNamespace(ref: string, scope: EndpointScope): boolean {
  const ns = imageNamespace(scope);
  return ns !== undefined && `${repositoryOf(ref)}/`.startsWith(ns) && repositoryOf(ref).length > ns.length;
}

export function checkImageName(ref: string, scope: EndpointScope, where: string): void {
  if (inImageNamespace(ref, scope)) return;
  const ns = imageNamespace(scope);
  throw forbidden(
    'image-name',
    ns === undefined
      ? `${where} names ${ref}: this workspace has no image names of its own (its container's name is no repository name), so it may build and commit only untagged images.`
      : `${where} names ${ref}, outside this workspace's image names: an image under a name the host or another workspace uses would be run in place of theirs. Name it ${ns}<name>[:tag].`,
  );
}

/**
 * Whose a container is, from its labels and its image's: its owner label names the caller and
 * did not come from its image. The engine copies an image's labels into every container made
 * from it, so an owner label that the image carries proves nothing: the host could have made that
 * container from an image the caller built (docs/decisions/0047-docker-endpoint-policy.md).
 */
export function containerOwnership(
  labels: Readonly<Record<string, string>> | null | undefined,
  imageLabels: Readonly<Record<string, string>> | null | undefined,
  scope: EndpointScope,
): Ownership {
  const key = ownerLabel(scope);
  return labels?.[key] === scope.owner && imageLabels?.[key] !== scope.owner ? 'own' : 'other';
}

/** What an image inspect tells for an image's ownership. */
export interface InspectedImage {
  labels: Readonly<Record<string, string>> | null | undefined;
  repoTags: readonly string[];
}

/**
 * Whose an image the caller names is (to remove it): a name in its namespace is its own; an image
 * named otherwise (an id) is its own when it carries the caller's image label and every name it
 * has is in the namespace, so no image the host or another workspace names is removed through it.
 */
export function imageOwnership(ref: string, image: InspectedImage | undefined, scope: EndpointScope): Ownership {
  if (image === undefined) return 'missing';
  if (inImageNamespace(ref, scope)) return 'own';
  const labelled = image.labels?.[imageOwnerLabel(scope)] === scope.owner;
  return labelled && image.repoTags.every((t) => t === '<none>:<none>' || inImageNamespace(t, scope)) ? 'own' : 'other';
}

export type RouteId =
  | 'ping'
  | 'version'
  | 'info'
  | 'events'
  | 'auth'
  | 'container-list'
  | 'container-create'
  | 'container-inspect'
  | 'container-top'
  | 'container-logs'
  | 'container-stats'
  | 'container-changes'
  | 'container-export'
  | 'container-archive'
  | 'container-archive-put'
  | 'container-start'
  | 'container-stop'
  | 'container-restart'
  | 'container-kill'
  | 'container-wait'
  | 'container-resize'
  | 'container-attach'
  | 'container-pause'
  | 'container-unpause'
  | 'container-rename'
  | 'container-update'
  | 'container-remove'
  | 'container-prune'
  | 'exec-create'
  | 'exec-start'
  | 'exec-resize'
  | 'exec-inspect'
  | 'image-list'
  | 'image-pull'
  | 'image-inspect'
  | 'image-history'
  | 'image-tag'
  | 'image-push'
  | 'image-remove'
  | 'image-prune'
  | 'image-search'
  | 'distribution-inspect'
  | 'build'
  | 'build-cancel'
  | 'session'
  | 'grpc'
  | 'commit'
  | 'volume-list'
  | 'volume-create'
  | 'volume-inspect'
  | 'volume-remove'
  | 'volume-prune'
  | 'network-list'
  | 'network-create'
  | 'network-inspect'
  | 'network-remove'
  | 'network-connect'
  | 'network-disconnect'
  | 'network-prune';

/** The body a route takes: none, JSON the policy reads (phase 2, plan/dockerEndpoint/policy.ts checkBody), or a stream it does not read (a tar). */
export type BodyPlan = { kind: 'none' } | { kind: 'json'; limit: number; optional: boolean } | { kind: 'stream'; contentType: string };

/** Phase 1's answer for a request the policy lets through, once the objects in `owned` are proven the container's own. */
export interface Classified {
  kind: 'forward';
  route: RouteId;
  method: string;
  /** What to send Docker: the client's version prefix, its path, and the query re-encoded from the parameters checked (filters with the owner label added). */
  target: string;
  /** The only request headers to forward, besides the framing (Content-Length or chunked) the adapter writes itself. */
  headers: Record<string, string | string[]>;
  body: BodyPlan;
  /** Docker takes over the connection (attach, exec start, /session, /grpc): after its answer the adapter pipes bytes both ways. */
  hijack: boolean;
  /** Objects that must be the container's own before the request is forwarded (checkOwned). */
  owned: ObjectRefs;
  /** Start and restart: the container's binds are resolved again first (checkStartBinds), since Docker resolves them again. */
  recheckBinds: boolean;
  /** /info: the adapter passes Docker's answer through scrubInfo, which takes out host paths and proxy settings. */
  response?: 'scrub-info';
  /** The query parameters kept, decoded (phase 2 reads some, e.g. /commit's). */
  query: ReadonlyMap<string, readonly string[]>;
  /**
   * Under an egress policy, the network in the path of a connect, which checkOwned refuses once its
   * ownership is proven (internal ones too); the adapter's inspect says whether it is internal, for
   * the refusal's sentence only.
   */
  internalNetworks: string[];
  /** The egress policy's mode, when the scope has one (for the sentence of a refusal checkOwned makes). */
  egressMode?: EndpointEgress['mode'];
  /**
   * Under an egress policy, what the request would run in the container (or exec) of its path: an
   * exec, a start, an attach, files copied in. checkReach refuses it when that container has a
   * network (plan/dockerEndpoint/egress.ts hasNetwork), so the adapter must say what its inspect showed.
   */
  runsInside?: string;
  /**
   * The target in parts, for forwardTarget: the objects the path and the query name are forwarded
   * as the ids the ownership check resolved, never as the client's names.
   */
  parts: TargetParts;
}

/** A target's version prefix, path segments (with the object each names) and checked query. */
export interface TargetParts {
  version: string | undefined;
  segments: readonly string[];
  /** Path segments that name an object: the index and its kind. */
  objects: ReadonlyArray<{ index: number; kind: ObjectKind }>;
  /** Query parameters that name an object (a commit's container). */
  queryObjects: ReadonlyArray<{ name: string; kind: ObjectKind }>;
}

function targetOf(parts: TargetParts, query: ReadonlyMap<string, readonly string[]>): string {
  const q = [...query].flatMap(([k, vs]) => vs.map((v) => `${escapeQuery(k)}=${escapeQuery(v)}`)).join('&');
  return `${parts.version !== undefined ? `/${parts.version}` : ''}/${parts.segments.join('/')}${q ? `?${q}` : ''}`;
}

/**
 * The target to forward once the ownership check resolved each object the path and query name to
 * its id (`idOf`; undefined leaves the client's reference): the engine resolves a name as a full
 * id, then an exact name, then a unique id prefix, so a name forwarded after its check could
 * lead to another object by then (the object it named removed in between).
 */
export function forwardTarget(c: Classified, idOf: (kind: ObjectKind, ref: string) => string | undefined): string {
  const segments = [...c.parts.segments];
  for (const { index, kind } of c.parts.objects) segments[index] = idOf(kind, segments[index]) ?? segments[index];
  const query = new Map(c.query);
  for (const { name, kind } of c.parts.queryObjects) {
    const ref = query.get(name)?.[0];
    if (ref !== undefined) query.set(name, [idOf(kind, ref.replace(/^\//, '')) ?? ref]);
  }
  return targetOf({ ...c.parts, segments }, query);
}

/** Under an egress policy, the routes that run something in the container or exec of their path, as checkReach names them. */
const RUNS_INSIDE: Partial<Record<RouteId, string>> = {
  'exec-create': 'an exec in it',
  'exec-start': 'starting an exec in it',
  'container-start': 'starting it',
  'container-restart': 'restarting it',
  'container-unpause': 'unpausing it',
  'container-attach': 'attaching to it',
  'container-archive-put': 'copying files into it',
};

interface Ctx {
  scope: EndpointScope;
}

/** Checks one query parameter's values (empty when absent) and returns the values to forward (empty: leave it out). */
type ParamCheck = (name: string, values: readonly string[], ctx: Ctx) => string[];

function single(check: (name: string, value: string, ctx: Ctx) => string | undefined): ParamCheck {
  return (name, values, ctx) => {
    if (values.length === 0) return [];
    if (values.length > 1) throw malformed('query', `The query gives ${name} more than once.`);
    const v = check(name, values[0], ctx);
    return v === undefined ? [] : [v];
  };
}

function multi(check: (name: string, value: string, ctx: Ctx) => string): ParamCheck {
  return (name, values, ctx) => values.map((v) => check(name, v, ctx));
}

const matching = (re: RegExp, what: string) =>
  single((name, v) => {
    if (!re.test(v)) throw malformed('query', `The query parameter ${name} is not ${what}.`);
    return v;
  });

const flag = matching(/^(|0|1|true|false|yes|no|none)$/i, 'a boolean');
const int = matching(/^-?[0-9]{1,19}$/, 'a whole number');
const text = single((_, v) => v);
const signal = matching(/^[A-Za-z0-9+]{1,20}$/, 'a signal');
const containerName = single((name, v, ctx) => {
  if (!/^\/?[A-Za-z0-9][A-Za-z0-9_.-]{0,254}$/.test(v)) throw malformed('query', `The query parameter ${name} is not a container name.`);
  checkNotReserved(v, ctx.scope.reservedPrefix, 'The container name');
  return v;
});
const platform = matching(/^[a-z0-9_./-]{0,100}$/, 'a platform');

/** A parameter the policy refuses whenever it is given a non-empty value. */
function refused(rule: Parameters<typeof forbidden>[0], message: string): ParamCheck {
  return (_, values) => {
    if (values.some((v) => v !== '')) throw forbidden(rule, message);
    return [];
  };
}

/** Repositories of the extension's own runtime image: nothing the endpoint pulls, tags or builds may land there. */
const RUNTIME_REPOS = [RUNTIME_IMAGE_REPO, RUNTIME_IMAGE_TEST_REPO, `${RUNTIME_IMAGE_PUBLISHED.registry}/${RUNTIME_IMAGE_PUBLISHED.path}`];

/** The repository of an image reference as Docker normalises it (no tag or digest, `docker.io/` and `library/` dropped). */
export function repositoryOf(ref: string): string {
  let r = ref.toLowerCase();
  const at = r.indexOf('@');
  if (at >= 0) r = r.slice(0, at);
  const colon = r.lastIndexOf(':');
  if (colon > r.lastIndexOf('/')) r = r.slice(0, colon);
  for (const prefix of ['docker.io/', 'index.docker.io/', 'registry-1.docker.io/']) if (r.startsWith(prefix)) r = r.slice(prefix.length);
  if (r.startsWith('library/')) r = r.slice('library/'.length);
  return r;
}

export function checkNotRuntimeImage(ref: string, where: string): void {
  if (RUNTIME_REPOS.includes(repositoryOf(ref))) {
    throw forbidden(
      'runtime-image',
      `${where} names ${ref}, the repository of Toolbox's own runtime image, which the extension runs its workspace containers from. Use another name.`,
    );
  }
}

const IMAGE_REF = /^[A-Za-z0-9][A-Za-z0-9_.:@/-]{0,511}$/;

const imageRef = (what: string) =>
  single((name, v) => {
    if (!IMAGE_REF.test(v) || v.includes('..') || v.includes('//'))
      throw malformed('query', `The query parameter ${name} is not an image reference.`);
    checkNotRuntimeImage(v, what);
    return v;
  });

/** An image name the caller makes (tag, build, commit): a reference inside its namespace. */
const ownImageName = (what: string) =>
  single((name, v, ctx) => {
    const ref = imageRef(what)(name, [v], ctx)[0];
    checkImageName(ref, ctx.scope, what);
    return ref;
  });

/** A JSON parameter, read strictly. */
function parseJsonParam(name: string, v: string): Json {
  try {
    return readJson(Buffer.from(v, 'utf8'), 8);
  } catch {
    throw malformed('query', `The query parameter ${name} is not strict JSON.`);
  }
}

function isRecord(v: Json): v is { [key: string]: Json } {
  return v !== null && typeof v === 'object' && !Array.isArray(v);
}

const jsonParam = (accept: (v: Json) => boolean, what: string) =>
  single((name, v) => {
    if (!accept(parseJsonParam(name, v))) throw malformed('query', `The query parameter ${name} is not ${what}.`);
    return v;
  });

// `null` is Go's JSON for an empty list or map, and what Docker reads as none: the docker CLI (20.10)
// sends `ulimits=null` with every classic build.
const stringList = jsonParam((v) => v === null || (Array.isArray(v) && v.every((s) => typeof s === 'string')), 'a JSON list of strings');
const stringMap = jsonParam(
  (v) => v === null || (isRecord(v) && Object.values(v).every((s) => s === null || typeof s === 'string')),
  'a JSON object of strings',
);
const ulimitList = jsonParam(
  (v) =>
    v === null || (Array.isArray(v) && v.every((u) => isRecord(u) && Object.keys(u).every((k) => ['Name', 'Soft', 'Hard'].includes(k)))),
  'a JSON list of ulimits',
);
/** A build's ulimits (its RUN steps' containers): real-time ones refused, as in a create. */
const ulimits: ParamCheck = (name, values, ctx) => {
  const kept = ulimitList(name, values, ctx);
  const list = kept.length === 1 ? parseJsonParam(name, kept[0]) : null;
  for (const u of Array.isArray(list) ? list : []) {
    const n = isRecord(u) ? u.Name : undefined;
    if (typeof n === 'string' && isRealtimeUlimit(n)) throw realtimeUlimit('The build’s ulimits', n);
  }
  return kept;
};

/**
 * `filters` with the owner label added, so a list, a prune or the event stream covers only the
 * container's own objects. Docker ANDs label filters, so the client's own filters can only narrow
 * it further. Accepts both forms Docker reads (`{"label":{"a=b":true}}` and `{"label":["a=b"]}`)
 * and forwards the first.
 */
const ownerFilters: ParamCheck = (name, values, ctx) => withLabelFilter(name, values, `${ownerLabel(ctx.scope)}=${ctx.scope.owner}`);

/** An image prune's filters: the images the caller built or committed carry its image label. */
const imageOwnerFilters: ParamCheck = (name, values, ctx) =>
  withLabelFilter(name, values, `${imageOwnerLabel(ctx.scope)}=${ctx.scope.owner}`);

function withLabelFilter(name: string, values: readonly string[], label: string): string[] {
  if (values.length > 1) throw malformed('query', 'The query gives filters more than once.');
  const merged: Record<string, Record<string, boolean>> = {};
  if (values.length === 1 && values[0] !== '') {
    const parsed = parseJsonParam(name, values[0]);
    if (!isRecord(parsed)) throw malformed('query', 'The filters parameter is not a JSON object.');
    for (const [key, v] of Object.entries(parsed)) {
      const terms = Array.isArray(v) ? v : isRecord(v) ? Object.keys(v).filter((k) => v[k] === true) : undefined;
      if (terms === undefined || !terms.every((t) => typeof t === 'string'))
        throw malformed('query', `The filter ${key} is neither a list nor an object of strings.`);
      merged[key] = Object.fromEntries((terms as string[]).map((t) => [t, true]));
    }
  }
  merged.label = { ...(merged.label ?? {}), [label]: true };
  return [JSON.stringify(merged)];
}

/**
 * /build's labels, with the image label added (the built image is the caller's own); a client
 * that sets it, or the owner label (which containers made from the image would inherit), is refused.
 */
const buildLabels: ParamCheck = (name, values, ctx) => {
  if (values.length > 1) throw malformed('query', 'The query gives labels more than once.');
  const parsed = values.length === 1 && values[0] !== '' ? parseJsonParam(name, values[0]) : {};
  if (!isRecord(parsed) || !Object.values(parsed).every((v) => typeof v === 'string'))
    throw malformed('query', 'The labels parameter is not a JSON object of strings.');
  checkNoOwnerLabel(Object.keys(parsed), ctx.scope, 'The build labels');
  return [JSON.stringify({ ...parsed, [imageOwnerLabel(ctx.scope)]: ctx.scope.owner })];
};

export function checkNoOwnerLabel(keys: readonly string[], scope: EndpointScope, where: string): void {
  const own = [foldKey(ownerLabel(scope)), foldKey(imageOwnerLabel(scope))];
  if (keys.some((k) => own.includes(foldKey(k)))) {
    throw forbidden(
      'owner-label',
      `${where} set the label ${ownerLabel(scope)}, which only the endpoint sets (it says which workspace an object is). Leave it out.`,
    );
  }
}

const buildNetwork = single((_, v) => {
  if (['', 'default', 'bridge', 'none'].includes(v)) return v;
  throw forbidden(
    'build-network',
    `A build's network mode may be default, bridge or none, not ${v}: a build step with the host's network reaches what listens on this host.`,
  );
});

const buildVersion = matching(/^[12]?$/, 'builder version 1 or 2');

/**
 * BuildKit's own API (`/grpc`, what docker buildx and Compose build through) is an HTTP/2 stream
 * the policy does not read, and the daemon grants any build there that asks for it (buildx
 * `--allow network.host`, `--network host`, `RUN --network=host`) this host's network by default:
 * its loopback services and abstract sockets. Refused whole; the classic builder's /build is read,
 * and BuildKit through it (`version=2`, the docker CLI's own client) asks for network.host only for
 * `networkmode=host`, which buildNetwork refuses. The endpoint answers a refused `/grpc` as a gRPC
 * error, so buildx prints this sentence (engine/dockerEndpoint/grpc.ts).
 */
export const BUILDKIT_GRPC_REFUSED =
  "BuildKit's own API (/grpc, which docker buildx and Compose build through) is not offered: this endpoint cannot read what a build asks for there, and the daemon gives a build that asks for it this host's network (network.host). Build with the classic builder instead: DOCKER_BUILDKIT=0 docker build …, or DOCKER_BUILDKIT=0 docker compose build.";
/**
 * /commit's changes, each one plain instruction (plan/dockerEndpoint/changes.ts); Docker reads every
 * value given (the docker CLI sends one per --change).
 */
const commitChanges = multi((_, v, ctx) => {
  checkCommitChange(v, labelNamespace(ctx.scope));
  return v;
});

/** Toolbox's label namespace, where the owner label lives: `dev.toolbox.` (the owner label up to its last dot). */
export function labelNamespace(scope: EndpointScope): string {
  const own = ownerLabel(scope);
  const dot = own.lastIndexOf('.');
  return dot > 0 ? own.slice(0, dot + 1) : own;
}

type Method = 'GET' | 'HEAD' | 'POST' | 'PUT' | 'DELETE';

interface RouteSpec {
  id: RouteId;
  methods: readonly Method[];
  /** `/containers/{container}/logs`; `{image*}` takes one or more segments. */
  path: string;
  query?: Record<string, ParamCheck>;
  body?: 'json' | 'json-optional' | 'stream';
  bodyLimit?: number;
  hijack?: boolean;
  upgrade?: readonly string[];
  /** Request headers forwarded as they are (besides content-type and user-agent). */
  forward?: readonly string[];
  /** The image in the path must be the container's own (images are otherwise shared). */
  ownImage?: boolean;
  recheckBinds?: boolean;
  response?: 'scrub-info';
}

const REGISTRY_AUTH = ['x-registry-auth'];
const SESSION_HEADERS = [
  'x-docker-expose-session-uuid',
  'x-docker-expose-session-name',
  'x-docker-expose-session-sharedkey',
  'x-docker-expose-session-grpc-method',
];
const filtered = { filters: ownerFilters };
const LOGS = { follow: flag, stdout: flag, stderr: flag, since: text, until: text, timestamps: flag, tail: text, details: flag };
const STOP = { t: int, signal };
/** An optional JSON body that repeats the query's options (dockerode's): read, bounded, never forwarded (bodies.ts DROPPED_BODY). */
const OPTIONS_BODY = { body: 'json-optional', bodyLimit: 4096 } as const;

/** Every route the endpoint serves, in matching order (the first whose path and method fit). */
const ROUTES: readonly RouteSpec[] = [
  { id: 'ping', methods: ['GET', 'HEAD'], path: '/_ping' },
  { id: 'version', methods: ['GET'], path: '/version' },
  { id: 'info', methods: ['GET'], path: '/info', response: 'scrub-info' },
  { id: 'events', methods: ['GET'], path: '/events', query: { since: text, until: text, ...filtered } },
  { id: 'auth', methods: ['POST'], path: '/auth', body: 'json' },

  {
    id: 'container-list',
    methods: ['GET'],
    path: '/containers/json',
    query: { all: flag, limit: int, size: flag, before: text, since: text, ...filtered },
  },
  {
    id: 'container-create',
    methods: ['POST'],
    path: '/containers/create',
    query: { name: containerName, platform },
    body: 'json',
    bodyLimit: ENDPOINT_LIMITS.createBody,
  },
  { id: 'container-prune', methods: ['POST'], path: '/containers/prune', query: filtered },
  { id: 'container-inspect', methods: ['GET'], path: '/containers/{container}/json', query: { size: flag } },
  {
    id: 'container-top',
    methods: ['GET'],
    path: '/containers/{container}/top',
    query: { ps_args: matching(/^[A-Za-z0-9 ,=-]{0,100}$/, 'ps options') },
  },
  { id: 'container-logs', methods: ['GET'], path: '/containers/{container}/logs', query: LOGS },
  { id: 'container-stats', methods: ['GET'], path: '/containers/{container}/stats', query: { stream: flag, 'one-shot': flag } },
  { id: 'container-changes', methods: ['GET'], path: '/containers/{container}/changes' },
  { id: 'container-export', methods: ['GET'], path: '/containers/{container}/export' },
  { id: 'container-archive', methods: ['GET', 'HEAD'], path: '/containers/{container}/archive', query: { path: text } },
  {
    id: 'container-archive-put',
    methods: ['PUT'],
    path: '/containers/{container}/archive',
    query: { path: text, noOverwriteDirNonDir: flag, copyUIDGID: flag },
    body: 'stream',
  },
  {
    id: 'container-start',
    methods: ['POST'],
    path: '/containers/{container}/start',
    query: {
      detachKeys: text,
      checkpoint: refused(
        'checkpoint',
        'Starting from a checkpoint is not offered: it restores process state the daemon keeps on the host.',
      ),
      'checkpoint-dir': refused(
        'checkpoint',
        'checkpoint-dir names a directory on the host, which this endpoint does not let a container choose.',
      ),
    },
    recheckBinds: true,
  },
  // dockerode (Testcontainers' client) sends its options as a JSON body besides the query
  // (`{"t":0}`); Docker reads only the query. The body is read, held to those options, and dropped.
  { id: 'container-stop', methods: ['POST'], path: '/containers/{container}/stop', query: STOP, ...OPTIONS_BODY },
  {
    id: 'container-restart',
    methods: ['POST'],
    path: '/containers/{container}/restart',
    query: STOP,
    recheckBinds: true,
    ...OPTIONS_BODY,
  },
  { id: 'container-kill', methods: ['POST'], path: '/containers/{container}/kill', query: { signal }, ...OPTIONS_BODY },
  {
    id: 'container-wait',
    methods: ['POST'],
    path: '/containers/{container}/wait',
    query: { condition: matching(/^(|not-running|next-exit|removed)$/, 'a wait condition') },
  },
  { id: 'container-resize', methods: ['POST'], path: '/containers/{container}/resize', query: { h: int, w: int } },
  {
    id: 'container-attach',
    methods: ['POST'],
    path: '/containers/{container}/attach',
    query: { detachKeys: text, logs: flag, stream: flag, stdin: flag, stdout: flag, stderr: flag },
    hijack: true,
    upgrade: ['tcp'],
  },
  { id: 'container-pause', methods: ['POST'], path: '/containers/{container}/pause' },
  { id: 'container-unpause', methods: ['POST'], path: '/containers/{container}/unpause' },
  { id: 'container-rename', methods: ['POST'], path: '/containers/{container}/rename', query: { name: containerName } },
  { id: 'container-update', methods: ['POST'], path: '/containers/{container}/update', body: 'json' },
  { id: 'exec-create', methods: ['POST'], path: '/containers/{container}/exec', body: 'json' },
  { id: 'container-remove', methods: ['DELETE'], path: '/containers/{container}', query: { v: flag, force: flag, link: flag } },
  { id: 'exec-start', methods: ['POST'], path: '/exec/{exec}/start', body: 'json-optional', hijack: true, upgrade: ['tcp'] },
  { id: 'exec-resize', methods: ['POST'], path: '/exec/{exec}/resize', query: { h: int, w: int } },
  { id: 'exec-inspect', methods: ['GET'], path: '/exec/{exec}/json' },

  {
    id: 'image-list',
    methods: ['GET'],
    path: '/images/json',
    query: { all: flag, filters: stringMapOrList(), 'shared-size': flag, digests: flag, manifests: flag },
  },
  {
    id: 'image-pull',
    methods: ['POST'],
    path: '/images/create',
    query: {
      fromImage: imageRef('The pull'),
      tag: matching(/^[A-Za-z0-9_.:@-]{0,200}$/, 'a tag or digest'),
      platform,
      fromSrc: refused(
        'image-import',
        'Importing an image (fromSrc) is not offered: it makes the daemon fetch a URL from this host, or load a tarball as any image name.',
      ),
      repo: refused('image-import', 'Importing an image (repo with fromSrc) is not offered.'),
      changes: refused('image-import', 'Importing an image (changes with fromSrc) is not offered.'),
      message: text,
    },
    forward: REGISTRY_AUTH,
  },
  { id: 'image-prune', methods: ['POST'], path: '/images/prune', query: { filters: imageOwnerFilters } },
  {
    id: 'image-search',
    methods: ['GET'],
    path: '/images/search',
    query: { term: text, limit: int, filters: stringMapOrList() },
    forward: REGISTRY_AUTH,
  },
  { id: 'image-inspect', methods: ['GET'], path: '/images/{image*}/json', query: { manifests: flag, platform: text } },
  { id: 'image-history', methods: ['GET'], path: '/images/{image*}/history', query: { platform: text } },
  {
    id: 'image-tag',
    methods: ['POST'],
    path: '/images/{image*}/tag',
    query: { repo: ownImageName('The tag'), tag: matching(/^[A-Za-z0-9_.-]{0,128}$/, 'a tag') },
  },
  {
    id: 'image-push',
    methods: ['POST'],
    path: '/images/{image*}/push',
    query: { tag: matching(/^[A-Za-z0-9_.-]{0,128}$/, 'a tag'), platform: text },
    forward: REGISTRY_AUTH,
  },
  { id: 'image-remove', methods: ['DELETE'], path: '/images/{image*}', query: { force: flag, noprune: flag }, ownImage: true },
  { id: 'distribution-inspect', methods: ['GET'], path: '/distribution/{image*}/json', forward: REGISTRY_AUTH },

  {
    id: 'build',
    methods: ['POST'],
    path: '/build',
    query: {
      dockerfile: text,
      t: multi((name, v, ctx) => ownImageName('The build tag')(name, [v], ctx)[0]),
      extrahosts: multi((_, v) => v),
      // `client-session` is no URL: BuildKit reads the context from the caller's own /session.
      remote: single((_, v) => {
        if (v === '') return undefined;
        if (v === 'client-session') return v;
        throw forbidden(
          'build-remote',
          "A remote build context (remote=) is not offered: the daemon would fetch the URL, or run git on it, from this host's network as root. Send the context as the body (docker build with a local folder).",
        );
      }),
      q: flag,
      nocache: flag,
      cachefrom: stringList,
      pull: text,
      rm: flag,
      forcerm: flag,
      memory: int,
      memswap: int,
      cpushares: int,
      cpusetcpus: text,
      cpusetmems: text,
      cpuperiod: int,
      cpuquota: int,
      buildargs: stringMap,
      shmsize: int,
      squash: flag,
      labels: buildLabels,
      networkmode: buildNetwork,
      platform: text,
      target: text,
      ulimits,
      cgroupparent: refused(
        'cgroup-parent',
        'A build may not name a cgroup parent: it places the build outside the limits Docker gives containers.',
      ),
      securityopt: refused('build-option', 'A build may not set security options.'),
      outputs: refused(
        'build-option',
        'Build outputs (outputs=) are not offered through this endpoint; use BuildKit through docker buildx instead.',
      ),
      isolation: matching(/^(|default)$/, 'the default isolation'),
      version: buildVersion,
      session: text,
      buildid: text,
    },
    body: 'stream',
    forward: ['x-registry-config'],
  },
  { id: 'build-cancel', methods: ['POST'], path: '/build/cancel', query: { id: text } },
  { id: 'session', methods: ['POST'], path: '/session', hijack: true, upgrade: ['h2c'], forward: SESSION_HEADERS },
  // Named so that its refusal says why (classifyHead refuses it whatever it asks).
  { id: 'grpc', methods: ['POST'], path: '/grpc', hijack: true, upgrade: ['h2c'] },
  {
    id: 'commit',
    methods: ['POST'],
    path: '/commit',
    query: {
      container: containerName,
      repo: ownImageName('The commit'),
      tag: matching(/^[A-Za-z0-9_.-]{0,128}$/, 'a tag'),
      comment: text,
      author: text,
      pause: flag,
      changes: commitChanges,
    },
    body: 'json-optional',
    bodyLimit: ENDPOINT_LIMITS.createBody,
  },

  { id: 'volume-list', methods: ['GET'], path: '/volumes', query: filtered },
  { id: 'volume-create', methods: ['POST'], path: '/volumes/create', body: 'json' },
  { id: 'volume-prune', methods: ['POST'], path: '/volumes/prune', query: filtered },
  { id: 'volume-inspect', methods: ['GET'], path: '/volumes/{volume}' },
  { id: 'volume-remove', methods: ['DELETE'], path: '/volumes/{volume}', query: { force: flag } },

  { id: 'network-list', methods: ['GET'], path: '/networks', query: filtered },
  { id: 'network-create', methods: ['POST'], path: '/networks/create', body: 'json' },
  { id: 'network-prune', methods: ['POST'], path: '/networks/prune', query: filtered },
  {
    id: 'network-inspect',
    methods: ['GET'],
    path: '/networks/{network}',
    query: { verbose: flag, scope: matching(/^(|local)$/, 'local') },
  },
  { id: 'network-remove', methods: ['DELETE'], path: '/networks/{network}' },
  { id: 'network-connect', methods: ['POST'], path: '/networks/{network}/connect', body: 'json' },
  { id: 'network-disconnect', methods: ['POST'], path: '/networks/{network}/disconnect', body: 'json' },
];

/** `filters` on routes over shared objects (images): forwarded as given, once read strictly. */
function stringMapOrList(): ParamCheck {
  return jsonParam((v) => isRecord(v), 'a JSON object of filters');
}

/** What a path parameter may be: Docker's own name grammars, and image references. */
const PARAMS: Record<string, { re: RegExp; kind: keyof ObjectRefs }> = {
  container: { re: /^[A-Za-z0-9][A-Za-z0-9_.-]{0,254}$/, kind: 'containers' },
  exec: { re: /^[A-Za-z0-9]{1,128}$/, kind: 'execs' },
  volume: { re: /^[A-Za-z0-9][A-Za-z0-9_.-]{0,254}$/, kind: 'volumes' },
  network: { re: /^[A-Za-z0-9][A-Za-z0-9_.-]{0,254}$/, kind: 'networks' },
  image: { re: IMAGE_REF, kind: 'images' },
};

function matchPath(pattern: string, segments: readonly string[]): Map<string, string> | undefined {
  const parts = pattern.slice(1).split('/');
  const star = parts.findIndex((p) => p.endsWith('*}'));
  const out = new Map<string, string>();
  const take = (p: string, value: string): boolean => {
    if (p.startsWith('{')) {
      out.set(p.slice(1, p.endsWith('*}') ? -2 : -1), value);
      return true;
    }
    return p === value;
  };
  if (star < 0) {
    if (parts.length !== segments.length) return undefined;
    return parts.every((p, i) => take(p, segments[i])) ? out : undefined;
  }
  const tail = parts.length - star - 1;
  if (segments.length < parts.length) return undefined;
  for (let i = 0; i < star; i++) if (!take(parts[i], segments[i])) return undefined;
  for (let i = 0; i < tail; i++) if (!take(parts[parts.length - 1 - i], segments[segments.length - 1 - i])) return undefined;
  take(parts[star], segments.slice(star, segments.length - tail).join('/'));
  return out;
}

/** Families of the API refused as a whole, with the reason said once. */
const REFUSED_FAMILIES: Record<string, { rule: 'swarm' | 'plugins' | 'unknown-route'; why: string }> = {
  swarm: { rule: 'swarm', why: 'Swarm (swarm, services, nodes, tasks, secrets, configs) acts on the whole engine, not on one workspace.' },
  services: { rule: 'swarm', why: 'Swarm services act on the whole engine, not on one workspace.' },
  nodes: { rule: 'swarm', why: 'Swarm nodes belong to the whole engine.' },
  tasks: { rule: 'swarm', why: 'Swarm tasks belong to the whole engine.' },
  secrets: { rule: 'swarm', why: 'Swarm secrets belong to the whole engine.' },
  configs: { rule: 'swarm', why: 'Swarm configs belong to the whole engine.' },
  plugins: { rule: 'plugins', why: 'Plugins run with the daemon’s privileges on this host.' },
};

export interface RequestHead {
  method: string;
  target: string;
  headers: RawHeaders;
}

/** Phase 1: the request head alone (plan/dockerEndpoint/policy.ts classify turns a throw into a Refusal). */
export function classifyHead(head: RequestHead, scope: EndpointScope): Classified {
  const method = head.method;
  if (!/^[A-Z]{1,10}$/.test(method)) throw malformed('method', `The method ${JSON.stringify(method)} is not one Docker has.`, 405);
  const target = parseTarget(head.target);
  const path = `/${target.segments.join('/')}`;
  const candidates = ROUTES.map((r) => ({ r, params: matchPath(r.path, target.segments) })).filter((c) => c.params !== undefined);
  if (candidates.length === 0) {
    const family = REFUSED_FAMILIES[target.segments[0]];
    if (family?.rule === 'plugins' && method === 'GET' && target.segments.length === 3 && target.segments[2] === 'json') {
      // `docker inspect <name>` asks for a plugin last, after a container, an image, a network and a
      // volume: answered as missing, the CLI says "No such object" rather than that plugins are refused.
      throw new Refused(404, 'plugins', `No plugin ${target.segments[1]} here: plugins are not offered through this endpoint.`);
    }
    if (family) throw forbidden(family.rule, `${method} ${path} is refused: ${family.why}`);
    throw forbidden(
      'unknown-route',
      `${method} ${path} is not a request this endpoint knows, so it is refused rather than passed to Docker.`,
    );
  }
  const chosen = candidates.find((c) => (c.r.methods as readonly string[]).includes(method));
  if (!chosen) {
    const allowed = [...new Set(candidates.flatMap((c) => c.r.methods))].join(', ');
    throw malformed('method', `${path} takes ${allowed}, not ${method}.`, 405);
  }
  const spec = chosen.r;
  const owned = noRefs();
  const objects: Array<{ index: number; kind: ObjectKind }> = [];
  for (const [name, value] of chosen.params!) {
    const p = PARAMS[name];
    if (!p.re.test(value)) throw malformed('target', `"${value}" is not a ${name} name or id.`);
    if (name !== 'image' || spec.ownImage) owned[p.kind].push(value);
    // An image's path spans segments, and its name is kept (a removal by name untags it only).
    if (name !== 'image') objects.push({ index: spec.path.slice(1).split('/').indexOf(`{${name}}`), kind: name as ObjectKind });
  }

  const ctx: Ctx = { scope };
  const kept = new Map<string, string[]>();
  for (const [name, check] of Object.entries(spec.query ?? {})) {
    const values = check(name, target.query.get(name) ?? [], ctx);
    if (values.length > 0) kept.set(name, values);
  }
  // Docker reads only the parameters it names; the rest (dockerode repeats the whole create options
  // in the query) are left out, so what is forwarded is exactly what was checked.
  if (spec.id === 'commit') {
    const container = kept.get('container')?.[0];
    if (container === undefined) throw malformed('query', 'A commit names its container (container=).');
    owned.containers.push(container.replace(/^\//, ''));
    // The image labels, as the last Dockerfile instructions: Podman's commit reads no labels from
    // the body (bodies.ts sets them there too, for Docker). The owner label is set empty, or the
    // image would carry the committed container's into every container made from it. One label an
    // instruction, unquoted: Podman 4.3 reads `LABEL a="" b="c"` as a single label a.
    kept.set('changes', [...(kept.get('changes') ?? []), `LABEL ${ownerLabel(scope)}=`, `LABEL ${imageOwnerLabel(scope)}=${scope.owner}`]);
  }
  const internalNetworks = scope.egress ? egressHead(spec.id, chosen.params!, kept, scope.egress) : [];
  if (spec.id === 'grpc') throw forbidden('buildkit-grpc', BUILDKIT_GRPC_REFUSED);
  if (spec.id === 'build' && scope.buildsOnHostNetwork) {
    throw forbidden(
      'build-network',
      "This engine (Podman) runs a build's RUN steps on this host's network whatever the build's network mode says, where they would reach what listens on this host: builds are not offered through this endpoint here. Build on the host, or use Docker.",
    );
  }
  const parts: TargetParts = {
    version: target.version,
    segments: target.segments,
    objects,
    queryObjects: spec.id === 'commit' ? [{ name: 'container', kind: 'container' }] : [],
  };

  const body = bodyPlan(spec);
  const headers = checkHeaders(headerValues(head.headers), spec, body, method);
  return {
    kind: 'forward',
    route: spec.id,
    method,
    target: targetOf(parts, kept),
    headers,
    body,
    hijack: spec.hijack === true,
    owned,
    recheckBinds: spec.recheckBinds === true,
    ...(spec.response !== undefined ? { response: spec.response } : {}),
    query: kept,
    internalNetworks,
    ...(scope.egress ? { egressMode: scope.egress.mode } : {}),
    parts,
    ...(scope.egress && RUNS_INSIDE[spec.id] !== undefined ? { runsInside: RUNS_INSIDE[spec.id] } : {}),
  };
}

/**
 * Under an egress policy, the routes that would make the daemon reach the network for the caller:
 * builds and pushes are refused, pulls, searches and manifest lookups must name a registry the
 * policy allows. Returns the path's network of a connect, which checkOwned refuses.
 */
function egressHead(
  route: RouteId,
  params: ReadonlyMap<string, string>,
  query: ReadonlyMap<string, readonly string[]>,
  egress: EndpointEgress,
): string[] {
  switch (route) {
    case 'build':
    case 'session':
    case 'grpc':
    case 'image-push':
      return refusedRoute(egress, route);
    case 'image-pull': {
      const image = query.get('fromImage')?.[0];
      if (image) checkRegistry(egress, registryOfImage(image), `pulling ${image}`);
      return [];
    }
    case 'distribution-inspect': {
      const image = params.get('image')!;
      checkRegistry(egress, registryOfImage(image), `looking up ${image}`);
      return [];
    }
    case 'image-search': {
      const term = query.get('term')?.[0] ?? '';
      checkRegistry(egress, registryOfSearch(term), `searching for ${term}`);
      return [];
    }
    case 'network-connect':
      return [params.get('network')!];
    default:
      return [];
  }
}

function bodyPlan(spec: RouteSpec): BodyPlan {
  switch (spec.body) {
    case 'json':
    case 'json-optional':
      return { kind: 'json', limit: spec.bodyLimit ?? ENDPOINT_LIMITS.jsonBody, optional: spec.body === 'json-optional' };
    case 'stream':
      return { kind: 'stream', contentType: 'application/x-tar' };
    default:
      return { kind: 'none' };
  }
}

/** Content types Go's net/http would read as form values (Docker reads its parameters with r.FormValue, which takes them from the body too). */
function isFormType(type: string): boolean {
  return type === 'application/x-www-form-urlencoded' || type.startsWith('multipart/');
}

/**
 * The framing and hop-by-hop headers, checked so that no two parsers can read the request
 * differently, and the headers to forward: only those the route uses.
 */
function checkHeaders(h: Map<string, string[]>, spec: RouteSpec, body: BodyPlan, method: string): Record<string, string | string[]> {
  const cl = h.get('content-length');
  const te = h.get('transfer-encoding');
  if (cl && (cl.length > 1 || !/^[0-9]{1,15}$/.test(cl[0].trim())))
    throw malformed('headers', 'The request has more than one Content-Length, or one that is not a number.');
  if (te && (te.length > 1 || te[0].trim().toLowerCase() !== 'chunked'))
    throw malformed('headers', 'Transfer-Encoding may only be chunked.');
  if (cl && te) throw malformed('headers', 'The request has both Content-Length and Transfer-Encoding.');
  const length = cl ? Number(cl[0].trim()) : te ? undefined : 0;
  if (body.kind === 'none' && length !== 0) throw malformed('headers', `${method} ${spec.path} takes no body.`);
  if (body.kind === 'json' && length !== undefined && length > body.limit) {
    throw malformed('body-size', `The body is larger than the ${body.limit} bytes this endpoint reads for ${spec.path}.`, 413);
  }
  const expect = h.get('expect');
  if (expect && (expect.length > 1 || expect[0].trim().toLowerCase() !== '100-continue'))
    throw malformed('headers', 'Expect may only be 100-continue.');
  const teHeader = h.get('te');
  if (teHeader && tokens(teHeader).some((t) => t !== 'trailers')) throw malformed('headers', 'TE may only be trailers.');
  const connection = tokens(h.get('connection'));
  const bad = connection.find((t) => !['keep-alive', 'close', 'upgrade'].includes(t));
  if (bad !== undefined) throw malformed('headers', `Connection may list keep-alive, close and upgrade only, not ${bad}.`);
  const upgrade = tokens(h.get('upgrade'));
  if (upgrade.length > 0 || connection.includes('upgrade')) {
    if (upgrade.length !== 1 || !connection.includes('upgrade') || !(spec.upgrade ?? []).includes(upgrade[0])) {
      const allowed = spec.upgrade ? `Upgrade: ${spec.upgrade.join(' or ')} with Connection: Upgrade` : 'no Upgrade';
      throw malformed('upgrade', `${spec.path} takes ${allowed}.`);
    }
  }
  if (h.has('proxy-connection')) throw malformed('headers', 'Proxy-Connection is not accepted.');
  const type = mediaType(h.get('content-type'));
  if (type !== undefined && isFormType(type))
    throw malformed('headers', `Content-Type ${type} is not accepted: Docker would read parameters from such a body.`);
  if (body.kind === 'json' && length !== 0 && type !== undefined && type !== 'application/json') {
    throw malformed('headers', `${spec.path} takes a JSON body (Content-Type application/json), not ${type}.`);
  }

  const out: Record<string, string | string[]> = {};
  const agent = h.get('user-agent');
  if (agent?.length === 1 && /^[\x20-\x7e]{1,512}$/.test(agent[0])) out['user-agent'] = agent[0];
  if (body.kind === 'json' && length !== 0) out['content-type'] = 'application/json';
  if (body.kind === 'stream') out['content-type'] = body.contentType;
  if (upgrade.length === 1) {
    out.connection = 'Upgrade';
    out.upgrade = upgrade[0];
  }
  for (const name of spec.forward ?? []) {
    const v = h.get(name);
    if (v === undefined) continue;
    if (!v.every((x) => /^[\x20-\x7e]*$/.test(x)))
      throw malformed('headers', `The ${name} header holds characters outside printable ASCII.`);
    if (name === 'x-docker-expose-session-grpc-method') out[name] = v;
    else if (v.length === 1) out[name] = v[0];
    else throw malformed('headers', `The request has more than one ${name} header.`);
  }
  return out;
}
