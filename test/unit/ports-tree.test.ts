/** Issue 15, item 12: published ports in the Workspaces view, each with Open in Browser. */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { publishedPorts, publishedPortUrl, PUBLISHED_PORTS_SHOWN } from '../../extension/src/plan/publish';
import { portItem } from '../../extension/src/ui/views/treeItems';
import { workspacesNodes } from '../../extension/src/ui/views/treeNodes';
import type { ContainerSummary } from '../../extension/src/ui/views/model';
import { viewState, containerSummary } from '../support/summary';

describe('publishedPorts: what a container publishes, from inspect', () => {
  it('reads NetworkSettings.Ports (the host port Docker picked included), one row for 0.0.0.0 and ::', () => {
    const running = {
      '8080/tcp': [{ HostIp: '127.0.0.1', HostPort: '8080' }],
      '7171/tcp': [{ HostIp: '127.0.0.1', HostPort: '32768' }],
      '3000/tcp': [
        { HostIp: '0.0.0.0', HostPort: '3000' },
        { HostIp: '::', HostPort: '3000' },
      ],
      '5353/udp': [{ HostIp: '127.0.0.1', HostPort: '5353' }],
      '9000/tcp': null, // exposed, not published
    };
    assert.deepEqual(publishedPorts(running, { '8080/tcp': [{ HostIp: '127.0.0.1', HostPort: '8080' }] }), [
      { containerPort: 3000, protocol: 'tcp', hostIp: '0.0.0.0', hostPort: 3000 },
      { containerPort: 5353, protocol: 'udp', hostIp: '127.0.0.1', hostPort: 5353 },
      { containerPort: 7171, protocol: 'tcp', hostIp: '127.0.0.1', hostPort: 32768 },
      { containerPort: 8080, protocol: 'tcp', hostIp: '127.0.0.1', hostPort: 8080 },
    ]);
  });

  it('falls back to HostConfig.PortBindings for a stopped container, skipping host ports Docker has not picked yet', () => {
    const bindings = { '8080/tcp': [{ HostIp: '127.0.0.1', HostPort: '8080' }], '7171/tcp': [{ HostIp: '127.0.0.1', HostPort: '' }] };
    assert.deepEqual(publishedPorts(undefined, bindings), [{ containerPort: 8080, protocol: 'tcp', hostIp: '127.0.0.1', hostPort: 8080 }]);
    assert.deepEqual(publishedPorts({}, bindings), [{ containerPort: 8080, protocol: 'tcp', hostIp: '127.0.0.1', hostPort: 8080 }]);
    assert.deepEqual(publishedPorts(undefined, undefined), []);
  });

  it('skips what the engine should never send, and bounds the list', () => {
    const odd = {
      'x/tcp': [{ HostIp: '127.0.0.1', HostPort: '1' }],
      '80/icmp': [{ HostIp: '127.0.0.1', HostPort: '1' }],
      '99999/tcp': [{ HostIp: '127.0.0.1', HostPort: '1' }],
      '81/tcp': [{ HostIp: 'evil.example', HostPort: '81' }],
      '82/tcp': [{ HostIp: '127.0.0.1', HostPort: '70000' }],
      '83/tcp': [{ HostIp: '127.0.0.1', HostPort: 83 }],
      '84/tcp': 'nope',
      '85/tcp': [null, 'x', { HostIp: '127.0.0.1\u001b[31m', HostPort: '85' }],
    };
    assert.deepEqual(publishedPorts(odd, undefined), []);
    const many = Object.fromEntries(
      Array.from({ length: 500 }, (_, i) => [`${1000 + i}/tcp`, [{ HostIp: '127.0.0.1', HostPort: String(20000 + i) }]]),
    );
    assert.equal(publishedPorts(many, undefined).length, PUBLISHED_PORTS_SHOWN);
  });

  it('opens loopback for a port on every interface or on loopback, else the address it is bound to', () => {
    assert.equal(publishedPortUrl({ hostIp: '127.0.0.1', hostPort: 8080 }), 'http://127.0.0.1:8080/');
    assert.equal(publishedPortUrl({ hostIp: '0.0.0.0', hostPort: 3000 }), 'http://127.0.0.1:3000/');
    assert.equal(publishedPortUrl({ hostIp: '::', hostPort: 3000 }), 'http://127.0.0.1:3000/');
    assert.equal(publishedPortUrl({ hostIp: '::1', hostPort: 9229 }), 'http://[::1]:9229/');
    assert.equal(publishedPortUrl({ hostIp: '192.168.1.5', hostPort: 80 }), 'http://192.168.1.5:80/');
  });
});

