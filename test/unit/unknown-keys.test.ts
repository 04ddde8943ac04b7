/**
 * Issue 26, item 10: a typo key in .toolbox.yaml (`peer_mesaging`) gets a quick fix that writes the
 * key it meant (config/diagnostics.ts `replacement`, applied by ui/config/configDiagnostics.ts as
 * `applyFix` does here), and Open Toolbox Shell says once which keys it ignores
 * (config/openIssues.ts `unknownKeys`, ui/config/unknownKeys.ts), the key from the file as plain text.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { applyFix, configProblems } from '../../extension/src/config/diagnostics';
import { issuesForOpen } from '../../extension/src/config/openIssues';
import { parseConfigFile } from '../../extension/src/config/parse';
import { NOTICE_KEYS, noticeFingerprint, quickFixTitle, unknownKeysNotice } from '../../extension/src/ui/config/unknownKeys';

const HOME = '/home/u';
const FILE = '/home/u/proj/.toolbox.yaml';
const ctx = { home: HOME, knownMounts: ['claude', 'gh', 'docker-sock'] };
const problems = (text: string) => configProblems(text, FILE, ctx);
/** The text after every quick fix offered was applied, one after the other (each re-checked). */
function fixAll(text: string): string {
  for (let i = 0; i < 10; i++) {
    const fix = problems(text).find((p) => p.replacement !== undefined);
    if (!fix) return text;
    text = applyFix(text, fix);
  }
  return text;
}

describe('the quick fix for an unknown key (issue 26, item 10)', () => {
  it('renames a misspelt top-level key to the one it meant, and the file then has no problem', () => {
    const text = '# settings\npull: never\npeer_mesaging: false\n';
    const [p] = problems(text);
    assert.equal(p!.replacement, 'peer_messaging');
    const fixed = applyFix(text, p!);
    assert.equal(fixed, '# settings\npull: never\npeer_messaging: false\n');
    assert.deepEqual(problems(fixed), []);
  });

  it('renames a nested key and a quoted one, keeping the value and the indentation', () => {
    assert.equal(fixAll('mounts:\n  - name: gh\n    readonyl: true\n'), 'mounts:\n  - name: gh\n    readonly: true\n');
    assert.equal(fixAll('"PEER_MESAGING": true\n'), 'peer_messaging: true\n');
  });

  it("writes the default mount's name over a misspelt one", () => {
    assert.equal(fixAll('mounts:\n  - name: ghh\n    disabled: true\n'), 'mounts:\n  - name: gh\n    disabled: true\n');
  });

  it('offers no fix when the key it meant is already there (a duplicate key), or when nothing is close', () => {
    const [p] = problems('peer_messaging: true\npeer_mesaging: false\n');
    assert.match(p!.message, /did you mean peer_messaging\?/);
    assert.equal(p!.replacement, undefined);
    assert.equal(problems('colour: blue\n')[0]!.replacement, undefined);
    assert.equal(applyFix('colour: blue\n', problems('colour: blue\n')[0]!), 'colour: blue\n');
  });

  it("titles the fix in our own words and the key it writes (never the file's text)", () => {
    assert.equal(quickFixTitle('peer_messaging'), 'Change to peer_messaging');
  });
});

describe('the notice at open (issue 26, item 10)', () => {
  const keysOf = (text: string, file = FILE) => issuesForOpen(parseConfigFile(text, file, { home: HOME }).issues, HOME).unknownKeys;

  it('lists the unknown keys of an open with the line and the key they probably meant', () => {
    const keys = keysOf('pull: never\npeer_mesaging: false\ncolour: blue\n');
    assert.deepEqual(keys, [
      { file: FILE, key: 'peer_mesaging', line: 2, suggestion: 'peer_messaging' },
      { file: FILE, key: 'colour', line: 3 },
    ]);
    assert.equal(
      unknownKeysNotice(keys, HOME),
      'Toolbox: these keys are not Toolbox settings, so they are ignored and the default applies: ' +
        '“peer_mesaging” (.toolbox.yaml line 2; did you mean peer_messaging?), “colour” (.toolbox.yaml line 3). ' +
        'The Problems panel has the fix.',
    );
    assert.equal(unknownKeysNotice([], HOME), undefined);
    assert.deepEqual(keysOf('pull: never\n'), []);
  });

  it("names the user's own file as ~/.toolbox.yaml, and counts what it does not list", () => {
    const keys = keysOf('a1: 1\na2: 2\na3: 3\na4: 4\na5: 5\n', `${HOME}/.toolbox.yaml`);
    const text = unknownKeysNotice(keys, HOME)!;
    assert.match(text, /^Toolbox: these keys/);
    assert.match(text, /“a1” \(~\/\.toolbox\.yaml line 1\)/);
    assert.equal((text.match(/“/g) ?? []).length, NOTICE_KEYS);
    assert.match(text, /, and 2 more\. The Problems panel has the fix\.$/);
  });

  it('shows a hostile key as one bounded line of plain text', () => {
    const key = `x\u001b]8;;https://evil\u0007[click](https://evil)\n\u202e${'y'.repeat(500)}`;
    const text = unknownKeysNotice([{ file: FILE, key, line: 1 }], HOME)!;
    // eslint-disable-next-line no-control-regex
    assert.doesNotMatch(text, /[\u0000-\u001f\u202e]/);
    assert.doesNotMatch(text, /\]\(/);
    assert.ok(text.length < 300, text);
    assert.match(text, /^Toolbox: this key is not a Toolbox setting/);
  });

  it('names exactly one file content: the same file says nothing new, a changed one does', () => {
    const keys = keysOf('peer_mesaging: false\n');
    const a = noticeFingerprint(keys, new Map([[FILE, 'peer_mesaging: false\n']]));
    assert.equal(a, noticeFingerprint(keys, new Map([[FILE, 'peer_mesaging: false\n']])));
    assert.notEqual(a, noticeFingerprint(keys, new Map([[FILE, 'peer_mesaging: false\n# edited\n']])));
  });
});
