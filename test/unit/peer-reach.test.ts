import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { inboxSocketPresence } from '../../extension/src/engine/peerState';
import { peerReach, sessionContainer, type PeerReachContainer } from '../../extension/src/plan/peerReach';
import { agentSessionItem } from '../../extension/src/ui/views/treeItems';

const containers: PeerReachContainer[] = [
  { name: 'toolbox-app-1', workspace: '/src/app', running: true, member: true },
  { name: 'toolbox-app-web-2', workspace: '/src/app/web', running: true, member: false },
  { name: 'toolbox-old-3', workspace: '/src/old', running: false, member: false },
];

describe('peer sessions: where each lives and whether peers reach it (issue 17, item 4)', () => {
  it('a session lives in the container whose workspace holds its cwd (the longest one)', () => {
    assert.equal(sessionContainer('/src/app', containers)?.name, 'toolbox-app-1');
    assert.equal(sessionContainer('/src/app/lib', containers)?.name, 'toolbox-app-1');
    assert.equal(sessionContainer('/src/app/web/src', containers)?.name, 'toolbox-app-web-2');
    assert.equal(sessionContainer('/src/application', containers), undefined);
    assert.equal(sessionContainer(undefined, containers), undefined);
  });

  it('reachable only in the namespace with its socket present; otherwise it says why', () => {
    const s = { cwd: '/src/app', messagingSocketPath: '/tmp/cc-socks/42.sock' };
    assert.deepEqual(peerReach(s, containers, 'present'), { container: 'toolbox-app-1', state: 'reachable' });
    assert.match(peerReach(s, containers, 'missing').why ?? '', /inbox socket \/tmp\/cc-socks\/42\.sock is missing/);
    assert.equal(peerReach(s, containers, 'unknown').state, 'unknown');
    const drift = peerReach({ ...s, cwd: '/src/app/web' }, containers, 'present');
    assert.equal(drift.state, 'unreachable');
    assert.match(drift.why ?? '', /not in the shared PID namespace \(peer messaging off, or drift\)/);
    assert.match(peerReach({ ...s, cwd: '/src/old' }, containers, 'present').why ?? '', /not running/);
    assert.equal(peerReach({ cwd: '/elsewhere' }, containers, 'present').state, 'unknown');
    assert.match(peerReach({ cwd: '/src/app' }, containers, 'unknown').why ?? '', /no inbox socket/);
  });

  it('the inbox socket is looked up in the volume: a socket is present, a file or symlink is not, a path outside is refused', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'tbxt-socks-'));
    const server = createServer();
    await new Promise<void>((r) => server.listen(join(dir, '42.sock'), r));
    try {
      writeFileSync(join(dir, 'file.sock'), '');
      symlinkSync(join(dir, '42.sock'), join(dir, 'link.sock'));
      const volume = { exists: true, mountpoint: dir, owner: '0:0', mode: '0700' };
      assert.equal(await inboxSocketPresence(volume, '/tmp/cc-socks/42.sock'), 'present');
      assert.equal(await inboxSocketPresence(volume, '/tmp/cc-socks/43.sock'), 'missing');
      assert.equal(await inboxSocketPresence(volume, '/tmp/cc-socks/file.sock'), 'missing');
      assert.equal(await inboxSocketPresence(volume, '/tmp/cc-socks/link.sock'), 'missing');
      // Attacks from the container-writable registry: paths that leave the volume are not looked at.
      for (const evil of [
        '/tmp/cc-socks/../../etc/passwd',
        '/etc/passwd',
        '/tmp/cc-socks/..',
        '/tmp/cc-socks/a/b.sock',
        '/tmp/cc-socks/\u0000x',
      ]) {
        assert.equal(await inboxSocketPresence(volume, evil), 'missing', evil);
      }
      // Not readable from this host (remote engine): unknown, not missing.
      assert.equal(await inboxSocketPresence({ exists: true, mountpoint: dir }, '/tmp/cc-socks/42.sock'), 'unknown');
    } finally {
      server.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('the Peer Messaging row says reachable or why not, and cleans the registry text', () => {
    const ok = agentSessionItem({ pid: 42, name: 'fix-the-bug', container: 'toolbox-app-1', reach: 'reachable' });
    assert.equal(ok.description, 'pid 42 · toolbox-app-1 · reachable');
    assert.equal(ok.contextValue, 'agentSession.reachable');
    const bad = agentSessionItem({
      pid: 43,
      name: 'x\u202e\x1b[31m',
      container: 'toolbox-app-web-2',
      reach: 'unreachable',
      why: 'Its container is not in the shared PID namespace.',
    });
    assert.equal(bad.description, 'pid 43 · toolbox-app-web-2 · unreachable');
    assert.equal(bad.label, 'x'); // the bidi override and the whole escape sequence go (ui/plainText.ts)
    assert.match(bad.tooltip, /not in the shared PID namespace/);
  });
});
