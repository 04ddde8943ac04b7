/**
 * Reading a workspace's remote hosts as data (extension/src/bridge/gitRemotes.ts): URL forms,
 * git config syntax, and the hostile file cases (symlink, FIFO, oversize, `.git` file).
 */
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import {
  GIT_CONFIG_READ_LIMIT,
  hostOfRemoteUrl,
  normalizeHost,
  readWorkspaceRemoteHosts,
  remoteHostsFromConfig,
} from '../../extension/src/bridge/gitRemotes';

describe('hostOfRemoteUrl', () => {
  const cases: Array<[string, string | undefined]> = [
    ['https://github.com/org/repo.git', 'github.com'],
    ['https://alice:pw@GitHub.com/org/repo', 'github.com'],
    ['http://127.0.0.1:8080/repo.git', '127.0.0.1:8080'],
    ['https://git.corp:8443/x', 'git.corp:8443'],
    ['https://[::1]:3000/x', '[::1]:3000'],
    ['ssh://git@github.com:22/org/repo', 'github.com'],
    ['git+ssh://git@gitlab.example/org/repo', 'gitlab.example'],
    ['git@github.com:org/repo.git', 'github.com'],
    ['gitlab.example:org/repo', 'gitlab.example'],
    ['file:///srv/repo.git', undefined],
    ['/srv/repo.git', undefined],
    ['../sibling', undefined],
    ['C:/repos/x', undefined],
    ['https://evil.example\t@good.example/', 'good.example'],
    ['https://a@b@c.example/', undefined],
    ['https://bad host/x', undefined],
  ];
  for (const [url, host] of cases) {
    it(`${JSON.stringify(url)} → ${host ?? 'none'}`, () => assert.equal(hostOfRemoteUrl(url), host));
  }

  it('normalizeHost accepts names, IPs and ports only', () => {
    assert.equal(normalizeHost('GitHub.COM'), 'github.com');
    assert.equal(normalizeHost('a.b:65535'), 'a.b:65535');
    for (const bad of ['', 'a b', 'a/b', 'a\nb', 'x.example\r', '-x.example', 'a..b', 'a:', `${'a'.repeat(300)}.com`, 'a:123456']) {
      assert.equal(normalizeHost(bad), undefined, JSON.stringify(bad));
    }
  });
});

