/**
 * Profiles around the planner (plan/profiles.ts, docs/decisions/0054): the user setting that
 * remembers a folder's profile, the CLI's refusals before anything is planned, the profiles the
 * picker lists, which profile a container has (our label, else the CLI's mounts), and what the
 * tree and the picker show of it, as plain text.
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { LABELS } from '../../extension/src/contract/upstream';
import { objectNames } from '../../extension/src/contract/objects';
import { profileNameProblem } from '../../extension/src/plan/naming';
import {
  containerProfile,
  folderProfile,
  listedProfiles,
  MAX_LISTED_PROFILES,
  profileProblem,
  profileRoot,
  settingWithProfile,
} from '../../extension/src/plan/profiles';
import { planSession } from '../../extension/src/plan/session';
import { DEFAULT_CONFIG } from '../../extension/src/config/model';
import { containerDescription, containerTooltip } from '../../extension/src/ui/views/treeItems';
import { containerSummary } from '../support/summary';
import { installVscodeLite, vscodeLite } from '../support/vscodeLite';

const HOME = '/home/u';

describe('the toolbox.profileForFolder setting', () => {
  it("reads the folder's entry by its clean path, and nothing else", () => {
    const setting = { '/home/u/proj': { profile: 'work', share: ['gh', ' cf ', '', 3] }, '/home/u/other': { profile: 'personal' } };
    assert.deepEqual(folderProfile(setting, '/home/u/proj/'), { profile: 'work', share: ['gh', 'cf'] });
    assert.deepEqual(folderProfile(setting, '/home/u/other'), { profile: 'personal', share: [] });
    assert.deepEqual(folderProfile(setting, '/home/u/none'), { share: [] });
  });

  it('counts junk as no profile', () => {
    for (const setting of [undefined, null, 'work', [], { '/p': 'work' }, { '/p': { profile: 7 } }, { '/p': { profile: '' } }]) {
      assert.deepEqual(folderProfile(setting, '/p'), { share: [] }, JSON.stringify(setting));
    }
  });

  it("does not take an inherited property for a folder's entry", () => {
    assert.deepEqual(folderProfile({}, '/constructor'), { share: [] });
  });

  it("writes the folder's entry, keeps the others, and removes the entry for no profile", () => {
    const before = { '/a': { profile: 'x' }, '/b': { profile: 'y', share: ['gh'] } };
    assert.deepEqual(settingWithProfile(before, '/b/', { profile: 'work', share: [] }), {
      '/a': { profile: 'x' },
      '/b': { profile: 'work' },
    });
    assert.deepEqual(settingWithProfile(before, '/c', { profile: 'w', share: ['gh'] }), {
      ...before,
      '/c': { profile: 'w', share: ['gh'] },
    });
    assert.deepEqual(settingWithProfile(before, '/a', { share: [] }), { '/b': { profile: 'y', share: ['gh'] } });
    assert.deepEqual(settingWithProfile('junk', '/a', { profile: 'w', share: [] }), { '/a': { profile: 'w' } });
  });
});

describe("the CLI's refusals before planning", () => {
  it("refuses the names upstream's resolveShellProfile refuses, and a NUL", () => {
    for (const name of ['', '.', '..', 'a/b', '/abs', 'a\\b', 'x\x00y']) {
      assert.match(profileNameProblem(name) ?? '', /Invalid profile name/, JSON.stringify(name));
    }
    for (const name of ['work', 'Work Account', '.hidden', 'a..b', 'ünï', 'client-a_2']) {
      assert.equal(profileNameProblem(name), undefined, name);
    }
  });

  it('names where the choice came from', () => {
    assert.match(
      profileProblem({ profile: '..', share: [] }, 'the user setting toolbox.profileForFolder for /p') ?? '',
      /from the user setting toolbox\.profileForFolder for \/p/,
    );
    assert.match(
      profileProblem({ share: ['gh'] }, 'the user setting X') ?? '',
      /^the user setting X lists share tokens \(gh\) but no profile/,
    );
    assert.equal(profileProblem({ profile: 'work', share: ['gh'] }, 'x'), undefined);
  });
});

describe('the profiles the picker lists', () => {
  it('lists directories whose names the CLI takes, sorted', () => {
    const entries = [
      { name: 'work', directory: true },
      { name: 'a\\b', directory: true },
      { name: 'notes.txt', directory: false },
      { name: 'personal', directory: true },
    ];
    assert.deepEqual(listedProfiles(entries), ['personal', 'work']);
  });

  it('lists at most MAX_LISTED_PROFILES', () => {
    const many = Array.from({ length: MAX_LISTED_PROFILES + 50 }, (_, i) => ({ name: `p${String(i).padStart(4, '0')}`, directory: true }));
    assert.equal(listedProfiles(many).length, MAX_LISTED_PROFILES);
  });

  it("puts a profile's credentials under ~/.toolbox/profiles/<name>", () => {
    assert.equal(profileRoot('/home/u/', 'work'), '/home/u/.toolbox/profiles/work');
  });
});

describe('which profile a container has', () => {
  const mountsOf = (create: { HostConfig: { Binds: string[] } }) =>
    create.HostConfig.Binds.map((b) => {
      const [Source, Destination, mode] = b.split(':');
      return { Type: 'bind', Source, Destination, RW: mode !== 'ro' };
    });
  const plan = (profile?: string, share: string[] = []) =>
    planSession(
      {
        workspace: '/home/u/proj',
        config: DEFAULT_CONFIG,
        peer: false,
        image: 'img',
        names: objectNames(),
        ...(profile !== undefined ? { profile, share } : {}),
      },
      { uid: 1000, gid: 1000, home: HOME, platform: 'linux', pathExists: () => false },
    ).plan.create;

  it('reads our label', () => {
    const create = plan('work');
    assert.equal(containerProfile(create.Labels, mountsOf(create), HOME), 'work');
  });

  it('reads a container the CLI made (no label) from the profile root its mounts come from, shares and all', () => {
    const create = plan('client-a', ['gh', 'cf', 'claude']);
    assert.equal(containerProfile({}, mountsOf(create), HOME), 'client-a');
  });

  it('says nothing for the default root, a mounts_root elsewhere, or no mounts', () => {
    const create = plan();
    assert.equal(containerProfile(create.Labels, mountsOf(create), HOME), undefined);
    const moved = mountsOf(plan()).map((m) => ({ ...m, Source: m.Source!.replace('/home/u/.toolbox/', '/data/tb/') }));
    assert.equal(containerProfile({}, moved, HOME), undefined);
    assert.equal(containerProfile(undefined, undefined, HOME), undefined);
  });

  it('ignores a label no profile could have, and falls back to the mounts', () => {
    const create = plan('work');
    assert.equal(containerProfile({ [LABELS.profile]: '../../etc' }, mountsOf(create), HOME), 'work');
    assert.equal(containerProfile({ [LABELS.profile]: '' }, [], HOME), undefined);
  });
});

/* eslint-disable no-control-regex -- the hostile text is made of control characters */
describe('the Workspaces view shows the profile, as plain text', () => {
  it('in the description and the tooltip', () => {
    const c = containerSummary({ profile: 'work' });
    assert.equal(containerDescription({ container: c, inThisWindow: true }), 'running · profile work · peer on');
    assert.match(
      containerTooltip({ container: c, inThisWindow: true }),
      /^Profile: work \(its credentials come from ~\/\.toolbox\/profiles\/work, not ~\/\.toolbox\)$/m,
    );
    assert.equal(containerDescription({ container: containerSummary(), inThisWindow: true }), 'running · peer on');
    assert.doesNotMatch(containerTooltip({ container: containerSummary(), inThisWindow: true }), /Profile:/);
  });

  it('a hostile profile text stays one bounded line, without escapes or bidi controls', () => {
    const c = containerSummary({ profile: `evil\x1b]8;;https://x\x07\u202eline\nbreak${'y'.repeat(500)}` });
    const d = containerDescription({ container: c, inThisWindow: true });
    assert.doesNotMatch(d, /[\x1b\x07\u202e\n]/);
    assert.ok(d.length < 120, d);
    const tip = containerTooltip({ container: c, inThisWindow: true });
    const line = tip.split('\n').find((l) => l.startsWith('Profile:'))!;
    assert.doesNotMatch(line, /[\x1b\x07\u202e]/);
    assert.ok(line.length < 250, line);
  });
});

