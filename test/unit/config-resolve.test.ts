import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { DEFAULT_CONFIG } from '../../extension/src/config/model';
import { resolveConfig, type ResolveInput } from '../../extension/src/config/resolve';
import { explicitSetting, explicitSettingScope, narrowingSetting } from '../../extension/src/config/settingScope';

const USER = '/home/u/.toolbox.yaml';
const PROJECT = '/home/u/proj/.toolbox.yaml';

function resolve(parts: { user?: string; project?: string; env?: Record<string, string>; setting?: boolean; trusted?: boolean }) {
  const input: ResolveInput = {
    userFile: parts.user === undefined ? undefined : { path: USER, text: parts.user },
    projectFile: parts.project === undefined ? undefined : { path: PROJECT, text: parts.project },
    env: parts.env ?? {},
    settings: parts.setting === undefined ? {} : { peerMessaging: parts.setting },
    trusted: parts.trusted ?? true,
  };
  return resolveConfig(input);
}

describe('resolveConfig: precedence', () => {
  it('gives the defaults when no layer sets anything', () => {
    const r = resolve({});
    assert.deepEqual(r.config, DEFAULT_CONFIG);
    assert.equal(r.peerMessagingFrom, 'default');
    assert.deepEqual(r.files, []);
    assert.deepEqual(r.issues, []);
    assert.equal(r.projectFileIgnored, false);
  });

  it('lets each layer override the one below: user file < project file < environment', () => {
    const table: Array<[Parameters<typeof resolve>[0], string]> = [
      [{ user: 'image: user:1' }, 'user:1'],
      [{ user: 'image: user:1', project: 'image: project:1' }, 'project:1'],
      [{ user: 'image: user:1', project: 'image: project:1', env: { TOOLBOX_IMAGE: 'env:1' } }, 'env:1'],
      [{ project: 'image: project:1', env: { TOOLBOX_IMAGE: 'env:1' } }, 'env:1'],
      [{ user: 'image: user:1', env: { TOOLBOX_PULL: 'never' } }, 'user:1'],
    ];
    for (const [parts, image] of table) assert.equal(resolve(parts).config.image, image, JSON.stringify(parts));
  });

  it('records which layer set peerMessaging, with the setting beating every file and the environment', () => {
    const table: Array<[Parameters<typeof resolve>[0], boolean, string]> = [
      [{}, true, 'default'],
      [{ user: 'peer_messaging: false' }, false, 'user-file'],
      [{ user: 'peer_messaging: false', project: 'peer_messaging: true' }, true, 'project-file'],
      [{ project: 'peer_messaging: true', env: { TOOLBOX_PEER_MESSAGING: 'false' } }, false, 'env'],
      [{ project: 'peer_messaging: false', setting: true }, true, 'setting'],
      [{ project: 'peer_messaging: true', env: { TOOLBOX_PEER_MESSAGING: 'true' }, setting: false }, false, 'setting'],
      [{ user: 'pull: never', project: 'image: x' }, true, 'default'],
    ];
    for (const [parts, value, from] of table) {
      const r = resolve(parts);
      assert.equal(r.config.peerMessaging, value, JSON.stringify(parts));
      assert.equal(r.peerMessagingFrom, from, JSON.stringify(parts));
    }
  });

  it('merges mappings key by key across files', () => {
    const r = resolve({
      user: 'env: {A: user, B: user}\nshells: {infra: {path: /srv/infra, env: {X: "1"}}}\n',
      project: 'env: {B: project}\nshells: {infra: {env: {Y: "2"}}, web: {path: /srv/web}}\n',
    });
    assert.deepEqual(r.config.env, { A: 'user', B: 'project' });
    assert.deepEqual(r.config.shells, {
      infra: { path: '/srv/infra', env: { X: '1', Y: '2' } },
      web: { path: '/srv/web', env: {} },
    });
  });

  it('replaces lists whole, like viper: a project mounts list supersedes the user one', () => {
    const r = resolve({
      user: 'mounts: [{name: ssh, disabled: true}, {name: a, source: /a, target: /a}]\ninherit_host_auth: [gh]\n',
      project: 'mounts: [{name: b, source: /b, target: /b}]\n',
    });
    assert.deepEqual(r.config.mounts, [{ name: 'b', source: '/b', target: '/b' }]);
    assert.deepEqual(r.config.inheritHostAuth, ['gh']);
  });

  it('lets an empty image in a higher layer restore the default image', () => {
    const r = resolve({ user: 'image: user:1\nregistry_mirror: m.local', project: 'image: ""' });
    assert.equal(r.config.image, undefined);
    assert.equal(r.config.registryMirror, 'm.local');
  });

  it('lists the files that were applied, lowest precedence first', () => {
    assert.deepEqual(resolve({ user: 'pull: auto', project: 'pull: never' }).files, [USER, PROJECT]);
  });

  it('applies nothing from a broken file but keeps the other layers', () => {
    const r = resolve({ user: 'image: user:1\nenv: {A: "1"}', project: 'image: project:1\npull: sometimes\n' });
    assert.equal(r.config.image, 'user:1');
    assert.equal(r.config.pull, 'auto');
    assert.deepEqual(r.files, [USER]);
    assert.deepEqual(
      r.issues.map((i) => [i.severity, i.source, i.key, i.line]),
      [['error', PROJECT, 'pull', 2]],
    );
  });

  it('reports an invalid environment variable and keeps the file value', () => {
    const r = resolve({ project: 'pull: never', env: { TOOLBOX_PULL: 'sometimes' } });
    assert.equal(r.config.pull, 'never');
    assert.deepEqual(
      r.issues.map((i) => [i.source, i.key]),
      [['environment', 'TOOLBOX_PULL']],
    );
  });

  it('returns a config the caller can change without touching the defaults', () => {
    const r = resolve({});
    r.config.env.FOO = 'bar';
    r.config.mounts.push({ name: 'x' });
    assert.deepEqual(DEFAULT_CONFIG.env, {});
    assert.deepEqual(DEFAULT_CONFIG.mounts, []);
  });
});

