/**
 * The peer-default check's host side (docs/decisions/0018): a fake `toolbox` CLI on PATH in a
 * temporary HOME is asked `toolbox config show`; the answer is its peer_messaging line. And the
 * pin: peer_messaging written into that HOME's ~/.toolbox.yaml, comments kept. Never the real home.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { findOnPath, parsePeerMessagingLine, queryEnv, readCliPeerDefault } from '../../extension/src/host/cliPeerDefault';
import { pinUserPeerMessaging } from '../../extension/src/config/files';
import { resolveConfig } from '../../extension/src/config/resolve';

describe('the toolbox CLI peer-messaging default', () => {
  let root: string;
  let home: string;
  let bin: string;
  /** A fake `toolbox` in its own directory; returns the directory (for PATH). */
  const fakeCli = (dirName: string, body: string, mode = 0o755): string => {
    const dir = path.join(root, dirName);
    fs.mkdirSync(dir, { recursive: true });
    fs.writeFileSync(path.join(dir, 'toolbox'), `#!/bin/sh\n${body}\n`, { mode });
    return dir;
  };

  before(() => {
    root = fs.mkdtempSync(path.join(os.tmpdir(), 'tbx-cli-peer-'));
    home = path.join(root, 'home');
    fs.mkdirSync(home);
    bin = fakeCli(
      'newer',
      // Like upstream's `config show` after its ADR 0013: the resolved peer_messaging, false unless set.
      [
        'if [ "$1 $2" != "config show" ]; then exit 2; fi',
        'echo "shell: zsh"',
        'if [ -n "$TOOLBOX_PEER_MESSAGING" ]; then echo "peer_messaging: $TOOLBOX_PEER_MESSAGING"; else echo "peer_messaging: false"; fi',
        'echo "cwd: $(pwd)" >&2',
        'echo "home: $HOME" > "$HOME/seen"',
        'pwd >> "$HOME/seen"',
      ].join('\n'),
    );
  });
  after(() => fs.rmSync(root, { recursive: true, force: true }));

  it('finds an executable toolbox on PATH, skipping relative entries, missing dirs and non-executables', async () => {
    const notExec = fakeCli('noexec', 'exit 0', 0o644);
    const pathVar = ['relative/dir', path.join(root, 'nope'), notExec, bin].join(path.delimiter);
    assert.equal(await findOnPath('toolbox', pathVar), path.join(bin, 'toolbox'));
    assert.equal(await findOnPath('toolbox', notExec), undefined);
    assert.equal(await findOnPath('toolbox', undefined), undefined);
  });

  it("reads a newer CLI's default (off), with TOOLBOX_* removed and run from the home folder", async () => {
    const env = { ...process.env, TOOLBOX_PEER_MESSAGING: 'true', PATH: bin };
    assert.equal(await readCliPeerDefault(path.join(bin, 'toolbox'), home, env), false);
    assert.deepEqual(fs.readFileSync(path.join(home, 'seen'), 'utf8').split('\n').slice(0, 2), [`home: ${home}`, fs.realpathSync(home)]);
    assert.equal(queryEnv({ TOOLBOX_X: '1', KEEP: 'y' }, '/h').TOOLBOX_X, undefined);
    assert.equal(queryEnv({ TOOLBOX_X: '1', KEEP: 'y' }, '/h').KEEP, 'y');
  });

  it('an older CLI that prints no peer_messaging line, one that fails, hangs or floods: no answer', async () => {
    const older = fakeCli('older', 'echo "shell: zsh"; echo "mounts: []"');
    assert.equal(await readCliPeerDefault(path.join(older, 'toolbox'), home, process.env), undefined);
    const failing = fakeCli('failing', 'echo "peer_messaging: false"; exit 1');
    assert.equal(await readCliPeerDefault(path.join(failing, 'toolbox'), home, process.env), undefined);
    const hanging = fakeCli('hanging', 'exec sleep 30');
    assert.equal(
      await readCliPeerDefault(path.join(hanging, 'toolbox'), home, process.env, { timeoutMs: 200, maxOutputBytes: 1024 }),
      undefined,
    );
    const flooding = fakeCli('flooding', 'echo "peer_messaging: false"; yes x | head -c 100000');
    assert.equal(
      await readCliPeerDefault(path.join(flooding, 'toolbox'), home, process.env, { timeoutMs: 5000, maxOutputBytes: 1024 }),
      undefined,
    );
  });

  it('parses only a top-level peer_messaging line', () => {
    assert.equal(parsePeerMessagingLine('shell: zsh\npeer_messaging: true # (default)\n'), true);
    assert.equal(parsePeerMessagingLine('env:\n  peer_messaging: false\n'), undefined);
    assert.equal(parsePeerMessagingLine('peer_messaging: maybe\n'), undefined);
  });

  it('pins the choice in ~/.toolbox.yaml (created, or edited with its comments kept), where both tools read it', async () => {
    const file = await pinUserPeerMessaging(home, true, 'Pinned for both.');
    assert.equal(file, path.join(home, '.toolbox.yaml'));
    assert.equal(fs.readFileSync(file, 'utf8'), '# Pinned for both.\npeer_messaging: true\n');
    fs.writeFileSync(file, '# mine\npull: never # offline\n');
    fs.chmodSync(file, 0o600);
    await pinUserPeerMessaging(home, false, 'Pinned for both.');
    const text = fs.readFileSync(file, 'utf8');
    assert.equal(text, '# mine\npull: never # offline\n# Pinned for both.\npeer_messaging: false\n');
    assert.equal(fs.statSync(file).mode & 0o777, 0o600, 'the mode is kept');
    // The editor now reads it from the user file, as the CLI does.
    const r = resolveConfig({ userFile: { path: file, text }, env: {}, settings: {}, trusted: true, home });
    assert.equal(r.config.peerMessaging, false);
    assert.equal(r.peerMessagingFrom, 'user-file');
  });

  it('refuses to pin into a ~/.toolbox.yaml others can write, and writes nothing', async () => {
    const file = path.join(home, '.toolbox.yaml');
    fs.writeFileSync(file, 'pull: never\n');
    fs.chmodSync(file, 0o666);
    await assert.rejects(pinUserPeerMessaging(home, true, 'x'), /writable by every user/);
    assert.equal(fs.readFileSync(file, 'utf8'), 'pull: never\n');
  });
});