/* eslint-enable no-control-regex */

describe('the profile picker (Open Toolbox Shell with Profile…)', () => {
  installVscodeLite();
  const { profilePickRows, validateNewProfile } =
    // eslint-disable-next-line @typescript-eslint/no-require-imports
    require('../../extension/src/ui/shells/openShellWithProfile') as typeof import('../../extension/src/ui/shells/openShellWithProfile');
  const dir = '/home/u/.toolbox/profiles';

  it("lists the folder's profile first, then the others, no profile, and New Profile…", () => {
    const rows = profilePickRows({ dir, existing: ['personal', 'work'], folder: { profile: 'work', share: ['gh'] } });
    assert.deepEqual(
      rows.map((r) => [r.choice, r.profile]),
      [
        ['profile', 'work'],
        ['profile', 'personal'],
        ['none', undefined],
        ['new', undefined],
      ],
    );
    assert.equal(rows[0]!.description, "this folder's profile · shares gh with the default");
    assert.equal(rows[2]!.description, undefined);
  });

  it('marks no profile when the folder has none, and lists a remembered profile whose directory is gone', () => {
    const none = profilePickRows({ dir, existing: ['work'], folder: { share: [] } });
    assert.equal(none[0]!.choice, 'none');
    assert.equal(none[0]!.description, "this folder's profile");
    const gone = profilePickRows({ dir, existing: [], folder: { profile: 'old', share: [] } });
    assert.equal(gone[0]!.profile, 'old');
    assert.match(gone[0]!.detail ?? '', /not made yet: every CLI starts logged out/);
  });

  it("escapes a name's $( so VS Code draws no icon", () => {
    const rows = profilePickRows({ dir, existing: ['$(alert) x'], folder: { share: [] } });
    const row = rows.find((r) => r.profile === '$(alert) x')!;
    assert.equal(row.label, '$(account) \\$(alert) x');
  });

  it('checks a new name as the CLI does, and says what an open makes', () => {
    assert.match(String(validateNewProfile('a/b', [], dir)), /Invalid profile name/);
    const fresh = validateNewProfile('client', ['work'], dir) as { message: string };
    assert.match(fresh.message, /Creates \/home\/u\/\.toolbox\/profiles\/client \(mode 0700\)/);
    const known = validateNewProfile('work', ['work'], dir) as { message: string };
    assert.match(known.message, /work exists/);
  });
});