describe('port rows under their container', () => {
  const c: ContainerSummary = containerSummary({
    pidMode: '',
    peer: false,
    ports: [
      { containerPort: 3000, protocol: 'tcp', hostIp: '0.0.0.0', hostPort: 3000 },
      { containerPort: 5353, protocol: 'udp', hostIp: '127.0.0.1', hostPort: 5353 },
      { containerPort: 8080, protocol: 'tcp', hostIp: '127.0.0.1', hostPort: 8080 },
    ],
  });
  const state = viewState([c], { snapshot: { volume: { name: 'toolbox-cc-socks', exists: true } } });

  it('lists each port as "container port → where this host reaches it", first under the container', () => {
    const [node] = workspacesNodes(state, ['/src/app']);
    assert.deepEqual(
      node?.children?.map((n) => [n.label, n.description, n.contextValue]),
      [
        ['3000 → 0.0.0.0:3000', 'published on every interface', 'port.http'],
        ['5353/udp → 127.0.0.1:5353', 'published port', 'port.other'],
        ['8080 → 127.0.0.1:8080', 'published port', 'port.http'],
      ],
    );
    assert.deepEqual(node?.children?.[2]?.port, c.ports![2]);
    assert.equal(node?.children?.[2]?.container, c);
  });

  it('says who can reach it and what Open in Browser opens', () => {
    assert.equal(
      portItem(c.ports![2]!, c.name).tooltip,
      'Port 8080/tcp of toolbox-app-1234abcd is published on 127.0.0.1:8080 of this host.\nOnly this machine can reach it.\nOpen in Browser opens http://127.0.0.1:8080/.',
    );
    assert.match(portItem(c.ports![0]!, c.name).tooltip, /other machines on your network can reach it too/);
    assert.doesNotMatch(portItem(c.ports![1]!, c.name).tooltip, /Open in Browser/);
  });

  it('match the package.json menus: Open in Browser inline on TCP ports only, never in the palette', () => {
    const pkg = JSON.parse(readFileSync(join(__dirname, '../../../package.json'), 'utf8')) as {
      contributes: { menus: Record<string, Array<{ command: string; when: string; group?: string }>> };
    };
    const inline = pkg.contributes.menus['view/item/context']!.find(
      (m) => m.command === 'toolbox.openPortInBrowser' && m.group?.startsWith('inline'),
    );
    assert.ok(inline, 'an inline button');
    const re = new RegExp(/viewItem =~ \/(.*)\/$/.exec(inline.when)![1]!);
    assert.equal(re.test(portItem(c.ports![0]!, c.name).contextValue), true);
    assert.equal(re.test(portItem(c.ports![1]!, c.name).contextValue), false);
    assert.equal(re.test('container.running.nopeer.window'), false);
    assert.ok(pkg.contributes.menus.commandPalette!.some((m) => m.command === 'toolbox.openPortInBrowser' && m.when === 'false'));
    const withPorts = pkg.contributes.menus['view/item/context']!.find((m) => m.command === 'toolbox.openShellWithPorts');
    assert.ok(withPorts && new RegExp(/viewItem =~ \/(.*)\/$/.exec(withPorts.when)![1]!).test('container.running.nopeer.window'));
  });
});
