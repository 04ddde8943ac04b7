import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { crc32, deflateRawSync } from 'node:zlib';
import { repoRoot } from '../support/image';

const tmp = mkdtempSync(join(tmpdir(), 'toolbox-workflows-'));
after(() => rmSync(tmp, { recursive: true, force: true }));

/** Runs one of the repository's scripts with node, in `cwd`. */
function script(name: string, args: string[], cwd = repoRoot()) {
  const r = spawnSync(process.execPath, [join(repoRoot(), 'scripts', name), ...args], { cwd, encoding: 'utf8', timeout: 60_000 });
  assert.equal(r.error, undefined);
  return r;
}

function writeTmp(name: string, text: string): string {
  const file = join(tmp, name);
  writeFileSync(file, text);
  return file;
}

describe('scripts/check-workflows.mjs (actionlint, run by npm run lint)', () => {
  it("passes the repository's own workflows", () => {
    const r = script('check-workflows.mjs', []);
    assert.equal(r.status, 0, r.stdout + r.stderr);
    const count = readdirSync(join(repoRoot(), '.github', 'workflows')).filter((f) => /\.ya?ml$/.test(f)).length;
    assert.ok(count >= 2);
    assert.match(r.stdout, new RegExp(`^check-workflows: ${count} workflow file\\(s\\) checked with actionlint, 0 problem\\(s\\)$`, 'm'));
  });

  it('refuses a broken workflow, naming each problem with its line', () => {
    const broken = writeTmp(
      'broken.yml',
      [
        'name: Broken',
        'on:',
        '  pusj:', // 3: not an event
        '    branches: [main]',
        'jobs:',
        '  no-runner:', // 6: no runs-on
        '    steps:',
        '      - run: echo hi',
        '  publish:', // 9: needs a job that does not exist
        '    runs-on: ubuntu-24.04',
        '    needs: nowhere',
        '    steps:',
        "      - if: ${{ secrets.VSCE_PAT != '' }}", // 13: secrets cannot be read in if:
        '        run: npx vsce publish',
        '      - uses: actions/upload-artifact@v4',
        '        with:',
        '          nmae: vsix', // 17: no such input (and path is missing)
        '',
      ].join('\n'),
    );
    const r = script('check-workflows.mjs', [broken]);
    assert.equal(r.status, 1, r.stdout + r.stderr);
    const lines = r.stdout.trim().split('\n');
    const at = (line: number, re: RegExp) =>
      assert.ok(
        lines.some((l) => l.includes(`broken.yml:${line}:`) && re.test(l)),
        `no problem matching ${re} on line ${line}:\n${r.stdout}`,
      );
    at(3, /unknown Webhook event "pusj"/);
    at(6, /"runs-on" section is missing in job "no-runner"/);
    at(9, /needs job "nowhere" which does not exist/);
    at(13, /context "secrets" is not allowed here/);
    at(17, /input "nmae" is not defined in action "actions\/upload-artifact@v4"/);
    assert.match(r.stderr, /1 workflow file\(s\) checked with actionlint, [1-9]\d* problem\(s\)/);
  });

  it('refuses a file that is not YAML at all, and a directory with no workflow', () => {
    const r = script('check-workflows.mjs', [writeTmp('garbage.yml', 'on: [push\njobs: {\n')]);
    assert.equal(r.status, 1, r.stdout + r.stderr);
    assert.match(r.stdout, /garbage\.yml:\d+:\d+: .*\[syntax-check\]/);
    const empty = mkdtempSync(join(tmp, 'empty-'));
    const e = script('check-workflows.mjs', [empty]);
    assert.equal(e.status, 1);
    assert.match(e.stderr, /no workflow file/);
  });
});

