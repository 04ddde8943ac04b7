/**
 * The Docker endpoint's policy (plan/dockerEndpoint/policy.ts, docs/decisions/0047-docker-endpoint-policy.md):
 * one refusal per rule, the request sequences Compose, Testcontainers and BuildKit send, and a
 * seeded fuzz of hostile bodies and targets in which nothing dangerous may pass. The engine and the
 * host are tables; `send` plays the adapter's part in the order plan/dockerEndpoint/policy.ts describes.
 *
 * A fuzz failure prints its seed; DOCKER_API_FUZZ_SEED=<seed> replays it.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { posix } from 'node:path';
import { DOCKER_ENDPOINT } from '../../extension/src/contract/dockerEndpoint';
import { LABELS } from '../../extension/src/contract/upstream';
import {
  bodyLookups,
  checkBody,
  checkOwned,
  checkStartBinds,
  classify,
  type Classified,
  type EndpointScope,
  isOwned,
  isRefusal,
  type ObjectKind,
  type Ownership,
  parseBody,
  type Refusal,
  RULES,
  type RuleId,
  scopeProtections,
  scrubInfo,
  startBindSources,
} from '../../extension/src/plan/dockerEndpoint/policy';
import { dockerfileWords } from '../../extension/src/plan/dockerEndpoint/changes';
import { caseVariant, keyVariant, prng, Rng } from '../support/fuzz';

const WS = '/home/u/proj';
const SOCK = '/run/user/1000/toolbox/endpoints/proj.sock';
const OWNER = 'toolbox-proj-1a2b3c4d';
const OWN = LABELS.dockerOwner;
const IMAGE_OWN = LABELS.dockerImageOwner;
/** SCOPE's image names (routes.ts imageNamespace). */
const NS = `localhost/${OWNER}/`;
const NSQ = encodeURIComponent(NS);
const SCOPE: EndpointScope = {
  owner: OWNER,
  workspace: WS,
  endpointSocket: SOCK,
  protectedPaths: [
    { path: `${WS}/.git`, readonly: false },
    { path: `${WS}/.git/config`, readonly: true },
    { path: `${WS}/.git/hooks`, readonly: true },
    { path: `${WS}/.vscode`, readonly: true },
    { path: `${WS}/.toolbox.yaml`, readonly: true },
  ],
};

/** The engine's objects and whose they are; anything not listed is missing. */
const OBJECTS: Record<ObjectKind, { own: string[]; other: string[] }> = {
  container: { own: ['web-1', 'proj-db-1', 'tc-1', 'ryuk'], other: [OWNER, 'victim'] },
  volume: { own: ['proj_data'], other: ['victim-data'] },
  network: { own: ['proj_default', 'tc-net'], other: ['victim_default'] },
  image: { own: ['proj-web', 'proj-web:latest'], other: ['postgres:16'] },
  exec: { own: ['e0wn'], other: ['e0ther'] },
};

function ownership(kind: ObjectKind, ref: string): Ownership {
  return OBJECTS[kind].own.includes(ref) ? 'own' : OBJECTS[kind].other.includes(ref) ? 'other' : 'missing';
}

/** An image that carries the owner label of SCOPE (a Dockerfile's LABEL, or an image from before it was refused). */
const CARRIES_OWNER = 'owner-labelled:1';

/** Host paths that are links or missing; every other path exists as itself. */
const HOST: Record<string, string | undefined> = {
  [`${WS}/link`]: '/etc',
  [`${WS}/data/link`]: '/',
  [`${WS}/missing`]: undefined,
  '/var/run/docker.sock': '/run/docker.sock',
};

function realpath(source: string): string | undefined {
  if (Object.hasOwn(HOST, source)) return HOST[source];
  const p = posix.normalize(source);
  for (const [link, to] of Object.entries(HOST)) {
    if (p.startsWith(`${link}/`)) return to === undefined ? undefined : posix.normalize(`${to}/${p.slice(link.length)}`);
  }
  return p.length > 1 ? p.replace(/\/$/, '') : p;
}

interface Req {
  method: string;
  target: string;
  headers?: Record<string, string | string[]>;
  body?: unknown;
}

type Forward = { kind: 'forward'; c: Classified; body?: Record<string, unknown>; volumesToCreate: string[] };
type Outcome = Forward | Refusal;

/** The adapter's part: classify, prove ownership, read, look up, check. */
function send(req: Req, scope: EndpointScope = SCOPE): Outcome {
  const raw =
    req.body === undefined
      ? undefined
      : typeof req.body === 'string'
        ? Buffer.from(req.body, 'utf8')
        : Buffer.isBuffer(req.body)
          ? req.body
          : Buffer.from(JSON.stringify(req.body), 'utf8');
  const headers: Record<string, string | string[]> = {
    ...(raw !== undefined ? { 'content-length': String(raw.length), 'content-type': 'application/json' } : {}),
    ...(req.headers ?? {}),
  };
  const c = classify({ method: req.method, target: req.target, headers }, scope);
  if (isRefusal(c)) return c;
  const notOwned = checkOwned(c, ownership);
  if (notOwned) return notOwned;
  if (c.body.kind !== 'json') return { kind: 'forward', c, volumesToCreate: [] };
  const parsed = parseBody(c, raw ?? Buffer.alloc(0));
  if (isRefusal(parsed)) return parsed;
  const lookups = bodyLookups(parsed, scope);
  if (isRefusal(lookups)) return lookups;
  const realpaths = new Map(lookups.bindSources.map((s) => [s, realpath(s)] as const));
  const checked = checkBody(parsed, scope, { owner: ownership, realpaths, imageCarriesOwner: (ref) => ref === CARRIES_OWNER });
  if (isRefusal(checked)) return checked;
  return {
    kind: 'forward',
    c,
    body: checked.body.length > 0 ? (JSON.parse(checked.body.toString('utf8')) as Record<string, unknown>) : undefined,
    volumesToCreate: checked.volumesToCreate.map((v) => v.name),
  };
}

function passes(o: Outcome, what = ''): Forward {
  assert.ok(!isRefusal(o), `${what} refused: ${isRefusal(o) ? `${o.rule}: ${o.message}` : ''}`);
  return o as Forward;
}

function refused(o: Outcome, rule: RuleId, what = ''): Refusal {
  assert.ok(isRefusal(o), `${what} passed, expected refusal by ${rule}: ${JSON.stringify(o).slice(0, 400)}`);
  assert.equal((o as Refusal).rule, rule, `${what}: ${(o as Refusal).message}`);
  return o as Refusal;
}

const create = (body: unknown, target = '/v1.41/containers/create'): Req => ({ method: 'POST', target, body });
const withHost = (hc: Record<string, unknown>, rest: Record<string, unknown> = {}) => create({ Image: 'alpine', ...rest, HostConfig: hc });

/** What the docker CLI sends for `docker run --rm -it alpine sh` (Go's zero values, no omitempty). */
const DOCKER_RUN = {
  Hostname: '',
  Domainname: '',
  User: '',
  AttachStdin: true,
  AttachStdout: true,
  AttachStderr: true,
  Tty: true,
  OpenStdin: true,
  StdinOnce: true,
  Env: null,
  Cmd: ['sh'],
  Image: 'alpine',
  Volumes: {},
  WorkingDir: '',
  Entrypoint: null,
  OnBuild: null,
  Labels: {},
  HostConfig: {
    Binds: null,
    ContainerIDFile: '',
    LogConfig: { Type: '', Config: {} },
    NetworkMode: 'default',
    PortBindings: {},
    RestartPolicy: { Name: 'no', MaximumRetryCount: 0 },
    AutoRemove: true,
    VolumeDriver: '',
    VolumesFrom: null,
    ConsoleSize: [50, 200],
    CapAdd: null,
    CapDrop: null,
    CgroupnsMode: '',
    Dns: [],
    DnsOptions: [],
    DnsSearch: [],
    ExtraHosts: null,
    GroupAdd: null,
    IpcMode: '',
    Cgroup: '',
    Links: null,
    OomScoreAdj: 0,
    PidMode: '',
    Privileged: false,
    PublishAllPorts: false,
    ReadonlyRootfs: false,
    SecurityOpt: null,
    UTSMode: '',
    UsernsMode: '',
    ShmSize: 0,
    Isolation: '',
    CpuShares: 0,
    Memory: 0,
    NanoCpus: 0,
    CgroupParent: '',
    BlkioWeight: 0,
    BlkioWeightDevice: [],
    BlkioDeviceReadBps: [],
    BlkioDeviceWriteBps: [],
    BlkioDeviceReadIOps: [],
    BlkioDeviceWriteIOps: [],
    CpuPeriod: 0,
    CpuQuota: 0,
    CpuRealtimePeriod: 0,
    CpuRealtimeRuntime: 0,
    CpusetCpus: '',
    CpusetMems: '',
    Devices: [],
    DeviceCgroupRules: null,
    DeviceRequests: null,
    MemoryReservation: 0,
    MemorySwap: 0,
    MemorySwappiness: null,
    OomKillDisable: null,
    PidsLimit: null,
    Ulimits: [],
    CpuCount: 0,
    CpuPercent: 0,
    IOMaximumIOps: 0,
    IOMaximumBandwidth: 0,
    MaskedPaths: null,
    ReadonlyPaths: null,
  },
  NetworkingConfig: { EndpointsConfig: {} },
};

/** An endpoint entry as the docker CLI sends it with nothing set: every field present, empty. */
const BLANK_ENDPOINT = {
  IPAMConfig: null,
  Links: null,
  Aliases: null,
  MacAddress: '',
  DriverOpts: null,
  GwPriority: 0,
  NetworkID: '',
  EndpointID: '',
  Gateway: '',
  IPAddress: '',
  IPPrefixLen: 0,
  IPv6Gateway: '',
  GlobalIPv6Address: '',
  GlobalIPv6PrefixLen: 0,
  DNSNames: null,
};

/** Compose's create of service `web` (docker/compose create.go: the whole HostConfig, binds by Binds, volumes by Mounts). */
const COMPOSE_WEB = {
  ...DOCKER_RUN,
  AttachStdin: false,
  Tty: false,
  OpenStdin: false,
  StdinOnce: false,
  ExposedPorts: { '8080/tcp': {} },
  Env: ['NODE_ENV=development'],
  Cmd: ['npm', 'start'],
  Healthcheck: { Test: ['CMD-SHELL', 'curl -f http://localhost:8080'], Interval: 30000000000, Timeout: 5000000000, Retries: 3 },
  Image: 'proj-web',
  WorkingDir: '/app',
  Labels: {
    'com.docker.compose.project': 'proj',
    'com.docker.compose.service': 'web',
    'com.docker.compose.oneoff': 'False',
    'com.docker.compose.container-number': '1',
    'com.docker.compose.config-hash': 'ab12',
  },
  HostConfig: {
    ...DOCKER_RUN.HostConfig,
    Binds: [`${WS}:/app:rw`],
    NetworkMode: 'proj_default',
    PortBindings: { '8080/tcp': [{ HostIp: '', HostPort: '8080' }] },
    RestartPolicy: { Name: 'unless-stopped', MaximumRetryCount: 0 },
    AutoRemove: false,
    ConsoleSize: [0, 0],
    ExtraHosts: ['host.docker.internal:host-gateway'],
    Mounts: [
      { Type: 'volume', Source: 'proj_data', Target: '/data', VolumeOptions: {} },
      { Type: 'volume', Source: 'proj_cache', Target: '/cache', VolumeOptions: { NoCopy: false } },
      { Type: 'tmpfs', Target: '/run/app', TmpfsOptions: { SizeBytes: 1048576 } },
    ],
    Init: true,
  },
  NetworkingConfig: {
    EndpointsConfig: {
      proj_default: { ...BLANK_ENDPOINT, Aliases: ['proj-web-1', 'web'] },
    },
  },
};

/** testcontainers-node's reaper (packages/testcontainers/src/reaper/reaper.ts), through dockerode. */
const RYUK = {
  Image: 'testcontainers/ryuk:0.12.0',
  name: 'testcontainers-ryuk-5f2e',
  ExposedPorts: { '8080': {} },
  Labels: { 'org.testcontainers': 'true', 'org.testcontainers.lang': 'node', 'org.testcontainers.session-id': '5f2e' },
  HostConfig: { AutoRemove: true, Binds: ['/var/run/docker.sock:/var/run/docker.sock:rw'], PortBindings: { '8080': [{ HostPort: '0' }] } },
};

