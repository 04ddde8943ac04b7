/**
 * Profiles on a real engine (docs/decisions/0054; upstream's `toolbox shell --profile --share`):
 * a folder opens with the profile the user remembered for it (toolbox.profileForFolder, here the
 * settings stand-in), in a container named as the CLI names it, whose credential mounts come from
 * ~/.toolbox/profiles/<n> of the test's temporary home and not from ~/.toolbox; the folder's
 * default-profile container is another container, and both run at once; a new profile's
 * directories are made 0700, and a share token keeps that tool on ~/.toolbox; the Workspaces
 * snapshot says which profile each container has.
 */
import assert from 'node:assert/strict';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { ShellSession } from '../../extension/src/backend/api';
import { LABELS } from '../../extension/src/contract/upstream';
import { objectNames } from '../../extension/src/contract/objects';
import { workspaceContainerName } from '../../extension/src/plan/naming';
import { testBackend, type TestBackend } from '../support/backend';
import { docker, removeNamespaceObjects } from '../support/docker';
import { execIn } from '../support/exec';
import { ensureTestRuntimeImage } from '../support/image';
import { hardenedUserFile } from '../support/projectAttack';
import { standInSettings } from '../support/settings';

const progress = { step: () => undefined, log: () => undefined };
const GH = '/home/toolbox/.config/gh/hosts.yml';

