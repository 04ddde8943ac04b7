/**
 * The editor's diagnostics for a .toolbox.yaml text (issue 15, item 13; config/diagnostics.ts):
 * every problem placed on the key or value it is about, unknown keys with "did you mean", as
 * upstream's `config doctor` (configedit/doctor.go, suggest.go).
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { configProblems } from '../../extension/src/config/diagnostics';
import { closest, editDistance } from '../../extension/src/config/suggest';
import { objectNames } from '../../extension/src/contract/objects';
import { INHERIT_HOST_AUTH, patchableMountNames, planMounts, RETIRED_MOUNTS } from '../../extension/src/plan/mounts';

const FILE = '/home/u/proj/.toolbox.yaml';
const ctx = { home: '/home/u', knownMounts: ['claude', 'gh', 'docker-sock'] };
const problems = (text: string) => configProblems(text, FILE, ctx);

describe('configProblems', () => {
  it('marks an unknown top-level key as a warning on the key, with the key it probably meant', () => {
    const [p, ...rest] = problems('pull: never\npeer_mesaging: true\n');
    assert.deepEqual(rest, []);
    assert.deepEqual(p, {
      severity: 'warning',
      message: 'peer_mesaging: unknown key, ignored; did you mean peer_messaging?',
      span: { line: 2, column: 1, endLine: 2, endColumn: 14 },
      replacement: 'peer_messaging',
    });
  });

  it('suggests inside a mounts entry too, and nothing when no key is close', () => {
    const found = problems('colour: blue\nmounts:\n  - name: gh\n    readonyl: true\n');
    assert.deepEqual(
      found.map((p) => [p.severity, p.message, p.span.line, p.span.column]),
      [
        ['warning', 'colour: unknown key, ignored', 1, 1],
        ['warning', 'mounts[0].readonyl: unknown key, ignored; did you mean readonly?', 4, 5],
      ],
    );
  });

  it('marks a value of the wrong type as an error on the value', () => {
    const [p] = problems('# comment\npeer_messaging: maybe\n');
    assert.equal(p?.severity, 'error');
    assert.equal(p?.message, 'peer_messaging: expected true or false, got "maybe"');
    assert.deepEqual(p?.span, { line: 2, column: 17, endLine: 2, endColumn: 22 });
  });

  it('marks a YAML syntax error where the parser found it', () => {
    const [p, ...rest] = problems('pull: never\nmounts:\n  - {name: kube, disabled: true\nenv: {A: "1"}\n');
    assert.deepEqual(rest, []);
    assert.equal(p?.severity, 'error');
    assert.match(p!.message, /^This file is not valid YAML: /);
    assert.ok(p!.span.line >= 3, `line ${p!.span.line}`);
  });

  it('warns that a mounts: entry naming the retired rtk or rtk-data is ignored, on its name', () => {
    const found = configProblems('mounts:\n  - name: rtk\n    disabled: true\n  - {name: rtk-data, source: /x}\n', FILE, {
      ...ctx,
      retiredMounts: RETIRED_MOUNTS,
    });
    assert.deepEqual(
      found.map((p) => [p.severity, p.span.line]),
      [
        ['warning', 2],
        ['warning', 4],
      ],
    );
    assert.match(
      found[0]!.message,
      /^mounts\[0\]\.name: rtk is retired \(the toolbox CLI no longer mounts rtk\), so this entry is ignored\. Remove it\.$/,
    );
  });

  it('says nothing about a mounts: entry without a name (it adds a mount, as upstream)', () => {
    assert.deepEqual(problems('mounts:\n  - {source: /srv/data, target: /data}\n'), []);
  });

  it('warns about the removed tools: block, on its key', () => {
    const [p] = problems('tools:\n  codex: false\n');
    assert.equal(p?.severity, 'warning');
    assert.match(p!.message, /^tools: is no longer supported and is ignored/);
    assert.deepEqual(p?.span, { line: 1, column: 1, endLine: 1, endColumn: 6 });
  });

  it('warns about a mounts: patch that names no default mount, on its name, and not about a new mount', () => {
    const found = problems('mounts:\n  - name: ghh\n    disabled: true\n  - name: data\n    source: /srv/data\n    target: /data\n');
    assert.deepEqual(found.length, 1);
    assert.equal(found[0]!.severity, 'warning');
    assert.match(found[0]!.message, /^mounts\[0\]\.name: no default mount is named ghh, so this entry is ignored; did you mean gh\?/);
    assert.deepEqual(found[0]!.span, { line: 2, column: 11, endLine: 2, endColumn: 14 });
  });

  it('flags a named shell whose path cannot open, on its value, and leaves an absolute one alone', () => {
    const found = problems(
      'shells:\n  infra:\n    path: infra\n  web:\n    path: /srv/web\n  ops:\n    path: ""\n  db:\n    env: {A: "1"}\n',
    );
    assert.deepEqual(
      found.map((p) => [p.severity, p.message, p.span.line, p.span.column]),
      [
        [
          'warning',
          "shells.infra.path: infra is not an absolute path, so opening this named shell is refused. Write the folder's full path, starting with /.",
          3,
          11,
        ],
        ['error', 'shells.ops.path is empty, so this named shell cannot open. Set it to the absolute path of its folder.', 7, 11],
        ['error', 'shells.db.path is empty, so this named shell cannot open. Set it to the absolute path of its folder.', 8, 3],
      ],
    );
  });

  it('finds nothing wrong in a good file, or an empty one', () => {
    assert.deepEqual(problems('pull: never\npeer_messaging: false\nimage:\nenv:\n  A: 1\nshells:\n  web:\n    path: /srv/web\n'), []);
    assert.deepEqual(problems(''), []);
  });
});

describe('closest', () => {
  it('takes the nearest name within two edits, ignoring case, the first on a tie', () => {
    assert.equal(editDistance('peer_mesaging', 'peer_messaging'), 1);
    assert.equal(closest('PEER_MESSAGING', ['pull', 'peer_messaging']), 'peer_messaging');
    assert.equal(closest('pul', ['pull', 'shell']), 'pull');
    assert.equal(closest('colour', ['pull', 'shell']), undefined);
    assert.equal(closest('ab', ['ax', 'ay']), 'ax');
  });
});

describe('patchableMountNames', () => {
  it('lists only names the planner knows, so the editor never warns about a patch an open applies', () => {
    const names = patchableMountNames();
    const plan = planMounts({
      workspace: '/home/u/p',
      home: '/home/u',
      pathExists: () => true,
      userMounts: names.map((name) => ({ name, readonly: true })),
      inheritHostAuth: Object.keys(INHERIT_HOST_AUTH),
      peer: false,
      bridge: { stateDir: '/home/u/.toolbox/toolbox/vscode/x', runDir: '/run/user/1000/toolbox/x' },
      proximo: { caPath: '/home/u/.proximo/ca.pem', hosts: [] },
      names: objectNames(),
    });
    assert.deepEqual(
      plan.warnings.filter((w) => /no default mount/.test(w)),
      [],
    );
    assert.ok(names.includes('docker-sock') && names.includes('bridge-run') && names.includes('proximo-ca'));
  });
});
