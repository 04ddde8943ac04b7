import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import {
  cleanPath,
  containerHostname,
  namedShellName,
  sanitizeShellName,
  workspaceContainerName,
  workspaceSeed,
  workspaceSlug,
} from '../../extension/src/plan/naming';
import { objectNames } from '../../extension/src/contract/objects';
import { itEach } from '../support/cases';

// Expected hashes are computed here, from seed strings written out literally, so the test does
// not share the seed-building code it checks.
const h8 = (seed: string) => createHash('sha256').update(seed, 'utf8').digest('hex').slice(0, 8);
const names = objectNames();

describe('workspace container names', () => {
  const cases: Array<{
    what: string;
    path: string;
    opts: { profile?: string; share?: string[]; peer: boolean };
    slug: string;
    seed: string;
  }> = [
    {
      what: 'peer on (the default) hashes the path plus an empty profile and the peer fold',
      path: '/home/u/proj',
      opts: { peer: true },
      slug: 'proj',
      seed: '/home/u/proj\x00profile=\x00peer=1',
    },
    {
      what: 'peer off hashes the bare path (the legacy seed)',
      path: '/home/u/proj',
      opts: { peer: false },
      slug: 'proj',
      seed: '/home/u/proj',
    },
    {
      what: 'a profile folds its name and the sorted share set with bridge',
      path: '/home/u/proj',
      opts: { profile: 'work', share: ['gh', 'docker'], peer: false },
      slug: 'proj',
      seed: '/home/u/proj\x00profile=work\x00share=bridge,docker,gh',
    },
    {
      what: 'a profile without share tokens still carries bridge, then the peer fold',
      path: '/home/u/proj',
      opts: { profile: 'work', peer: true },
      slug: 'proj',
      seed: '/home/u/proj\x00profile=work\x00share=bridge\x00peer=1',
    },
    {
      what: 'share tokens without a profile are ignored',
      path: '/home/u/proj',
      opts: { share: ['gh'], peer: false },
      slug: 'proj',
      seed: '/home/u/proj',
    },
    {
      what: 'uppercase and punctuation runs become single dashes',
      path: '/srv/My Project__V2',
      opts: { peer: false },
      slug: 'my-project-v2',
      seed: '/srv/My Project__V2',
    },
    {
      what: 'dots in the basename become dashes and outer dashes are trimmed',
      path: '/srv/.dotfiles.d.',
      opts: { peer: false },
      slug: 'dotfiles-d',
      seed: '/srv/.dotfiles.d.',
    },
    {
      what: 'non-ASCII letters become dashes, except İ which Go lowercases to i',
      path: '/srv/İstanbul-café',
      opts: { peer: false },
      slug: 'istanbul-caf',
      seed: '/srv/İstanbul-café',
    },
    {
      what: 'a basename with no letters or digits falls back to root',
      path: '/srv/___',
      opts: { peer: false },
      slug: 'root',
      seed: '/srv/___',
    },
    {
      what: 'the filesystem root is named root',
      path: '/',
      opts: { peer: true },
      slug: 'root',
      seed: '/\x00profile=\x00peer=1',
    },
    {
      what: 'the path is cleaned before hashing (trailing slash, //, . and ..)',
      path: '/home//u/./x/../proj/',
      opts: { peer: false },
      slug: 'proj',
      seed: '/home/u/proj',
    },
    {
      what: 'a long basename is cut to 46 characters',
      path: `/w/${'a'.repeat(60)}`,
      opts: { peer: false },
      slug: 'a'.repeat(46),
      seed: `/w/${'a'.repeat(60)}`,
    },
    {
      what: 'a cut that ends in a dash loses the trailing dashes',
      path: `/w/${'b'.repeat(45)}..${'c'.repeat(10)}`,
      opts: { peer: false },
      slug: 'b'.repeat(45),
      seed: `/w/${'b'.repeat(45)}..${'c'.repeat(10)}`,
    },
  ];

  for (const c of cases) {
    it(c.what, () => {
      assert.equal(workspaceSeed(c.path, c.opts), c.seed);
      assert.equal(workspaceContainerName(c.path, c.opts, names), `toolbox-${c.slug}-${h8(c.seed)}`);
    });
  }

  it('never exceeds 63 characters, and a 46-character slug reaches exactly 63', () => {
    const name = workspaceContainerName(`/w/${'z'.repeat(200)}`, { peer: true }, names);
    assert.equal(name.length, 63);
    assert.equal(name, `toolbox-${'z'.repeat(46)}-${h8(`/w/${'z'.repeat(200)}\x00profile=\x00peer=1`)}`);
  });

  it('keeps the full slug for the remote-control prefix, uncut', () => {
    assert.equal(workspaceSlug(`/w/${'a'.repeat(60)}`), 'a'.repeat(60));
  });

  it('gives the peer and non-peer sessions of one workspace different containers', () => {
    assert.notEqual(
      workspaceContainerName('/home/u/proj', { peer: true }, names),
      workspaceContainerName('/home/u/proj', { peer: false }, names),
    );
  });

  it('gives the same container for share tokens in any order', () => {
    assert.equal(
      workspaceContainerName('/p', { profile: 'w', share: ['gh', 'docker'], peer: true }, names),
      workspaceContainerName('/p', { profile: 'w', share: ['docker', 'gh'], peer: true }, names),
    );
  });

  it('uses the namespace prefix of the given object names', () => {
    assert.equal(
      workspaceContainerName('/home/u/proj', { peer: false }, objectNames('tbxtabc123')),
      `tbxtabc123-proj-${h8('/home/u/proj')}`,
    );
  });

  it('refuses a relative workspace path with a sentence saying why', () => {
    assert.throws(() => workspaceContainerName('proj', { peer: true }, names), /not absolute/);
  });

  it('refuses a profile that cannot be a directory name', () => {
    for (const profile of ['', '..', 'a/b']) {
      assert.throws(() => workspaceContainerName('/p', { profile, peer: true }, names), /Invalid profile name/);
    }
  });
});

