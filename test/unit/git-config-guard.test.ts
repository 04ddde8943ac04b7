/**
 * The repository config as data (plan/gitConfig.ts, docs/decisions/0039): every key that names a
 * program, an include or a lazy fetch is refused by its key, whatever its spelling (case, the old
 * `[section.sub]` form, quoted and escaped subsections, continuation lines, comments, repeated
 * sections); what git init, git clone and our own create write is accepted; and the canonical text
 * host git reads instead reads back, through git itself, exactly as this parser read the original.
 */
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import {
  checkGitConfig,
  configKey,
  displayConfigKey,
  parseGitConfig,
  REPO_CONFIG_LIMIT,
  remoteUrlProblem,
  serializeGitConfig,
} from '../../extension/src/plan/gitConfig';

function refusedKey(text: string): string | undefined {
  const r = checkGitConfig(text);
  return 'refused' in r ? r.refused.key : undefined;
}

const BASE = '[core]\n\trepositoryformatversion = 0\n\tfilemode = true\n\tbare = false\n\tlogallrefupdates = true\n';

/** Every key the issue names, as `[section "sub"] name` text and the key git reads. */
const PROGRAM_KEYS: Array<[string, string]> = [
  ['[core]\n\tfsmonitor = /tmp/m.sh\n', 'core.fsmonitor'],
  ['[core]\n\thooksPath = /tmp/hooks\n', 'core.hookspath'],
  ['[core]\n\tsshCommand = /tmp/m.sh\n', 'core.sshcommand'],
  ['[core]\n\tgitProxy = /tmp/m.sh\n', 'core.gitproxy'],
  ['[core]\n\taskPass = /tmp/m.sh\n', 'core.askpass'],
  ['[core]\n\tpager = /tmp/m.sh\n', 'core.pager'],
  ['[core]\n\teditor = /tmp/m.sh\n', 'core.editor'],
  ['[core]\n\talternateRefsCommand = /tmp/m.sh\n', 'core.alternaterefscommand'],
  ['[core]\n\tworktree = /home/user\n', 'core.worktree'],
  ['[sequence]\n\teditor = /tmp/m.sh\n', 'sequence.editor'],
  ['[credential]\n\thelper = !/tmp/m.sh\n', 'credential.helper'],
  ['[credential "https://example.com"]\n\thelper = /tmp/m.sh\n', 'credential.https://example.com.helper'],
  ['[gpg]\n\tprogram = /tmp/m.sh\n', 'gpg.program'],
  ['[gpg "ssh"]\n\tprogram = /tmp/m.sh\n', 'gpg.ssh.program'],
  ['[diff "x"]\n\ttextconv = /tmp/m.sh\n', 'diff.x.textconv'],
  ['[diff "x"]\n\tcommand = /tmp/m.sh\n', 'diff.x.command'],
  ['[diff]\n\texternal = /tmp/m.sh\n', 'diff.external'],
  ['[filter "x"]\n\tclean = /tmp/m.sh\n', 'filter.x.clean'],
  ['[filter "x"]\n\tsmudge = /tmp/m.sh\n', 'filter.x.smudge'],
  ['[filter "x"]\n\tprocess = /tmp/m.sh\n', 'filter.x.process'],
  ['[merge "x"]\n\tdriver = /tmp/m.sh %O %A %B\n', 'merge.x.driver'],
  ['[remote "origin"]\n\tuploadpack = /tmp/m.sh\n', 'remote.origin.uploadpack'],
  ['[remote "origin"]\n\treceivepack = /tmp/m.sh\n', 'remote.origin.receivepack'],
  ['[remote "origin"]\n\tproxy = http://127.0.0.1:1\n', 'remote.origin.proxy'],
  ['[remote "origin"]\n\tvcs = ext\n', 'remote.origin.vcs'],
  ['[remote "origin"]\n\tpromisor = true\n', 'remote.origin.promisor'],
  ['[remote "origin"]\n\tpartialclonefilter = blob:none\n', 'remote.origin.partialclonefilter'],
  ['[url "ext::sh -c touch% /tmp/pwned"]\n\tinsteadOf = https://\n', 'url.ext::sh -c touch% /tmp/pwned.insteadof'],
  ['[url "ext::sh"]\n\tpushInsteadOf = https://\n', 'url.ext::sh.pushinsteadof'],
  ['[uploadpack]\n\tpackObjectsHook = /tmp/m.sh\n', 'uploadpack.packobjectshook'],
  ['[include]\n\tpath = /tmp/evil.config\n', 'include.path'],
  ['[includeIf "gitdir:/"]\n\tpath = /tmp/evil.config\n', 'includeif.gitdir:/.path'],
  ['[extensions]\n\tpartialClone = origin\n', 'extensions.partialclone'],
  ['[extensions]\n\tworktreeConfig = true\n', 'extensions.worktreeconfig'],
  ['[submodule "x"]\n\tupdate = !/tmp/m.sh\n', 'submodule.x.update'],
  ['[alias]\n\tst = !/tmp/m.sh\n', 'alias.st'],
  ['[pager]\n\tstatus = /tmp/m.sh\n', 'pager.status'],
  ['[protocol "ext"]\n\tallow = always\n', 'protocol.ext.allow'],
  ['[http]\n\tsslVerify = false\n', 'http.sslverify'],
  ['[gc]\n\tauto = 1\n', 'gc.auto'],
  ['[branch "main"]\n\trebase = interactive\n', 'branch.main.rebase'],
  ['[core]\n\tbare = true\n', 'core.bare'],
];