describe('remoteHostsFromConfig', () => {
  it('reads url and pushurl of every remote, in the syntax git accepts', () => {
    const text = [
      '[core]',
      '\trepositoryformatversion = 0',
      '\turl = https://not-a-remote.example/',
      '[remote "origin"]',
      '\turl = "https://github.com/org/repo.git" ; trailing comment',
      '\tfetch = +refs/heads/*:refs/remotes/origin/*',
      '[Remote "up stream"] pushurl = git@gitlab.example:org/repo.git',
      '[remote.legacy]',
      '\tURL = https://old.example/x # comment',
      '[remote "cont"]',
      '\turl = https://cont\\',
      'inued.example/x',
      '[branch "main"]',
      '\tremote = origin',
    ].join('\n');
    assert.deepEqual(remoteHostsFromConfig(text), ['continued.example', 'github.com', 'gitlab.example', 'old.example']);
  });

  it('applies url.<base>.insteadOf rewrites, the longest prefix first', () => {
    const text = [
      '[url "https://github.com/"]',
      '\tinsteadOf = gh:',
      '[url "https://mirror.example/"]',
      '\tinsteadOf = gh:mirror/',
      '[remote "a"]',
      '\turl = gh:org/repo',
      '[remote "b"]',
      '\turl = gh:mirror/repo',
    ].join('\n');
    assert.deepEqual(remoteHostsFromConfig(text), ['github.com', 'mirror.example']);
  });

  it('agrees with git on a config git itself wrote', () => {
    const dir = mkdtempSync(join(tmpdir(), 'tbx-remotes-'));
    try {
      const git = (...args: string[]) =>
        execFileSync('git', args, { cwd: dir, env: { PATH: process.env.PATH, HOME: dir, GIT_CONFIG_NOSYSTEM: '1' } });
      git('init', '-q');
      git('remote', 'add', 'origin', 'https://Git.Example:444/a b/"q".git');
      git('remote', 'add', 'two', 'git@ssh.example:x/y');
      git('remote', 'set-url', '--push', 'two', 'https://push.example/x');
      const text = execFileSync('cat', [join(dir, '.git', 'config')], { encoding: 'utf8' });
      assert.deepEqual(remoteHostsFromConfig(text), ['git.example:444', 'push.example', 'ssh.example']);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('readWorkspaceRemoteHosts (the file is container-writable)', () => {
  const root = mkdtempSync(join(tmpdir(), 'tbx-ws-'));
  after(() => rmSync(root, { recursive: true, force: true }));
  let n = 0;
  const folder = (setup: (git: string, ws: string) => void): string => {
    const ws = join(root, String(n++));
    mkdirSync(ws);
    setup(join(ws, '.git'), ws);
    return ws;
  };
  const REMOTE = '[remote "origin"]\n\turl = https://github.com/o/r\n';

  it('reads a regular .git/config', async () => {
    const ws = folder((git) => {
      mkdirSync(git);
      writeFileSync(join(git, 'config'), REMOTE);
    });
    assert.deepEqual(await readWorkspaceRemoteHosts(ws), { hosts: ['github.com'] });
  });

  it('has no hosts and says nothing without a repository', async () => {
    assert.deepEqual(await readWorkspaceRemoteHosts(folder(() => undefined)), { hosts: [] });
    assert.deepEqual(await readWorkspaceRemoteHosts(folder((git) => mkdirSync(git))), { hosts: [] });
  });

  it('does not follow a symlinked config or .git, nor a .git file', async () => {
    const target = join(root, 'elsewhere');
    mkdirSync(target);
    writeFileSync(join(target, 'config'), REMOTE);
    const linkedConfig = folder((git) => {
      mkdirSync(git);
      symlinkSync(join(target, 'config'), join(git, 'config'));
    });
    const r1 = await readWorkspaceRemoteHosts(linkedConfig);
    assert.deepEqual(r1.hosts, []);
    assert.match(r1.skipped ?? '', /could not be opened \(ELOOP\)/);
    const linkedDir = folder((git) => symlinkSync(target, git));
    assert.deepEqual((await readWorkspaceRemoteHosts(linkedDir)).hosts, []);
    const gitFile = folder((git) => writeFileSync(git, `gitdir: ${target}\n`));
    const r3 = await readWorkspaceRemoteHosts(gitFile);
    assert.deepEqual(r3.hosts, []);
    assert.match(r3.skipped ?? '', /is not a directory/);
  });

  it('does not block on a FIFO and does not read past the size limit', async () => {
    const fifo = folder((git) => {
      mkdirSync(git);
      execFileSync('mkfifo', [join(git, 'config')]);
    });
    const started = Date.now();
    const r = await readWorkspaceRemoteHosts(fifo);
    assert.ok(Date.now() - started < 1_000);
    assert.deepEqual(r.hosts, []);
    assert.match(r.skipped ?? '', /not a regular file/);

    const big = folder((git) => {
      mkdirSync(git);
      writeFileSync(join(git, 'config'), REMOTE + '#'.repeat(GIT_CONFIG_READ_LIMIT));
    });
    const rb = await readWorkspaceRemoteHosts(big);
    assert.deepEqual(rb.hosts, []);
    assert.match(rb.skipped ?? '', new RegExp(`larger than ${GIT_CONFIG_READ_LIMIT} bytes`));
    const fits = folder((git) => {
      mkdirSync(git);
      writeFileSync(join(git, 'config'), REMOTE + '#'.repeat(GIT_CONFIG_READ_LIMIT - REMOTE.length));
    });
    assert.deepEqual((await readWorkspaceRemoteHosts(fits)).hosts, ['github.com']);
  });
});