/** dockerode's target for a create: the whole options again as the query (docker-modem buildQuerystring). */
function dockerodeTarget(path: string, opts: Record<string, unknown>): string {
  const q = new URLSearchParams();
  for (const [k, v] of Object.entries(opts))
    q.append(k, v !== null && typeof v === 'object' && !Array.isArray(v) ? JSON.stringify(v) : String(v));
  return `${path}?${q.toString()}`;
}

/** A request that each rule refuses. */
const RULE_CASES: Record<RuleId, Req & { scope?: EndpointScope }> = {
  target: { method: 'GET', target: 'http://localhost/containers/json' },
  'api-version': { method: 'GET', target: '/v1.23/containers/json' },
  query: { method: 'GET', target: '/containers/json?all=1;size=1' },
  method: { method: 'PUT', target: '/containers/json' },
  headers: { method: 'POST', target: '/containers/create', headers: { 'content-length': '2', 'transfer-encoding': 'chunked' }, body: '{}' },
  upgrade: { method: 'GET', target: '/containers/json', headers: { connection: 'Upgrade', upgrade: 'tcp' } },
  'body-size': { method: 'POST', target: '/containers/create', headers: { 'content-length': String(2 * 1024 * 1024) } },
  'unknown-route': { method: 'GET', target: '/system/df' },
  swarm: { method: 'GET', target: '/v1.41/services' },
  plugins: { method: 'POST', target: '/plugins/pull?remote=evil/plugin' },
  'not-owned': { method: 'GET', target: '/containers/victim/json' },
  json: create('{"Image":"alpine","StopTimeout":1.5}'),
  'duplicate-key': create('{"Image":"alpine","image":"evil"}'),
  'unknown-field': create({ Image: 'alpine', HostConfig: { privileged: true } }),
  'field-type': create({ Image: 5 }),
  'owner-label': create({ Image: 'alpine', Labels: { [OWN]: 'someone-else' } }),
  privileged: withHost({ Privileged: true }),
  'pid-mode': withHost({ PidMode: 'host' }),
  'ipc-mode': withHost({ IpcMode: 'host' }),
  'uts-mode': withHost({ UTSMode: 'host' }),
  'network-mode': withHost({ NetworkMode: 'host' }),
  'userns-mode': withHost({ UsernsMode: 'host' }),
  'cgroupns-mode': withHost({ CgroupnsMode: 'host' }),
  devices: withHost({ Devices: [{ PathOnHost: '/dev/sda', PathInContainer: '/dev/sda', CgroupPermissions: 'rwm' }] }),
  'device-requests': withHost({ DeviceRequests: [{ Driver: 'nvidia', Count: -1, Capabilities: [['gpu']] }] }),
  'device-cgroup-rules': withHost({ DeviceCgroupRules: ['b *:* rwm'] }),
  'cap-add': withHost({ CapAdd: ['SYS_ADMIN'] }),
  'security-opt': withHost({ SecurityOpt: ['seccomp=unconfined'] }),
  sysctls: withHost({ Sysctls: { 'net.ipv4.ip_forward': '1' } }),
  'masked-paths': withHost({ MaskedPaths: [] }),
  'readonly-paths': withHost({ ReadonlyPaths: [] }),
  runtime: withHost({ Runtime: 'nvidia' }),
  'cgroup-parent': withHost({ CgroupParent: '/' }),
  'log-driver': withHost({ LogConfig: { Type: 'syslog', Config: { 'syslog-address': 'tcp://127.0.0.1:17654' } } }),
  oom: withHost({ OomKillDisable: true }),
  'storage-opt': withHost({ StorageOpt: { size: '1T' } }),
  annotations: withHost({ Annotations: { 'run.oci.keep_original_groups': '1' } }),
  'blkio-devices': withHost({ BlkioDeviceReadBps: [{ Path: '/dev/sda', Rate: 1 }] }),
  realtime: withHost({ CpuRealtimeRuntime: 950000 }),
  'container-id-file': withHost({ ContainerIDFile: '/etc/cron.d/x' }),
  'volume-driver': withHost({ VolumeDriver: 'evil' }),
  'volume-options': {
    method: 'POST',
    target: '/volumes/create',
    body: { Name: 'root', Driver: 'local', DriverOpts: { type: 'none', o: 'bind', device: '/' } },
  },
  'mount-type': withHost({ Mounts: [{ Type: 'npipe', Source: '\\\\.\\pipe\\docker_engine', Target: '/x' }] }),
  'bind-source': withHost({ Binds: ['/:/host'] }),
  'bind-missing': withHost({ Binds: [`${WS}/missing:/x`] }),
  'bind-options': withHost({ Binds: [`${WS}/src:/src:rshared`] }),
  'bind-restart': withHost({ Binds: [`${WS}/src:/src`], RestartPolicy: { Name: 'always' } }),
  'protected-path': withHost({ Binds: [`${WS}/.vscode:/x`] }),
  'docker-socket': {
    ...withHost({ Binds: ['/var/run/docker.sock:/var/run/docker.sock'] }),
    scope: { ...SCOPE, endpointSocket: undefined },
  },
  'network-driver': { method: 'POST', target: '/networks/create', body: { Name: 'lan', Driver: 'macvlan' } },
  'network-options': {
    method: 'POST',
    target: '/networks/create',
    body: { Name: 'br', Options: { 'com.docker.network.bridge.name': 'eth0' } },
  },
  'update-restart': { method: 'POST', target: '/containers/web-1/update', body: { RestartPolicy: { Name: 'always' } } },
  checkpoint: { method: 'POST', target: '/containers/web-1/start?checkpoint=c1&checkpoint-dir=/var/lib' },
  'build-remote': { method: 'POST', target: '/build?remote=https://example.com/ctx.tar', headers: { 'content-type': 'application/x-tar' } },
  'build-network': { method: 'POST', target: `/build?networkmode=host&t=${NSQ}proj-web`, headers: { 'content-type': 'application/x-tar' } },
  'build-option': {
    method: 'POST',
    target: '/build?outputs=%5B%7B%22Type%22%3A%22local%22%7D%5D',
    headers: { 'content-type': 'application/x-tar' },
  },
  'image-import': { method: 'POST', target: '/images/create?fromSrc=http%3A%2F%2F169.254.169.254%2F&repo=x' },
  'published-port': withHost({ PortBindings: { '80/tcp': [{ HostIp: '0.0.0.0', HostPort: '8080' }] } }),
  'buildkit-grpc': { method: 'POST', target: '/v1.47/grpc', headers: { connection: 'Upgrade', upgrade: 'h2c' } },
  'commit-changes': { method: 'POST', target: `/commit?container=web-1&repo=${NSQ}snap&changes=${encodeURIComponent('ONBUILD RUN id')}` },
  'runtime-image': { method: 'POST', target: '/images/alpine/tag?repo=toolbox-vscode/runtime&tag=0123abcd' },
  'image-name': { method: 'POST', target: '/images/alpine/tag?repo=debian&tag=bookworm-slim' },
  'owner-image': create({ Image: CARRIES_OWNER }),
  'reserved-name': {
    method: 'POST',
    target: '/containers/create?name=toolbox-peer-anchor',
    body: { Image: 'debian' },
    scope: { ...SCOPE, reservedPrefix: 'toolbox-' },
  },
  egress: {
    method: 'POST',
    target: '/images/proj-web/push?tag=latest',
    scope: { ...SCOPE, egress: { mode: 'allowlist', registryAllowed: () => false } },
  },
};

describe('docker endpoint policy: Toolbox’s own names are not the caller’s to take (reserved-name)', () => {
  const scope: EndpointScope = { ...SCOPE, reservedPrefix: 'toolbox-' };
  it('refuses a container, a rename, a volume, a network and a volume a create would make, in the namespace', () => {
    refused(
      send({ method: 'POST', target: '/containers/create?name=%2Ftoolbox-x-1234abcd', body: { Image: 'a' } }, scope),
      'reserved-name',
    );
    refused(send({ method: 'POST', target: `/containers/tc-1/rename?name=toolbox-peer-anchor` }, scope), 'reserved-name');
    refused(send({ method: 'POST', target: '/volumes/create', body: { Name: 'toolbox-cc-socks' } }, scope), 'reserved-name');
    refused(send({ method: 'POST', target: '/networks/create', body: { Name: 'toolbox-net' } }, scope), 'reserved-name');
    refused(send(create({ Image: 'a', HostConfig: { Binds: ['toolbox-cc-socks:/s'] } }), scope), 'reserved-name');
  });
  it('takes names outside it, and every name when the scope reserves none', () => {
    passes(send({ method: 'POST', target: '/containers/create?name=toolboxy', body: { Image: 'a' } }, scope));
    passes(send({ method: 'POST', target: '/volumes/create', body: { Name: 'app-toolbox-data' } }, scope));
    passes(send({ method: 'POST', target: '/containers/create?name=toolbox-x', body: { Image: 'a' } }));
  });
});

describe('docker endpoint policy: one refusal per rule', () => {
  it('has a case for every rule, and every rule is explained', () => {
    assert.deepEqual(Object.keys(RULE_CASES).sort(), Object.keys(RULES).sort());
  });
  for (const [rule, req] of Object.entries(RULE_CASES) as Array<[RuleId, Req & { scope?: EndpointScope }]>) {
    it(rule, () => {
      const r = refused(send(req, req.scope), rule, rule);
      assert.ok(r.message.length > 20 && !r.message.includes('\n'), r.message);
      // An egress refusal does not offer the raw socket: that would give the container the daemon's network.
      if ((r.status === 403 || r.status === 404) && rule !== 'egress')
        assert.match(r.message, /toolbox\.dockerEndpoint to raw-socket in your VS Code User settings/);
      if (rule === 'egress') assert.doesNotMatch(r.message, /raw-socket/);
    });
  }
});

