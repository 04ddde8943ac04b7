import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { parseConfigFile, formatIssue } from '../../extension/src/config/parse';
import { parseEnvLayer } from '../../extension/src/config/env';
import { itEach } from '../support/cases';

const FILE = '/home/u/proj/.toolbox.yaml';

/** Join lines so tests can count them; line N of the file is lines[N-1]. */
const yaml = (...lines: string[]) => lines.join('\n') + '\n';

describe('parseConfigFile: valid files', () => {
  it('maps every upstream snake_case key onto the camelCase model', () => {
    const { layer, issues } = parseConfigFile(
      yaml(
        'shell: zsh',
        'agent: codex',
        'image: registry.local/tb:1',
        'registry_mirror: harbor.corp.io/ghcr-proxy',
        'pull: never',
        'mounts_root: ~/work-toolbox',
        'bridge: false',
        'proximo: true',
        'managed_statusline: false',
        'image_reclaim: false',
        'peer_messaging: false',
        'env: {FOO: bar, PORT: 8080}',
        'shells:',
        '  infra:',
        '    path: /srv/infra',
        '    env: {KUBECONFIG: /x}',
        'mounts:',
        '  - {name: ssh, disabled: true}',
        '  - {name: data, source: ~/data, target: /data, readonly: true, create_if_missing: true}',
        'inherit_host_auth: [gh, gcloud]',
        'worktree: {seed: [.env, config/local.yaml]}',
      ),
      FILE,
    );
    assert.deepEqual(issues, []);
    assert.deepEqual(layer, {
      shell: 'zsh',
      agent: 'codex',
      image: 'registry.local/tb:1',
      registryMirror: 'harbor.corp.io/ghcr-proxy',
      pull: 'never',
      mountsRoot: '~/work-toolbox',
      bridge: false,
      proximo: true,
      managedStatusline: false,
      imageReclaim: false,
      peerMessaging: false,
      env: { FOO: 'bar', PORT: '8080' },
      shells: { infra: { path: '/srv/infra', env: { KUBECONFIG: '/x' } } },
      mounts: [
        { name: 'ssh', disabled: true },
        { name: 'data', source: '~/data', target: '/data', readonly: true, createIfMissing: true },
      ],
      inheritHostAuth: ['gh', 'gcloud'],
      worktreeSeed: ['.env', 'config/local.yaml'],
    });
  });

  it('sets only the keys the file writes, so lower layers show through', () => {
    assert.deepEqual(parseConfigFile('pull: always\n', FILE), { layer: { pull: 'always' }, issues: [], keyLines: { pull: 1 } });
  });

  it('treats an empty file, a comments-only file and a key without a value as setting nothing', () => {
    assert.deepEqual(parseConfigFile('', FILE), { layer: {}, issues: [] });
    assert.deepEqual(parseConfigFile('# image: x\n', FILE), { layer: {}, issues: [] });
    assert.deepEqual(parseConfigFile('image:\nbridge:\npull: auto\n', FILE), {
      layer: { pull: 'auto' },
      issues: [],
      keyLines: { image: 1, bridge: 2, pull: 3 },
    });
  });

  it('accepts sdd in any shape without a warning and does not carry it into the model', () => {
    const { layer, issues } = parseConfigFile(yaml('sdd:', '  gsd: true', '  bmad:', '    steps: [[--x]]'), FILE);
    assert.deepEqual(issues, []);
    assert.deepEqual(layer, {});
  });

  it('reads the deprecated browser_bridge as bridge, with a warning on its line', () => {
    const { layer, issues } = parseConfigFile(yaml('pull: auto', 'browser_bridge: false'), FILE);
    assert.equal(layer.bridge, false);
    assert.equal(issues.length, 1);
    assert.equal(issues[0]!.severity, 'warning');
    assert.equal(issues[0]!.key, 'browser_bridge');
    assert.equal(issues[0]!.line, 2);
  });

  it('lets bridge win over browser_bridge when a file has both', () => {
    const { layer } = parseConfigFile(yaml('browser_bridge: false', 'bridge: true'), FILE);
    assert.equal(layer.bridge, true);
  });
});

