/**
 * The Docker endpoint's gate (engine/dockerEndpoint/gate.ts) over a stand-in engine: how it maps the
 * policy's answers to the endpoint's, what it looks up and how (an exec by its container, a 404 as
 * missing), and what it does when the engine fails it: a lookup that does not answer in time, an
 * error text of any length, a volume someone else makes between the lookup and the create. The
 * real engine and the docker CLI are test/engine/docker-endpoint-policy.test.ts's.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type Dockerode from 'dockerode';
import { LABELS } from '../../extension/src/contract/upstream';
import type { GateForward, GateHead, GateRefusal } from '../../extension/src/engine/dockerEndpoint/server';
import { ENGINE_TEXT_CHARS, policyGate, type PolicyGateOptions } from '../../extension/src/engine/dockerEndpoint/gate';
import type { EndpointScope } from '../../extension/src/plan/dockerEndpoint/policy';

const WS = '/home/u/proj';
const OWNER = 'toolbox-proj-1a2b3c4d';
const SOCK = '/tmp/toolbox-0/docker-1a2b3c4d/docker.sock';
const SCOPE: EndpointScope = { owner: OWNER, workspace: WS, endpointSocket: SOCK };
const own = { [LABELS.dockerOwner]: OWNER };

interface Answer {
  status: number;
  body?: unknown;
}

/** A stand-in engine: answers by method and path; whatever is not listed is 404. Records every request. */
function engine(routes: Record<string, Answer | ((body: unknown) => Answer | Promise<Answer> | 'hang')>) {
  const seen: string[] = [];
  const modem = {
    dial(
      o: { path: string; method: string; options?: { _body?: unknown }; abortSignal?: AbortSignal },
      cb: (e: unknown, d: unknown) => void,
    ) {
      const key = `${o.method} ${o.path}`;
      seen.push(key);
      const route = routes[key];
      void (async () => {
        const a =
          typeof route === 'function' ? await route(o.options?._body) : (route ?? { status: 404, body: { message: 'no such object' } });
        if (a === 'hang') {
          o.abortSignal?.addEventListener('abort', () =>
            cb(Object.assign(new Error('The operation was aborted'), { name: 'AbortError' }), null),
          );
          return;
        }
        if (a.status < 300) cb(null, a.body);
        else cb(Object.assign(new Error(`(HTTP code ${a.status}) error`), { statusCode: a.status, json: a.body }), null);
      })();
    },
  };
  return { docker: { modem } as unknown as Dockerode, seen };
}

function gate(routes: Parameters<typeof engine>[0], over: Partial<PolicyGateOptions> = {}) {
  const e = engine(routes);
  const logged: Array<{ rule?: string; message: string }> = [];
  const g = policyGate({ docker: e.docker, scope: SCOPE, realpath: async (p) => p, log: (x) => logged.push(x), ...over });
  return { g, seen: e.seen, logged };
}

const head = (method: string, target: string, headers: Record<string, string> = {}) => ({ method, target, headers });

function forward(v: GateHead): GateForward {
  assert.equal(v.kind, 'forward', v.kind === 'refuse' ? `${v.rule}: ${v.message}` : '');
  return v as GateForward;
}
function refusal(v: GateHead | { kind: string }, rule: string, status?: number): GateRefusal {
  assert.equal(v.kind, 'refuse');
  const r = v as GateRefusal;
  assert.equal(r.rule, rule, r.message);
  if (status !== undefined) assert.equal(r.status, status, r.message);
  return r;
}

const json = (v: unknown) => Buffer.from(JSON.stringify(v));
const CREATE_HEADERS = { 'content-type': 'application/json', 'content-length': '100' };