describe('the repository config guard (plan/gitConfig.ts)', () => {
  it('accepts what git init, git clone, git branch and our create write', () => {
    const text =
      BASE +
      '[remote "origin"]\n\turl = https://github.com/o/r.git\n\tfetch = +refs/heads/*:refs/remotes/origin/*\n' +
      '[branch "main"]\n\tremote = origin\n\tmerge = refs/heads/main\n' +
      '[branch "agent/task-1"]\n\tbase = main\n[push]\n\tautoSetupRemote = true\n' +
      '[user]\n\tname = Ada L\u00f6we\n\temail = ada@example.com\n[extensions]\n\tobjectFormat = sha256\n[lfs]\n\trepositoryformatversion = 0\n';
    const r = checkGitConfig(text);
    assert.ok('entries' in r, JSON.stringify(r));
    assert.deepEqual(r.entries.map(configKey), [
      'core.repositoryformatversion',
      'core.filemode',
      'core.bare',
      'core.logallrefupdates',
      'remote.origin.url',
      'remote.origin.fetch',
      'branch.main.remote',
      'branch.main.merge',
      'branch.agent/task-1.base',
      'push.autosetupremote',
      'user.name',
      'user.email',
      'extensions.objectformat',
      'lfs.repositoryformatversion',
    ]);
  });

  it('accepts what VS Code’s git extension and its companions write (seen in code-server: branch.main.vscode-merge-base)', () => {
    const text =
      BASE +
      '[remote "origin"]\n\turl = https://github.com/o/r.git\n\tgh-resolved = base\n' +
      '[branch "main"]\n\tvscode-merge-base = origin/main\n\tgithub-pr-owner-number = o#r#1\n\tgk-merge-base = origin/main\n';
    const r = checkGitConfig(text);
    assert.ok('entries' in r, JSON.stringify(r));
    assert.ok(r.entries.map(configKey).includes('branch.main.vscode-merge-base'));
  });

  for (const [text, key] of PROGRAM_KEYS) {
    it(`refuses ${key}`, () => {
      assert.equal(refusedKey(BASE + text), key);
      // After other sections, with the key on the header's own line.
      assert.equal(refusedKey(`${BASE}[user]\n\tname = x\n${text.replace('\n\t', ' ')}`), key);
    });
  }

  it('refuses whatever the spelling: case, the old [section.sub] form, escapes, continuations, comments, repeats', () => {
    const cases: Array<[string, string]> = [
      ['[Core]\n\tFSMonitor = /tmp/m.sh\n', 'core.fsmonitor'],
      ['[CORE] fsmonitor=/tmp/m.sh', 'core.fsmonitor'],
      ['[core]\nfsmonitor', 'core.fsmonitor'],
      ['[core]\n\tfsmonitor = "/tmp/m.sh" ; a comment\n', 'core.fsmonitor'],
      ['[core]\n\t# fsmonitor = /tmp/no\n\tfsmonitor = "/tmp/\\\n  m.sh"\n', 'core.fsmonitor'],
      ['[Filter.X]\n\tclean = /tmp/m.sh\n', 'filter.x.clean'],
      ['[filter "X"]\n\tCLEAN = /tmp/m.sh\n', 'filter.X.clean'],
      ['[remote "o\\"r"]\n\tuploadpack = /tmp/m.sh\n', 'remote.o"r.uploadpack'],
      ['[remote "or\\igin"]\n\tuploadpack = /tmp/m.sh\n', 'remote.origin.uploadpack'],
      ['[remote  \t"origin"]\n\tuploadpack = /tmp/m.sh\n', 'remote.origin.uploadpack'],
      ['[core]\n\tfilemode = true\n[user]\n\tname = x\n[core]\n\tfsmonitor = /tmp/m.sh\n', 'core.fsmonitor'],
      ['[user]\n\tname = "a \\\n\tb"\n[core]\n\thooksPath = /tmp\n', 'core.hookspath'],
      ['\uFEFF[core]\n\tfsmonitor = /tmp/m.sh\n', 'core.fsmonitor'],
      ['[core]\r\n\tfsmonitor = /tmp/m.sh\r\n', 'core.fsmonitor'],
      ['[core]\n\tfsmonitor = /tmp/m.sh', 'core.fsmonitor'],
    ];
    for (const [text, key] of cases) assert.equal(refusedKey(text), key, JSON.stringify(text));
  });

  it('refuses text git would not read, or might read another way, without naming a key', () => {
    for (const text of [
      '[core\n\tfsmonitor = x\n',
      '[core "x]\n',
      '[remote origin]\n\turl = x\n',
      '[core]\n\tfsmonitor = "open\n',
      '[core]\n\tfilemode = tr\\ue\n',
      '[core]\n\t1fsmonitor = x\n',
      '[core]\n\tfs_monitor = x\n',
      '[core]\n\tfilemode = true\r\tfsmonitor = x\n',
      '[core]\n\tfilemode = true\0\n',
      'fsmonitor = x\n',
      '[]\n',
      '[.x]\n',
    ]) {
      const r = checkGitConfig(text);
      assert.ok('refused' in r, JSON.stringify(text));
      if (text !== 'fsmonitor = x\n') assert.equal(r.refused.key, '', JSON.stringify(text));
    }
  });

  it(`refuses a config larger than ${REPO_CONFIG_LIMIT} bytes unread`, () => {
    const big = BASE + `[user]\n\tname = ${'x'.repeat(REPO_CONFIG_LIMIT)}\n`;
    const r = checkGitConfig(big);
    assert.ok('refused' in r);
    assert.match(r.refused.reason, /larger than/);
  });

  it('accepts only remote URLs git reaches without a helper program of the container’s choosing', () => {
    for (const ok of [
      'https://github.com/o/r.git',
      'http://127.0.0.1:8080/r.git',
      'ssh://git@github.com/o/r.git',
      'git@github.com:o/r.git',
      'git://example.com/r.git',
      '/srv/git/r.git',
      'file:///srv/git/r.git',
    ])
      assert.equal(remoteUrlProblem(ok), undefined, ok);
    for (const bad of [
      'ext::sh -c touch% /tmp/pwned',
      'fd::17',
      'testgit::/x',
      'ftp://example.com/r.git',
      'foo://x',
      '-oProxyCommand=/tmp/m.sh',
      'ssh://-oProxyCommand=/tmp/m.sh/x',
      '-x:y',
      '../relative.git',
      'relative',
    ])
      assert.notEqual(remoteUrlProblem(bad), undefined, bad);
    assert.equal(refusedKey(BASE + '[remote "origin"]\n\turl = ext::sh -c id\n'), 'remote.origin.url');
    assert.equal(refusedKey(BASE + '[remote "origin"]\n\tpushurl = fd::3\n'), 'remote.origin.pushurl');
  });

  it('shows a key only in a strict character set, bounded', () => {
    assert.equal(displayConfigKey('core.fsmonitor'), 'core.fsmonitor');
    assert.equal(displayConfigKey('remote.origin.uploadpack'), 'remote.origin.uploadpack');
    assert.equal(displayConfigKey('url.ext::sh -c touch% /tmp/pwned.insteadof'), 'url.<…>.insteadof');
    assert.equal(displayConfigKey('filter.\u202ex\u001b[31m.clean'), 'filter.<…>.clean');
    assert.equal(displayConfigKey(`core.${'a'.repeat(200)}`), 'a key');
  });
});