describe('parseConfigFile: errors name the file, the key and the line', () => {
  it('reports a bad boolean with what was expected and the value written', () => {
    const { layer, issues } = parseConfigFile(yaml('pull: auto', '', 'peer_messaging: maybe'), FILE);
    assert.deepEqual(layer, {});
    assert.deepEqual(issues, [
      {
        severity: 'error',
        source: FILE,
        key: 'peer_messaging',
        line: 3,
        message: 'expected true or false, got "maybe"',
        span: { line: 3, column: 17, endLine: 3, endColumn: 22 },
      },
    ]);
  });

  it('points at a nested list key such as mounts[1].target', () => {
    const { layer, issues } = parseConfigFile(
      yaml('mounts:', '  - name: ssh', '    disabled: true', '  - name: data', '    source: /srv/data', '    target: 42'),
      FILE,
    );
    assert.deepEqual(layer, {});
    assert.equal(issues.length, 1);
    assert.equal(issues[0]!.key, 'mounts[1].target');
    assert.equal(issues[0]!.line, 6);
    assert.equal(issues[0]!.message, 'expected a string, got 42');
  });

  it('reads a mounts: entry without a name, and symlink_from, as upstream does (the planner appends it)', () => {
    const { layer, issues } = parseConfigFile(
      yaml(
        'pull: auto',
        'mounts:',
        '  - source: /srv/data',
        '    target: /data',
        '    readonly: true',
        '  - name: kube',
        '    symlink_from: ~/.kube',
      ),
      FILE,
    );
    assert.deepEqual(issues, []);
    assert.deepEqual(layer.mounts, [
      { source: '/srv/data', target: '/data', readonly: true },
      { name: 'kube', symlinkFrom: '~/.kube' },
    ]);
  });

  it('agent: claude or codex, as upstream; pi is refused on its line', () => {
    assert.equal(parseConfigFile('agent: codex\n', FILE).layer.agent, 'codex');
    const { issues } = parseConfigFile(yaml('pull: auto', 'agent: pi'), FILE);
    assert.deepEqual(
      issues.map((i) => [i.severity, i.key, i.line]),
      [['error', 'agent', 2]],
    );
    assert.match(issues[0]!.message, /expected claude or codex/);
  });

  it('gives a YAML syntax error as one error with its line', () => {
    const { layer, issues } = parseConfigFile(yaml('pull: auto', 'env:', '\tFOO: bar', 'mounts: [1,'), FILE);
    assert.deepEqual(layer, {});
    assert.equal(issues.length, 1);
    assert.equal(issues[0]!.severity, 'error');
    assert.equal(issues[0]!.line, 3);
    assert.match(issues[0]!.message, /^is not valid YAML: Tabs are not allowed/);
  });

  it('reports a duplicated key as a YAML error on the second occurrence', () => {
    const { issues } = parseConfigFile(yaml('pull: auto', 'image: a', 'pull: never'), FILE);
    assert.equal(issues.length, 1);
    assert.equal(issues[0]!.line, 3);
  });

  it('rejects TOOLBOX_* and PWD keys in env, naming the variable and its line', () => {
    const { layer, issues } = parseConfigFile(yaml('env:', '  FOO: bar', '  TOOLBOX_IMAGE: x', '  PWD: /tmp'), FILE);
    assert.deepEqual(layer, {});
    assert.deepEqual(
      issues.map((i) => [i.severity, i.key, i.line]),
      [
        ['error', 'env.TOOLBOX_IMAGE', 3],
        ['error', 'env.PWD', 4],
      ],
    );
    assert.match(issues[0]!.message, /TOOLBOX_\* variables are set by toolbox itself/);
    assert.match(issues[1]!.message, /PWD is reserved/);
  });

  it('reserves exactly PWD and the TOOLBOX_ prefix, case as written (pwd, toolbox_x are other variables), as upstream', () => {
    const { layer, issues } = parseConfigFile(
      yaml('env:', '  pwd: a', '  Pwd: b', '  toolbox_x: c', '  Toolbox_Y: d', '  MY_TOOLBOX_Z: e'),
      FILE,
    );
    assert.deepEqual(issues, []);
    assert.deepEqual(layer.env, { pwd: 'a', Pwd: 'b', toolbox_x: 'c', Toolbox_Y: 'd', MY_TOOLBOX_Z: 'e' });
  });

  it('rejects TOOLBOX_* keys in a named shell env too', () => {
    const { issues } = parseConfigFile(yaml('shells:', '  infra:', '    env:', '      TOOLBOX_X: 1'), FILE);
    assert.deepEqual(
      issues.map((i) => [i.key, i.line]),
      [['shells.infra.env.TOOLBOX_X', 4]],
    );
  });

  it('loads a relative or empty shell path, as upstream does: only opening that shell is refused (plan/namedShell.ts)', () => {
    const { layer, issues } = parseConfigFile('shells: {infra: {path: infra}, ops: {path: ""}, web: {path: /srv/web}}\n', FILE);
    assert.deepEqual(issues, []);
    assert.deepEqual(layer.shells, { infra: { path: 'infra', env: {} }, ops: { path: '', env: {} }, web: { path: '/srv/web', env: {} } });
  });

  it('rejects values upstream rejects: bare ~ mounts_root, mirror with a scheme, bash, ../ seed', () => {
    const cases: Array<[string, string, RegExp]> = [
      ['mounts_root: "~"', 'mounts_root', /bare "~"/],
      ['mounts_root: ./state', 'mounts_root', /expected an absolute path or ~\/sub/],
      ['registry_mirror: https://harbor.corp.io', 'registry_mirror', /without a scheme/],
      ['shell: bash', 'shell', /expected zsh .*got "bash"/],
      ['pull: sometimes', 'pull', /expected auto, always or never, got "sometimes"/],
      ['worktree: {seed: [../secrets]}', 'worktree.seed[0]', /relative to the repository/],
      ['mounts: {name: x}', 'mounts', /expected a list of mounts, got a mapping/],
    ];
    for (const [text, key, message] of cases) {
      const { layer, issues } = parseConfigFile(text + '\n', FILE);
      assert.deepEqual(layer, {}, text);
      assert.equal(issues.length, 1, text);
      assert.equal(issues[0]!.key, key, text);
      assert.equal(issues[0]!.line, 1, text);
      assert.match(issues[0]!.message, message, text);
    }
  });

  it('accepts mounts_root as an absolute path or ~/sub', () => {
    assert.equal(parseConfigFile('mounts_root: /opt/state\n', FILE).layer.mountsRoot, '/opt/state');
    assert.equal(parseConfigFile('mounts_root: ~/tb\n', FILE).layer.mountsRoot, '~/tb');
  });

  // Issue 11, finding 10, narrowed by issue 29 to upstream's rule plus the home itself
  // (docs/decisions/0052-newest-upstream-config.md): a root above HOME is accepted, as upstream.
  describe('mounts_root equal to HOME', () => {
    const home = '/home/u';
    for (const value of ['/home/u', '/home/u/', '/home/u/../u', '/home/u/.toolbox/..', '"~/."', '~/sub/..']) {
      it(`refuses ${value} with the file, line and a way out`, () => {
        const { layer, issues } = parseConfigFile(yaml('pull: never', `mounts_root: ${value}`), FILE, { home });
        assert.deepEqual(layer, {}, 'a file with an error contributes nothing');
        assert.equal(issues.length, 1);
        assert.equal(issues[0]!.severity, 'error');
        assert.match(issues[0]!.message, /is your home directory/);
        assert.match(
          formatIssue(issues[0]!, home),
          /^~\/proj\/\.toolbox\.yaml:2: mounts_root: .*would mount your own agent homes \(~\/\.claude, ~\/\.codex, ~\/\.pi\) read-write .*Use a directory of its own, such as ~\/\.toolbox/,
        );
      });
    }
    for (const value of ['/', '/home', '/home/u/.toolbox', '/home/u/tb', '/home/uv', '/opt/state', '~/tb', '/home/u-other']) {
      it(`accepts ${value}`, () => {
        const { issues } = parseConfigFile(`mounts_root: ${value}\n`, FILE, { home });
        assert.deepEqual(issues, []);
      });
    }
    it('without a known home refuses none of them', () => {
      assert.deepEqual(parseConfigFile('mounts_root: /\n', FILE).issues, []);
      assert.deepEqual(parseConfigFile('mounts_root: /home/u\n', FILE).issues, []);
    });
  });
});