describe('resolveConfig: workspace trust', () => {
  const project = 'env: {INJECTED: "1"}\nmounts: [{name: root, source: /, target: /host}]\npeer_messaging: false\n';

  it('ignores the project file in an untrusted workspace and says why', () => {
    const r = resolve({ user: 'image: user:1', project, trusted: false });
    assert.equal(r.projectFileIgnored, true);
    assert.deepEqual(r.config.env, {});
    assert.deepEqual(r.config.mounts, []);
    assert.equal(r.config.peerMessaging, true);
    assert.equal(r.config.image, 'user:1');
    assert.deepEqual(r.files, [USER]);
    assert.equal(r.issues.length, 1);
    const [issue] = r.issues;
    assert.equal(issue!.severity, 'warning');
    assert.equal(issue!.source, PROJECT);
    assert.match(issue!.message, /ignored because this workspace is not trusted/);
    assert.match(issue!.message, /mounts and environment variables/);
  });

  it('does not even parse an untrusted project file', () => {
    const r = resolve({ project: 'pull: [broken', trusted: false });
    assert.deepEqual(
      r.issues.map((i) => i.severity),
      ['warning'],
    );
  });

  it('honours the project file once the workspace is trusted', () => {
    const r = resolve({ project, trusted: true });
    assert.equal(r.projectFileIgnored, false);
    assert.deepEqual(r.config.env, { INJECTED: '1' });
    assert.equal(r.peerMessagingFrom, 'project-file');
    assert.deepEqual(r.issues, []);
  });

  it('has nothing to ignore in an untrusted workspace without a project file', () => {
    const r = resolve({ user: 'pull: never', trusted: false });
    assert.equal(r.projectFileIgnored, false);
    assert.deepEqual(r.issues, []);
    assert.equal(r.config.pull, 'never');
  });
});

