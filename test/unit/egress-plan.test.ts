/**
 * The egress policy's planning (issue 30, docs/decisions/0056-egress-through-a-host-proxy.md): a
 * folder's mode and rules from its settings and config (plan/egressPolicy.ts), the container a
 * policy gives (plan/session.ts), and drift between the two (plan/drift.ts). Pure: no engine.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { DEFAULT_CONFIG } from '../../extension/src/config/model';
import { EGRESS, EGRESS_PROXY_ENV } from '../../extension/src/contract/egress';
import { ENV } from '../../extension/src/contract/shims';
import { LABELS } from '../../extension/src/contract/upstream';
import { objectNames } from '../../extension/src/contract/objects';
import { driftAgainstPlan, egressEnforcedOf, openDriftNotice } from '../../extension/src/plan/drift';
import { egressModeOf, egressPolicyOf, folderEgress, strictestMode } from '../../extension/src/plan/egressPolicy';
import { planSession } from '../../extension/src/plan/session';
import type { HostFacts } from '../../extension/src/contract/types';
import type { SessionRequest } from '../../extension/src/plan/types';

const names = objectNames();
const host: HostFacts = { uid: 1000, gid: 1000, home: '/home/u', platform: 'linux', pathExists: () => true };

function request(over: Partial<SessionRequest> = {}): SessionRequest {
  return {
    workspace: '/home/u/proj',
    config: { ...DEFAULT_CONFIG },
    peer: true,
    bridge: { stateDir: '/home/u/.toolbox/toolbox/bridge', runDir: '/home/u/.toolbox/toolbox/bridge/run' },
    image: 'toolbox-runtime:test',
    names,
    ...over,
  };
}

describe('the folder’s mode: the strictest of every place that names one', () => {
  it('orders open < ask < allowlist and defaults to open', () => {
    assert.equal(strictestMode(), 'open');
    assert.equal(strictestMode('ask', undefined, 'open'), 'ask');
    assert.equal(strictestMode('allowlist', 'ask'), 'allowlist');
  });

  it('a project file or a folder setting tightens the user’s mode and never loosens it', () => {
    assert.equal(egressModeOf({ userMode: 'allowlist', config: { mode: 'open' } }), 'allowlist');
    assert.equal(egressModeOf({ userMode: 'open', projectSettingMode: 'ask' }), 'ask');
    assert.equal(egressModeOf({ folder: { mode: 'ask', allow: [] }, config: { mode: 'allowlist' } }), 'allowlist');
    assert.equal(egressModeOf({}), 'open');
  });
});

describe('the folder’s rules', () => {
  it('the built-in list and the git remotes unless egress.defaults is false, then the config’s and the folder’s own', () => {
    const { policy, problems } = egressPolicyOf({
      config: { mode: 'allowlist', allow: ['api.example.com:8443'] },
      folder: { allow: ['*.corp.example'] },
      remoteHosts: ['git.example.org'],
      answered: ['10.0.0.5:5432'],
    });
    assert.deepEqual(problems, []);
    assert.equal(policy.mode, 'allowlist');
    const sources = (s: string) => policy.rules.filter((r) => r.source === s).map((r) => `${r.host}${r.port ? `:${r.port}` : ''}`);
    assert.ok(sources('builtin').includes('api.anthropic.com:443'), 'the agents’ APIs');
    assert.deepEqual(sources('remote'), ['git.example.org:443', 'git.example.org:22']);
    assert.deepEqual(sources('user'), ['api.example.com:8443']);
    assert.deepEqual(sources('folder'), ['*.corp.example', '10.0.0.5:5432']);

    const bare = egressPolicyOf({ config: { defaults: false, allow: ['a.example'] }, remoteHosts: ['git.example.org'] }).policy;
    assert.deepEqual(
      bare.rules.map((r) => r.host),
      ['a.example'],
      'no built-in list, no remotes',
    );
  });

  it('an entry that is not a rule is left out, and said', () => {
    const { policy, problems } = egressPolicyOf({ config: { defaults: false, allow: ['ok.example', 'bad host', '127.1'] } });
    assert.deepEqual(
      policy.rules.map((r) => r.host),
      ['ok.example'],
    );
    assert.equal(problems.length, 2);
    assert.match(problems[0]!, /^egress\.allow: "bad host": /);
  });
});

describe('toolbox.egressForFolder as stored', () => {
  it('reads the folder’s entry, ignoring anything malformed', () => {
    assert.deepEqual(folderEgress({ '/p': { mode: 'ask', allow: ['a.example', 3] } }, '/p'), { mode: 'ask', allow: ['a.example'] });
    assert.deepEqual(folderEgress({ '/p': { mode: 'wide-open' } }, '/p'), { allow: [] });
    assert.equal(folderEgress({ '/p': [] }, '/p'), undefined);
    assert.equal(folderEgress('nope', '/p'), undefined);
    assert.equal(folderEgress({ '/other': { mode: 'ask' } }, '/p'), undefined);
  });
});

describe('the container a policy gives (plan/session.ts)', () => {
  const dir = '/run/user/1000/toolbox/egress-abcd1234';

  it('no network but loopback, the proxy’s directory read-only, the proxy variables and the label', () => {
    const { plan } = planSession(request({ egress: dir }), host);
    const hc = plan.create.HostConfig;
    assert.equal(hc.NetworkMode, 'none');
    assert.deepEqual(hc.ExtraHosts, [], 'no names of the host in a container without a network');
    assert.ok(hc.Binds.includes(`${dir}:${EGRESS.containerDir}:ro`), hc.Binds.join('\n'));
    const env = plan.create.Env;
    assert.ok(env.includes(`${ENV.egressSocket}=${EGRESS.containerSocket}`));
    for (const k of EGRESS_PROXY_ENV.proxy) assert.ok(env.includes(`${k}=http://127.0.0.1:${EGRESS.proxyPort}`), k);
    for (const k of EGRESS_PROXY_ENV.noProxy) assert.ok(env.includes(`${k}=localhost,127.0.0.1,::1`), k);
    assert.ok(env.includes('NODE_USE_ENV_PROXY=1'));
    assert.ok(!env.some((e) => e.startsWith(`${ENV.testcontainersHostOverride}=`)), 'no host name to reach children by');
    assert.equal(plan.create.Labels[LABELS.egress], EGRESS.enforcedLabel);
    assert.equal(hc.PidMode, `container:${names.anchor}`, 'peer messaging still joins the anchor');
  });

  it('publishes nothing through the engine: the ports go in a label for the host to relay', () => {
    const ports = [{ hostPort: '8080', containerPort: 80 }];
    const { plan } = planSession(request({ egress: dir, ports }), host);
    assert.equal(plan.create.HostConfig.PortBindings, undefined);
    assert.equal(plan.create.ExposedPorts, undefined);
    assert.deepEqual(JSON.parse(plan.create.Labels[LABELS.egressPorts]!), ports);
  });

  it('open: the engine’s network, as before', () => {
    const { plan } = planSession(request({ ports: [{ hostPort: '8080', containerPort: 80 }] }), host);
    assert.equal(plan.create.HostConfig.NetworkMode, undefined);
    assert.ok(plan.create.HostConfig.PortBindings);
    assert.equal(plan.create.Labels[LABELS.egress], undefined);
    assert.ok(!plan.create.Env.some((e) => e.startsWith('HTTPS_PROXY=')));
  });
});

describe('drift between the folder’s policy and the container', () => {
  const enforced = planSession(request({ egress: '/d' }), host).plan;
  const open = planSession(request(), host).plan;
  const inspected = (labels: Record<string, string>) => ({
    HostConfig: { PidMode: `container:${names.anchor}`, SecurityOpt: open.create.HostConfig.SecurityOpt },
    Mounts: [{ Type: 'volume', Name: names.socketVolume, Destination: '/tmp/cc-socks' }],
    Config: { Labels: labels },
  });

  it('a container with the engine’s network where the folder asks for a policy is drift, said plainly', () => {
    const drift = driftAgainstPlan(inspected({}), enforced, names, undefined).filter((d) => d.kind === 'egress');
    assert.equal(drift.length, 1);
    assert.match(
      openDriftNotice(drift[0]!, names),
      /has the engine's network, although this folder's egress policy .* can connect anywhere\. To fix it, stop the container/,
    );
  });

  it('a policy container where the folder is open now is drift too; matching ones are not', () => {
    const label = { [LABELS.egress]: EGRESS.enforcedLabel };
    assert.equal(egressEnforcedOf(label), true);
    assert.equal(egressEnforcedOf({ [LABELS.egress]: 'yes' }), false);
    assert.deepEqual(
      driftAgainstPlan(inspected(label), open, names, undefined).map((d) => d.kind),
      ['egress'],
    );
    assert.deepEqual(
      driftAgainstPlan(inspected(label), enforced, names, undefined).filter((d) => d.kind === 'egress'),
      [],
    );
    assert.deepEqual(
      driftAgainstPlan(inspected({}), open, names, undefined).filter((d) => d.kind === 'egress'),
      [],
    );
  });
});