describe('parseConfigFile: unknown keys', () => {
  it('warns about each unknown key with its line and ignores it, keeping the rest of the file', () => {
    const { layer, issues } = parseConfigFile(
      yaml('pull: never', 'colour: blue', 'mounts:', '  - name: data', '    target: /data', '    mode: ro'),
      FILE,
    );
    assert.deepEqual(layer, { pull: 'never', mounts: [{ name: 'data', target: '/data' }] });
    assert.deepEqual(
      issues.map((i) => [i.severity, i.key, i.line, i.message]),
      [
        ['warning', 'colour', 2, 'unknown key, ignored'],
        ['warning', 'mounts[0].mode', 6, 'unknown key, ignored'],
      ],
    );
  });

  it('still drops the whole file when it also has an error', () => {
    const { layer, issues } = parseConfigFile(yaml('pull: never', 'colour: blue', 'bridge: 3'), FILE);
    assert.deepEqual(layer, {});
    assert.deepEqual(
      issues.map((i) => i.severity),
      ['warning', 'error'],
    );
  });
});

describe('parseConfigFile: garbage never throws', () => {
  itEach<[string, string]>(
    (name) => `returns issues instead of throwing for ${name}`,
    (name, text) => {
      const result = parseConfigFile(text, FILE);
      assert.deepEqual(result.layer, {}, name);
      if (name === 'null') {
        assert.deepEqual(result.issues, [], 'a null document is an empty file');
      } else {
        assert.ok(
          result.issues.some((i) => i.severity === 'error' && i.source === FILE),
          name,
        );
      }
    },
    [
      ['binary junk', '\u0000\u0001\u00ff\ufffd\u0007:::\n  - : [\n\u0000'],
      ['a list at top level', '- pull: auto\n- image: x\n'],
      ['a huge number', 'pull: 1e400\nimage: 99999999999999999999999999\n'],
      ['null', 'null\n'],
      ['a bare scalar', 'just some words\n'],
      ['an unresolved alias', 'image: *nowhere\n'],
      [
        'an alias bomb',
        'a: &a [x, x, x, x, x, x, x, x, x]\nb: &b [*a, *a, *a, *a, *a, *a, *a, *a, *a]\nc: &c [*b, *b, *b, *b, *b, *b, *b, *b, *b]\nd: [*c, *c, *c, *c, *c, *c, *c, *c, *c]\n',
      ],
      ['deep nesting', '['.repeat(5000) + ']'.repeat(5000)],
      ['two documents', 'pull: auto\n---\npull: never\n'],
    ],
  );

  it('treats __proto__ and constructor as unknown keys without polluting any prototype', () => {
    const { layer, issues } = parseConfigFile('__proto__: {pull: never}\nconstructor: 1\n', FILE);
    assert.deepEqual(layer, {});
    assert.deepEqual(
      issues.map((i) => [i.severity, i.key, i.line]),
      [
        ['warning', '__proto__', 1],
        ['warning', 'constructor', 2],
      ],
    );
    assert.equal(({} as Record<string, unknown>).pull, undefined);
  });

  it('says a top-level list must be a mapping, on line 1', () => {
    const { issues } = parseConfigFile('- pull: auto\n', FILE);
    assert.deepEqual(
      issues.map((i) => [i.key, i.line, i.message]),
      [['', 1, 'expected a mapping of configuration keys at the top level, got a list']],
    );
  });

  it('shows a huge number as written rather than as null', () => {
    const { issues } = parseConfigFile('pull: 1e400\n', FILE);
    assert.equal(issues[0]!.message, 'expected auto, always or never, got Infinity');
  });
});