describe('docker endpoint policy: refusals in more detail', () => {
  const more: Array<[string, Req, RuleId]> = [
    ['HEAD where Docker has no HEAD', { method: 'HEAD', target: '/containers/json' }, 'method'],
    ['a lowercase method', { method: 'get', target: '/_ping' }, 'method'],
    ['seccomp profile', withHost({ SecurityOpt: ['seccomp={"defaultAction":"SCMP_ACT_ALLOW"}'] }), 'security-opt'],
    ['apparmor=unconfined', withHost({ SecurityOpt: ['apparmor=unconfined'] }), 'security-opt'],
    ['label=disable', withHost({ SecurityOpt: ['label=disable'] }), 'security-opt'],
    ['label=type:spc_t', withHost({ SecurityOpt: ['label=type:spc_t'] }), 'security-opt'],
    ['no-new-privileges=false', withHost({ SecurityOpt: ['no-new-privileges=false'] }), 'security-opt'],
    ['systempaths=unconfined', withHost({ SecurityOpt: ['systempaths=unconfined'] }), 'security-opt'],
    ['a custom MaskedPaths list', withHost({ MaskedPaths: ['/proc/asound'] }), 'masked-paths'],
    ['PidMode of a container not its own', withHost({ PidMode: `container:${OWNER}` }), 'not-owned'],
    ['IpcMode of a container not its own', withHost({ IpcMode: 'container:victim' }), 'not-owned'],
    ['NetworkMode of a container not its own', withHost({ NetworkMode: 'container:victim' }), 'not-owned'],
    ['Cgroup of a container not its own', withHost({ Cgroup: 'container:victim' }), 'not-owned'],
    ['VolumesFrom a container not its own', withHost({ VolumesFrom: ['victim:ro'] }), 'not-owned'],
    ['Links to a container not its own', withHost({ Links: ['/victim:/web/db'] }), 'not-owned'],
    ['a network not its own', withHost({ NetworkMode: 'victim_default' }), 'not-owned'],
    ['an endpoint on the host network', create({ Image: 'a', NetworkingConfig: { EndpointsConfig: { host: {} } } }), 'network-mode'],
    [
      'an endpoint whose NetworkID names another’s network',
      create({ Image: 'a', NetworkingConfig: { EndpointsConfig: { proj_default: { NetworkID: 'victim_default' } } } }),
      'not-owned',
    ],
    [
      'a connect whose NetworkID names another’s network',
      { method: 'POST', target: '/networks/tc-net/connect', body: { Container: 'tc-1', EndpointConfig: { NetworkID: 'victim_default' } } },
      'not-owned',
    ],
    [
      'endpoint driver options',
      create({
        Image: 'a',
        NetworkingConfig: { EndpointsConfig: { proj_default: { DriverOpts: { 'com.docker.network.endpoint.sysctls': 'x' } } } },
      }),
      'network-options',
    ],
    ['a volume not its own', withHost({ Binds: ['victim-data:/data'] }), 'not-owned'],
    ['a volume mount not its own', withHost({ Mounts: [{ Type: 'volume', Source: 'victim-data', Target: '/d' }] }), 'not-owned'],
    [
      'a local volume with options in a mount',
      withHost({
        Mounts: [
          { Type: 'volume', Source: 'new', Target: '/d', VolumeOptions: { DriverConfig: { Name: 'local', Options: { device: '/' } } } },
        ],
      }),
      'volume-driver',
    ],
    ['a bind through a link', withHost({ Binds: [`${WS}/link:/x`] }), 'bind-source'],
    ['a bind through a link further down', withHost({ Binds: [`${WS}/data/link/etc:/x:ro`] }), 'bind-source'],
    ['a bind that climbs out', withHost({ Binds: [`${WS}/../..:/x`] }), 'bind-source'],
    ['a bind of containerd’s socket', withHost({ Binds: ['/run/containerd/containerd.sock:/s'] }), 'bind-source'],
    ['a Mounts bind of /', withHost({ Mounts: [{ Type: 'bind', Source: '/', Target: '/host' }] }), 'bind-source'],
    [
      'CreateMountpoint',
      withHost({ Mounts: [{ Type: 'bind', Source: `${WS}/src`, Target: '/s', BindOptions: { CreateMountpoint: true } }] }),
      'bind-options',
    ],
    [
      'rshared propagation',
      withHost({ Mounts: [{ Type: 'bind', Source: `${WS}/src`, Target: '/s', BindOptions: { Propagation: 'rshared' } }] }),
      'bind-options',
    ],
    ['the z relabel', withHost({ Binds: [`${WS}:/app:z`] }), 'bind-options'],
    ['a protected file read-write', withHost({ Binds: [`${WS}/.git/config:/c`] }), 'protected-path'],
    [
      'inside a protected dir read-write',
      withHost({ Mounts: [{ Type: 'bind', Source: `${WS}/.git/hooks/pre-commit`, Target: '/h' }] }),
      'protected-path',
    ],
    [
      'VolumesFrom with a restart policy',
      withHost({ VolumesFrom: ['web-1'], RestartPolicy: { Name: 'on-failure', MaximumRetryCount: 3 } }),
      'bind-restart',
    ],
    ['a negative OomScoreAdj', withHost({ OomScoreAdj: -1000 }), 'oom'],
    ['the rtprio ulimit', withHost({ Ulimits: [{ Name: 'rtprio', Soft: 99, Hard: 99 }] }), 'realtime'],
    ['the rttime ulimit, upper case', withHost({ Ulimits: [{ Name: 'RTTIME', Soft: -1, Hard: -1 }] }), 'realtime'],
    [
      'the rtprio ulimit as Podman names it, after another',
      withHost({
        Ulimits: [
          { Name: 'nofile', Soft: 1024, Hard: 1024 },
          { Name: 'RLIMIT_RTPRIO', Soft: 1, Hard: 1 },
        ],
      }),
      'realtime',
    ],
    [
      'an update with the rtprio ulimit',
      { method: 'POST', target: '/containers/web-1/update', body: { Ulimits: [{ Name: 'rtprio', Soft: 99, Hard: 99 }] } },
      'realtime',
    ],
    [
      'a build with the rtprio ulimit',
      { method: 'POST', target: `/build?ulimits=${encodeURIComponent('[{"Name":"rtprio","Soft":99,"Hard":99}]')}` },
      'realtime',
    ],
    [
      'journald with options',
      withHost({ LogConfig: { Type: 'json-file', Config: { 'syslog-address': 'udp://1.2.3.4:514' } } }),
      'log-driver',
    ],
    ['top-level Privileged (Docker’s deprecated embedding)', create({ Image: 'alpine', Privileged: true }), 'unknown-field'],
    ['top-level Binds', create({ Image: 'alpine', Binds: ['/:/host'] }), 'unknown-field'],
    ['hostconfig in lower case', create({ Image: 'alpine', hostconfig: { Privileged: true } }), 'unknown-field'],
    ['a long-s SecurityOpt', create('{"Image":"a","HostConfig":{"\u017fecurityOpt":["seccomp=unconfined"]}}'), 'unknown-field'],
    ['a struct{} value with content', create({ Image: 'a', ExposedPorts: { '80/tcp': { Privileged: true } } }), 'unknown-field'],
    ['a privileged exec', { method: 'POST', target: '/containers/web-1/exec', body: { Cmd: ['sh'], Privileged: true } }, 'privileged'],
    ['an exec into the workspace container', { method: 'POST', target: `/containers/${OWNER}/exec`, body: { Cmd: ['sh'] } }, 'not-owned'],
    ['stop of the workspace container', { method: 'POST', target: `/containers/${OWNER}/stop` }, 'not-owned'],
    ['exec start of another’s exec', { method: 'POST', target: '/exec/e0ther/start', body: { Detach: true } }, 'not-owned'],
    ['archive of another’s container', { method: 'GET', target: '/containers/victim/archive?path=/etc/shadow' }, 'not-owned'],
    [
      'archive put into another’s container',
      {
        method: 'PUT',
        target: '/containers/victim/archive?path=/',
        headers: { 'content-type': 'application/x-tar', 'content-length': '0' },
      },
      'not-owned',
    ],
    ['export of another’s container', { method: 'GET', target: '/containers/victim/export' }, 'not-owned'],
    ['commit of another’s container', { method: 'POST', target: `/commit?container=victim&repo=${NSQ}mine` }, 'not-owned'],
    ['commit onto a name the host uses', { method: 'POST', target: '/commit?container=web-1&repo=debian&tag=bookworm-slim' }, 'image-name'],
    ['build tagged with a name the host uses', { method: 'POST', target: '/build?t=node%3A20' }, 'image-name'],
    [
      'tag onto Docker Hub’s library',
      { method: 'POST', target: '/images/alpine/tag?repo=docker.io%2Flibrary%2Fnode&tag=20' },
      'image-name',
    ],
    ['tag onto the namespace itself, no name', { method: 'POST', target: `/images/alpine/tag?repo=localhost%2F${OWNER}` }, 'image-name'],
    [
      'tag onto a longer owner’s namespace',
      { method: 'POST', target: `/images/alpine/tag?repo=localhost%2F${OWNER}x%2Fapp` },
      'image-name',
    ],
    [
      'tag onto another registry’s same path',
      { method: 'POST', target: `/images/alpine/tag?repo=localhost%3A5000%2F${OWNER}%2Fapp` },
      'image-name',
    ],
    ['update of another’s container', { method: 'POST', target: '/containers/victim/update', body: { Memory: 1 } }, 'not-owned'],
    [
      'update with devices',
      { method: 'POST', target: '/containers/web-1/update', body: { Devices: [{ PathOnHost: '/dev/mem' }] } },
      'devices',
    ],
    ['update with a cgroup parent', { method: 'POST', target: '/containers/web-1/update', body: { CgroupParent: '/' } }, 'cgroup-parent'],
    ['remove of an image not its own', { method: 'DELETE', target: '/images/postgres:16' }, 'not-owned'],
    [
      'a network connect of another’s container',
      { method: 'POST', target: '/networks/proj_default/connect', body: { Container: 'victim' } },
      'not-owned',
    ],
    [
      'a volume create with the owner label',
      { method: 'POST', target: '/volumes/create', body: { Name: 'vv', Labels: { [OWN]: 'x' } } },
      'owner-label',
    ],
    [
      'a volume create with another driver',
      { method: 'POST', target: '/volumes/create', body: { Name: 'vv', Driver: 'rclone' } },
      'volume-driver',
    ],
    ['an ingress network', { method: 'POST', target: '/networks/create', body: { Name: 'n', Ingress: true } }, 'network-options'],
    [
      'build labels with the owner label',
      { method: 'POST', target: `/build?labels=${encodeURIComponent(JSON.stringify({ [OWN]: 'x' }))}` },
      'owner-label',
    ],
    ['a build cgroup parent', { method: 'POST', target: '/build?cgroupparent=/' }, 'cgroup-parent'],
    ['a build network mode given twice', { method: 'POST', target: '/build?networkmode=bridge&networkmode=host' }, 'query'],
    ['an encoded build network mode', { method: 'POST', target: '/build?%6eetworkmode=%68ost' }, 'build-network'],
    [
      'a pull of the runtime image',
      { method: 'POST', target: '/images/create?fromImage=docker.io/toolbox-vscode/runtime&tag=abc' },
      'runtime-image',
    ],
    [
      'a build tagged as the runtime image',
      { method: 'POST', target: '/build?t=ghcr.io/toolbox-dev/toolbox-vscode-runtime:abc' },
      'runtime-image',
    ],
    [
      'a form body (Docker reads parameters from it)',
      { method: 'POST', target: '/build', headers: { 'content-type': 'application/x-www-form-urlencoded', 'content-length': '16' } },
      'headers',
    ],
    [
      'a multipart body',
      { method: 'POST', target: '/build', headers: { 'content-type': 'multipart/form-data; boundary=x', 'content-length': '16' } },
      'headers',
    ],
    ['two Content-Lengths', { method: 'POST', target: '/containers/web-1/start', headers: { 'content-length': ['0', '10'] } }, 'headers'],
    [
      'a body on start (old APIs read a HostConfig there)',
      { method: 'POST', target: '/containers/web-1/start', body: { Privileged: true } },
      'headers',
    ],
    [
      'Transfer-Encoding other than chunked',
      { method: 'POST', target: '/auth', headers: { 'transfer-encoding': 'gzip, chunked' } },
      'headers',
    ],
    ['Expect other than 100-continue', { method: 'POST', target: '/auth', headers: { expect: '200-ok' }, body: {} }, 'headers'],
    ['Connection naming a header', { method: 'GET', target: '/_ping', headers: { connection: 'close, X-Registry-Auth' } }, 'headers'],
    [
      'Upgrade: h2c on attach',
      { method: 'POST', target: '/containers/web-1/attach?stream=1', headers: { connection: 'Upgrade', upgrade: 'h2c' } },
      'upgrade',
    ],
    ['Upgrade without Connection: Upgrade', { method: 'POST', target: '/session', headers: { upgrade: 'h2c' } }, 'upgrade'],
    ['/grpc without the upgrade headers', { method: 'POST', target: '/grpc' }, 'buildkit-grpc'],
    ['websocket upgrade', { method: 'POST', target: '/session', headers: { connection: 'Upgrade', upgrade: 'websocket' } }, 'upgrade'],
    ['a body on a GET', { method: 'GET', target: '/containers/json', headers: { 'content-length': '5' } }, 'headers'],
  ];
  for (const [what, req, rule] of more) it(what, () => void refused(send(req), rule, what));
});

