/**
 * The Docker endpoint under a folder's egress policy (issue 30; plan/dockerEndpoint/egress.ts): a
 * workspace container under `ask` or `allowlist` may start containers with no network of their own
 * (none, or an owned container's namespace; no named network, an internal one included, since a
 * container on one reaches the host at its gateway), may neither create networks nor connect to
 * one, may not build or push, and may pull, search or log in only at registries the policy allows.
 * Hostile spellings of each (case-folded keys, the top-level HostConfig, a network by id, an empty
 * NetworkMode) are refused; without `egress` in the scope nothing changes. The engine is a table;
 * `send` plays the adapter's part as test/unit/docker-endpoint-policy.test.ts's does.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { LABELS } from '../../extension/src/contract/upstream';
import {
  bodyLookups,
  checkBody,
  checkOwned,
  checkReach,
  classify,
  type ContainerNetwork,
  type EndpointScope,
  isRefusal,
  type ObjectKind,
  type Ownership,
  parseBody,
  type Refusal,
  type RuleId,
} from '../../extension/src/plan/dockerEndpoint/policy';
import { registryOfImage, registryOfLogin, registryOfSearch } from '../../extension/src/plan/dockerEndpoint/egress';

const WS = '/home/u/proj';
const OWNER = 'toolbox-proj-1a2b3c4d';
const OWN = LABELS.dockerOwner;
/** The loopback registry the test policy allows, and nothing else. */
const ALLOWED = { host: '127.0.0.1', port: 5000 };

/** Every registry question the policy asked, in order. */
const asked: Array<[string, number]> = [];
const egressScope = (mode: 'ask' | 'allowlist' = 'allowlist'): EndpointScope => ({
  owner: OWNER,
  workspace: WS,
  endpointSocket: '/tmp/toolbox-0/docker-1a2b3c4d/docker.sock',
  egress: {
    mode,
    registryAllowed: (host, port) => {
      asked.push([host, port]);
      return host === ALLOWED.host && port === ALLOWED.port;
    },
  },
});
const SCOPE = egressScope();
const OPEN: EndpointScope = { owner: OWNER, workspace: WS, endpointSocket: '/tmp/toolbox-0/docker-1a2b3c4d/docker.sock' };

/**
 * The engine's networks: name or id → whose, and whether it was created internal. `sealed` is the
 * workspace's internal network (id 5ea1ed…), `proj_default` its ordinary one (id 9d0c…), `bridge`
 * the engine's default (id b41d6e…).
 */
const NETWORKS: Record<string, { own: boolean; internal: boolean }> = {
  sealed: { own: true, internal: true },
  '5ea1ed00aa': { own: true, internal: true },
  proj_default: { own: true, internal: false },
  '9d0c00bb11': { own: true, internal: false },
  victim_sealed: { own: false, internal: true },
  victim_default: { own: false, internal: false },
  b41d6e0c22: { own: false, internal: false },
  None: { own: false, internal: false },
};
const CONTAINERS: Record<string, boolean> = {
  'web-1': true,
  victim: false,
  'old-1': true,
  'side-1': true,
  'side-2': true,
  'chain-1': true,
  'odd-1': true,
};
/**
 * What the engine's inspect says of each container's network (for an exec, its container's): `web-1`
 * has none, `old-1` was made before the policy on the default bridge, `side-1` shares the
 * namespace of one with none, `side-2` that of one on a bridge, `chain-1` that of one that shares
 * another's, `odd-1` reports no mode. Execs: `e0wn` runs in web-1, `e0ld` in old-1.
 */
const NETS: Record<string, ContainerNetwork | undefined> = {
  'web-1': { mode: 'none' },
  'old-1': { mode: 'default' },
  'side-1': { mode: 'container:a1b2c3', joined: 'none' },
  'side-2': { mode: 'container:d4e5f6', joined: 'bridge' },
  'chain-1': { mode: 'container:a7b8c9', joined: 'container:a1b2c3' },
  'odd-1': { mode: undefined },
};
const EXECS: Record<string, string> = { e0wn: 'web-1', e0ld: 'old-1' };
const networkOf = (kind: 'container' | 'exec', ref: string): ContainerNetwork | undefined =>
  NETS[kind === 'exec' ? (EXECS[ref] ?? '') : ref];

