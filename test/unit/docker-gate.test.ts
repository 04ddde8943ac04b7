/**
 * The Docker endpoint's gate (engine/dockerGate.ts) over a stand-in engine: how it maps the
 * policy's answers to the endpoint's, what it looks up and how (an exec by its container, a 404 as
 * missing), and what it does when the engine fails it: a lookup that does not answer in time, an
 * error text of any length, a volume someone else makes between the lookup and the create. The
 * real engine and the docker CLI are test/engine/docker-endpoint-policy.test.ts's.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type Dockerode from 'dockerode';
import { LABELS } from '../../extension/src/contract/constants';
import type { GateForward, GateHead, GateRefusal } from '../../extension/src/engine/dockerEndpoint';
import { ENGINE_TEXT_CHARS, policyGate, type PolicyGateOptions } from '../../extension/src/engine/dockerGate';
import type { EndpointScope } from '../../extension/src/plan/dockerApi';

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

describe('the Docker endpoint’s gate (engine/dockerGate.ts)', () => {
  it('maps a policy refusal to the endpoint’s, with its status, rule and sentence, and logs it', async () => {
    const { g, logged } = gate({});
    const r = refusal(await g.head(head('POST', '/v1.41/swarm/init')), 'swarm', 403);
    assert.match(r.message, /\(rule swarm\)/);
    assert.deepEqual(Object.keys(r).sort(), ['kind', 'message', 'rule', 'status']);
    assert.equal(logged[0]?.rule, 'swarm');
    refusal(await g.head(head('GET', '/v1.12/containers/json')), 'api-version', 400);
  });

  it('forwards the policy’s target and headers, upgrade for a hijack', async () => {
    const { g } = gate({ 'GET /containers/web/json': { status: 200, body: { Config: { Labels: own } } } });
    const list = forward(await g.head(head('GET', '/v1.41/containers/json?all=1', { 'user-agent': 'Docker-Client/x', host: 'docker' })));
    assert.match(list.target, /^\/v1\.41\/containers\/json\?all=1&filters=/);
    assert.deepEqual(list.headers, { 'user-agent': 'Docker-Client/x' });
    assert.equal(list.upgrade, false);
    const attach = forward(await g.head(head('POST', '/v1.41/containers/web/attach?stream=1', { connection: 'Upgrade', upgrade: 'tcp' })));
    assert.equal(attach.upgrade, true);
  });

  it('answers another’s and a missing object alike (404); an exec is its container’s', async () => {
    const { g, seen } = gate({
      'GET /containers/web/json': { status: 200, body: { Config: { Labels: own } } },
      'GET /containers/victim/json': { status: 200, body: { Config: { Labels: { [LABELS.dockerOwner]: 'someone' } } } },
      'GET /exec/e1/json': { status: 200, body: { ContainerID: 'web' } },
      'GET /exec/e2/json': { status: 200, body: { ContainerID: 'victim' } },
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
    const { g } = gate({ 'GET /containers/web/json': { status: 200, body: { Config: { Labels: own } } } });
    const f = forward(
      await g.head(head('POST', '/v1.41/containers/web/stop?t=0', { 'content-type': 'application/json', 'content-length': '7' })),
    );
    assert.equal(f.target, '/v1.41/containers/web/stop?t=0');
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
          body: { Config: { Labels: own }, Mounts: [{ Type: 'bind', Source: `${WS}/data`, Destination: '/d', RW: true }] },
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
        'GET /containers/quiet/json': { status: 200, body: { Config: { Labels: own }, HostConfig: { NetworkMode: 'none' } } },
        'GET /containers/old/json': { status: 200, body: { Config: { Labels: own }, HostConfig: { NetworkMode: 'default' } } },
        'GET /containers/side/json': { status: 200, body: { Config: { Labels: own }, HostConfig: { NetworkMode: `container:${anchor}` } } },
        'GET /containers/leak/json': {
          status: 200,
          body: { Config: { Labels: own }, HostConfig: { NetworkMode: `container:${bridged}` } },
        },
        [`GET /containers/${anchor}/json`]: { status: 200, body: { Config: { Labels: own }, HostConfig: { NetworkMode: 'none' } } },
        [`GET /containers/${bridged}/json`]: { status: 200, body: { Config: { Labels: own }, HostConfig: { NetworkMode: 'bridge' } } },
        'GET /exec/e1/json': { status: 200, body: { ContainerID: 'old' } },
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
      'GET /containers/old/json': { status: 200, body: { Config: { Labels: own }, HostConfig: { NetworkMode: 'default' } } },
    });
    forward(await open.g.head(head('POST', '/v1.41/containers/old/exec', CREATE_HEADERS)));
  });

  it('under an egress policy, refuses a connect even to an internal network, naming it internal only when the engine’s inspect says Internal', async () => {
    const scope: EndpointScope = { ...SCOPE, egress: { mode: 'allowlist', registryAllowed: () => false } };
    const { g, seen, logged } = gate(
      {
        'GET /networks/sealed': { status: 200, body: { Name: 'sealed', Internal: true, Labels: own } },
        'GET /networks/open': { status: 200, body: { Name: 'open', Internal: false, Labels: own } },
        'GET /networks/theirs': { status: 200, body: { Name: 'theirs', Internal: true, Labels: {} } },
        'GET /containers/web/json': { status: 200, body: { Config: { Labels: own }, HostConfig: { NetworkMode: 'none' } } },
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
});