describe('docker endpoint policy: what passes and how it is rewritten', () => {
  it('adds the owner label to a container, keeping the client’s labels, and writes the body again', () => {
    const f = passes(send(create({ ...DOCKER_RUN, Labels: { a: 'b' } })));
    assert.deepEqual(f.body!.Labels, { a: 'b', [OWN]: OWNER });
    assert.equal((f.body!.HostConfig as Record<string, unknown>).Privileged, false);
  });

  it('takes the docker CLI’s `docker run` body as it is', () => {
    const f = passes(send(create(DOCKER_RUN, '/v1.47/containers/create?name=scratch')));
    assert.equal(f.c.target, '/v1.47/containers/create?name=scratch');
  });

  it('takes the endpoint the docker CLI (28) names for a plain `docker run`: the default network', () => {
    const endpoint = BLANK_ENDPOINT;
    const f = passes(send(create({ ...DOCKER_RUN, NetworkingConfig: { EndpointsConfig: { default: endpoint } } })));
    assert.deepEqual(Object.keys((f.body!.NetworkingConfig as { EndpointsConfig: object }).EndpointsConfig), ['default']);
    refused(
      send(create({ ...DOCKER_RUN, NetworkingConfig: { EndpointsConfig: { default: { ...endpoint, NetworkID: 'victim_default' } } } })),
      'not-owned',
    );
  });

  it('keeps no-new-privileges, CapDrop, resources, ulimits, tmpfs and json-file logging', () => {
    passes(
      send(
        withHost({
          SecurityOpt: ['no-new-privileges', 'no-new-privileges:true', 'no-new-privileges=true'],
          CapDrop: ['ALL'],
          Memory: 536870912,
          NanoCpus: 1500000000,
          PidsLimit: 100,
          Ulimits: [{ Name: 'nofile', Soft: 1024, Hard: 4096 }],
          Tmpfs: { '/tmp': 'rw,size=64m' },
          LogConfig: { Type: 'json-file', Config: { 'max-size': '10m', 'max-file': '3' } },
          OomScoreAdj: 500,
          IpcMode: 'shareable',
          PidMode: 'container:web-1',
        }),
      ),
    );
  });

  it('filters every list, prune and the event stream by the owner label, merged with the client’s filters', () => {
    const label = `${OWN}=${OWNER}`;
    for (const [target, route] of [
      ['/containers/json?all=1', 'container-list'],
      ['/volumes', 'volume-list'],
      ['/networks', 'network-list'],
      ['/events?since=1', 'events'],
      ['/containers/prune', 'container-prune'],
    ] as const) {
      const f = passes(send({ method: target.endsWith('prune') ? 'POST' : 'GET', target }), target);
      assert.equal(f.c.route, route);
      const filters = JSON.parse(new URLSearchParams(f.c.target.split('?')[1]).get('filters')!) as Record<string, Record<string, boolean>>;
      assert.deepEqual(filters.label, { [label]: true }, target);
    }
    const compose = encodeURIComponent(JSON.stringify({ label: ['com.docker.compose.project=proj'], status: ['running'] }));
    const f = passes(send({ method: 'GET', target: `/v1.41/containers/json?all=1&filters=${compose}` }));
    assert.ok(f.c.target.startsWith('/v1.41/containers/json?all=1&filters='));
    const filters = JSON.parse(new URLSearchParams(f.c.target.split('?')[1]).get('filters')!) as Record<string, Record<string, boolean>>;
    assert.deepEqual(filters, { label: { 'com.docker.compose.project=proj': true, [label]: true }, status: { running: true } });
  });

  it('leaves the image list alone: images are shared, and a pulled image carries no owner label', () => {
    const f = passes(send({ method: 'GET', target: '/images/json?filters=%7B%22dangling%22%3A%5B%22true%22%5D%7D' }));
    assert.equal(f.c.target, '/images/json?filters=%7B%22dangling%22%3A%5B%22true%22%5D%7D');
  });

  it('pulls, inspects, tags and pushes any image, and removes only its own', () => {
    passes(send({ method: 'POST', target: '/images/create?fromImage=postgres&tag=16', headers: { 'x-registry-auth': 'e30=' } }));
    passes(send({ method: 'GET', target: '/v1.41/images/registry.example.com:5000/team/app:1.2/json' }));
    passes(send({ method: 'GET', target: '/images/postgres:16/history' }));
    passes(send({ method: 'POST', target: `/images/postgres:16/tag?repo=${NSQ}mine&tag=v1` }));
    refused(send({ method: 'POST', target: '/images/postgres:16/tag?repo=mine&tag=v1' }), 'image-name');
    passes(send({ method: 'POST', target: '/images/proj-web/push?tag=latest' }));
    const rm = passes(send({ method: 'DELETE', target: '/images/proj-web:latest?force=1' }));
    assert.deepEqual(rm.c.owned.images, ['proj-web:latest']);
  });

  it('says which objects must be proven owned, by kind', () => {
    const c = classify({ method: 'POST', target: '/networks/tc-net/connect', headers: {} }, SCOPE);
    assert.ok(!isRefusal(c));
    assert.deepEqual(c.owned.networks, ['tc-net']);
    const e = classify({ method: 'POST', target: '/exec/e0wn/resize?h=10&w=20', headers: {} }, SCOPE);
    assert.ok(!isRefusal(e));
    assert.deepEqual(e.owned.execs, ['e0wn']);
  });

  it('binds the folder and paths below it by realpath, with the folder’s protected paths bound over it again', () => {
    const f = passes(send(withHost({ Binds: [`${WS}:/app`, `${WS}/src/../src:/src:ro`] })));
    const hc = f.body!.HostConfig as { Binds: string[]; Mounts: Array<Record<string, unknown>> };
    assert.deepEqual(hc.Binds, [`${WS}:/app`, `${WS}/src:/src:ro`]);
    assert.deepEqual(
      hc.Mounts.map((m) => [m.Source, m.Target, m.ReadOnly]),
      [
        [`${WS}/.git`, '/app/.git', false],
        [`${WS}/.git/config`, '/app/.git/config', true],
        [`${WS}/.git/hooks`, '/app/.git/hooks', true],
        [`${WS}/.vscode`, '/app/.vscode', true],
        [`${WS}/.toolbox.yaml`, '/app/.toolbox.yaml', true],
      ],
    );
  });

  it('lets a read-only bind of a protected path through, and pins nothing inside a read-only bind', () => {
    const f = passes(
      send(
        withHost({
          Mounts: [
            { Type: 'bind', Source: WS, Target: '/w', ReadOnly: true },
            { Type: 'bind', Source: `${WS}/.vscode`, Target: '/v', ReadOnly: true },
          ],
        }),
      ),
    );
    assert.equal((f.body!.HostConfig as { Mounts: unknown[] }).Mounts.length, 2);
  });

  it('creates a missing named volume labelled first, and refuses none of its own', () => {
    const f = passes(send(withHost({ Binds: ['proj_data:/data', 'newvol:/new:ro'] })));
    assert.deepEqual(f.volumesToCreate, ['newvol']);
    const c = classify({ method: 'POST', target: '/containers/create', headers: { 'content-length': '2' } }, SCOPE);
    assert.ok(!isRefusal(c));
    const parsed = parseBody(c, Buffer.from(JSON.stringify({ Image: 'a', HostConfig: { Binds: ['newvol:/n'] } })));
    assert.ok(!isRefusal(parsed));
    const checked = checkBody(parsed, SCOPE, { owner: ownership, realpaths: new Map() });
    assert.ok(!isRefusal(checked));
    assert.deepEqual(JSON.parse(checked.volumesToCreate[0].body.toString()), { Name: 'newvol', Driver: 'local', Labels: { [OWN]: OWNER } });
  });

  it('takes the workspace root with a restart policy, since the container cannot replace its own mount', () => {
    passes(send(withHost({ Binds: [`${WS}:/app`], RestartPolicy: { Name: 'always' } })));
  });

  it('answers objects of others as missing (404), without saying whose they are', () => {
    const r = refused(send({ method: 'GET', target: '/containers/victim/logs?follow=1' }), 'not-owned');
    assert.equal(r.status, 404);
  });

  it('answers a plugin inspect 404, so that `docker inspect <name>` of a name it cannot find says no such object', () => {
    const r = refused(send({ method: 'GET', target: '/v1.41/plugins/victim/json' }), 'plugins');
    assert.equal(r.status, 404);
    assert.equal(refused(send({ method: 'GET', target: '/v1.41/plugins' }), 'plugins').status, 403);
    assert.equal(refused(send({ method: 'POST', target: '/v1.41/plugins/victim/enable' }), 'plugins').status, 403);
  });

  it('refuses an object a create names with 403, for another’s and a missing one alike (the CLI pulls the image after a 404)', () => {
    const other = refused(send(withHost({ VolumesFrom: ['victim'] })), 'not-owned');
    const missing = refused(send(withHost({ VolumesFrom: ['nobody'] })), 'not-owned');
    assert.deepEqual([other.status, missing.status], [403, 403]);
    assert.equal(other.message.replace('victim', 'nobody'), missing.message);
    assert.equal(refused(send(withHost({ Binds: ['victim-data:/d'] })), 'not-owned').status, 403);
  });

  it('flags /info for a scrub and scrubs host paths, proxies and counts', () => {
    const f = passes(send({ method: 'GET', target: '/v1.41/info' }));
    assert.equal(f.c.response, 'scrub-info');
    const info = JSON.parse(
      scrubInfo(
        Buffer.from(
          JSON.stringify({
            ServerVersion: '27.1.0',
            OperatingSystem: 'Debian',
            DockerRootDir: '/var/lib/docker',
            HttpProxy: 'http://user:secret@proxy:3128',
            Containers: 12,
            Runtimes: { runc: { path: '/usr/bin/runc' } },
            Swarm: { LocalNodeState: 'active', NodeID: 'n1', NodeAddr: '10.0.0.1' },
          }),
        ),
      ).toString(),
    ) as Record<string, unknown>;
    assert.equal(info.ServerVersion, '27.1.0');
    assert.equal(info.DockerRootDir, '');
    assert.equal(info.HttpProxy, '');
    assert.equal(info.Containers, 0);
    assert.deepEqual(info.Runtimes, { runc: { path: '' } });
    assert.equal((info.Swarm as Record<string, unknown>).NodeAddr, '');
    assert.deepEqual(JSON.parse(scrubInfo(Buffer.from('not json')).toString()), {});
  });

  it('isOwned reads the owner label', () => {
    assert.equal(isOwned({ [OWN]: OWNER }, SCOPE), true);
    assert.equal(isOwned({ [OWN]: 'other' }, SCOPE), false);
    assert.equal(isOwned(null, SCOPE), false);
    assert.equal(isOwned({ 'x-label': OWNER }, { ...SCOPE, ownLabel: 'x-label' }), true);
  });

  it('re-checks binds before a start: a bind whose path was replaced by a link is refused', () => {
    const f = passes(send({ method: 'POST', target: '/containers/web-1/start' }));
    assert.equal(f.c.recheckBinds, true);
    const mounts = [
      { Type: 'bind', Source: `${WS}/src`, Destination: '/src', RW: true },
      { Type: 'bind', Source: SOCK, Destination: '/var/run/docker.sock', RW: true },
      { Type: 'volume', Source: '/var/lib/docker/volumes/proj_data/_data', Destination: '/data', RW: true },
    ];
    assert.deepEqual(startBindSources(mounts), [`${WS}/src`, SOCK]);
    assert.equal(checkStartBinds(mounts, SCOPE, new Map([[`${WS}/src`, `${WS}/src`]])), undefined);
    refused(checkStartBinds(mounts, SCOPE, new Map([[`${WS}/src`, '/etc']]))!, 'bind-source');
    refused(checkStartBinds(mounts, SCOPE, new Map())!, 'bind-source');
  });

  it('reads the workspace container’s protected paths from its mounts, onto the folder’s realpath', () => {
    const mounts = [
      { Type: 'bind', Source: '/home/u/link-to-proj', Destination: '/workspace', RW: true },
      { Type: 'bind', Source: '/home/u/link-to-proj', Destination: '/home/u/link-to-proj', RW: true },
      { Type: 'bind', Source: '/home/u/link-to-proj/.git', Destination: '/workspace/.git', RW: true },
      { Type: 'bind', Source: '/home/u/link-to-proj/.git', Destination: '/home/u/link-to-proj/.git', RW: true },
      { Type: 'bind', Source: '/home/u/link-to-proj/.git/config', Destination: '/workspace/.git/config', RW: false },
      { Type: 'bind', Source: '/home/u/.toolbox/claude', Destination: '/home/toolbox/.claude', RW: true },
    ];
    assert.deepEqual(scopeProtections(mounts, WS), [
      { path: `${WS}/.git`, readonly: false },
      { path: `${WS}/.git/config`, readonly: true },
    ]);
  });
});

