import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { objectNames } from '../../extension/src/contract/objects';
import { concernsOurObjects, type EngineEvent } from '../../extension/src/engine/events';
import { namedShellName, workspaceContainerName } from '../../extension/src/plan/naming';
import { stopAllConfirmation } from '../../extension/src/ui/containers/confirmations';
import { itEach } from '../support/cases';

// Issue 11, finding 4: ownership is the exact grammar of the names toolbox creates, not a prefix.
const names = objectNames();
const test = objectNames('tbxt1a2b3c');

describe('which containers are ours (name grammar)', () => {
  itEach(
    (name, kind) => `accepts ${name} as a ${kind} container`,
    (name, kind) => {
      assert.equal(names.kindOf(name), kind);
      assert.equal(names.isOurs(name), true);
    },
    [
      ['toolbox-app-0123abcd', 'workspace'],
      ['/toolbox-app-0123abcd', 'workspace'],
      ['toolbox-my-project-v2-deadbeef', 'workspace'],
      ['toolbox-root-00000000', 'workspace'],
      [`toolbox-${'a'.repeat(46)}-0123abcd`, 'workspace'],
      ['toolbox-named-0123abcd', 'workspace'], // a folder named "named"
      ['toolbox-named-infra', 'named'],
      ['toolbox-named-infra.peer', 'named'],
      ['toolbox-named-infra-work', 'named'],
      ['toolbox-named-infra-work.peer', 'named'],
      ['toolbox-named-deadbeef1', 'named'],
      ['toolbox-peer-anchor', 'anchor'],
      ['toolbox-cc-socks-init', 'init'],
    ],
  );

  const refused: Array<[string, string]> = [
    ['toolbox', 'the bare prefix (a hand-named container, or upstream legacy singleton)'],
    ['/toolbox', 'the bare prefix with the API slash'],
    ['toolbox-db-1', 'a Compose service container'],
    ['toolbox-web-2', 'a Compose service container'],
    ['toolbox_db_1', 'a Compose v1 container'],
    ['toolbox-app', 'no hash'],
    ['toolbox-app-0123abc', '7 hex digits'],
    ['toolbox-app-0123ABCD', 'uppercase hex'],
    ['toolbox-app-0123abcg', 'not hex'],
    ['toolbox--0123abcd', 'empty slug'],
    ['toolbox-app--0123abcd', 'double dash in the slug'],
    ['toolbox--app-0123abcd', 'slug starting with a dash'],
    ['toolbox-App-0123abcd', 'uppercase slug'],
    ['toolbox-app_x-0123abcd', 'underscore in the slug'],
    ['toolbox-app.x-0123abcd', 'dot in the slug'],
    [`toolbox-${'a'.repeat(47)}-0123abcd`, 'slug longer than 46'],
    ['toolbox-named-', 'named shell without a name'],
    ['toolbox-named', 'the named infix alone'],
    ['toolbox-named-Infra', 'uppercase named shell'],
    ['toolbox-named-infra.peer.peer', 'a doubled peer fold'],
    ['toolbox-named-infra.x', 'a dot other than .peer'],
    ['toolbox-named-infra-', 'trailing dash'],
    ['toolbox-peer-anchor-2', 'anchor with a suffix'],
    ['toolbox-cc-socks', 'the socket volume name is not a container of ours'],
    ['toolboxy-app-0123abcd', 'another prefix that starts like ours'],
    ['xtoolbox-app-0123abcd', 'prefix not at the start'],
    ['tbxt1a2b3c-app-0123abcd', "a test namespace's container, seen from production"],
    ['', 'empty'],
  ];
  for (const [name, why] of refused) {
    it(`refuses ${JSON.stringify(name)} (${why})`, () => {
      assert.equal(names.kindOf(name), undefined);
      assert.equal(names.isOurs(name), false);
    });
  }

  it('uses the namespace prefix: a test namespace owns its own names only', () => {
    assert.equal(test.isOurs('tbxt1a2b3c-app-0123abcd'), true);
    assert.equal(test.isOurs('tbxt1a2b3c-peer-anchor'), true);
    assert.equal(test.isOurs('toolbox-app-0123abcd'), false);
    assert.equal(test.isOurs('tbxt1a2b3c'), false);
  });

  it('escapes the prefix: a dot in it is not a wildcard', () => {
    const dotted = objectNames('tb.x');
    assert.equal(dotted.isOurs('tb.x-app-0123abcd'), true);
    assert.equal(dotted.isOurs('tbzx-app-0123abcd'), false);
  });

  it('accepts every name the planners produce (workspace, peer, profile, named, long, odd paths)', () => {
    const paths = [
      '/',
      '/home/u/proj',
      '/srv/My Project__V2',
      '/srv/İstanbul-café',
      '/srv/___',
      `/w/${'z'.repeat(200)}`,
      `/w/${'b'.repeat(45)}..c`,
    ];
    for (const ns of [names, test]) {
      for (const p of paths) {
        for (const peer of [true, false]) {
          for (const profile of [undefined, 'work']) {
            const name = workspaceContainerName(p, { peer, profile, share: ['gh'] }, ns);
            assert.equal(ns.kindOf(name), 'workspace', name);
          }
        }
      }
      for (const shell of ['infra', 'My Shell!', 'deadbeef1', 'x'.repeat(49), 'a.peer']) {
        for (const peer of [true, false]) {
          for (const profile of [undefined, 'Work Team']) {
            const name = namedShellName(shell, { peer, profile }, ns);
            assert.equal(ns.kindOf(name), 'named', name);
          }
        }
      }
      assert.equal(ns.kindOf(ns.anchor), 'anchor');
      assert.equal(ns.kindOf(ns.socketVolumeInit), 'init');
    }
  });
});