describe('profiles: a folder opened with a profile (real engine)', () => {
  const names = objectNames(`tbxt${Math.random().toString(16).slice(2, 8)}`);
  let dir: string;
  let home: string;
  let folder: string;
  let backend: TestBackend;
  const sessions: Record<string, ShellSession> = {};

  /** What a command prints in the container (exit 0 asserted). */
  async function run(session: ShellSession, script: string): Promise<string> {
    const r = await execIn(docker().getContainer(session.id), ['sh', '-c', script]);
    assert.equal(r.code, 0, `${script}: ${r.stderr}`);
    return r.stdout.trim();
  }

  before(async () => {
    const image = await ensureTestRuntimeImage();
    dir = mkdtempSync(join(tmpdir(), `${names.prefix}-profiles-`));
    home = join(dir, 'home');
    folder = join(home, 'proj');
    mkdirSync(folder, { recursive: true });
    // The user's image; no Docker socket and no ssh (nothing of the host's beyond the roots under test).
    writeFileSync(join(home, '.toolbox.yaml'), `${hardenedUserFile(image)}peer_messaging: false\n`);
    // Two accounts' gh logins: the default root's and the work profile's.
    mkdirSync(join(home, '.toolbox', 'gh'), { recursive: true });
    writeFileSync(join(home, '.toolbox', 'gh', 'hosts.yml'), 'account: default\n');
    mkdirSync(join(home, '.toolbox', 'profiles', 'work', 'gh'), { recursive: true });
    writeFileSync(join(home, '.toolbox', 'profiles', 'work', 'gh', 'hosts.yml'), 'account: work\n');
    const settings = standInSettings();
    // The folder's remembered profile, as Open Toolbox Shell with Profile… writes it into the user's settings.
    settings.profiles.set(folder, { profile: 'work', share: [] });
    backend = testBackend(names, home, { pathExists: existsSync, settings });
  });

  after(async () => {
    backend?.dispose();
    await removeNamespaceObjects(docker(), names).catch(() => undefined);
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it("opens with the folder's profile: the CLI's container name, the label, the profile's credentials", async () => {
    const prepared = await backend.prepareShell({ folder });
    const expected = workspaceContainerName(folder, { profile: 'work', share: [], peer: false }, names);
    assert.equal(prepared.container, expected);
    assert.equal(prepared.title, 'proj · work');
    const session = await prepared.open(progress, new AbortController().signal);
    sessions.work = session;
    const info = await docker().getContainer(session.id).inspect();
    assert.equal(info.Name.replace(/^\//, ''), expected);
    assert.equal(info.Config.Labels[LABELS.profile], 'work');
    assert.equal(await run(session, `cat ${GH}`), 'account: work');
    // What the container writes lands in the profile's root, not the default one.
    await run(session, 'echo from-work > /home/toolbox/.config/gh/written');
    assert.equal(readFileSync(join(home, '.toolbox', 'profiles', 'work', 'gh', 'written'), 'utf8'), 'from-work\n');
    assert.ok(!existsSync(join(home, '.toolbox', 'gh', 'written')));
    // No bind of the container comes from the default root's credentials.
    const sources = (info.Mounts ?? []).map((m) => m.Source ?? '');
    assert.ok(sources.includes(join(home, '.toolbox', 'profiles', 'work', '.claude')), sources.join('\n'));
    assert.ok(!sources.includes(join(home, '.toolbox', '.claude')), sources.join('\n'));
    assert.ok(!sources.includes(join(home, '.toolbox', 'gh')), sources.join('\n'));
  });

  it("opens the folder's default profile as another container, and both run at once", async () => {
    const prepared = await backend.prepareShell({ folder, profile: { share: [] } });
    const expected = workspaceContainerName(folder, { peer: false }, names);
    assert.equal(prepared.container, expected);
    assert.notEqual(expected, sessions.work!.name);
    assert.equal(prepared.title, 'proj');
    const session = await prepared.open(progress, new AbortController().signal);
    sessions.default = session;
    assert.notEqual(session.id, sessions.work!.id);
    assert.equal(await run(session, `cat ${GH}`), 'account: default');
    assert.equal(await run(session, 'test ! -e /home/toolbox/.config/gh/written && echo absent'), 'absent');
    const info = await docker().getContainer(session.id).inspect();
    assert.equal(info.Config.Labels[LABELS.profile], undefined);
    for (const s of [sessions.work!, session]) {
      assert.equal((await docker().getContainer(s.id).inspect()).State.Running, true, s.name);
    }
    // The folder is the same folder in both.
    await run(session, 'echo shared > /workspace/both.txt');
    assert.equal(await run(sessions.work!, 'cat /workspace/both.txt'), 'shared');
  });

  it("makes a new profile's directories 0700, and a share token keeps that tool on ~/.toolbox", async () => {
    assert.ok(!existsSync(join(home, '.toolbox', 'profiles', 'client')));
    const prepared = await backend.prepareShell({ folder, profile: { profile: 'client', share: ['gh'] } });
    assert.equal(prepared.container, workspaceContainerName(folder, { profile: 'client', share: ['gh'], peer: false }, names));
    const session = await prepared.open(progress, new AbortController().signal);
    sessions.client = session;
    const root = join(home, '.toolbox', 'profiles', 'client');
    for (const d of [root, join(root, '.claude'), join(root, 'toolbox', 'state'), join(root, 'certs')]) {
      assert.equal(statSync(d).mode & 0o777, 0o700, d);
    }
    assert.ok(!existsSync(join(root, 'gh')), 'gh is shared, not made in the profile');
    assert.equal(await run(session, `cat ${GH}`), 'account: default');
  });

  it('the Workspaces snapshot says which profile each container has', async () => {
    const snapshot = await backend.snapshot();
    const profileOf = (id: string) => snapshot.containers.find((c) => c.id === id)?.profile ?? '(none)';
    assert.equal(profileOf(sessions.work!.id), 'work');
    assert.equal(profileOf(sessions.client!.id), 'client');
    assert.equal(profileOf(sessions.default!.id), '(none)');
  });

  it('refuses a remembered profile the CLI would refuse, before anything is made', async () => {
    const other = join(home, 'other');
    mkdirSync(other);
    const settings = standInSettings();
    settings.profiles.set(other, { profile: '../escape', share: [] });
    const b = testBackend(names, home, { pathExists: existsSync, settings });
    try {
      await assert.rejects(b.prepareShell({ folder: other }), /Invalid profile name "\.\.\/escape".*toolbox\.profileForFolder/);
    } finally {
      b.dispose();
    }
    assert.ok(!existsSync(join(home, '.toolbox', 'escape')));
  });
});