describe('docker endpoint policy: Compose, Testcontainers and BuildKit', () => {
  it('Compose: up, ps, logs, down', () => {
    passes(send({ method: 'HEAD', target: '/_ping' }));
    passes(send({ method: 'GET', target: '/v1.47/version' }));
    const project = encodeURIComponent(JSON.stringify({ label: { 'com.docker.compose.project=proj': true } }));
    passes(send({ method: 'GET', target: `/v1.47/networks?filters=${project}` }));
    const net = passes(
      send({
        method: 'POST',
        target: '/v1.47/networks/create',
        body: {
          Name: 'proj_default',
          Driver: 'bridge',
          Internal: false,
          Attachable: false,
          Ingress: false,
          IPAM: { Driver: '', Config: null, Options: null },
          EnableIPv6: false,
          Options: null,
          Labels: { 'com.docker.compose.network': 'default', 'com.docker.compose.project': 'proj', 'com.docker.compose.version': '2.29.1' },
        },
      }),
    );
    assert.equal((net.body!.Labels as Record<string, string>)[OWN], OWNER);
    const vol = passes(
      send({
        method: 'POST',
        target: '/v1.47/volumes/create',
        body: { Name: 'proj_data', Driver: 'local', DriverOpts: null, Labels: { 'com.docker.compose.volume': 'data' } },
      }),
    );
    assert.equal((vol.body!.Labels as Record<string, string>)[OWN], OWNER);
    passes(send({ method: 'GET', target: '/v1.47/images/proj-web/json' }));
    const web = passes(send(create(COMPOSE_WEB, '/v1.47/containers/create?name=proj-web-1')));
    assert.deepEqual(web.volumesToCreate, ['proj_cache']);
    assert.equal((web.body!.Labels as Record<string, string>)['com.docker.compose.service'], 'web');
    passes(send({ method: 'POST', target: '/v1.47/containers/proj-db-1/start' }));
    passes(send({ method: 'GET', target: `/v1.47/events?filters=${project}` }));
    passes(send({ method: 'GET', target: `/v1.47/containers/json?all=1&filters=${project}` }));
    passes(send({ method: 'GET', target: '/v1.47/containers/web-1/logs?stdout=1&stderr=1&follow=1&tail=all&timestamps=0' }));
    passes(send({ method: 'POST', target: '/v1.47/containers/web-1/wait?condition=not-running' }));
    passes(send({ method: 'POST', target: '/v1.47/containers/web-1/stop?t=10' }));
    passes(send({ method: 'POST', target: '/v1.47/containers/web-1/kill?signal=SIGKILL' }));
    passes(send({ method: 'POST', target: '/v1.47/containers/web-1/restart?signal=SIGTERM&t=5' }));
    passes(send({ method: 'DELETE', target: '/v1.47/containers/web-1?v=1&force=1' }));
    passes(send({ method: 'DELETE', target: '/v1.47/networks/proj_default' }));
    passes(send({ method: 'DELETE', target: '/v1.47/volumes/proj_data' }));
    passes(send({ method: 'POST', target: '/v1.47/networks/prune?filters=' + project }));
  });

  it('Compose: exec and attach', () => {
    passes(
      send({
        method: 'POST',
        target: '/v1.47/containers/web-1/exec',
        body: {
          User: '',
          Privileged: false,
          Tty: true,
          AttachStdin: true,
          AttachStderr: true,
          AttachStdout: true,
          Detach: false,
          DetachKeys: '',
          Env: null,
          WorkingDir: '',
          Cmd: ['sh'],
        },
      }),
    );
    const start = passes(
      send({
        method: 'POST',
        target: '/v1.47/exec/e0wn/start',
        headers: { connection: 'Upgrade', upgrade: 'tcp' },
        body: { Detach: false, Tty: true, ConsoleSize: [24, 80] },
      }),
    );
    assert.equal(start.c.hijack, true);
    assert.equal(start.c.headers.upgrade, 'tcp');
    passes(send({ method: 'POST', target: '/v1.47/exec/e0wn/resize?h=24&w=80' }));
    passes(send({ method: 'GET', target: '/v1.47/exec/e0wn/json' }));
    const attach = passes(
      send({
        method: 'POST',
        target: '/v1.47/containers/web-1/attach?stream=1&stdin=1&stdout=1&stderr=1',
        headers: { connection: 'Upgrade', upgrade: 'tcp' },
      }),
    );
    assert.equal(attach.c.hijack, true);
    passes(send({ method: 'POST', target: '/v1.47/containers/web-1/resize?h=24&w=80' }));
  });

  it('Testcontainers: the reaper binds the socket and gets this endpoint’s own; privileged, it is refused', () => {
    passes(send({ method: 'GET', target: '/info' }));
    passes(send({ method: 'POST', target: '/images/create?fromImage=testcontainers%2Fryuk%3A0.12.0' }));
    const ryuk = passes(send(create(RYUK, dockerodeTarget('/containers/create', RYUK))));
    assert.equal(ryuk.c.target, '/containers/create?name=testcontainers-ryuk-5f2e');
    assert.deepEqual((ryuk.body!.HostConfig as { Binds: string[] }).Binds, [`${SOCK}:/var/run/docker.sock:rw`]);
    assert.equal(ryuk.body!.name, undefined);
    const privileged = { ...RYUK, HostConfig: { ...RYUK.HostConfig, Privileged: true } };
    refused(send(create(privileged, dockerodeTarget('/containers/create', privileged))), 'privileged');
    // Testcontainers binds the path DOCKER_HOST names, which in a workspace container is its endpoint's.
    const inside = { ...RYUK, HostConfig: { ...RYUK.HostConfig, Binds: [`${DOCKER_ENDPOINT.containerSocket}:/var/run/docker.sock:rw`] } };
    const viaHost = passes(send(create(inside, dockerodeTarget('/containers/create', inside))));
    assert.deepEqual((viaHost.body!.HostConfig as { Binds: string[] }).Binds, [`${SOCK}:/var/run/docker.sock:rw`]);
    refused(send(create(inside), { ...SCOPE, endpointSocket: undefined }), 'docker-socket');
    // With TESTCONTAINERS_DOCKER_SOCKET_OVERRIDE set to the endpoint's host path, or /var/run seen through its link to /run.
    for (const source of [SOCK, '/run/docker.sock', DOCKER_ENDPOINT.containerSocket]) {
      const f = passes(send(withHost({ Mounts: [{ Type: 'bind', Source: source, Target: '/var/run/docker.sock' }] })));
      assert.equal((f.body!.HostConfig as { Mounts: Array<{ Source: string }> }).Mounts[0].Source, SOCK);
    }
  });

  it('Testcontainers: a container, a network, files copied in, an exec, logs, stop', () => {
    const net = {
      Name: 'tc-net',
      CheckDuplicate: true,
      Driver: 'bridge',
      Internal: false,
      Attachable: false,
      Ingress: false,
      EnableIPv6: false,
      Labels: { 'org.testcontainers': 'true' },
    };
    passes(send({ method: 'POST', target: dockerodeTarget('/networks/create', net), body: net }));
    const pg = {
      Image: 'postgres:16',
      name: 'pg-test',
      Env: ['POSTGRES_PASSWORD=x'],
      ExposedPorts: { '5432': {} },
      Labels: { 'org.testcontainers': 'true', 'org.testcontainers.session-id': '5f2e' },
      HostConfig: {
        AutoRemove: false,
        PortBindings: { '5432': [{ HostPort: '0' }] },
        NetworkMode: 'tc-net',
        Tmpfs: { '/var/lib/postgresql/data': 'rw' },
        Binds: [`${WS}/test/init.sql:/docker-entrypoint-initdb.d/init.sql:ro`],
      },
      Healthcheck: { Test: ['CMD-SHELL', 'pg_isready'], Interval: 1000000000, Timeout: 0, Retries: 5, StartPeriod: 0 },
    };
    passes(send(create(pg, dockerodeTarget('/containers/create', pg))));
    passes(
      send({
        method: 'PUT',
        target: '/containers/tc-1/archive?path=%2F',
        headers: { 'content-type': 'application/x-tar', 'content-length': '1024' },
      }),
    );
    passes(send({ method: 'POST', target: '/containers/tc-1/start' }));
    passes(send({ method: 'GET', target: '/containers/tc-1/json' }));
    passes(
      send({
        method: 'POST',
        target: '/containers/tc-1/exec',
        body: { Cmd: ['psql', '-c', 'select 1'], AttachStdout: true, AttachStderr: true },
      }),
    );
    passes(
      send({
        method: 'POST',
        target: '/exec/e0wn/start',
        headers: { connection: 'Upgrade', upgrade: 'tcp' },
        body: { hijack: true, stdin: false, Detach: false, Tty: false },
      }),
    );
    // Its port wait strategy: an exec started without hijack (no upgrade; the adapter relays the raw stream as a body).
    const plain = passes(send({ method: 'POST', target: '/exec/e0wn/start', body: { stdin: true, Detach: false, Tty: false } }));
    assert.deepEqual(plain.body, { Detach: false, Tty: false });
    assert.equal(plain.c.headers.upgrade, undefined);
    passes(send({ method: 'POST', target: '/networks/tc-net/connect', body: { Container: 'tc-1', EndpointConfig: { Aliases: ['db'] } } }));
    passes(send({ method: 'GET', target: '/containers/tc-1/logs?stdout=true&stderr=true&follow=true' }));
    passes(send({ method: 'GET', target: '/containers/tc-1/archive?path=%2Fvar%2Flog%2Fpg.log' }));
    passes(send({ method: 'POST', target: '/containers/tc-1/stop?t=0' }));
    // dockerode repeats the options as a JSON body; Docker reads the query only, so the body goes nowhere.
    const stop = passes(send({ method: 'POST', target: '/containers/tc-1/stop?t=0', body: { t: 0 } }));
    assert.equal(stop.c.target, '/containers/tc-1/stop?t=0');
    assert.equal(stop.body, undefined, 'nothing of the body is forwarded');
    assert.equal(
      passes(send({ method: 'POST', target: '/containers/tc-1/kill?signal=SIGKILL', body: { signal: 'SIGKILL' } })).body,
      undefined,
    );
    assert.equal(passes(send({ method: 'POST', target: '/containers/tc-1/restart?t=1', body: { t: 1 } })).body, undefined);
    refused(send({ method: 'POST', target: '/containers/tc-1/stop', body: { t: 'soon' } }), 'field-type');
    refused(send({ method: 'POST', target: '/containers/tc-1/stop', body: '[]' }), 'json');
    refused(send({ method: 'POST', target: '/containers/tc-1/stop', body: { t: 0, pad: 'x'.repeat(5000) } }), 'body-size');
    refused(
      send({
        method: 'POST',
        target: '/containers/tc-1/stop',
        body: 't=0',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
      }),
      'headers',
    );
    refused(send({ method: 'POST', target: `/containers/${OWNER}/stop`, body: { t: 0 } }), 'not-owned');
    passes(send({ method: 'POST', target: '/networks/tc-net/disconnect', body: { Container: 'tc-1', Force: true } }));
    passes(send({ method: 'DELETE', target: '/containers/tc-1?force=true&v=true' }));
  });

  it('the docker CLI’s classic build (20.10): every parameter, ulimits as null', () => {
    const target =
      '/v1.41/build?buildargs=%7B%7D&cachefrom=%5B%5D&cgroupparent=&cpuperiod=0&cpuquota=0&cpusetcpus=&cpusetmems=&cpushares=0' +
      `&dockerfile=Dockerfile&labels=%7B%7D&memory=0&memswap=0&networkmode=default&rm=1&shmsize=0&t=${NSQ}proj-web%3A1&target=&ulimits=null&version=1`;
    const f = passes(send({ method: 'POST', target, headers: { 'content-type': 'application/x-tar', 'transfer-encoding': 'chunked' } }));
    assert.equal(f.c.query.get('ulimits')?.[0], 'null');
    // The image label, not the owner label: containers made from the image would inherit that one.
    assert.deepEqual(JSON.parse(f.c.query.get('labels')![0]), { [IMAGE_OWN]: OWNER });
    passes(send({ method: 'POST', target: `/v1.41/build?ulimits=${encodeURIComponent('[{"Name":"nofile","Soft":1024,"Hard":1024}]')}` }));
    for (const bad of ['ulimits=%5B1%5D', 'cachefrom=%7B%7D', 'buildargs=%5B%5D', 'ulimits=nul'])
      refused(send({ method: 'POST', target: `/v1.41/build?${bad}` }), 'query', bad);
  });

  it('the docker CLI’s BuildKit build (20.10, DOCKER_BUILDKIT=1): remote=client-session, the context from its /session', () => {
    const target =
      '/v1.41/build?buildargs=%7B%7D&buildid=8768a3ae&cachefrom=%5B%5D&cgroupparent=&cpuperiod=0&cpuquota=0&cpusetcpus=&cpusetmems=' +
      '&cpushares=0&dockerfile=&labels=%7B%7D&memory=0&memswap=0&networkmode=default&remote=client-session&rm=1' +
      `&session=2wbvgf8g6s665p13s5qd0k13m&shmsize=0&t=${NSQ}proj-web%3A1&target=&ulimits=null&version=2`;
    const f = passes(send({ method: 'POST', target, headers: { 'content-type': 'application/x-tar', 'content-length': '0' } }));
    assert.deepEqual(f.c.query.get('remote'), ['client-session']);
    for (const remote of ['client-session2', 'Client-Session', 'https://x/client-session', 'client-session%00'])
      assert.ok(isRefusal(send({ method: 'POST', target: `/v1.41/build?remote=${remote}` })), remote);
  });

  it('BuildKit: /session over h2c, /build (version 2) with the image label, cancel; its own API (/grpc) refused', () => {
    const session = passes(
      send({
        method: 'POST',
        target: '/v1.47/session',
        headers: {
          connection: 'Upgrade',
          upgrade: 'h2c',
          'x-docker-expose-session-uuid': 'u1',
          'x-docker-expose-session-name': 'proj',
          'x-docker-expose-session-sharedkey': 'k',
          'x-docker-expose-session-grpc-method': ['/moby.filesync.v1.FileSync/DiffCopy', '/moby.buildkit.secrets.v1.Secrets/GetSecret'],
          'x-registry-auth': 'not forwarded here',
        },
      }),
    );
    assert.equal(session.c.hijack, true);
    assert.deepEqual(session.c.headers['x-docker-expose-session-grpc-method'], [
      '/moby.filesync.v1.FileSync/DiffCopy',
      '/moby.buildkit.secrets.v1.Secrets/GetSecret',
    ]);
    assert.equal(session.c.headers['x-registry-auth'], undefined);
    // buildx's /grpc: the daemon would grant a build there network.host, which nothing here can read (issue 38, item 4).
    const grpc = refused(
      send({ method: 'POST', target: '/v1.47/grpc', headers: { connection: 'Upgrade', upgrade: 'h2c' } }),
      'buildkit-grpc',
    );
    assert.match(grpc.message, /network\.host.*Build with the classic builder instead: DOCKER_BUILDKIT=0 docker build/);
    // Through /build, BuildKit asks for network.host only for networkmode=host, which is refused however it is spelt.
    for (const mode of ['host', 'HOST', 'Host', 'host%00', '%68ost', 'container:web-1', 'proj_default'])
      refused(
        send({ method: 'POST', target: `/v1.47/build?version=2&networkmode=${mode}` }),
        mode === 'host%00' ? 'query' : 'build-network',
        mode,
      );
    const build = passes(
      send({
        method: 'POST',
        target: `/v1.47/build?version=2&session=u1&buildid=b1&t=${NSQ}proj-web&t=${NSQ}proj-web%3Adev&dockerfile=Dockerfile&networkmode=default&labels=${encodeURIComponent('{"a":"b"}')}&buildargs=${encodeURIComponent('{"X":"1"}')}`,
        headers: { 'content-type': 'application/x-tar', 'transfer-encoding': 'chunked', 'x-registry-config': 'e30=' },
      }),
    );
    const q = new URLSearchParams(build.c.target.split('?')[1]);
    assert.deepEqual(q.getAll('t'), [`${NS}proj-web`, `${NS}proj-web:dev`]);
    assert.deepEqual(JSON.parse(q.get('labels')!), { a: 'b', [IMAGE_OWN]: OWNER });
    assert.equal(build.c.headers['content-type'], 'application/x-tar');
    assert.equal(build.c.headers['x-registry-config'], 'e30=');
    passes(send({ method: 'POST', target: `/v1.47/build?t=${NSQ}unlabelled` }));
    passes(send({ method: 'POST', target: '/v1.47/build/cancel?id=b1' }));
  });

  it('commit: its own container only, the image labelled', () => {
    const f = passes(send({ method: 'POST', target: `/commit?container=web-1&repo=${NSQ}snap&tag=1`, body: { Labels: { k: 'v' } } }));
    // The committed container's owner label is not carried into the image (it is set empty there).
    assert.deepEqual(f.body!.Labels, { k: 'v', [OWN]: '', [IMAGE_OWN]: OWNER });
    const empty = passes(send({ method: 'POST', target: `/commit?container=web-1&repo=${NSQ}snap` }));
    assert.deepEqual(empty.body!.Labels, { [OWN]: '', [IMAGE_OWN]: OWNER });
    refused(send({ method: 'POST', target: '/commit?container=web-1', body: { Labels: { [IMAGE_OWN]: 'x' } } }), 'owner-label');
    // The docker CLI (28) sends a commit without a config as the JSON `null`, which Go reads as none.
    const none = passes(send({ method: 'POST', target: `/commit?container=web-1&repo=${NSQ}snap`, body: 'null\n' }));
    assert.deepEqual(none.body!.Labels, { [OWN]: '', [IMAGE_OWN]: OWNER });
    refused(send(create('null')), 'json', 'a create body that is null');
  });
});