describe('the Docker endpoint’s gate (engine/dockerEndpoint/gate.ts)', () => {
  it('maps a policy refusal to the endpoint’s, with its status, rule and sentence, and logs it', async () => {
    const { g, logged } = gate({});
    const r = refusal(await g.head(head('POST', '/v1.41/swarm/init')), 'swarm', 403);
    assert.match(r.message, /\(rule swarm\)/);
    assert.deepEqual(Object.keys(r).sort(), ['kind', 'message', 'rule', 'status']);
    assert.equal(logged[0]?.rule, 'swarm');
    refusal(await g.head(head('GET', '/v1.12/containers/json')), 'api-version', 400);
  });

  it('forwards the policy’s target and headers, upgrade for a hijack', async () => {
    const { g } = gate({ 'GET /containers/web/json': { status: 200, body: { Id: 'web0id', Config: { Labels: own } } } });
    const list = forward(await g.head(head('GET', '/v1.41/containers/json?all=1', { 'user-agent': 'Docker-Client/x', host: 'docker' })));
    assert.match(list.target, /^\/v1\.41\/containers\/json\?all=1&filters=/);
    assert.deepEqual(list.headers, { 'user-agent': 'Docker-Client/x' });
    assert.equal(list.upgrade, false);
    const attach = forward(await g.head(head('POST', '/v1.41/containers/web/attach?stream=1', { connection: 'Upgrade', upgrade: 'tcp' })));
    assert.equal(attach.upgrade, true);
  });

  it('answers another’s and a missing object alike (404); an exec is its container’s', async () => {
    const { g, seen } = gate({
      'GET /containers/web/json': { status: 200, body: { Id: 'web0id', Config: { Labels: own } } },
      'GET /containers/victim/json': { status: 200, body: { Id: 'victim0id', Config: { Labels: { [LABELS.dockerOwner]: 'someone' } } } },
      'GET /exec/e1/json': { status: 200, body: { ID: 'e1', ContainerID: 'web' } },
      'GET /exec/e2/json': { status: 200, body: { ID: 'e2', ContainerID: 'victim' } },
    });
    forward(await g.head(head('POST', '/v1.41/containers/web/stop')));
    const other = refusal(await g.head(head('POST', '/v1.41/containers/victim/stop')), 'not-owned', 404);
    const missing = refusal(await g.head(head('POST', '/v1.41/containers/nobody/stop')), 'not-owned', 404);
    assert.equal(other.message.replace('victim', 'nobody'), missing.message);
    forward(await g.head(head('GET', '/v1.41/exec/e1/json')));
    refusal(await g.head(head('GET', '/v1.41/exec/e2/json')), 'not-owned', 404);
    assert.ok(seen.includes('GET /exec/e2/json') && seen.includes('GET /containers/victim/json'));
  });

  it('reads dockerode’s options body on a stop and forwards nothing of it, not even its Content-Type', async () => {
    const { g } = gate({ 'GET /containers/web/json': { status: 200, body: { Id: 'web0id', Config: { Labels: own } } } });
    const f = forward(
      await g.head(head('POST', '/v1.41/containers/web/stop?t=0', { 'content-type': 'application/json', 'content-length': '7' })),
    );
    assert.equal(f.target, '/v1.41/containers/web0id/stop?t=0', 'forwarded by the id the check resolved');
    assert.equal(f.headers?.['content-type'], undefined);
    const out = await f.body!.check(json({ t: 0 }));
    assert.deepEqual(out, { kind: 'forward', body: Buffer.alloc(0) });
    refusal(await f.body!.check(json({ t: 'now' })), 'field-type', 400);
  });

  it('checks a create body against the host and the engine, forwards the policy’s JSON, creates its volumes labelled first', async () => {
    const created: unknown[] = [];
    const { g, seen } = gate(
      {
        'POST /volumes/create': (body) => {
          created.push(body);
          return { status: 201, body: { Name: 'data', Labels: (body as { Labels: object }).Labels } };
        },
      },
      { realpath: async (p) => (p === `${WS}/link` ? '/etc' : p) },
    );
    const f = forward(await g.head(head('POST', '/v1.41/containers/create?name=web', CREATE_HEADERS)));
    assert.equal(f.headers?.['content-type'], 'application/json');
    const out = await f.body!.check(json({ Image: 'a', HostConfig: { Binds: [`${WS}/src:/src`, 'data:/data'] } }));
    assert.equal(out.kind, 'forward');
    const sent = JSON.parse((out as { body: Buffer }).body.toString()) as {
      Labels: Record<string, string>;
      HostConfig: { Binds: string[] };
    };
    assert.equal(sent.Labels[LABELS.dockerOwner], OWNER);
    assert.deepEqual(sent.HostConfig.Binds, [`${WS}/src:/src`, 'data:/data']);
    assert.deepEqual(created, [{ Name: 'data', Driver: 'local', Labels: own }]);
    assert.ok(seen.indexOf('GET /volumes/data') < seen.indexOf('POST /volumes/create'), 'looked up, then created');
    refusal(await f.body!.check(json({ Image: 'a', HostConfig: { Binds: [`${WS}/link:/x`] } })), 'bind-source', 403);
    refusal(await f.body!.check(json({ Image: 'a', HostConfig: { Privileged: true } })), 'privileged', 403);
    refusal(await f.body!.check(Buffer.from('{"Image":"a","HostConfig":{"privilegeD":true}}')), 'unknown-field', 403);
  });

  it('refuses a volume someone else made between the lookup and the create', async () => {
    const { g } = gate({
      // The engine answers a taken name with the volume as it is (Docker, and Podman 4.3's compat API) …
      'POST /volumes/create': { status: 201, body: { Name: 'data', Labels: { [LABELS.dockerOwner]: 'someone' } } },
    });
    const f = forward(await g.head(head('POST', '/v1.41/containers/create', CREATE_HEADERS)));
    const r = refusal(await f.body!.check(json({ Image: 'a', HostConfig: { Binds: ['data:/data'] } })), 'not-owned', 403);
    assert.match(r.message, /made by someone else while this request was checked/);
    // … or, as some Podman releases do, with a conflict: then it is inspected.
    let inspected = 0;
    const podman = gate({
      'POST /volumes/create': { status: 409, body: { message: 'volume with name data already exists: volume already exists' } },
      'GET /volumes/data': () => (inspected++ === 0 ? { status: 404 } : { status: 200, body: { Name: 'data', Labels: {} } }),
    });
    const p = forward(await podman.g.head(head('POST', '/v1.41/containers/create', CREATE_HEADERS)));
    refusal(await p.body!.check(json({ Image: 'a', HostConfig: { Binds: ['data:/data'] } })), 'not-owned', 403);
  });

  it('re-resolves the binds before a start or restart', async () => {
    let now = `${WS}/data`;
    const { g } = gate(
      {
        'GET /containers/web/json': {
          status: 200,
          body: { Id: 'web0id', Config: { Labels: own }, Mounts: [{ Type: 'bind', Source: `${WS}/data`, Destination: '/d', RW: true }] },
        },
      },
      { realpath: async () => now },
    );
    forward(await g.head(head('POST', '/v1.41/containers/web/start')));
    now = '/etc';
    const r = refusal(await g.head(head('POST', '/v1.41/containers/web/restart')), 'bind-source', 403);
    assert.match(r.message, /now leads to \/etc/);
  });

  it('refuses (502) when a lookup fails or does not answer in time, quoting the engine’s text shortened', async () => {
    const long = `boom ${'x'.repeat(10_000)}\n\u0007secret-tail`;
    const { g } = gate(
      {
        'GET /containers/broken/json': { status: 500, body: { message: long } },
        'GET /containers/slow/json': () => 'hang',
      },
      { lookupMs: 150 },
    );
    const broken = refusal(await g.head(head('POST', '/v1.41/containers/broken/stop')), 'engine-lookup', 502);
    assert.ok(broken.message.length < ENGINE_TEXT_CHARS + 120, `${broken.message.length} characters`);
    assert.match(broken.message, /^The engine could not inspect the container broken \(boom x+…\); the request was not forwarded\.$/);
    const t0 = performance.now();
    const slow = refusal(await g.head(head('POST', '/v1.41/containers/slow/stop')), 'engine-lookup', 502);
    assert.match(slow.message, /no answer within 150 ms/);
    assert.ok(performance.now() - t0 < 2_000);
    const hanging = gate({}, { lookupMs: 150, realpath: () => new Promise(() => undefined) });
    const f = forward(await hanging.g.head(head('POST', '/v1.41/containers/create', CREATE_HEADERS)));
    refusal(await f.body!.check(json({ Image: 'a', HostConfig: { Binds: [`${WS}/src:/s`] } })), 'engine-lookup', 502);
  });

  it('under an egress policy, runs nothing in a container of its own with a network: looks its mode up, and one step further for a shared one (issue 38, item 7)', async () => {
    const scope: EndpointScope = { ...SCOPE, egress: { mode: 'allowlist', registryAllowed: () => false } };
    const anchor = 'a'.repeat(64);
    const bridged = 'b'.repeat(64);
    const { g, seen } = gate(
      {
        'GET /containers/quiet/json': {
          status: 200,
          body: { Id: 'quiet0id', Config: { Labels: own }, HostConfig: { NetworkMode: 'none' } },
        },
        'GET /containers/old/json': {
          status: 200,
          body: { Id: 'old0id', Config: { Labels: own }, HostConfig: { NetworkMode: 'default' } },
        },
        'GET /containers/side/json': {
          status: 200,
          body: { Id: 'side0id', Config: { Labels: own }, HostConfig: { NetworkMode: `container:${anchor}` } },
        },
        'GET /containers/leak/json': {
          status: 200,
          body: { Id: 'leak0id', Config: { Labels: own }, HostConfig: { NetworkMode: `container:${bridged}` } },
        },
        [`GET /containers/${anchor}/json`]: {
          status: 200,
          body: { Id: anchor, Config: { Labels: own }, HostConfig: { NetworkMode: 'none' } },
        },
        [`GET /containers/${bridged}/json`]: {
          status: 200,
          body: { Id: bridged, Config: { Labels: own }, HostConfig: { NetworkMode: 'bridge' } },
        },
        'GET /exec/e1/json': { status: 200, body: { ID: 'oldexec', ContainerID: 'old' } },
      },
      { scope },
    );
    const exec = (c: string) => g.head(head('POST', `/v1.41/containers/${c}/exec`, CREATE_HEADERS));
    for (const c of ['old', 'leak']) {
      const r = refusal(await exec(c), 'egress', 403);
      assert.match(r.message, new RegExp(`the container ${c} has one .*: an exec in it would reach the network outside the policy`));
    }
    refusal(await g.head(head('POST', '/v1.41/containers/old/start')), 'egress', 403);
    refusal(await g.head(head('POST', '/v1.41/exec/e1/start', CREATE_HEADERS)), 'egress', 403);
    forward(await exec('quiet'));
    forward(await exec('side'));
    assert.ok(seen.includes(`GET /containers/${anchor}/json`), 'the shared container was looked up');
    // Without a policy nothing is asked beyond ownership.
    const open = gate({
      'GET /containers/old/json': { status: 200, body: { Id: 'old0id', Config: { Labels: own }, HostConfig: { NetworkMode: 'default' } } },
    });
    forward(await open.g.head(head('POST', '/v1.41/containers/old/exec', CREATE_HEADERS)));
  });

  it('under an egress policy, refuses a connect even to an internal network, naming it internal only when the engine’s inspect says Internal', async () => {
    const scope: EndpointScope = { ...SCOPE, egress: { mode: 'allowlist', registryAllowed: () => false } };
    const { g, seen, logged } = gate(
      {
        'GET /networks/sealed': { status: 200, body: { Id: 'sealed0id', Name: 'sealed', Internal: true, Labels: own } },
        'GET /networks/open': { status: 200, body: { Id: 'open0id', Name: 'open', Internal: false, Labels: own } },
        'GET /networks/theirs': { status: 200, body: { Id: 'theirs0id', Name: 'theirs', Internal: true, Labels: {} } },
        'GET /containers/web/json': { status: 200, body: { Id: 'web0id', Config: { Labels: own }, HostConfig: { NetworkMode: 'none' } } },
      },
      { scope },
    );
    const JOIN =
      /^This workspace's egress policy \(allowlist\) lets the containers it starts join no network, internal ones included, and this connect names /;
    const sealed = refusal(await g.head(head('POST', '/v1.41/networks/sealed/connect', CREATE_HEADERS)), 'egress', 403);
    assert.ok(seen.includes('GET /networks/sealed'), 'the engine was asked whether it is internal');
    assert.match(sealed.message, JOIN);
    assert.match(
      sealed.message,
      /names the internal network sealed \(a container on an internal network still reaches this host at that network’s gateway\): run them with --network none, or with --network container:<[^>]+> to share its loopback\. \(rule egress\)$/,
    );
    assert.doesNotMatch(sealed.message, /--internal|raw-socket/);
    const open = refusal(await g.head(head('POST', '/v1.41/networks/open/connect', CREATE_HEADERS)), 'egress', 403);
    assert.match(open.message, JOIN);
    assert.match(open.message, /this connect names the network open: /, 'a network the engine says is not internal is not called internal');
    refusal(await g.head(head('POST', '/v1.41/networks/theirs/connect', CREATE_HEADERS)), 'not-owned', 404);
    assert.ok(
      logged.some((l) => l.rule === 'egress' && /internal network sealed/.test(l.message)),
      'the refusal is logged with its sentence',
    );
    assert.ok(!seen.some((k) => k.startsWith('POST /networks')), 'no connect reached the engine');

    const f = forward(await g.head(head('POST', '/v1.41/containers/create', CREATE_HEADERS)));
    const passes = async (body: unknown) => {
      const ok = await f.body!.check(json(body));
      assert.equal(ok.kind, 'forward', JSON.stringify(ok));
    };
    await passes({ Image: 'a', HostConfig: { NetworkMode: 'none' } });
    await passes({ Image: 'a', HostConfig: { NetworkMode: 'container:web' } });
    for (const NetworkMode of ['sealed', 'open', 'default']) {
      const r = refusal(await f.body!.check(json({ Image: 'a', HostConfig: { NetworkMode } })), 'egress', 403);
      assert.match(r.message, /no network of their own, internal ones included/, NetworkMode);
    }
    refusal(
      await f.body!.check(json({ Image: 'a', HostConfig: { NetworkMode: 'none' }, NetworkingConfig: { EndpointsConfig: { sealed: {} } } })),
      'egress',
      403,
    );
    const nets = forward(await g.head(head('POST', '/v1.41/networks/create', CREATE_HEADERS)));
    const made = refusal(await nets.body!.check(json({ Name: 'x', Internal: true })), 'egress', 403);
    assert.match(made.message, /does not let it create networks, internal ones included/);
    refusal(await g.head(head('POST', '/v1.41/images/x/push')), 'egress', 403);
    refusal(await g.head(head('POST', '/v1.41/images/create?fromImage=evil.example%2Fx')), 'egress', 403);
    assert.ok(!seen.some((k) => k.startsWith('POST /images')), 'nothing of a refused pull or push reached the engine');
  });

  it('scrubs /info’s answer, and passes an error answer as it is', async () => {
    const { g } = gate({});
    const f = forward(await g.head(head('GET', '/v1.41/info')));
    const out = JSON.parse(
      f.response!.rewrite(200, json({ DockerRootDir: '/var/lib/docker', Containers: 40, Name: 'h' })).toString(),
    ) as Record<string, unknown>;
    assert.deepEqual([out.DockerRootDir, out.Containers, out.Name], ['', 0, 'h']);
    assert.deepEqual(f.response!.rewrite(500, json({ message: 'x' })), json({ message: 'x' }));
  });
  it('forwards every object by the id its check resolved: the path, a commit’s container, and the containers a body names', async () => {
    const { g, seen } = gate({
      'GET /containers/3f/json': { status: 200, body: { Id: 'aaaa3f', Image: 'sha256:img', Config: { Labels: own } } },
      'GET /images/sha256:img/json': { status: 200, body: { Id: 'sha256:img', Config: { Labels: {} } } },
      'GET /exec/e1/json': { status: 200, body: { ID: 'e1full', ContainerID: 'aaaa3f' } },
      'GET /containers/aaaa3f/json': { status: 200, body: { Id: 'aaaa3f', Config: { Labels: own } } },
      'GET /networks/net': { status: 200, body: { Id: 'net0id', Labels: own } },
    });
    assert.equal(
      forward(await g.head(head('POST', '/v1.41/containers/3f/kill?signal=KILL'))).target,
      '/v1.41/containers/aaaa3f/kill?signal=KILL',
    );
    assert.equal(forward(await g.head(head('POST', '/v1.41/exec/e1/start'))).target, '/v1.41/exec/e1full/start');
    assert.equal(
      forward(await g.head(head('POST', '/v1.41/commit?container=3f&repo=localhost/toolbox-proj-1a2b3c4d/snap'))).target,
      '/v1.41/commit?container=aaaa3f&repo=localhost%2Ftoolbox-proj-1a2b3c4d%2Fsnap' +
        `&changes=LABEL+${LABELS.dockerOwner}%3D&changes=LABEL+${LABELS.dockerImageOwner}%3D${OWNER}`,
    );
    assert.equal(
      forward(await g.head(head('POST', '/v1.41/networks/net/disconnect', CREATE_HEADERS))).target,
      '/v1.41/networks/net0id/disconnect',
    );
    const connect = forward(await g.head(head('POST', '/v1.41/networks/net/connect', CREATE_HEADERS)));
    const body = await connect.body!.check(json({ Container: '3f', EndpointConfig: { Links: ['3f'] } }));
    assert.deepEqual(JSON.parse((body as { body: Buffer }).body.toString()), {
      Container: 'aaaa3f',
      EndpointConfig: { Links: ['aaaa3f:3f'] },
    });
    const create = forward(await g.head(head('POST', '/v1.41/containers/create', CREATE_HEADERS)));
    const made = await create.body!.check(
      json({ Image: 'a', HostConfig: { NetworkMode: 'container:3f', PidMode: 'container:3f', Links: ['/3f:db'] } }),
    );
    const sent = JSON.parse((made as { body: Buffer }).body.toString()) as { HostConfig: Record<string, unknown> };
    assert.equal(sent.HostConfig.NetworkMode, 'container:aaaa3f');
    assert.equal(sent.HostConfig.PidMode, 'container:aaaa3f');
    assert.deepEqual(sent.HostConfig.Links, ['aaaa3f:db']);
    assert.ok(seen.includes('GET /images/sha256:img/json'), 'the container’s image was looked at');
  });

  it('takes no container for its own whose owner label came from its image, nor makes one from such an image', async () => {
    const { g } = gate({
      // The host ran this from an image the workspace built: the engine copied the image's labels.
      'GET /containers/hosts/json': { status: 200, body: { Id: 'bbbb', Image: 'sha256:built', Config: { Labels: own } } },
      'GET /images/sha256:built/json': { status: 200, body: { Id: 'sha256:built', Config: { Labels: own } } },
      'GET /images/built:1/json': { status: 200, body: { Id: 'sha256:built', RepoTags: ['built:1'], Config: { Labels: own } } },
    });
    refusal(await g.head(head('POST', '/v1.41/containers/hosts/exec', CREATE_HEADERS)), 'not-owned', 404);
    const create = forward(await g.head(head('POST', '/v1.41/containers/create', CREATE_HEADERS)));
    refusal(await create.body!.check(json({ Image: 'built:1' })), 'owner-image', 403);
  });

  it('removes an image by a name in its namespace, or by id only when every name it has is there', async () => {
    const img = (tags: string[], labels: Record<string, string>) => ({
      status: 200,
      body: { Id: 'sha256:i', RepoTags: tags, Config: { Labels: labels } },
    });
    const mine = { [LABELS.dockerImageOwner]: OWNER };
    const { g } = gate({
      'GET /images/localhost/toolbox-proj-1a2b3c4d/app:1/json': img(['localhost/toolbox-proj-1a2b3c4d/app:1', 'debian:12'], {}),
      'GET /images/sha256:mine/json': img(['localhost/toolbox-proj-1a2b3c4d/app:1'], mine),
      'GET /images/sha256:dangling/json': img([], mine),
      'GET /images/sha256:shared/json': img(['localhost/toolbox-proj-1a2b3c4d/app:1', 'debian:12'], mine),
      'GET /images/debian:12/json': img(['debian:12'], mine),
    });
    forward(await g.head(head('DELETE', '/v1.41/images/localhost/toolbox-proj-1a2b3c4d/app:1')));
    forward(await g.head(head('DELETE', '/v1.41/images/sha256:mine')));
    forward(await g.head(head('DELETE', '/v1.41/images/sha256:dangling')));
    refusal(await g.head(head('DELETE', '/v1.41/images/sha256:shared?force=1')), 'not-owned', 404);
    refusal(await g.head(head('DELETE', '/v1.41/images/debian:12')), 'not-owned', 404);
  });
});
