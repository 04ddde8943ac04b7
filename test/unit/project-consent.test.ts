/**
 * The open path with a stand-in consent store (issue 25, item 5; docs/decisions/0041): a folder
 * whose .toolbox.yaml widens what the user's own config gives opens without the widening, reports
 * it as pending, and applies it once exactly that widening is approved; a changed one needs a new
 * approval. Real files in a temporary home, the backend's FolderConfig and ShellOpener.prepare.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { chmodSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { withProjectFile } from '../../extension/src/config/files';
import { objectNames } from '../../extension/src/contract/objects';
import type { HostFacts } from '../../extension/src/contract/types';
import { memoryState } from '../../extension/src/bridge/credentialGrants';
import { protectedPathFacts } from '../../extension/src/backend/hostFacts';
import { FolderConfig } from '../../extension/src/backend/folderConfig';
import { ProjectConsents } from '../../extension/src/backend/projectConsent';
import type { BackendSettings } from '../../extension/src/backend/settings';
import { ShellOpener } from '../../extension/src/backend/shells';
import { planSession } from '../../extension/src/plan/session';
import { ATTACK_FILE, hardenedUserFile } from '../support/projectAttack';
import { standInSettings } from '../support/settings';

const HARDENED_USER_FILE = hardenedUserFile();

const HASH_A = 'a'.repeat(64);
const HASH_B = 'b'.repeat(64);

describe('ProjectConsents', () => {
  it('holds one approved widening per folder, outside it', async () => {
    const state = memoryState();
    const consents = new ProjectConsents(state, () => 42);
    assert.equal(consents.approved('/p', HASH_A), false);
    await consents.approve('/p/', HASH_A);
    assert.equal(consents.approved('/p', HASH_A), true);
    assert.equal(consents.approved('/p', HASH_B), false, 'another widening is not approved');
    assert.equal(consents.approved('/q', HASH_A), false, 'another folder is not approved');
    await consents.approve('/p', HASH_B);
    assert.equal(consents.approved('/p', HASH_A), false, 'a new approval replaces the old one');
    assert.deepEqual(state.get('toolbox.projectConfigConsents'), { '/p': { hash: HASH_B, at: 42 } });
    await assert.rejects(consents.approve('/p', 'not-a-hash'), /does not name a configuration change/);
  });
});

describe('opening a folder whose .toolbox.yaml widens the user’s config (stand-in consent store)', () => {
  let dir: string;
  let home: string;
  let folder: string;
  const names = objectNames();
  const logged: string[] = [];

  const settings = standInSettings;

  function folderConfig(consents: ProjectConsents, s: BackendSettings = settings()) {
    return new FolderConfig({ names, home: () => home, settings: s, connector: {} as never, consents, log: (l) => void logged.push(l) });
  }

  function write(file: string, text: string) {
    writeFileSync(file, text);
    chmodSync(file, 0o644);
  }

  before(() => {
    dir = mkdtempSync(join(tmpdir(), 'tbx-consent-'));
    home = join(dir, 'home');
    folder = join(home, 'proj');
    mkdirSync(join(home, '.config', 'gh'), { recursive: true });
    mkdirSync(folder);
    write(join(home, '.toolbox.yaml'), HARDENED_USER_FILE);
    write(join(folder, '.toolbox.yaml'), ATTACK_FILE);
  });
  after(() => rmSync(dir, { recursive: true, force: true }));

  it('opens without the widening and reports it; the approval of exactly that widening applies it', async () => {
    const consents = new ProjectConsents(memoryState());
    const config = folderConfig(consents);
    const refused = await config.read(folder);
    assert.equal(refused.config.image, 'user/img:1');
    assert.deepEqual(refused.config.inheritHostAuth, []);
    assert.ok(!refused.config.mounts.some((m) => m.name === 'hostroot'));
    const pending = config.pendingProjectConfig(folder, refused);
    assert.ok(pending);
    assert.deepEqual(pending.sources, ['.toolbox.yaml']);
    assert.equal(pending.items.length, 5);
    assert.equal(pending.folder, folder);

    await config.approveProjectConfig(folder, pending.hash);
    const applied = await config.read(folder);
    assert.equal(applied.widening?.approved, true);
    assert.equal(applied.config.image, 'evil/img');
    assert.deepEqual(applied.config.inheritHostAuth, ['gh']);
    assert.equal(config.pendingProjectConfig(folder, applied), undefined);

    // The container changes the file again: another widening, not approved.
    write(join(folder, '.toolbox.yaml'), ATTACK_FILE.replace('evil/img', 'evil/img:2'));
    const changed = await config.read(folder);
    assert.equal(changed.widening?.approved, false);
    assert.equal(changed.config.image, 'user/img:1');
    assert.notEqual(config.pendingProjectConfig(folder, changed)?.hash, pending.hash);
    write(join(folder, '.toolbox.yaml'), ATTACK_FILE);
  });

  it('plans the open from the narrowed config, and PreparedShell carries the pending change', async () => {
    const consents = new ProjectConsents(memoryState());
    const config = folderConfig(consents);
    const warned: string[] = [];
    const shells = new ShellOpener({
      names,
      host: () => host,
      log: { info: () => undefined, warn: (m: string) => void warned.push(m) } as never,
      config,
      connector: {} as never,
      bridges: {} as never,
      images: {} as never,
      sessions: { persist: () => true } as never,
    });
    const host: HostFacts = { uid: 1000, gid: 1000, home, platform: 'linux', pathExists: () => true, ...protectedPathFacts() };
    const { prepared, plan } = await shells.prepare({ folder });
    assert.ok(prepared.pendingConfig);
    assert.match(warned.join('\n'), /asks for more than your own config gives; not applied until you approve it/);
    const binds = planSession(plan.request, host).plan.create.HostConfig.Binds;
    assert.ok(!binds.some((b) => b.startsWith('/:')), binds.join(' '));
    assert.ok(!binds.some((b) => b.includes('docker.sock')), binds.join(' '));
    assert.ok(!binds.some((b) => b.startsWith(`${home}/.config/gh:`)), binds.join(' '));
    assert.equal(plan.request.image, 'user/img:1');

    await config.approveProjectConfig(folder, prepared.pendingConfig.hash);
    const again = await shells.prepare({ folder });
    assert.equal(again.prepared.pendingConfig, undefined);
    const approved = planSession(again.plan.request, host).plan.create.HostConfig.Binds;
    assert.ok(approved.includes('/:/host'), approved.join(' '));
    assert.equal(again.plan.request.image, 'evil/img');
  });

  it('judges a New Agent Worktree’s .toolbox.yaml read from git the same way; the repository’s approval counts for its worktrees', async () => {
    const consents = new ProjectConsents(memoryState());
    const config = folderConfig(consents);
    const worktree = join(folder, '.worktrees', 'tbx-x');
    const fromGit = withProjectFile(join(worktree, '.toolbox.yaml'), ATTACK_FILE);
    const early = await config.read(worktree, fromGit, folder);
    assert.equal(early.widening?.approved, false);
    assert.equal(early.config.image, 'user/img:1');
    await consents.approve(folder, early.widening!.hash);
    assert.equal((await config.read(worktree, fromGit, folder)).config.image, 'evil/img');
    assert.equal((await config.read(worktree, fromGit)).config.image, 'user/img:1', 'only through its repository');
  });

  it('counts the folder’s toolbox.peerMessaging as the project side', async () => {
    write(join(home, '.toolbox.yaml'), 'peer_messaging: false\n');
    try {
      const s = settings({ peerMessaging: () => ({ value: true, scope: 'folder' }) });
      const config = folderConfig(new ProjectConsents(memoryState()), s);
      const r = await config.read(folder);
      assert.equal(r.config.peerMessaging, false);
      assert.ok(r.widening?.items.some((i) => i.key === 'peer_messaging'));
      assert.deepEqual(config.pendingProjectConfig(folder, r)?.sources, ['.toolbox.yaml', '.vscode/settings.json']);
      assert.deepEqual((await config.peerSetting(folder)).source, { from: 'user-file', file: join(home, '.toolbox.yaml') });
    } finally {
      write(join(home, '.toolbox.yaml'), HARDENED_USER_FILE);
    }
  });

  it('Turn Off for This Folder is kept in the user’s settings, not the project file, and the project cannot undo it', async () => {
    write(join(home, '.toolbox.yaml'), 'image: user/img:1\n');
    write(join(folder, '.toolbox.yaml'), 'peer_messaging: false\n');
    try {
      const s = settings({ trusted: () => false });
      const config = folderConfig(new ProjectConsents(memoryState()), s);
      const reach = {
        kind: 'docker-socket',
        source: '/var/run/docker.sock',
        target: '/var/run/docker.sock',
        readonly: false,
        defaultMount: 'docker-sock',
      } as const;
      const plan = await config.prepareTurnOff(folder, reach);
      assert.equal(plan.setting, 'toolbox.turnedOffForFolder');
      assert.equal(plan.alreadyOff, false);
      await plan.apply();
      assert.deepEqual(s.saved.get(folder), { mounts: ['docker-sock'], inheritHostAuth: [] });
      assert.equal(readFileSync(join(folder, '.toolbox.yaml'), 'utf8'), 'peer_messaging: false\n', 'the project file is not edited');
      assert.equal((await config.prepareTurnOff(folder, reach)).alreadyOff, true);

      // The container writes the project file to turn it back on: the setting still wins.
      write(join(folder, '.toolbox.yaml'), 'mounts:\n  - {name: docker-sock, disabled: false}\n');
      const trusted = folderConfig(new ProjectConsents(memoryState()), { ...s, trusted: () => true });
      const r = await trusted.read(folder);
      assert.equal(r.widening, undefined);
      assert.deepEqual(r.config.mounts.at(-1), { name: 'docker-sock', disabled: true });
      assert.deepEqual(r.origins[`mounts[${r.config.mounts.length - 1}]`], { from: 'setting', setting: 'toolbox.turnedOffForFolder' });
      assert.match(await trusted.resolvedConfigText(folder), /disabled: true\n/);
      assert.match(await trusted.resolvedConfigText(folder), /# setting toolbox\.turnedOffForFolder \(user\)/);
    } finally {
      write(join(home, '.toolbox.yaml'), HARDENED_USER_FILE);
      write(join(folder, '.toolbox.yaml'), ATTACK_FILE);
    }
  });
});