describe("the folder's profile is read from the User settings only (docs/decisions/0054)", () => {
  installVscodeLite();
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const { vscodeSettings } = require('../../extension/src/backend/settings') as typeof import('../../extension/src/backend/settings');

  it("ignores a workspace or folder value (the project's .vscode/settings.json), and writes the User settings", async () => {
    const original = vscodeLite.workspace.getConfiguration;
    const writes: Array<{ key: string; value: unknown; target: unknown }> = [];
    const user = { '/home/u/proj': { profile: 'personal' } };
    // What a container wrote into its folder's .vscode/settings.json: another account's profile.
    const project = { '/home/u/proj': { profile: 'work', share: ['gh'] } };
    (vscodeLite.workspace as { getConfiguration: unknown }).getConfiguration = () => ({
      get: <T>(_k: string, d?: T) => d,
      inspect: (k: string) =>
        k === 'profileForFolder' ? { globalValue: user, workspaceValue: project, workspaceFolderValue: project } : undefined,
      update: async (key: string, value: unknown, target: unknown) => void writes.push({ key, value, target }),
    });
    try {
      const settings = vscodeSettings();
      assert.deepEqual(settings.profile('/home/u/proj'), { profile: 'personal', share: [] });
      assert.deepEqual(settings.profile('/home/u/other'), { share: [] });
      await settings.setProfile('/home/u/other', { profile: 'client', share: [] });
      assert.deepEqual(writes, [{ key: 'profileForFolder', value: { ...user, '/home/u/other': { profile: 'client' } }, target: 1 }]);
    } finally {
      (vscodeLite.workspace as { getConfiguration: unknown }).getConfiguration = original;
    }
  });

  it('is contributed with machine scope (VS Code never takes it from a workspace)', () => {
    const pkg = JSON.parse(readFileSync(join(__dirname, '../../../package.json'), 'utf8')) as {
      contributes: {
        configuration: Array<{ properties: Record<string, { scope?: string }> }> | { properties: Record<string, { scope?: string }> };
      };
    };
    const sections = Array.isArray(pkg.contributes.configuration) ? pkg.contributes.configuration : [pkg.contributes.configuration];
    const setting = sections.map((c) => c.properties['toolbox.profileForFolder']).find(Boolean);
    assert.equal(setting?.scope, 'machine');
  });
});