describe('named shell names', () => {
  const cases: Array<{ input: string; profile?: string; peer: boolean; want: string }> = [
    { input: 'infra', peer: false, want: 'toolbox-named-infra' },
    { input: 'infra', peer: true, want: 'toolbox-named-infra.peer' },
    { input: '  Infra ', peer: false, want: 'toolbox-named-infra' },
    { input: 'My Shell!', peer: false, want: 'toolbox-named-my-shell' },
    { input: 'infra', profile: 'Work', peer: false, want: 'toolbox-named-infra-work' },
    { input: 'infra', profile: 'work', peer: true, want: 'toolbox-named-infra-work.peer' },
    { input: 'infra-peer', peer: false, want: 'toolbox-named-infra-peer' },
    { input: 'infra.peer', peer: false, want: 'toolbox-named-infra-peer' },
    { input: 'deadbeef1', peer: false, want: 'toolbox-named-deadbeef1' },
    { input: 'x'.repeat(49), peer: true, want: `toolbox-named-${'x'.repeat(49)}.peer` },
  ];
  for (const c of cases) {
    it(`names "${c.input}"${c.profile ? ` under profile ${c.profile}` : ''} with peer ${c.peer ? 'on' : 'off'} ${c.want}`, () => {
      assert.equal(namedShellName(c.input, { profile: c.profile, peer: c.peer }, names), c.want);
    });
  }

  it('never puts infra with peer on into the container of infra-peer or infra.peer with peer off', () => {
    const on = namedShellName('infra', { peer: true }, names);
    assert.notEqual(on, namedShellName('infra-peer', { peer: false }, names));
    assert.notEqual(on, namedShellName('infra.peer', { peer: false }, names));
  });

  it('rejects a sanitized name that looks like an 8-hex workspace hash', () => {
    assert.throws(() => namedShellName('DEADBEEF', { peer: false }, names), /looks like a workspace hash/);
    assert.throws(() => namedShellName('-0123abcd-', { peer: true }, names), /looks like a workspace hash/);
  });

  it('rejects a sanitized name over 49 characters instead of truncating it', () => {
    assert.throws(() => namedShellName('y'.repeat(50), { peer: false }, names), /too long.*limit is 49/);
  });

  it('rejects a name with no letters or digits', () => {
    assert.throws(() => namedShellName(' -- ', { peer: false }, names), /no letters or digits/);
  });

  it('sanitizes like upstream SanitizeShellName', () => {
    assert.equal(sanitizeShellName('  --Hello__World--  '), 'hello-world');
    assert.equal(sanitizeShellName(''), '');
  });
});

describe('cleanPath follows Go filepath.Clean', () => {
  itEach(
    (input, want) => `cleans "${input}" to "${want}"`,
    (input, want) => assert.equal(cleanPath(input), want),
    [
      ['', '.'],
      ['/', '/'],
      ['//', '/'],
      ['/a/b/', '/a/b'],
      ['/a//b/./c', '/a/b/c'],
      ['/a/b/../c', '/a/c'],
      ['/../a', '/a'],
      ['/a/../..', '/'],
      ['a/../..', '..'],
      ['./a', 'a'],
      ['a/..', '.'],
      ['../../x', '../../x'],
    ],
  );
});

describe('containerHostname (issue 13, item 10)', () => {
  const label = /^[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?$/;
  it('keeps a container name that already is one DNS label', () => {
    assert.equal(containerHostname('toolbox-proj-0a1b2c3d'), 'toolbox-proj-0a1b2c3d');
  });
  it('folds dots, underscores and capitals, trims hyphens at the ends, and caps the label at 63 characters', () => {
    assert.equal(containerHostname('toolbox-named-infra.peer'), 'toolbox-named-infra-peer');
    assert.equal(containerHostname('Tbx_Test.Named'), 'tbx-test-named');
    assert.equal(containerHostname(`toolbox-${'a'.repeat(54)}-b-c`), `toolbox-${'a'.repeat(54)}`);
    for (const name of ['-x-', `${'y'.repeat(62)}.z`, '___', 'a..b', `toolbox-named-${'q'.repeat(49)}.peer`]) {
      assert.match(containerHostname(name), label, name);
      assert.ok(containerHostname(name).length <= 63);
    }
    assert.equal(containerHostname('___'), 'toolbox');
  });
});
