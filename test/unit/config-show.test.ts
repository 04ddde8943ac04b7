/**
 * Show Resolved Configuration (issue 15, item 14): which layer set each key (config/resolve.ts
 * origins) and the annotated text (config/showConfig.ts), shaped like upstream's
 * `toolbox config show --origin` (cmd/config.go, configedit/provenance.go).
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { resolveConfig } from '../../extension/src/config/resolve';
import { renderResolvedConfig, scalar } from '../../extension/src/config/showConfig';
import { gateProjectConfig } from '../../extension/src/plan/projectReach';

const HOME = '/home/u';
const FOLDER = '/home/u/proj';
const USER = {
  path: `${HOME}/.toolbox.yaml`,
  text: 'pull: always\nenv:\n  A: from-user\n  B: b\nmounts:\n  - name: gh\n    disabled: true\n',
};
const PROJECT = {
  path: `${FOLDER}/.toolbox.yaml`,
  text: '# project\nenv:\n  A: from-project\npeer_messaging: false\nmounts:\n  - name: kube\n    disabled: true\n',
};

function resolve(env: Record<string, string> = {}, peerMessaging?: boolean) {
  return resolveConfig({ userFile: USER, projectFile: PROJECT, env, settings: { peerMessaging }, trusted: true, home: HOME });
}

describe('renderResolvedConfig: mounts: entries without a name and with symlink_from', () => {
  it('writes every field the entry has, the first as the list item', () => {
    const text = renderResolvedConfig(
      resolveConfig({
        userFile: { path: USER.path, text: 'mounts:\n  - {source: /srv/d, target: /d}\n  - {name: kube, symlink_from: ~/.kube}\n' },
        env: {},
        settings: {},
        trusted: true,
        home: HOME,
      }),
      { folder: FOLDER, home: HOME },
    );
    const lines = text.split('\n');
    const at = lines.findIndex((l) => l.startsWith('mounts:'));
    assert.deepEqual(lines.slice(at + 1, at + 6), [
      '  - source: /srv/d  # ~/.toolbox.yaml:2',
      '    target: /d',
      '  - name: kube  # ~/.toolbox.yaml:3',
      '    symlink_from: ~/.kube',
      lines[at + 5],
    ]);
  });
});

describe('resolveConfig origins', () => {
  it('credits each key to the highest layer that set it, with the line of the key in its file', () => {
    const { origins } = resolve({ TOOLBOX_PULL: 'never' });
    assert.deepEqual(origins.pull, { from: 'env', variable: 'TOOLBOX_PULL' });
    assert.deepEqual(origins['env.A'], { from: 'project-file', file: PROJECT.path, line: 3 });
    assert.deepEqual(origins['env.B'], { from: 'user-file', file: USER.path, line: 4 });
    assert.deepEqual(origins.peer_messaging, { from: 'project-file', file: PROJECT.path, line: 4 });
    assert.equal(origins.shell, undefined, 'a key at its default has no origin');
  });

  it('gives a mounts: list to the file whose list won, entries included, as the merge replaces it whole', () => {
    const { origins } = resolve();
    assert.deepEqual(origins.mounts, { from: 'project-file', file: PROJECT.path, line: 5 });
    assert.deepEqual(origins['mounts[0]'], { from: 'project-file', file: PROJECT.path, line: 6 });
    assert.equal(origins['mounts[1]'], undefined);
  });

  it('names the setting when toolbox.peerMessaging decides', () => {
    assert.deepEqual(resolve({}, true).origins.peer_messaging, { from: 'setting', setting: 'toolbox.peerMessaging' });
  });
});

describe('renderResolvedConfig', () => {
  it('lists every key with its value and where it comes from, in upstream config show order', () => {
    const text = renderResolvedConfig(resolve({ TOOLBOX_PULL: 'never' }, true), {
      folder: FOLDER,
      home: HOME,
      settingScopes: { 'toolbox.peerMessaging': 'folder' },
    });
    const body = text.split('\n').filter((l) => l !== '' && !l.startsWith('#'));
    assert.deepEqual(body, [
      'shell: zsh  # default',
      'agent: claude  # default',
      'image: ""  # default',
      'registry_mirror: ""  # default',
      'pull: never  # env TOOLBOX_PULL',
      'mounts_root: ~/.toolbox  # default',
      'bridge: auto  # default',
      'proximo: auto  # default',
      'managed_statusline: auto  # default',
      'image_reclaim: auto  # default',
      'peer_messaging: true  # setting toolbox.peerMessaging (folder)',
      'env:',
      '  A: from-project  # .toolbox.yaml:3',
      '  B: b  # ~/.toolbox.yaml:4',
      'worktree:',
      '  seed: []  # default',
      'inherit_host_auth: []  # default',
      'shells: {}  # default',
      'mounts:  # .toolbox.yaml:5',
      '  - name: kube  # .toolbox.yaml:6',
      '    disabled: true',
    ]);
    assert.match(text, /^# Toolbox configuration for ~\/proj, as the next shell would use it\.\n/);
    assert.match(text, /\n# Files read: ~\/\.toolbox\.yaml, \.toolbox\.yaml\n/);
  });

  it('says which files were not applied and why', () => {
    const broken = resolveConfig({
      projectFile: { path: PROJECT.path, text: 'peer_messaging: maybe\n' },
      env: {},
      settings: {},
      trusted: true,
      home: HOME,
    });
    const text = renderResolvedConfig(broken, { folder: FOLDER, home: HOME });
    assert.match(text, /\n# Not applied: \.toolbox\.yaml:1: peer_messaging: expected true or false, got "maybe"\n/);
    assert.match(text, /\npeer_messaging: true {2}# default\n/);
  });

  it('quotes a value that would not read back as the same string', () => {
    assert.equal(scalar('plain/value-1.2'), 'plain/value-1.2');
    for (const v of ['', 'a # b', 'k: v', 'true', '8080', 'two\nlines', ' lead']) assert.equal(scalar(v), JSON.stringify(v), v);
  });
});

describe('renderResolvedConfig: what the project asks beyond the user’s own config (docs/decisions/0041)', () => {
  const gated = (approved: boolean) =>
    gateProjectConfig(resolve(), {
      home: HOME,
      folder: FOLDER,
      turnedOff: { mounts: [], inheritHostAuth: [] },
      turnedOffOrigin: { from: 'setting', setting: 'toolbox.turnedOffForFolder' },
      approved: () => approved,
    });

  it('lists the refused parts at the top and marks their keys', () => {
    // The project's mounts: list replaces the user's, which turned gh off: gh would be back on.
    const text = renderResolvedConfig(gated(false), { folder: FOLDER, home: HOME });
    assert.match(
      text,
      /\n# Not applied: the project asks for more than your own config gives \(approve it when the next shell asks\):\n# {3}mounts: turns "gh" back on, which your config turns off: "~\/\.toolbox\/gh" at "\/home\/toolbox\/\.config\/gh", read-write \(\.toolbox\.yaml:5\)\n/,
    );
    assert.match(
      text,
      /\nmounts: {2}# ~\/\.toolbox\.yaml:5; the project asks for more: not applied\n {2}- name: gh {2}# ~\/\.toolbox\.yaml:6\n/,
    );
  });

  it('says what applies as approved', () => {
    const text = renderResolvedConfig(gated(true), { folder: FOLDER, home: HOME });
    assert.match(text, /\n# Applied as you approved for this folder, beyond your own config:\n# {3}mounts: turns "gh" back on/);
    assert.doesNotMatch(text, /not applied/);
  });
});