describe('docker endpoint policy: published ports (issue 38, item 6)', () => {
  const GATEWAY = '172.17.0.1';
  const local: EndpointScope = { ...SCOPE, publish: { hostIp: GATEWAY } };
  const any: EndpointScope = { ...SCOPE, publish: { hostIp: GATEWAY, anyAddress: true } };
  const bind = (b: Record<string, unknown>, hc: Record<string, unknown> = {}) => withHost({ PortBindings: { '80/tcp': [b] }, ...hc });
  const forwarded = (o: Outcome) => (passes(o).body!.HostConfig as { PortBindings: Record<string, unknown[]> }).PortBindings;

  it('publishes a port given no address on the workspace container’s way to the host, else on loopback', () => {
    assert.deepEqual(forwarded(send(bind({ HostIp: '', HostPort: '8080' }), local)), { '80/tcp': [{ HostIp: GATEWAY, HostPort: '8080' }] });
    assert.deepEqual(forwarded(send(bind({ HostPort: '' }), local)), { '80/tcp': [{ HostIp: GATEWAY, HostPort: '' }] });
    assert.deepEqual(forwarded(send(bind({ HostIp: null, HostPort: '0' }))), { '80/tcp': [{ HostIp: '127.0.0.1', HostPort: '0' }] });
    // Compose's `ports: ["8080:8080"]` and Testcontainers' reaper (`{"8080": [{"HostPort": "0"}]}`).
    assert.deepEqual(forwarded(send(create(COMPOSE_WEB), local)), { '8080/tcp': [{ HostIp: GATEWAY, HostPort: '8080' }] });
    assert.deepEqual(forwarded(send(create(RYUK), local)), { '8080': [{ HostIp: GATEWAY, HostPort: '0' }] });
  });

  it('takes loopback and that address as the client names them, and nothing else unless the user allows any', () => {
    for (const ip of ['127.0.0.1', '127.1.2.3', '::1', GATEWAY])
      assert.deepEqual(
        forwarded(send(bind({ HostIp: ip, HostPort: '8080' }), local)),
        { '80/tcp': [{ HostIp: ip, HostPort: '8080' }] },
        ip,
      );
    for (const ip of ['0.0.0.0', '::', '192.168.1.10', '127.000.000.001', '0:0:0:0:0:0:0:1', '::ffff:127.0.0.1', 'localhost', ' 127.0.0.1'])
      refused(send(bind({ HostIp: ip, HostPort: '8080' }), local), 'published-port', ip);
    const r = refused(send(bind({ HostIp: GATEWAY, HostPort: '8080' })), 'published-port', 'the gateway when the scope does not know it');
    assert.match(
      r.message,
      /Leave the address out \(the port then listens on 127\.0\.0\.1\) or name 127\.0\.0\.1; to publish on every address, set toolbox\.dockerEndpointPorts to any-address in your VS Code User settings/,
    );
    refused(send(bind({}, { PublishAllPorts: true }), local), 'published-port', 'PublishAllPorts');
    passes(send(bind({}, { PublishAllPorts: false }), local));
  });

  it('with any-address allowed: every address, as Docker would, and PublishAllPorts', () => {
    assert.deepEqual(forwarded(send(bind({ HostIp: '', HostPort: '8080' }), any)), { '80/tcp': [{ HostIp: '', HostPort: '8080' }] });
    for (const ip of ['0.0.0.0', '::', '192.168.1.10']) passes(send(bind({ HostIp: ip, HostPort: '8080' }), any), ip);
    passes(send(bind({}, { PublishAllPorts: true }), any));
  });

  it('refuses host ports below 1024 and those Toolbox listens on, whatever the address; the engine’s pick is fine', () => {
    for (const port of ['80', '0080', '1023', '1-65535', '1000-2000', '17654', '17669', '17600-17700', '1455', '8880', '64125'])
      for (const scope of [local, any]) refused(send(bind({ HostIp: '127.0.0.1', HostPort: port }), scope), 'published-port', port);
    for (const port of ['', '0', '1024', '8080', '8000-8010', '17653', '17670', '65535'])
      passes(send(bind({ HostIp: '127.0.0.1', HostPort: port }), local), port);
    for (const port of ['65536', '8080-80', 'x', '-1', '80 ', '1e3'])
      refused(send(bind({ HostIp: '127.0.0.1', HostPort: port }), local), 'field-type', port);
  });
});

describe('docker endpoint policy: a commit’s changes, read as Docker’s Dockerfile parser and Podman’s read them (issue 38, item 10)', () => {
  const commit = (...changes: string[]): Req => ({
    method: 'POST',
    target: `/commit?container=web-1&repo=${NSQ}snap&${changes.map((c) => `changes=${encodeURIComponent(c)}`).join('&')}`,
  });

  it('takes the instructions docker commit --change takes, one per value, every value given', () => {
    const f = passes(
      send(
        commit(
          'CMD ["sh", "-c", "echo hi"]',
          'ENTRYPOINT ["/init"]',
          'ENV A=1 B="two words"',
          'EXPOSE 8080/tcp',
          'HEALTHCHECK --interval=5s CMD true',
          'LABEL a=b c="hello world" org.opencontainers.image.source=https://example.com/x?y=z',
          'label version 1.0 and more',
          'STOPSIGNAL SIGTERM',
          'USER 1000:1000',
          'VOLUME /data',
          'WORKDIR /app',
          '',
        ),
      ),
    );
    // The client's twelve, then the endpoint's two image labels (routes.ts, the commit's).
    assert.equal(f.c.query.get('changes')?.length, 14);
    assert.match(f.c.target, /changes=LABEL\+a%3Db\+c%3D%22hello\+world%22/);
  });

  it('refuses a label in Toolbox’s namespace however the key is spelt: quoted, escaped, folded, after other pairs, in the older form', () => {
    for (const change of [
      `LABEL ${OWN}=someone-else`,
      'LABEL "dev.toolbox".docker-owner=someone-else',
      "LABEL 'dev.toolbox.docker-owner'=someone-else",
      'LABEL dev.toolbox.docker\\-owner=someone-else',
      'LABEL a=b DEV.TOOLBOX.DOCKER-OWNER=someone-else',
      'label dev.toolbox.docker-owner someone-else',
      'LABEL dev.toolbox.workspace=/home/victim',
      // Inside a value by Docker's reading; a reader that splits on every space would take it for a key.
      'LABEL a="x dev.toolbox.docker-owner=someone-else"',
    ])
      refused(send(commit(change)), 'owner-label', change);
  });

  it('splits words as Docker’s parser does: on spaces outside quotes, quotes and escapes kept', () => {
    assert.deepEqual(dockerfileWords('a="x y" b=c'), ['a="x y"', 'b=c']);
    // No escape inside single quotes: the quote after the backslash closes it, the next one opens another.
    assert.deepEqual(dockerfileWords("a='x \\' y' b"), ["a='x \\'", "y' b"]);
    assert.deepEqual(dockerfileWords('a=x\\ y  b=""'), ['a=x\\ y', 'b=""']);
    assert.deepEqual(dockerfileWords('"" x\\'), ['""', 'x']);
    assert.deepEqual(dockerfileWords('  '), []);
  });

  it('refuses what would be read otherwise: ONBUILD, directives, continuations, expansions, flags, odd spaces, a RUN', () => {
    const cases: Array<[string[], RuleId]> = [
      [['ONBUILD RUN curl http://169.254.169.254/'], 'commit-changes'],
      [['onbuild LABEL x=y'], 'commit-changes'],
      [['# escape=`', 'LABEL a=b'], 'commit-changes'],
      [['LABEL a=b \\', 'x=y'], 'commit-changes'],
      [['LABEL ${NS}docker-owner=someone-else'], 'commit-changes'],
      [['LABEL a\\ b=c'], 'commit-changes'],
      [['LABEL --x a=b'], 'commit-changes'],
      [['LABEL a=b c'], 'commit-changes'],
      [['LABEL\u00a0a=b'], 'commit-changes'],
      [['LABEL a=b\u2028dev=x'], 'commit-changes'],
      [['LABEL=a=b'], 'commit-changes'],
      [['LABEL'], 'commit-changes'],
      [['RUN id'], 'query'],
      [['FROM scratch'], 'query'],
    ];
    for (const [changes, rule] of cases) refused(send(commit(...changes)), rule, changes.join(' | '));
  });
});