function ownership(kind: ObjectKind, ref: string): Ownership {
  if (kind === 'network') return NETWORKS[ref] === undefined ? 'missing' : NETWORKS[ref].own ? 'own' : 'other';
  if (kind === 'container') return CONTAINERS[ref] === undefined ? 'missing' : CONTAINERS[ref] ? 'own' : 'other';
  if (kind === 'exec') return EXECS[ref] !== undefined ? 'own' : 'missing';
  return 'own';
}
/** What the engine's inspect says of a network's Internal (the client never says it). */
const internal = (ref: string): boolean => NETWORKS[ref]?.internal === true;

interface Req {
  method: string;
  target: string;
  body?: unknown;
}
type Outcome = { kind: 'forward'; body?: Record<string, unknown> } | Refusal;

function send(req: Req, scope: EndpointScope = SCOPE): Outcome {
  const raw = req.body === undefined ? undefined : Buffer.from(typeof req.body === 'string' ? req.body : JSON.stringify(req.body), 'utf8');
  const headers = raw ? { 'content-length': String(raw.length), 'content-type': 'application/json' } : {};
  const c = classify({ method: req.method, target: req.target, headers }, scope);
  if (isRefusal(c)) return c;
  const notOwned = checkOwned(c, ownership, internal);
  if (notOwned) return notOwned;
  const reach = checkReach(c, networkOf);
  if (reach) return reach;
  if (c.body.kind !== 'json') return { kind: 'forward' };
  const parsed = parseBody(c, raw ?? Buffer.alloc(0));
  if (isRefusal(parsed)) return parsed;
  const lookups = bodyLookups(parsed, scope);
  if (isRefusal(lookups)) return lookups;
  const checked = checkBody(parsed, scope, {
    owner: ownership,
    internal,
    // The adapter looks a shared container up one step only (engine/dockerEndpoint/gate.ts).
    network: (container) => ({ mode: NETS[container]?.mode }),
    realpaths: new Map(lookups.bindSources.map((s) => [s, s])),
  });
  if (isRefusal(checked)) return checked;
  return { kind: 'forward', body: checked.body.length > 0 ? (JSON.parse(checked.body.toString()) as Record<string, unknown>) : undefined };
}

function passes(o: Outcome, what: string): { kind: 'forward'; body?: Record<string, unknown> } {
  assert.ok(!isRefusal(o), `${what} refused: ${isRefusal(o) ? `${o.rule}: ${o.message}` : ''}`);
  return o as { kind: 'forward'; body?: Record<string, unknown> };
}

function refused(o: Outcome, rule: RuleId | RuleId[], what: string): Refusal {
  assert.ok(isRefusal(o), `${what} passed, expected ${String(rule)}`);
  const rules = Array.isArray(rule) ? rule : [rule];
  assert.ok(rules.includes(o.rule), `${what}: ${o.rule}: ${o.message}`);
  return o;
}

