import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { applyTurnOff, setPeerMessaging, type EffectiveLists } from '../../extension/src/config/edit';
import { parseConfigFile } from '../../extension/src/config/parse';
import { resolveConfig } from '../../extension/src/config/resolve';
import { objectNames } from '../../extension/src/contract/objects';
import { planMounts } from '../../extension/src/plan/mounts';

// Issue 11, finding 10: "Turn off for this folder" writes upstream's mounts: syntax and keeps the rest of the file.
const NOTE = 'Docker socket turned off in the Toolbox view.';
const USER = '~/.toolbox.yaml';
const none: EffectiveLists = { mounts: [], inheritHostAuth: [] };
const off = (name: string) => ({ kind: 'disable-mount' as const, name });

/** What the planner mounts for a user file and a project file (the real resolver and planner). */
function plannedTargets(user: string, project: string): string[] {
  const resolved = resolveConfig({
    userFile: { path: '/home/u/.toolbox.yaml', text: user },
    projectFile: { path: '/home/u/p/.toolbox.yaml', text: project },
    env: {},
    settings: {},
    trusted: true,
    home: '/home/u',
  });
  assert.deepEqual(resolved.issues, []);
  const all = new Set(['/var/run/docker.sock', '/home/u/.ssh', '/home/u/.aws', '/home/u/.config/gh', '/home/u/.config/gcloud']);
  return planMounts({
    workspace: '/home/u/p',
    home: '/home/u',
    pathExists: (p) => all.has(p),
    mountsRoot: resolved.config.mountsRoot,
    userMounts: resolved.config.mounts,
    inheritHostAuth: resolved.config.inheritHostAuth,
    peer: false,
    names: objectNames(),
  }).mounts.map((m) => `${m.source}:${m.target}`);
}