describe('the canonical config host git reads instead', () => {
  const dir = mkdtempSync(join(tmpdir(), 'tbxt-gitconfig-'));
  after(() => rmSync(dir, { recursive: true, force: true }));

  /** `git config --list` of a file, as key=value lines (no repository, no other config). */
  function gitList(text: string): string {
    const file = join(dir, 'config');
    writeFileSync(file, text);
    return execFileSync('git', ['config', '--file', file, '--list', '-z'], {
      encoding: 'utf8',
      env: { PATH: process.env.PATH, GIT_CONFIG_NOSYSTEM: '1', HOME: dir },
    });
  }

  it('reads back through git exactly as this parser read the original, for values git has to unquote', () => {
    const text =
      BASE +
      '[user]\n\tname = "  spaced  \\"quoted\\" "  tail # comment\n\temail = a\\tb\\\\c ; comment\n' +
      '[branch "we\\"ird\\\\name"]\n\tbase = "#not-a-comment"\n\tdescription = line one\\nline two \\\n  continued\n' +
      '[Remote.Origin]\n\tURL = https://example.com/r.git\n[push]\n\tautoSetupRemote\n';
    const parsed = parseGitConfig(text);
    assert.ok('entries' in parsed);
    const canonical = serializeGitConfig(parsed.entries);
    assert.equal(gitList(canonical), gitList(text));
    const again = parseGitConfig(canonical);
    assert.ok('entries' in again);
    assert.deepEqual(
      again.entries.map((e) => [configKey(e), e.value]),
      parsed.entries.map((e) => [configKey(e), e.value]),
    );
  });
});
