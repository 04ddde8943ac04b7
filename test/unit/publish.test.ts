/**
 * The `-p/--publish` parser against upstream's. Upstream parses each spec with go-connections'
 * nat.ParsePortSpec (nat/nat.go @04658561fd86384204275413d49582bb459468e1: splitParts,
 * SplitProtoPort, validateProto, ParsePortSpec; port numbers 0–65535 as nat/parse.go
 * @0c490f1a3fe710f738b11b24a458df7aa033d7e8 parsePortNumber), wraps a refusal as
 * `invalid --publish %q: %w` and defaults the host IP to 127.0.0.1
 * (filippolmt/toolbox internal/sessionplan/plan.go @02e655458a84dbda696122cf81bfc843aa3ceff1
 * parsePublishSpecs, natMappingToBinding, defaultHostIP). The expected values below are what
 * that code gives for each spec, worked through by hand.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { describePortSpec, parsePublishSpecs, splitPublishList } from '../../extension/src/plan/publish';
import { planSession } from '../../extension/src/plan/session';
import { DEFAULT_CONFIG } from '../../extension/src/config/model';
import { objectNames } from '../../extension/src/contract/objects';
import type { PortSpec } from '../../extension/src/contract/types';
import { itEach } from '../support/cases';

const lo = '127.0.0.1';
const tcp = (containerPort: number, hostPort = '', hostIp = lo): PortSpec => ({ hostIp, hostPort, containerPort, protocol: 'tcp' });

describe('parsePublishSpecs: the specs upstream accepts, and what it publishes', () => {
  const accepted: Array<[string, PortSpec[]]> = [
    // Upstream's docs say "forward host port 7171 to the same port", but nat leaves HostPort empty: Docker picks a free one.
    ['7171', [tcp(7171)]],
    ['7171:7171', [tcp(7171, '7171')]],
    ['127.0.0.1:9229:9229', [tcp(9229, '9229')]],
    ['0.0.0.0:8000:8000', [tcp(8000, '8000', '0.0.0.0')]],
    ['5353/udp', [{ hostIp: lo, hostPort: '', containerPort: 5353, protocol: 'udp' }]],
    ['53:53/UDP', [{ hostIp: lo, hostPort: '53', containerPort: 53, protocol: 'udp' }]],
    ['80/sctp', [{ hostIp: lo, hostPort: '', containerPort: 80, protocol: 'sctp' }]],
    ['80/', [tcp(80)]],
    ['8877-8879:8877-8879', [tcp(8877, '8877'), tcp(8878, '8878'), tcp(8879, '8879')]],
    // A host range with one container port: the range Docker picks the host port from.
    ['8000-8010:80', [tcp(80, '8000-8010')]],
    ['8080-8081', [tcp(8080), tcp(8081)]],
    ['80-80:90', [tcp(90, '80')]],
    ['[::1]:8080:80', [tcp(80, '8080', '::1')]],
    ['::1:8080:80', [tcp(80, '8080', '::1')]],
    // Go's strconv.ParseInt takes a sign and leading zeros.
    ['+8080:080', [tcp(80, '8080')]],
    ['0', [tcp(0)]],
  ];
  for (const [spec, want] of accepted) {
    it(`accepts ${JSON.stringify(spec)}`, () => assert.deepEqual(parsePublishSpecs([spec]), want));
  }
});

describe('parsePublishSpecs: the specs upstream refuses, with its message', () => {
  itEach(
    (spec, reason) => `refuses ${JSON.stringify(spec)}: ${reason}`,
    (spec, reason) => {
      assert.throws(() => parsePublishSpecs([spec]), { message: `invalid --publish ${JSON.stringify(spec)}: ${reason}` });
    },
    [
      ['', 'no port specified: <empty>'],
      ['8080:', 'no port specified: 8080:<empty>'],
      ['not-a-port', 'invalid containerPort: not-a-port'],
      ['80/http', 'invalid proto: http'],
      ['80/tcp/x', 'invalid proto: tcp/x'],
      ['localhost:8080:80', 'invalid IP address: localhost'],
      ['1.2.3.256:80:80', 'invalid IP address: 1.2.3.256'],
      ['01.2.3.4:80:80', 'invalid IP address: 01.2.3.4'],
      ['fe80::1%eth0:80:80', 'invalid IP address: fe80::1%eth0'],
      ['[::1:80:80', "invalid IP address [::1: address [::1:: missing ']' in address"],
      ['[::1]x:80:80', 'invalid IP address [::1]x: address [::1]x:: missing port in address'],
      ['70000', 'invalid containerPort: 70000'],
      ['70000:80', 'invalid hostPort: 70000'],
      ['1.2.3.4:80', 'invalid hostPort: 1.2.3.4'],
      ['90-80', 'invalid containerPort: 90-80'],
      ['-1', 'invalid containerPort: -1'],
      ['8000-8001:80-82', 'invalid ranges specified for container and host Ports: 80-82 and 8000-8001'],
    ],
  );

  it('refuses the whole list at its first bad spec, naming that spec', () => {
    assert.throws(() => parsePublishSpecs(['8080:8080', 'oops', '70000']), {
      message: 'invalid --publish "oops": invalid containerPort: oops',
    });
  });
});

describe('the input box: a list, and what each mapping means', () => {
  it('splits on commas and white space, dropping empty items', () => {
    assert.deepEqual(splitPublishList(' 8080, 127.0.0.1:9229:9229\n5353/udp,,  3000:3000 '), [
      '8080',
      '127.0.0.1:9229:9229',
      '5353/udp',
      '3000:3000',
    ]);
    assert.deepEqual(splitPublishList('  , '), []);
  });

  it('describes a mapping the way the tree shows it', () => {
    assert.equal(describePortSpec(tcp(80, '8080')), '127.0.0.1:8080 → 80/tcp');
    assert.equal(describePortSpec(tcp(80)), '127.0.0.1:any free port → 80/tcp');
    assert.equal(describePortSpec(tcp(80, '8080', '::1')), '[::1]:8080 → 80/tcp');
  });
});

describe('planSession with published ports (upstream TestPlanComposesPorts)', () => {
  const request = (ports: PortSpec[]) => ({
    workspace: '/home/u/proj',
    config: { ...DEFAULT_CONFIG },
    peer: false,
    image: 'toolbox-runtime:test',
    names: objectNames(),
    ports,
  });
  const host = { uid: 1000, gid: 1000, home: '/home/u', platform: 'linux' as const, pathExists: () => false };

  it('exposes every container port and binds it on loopback unless the spec names an IP', () => {
    const { plan } = planSession(request(parsePublishSpecs(['7171', '3000:3000', '8877-8878:8877-8878', '[::1]:9229:9229'])), host);
    assert.deepEqual(plan.create.ExposedPorts, { '7171/tcp': {}, '3000/tcp': {}, '8877/tcp': {}, '8878/tcp': {}, '9229/tcp': {} });
    assert.deepEqual(plan.create.HostConfig.PortBindings, {
      '7171/tcp': [{ HostIp: lo, HostPort: '' }],
      '3000/tcp': [{ HostIp: lo, HostPort: '3000' }],
      '8877/tcp': [{ HostIp: lo, HostPort: '8877' }],
      '8878/tcp': [{ HostIp: lo, HostPort: '8878' }],
      '9229/tcp': [{ HostIp: '::1', HostPort: '9229' }],
    });
  });

  it('does not change the container name: ports are fixed at create, a reattach reports the missing ones', () => {
    const withPorts = planSession(request(parsePublishSpecs(['8080:8080'])), host).plan;
    const without = planSession(request([]), host).plan;
    assert.equal(withPorts.name, without.name);
    assert.equal(without.create.ExposedPorts, undefined);
    assert.equal(without.create.HostConfig.PortBindings, undefined);
  });
});