describe('explicitSetting', () => {
  it('takes the folder value over the workspace value over the user value', () => {
    assert.equal(explicitSetting({ globalValue: true, workspaceValue: true, workspaceFolderValue: false }, true), false);
    assert.equal(explicitSetting({ globalValue: true, workspaceValue: false }, true), false);
    assert.equal(explicitSetting({ globalValue: false }, true), false);
  });

  it('is undefined when only the default applies, so the files decide', () => {
    assert.equal(explicitSetting({}, true), undefined);
    assert.equal(explicitSetting(undefined, true), undefined);
  });

  it('honours only the user value in an untrusted workspace', () => {
    assert.equal(explicitSetting({ workspaceFolderValue: false, workspaceValue: false }, false), undefined);
    assert.equal(explicitSetting({ globalValue: true, workspaceFolderValue: false }, false), true);
  });
});

describe('explicitSettingScope', () => {
  it('names the scope of the value explicitSetting takes', () => {
    assert.equal(explicitSettingScope({ globalValue: true, workspaceValue: true, workspaceFolderValue: false }, true), 'folder');
    assert.equal(explicitSettingScope({ globalValue: true, workspaceValue: false }, true), 'workspace');
    assert.equal(explicitSettingScope({ globalValue: false }, true), 'user');
    assert.equal(explicitSettingScope({}, true), undefined);
  });

  it('ignores the folder and workspace values in an untrusted workspace, as explicitSetting does', () => {
    assert.equal(explicitSettingScope({ globalValue: true, workspaceFolderValue: false }, false), 'user');
    assert.equal(explicitSettingScope({ workspaceFolderValue: false }, false), undefined);
  });
});

describe('narrowingSetting (a setting that can widen what the container reaches, docs/decisions/0041)', () => {
  const narrows = (v: string) => v === 'default';
  it('takes a workspace or folder value only when it narrows, else the user value', () => {
    assert.deepEqual(narrowingSetting({ globalValue: 'unconfined', workspaceFolderValue: 'default' }, true, narrows), {
      value: 'default',
      scope: 'folder',
    });
    assert.deepEqual(narrowingSetting({ globalValue: 'default', workspaceFolderValue: 'unconfined' }, true, narrows), {
      value: 'default',
      scope: 'user',
    });
    assert.deepEqual(narrowingSetting({ workspaceFolderValue: 'unconfined', workspaceValue: 'default' }, true, narrows), {
      value: 'default',
      scope: 'workspace',
    });
    assert.deepEqual(narrowingSetting({ workspaceFolderValue: 'unconfined' }, true, narrows), {});
  });

  it('honours only the user value in an untrusted workspace', () => {
    assert.deepEqual(narrowingSetting({ workspaceFolderValue: 'default' }, false, narrows), {});
    assert.deepEqual(narrowingSetting(undefined, true, narrows), {});
  });
});

describe('resolveConfig: the host side', () => {
  it('is every layer but the project file, with the user’s own settings', () => {
    const r = resolveConfig({
      userFile: { path: USER, text: 'image: user:1\npeer_messaging: false\n' },
      projectFile: { path: PROJECT, text: 'image: project:1\n' },
      env: { TOOLBOX_PULL: 'never' },
      settings: { peerMessaging: true },
      hostSettings: {},
      trusted: true,
    });
    assert.equal(r.config.image, 'project:1');
    assert.equal(r.config.peerMessaging, true);
    assert.equal(r.hostSide.config.image, 'user:1');
    assert.equal(r.hostSide.config.pull, 'never');
    assert.equal(r.hostSide.config.peerMessaging, false);
    assert.equal(r.hostSide.peerMessagingFrom, 'user-file');
    assert.deepEqual(r.hostSide.origins.image, { from: 'user-file', file: USER, line: 1 });
  });
});