describe('which containers are ours (labels)', () => {
  const cases: Array<[Record<string, string>, boolean, string]> = [
    [{}, true, 'no labels'],
    [{ 'dev.toolbox.workspace': '/src/app' }, true, 'our own label'],
    [{ 'com.docker.compose.project': 'toolbox' }, false, 'Compose project'],
    [{ 'com.docker.compose.service': 'db' }, false, 'Compose service'],
    [{ 'io.podman.compose.project': 'toolbox' }, false, 'podman-compose'],
    [{ 'com.docker.stack.namespace': 'toolbox' }, false, 'a Swarm stack'],
    [{ 'com.docker.swarm.service.id': 'x' }, false, 'a Swarm task'],
    [{ 'io.kubernetes.pod.name': 'x' }, false, 'Kubernetes'],
    [{ 'devcontainer.local_folder': '/src' }, false, 'a Dev Container'],
    [{ 'org.testcontainers': 'true' }, false, 'Testcontainers'],
    [{ 'org.testcontainers.sessionId': 'x' }, false, 'Testcontainers session'],
    [{ 'org.testcontainersx': 'true' }, true, 'a label that only starts like a foreign one'],
  ];
  for (const [labels, ours, what] of cases) {
    it(`${ours ? 'keeps' : 'refuses'} a grammar-valid name with ${what}`, () => {
      assert.equal(names.isOurs('toolbox-app-0123abcd', labels), ours);
    });
  }
  it('null labels (as the engine reports for none) are no labels', () => {
    assert.equal(names.isOurs('toolbox-app-0123abcd', null), true);
  });
});

describe('which engine events refresh the views', () => {
  const event = (over: Partial<EngineEvent>): EngineEvent => ({
    type: 'container',
    action: 'start',
    id: 'abc',
    name: 'toolbox-app-0123abcd',
    attributes: {},
    time: 0,
    timeNano: '0',
    ...over,
  });
  it('a container of ours', () => assert.equal(concernsOurObjects(event({}), names), true));
  it('not a Compose container in our namespace', () => {
    assert.equal(concernsOurObjects(event({ name: 'toolbox-db-1' }), names), false);
    assert.equal(
      concernsOurObjects(event({ attributes: { 'com.docker.compose.project': 'toolbox', name: 'toolbox-app-0123abcd' } }), names),
      false,
    );
  });
  it('not a hand-named toolbox container', () => assert.equal(concernsOurObjects(event({ name: 'toolbox' }), names), false));
  it('the socket volume, but no other volume', () => {
    assert.equal(concernsOurObjects(event({ type: 'volume', name: 'toolbox-cc-socks' }), names), true);
    assert.equal(concernsOurObjects(event({ type: 'volume', name: 'toolbox-app-0123abcd' }), names), false);
  });
  it('an event without a name may be about anything', () => assert.equal(concernsOurObjects(event({ name: undefined }), names), true));
});

describe('the Stop All confirmation', () => {
  it('names every container it will stop, marks the anchor, and counts them on the button', () => {
    const c = stopAllConfirmation(['toolbox-app-0123abcd', 'toolbox-named-infra', 'toolbox-peer-anchor'], 'toolbox-peer-anchor');
    assert.equal(c.message, 'Stop 3 toolbox containers?');
    assert.equal(c.stopLabel, 'Stop 3 Containers');
    assert.match(c.detail, /^• toolbox-app-0123abcd\n• toolbox-named-infra\n• toolbox-peer-anchor \(the peer anchor\)\n\n/);
    assert.match(c.detail, /socket volume and your files are kept/);
  });

  it('says one container in the singular', () => {
    const c = stopAllConfirmation(['toolbox-app-0123abcd'], 'toolbox-peer-anchor');
    assert.equal(c.message, 'Stop 1 toolbox container?');
    assert.equal(c.stopLabel, 'Stop 1 Container');
  });

  it('lists the first eight and counts the rest', () => {
    const many = Array.from({ length: 11 }, (_, i) => `toolbox-app${i}-0123abcd`);
    const c = stopAllConfirmation(many, 'toolbox-peer-anchor');
    const lines = c.detail.split('\n\n')[0]!.split('\n');
    assert.equal(lines.length, 9);
    assert.equal(lines[7], '• toolbox-app7-0123abcd');
    assert.equal(lines[8], '• … and 3 more');
    assert.equal(c.stopLabel, 'Stop 11 Containers');
  });
});