// ---- the fuzz ------------------------------------------------------------------------------------

const SEED = Number(process.env.DOCKER_API_FUZZ_SEED ?? Math.floor(Math.random() * 2 ** 31));

/** A dangerous setting: where it goes (HostConfig or the top level), its key and a dangerous value. */
interface Danger {
  at: 'HostConfig' | 'top';
  key: string;
  values: readonly unknown[];
  /** The key is a map key (a label), which Docker matches exactly: only ASCII case variants are tried. */
  mapKey?: boolean;
}

const DANGERS: readonly Danger[] = [
  { at: 'HostConfig', key: 'Privileged', values: [true] },
  { at: 'HostConfig', key: 'CapAdd', values: [['SYS_ADMIN'], ['ALL'], 'SYS_PTRACE'] },
  { at: 'HostConfig', key: 'PidMode', values: ['host', 'container:victim', `container:${OWNER}`] },
  { at: 'HostConfig', key: 'IpcMode', values: ['host', 'container:victim'] },
  { at: 'HostConfig', key: 'UTSMode', values: ['host'] },
  { at: 'HostConfig', key: 'UsernsMode', values: ['host'] },
  { at: 'HostConfig', key: 'CgroupnsMode', values: ['host'] },
  { at: 'HostConfig', key: 'Cgroup', values: ['container:victim'] },
  { at: 'HostConfig', key: 'NetworkMode', values: ['host', 'container:victim', 'victim_default'] },
  { at: 'HostConfig', key: 'Devices', values: [[{ PathOnHost: '/dev/sda', PathInContainer: '/dev/sda', CgroupPermissions: 'rwm' }]] },
  { at: 'HostConfig', key: 'DeviceRequests', values: [[{ Count: -1, Capabilities: [['gpu']] }]] },
  { at: 'HostConfig', key: 'DeviceCgroupRules', values: [['a *:* rwm']] },
  {
    at: 'HostConfig',
    key: 'SecurityOpt',
    values: [
      ['seccomp=unconfined'],
      ['apparmor=unconfined'],
      ['label=disable'],
      ['no-new-privileges=false'],
      ['systempaths=unconfined'],
      ['seccomp:unconfined'],
      ['label:disable'],
    ],
  },
  { at: 'HostConfig', key: 'Sysctls', values: [{ 'kernel.core_pattern': '|/tmp/x' }] },
  { at: 'HostConfig', key: 'MaskedPaths', values: [[], ['/proc/kcore']] },
  { at: 'HostConfig', key: 'ReadonlyPaths', values: [[]] },
  { at: 'HostConfig', key: 'Runtime', values: ['runc', 'nvidia', '/tmp/evil'] },
  { at: 'HostConfig', key: 'CgroupParent', values: ['/', '../../..'] },
  {
    at: 'HostConfig',
    key: 'LogConfig',
    values: [{ Type: 'syslog', Config: {} }, { Type: 'fluentd', Config: { 'fluentd-address': '127.0.0.1:24224' } }, { Type: 'awslogs' }],
  },
  { at: 'HostConfig', key: 'VolumesFrom', values: [['victim'], [`${OWNER}:rw`]] },
  { at: 'HostConfig', key: 'Links', values: [['victim:db']] },
  { at: 'HostConfig', key: 'OomKillDisable', values: [true] },
  { at: 'HostConfig', key: 'VolumeDriver', values: ['evil'] },
  {
    at: 'HostConfig',
    key: 'Binds',
    values: [
      ['/:/host'],
      ['/etc:/etc'],
      ['/run/containerd/containerd.sock:/s'],
      [`${WS}/link:/x`],
      [`${WS}/../../..:/x`],
      [`${WS}/data/link:/x`],
      ['/home/u:/home'],
      [`${WS}/.git/config:/c`],
      ['victim-data:/d'],
      [`${WS}:/app:rshared`],
    ],
  },
  {
    at: 'HostConfig',
    key: 'Mounts',
    values: [
      [{ Type: 'bind', Source: '/', Target: '/host' }],
      [{ Type: 'bind', Source: `${WS}/link`, Target: '/x' }],
      [
        {
          Type: 'volume',
          Source: 'x',
          Target: '/x',
          VolumeOptions: { DriverConfig: { Name: 'local', Options: { type: 'none', o: 'bind', device: '/' } } },
        },
      ],
      [{ Type: 'volume', Source: 'victim-data', Target: '/x' }],
      [{ Type: 'bind', Source: `${WS}/src`, Target: '/x', BindOptions: { Propagation: 'rshared' } }],
    ],
  },
  {
    at: 'top',
    key: 'NetworkingConfig',
    values: [{ EndpointsConfig: { proj_default: { NetworkID: 'victim_default' } } }, { EndpointsConfig: { host: {} } }],
  },
  { at: 'top', key: 'Labels', values: [{ [OWN]: 'victim-owner' }] },
  { at: 'top', key: OWN, values: ['victim-owner'], mapKey: true },
];

/** Objects written by hand, so that a key can repeat and keep its raw spelling. */
type Raw = { raw: string };
type Doc = Raw | null | boolean | number | string | Doc[] | { entries: Array<[string, Doc]> };

function toDoc(v: unknown): Doc {
  if (v === null || typeof v !== 'object') return v as Doc;
  if (Array.isArray(v)) return v.map(toDoc);
  return { entries: Object.entries(v).map(([k, x]) => [JSON.stringify(k), toDoc(x)] as [string, Doc]) };
}

function write(d: Doc, rng: Rng): string {
  const ws = () => (rng.chance(0.1) ? rng.pick([' ', '\n', '\t', '\r\n  ']) : '');
  if (d === null || typeof d !== 'object') return JSON.stringify(d);
  if ('raw' in d) return d.raw;
  if (Array.isArray(d)) return `[${d.map((x) => ws() + write(x, rng)).join(',')}]`;
  return `{${d.entries.map(([k, v]) => `${ws()}${k}${ws()}:${ws()}${write(v, rng)}`).join(',')}}`;
}

function entriesOf(d: Doc): Array<[string, Doc]> | undefined {
  return d !== null && typeof d === 'object' && !Array.isArray(d) && 'entries' in d ? d.entries : undefined;
}

const BASES: ReadonlyArray<Record<string, unknown>> = [{ Image: 'alpine' }, DOCKER_RUN, COMPOSE_WEB, RYUK];

/** One hostile create body: a base, a dangerous setting spelt and placed some way, maybe repeated. */
function hostileCreate(rng: Rng): { body: string; what: string } {
  const base = toDoc(structuredClone(rng.pick(BASES)));
  const danger = rng.pick(DANGERS);
  const value = rng.pick(danger.values);
  const top = entriesOf(base)!;
  let hc = entriesOf(top.find(([k]) => k === '"HostConfig"')?.[1] ?? null);
  if (!hc) {
    hc = [];
    top.push(['"HostConfig"', { entries: hc }]);
  }
  let target: Array<[string, Doc]>;
  if (danger.mapKey) {
    let labels = entriesOf(top.find(([k]) => k === '"Labels"')?.[1] ?? null);
    if (!labels) {
      labels = [];
      top.push(['"Labels"', { entries: labels }]);
    }
    target = labels;
  } else {
    // Where the setting lands: its place, the top level (Docker's deprecated embedding), a nested HostConfig, or NetworkingConfig.
    const place = rng.pick(['own', 'own', 'own', 'top', 'nested', 'networking'] as const);
    if (place === 'own') target = danger.at === 'top' ? top : hc;
    else if (place === 'top') target = top;
    else if (place === 'nested') {
      const inner: Array<[string, Doc]> = [];
      hc.push([rng.pick(['"HostConfig"', '"hostConfig"', '"Config"']), { entries: inner }]);
      target = inner;
    } else {
      const inner: Array<[string, Doc]> = [];
      top.push(['"NetworkingConfig"', { entries: [['"EndpointsConfig"', { entries: [['"proj_default"', { entries: inner }]] }]] }]);
      target = inner;
    }
  }
  const key = keyVariant(danger.key, rng, danger.mapKey === true);
  // Drop any existing entry of the same key spelling, then add the dangerous one, maybe with a twin.
  for (let i = target.length - 1; i >= 0; i--) if (target[i][0] === JSON.stringify(danger.key)) target.splice(i, 1);
  const dangerous: [string, Doc] = [key.text, toDoc(value)];
  const twin = rng.pick(['none', 'none', 'safe-first', 'safe-last', 'case-twin'] as const);
  const safe: [string, Doc] = [
    JSON.stringify(danger.key),
    toDoc(Array.isArray(value) ? [] : typeof value === 'boolean' ? false : typeof value === 'string' ? '' : null),
  ];
  if (twin === 'safe-first') target.push(safe, dangerous);
  else if (twin === 'safe-last') target.push(dangerous, safe);
  else if (twin === 'case-twin') target.push(dangerous, [JSON.stringify(caseVariant(danger.key, rng)), toDoc(value)]);
  else target.push(dangerous);
  // Shuffle the top level now and then: order must not matter.
  if (rng.chance(0.3)) top.sort(() => rng.next() - 0.5);
  return { body: write(base, rng), what: `${danger.at}.${danger.key}=${JSON.stringify(value)} as ${key.text} (twin ${twin})` };
}

/**
 * What Docker would do with a body, read as Go's encoding/json reads it (keys matched to fields
 * without regard to case, ſ as s and K as k, the last one winning; HostConfig's fields also at
 * the top level): the dangerous settings it would honour. The oracle knows nothing of the policy.
 */