describe('scripts/release.mjs (what release.yml and the release dry run check)', () => {
  const manifest = (version: string) => writeTmp(`package-${version}.json`, JSON.stringify({ name: 'toolbox-vscode', version }));
  const checkTag = (tag: string, version: string) => script('release.mjs', ['check-tag', tag, '--package', manifest(version)]);

  it('check-tag: a tag naming package.json version prints its version and channel for $GITHUB_OUTPUT', () => {
    const even = checkTag('v0.2.0', '0.2.0');
    assert.equal(even.status, 0, even.stderr);
    assert.equal(even.stdout, 'version=0.2.0\nprerelease=false\n');
    assert.match(even.stderr, /v0\.2\.0 is 0\.2\.0, a release \(even minor\)/);
    const odd = checkTag('v1.3.12', '1.3.12');
    assert.equal(odd.status, 0, odd.stderr);
    assert.equal(odd.stdout, 'version=1.3.12\nprerelease=true\n');
    assert.match(odd.stderr, /a pre-release \(odd minor\)/);
    assert.equal(checkTag('v2.10.0', '2.10.0').stdout, 'version=2.10.0\nprerelease=false\n');
  });

  it("check-tag: the repository's own package.json is read when no --package is given", () => {
    const { version } = JSON.parse(readFileSync(join(repoRoot(), 'package.json'), 'utf8')) as { version: string };
    const r = script('release.mjs', ['check-tag', `v${version}`]);
    assert.equal(r.status, 0, r.stderr);
    assert.match(r.stdout, new RegExp(`^version=${version.replace(/\./g, '\\.')}\nprerelease=(true|false)\n$`));
  });

  it('check-tag: a tag that does not match package.json fails, saying both versions', () => {
    const r = checkTag('v0.2.1', '0.2.0');
    assert.equal(r.status, 1);
    assert.equal(r.stdout, '', 'nothing for $GITHUB_OUTPUT');
    assert.match(r.stderr, /the tag v0\.2\.1 does not match package\.json's version 0\.2\.0/);
  });

  it('check-tag: refuses a suffix, a missing v and a version the Marketplace cannot publish', () => {
    for (const tag of ['v0.2.0-pre.1', 'v0.3.0-rc1', '0.2.0', 'v0.2', 'v01.2.0', 'release-0.2.0']) {
      const r = checkTag(tag, '0.2.0');
      assert.equal(r.status, 1, tag);
      assert.match(r.stderr, /is not a release tag: a release tag is v<MAJOR>\.<MINOR>\.<PATCH> with no suffix/, tag);
      assert.match(r.stderr, /0057-release-channels\.md/, tag);
    }
    const r = checkTag('v0.2.0', '0.2.0-beta.1');
    assert.equal(r.status, 1);
    assert.match(r.stderr, /package\.json's version "0\.2\.0-beta\.1" is not a release version/);
  });

  const changelog = writeTmp(
    'CHANGELOG.md',
    [
      '# Changelog',
      '',
      'All notable changes to this project are documented here.',
      '',
      '## [0.3.0] — unreleased',
      '',
      '### Added',
      '- Multi-arch runtime image.',
      '',
      '## [0.2.0] — 2026-05-02',
      '',
      '### Added',
      '',
      '- Release workflow.',
      '',
      '### Fixed',
      '- `## [0.1.0]` in a code span is no heading.',
      '',
      '```md',
      '## a heading in a fenced block is no section end',
      '```',
      '',
      '## [0.1.0] — 2026-04-01',
      '',
      '- First release.',
      '',
      '## [0.0.9] — 2026-03-01',
      '',
      '[0.2.0]: https://example.invalid/compare/v0.1.0...v0.2.0',
      '[0.1.0]: https://example.invalid/releases/tag/v0.1.0',
      '',
    ].join('\r\n'),
  );
  const section = (...args: string[]) => script('release.mjs', ['changelog-section', ...args, '--changelog', changelog]);

  it('changelog-section: prints the body of the version section, up to the next ## heading', () => {
    const r = section('0.2.0');
    assert.equal(r.status, 0, r.stderr);
    assert.equal(
      r.stdout,
      [
        '### Added',
        '',
        '- Release workflow.',
        '',
        '### Fixed',
        '- `## [0.1.0]` in a code span is no heading.',
        '',
        '```md',
        '## a heading in a fenced block is no section end',
        '```',
        '',
      ].join('\n'),
    );
    assert.equal(section('0.1.0').stdout, '- First release.\n');
    assert.equal(section('0.3.0').stdout, '### Added\n- Multi-arch runtime image.\n');
  });

  it('changelog-section: fails for a missing or empty section, and with --release for one still unreleased', () => {
    const missing = section('0.2.1');
    assert.equal(missing.status, 1);
    assert.match(missing.stderr, /CHANGELOG\.md has no section for 0\.2\.1: add one headed "## \[0\.2\.1\] — <date>"/);
    assert.equal(section('0.2').status, 1, '0.2 is not 0.2.0');
    const empty = section('0.0.9');
    assert.equal(empty.status, 1, 'only link references follow its heading');
    assert.match(empty.stderr, /section for 0\.0\.9 is empty/);
    const unreleased = section('0.3.0', '--release');
    assert.equal(unreleased.status, 1);
    assert.match(unreleased.stderr, /section for 0\.3\.0 is still headed "## \[0\.3\.0\] — unreleased": put the release date there/);
    assert.equal(section('0.2.0', '--release').status, 0);
    const none = script('release.mjs', ['changelog-section', '0.2.0', '--changelog', join(tmp, 'NO-CHANGELOG.md')]);
    assert.equal(none.status, 1);
    assert.match(none.stderr, /NO-CHANGELOG\.md does not exist/);
  });

  /** A zip with these entries (deflated), as vsce writes a VSIX. */
  function zip(entries: Record<string, string>): Buffer {
    const locals: Buffer[] = [];
    const centrals: Buffer[] = [];
    let offset = 0;
    for (const [name, text] of Object.entries(entries)) {
      const data = Buffer.from(text);
      const packed = deflateRawSync(data);
      const n = Buffer.from(name);
      const local = Buffer.alloc(30);
      local.writeUInt32LE(0x04034b50, 0);
      local.writeUInt16LE(20, 4);
      local.writeUInt16LE(8, 8);
      local.writeUInt32LE(crc32(data), 14);
      local.writeUInt32LE(packed.length, 18);
      local.writeUInt32LE(data.length, 22);
      local.writeUInt16LE(n.length, 26);
      const central = Buffer.alloc(46);
      central.writeUInt32LE(0x02014b50, 0);
      central.writeUInt16LE(20, 4);
      central.writeUInt16LE(20, 6);
      central.writeUInt16LE(8, 10);
      central.writeUInt32LE(crc32(data), 16);
      central.writeUInt32LE(packed.length, 20);
      central.writeUInt32LE(data.length, 24);
      central.writeUInt16LE(n.length, 28);
      central.writeUInt32LE(offset, 42);
      locals.push(local, n, packed);
      centrals.push(central, n);
      offset += local.length + n.length + packed.length;
    }
    const cd = Buffer.concat(centrals);
    const end = Buffer.alloc(22);
    end.writeUInt32LE(0x06054b50, 0);
    end.writeUInt16LE(centrals.length / 2, 8);
    end.writeUInt16LE(centrals.length / 2, 10);
    end.writeUInt32LE(cd.length, 12);
    end.writeUInt32LE(offset, 16);
    return Buffer.concat([...locals, cd, end]);
  }
  const vsix = (version: string, prerelease: boolean) => {
    const file = join(tmp, `toolbox-${version}-${prerelease}.vsix`);
    const property = prerelease ? '<Property Id="Microsoft.VisualStudio.Code.PreRelease" Value="true" />' : '';
    writeFileSync(
      file,
      zip({
        'extension.vsixmanifest': `<PackageManifest><Metadata><Properties>${property}</Properties></Metadata></PackageManifest>`,
        'extension/package.json': JSON.stringify({ publisher: 'toolbox-dev', name: 'toolbox-vscode', version }),
        'extension/dist/extension.js': 'x'.repeat(5000),
      }),
    );
    return file;
  };

  it('vsix-list lists what the VSIX holds; check-vsix checks its version and channel against the tag', () => {
    const list = script('release.mjs', ['vsix-list', vsix('0.2.0', false)]);
    assert.equal(list.status, 0, list.stderr);
    assert.match(list.stdout, /^\s+5000 {2}extension\/dist\/extension\.js$/m);
    assert.match(list.stdout, /\(3 files\)\n$/);

    const ok = script('release.mjs', ['check-vsix', vsix('0.2.0', false), 'v0.2.0']);
    assert.equal(ok.status, 0, ok.stderr);
    assert.match(ok.stdout, /is toolbox-dev\.toolbox-vscode 0\.2\.0, packaged as a release, 3 files/);
    assert.equal(script('release.mjs', ['check-vsix', vsix('0.3.0', true), 'v0.3.0']).status, 0);

    const other = script('release.mjs', ['check-vsix', vsix('0.2.0', false), 'v0.4.0']);
    assert.equal(other.status, 1);
    assert.match(other.stderr, /is version 0\.2\.0, not the tag's 0\.4\.0/);
    const notPre = script('release.mjs', ['check-vsix', vsix('0.3.0', false), 'v0.3.0']);
    assert.equal(notPre.status, 1);
    assert.match(notPre.stderr, /was not packaged as a pre-release, but 0\.3\.0 is one .*npm run package -- --pre-release/);
    const pre = script('release.mjs', ['check-vsix', vsix('0.2.0', true), 'v0.2.0']);
    assert.equal(pre.status, 1);
    assert.match(pre.stderr, /was packaged as a pre-release, but 0\.2\.0 is a release/);
    const notZip = script('release.mjs', ['check-vsix', changelog, 'v0.2.0']);
    assert.equal(notZip.status, 1);
    assert.match(notZip.stderr, /not a zip file/);
  });

  it('refuses an unknown command or missing arguments with its usage', () => {
    for (const args of [[], ['publish'], ['check-tag'], ['changelog-section', '0.2.0', '--changelog']]) {
      const r = script('release.mjs', args);
      assert.equal(r.status, 2, args.join(' '));
      assert.match(r.stderr, /^usage: node scripts\/release\.mjs check-tag TAG/);
    }
  });
});