/** The egress refusal, with its status and sentence: names the mode and says what to do; no raw-socket opt-out. */
function egressRefusal(o: Outcome, what: string, sentence: RegExp): Refusal {
  const r = refused(o, 'egress', what);
  assert.equal(r.status, 403, what);
  assert.match(r.message, /^This workspace's egress policy \((ask|allowlist)\) /, what);
  assert.match(r.message, sentence, `${what}: ${r.message}`);
  assert.match(r.message, /\(rule egress\)$/, what);
  assert.doesNotMatch(r.message, /raw-socket/, what);
  return r;
}

const create = (body: unknown): Req => ({ method: 'POST', target: '/v1.41/containers/create', body });
const run = (networkMode: string | undefined, endpoints?: Record<string, unknown>): Req =>
  create({
    Image: 'alpine',
    HostConfig: networkMode === undefined ? {} : { NetworkMode: networkMode },
    ...(endpoints ? { NetworkingConfig: { EndpointsConfig: endpoints } } : {}),
  });
/** The sentence of every refused network: names the mode, says internal ones are refused too and why, and what to do instead. */
const NO_NETWORK =
  /gives the containers it starts no network of their own, internal ones included \(a container on an internal network still reaches this host at that network’s gateway\), and .*: run them with --network none, or with --network container:<a container you started through this endpoint> to share its loopback\. \(rule egress\)$/;
/** How a connect's refusal names an internal network of the caller's own (the engine's inspect said so), and why it is refused all the same. */
const INTERNAL = (ref: string) =>
  new RegExp(`the internal network ${ref} \\(a container on an internal network still reaches this host at that network’s gateway\\)`);

describe('docker endpoint under an egress policy: a new container gets no network of its own', () => {
  it('refuses the default network however it is named: default, bridge, empty, absent, the docker CLI’s plain run', () => {
    egressRefusal(send(run('default', { default: {} })), 'docker run (default)', NO_NETWORK);
    egressRefusal(send(run('bridge')), 'NetworkMode bridge', /asks for the bridge network/);
    egressRefusal(send(run('')), 'NetworkMode ""', /the engine’s default network \(an empty NetworkMode\)/);
    egressRefusal(send(run(undefined)), 'HostConfig without NetworkMode', NO_NETWORK);
    egressRefusal(send(create({ Image: 'alpine' })), 'no HostConfig at all', NO_NETWORK);
    egressRefusal(send(create({ Image: 'alpine', HostConfig: null })), 'HostConfig null', NO_NETWORK);
    refused(send(run('host')), 'network-mode', 'NetworkMode host');
    refused(send(run('HOST')), ['network-mode', 'not-owned'], 'NetworkMode HOST');
  });

  it('takes none and an owned container’s namespace, and nothing else', () => {
    passes(send(run('none')), 'none');
    passes(send(run('none', { none: {} })), 'none, as the docker CLI sends it');
    const shared = passes(send(run('container:web-1')), 'container:<own>');
    assert.equal((shared.body?.HostConfig as Record<string, unknown>).NetworkMode, 'container:web-1', 'forwarded as sent');
    passes(send(run('container:web-1', { none: {} })), 'container:<own>, with the none endpoint');
    refused(send(run('container:victim')), 'not-owned', 'container:<another’s>');
    refused(send(run('container:nowhere')), 'not-owned', 'container:<missing>');
  });

  it('refuses an owned internal network (by name or id), as a mode or as an endpoint, with the policy’s sentence', () => {
    egressRefusal(
      send(run('sealed', { sealed: { Aliases: ['db'] } })),
      'an owned internal network',
      /HostConfig\.NetworkMode asks for the network sealed: /,
    );
    egressRefusal(send(run('5ea1ed00aa')), 'an owned internal network by id', /HostConfig\.NetworkMode asks for the network 5ea1ed00aa: /);
    egressRefusal(
      send(run('none', { sealed: {} })),
      'none, with an endpoint on an owned internal network',
      /EndpointsConfig\.sealed asks for the network sealed: /,
    );
    egressRefusal(
      send(run('container:web-1', { sealed: {} })),
      'container:<own>, with an endpoint on an internal network',
      /EndpointsConfig\.sealed asks/,
    );
    const r = egressRefusal(send(run('sealed')), 'the sentence', NO_NETWORK);
    assert.doesNotMatch(r.message, /--internal|network create/, 'no longer offers an internal network');
  });

  it('refuses every other network alike, before looking it up: owned or another’s, internal or not, or missing', () => {
    // The refusal holds whatever the engine would say, so bodyLookups makes it before any lookup:
    // the sentence is the same for each but for the name, and tells nothing of what exists.
    const sentence = (ref: string) => {
      const r = egressRefusal(send(run(ref)), ref, NO_NETWORK);
      return r.message.replace(ref, '<ref>');
    };
    const owned = sentence('proj_default');
    assert.match(owned, /asks for the network <ref>: /);
    for (const ref of ['9d0c00bb11', 'sealed', 'victim_sealed', 'victim_default', 'b41d6e0c22', 'nowhere'])
      assert.equal(sentence(ref), owned, ref);
    // None is not none: Docker reads it as a network name.
    egressRefusal(send(run('None')), 'None', /asks for the network None: /);
  });

  it('holds every endpoint of NetworkingConfig to the same, by key and by NetworkID', () => {
    egressRefusal(send(run('none', { bridge: {} })), 'EndpointsConfig bridge', /EndpointsConfig\.bridge asks for the bridge network/);
    egressRefusal(send(run('none', { default: {} })), 'EndpointsConfig default', NO_NETWORK);
    egressRefusal(
      send(run('none', { proj_default: {} })),
      'EndpointsConfig owned non-internal',
      /EndpointsConfig\.proj_default asks for the network proj_default: /,
    );
    egressRefusal(
      send(run('none', { none: { NetworkID: '9d0c00bb11' } })),
      'NetworkID of an owned non-internal network',
      /EndpointsConfig\.none\.NetworkID asks for the network 9d0c00bb11: /,
    );
    egressRefusal(
      send(run('none', { none: { NetworkID: '5ea1ed00aa' } })),
      'NetworkID of the owned internal network',
      /EndpointsConfig\.none\.NetworkID asks for the network 5ea1ed00aa: /,
    );
    egressRefusal(
      send(run('container:web-1', { none: { NetworkID: 'b41d6e0c22' } })),
      'NetworkID naming the bridge by id',
      /NetworkID asks for the network b41d6e0c22: /,
    );
    egressRefusal(send(run('none', { victim_sealed: {} })), 'EndpointsConfig another’s network', /EndpointsConfig\.victim_sealed asks/);
    egressRefusal(send(run('none', { nowhere: {} })), 'EndpointsConfig a missing network', /EndpointsConfig\.nowhere asks/);
  });

  it('reads the body as Docker does: case-folded keys, the top-level HostConfig and duplicates are refused, never read as none', () => {
    const hostile: Array<[string, string]> = [
      ['a case-folded NetworkMode', '{"Image":"a","HostConfig":{"networkmode":"bridge"}}'],
      ['a case-folded HostConfig', '{"Image":"a","hostConfig":{"NetworkMode":"bridge"}}'],
      ['the Kelvin sign', '{"Image":"a","HostConfig":{"NetworKMode":"bridge"}}'.replace('K', '\u212a')],
      ['the top-level HostConfig', '{"Image":"a","NetworkMode":"bridge"}'],
      ['the top-level HostConfig beside a HostConfig of none', '{"Image":"a","NetworkMode":"bridge","HostConfig":{"NetworkMode":"none"}}'],
      ['a duplicate, last wins in Go', '{"Image":"a","HostConfig":{"NetworkMode":"none","networkMode":"bridge"}}'],
      [
        'a case-folded NetworkingConfig',
        '{"Image":"a","HostConfig":{"NetworkMode":"none"},"networkingconfig":{"EndpointsConfig":{"bridge":{}}}}',
      ],
      [
        'a case-folded EndpointsConfig',
        '{"Image":"a","HostConfig":{"NetworkMode":"none"},"NetworkingConfig":{"endpointsconfig":{"bridge":{}}}}',
      ],
      [
        'a case-folded NetworkID',
        '{"Image":"a","HostConfig":{"NetworkMode":"sealed"},"NetworkingConfig":{"EndpointsConfig":{"sealed":{"networkid":"b41d6e0c22"}}}}',
      ],
    ];
    for (const [what, body] of hostile) refused(send(create(body)), ['unknown-field', 'duplicate-key'], what);
  });

  it('says the mode it is under', () => {
    const r = egressRefusal(send(run('bridge'), egressScope('ask')), 'ask', NO_NETWORK);
    assert.match(r.message, /egress policy \(ask\)/);
    const net = egressRefusal(
      send({ method: 'POST', target: '/v1.41/networks/create', body: { Name: 'x', Internal: true } }, egressScope('ask')),
      'ask, network create',
      /create networks/,
    );
    assert.match(net.message, /egress policy \(ask\)/);
  });
});

describe('docker endpoint under an egress policy: networks', () => {
  it('creates no network, internal ones included, and still reads the body as Docker does first', () => {
    const net = (body: unknown) => send({ method: 'POST', target: '/v1.41/networks/create', body });
    const CREATE =
      /does not let it create networks, internal ones included: the containers it starts may join none \(a container on an internal network still reaches this host at that network’s gateway\)\. Instead, run them with --network none, or with --network container:/;
    egressRefusal(net({ Name: 'x' }), 'docker network create x', CREATE);
    egressRefusal(net({ Name: 'x', Internal: false }), 'Internal false', CREATE);
    egressRefusal(net({ Name: 'x', Internal: null }), 'Internal null', CREATE);
    const r = egressRefusal(net({ Name: 'x', Internal: true, Driver: 'bridge' }), 'docker network create --internal x', CREATE);
    assert.doesNotMatch(r.message, /docker network create --internal/, 'no longer offers an internal network');
    refused(net('{"Name":"x","internal":true}'), 'unknown-field', 'a case-folded Internal');
    refused(net('{"Name":"x","Internal":true,"internal":false}'), 'duplicate-key', 'Internal twice');
    refused(net({ Name: 'x', Internal: true, Driver: 'macvlan' }), 'network-driver', 'a driver the endpoint refuses anyway');
    // Without a policy the same create passes, labelled the caller's own.
    const made = passes(
      send({ method: 'POST', target: '/v1.41/networks/create', body: { Name: 'x', Internal: true, Driver: 'bridge' } }, OPEN),
      'open',
    );
    assert.equal((made.body?.Labels as Record<string, string>)[OWN], OWNER);
    assert.equal(made.body?.Internal, true);
  });

  it('connects to no network, an owned internal one included, and names an internal one as such', () => {
    const connect = (net: string, body: unknown = { Container: 'web-1' }) =>
      send({ method: 'POST', target: `/v1.41/networks/${net}/connect`, body });
    const JOIN = /lets the containers it starts join no network, internal ones included, and this connect names /;
    const sealed = egressRefusal(connect('sealed'), 'connect to the owned internal network', JOIN);
    assert.match(sealed.message, INTERNAL('sealed'));
    assert.match(sealed.message, /: run them with --network none, or with --network container:/);
    egressRefusal(connect('5ea1ed00aa'), 'connect to it by id', INTERNAL('5ea1ed00aa'));
    const open = egressRefusal(
      connect('proj_default'),
      'connect to an owned network not internal',
      /this connect names the network proj_default: /,
    );
    assert.doesNotMatch(open.message, /internal network proj_default/);
    refused(connect('victim_sealed'), 'not-owned', 'connect to another’s internal network');
    refused(connect('victim_default'), 'not-owned', 'connect to another’s network');
    refused(connect('bridge'), 'not-owned', 'connect to the bridge');
    refused(connect('nowhere'), 'not-owned', 'connect to a missing network');
    // Refused at the head: the body (a container, an endpoint) is never read.
    egressRefusal(connect('sealed', { Container: 'victim', EndpointConfig: { NetworkID: '9d0c00bb11' } }), 'whatever the body', JOIN);
    const c = classify({ method: 'POST', target: '/v1.41/networks/sealed/connect', headers: {} }, SCOPE);
    assert.ok(!isRefusal(c));
    assert.deepEqual(c.internalNetworks, ['sealed']);
    // An adapter that does not say (no internal fact) still refuses; the network is then not called internal.
    const unsaid = refused(checkOwned(c, ownership) ?? { kind: 'forward' }, 'egress', 'no internal fact');
    assert.match(unsaid.message, /this connect names the network sealed: /);
    // Without a policy, a connect to an owned network passes and its body is judged as before.
    passes(send({ method: 'POST', target: '/v1.41/networks/sealed/connect', body: { Container: 'web-1' } }, OPEN), 'open');
    refused(
      send({ method: 'POST', target: '/v1.41/networks/sealed/connect', body: { Container: 'victim' } }, OPEN),
      'not-owned',
      'open, another’s container',
    );
  });
});

describe('docker endpoint under an egress policy: builds, pushes, registries', () => {
  const tar = (target: string) => send({ method: 'POST', target });

  it('refuses every build, whatever its network mode, and BuildKit’s /session and /grpc', () => {
    const BUILD = /does not let the Docker daemon build images for it.*FROM.*ADD.*Build the image on the host/;
    egressRefusal(tar('/v1.41/build'), 'docker build', BUILD);
    egressRefusal(tar('/v1.41/build?networkmode=none'), 'docker build --network none', BUILD);
    egressRefusal(tar('/v1.41/build?version=2&remote=client-session&session=s1&networkmode=none'), 'BuildKit build', BUILD);
    refused(tar('/v1.41/build?networkmode=host'), ['build-network', 'egress'], 'docker build --network host');
    egressRefusal(send({ method: 'POST', target: '/session' }), '/session', BUILD);
    egressRefusal(send({ method: 'POST', target: '/grpc' }), '/grpc', BUILD);
  });

  it('refuses a push, to any registry, the allowed one included', () => {
    egressRefusal(tar('/v1.41/images/proj-web/push?tag=latest'), 'docker push', /does not let it push images.*Push from the host/);
    egressRefusal(tar('/v1.41/images/127.0.0.1:5000/proj-web/push'), 'push to the allowed registry', /push/);
  });

  it('pulls only from registries the policy allows, read as Docker normalises the name', () => {
    const pull = (ref: string, tag = '') =>
      send({ method: 'POST', target: `/v1.41/images/create?fromImage=${encodeURIComponent(ref)}${tag ? `&tag=${tag}` : ''}` });
    const cases: Array<[string, string, number]> = [
      ['alpine', 'registry-1.docker.io', 443],
      ['library/alpine', 'registry-1.docker.io', 443],
      ['docker.io/library/alpine', 'registry-1.docker.io', 443],
      ['index.docker.io/library/alpine', 'registry-1.docker.io', 443],
      ['evil.example/secret', 'evil.example', 443],
      ['evil.example:5000/x', 'evil.example', 5000],
      ['EVIL.example/x', 'evil.example', 443],
      ['Evil/x', 'evil', 443],
      ['localhost/x', 'localhost', 443],
      ['localhost:5000/x', 'localhost', 5000],
      ['127.0.0.1:5001/x', '127.0.0.1', 5001],
      ['evil.example/x@sha256:' + 'a'.repeat(64), 'evil.example', 443],
    ];
    for (const [ref, host, port] of cases) {
      asked.length = 0;
      const r = egressRefusal(
        pull(ref, 'latest'),
        `pull ${ref}`,
        new RegExp(`does not allow the registry ${host.replace(/\./g, '\\.')}:${port}, and pulling`),
      );
      assert.match(r.message, /Use a registry the policy allows, or add .* to the folder's egress allowlist/);
      assert.deepEqual(asked, [[host, port]], ref);
    }
    passes(pull('127.0.0.1:5000/proj/base', 'v1'), 'the allowed registry');
    refused(pull('toolbox-vscode/runtime'), 'runtime-image', 'the runtime image is refused before');
    refused(send({ method: 'POST', target: '/v1.41/images/create?fromSrc=http%3A%2F%2F169.254.169.254%2F' }), 'image-import', 'import');
  });

  it('holds a search, a manifest lookup and a login to the same registries', () => {
    asked.length = 0;
    egressRefusal(
      send({ method: 'GET', target: '/v1.41/images/search?term=evil.example%2Fsecret' }),
      'search at evil.example',
      /registry evil\.example:443, and searching/,
    );
    egressRefusal(
      send({ method: 'GET', target: '/v1.41/images/search?term=alpine' }),
      'search at Docker Hub',
      /registry index\.docker\.io:443/,
    );
    passes(send({ method: 'GET', target: '/v1.41/images/search?term=127.0.0.1:5000%2Fx' }), 'search at the allowed registry');
    egressRefusal(
      send({ method: 'GET', target: '/v1.41/distribution/evil.example/x/json' }),
      'distribution',
      /evil\.example:443, and looking up/,
    );
    passes(send({ method: 'GET', target: '/v1.41/distribution/127.0.0.1:5000/x/json' }), 'distribution at the allowed registry');
    const login = (serveraddress?: string) =>
      send({
        method: 'POST',
        target: '/v1.41/auth',
        body: { username: 'u', password: 'secret', ...(serveraddress !== undefined ? { serveraddress } : {}) },
      });
    egressRefusal(login('evil.example'), 'login at evil.example', /registry evil\.example:443, and logging in/);
    egressRefusal(login('https://evil.example:8443/v2/'), 'login by URL', /evil\.example:8443/);
    egressRefusal(login('https://index.docker.io/v1/'), 'docker login (Hub)', /registry-1\.docker\.io:443/);
    egressRefusal(login(), 'login without a server', /registry-1\.docker\.io:443/);
    passes(login('127.0.0.1:5000'), 'login at the allowed registry');
  });

  it('reads registries as Docker does', () => {
    assert.deepEqual(registryOfImage('ubuntu:22.04'), { host: 'registry-1.docker.io', port: 443 });
    assert.deepEqual(registryOfImage('registry-1.docker.io/library/ubuntu'), { host: 'registry-1.docker.io', port: 443 });
    assert.deepEqual(registryOfImage('ghcr.io/o/r:1'), { host: 'ghcr.io', port: 443 });
    assert.deepEqual(registryOfImage('my.reg:5000/a/b@sha256:00'), { host: 'my.reg', port: 5000 });
    assert.throws(() => registryOfImage('evil.example:99999/x'));
    assert.throws(() => registryOfImage('evil.example:/x'));
    assert.deepEqual(registryOfSearch('docker.io/x'), { host: 'index.docker.io', port: 443 });
    assert.deepEqual(registryOfLogin('HTTP://Reg.Example:5000'), { host: 'reg.example', port: 5000 });
  });
});

describe('docker endpoint under an egress policy: nothing runs in a container of its own that has a network (issue 38, item 7)', () => {
  const NETWORKED =
    /lets nothing run with a network of its own, and the container .* has one \(it was made before the policy, or shares the network of one that was\): .* would reach the network outside the policy\. Remove it and start it again with --network none/;
  const runs = (ref: string): Req[] => [
    { method: 'POST', target: `/v1.41/containers/${ref}/exec`, body: { Cmd: ['sh'] } },
    { method: 'POST', target: `/v1.41/containers/${ref}/start` },
    { method: 'POST', target: `/v1.41/containers/${ref}/restart` },
    { method: 'POST', target: `/v1.41/containers/${ref}/unpause` },
    { method: 'POST', target: `/v1.41/containers/${ref}/attach?stream=1&stdin=1` },
    { method: 'PUT', target: `/v1.41/containers/${ref}/archive?path=/tmp` },
  ];

  it('refuses an exec, a start, a restart, an unpause, an attach and files copied in, into one with a network of its own', () => {
    for (const ref of ['old-1', 'side-2', 'chain-1', 'odd-1'])
      for (const req of runs(ref)) egressRefusal(send(req), `${req.method} ${req.target}`, NETWORKED);
    egressRefusal(send({ method: 'POST', target: '/v1.41/exec/e0ld/start', body: { Detach: false } }), 'exec start in old-1', NETWORKED);
  });

  it('takes them into one with none, or sharing the namespace of one with none; and what runs nothing', () => {
    for (const ref of ['web-1', 'side-1']) for (const req of runs(ref)) passes(send(req), `${req.method} ${req.target}`);
    passes(send({ method: 'POST', target: '/v1.41/exec/e0wn/start', body: { Detach: false } }), 'exec start in web-1');
    for (const req of [
      { method: 'POST', target: '/v1.41/containers/old-1/stop' },
      { method: 'POST', target: '/v1.41/containers/old-1/kill' },
      { method: 'DELETE', target: '/v1.41/containers/old-1?force=1' },
      { method: 'GET', target: '/v1.41/containers/old-1/logs?stdout=1' },
      { method: 'GET', target: '/v1.41/containers/old-1/archive?path=/etc/hostname' },
    ])
      passes(send(req), `${req.method} ${req.target}`);
  });

  it('refuses a new container sharing the network of one that has one, or of one that shares another’s', () => {
    for (const ref of ['old-1', 'side-1', 'side-2', 'odd-1']) egressRefusal(send(run(`container:${ref}`)), `container:${ref}`, NETWORKED);
    passes(send(run('container:web-1')), 'container:<one with none>');
  });

  it('changes nothing without egress in the scope', () => {
    for (const req of runs('old-1')) passes(send(req, OPEN), `${req.method} ${req.target}`);
    passes(send(run('container:old-1'), OPEN), 'container:old-1');
    const c = classify({ method: 'POST', target: '/v1.41/containers/old-1/exec', headers: {} }, OPEN);
    assert.ok(!isRefusal(c) && c.runsInside === undefined);
  });
});

describe('docker endpoint under an egress policy: the rest', () => {
  it('leaves what reaches no network as it was: exec, update, lists, logs, volumes, stop', () => {
    passes(send({ method: 'POST', target: '/v1.41/containers/web-1/exec', body: { Cmd: ['true'] } }), 'exec');
    passes(send({ method: 'POST', target: '/v1.41/containers/web-1/update', body: { Memory: 1 << 20 } }), 'update');
    passes(send({ method: 'GET', target: '/v1.41/containers/json' }), 'ps');
    passes(send({ method: 'POST', target: '/v1.41/volumes/create', body: { Name: 'data' } }), 'volume create');
    passes(send({ method: 'POST', target: '/v1.41/images/alpine/tag?repo=localhost%2Ftoolbox-proj-1a2b3c4d%2Fproj-web&tag=x' }), 'tag');
  });

  it('still refuses plugins and Swarm by their own rules', () => {
    refused(send({ method: 'POST', target: '/v1.41/plugins/pull?remote=evil.example/p' }), 'plugins', 'plugin pull');
    refused(send({ method: 'POST', target: '/v1.41/services/create', body: {} }), 'swarm', 'service create');
    refused(send({ method: 'POST', target: '/v1.41/swarm/join', body: {} }), 'swarm', 'swarm join');
  });

  it('changes nothing without egress in the scope', () => {
    passes(send(run('default', { default: {} }), OPEN), 'docker run');
    passes(send(run(''), OPEN), 'NetworkMode ""');
    passes(send(run('proj_default'), OPEN), 'an owned network');
    passes(send({ method: 'POST', target: '/v1.41/networks/create', body: { Name: 'x' } }, OPEN), 'network create');
    passes(send({ method: 'POST', target: '/v1.41/networks/proj_default/connect', body: { Container: 'web-1' } }, OPEN), 'connect');
    passes(send({ method: 'POST', target: '/v1.41/build?t=localhost%2Ftoolbox-proj-1a2b3c4d%2Fx' }, OPEN), 'build');
    passes(send({ method: 'POST', target: '/session' }, OPEN), '/session');
    passes(send({ method: 'POST', target: '/v1.41/images/x/push' }, OPEN), 'push');
    passes(send({ method: 'POST', target: '/v1.41/images/create?fromImage=evil.example%2Fx' }, OPEN), 'pull');
    passes(send({ method: 'POST', target: '/v1.41/auth', body: { serveraddress: 'evil.example' } }, OPEN), 'login');
    const c = classify({ method: 'POST', target: '/v1.41/networks/proj_default/connect', headers: {} }, OPEN);
    assert.ok(!isRefusal(c) && c.internalNetworks.length === 0 && c.egressMode === undefined);
  });

  it('refuses a named network at the lookups (bodyLookups), so that none is looked up, and looks up the container it shares', () => {
    const lookups = (body: unknown) => {
      const c = classify({ method: 'POST', target: '/v1.41/containers/create', headers: { 'content-length': '1' } }, SCOPE);
      assert.ok(!isRefusal(c));
      const parsed = parseBody(c, Buffer.from(JSON.stringify(body)));
      assert.ok(!isRefusal(parsed));
      return { parsed, l: bodyLookups(parsed, SCOPE) };
    };
    const { parsed, l } = lookups({
      Image: 'a',
      HostConfig: { NetworkMode: 'sealed' },
      NetworkingConfig: { EndpointsConfig: { sealed: { NetworkID: '5ea1ed00aa' } } },
    });
    assert.ok(isRefusal(l), 'refused before any lookup');
    egressRefusal(l, 'bodyLookups', /HostConfig\.NetworkMode asks for the network sealed: /);
    // checkBody refuses it too, whatever the adapter says of Internal (its facts or none).
    egressRefusal(checkBody(parsed, SCOPE, { owner: ownership, internal, realpaths: new Map() }) as Refusal, 'internal fact', NO_NETWORK);
    egressRefusal(checkBody(parsed, SCOPE, { owner: ownership, realpaths: new Map() }) as Refusal, 'no internal fact', NO_NETWORK);
    // What passes asks for the container whose namespace it shares, and no network.
    const shared = lookups({
      Image: 'a',
      HostConfig: { NetworkMode: 'container:web-1' },
      NetworkingConfig: { EndpointsConfig: { none: {} } },
    }).l;
    assert.ok(!isRefusal(shared));
    assert.deepEqual(shared.objects.networks, []);
    assert.deepEqual(shared.objects.containers, ['web-1']);
  });
});