describe('formatIssue', () => {
  it('prints file:line: key: message with HOME shortened to ~', () => {
    const text = '# my toolbox config\n'.repeat(11) + 'peer_messaging: maybe\n';
    const { issues } = parseConfigFile(text, '/home/u/.toolbox.yaml');
    assert.equal(formatIssue(issues[0]!, '/home/u'), '~/.toolbox.yaml:12: peer_messaging: expected true or false, got "maybe"');
  });

  it('leaves out the line and key when an issue has none', () => {
    assert.equal(
      formatIssue({ severity: 'error', source: '/srv/p/.toolbox.yaml', key: '', message: 'could not be read' }, '/home/u'),
      '/srv/p/.toolbox.yaml: could not be read',
    );
    assert.equal(
      formatIssue({ severity: 'error', source: 'environment', key: 'TOOLBOX_PULL', message: 'expected auto' }),
      'environment: TOOLBOX_PULL: expected auto',
    );
  });

  it('does not shorten a path that only shares a prefix with HOME', () => {
    const issue = { severity: 'error' as const, source: '/home/user2/.toolbox.yaml', key: '', message: 'x' };
    assert.equal(formatIssue(issue, '/home/user'), '/home/user2/.toolbox.yaml: x');
  });
});

describe('parseConfigFile: the removed tools: block', () => {
  it('is a warning with its line, in any shape, and the rest of the file applies', () => {
    for (const block of ['tools: {codex: false, zsh: false}', 'tools: {codex: "no"}', 'tools: [gh]', 'tools: 3']) {
      const { layer, issues } = parseConfigFile(yaml('pull: never', block), FILE);
      assert.deepEqual(layer, { pull: 'never' }, block);
      assert.deepEqual(
        issues.map((i) => [i.severity, i.key, i.line]),
        [['warning', 'tools', 2]],
        block,
      );
      assert.match(issues[0]!.message, /is no longer supported and is ignored/, block);
    }
  });
});