function goDangers(body: Record<string, unknown>): string[] {
  const fold = (s: string) => [...s].map((c) => (c.charCodeAt(0) < 0x80 ? c.toUpperCase() : c.toLowerCase().toUpperCase())).join('');
  const get = (o: unknown, field: string): unknown => {
    if (o === null || typeof o !== 'object' || Array.isArray(o)) return undefined;
    let v: unknown;
    for (const [k, x] of Object.entries(o)) if (fold(k) === fold(field)) v = x;
    return v;
  };
  const found: string[] = [];
  const nonEmpty = (v: unknown) => v !== undefined && v !== null && (typeof v !== 'object' || Object.keys(v).length > 0);
  const outside = (src: string) => !(src === WS || src.startsWith(`${WS}/`) || src === SOCK);
  const hostConfigs = [get(body, 'HostConfig'), body];
  for (const hc of hostConfigs) {
    if (get(hc, 'Privileged') === true) found.push('Privileged');
    for (const f of [
      'CapAdd',
      'Devices',
      'DeviceRequests',
      'DeviceCgroupRules',
      'Sysctls',
      'VolumesFrom',
      'Links',
      'StorageOpt',
      'Annotations',
    ])
      if (nonEmpty(get(hc, f))) found.push(f);
    for (const f of ['MaskedPaths', 'ReadonlyPaths']) if (get(hc, f) !== undefined && get(hc, f) !== null) found.push(f);
    for (const f of ['PidMode', 'IpcMode', 'UTSMode', 'UsernsMode', 'CgroupnsMode', 'NetworkMode', 'Cgroup']) {
      const v = get(hc, f);
      const own = OBJECTS.container.own.map((c) => `container:${c}`);
      if (typeof v === 'string' && (v === 'host' || (v.startsWith('container:') && !own.includes(v)) || v === 'victim_default'))
        found.push(f);
    }
    for (const f of ['Runtime', 'CgroupParent', 'VolumeDriver']) if (typeof get(hc, f) === 'string' && get(hc, f) !== '') found.push(f);
    if (get(hc, 'OomKillDisable') === true) found.push('OomKillDisable');
    const sec = get(hc, 'SecurityOpt');
    if (
      Array.isArray(sec) &&
      sec.some((s) => !['no-new-privileges', 'no-new-privileges:true', 'no-new-privileges=true'].includes(s as string))
    )
      found.push('SecurityOpt');
    const log = get(get(hc, 'LogConfig'), 'Type');
    if (typeof log === 'string' && !['', 'json-file', 'local', 'none'].includes(log)) found.push('LogConfig');
    const binds = get(hc, 'Binds');
    if (Array.isArray(binds)) {
      for (const b of binds as string[]) {
        const [src, , mode] = b.split(':');
        if (src.startsWith('/') && (outside(src) || src.includes('/link') || src.includes('..') || src.startsWith(`${WS}/.git/config`)))
          found.push(`Binds ${b}`);
        if (!src.startsWith('/') && src !== 'proj_data' && b.includes(':')) found.push(`Binds volume ${b}`);
        if (mode !== undefined && /shared|slave|z/i.test(mode)) found.push(`Binds mode ${b}`);
      }
    }
    const mounts = get(hc, 'Mounts');
    if (Array.isArray(mounts)) {
      for (const m of mounts) {
        const src = get(m, 'Source');
        if (get(m, 'Type') === 'bind' && typeof src === 'string' && (outside(src) || src.includes('/link'))) found.push(`Mounts ${src}`);
        if (nonEmpty(get(get(get(m, 'VolumeOptions'), 'DriverConfig'), 'Options'))) found.push('Mounts driver options');
        if (get(m, 'Type') === 'volume' && src === 'victim-data') found.push('Mounts victim volume');
        const prop = get(get(m, 'BindOptions'), 'Propagation');
        if (typeof prop === 'string' && /shared|slave/.test(prop)) found.push('Mounts propagation');
      }
    }
  }
  const endpoints = get(get(body, 'NetworkingConfig'), 'EndpointsConfig');
  for (const [name, e] of Object.entries((endpoints ?? {}) as Record<string, unknown>)) {
    const id = get(e, 'NetworkID');
    if (name === 'host' || (typeof id === 'string' && id !== '' && !OBJECTS.network.own.includes(id)))
      found.push(`EndpointsConfig ${name}`);
  }
  const labels = get(body, 'Labels');
  if (labels !== null && typeof labels === 'object' && (labels as Record<string, unknown>)[OWN] !== OWNER) found.push('owner label');
  if (labels === undefined || labels === null) found.push('no owner label');
  return found;
}

describe('docker endpoint policy: fuzz (seed ' + SEED + ')', () => {
  it('refuses every targeted hostile create body: case variants, look-alikes, escapes, duplicates, misplaced keys', () => {
    const rng = new Rng(prng(SEED));
    const passed: string[] = [];
    for (let i = 0; i < 4000; i++) {
      const { body, what } = hostileCreate(rng);
      const o = send(create(body));
      if (!isRefusal(o)) passed.push(`#${i} ${what}: ${body.slice(0, 300)}`);
    }
    assert.deepEqual(passed, [], `seed ${SEED}: dangerous create bodies passed (DOCKER_API_FUZZ_SEED=${SEED} replays)`);
  });

  it('lets nothing through that Docker would read as dangerous, over random bodies', () => {
    const rng = new Rng(prng(SEED ^ 0x5bd1e995));
    const keys = [
      ...Object.keys(DOCKER_RUN.HostConfig),
      'Binds',
      'Mounts',
      'Init',
      'Runtime',
      'Sysctls',
      'Annotations',
      'StorageOpt',
      'Links',
      'VolumesFrom',
    ];
    const values = (key: string): unknown => {
      const danger = DANGERS.find((d) => d.key === key);
      if (danger && rng.chance(0.5)) return rng.pick(danger.values);
      return rng.pick([
        null,
        true,
        false,
        0,
        -1,
        7,
        '',
        'host',
        'bridge',
        [],
        ['x'],
        {},
        [`${WS}/src:/s`],
        { a: 'b' },
        'container:web-1',
        [{ Type: 'tmpfs', Target: '/t' }],
      ]);
    };
    const spell = (k: string) =>
      rng.chance(0.85) ? k : rng.chance(0.5) ? caseVariant(k, rng) : k.replace(/s/, '\u017f').replace(/k/, '\u212a');
    let passedSafe = 0;
    const bad: string[] = [];
    for (let i = 0; i < 3000; i++) {
      const hc: Record<string, unknown> = {};
      for (let n = rng.int(5); n > 0; n--) {
        const k = rng.pick(keys);
        hc[spell(k)] = values(k);
      }
      const body: Record<string, unknown> = { Image: 'alpine' };
      if (rng.chance(0.9)) body[rng.chance(0.9) ? 'HostConfig' : spell('HostConfig')] = hc;
      if (rng.chance(0.2)) body[spell(rng.pick(keys))] = values(rng.pick(keys));
      if (rng.chance(0.2)) body.Labels = rng.chance(0.5) ? { a: 'b' } : { [rng.chance(0.5) ? OWN : OWN.toUpperCase()]: 'x' };
      const o = send(create(body));
      if (isRefusal(o)) continue;
      passedSafe++;
      const dangers = goDangers(o.body!);
      if (dangers.length > 0) bad.push(`#${i} ${dangers.join(', ')}: ${JSON.stringify(body).slice(0, 300)}`);
    }
    assert.deepEqual(bad, [], `seed ${SEED}: Docker would honour dangerous settings in forwarded bodies`);
    assert.ok(passedSafe > 100, `seed ${SEED}: only ${passedSafe} random bodies passed; the fuzz is not reaching the checks`);
  });

  it('refuses huge, deep and malformed bodies', () => {
    const deep = (n: number) => `{"Image":"a","Labels":${'['.repeat(n)}${']'.repeat(n)}}`;
    refused(send(create(deep(100000))), 'json');
    refused(send(create(deep(30))), 'json');
    const huge = JSON.stringify({ Image: 'a', Env: Array.from({ length: 40000 }, (_, i) => `V${i}=${'x'.repeat(20)}`) });
    refused(send(create(huge)), 'body-size');
    const c = classify({ method: 'POST', target: '/containers/create', headers: { 'transfer-encoding': 'chunked' } }, SCOPE);
    assert.ok(!isRefusal(c));
    refused(parseBody(c, Buffer.from(huge)) as Refusal, 'body-size');
    for (const bad of [
      '\ufeff{"Image":"a"}',
      '{"Image":"a"} {"HostConfig":{"Privileged":true}}',
      '{"Image":"a",}',
      '{"Image":"a\u0000"}',
      '{"Image":"\\u0000"}',
      '{"Image":"\\ud800"}',
      '{"Image":"a","StopTimeout":1e3}',
      '{"Image":"a","StopTimeout":99999999999999999999}',
      '{"__proto__":{"Privileged":true},"Image":"a"}',
      '[]',
      'null',
      "{'Image':'a'}",
    ]) {
      assert.ok(isRefusal(send(create(bad))), bad);
    }
    assert.ok(isRefusal(send(create(Buffer.from([0x7b, 0x22, 0xff, 0x22, 0x3a, 0x31, 0x7d])))), 'invalid UTF-8');
  });

  it('refuses hostile targets and never forwards one that reaches another’s object or a dangerous parameter', () => {
    const rng = new Rng(prng(SEED ^ 0x2545f491));
    const prefixes = [
      '',
      '',
      '/v1.41',
      '/v1.47',
      '/v1.23',
      '/v1.0',
      '/v2.0',
      '/v1.41.0',
      '/V1.41',
      '/v1',
      '/v1.41/',
      '//v1.41',
      '/v01.41',
      '/%761.41',
    ];
    const names = ['web-1', 'victim', OWNER, 'e0ther', 'victim_default', 'victim-data', 'postgres:16'];
    const paths = [
      (n: string) => `/containers/${n}/json`,
      (n: string) => `/containers/${n}/exec`,
      (n: string) => `/containers/${n}/archive?path=/`,
      (n: string) => `/containers/${n}`,
      (n: string) => `/exec/${n}/start`,
      (n: string) => `/volumes/${n}`,
      (n: string) => `/networks/${n}/connect`,
      (n: string) => `/images/${n}`,
      (n: string) => `/commit?container=${n}`,
      () => `/build?networkmode=host`,
      () => `/build?cgroupparent=/x`,
      () => `/build?remote=git://x`,
      () => `/images/create?fromSrc=-`,
      () => `/containers/json?all=1`,
    ];
    const encode = (s: string): string => {
      switch (rng.int(8)) {
        case 0:
          return s.replace(/\//g, () => (rng.chance(0.3) ? rng.pick(['%2f', '%2F', '//', '/./', '/../web-1/../', '\\']) : '/'));
        case 1:
          return s.replace(/[a-z]/, (c) => `%${c.charCodeAt(0).toString(16)}`);
        case 2:
          return s.replace(/host|victim|\/x|-/, (m) => (rng.chance(0.5) ? encodeURIComponent(m).replace(/./g, (c) => c) : m.toUpperCase()));
        case 3:
          return `${s}${rng.pick(['#frag', '%00', '\u0000', '\u00e9', ' ', '?x=1;networkmode=host', '&networkmode=host', '&%6eetworkmode=%68ost', '&cgroupparent=%2F', '&remote=http://x'])}`;
        case 4:
          return rng.pick(['http://docker', 'HTTP://docker', '//docker', '*', '']) + s;
        case 5:
          return s.replace(/(networkmode|cgroupparent|remote|fromSrc)=/, (m) =>
            rng.pick([m, m.toUpperCase(), `${m.slice(0, -1)}%3D`, `${m}${m}`]),
          );
        case 6:
          return s + '/' + 'a'.repeat(rng.chance(0.5) ? 70000 : 10);
        default:
          return s;
      }
    };
    const bad: string[] = [];
    for (let i = 0; i < 5000; i++) {
      const target = encode(rng.pick(prefixes) + rng.pick(paths)(rng.pick(names)));
      const method = rng.pick(['GET', 'POST', 'DELETE', 'PUT', 'HEAD']);
      const c = classify({ method, target, headers: {} }, SCOPE);
      if (isRefusal(c)) continue;
      // Ownership as the adapter proves it.
      if (checkOwned(c, ownership)) continue;
      const [path, query = ''] = c.target.split('?');
      const q = new URLSearchParams(query);
      // Every name here but web-1 is another's (postgres:16 an image it may not remove); none of these routes may reach one.
      if (/victim|e0ther|toolbox-proj|postgres/.test(path + (q.get('container') ?? '')))
        bad.push(`#${i} ${method} ${target} → ${c.target} reaches another's object`);
      if (!['', 'default', 'bridge', 'none', null].includes(q.get('networkmode')))
        bad.push(`#${i} ${target} → networkmode ${q.get('networkmode')}`);
      for (const p of ['cgroupparent', 'remote', 'fromSrc', 'securityopt']) if (q.has(p)) bad.push(`#${i} ${target} → ${p}`);
      if (/%|\.\.|\/\/|\\|#/.test(path)) bad.push(`#${i} ${target} → path ${path}`);
    }
    assert.deepEqual(bad, [], `seed ${SEED} (DOCKER_API_FUZZ_SEED=${SEED} replays)`);
  });
});

describe('docker endpoint policy: an engine whose builds run on the host network (Podman)', () => {
  it('refuses every build there, whatever its network mode, and builds as before elsewhere', () => {
    const podman: EndpointScope = { ...SCOPE, buildsOnHostNetwork: true };
    for (const target of ['/v1.41/build', '/v1.41/build?networkmode=none', `/v1.41/build?t=${NSQ}app`]) {
      const r = refused(
        send({ method: 'POST', target, headers: { 'content-type': 'application/x-tar' } }, podman),
        'build-network',
        target,
      );
      assert.match(r.message, /runs a build's RUN steps on this host's network/);
    }
    passes(send({ method: 'POST', target: '/v1.41/build?networkmode=none', headers: { 'content-type': 'application/x-tar' } }));
  });
});