describe('applyTurnOff', () => {
  it('adds a mounts: patch to a file that has none, keeping its comments, keys and order', () => {
    const text = '# demo workspace\nimage: example/img:1 # pinned\nenv:\n  FOO: bar\n';
    const r = applyTurnOff(text, off('docker-sock'), none, NOTE, USER);
    assert.equal(r.alreadyOff, false);
    assert.equal(
      r.text,
      '# demo workspace\nimage: example/img:1 # pinned\nenv:\n  FOO: bar\nmounts:\n  # Docker socket turned off in the Toolbox view.\n  - name: docker-sock\n    disabled: true\n',
    );
  });

  it('writes a new file from nothing, or from a comment-only file', () => {
    assert.equal(
      applyTurnOff('', off('docker-sock'), none, NOTE, USER).text,
      'mounts:\n  # Docker socket turned off in the Toolbox view.\n  - name: docker-sock\n    disabled: true\n',
    );
    assert.match(applyTurnOff('# ui test workspace\n', off('docker-sock'), none, NOTE, USER).text, /^# ui test workspace\n\nmounts:\n/);
  });

  it('appends to an existing mounts: list, and sets disabled on an entry of that name instead of adding one', () => {
    const text = 'mounts:\n  - name: gh # mine\n    readonly: true\n  - name: docker-sock\n    readonly: true\n';
    const r = applyTurnOff(text, off('docker-sock'), none, NOTE, USER);
    assert.equal(
      r.text,
      'mounts:\n  - name: gh # mine\n    readonly: true\n  - name: docker-sock\n    readonly: true\n    disabled: true # Docker socket turned off in the Toolbox view.\n',
    );
  });

  it('turns a flow list into a block list when it adds to it', () => {
    assert.equal(
      applyTurnOff('mounts: []\n', off('ssh'), none, NOTE, USER).text,
      'mounts:\n  # Docker socket turned off in the Toolbox view.\n  - name: ssh\n    disabled: true\n',
    );
  });

  it('says already off, and changes nothing, when the file already disables it', () => {
    const text = 'mounts: [{name: docker-sock, disabled: true}]\n';
    assert.deepEqual(applyTurnOff(text, off('docker-sock'), none, NOTE, USER), { text, alreadyOff: true });
  });

  it("copies the user file's mounts: list first, since a project list replaces it", () => {
    const user = 'mounts:\n  - {name: aws, source: ~/.aws, target: .aws, readonly: true}\n';
    const effective: EffectiveLists = { mounts: [{ name: 'aws', source: '~/.aws', target: '.aws', readonly: true }], inheritHostAuth: [] };
    const r = applyTurnOff('image: x\n', off('docker-sock'), effective, NOTE, USER);
    assert.match(r.text, /# Copied from ~\/\.toolbox\.yaml: a project mounts: list replaces that file's list, so these keep applying\./);
    const before = plannedTargets(user, 'image: x\n');
    const after = plannedTargets(user, r.text);
    assert.ok(before.includes('/var/run/docker.sock:/var/run/docker.sock'));
    assert.deepEqual(
      after,
      before.filter((m) => m !== '/var/run/docker.sock:/var/run/docker.sock'),
      "only the socket is gone: the user file's ~/.aws mount still applies",
    );
  });

  it('drops an inherit_host_auth key in place, or from the list that applies now', () => {
    const drop = { kind: 'drop-inherit-host-auth' as const, key: 'gh' };
    const inPlace = applyTurnOff('inherit_host_auth: [gcloud, gh] # both\n', drop, none, 'gh off.', USER);
    assert.equal(inPlace.text, '# gh off.\ninherit_host_auth: [ gcloud ] # both\n');
    const fromUser = applyTurnOff('image: x\n', drop, { mounts: [], inheritHostAuth: ['gh', 'gcloud'] }, 'gh off.', USER);
    assert.equal(fromUser.text, 'image: x\n# gh off.\ninherit_host_auth:\n  - gcloud\n');
    const user = 'inherit_host_auth: [gh, gcloud]\n';
    assert.ok(plannedTargets(user, 'image: x\n').includes('/home/u/.config/gh:/home/toolbox/.config/gh'));
    assert.ok(!plannedTargets(user, fromUser.text).includes('/home/u/.config/gh:/home/toolbox/.config/gh'));
    assert.ok(plannedTargets(user, fromUser.text).includes('/home/u/.config/gcloud:/home/toolbox/.config/gcloud'));
    const last = applyTurnOff('image: x\n', drop, { mounts: [], inheritHostAuth: ['gh'] }, 'gh off.', USER);
    assert.equal(last.text, 'image: x\n# gh off.\ninherit_host_auth: []\n');
    assert.deepEqual(applyTurnOff('image: x\n', drop, none, 'gh off.', USER), { text: 'image: x\n', alreadyOff: true });
  });

  it('the patch really turns the mount off in the planner', () => {
    const r = applyTurnOff('# p\n', off('docker-sock'), none, NOTE, USER);
    assert.ok(plannedTargets('', '# p\n').includes('/var/run/docker.sock:/var/run/docker.sock'));
    assert.ok(!plannedTargets('', r.text).includes('/var/run/docker.sock:/var/run/docker.sock'));
    const ssh = applyTurnOff('', off('ssh'), none, NOTE, USER);
    assert.ok(!plannedTargets('', ssh.text).some((m) => m.endsWith(':/home/toolbox/.ssh')));
  });

  it('refuses a file that is not a mapping or not YAML', () => {
    assert.throws(() => applyTurnOff('- a\n- b\n', off('ssh'), none, NOTE, USER), /its top level is not a mapping/);
    assert.throws(() => applyTurnOff('a: [\n', off('ssh'), none, NOTE, USER), /not valid YAML/);
  });
});

describe('setPeerMessaging (issue 13, item 6)', () => {
  const note = 'Set in the Toolbox view.';
  const peerOf = (text: string) => parseConfigFile(text, '/p/.toolbox.yaml').layer.peerMessaging;

  it('adds peer_messaging with a comment and keeps the rest of the file', () => {
    const before = '# my project\nimage: ghcr.io/me/img:1 # pinned\n';
    const after = setPeerMessaging(before, false, note);
    assert.equal(after, '# my project\nimage: ghcr.io/me/img:1 # pinned\n# Set in the Toolbox view.\npeer_messaging: false\n');
    assert.equal(peerOf(after), false);
  });

  it('changes an existing value in place, its comments kept', () => {
    const after = setPeerMessaging('peer_messaging: true # team default\nproximo: false\n', false, note);
    assert.equal(after, 'peer_messaging: false # team default\nproximo: false\n');
    assert.equal(peerOf(setPeerMessaging(after, true, note)), true);
  });

  it('creates the content of an empty or missing file', () => {
    assert.equal(setPeerMessaging('', true, note), '# Set in the Toolbox view.\npeer_messaging: true\n');
  });

  it('refuses a file that is not a mapping or not YAML, rather than overwrite it', () => {
    assert.throws(() => setPeerMessaging('- a\n- b\n', false, note), /top level is not a mapping/);
    assert.throws(() => setPeerMessaging('a: [\n', false, note), /not valid YAML/);
  });
});