describe('parseEnvLayer', () => {
  it("reads upstream's five bound TOOLBOX_* variables and no others (TOOLBOX_PROXIMO, TOOLBOX_MOUNTS_ROOT are not bound)", () => {
    const { layer, issues } = parseEnvLayer({
      TOOLBOX_IMAGE: 'reg.local/tb:2',
      TOOLBOX_REGISTRY_MIRROR: 'mirror.local:5000',
      TOOLBOX_PULL: 'always',
      TOOLBOX_MOUNTS_ROOT: '/opt/tb',
      TOOLBOX_BRIDGE: 'F',
      TOOLBOX_PROXIMO: 'false',
      TOOLBOX_PEER_MESSAGING: '0',
    });
    assert.deepEqual(issues, []);
    assert.deepEqual(layer, {
      image: 'reg.local/tb:2',
      registryMirror: 'mirror.local:5000',
      pull: 'always',
      bridge: false,
      peerMessaging: false,
    });
  });

  it("parses booleans as Go's strconv.ParseBool: its twelve words only, case as written, no trimming", () => {
    for (const [text, value] of [
      ['1', true],
      ['t', true],
      ['T', true],
      ['TRUE', true],
      ['true', true],
      ['True', true],
      ['0', false],
      ['f', false],
      ['F', false],
      ['FALSE', false],
      ['false', false],
      ['False', false],
    ] as const) {
      assert.deepEqual(
        parseEnvLayer({ TOOLBOX_PEER_MESSAGING: text }),
        { layer: { peerMessaging: value }, issues: [], variables: { peerMessaging: 'TOOLBOX_PEER_MESSAGING' } },
        text,
      );
    }
    for (const text of ['yes', 'no', 'on', 'OFF', 'tRUE', ' true', 'true ', '2', 'y']) {
      const { layer, issues } = parseEnvLayer({ TOOLBOX_BRIDGE: text });
      assert.deepEqual(layer, {}, text);
      assert.equal(issues.length, 1, text);
      assert.equal(issues[0]!.severity, 'error', text);
    }
  });

  it('treats an empty variable as unset and ignores unrelated TOOLBOX_* names', () => {
    assert.deepEqual(
      parseEnvLayer({ TOOLBOX_IMAGE: '', TOOLBOX_MANAGED_STATUSLINE: 'whatever', TOOLBOX_HOST_WORKSPACE: '/w', PATH: '/bin' }),
      { layer: {}, issues: [], variables: {} },
    );
  });

  it('reports an invalid value with source environment and the variable name, and skips it', () => {
    const { layer, issues } = parseEnvLayer({ TOOLBOX_PULL: 'sometimes', TOOLBOX_BRIDGE: 'maybe', TOOLBOX_IMAGE: 'ok:1' });
    assert.deepEqual(layer, { image: 'ok:1' });
    assert.deepEqual(
      issues.map((i) => [i.severity, i.source, i.key]),
      [
        ['error', 'environment', 'TOOLBOX_PULL'],
        ['error', 'environment', 'TOOLBOX_BRIDGE'],
      ],
    );
    assert.match(issues[0]!.message, /^expected auto, always or never, got "sometimes"/);
    assert.match(issues[1]!.message, /^expected true or false \(or 1\/0, t\/f, as the toolbox CLI reads it\), got "maybe"/);
  });
  it('warns once about the removed TOOLBOX_TOOLS_* switches and reads nothing from them', () => {
    const { layer, issues } = parseEnvLayer({ TOOLBOX_TOOLS_CODEX: 'false', TOOLBOX_TOOLS_GH: '0', TOOLBOX_PULL: 'never' });
    assert.deepEqual(layer, { pull: 'never' });
    assert.deepEqual(
      issues.map((i) => [i.severity, i.source, i.key]),
      [['warning', 'environment', 'TOOLBOX_TOOLS_CODEX, TOOLBOX_TOOLS_GH']],
    );
  });
});
