/**
 * Protected paths on the real engine (plan/protect.ts, engine/placeholders.ts;
 * docs/decisions/0042-protected-paths-read-only.md): every attack below runs inside a real
 * container, as the container's user and as root, against the folder at /workspace and at its
 * mirror, and must fail, leaving the host's files as they were. A missing protected path cannot
 * be created, and when the container is removed nothing in the folder belongs to anyone but the
 * user and no placeholder is left. Runs on Docker, rootful Podman and rootless Podman
 * (scripts/test-podman.sh).
 */
import assert from 'node:assert/strict';
import { execFileSync, spawnSync } from 'node:child_process';
import {
  chownSync,
  existsSync,
  lstatSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  readdirSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { PLACEHOLDER } from '../../extension/src/contract/constants';
import { stopContainer } from '../../extension/src/engine/lifecycle';
import { createAdapted } from '../../extension/src/engine/compat';
import { openContainer } from '../../extension/src/engine/open';
import { TEST_ENGINE, TEST_ROOTLESS, testNamespace, testUser, type TestNamespace } from '../support/docker';
import { execIn } from '../support/exec';
import { ensureTestRuntimeImage } from '../support/image';
import { chownTree, openFolder, owners, planFolder, type OpenedFolder } from '../support/protected';

const USER = testUser(4321, 4322);

/**
 * The sweep asks host git whether a repository's index or HEAD has a `.gitmodules`
 * (host/git.ts gitmodulesBehindWorkTree). The folders here are the container user's; a test that
 * runs as root tells git to trust them, as the user's own git does for their folders. Answers
 * how to undo it.
 */
function trustTheUsersRepositories(): () => void {
  if (process.getuid!() !== 0 || process.env.GIT_CONFIG_COUNT !== undefined) return () => undefined;
  Object.assign(process.env, { GIT_CONFIG_COUNT: '1', GIT_CONFIG_KEY_0: 'safe.directory', GIT_CONFIG_VALUE_0: '*' });
  return () => {
    delete process.env.GIT_CONFIG_COUNT;
    delete process.env.GIT_CONFIG_KEY_0;
    delete process.env.GIT_CONFIG_VALUE_0;
  };
}

/** Protected paths the folder has before the container starts, with their contents. */
const EXISTING_FILES: Record<string, string> = {
  '.envrc': 'export A=1\n',
  '.toolbox.yaml': 'peer_messaging: false\n',
  '.vscode/settings.json': '{}\n',
  '.claude/settings.json': '{"permissions":{}}\n',
  '.claude/commands/review.md': 'review\n',
};

/** Protected paths it does not have: each gets a placeholder, made as what is named here. */
const MISSING_AS: Record<string, 'dir' | 'file' | 'commondir'> = {
  '.gitmodules': 'file',
  '.mcp.json': 'dir',
  '.idea': 'dir',
  '.devcontainer': 'dir',
  '.claude/settings.local.json': 'dir',
  '.claude/agents': 'dir',
  '.git/worktrees': 'dir',
  '.git/commondir': 'commondir',
  '.git/modules': 'dir',
  '.git/objects/info/alternates': 'file',
  '.worktrees': 'dir',
};
const MISSING = Object.keys(MISSING_AS);
/** How snapshot() shows each placeholder (it does not walk into .git/objects). */
const PLACEHOLDER_SEEN: Record<string, string> = { dir: 'dir', file: '""', commondir: JSON.stringify(PLACEHOLDER.commonDirText) };

/** The host's view of every protected path: contents of files, names in directories. */
function snapshot(folder: string): string {
  const seen: string[] = [];
  const walk = (d: string) => {
    for (const name of readdirSync(d).sort()) {
      const p = join(d, name);
      const st = lstatSync(p);
      seen.push(
        `${p.slice(folder.length)} ${st.isDirectory() ? 'dir' : st.isSymbolicLink() ? 'link' : JSON.stringify(readFileSync(p, 'utf8'))}`,
      );
      if (st.isDirectory() && !p.endsWith('/objects')) walk(p);
    }
  };
  walk(folder);
  return seen.sort().join('\n');
}

describe('protected paths: attacks from inside a real container (issue 25, item 2)', () => {
  let image: string;
  let ns: TestNamespace;
  let dir: string;
  let folder: string;
  let opened: OpenedFolder;
  let before_: string;
  let entriesBefore: string[];
  let excludeBefore: string;
  let untrust: () => void;

  before(async () => {
    untrust = trustTheUsersRepositories();
    image = await ensureTestRuntimeImage();
    ns = testNamespace();
    dir = mkdtempSync(join(tmpdir(), `${ns.names.prefix}-ro-`));
    folder = join(dir, 'proj');
    mkdirSync(folder);
    execFileSync('git', ['init', '-q', '-b', 'main', folder]);
    for (const [rel, text] of Object.entries(EXISTING_FILES)) {
      mkdirSync(join(folder, rel, '..'), { recursive: true });
      writeFileSync(join(folder, rel), text);
    }
    writeFileSync(join(folder, 'README.md'), 'hello\n');
    chownTree(dir, USER);
    entriesBefore = [...owners(folder).keys()].sort();
    before_ = snapshot(folder);
    excludeBefore = readFileSync(join(folder, '.git', 'info', 'exclude'), 'utf8');
    opened = await openFolder(ns, folder, { image, user: USER });
  });

  after(async () => {
    untrust?.();
    await ns?.cleanup();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  /** Runs `script` in the folder's mirror as `user` and answers the exit code and what it printed. */
  const attack = async (script: string, user?: string) => {
    const r = await execIn(opened.container, ['sh', '-c', script], { workdir: folder, ...(user ? { user } : {}) });
    return { code: r.code, out: `${r.stdout}${r.stderr}` };
  };
  const AS = [
    ['the container user', undefined],
    ['root', '0'],
  ] as const;
  /** Each line of `lines` must fail on its own, with one of the kernel's refusals. */
  const eachFails = async (
    lines: string[],
    refusal = /Read-only file system|Device or resource busy|Is a directory|Invalid cross-device link/,
  ) => {
    for (const [who, user] of AS) {
      for (const line of lines) {
        for (const base of [folder, '/workspace']) {
          const r = await attack(`cd ${base} && ${line}`, user);
          assert.notEqual(r.code, 0, `${who} at ${base}: \`${line}\` succeeded: ${r.out}`);
          assert.match(r.out, refusal, `${who} at ${base}: \`${line}\``);
        }
      }
    }
    assert.equal(snapshot(folder), before_with_placeholders(), 'the host files are unchanged');
  };
  /**
   * The snapshot as it is while the container runs: the placeholders added, and the line that
   * keeps `.gitmodules` out of git status appended to `.git/info/exclude`; nothing else.
   */
  const before_with_placeholders = () =>
    [
      ...before_
        .split('\n')
        .map((l) => (l.startsWith('/.git/info/exclude ') ? `/.git/info/exclude ${JSON.stringify(`${excludeBefore}/.gitmodules\n`)}` : l)),
      ...MISSING.filter((rel) => !rel.startsWith('.git/objects/')).map((rel) => `/${rel} ${PLACEHOLDER_SEEN[MISSING_AS[rel]!]}`),
    ]
      .sort()
      .join('\n');

  it('made the placeholders as the user, empty, with the placeholder time; the rest of the folder is untouched', () => {
    for (const rel of MISSING) {
      const st = lstatSync(join(folder, rel));
      assert.equal(st.uid, USER.uid, `${rel} is the user's`);
      assert.equal(st.mtimeMs, PLACEHOLDER.mtimeSeconds * 1000, rel);
      if (MISSING_AS[rel] === 'dir') {
        assert.ok(st.isDirectory(), rel);
        assert.deepEqual(readdirSync(join(folder, rel)), [], rel);
      } else {
        assert.ok(st.isFile(), rel);
        assert.equal(readFileSync(join(folder, rel), 'utf8'), MISSING_AS[rel] === 'commondir' ? '.\n' : '', rel);
      }
    }
    assert.equal(snapshot(folder), before_with_placeholders());
    // The .gitmodules placeholder's line in the repository's excludes, once, after git's template.
    assert.equal(readFileSync(join(folder, '.git', 'info', 'exclude'), 'utf8'), `${excludeBefore}/.gitmodules\n`);
  });

  it('refuses writing an existing protected file', async () => {
    await eachFails([
      'printf x >> .git/config',
      'printf x >> .envrc',
      'printf x > .toolbox.yaml',
      'printf x >> .vscode/settings.json',
      'printf x >> .claude/settings.json',
    ]);
  });

  it('refuses creating anything in a protected directory', async () => {
    await eachFails([
      'printf "#!/bin/sh\\ntouch /tmp/pwned\\n" > .git/hooks/pre-commit',
      'printf "* filter=evil\\n" > .git/info/attributes',
      'printf "{}" > .vscode/tasks.json',
      'printf x > .claude/commands/evil.md',
      'chmod 777 .git/hooks',
    ]);
  });

  it('refuses creating each missing protected path', async () => {
    await eachFails([
      'printf "[submodule \\"x\\"]\\n\\tpath = x\\n\\turl = /tmp/evil\\n" > .gitmodules',
      'printf "{\\"mcpServers\\":{}}" > .mcp.json',
      'mkdir .idea/x',
      'printf "{}" > .devcontainer/devcontainer.json',
      'printf "{}" > .claude/settings.local.json',
      'printf x > .claude/agents/evil.md',
      'mkdir .git/worktrees/evil',
      'mkdir .worktrees/evil',
      'rmdir .mcp.json',
    ]);
  });

  it('refuses every way to point host git at another repository: commondir, alternates, modules, the object store moved aside (issue 38, item 1)', async () => {
    await eachFails([
      'printf "x\\n" > .git/commondir',
      'rm -f .git/commondir',
      'mv .git/commondir commondir-old; r=$?; rm -f commondir-old; exit $r',
      'printf "/tmp/elsewhere/objects\\n" > .git/objects/info/alternates',
      'rm -f .git/objects/info/alternates',
      'mkdir .git/modules/evil',
      'mv .git/modules .git/modules-old',
      'mv .git/objects .git/objects-old',
      'mv .git/objects/info .git/objects/info-old',
      'rm -rf .git/objects/info',
    ]);
    assert.equal(
      readFileSync(join(folder, '.git', 'objects', 'info', 'alternates'), 'utf8'),
      '',
      'alternates is still the empty placeholder',
    );
  });

  it('host git never runs a program the container names through .git/commondir, and still works on the folder (issue 38, item 1)', async () => {
    const marker = join(dir, 'COMMONDIR-RAN');
    // The review's attack: a config of the container's making in .git, then commondir pointed at it.
    const plant = `mkdir -p .git/x && printf '[core]\\n\\trepositoryformatversion = 0\\n\\tfsmonitor = "touch ${marker}"\\n' > .git/x/config && cp -r .git/objects .git/refs .git/HEAD .git/x/ 2>/dev/null; printf 'x\\n' > .git/commondir`;
    const hostGit = (cwd: string, ...args: string[]) =>
      execFileSync('git', ['-c', 'safe.directory=*', ...args], {
        cwd,
        env: { ...process.env, GIT_CONFIG_NOSYSTEM: '1' },
        encoding: 'utf8',
      });
    const r = await attack(plant);
    assert.notEqual(r.code, 0, r.out);
    assert.match(r.out, /Read-only file system|Device or resource busy/);
    hostGit(folder, 'status', '--porcelain');
    assert.equal(existsSync(marker), false, 'host git ran the program the container named');
    assert.equal(
      hostGit(folder, 'rev-parse', '--git-common-dir').trim(),
      join(folder, '.git'),
      'host git follows the placeholder to the same repository',
    );
    await attack('rm -rf .git/x');

    // The same attack in a container of the same folder made without the protection works:
    // this test would see it.
    const plainDir = mkdtempSync(join(tmpdir(), `${ns.names.prefix}-plain-`));
    try {
      const plainFolder = join(plainDir, 'proj');
      execFileSync('git', ['init', '-q', '-b', 'main', plainFolder]);
      chownTree(plainDir, USER);
      const plain = await openFolder(ns, plainFolder, { image, user: USER, protectedPaths: false });
      const plainMarker = join(plainDir, 'COMMONDIR-RAN');
      const ran = await execIn(plain.container, ['sh', '-c', plant.replaceAll(marker, plainMarker)], { workdir: plainFolder });
      assert.equal(ran.code, 0, `${ran.stdout}${ran.stderr}`);
      try {
        hostGit(plainFolder, 'status', '--porcelain');
      } catch {
        // git may still fail after running the program; the marker is what counts.
      }
      assert.equal(existsSync(plainMarker), true, 'without the protection, host git runs what the container named');
      await stopContainer(plain.ctx, plain.result.name);
    } finally {
      rmSync(plainDir, { recursive: true, force: true });
    }
  });

  it('refuses removing, renaming and replacing: rm -rf, mv, ln -s, hard links', async () => {
    await eachFails([
      'rm -rf .git/hooks',
      'rm -f .git/hooks/pre-commit.sample',
      'rm -f .git/config',
      // mv copies when the rename fails, then cannot remove the original: the copy is no protected path.
      'mv .git/config x; r=$?; rm -f x; exit $r',
      'mv .git .git-old',
      'mv .vscode vscode-old',
      'mv .claude claude-old',
      'mv .mcp.json mcp-old',
      'ln -sf /tmp/evil .git/config',
      'ln -sfn /tmp .vscode',
      'ln -sfn /tmp .git/hooks',
      'ln -s /tmp/evil .mcp.json/x',
      // The link itself may be made (the folder is writable); what it points at is not.
      'ln -s .git/config link && printf x >> link; r=$?; rm -f link; exit $r',
      'ln .git/config hard-link',
    ]);
  });

  it('refuses git writing its config, and root unmounting or remounting (no CAP_SYS_ADMIN), even in a user namespace', async () => {
    for (const [who, user] of AS) {
      // root is not the repository's owner: safe.directory, which a command line may set, lets it try.
      const git = await attack(`git -c safe.directory='*' config core.fsmonitor 'touch /tmp/pwned'`, user);
      assert.notEqual(git.code, 0, `${who}: ${git.out}`);
      assert.match(git.out, /could not (write|lock) config file|Read-only file system|Device or resource busy/, who);
    }
    for (const script of [`umount ${folder}/.git/config`, `mount -o remount,rw ${folder}/.git/config`]) {
      const r = await attack(script, '0');
      assert.notEqual(r.code, 0, `${script}: ${r.out}`);
    }
    // unshare(1) is in util-linux: a user namespace (seccomp unconfined allows it) owns its mount
    // namespace, yet the kernel keeps the inherited read-only binds locked over the folder.
    const userns = await attack(
      `unshare -Urm sh -c 'mkdir -p /tmp/m && mount --bind ${folder} /tmp/m && echo BOUND; printf x >> /tmp/m/.git/config && echo WROTE; umount ${folder}/.git/config && echo UNMOUNTED; printf x >> ${folder}/.git/config && echo WROTE2'`,
    );
    assert.doesNotMatch(userns.out, /WROTE|UNMOUNTED/, userns.out);
    console.log(
      `# ${TEST_ENGINE}${TEST_ROOTLESS ? ' rootless' : ''}, unshare -Urm in the container:\n${userns.out.replace(/^/gm, '#   ')}`,
    );
    assert.equal(snapshot(folder), before_with_placeholders());
  });

  it('is reported as drift on an open whose plan has protections the container lacks', async () => {
    // A container of the same folder made without them (the CLI, a version before, the setting off).
    const plain = planFolder(ns, folder, { image, user: USER, protectedPaths: false, namedShell: 'plain' });
    const made = await openContainer(opened.ctx, plain, { ensureImage: async () => undefined });
    const protectedPlan = { ...planFolder(ns, folder, { image, user: USER, namedShell: 'plain' }) };
    const again = await openContainer(opened.ctx, protectedPlan, { ensureImage: async () => undefined });
    assert.equal(again.action, 'connect');
    const drift = again.drift.find((d) => d.kind === 'protections');
    assert.ok(drift, JSON.stringify(again.drift));
    assert.ok(drift.protections?.includes('.git/config') && drift.protections.includes('.vscode'), drift.protections?.join(' '));
    assert.ok(again.warnings.some((w) => /read-only protection/.test(w)));
    // The protected container itself has none.
    const own = await openContainer(opened.ctx, opened.plan, { ensureImage: async () => undefined });
    assert.deepEqual(own.drift, []);
    await stopContainer(opened.ctx, made.name);
  });

  it('keeps the placeholders while another container mounts them, then leaves nothing but the user’s files', async () => {
    const second = await openFolder(ns, folder, { image, user: USER, namedShell: 'second' });
    await stopContainer(opened.ctx, opened.result.name);
    for (const rel of MISSING) assert.ok(existsSync(join(folder, rel)), `${rel} is kept while the second container mounts it`);
    // The user fills one while it runs (an IDE opening the folder): it is theirs now, and stays.
    writeFileSync(join(folder, '.idea', 'workspace.xml'), '<project/>\n');
    if (process.getuid!() === 0) chownSync(join(folder, '.idea', 'workspace.xml'), USER.uid, USER.gid);
    await stopContainer(second.ctx, second.result.name);
    const left = [...owners(folder).keys()].sort();
    assert.deepEqual(
      left,
      [...entriesBefore, join(folder, '.idea'), join(folder, '.idea', 'workspace.xml')].sort(),
      'no placeholder is left, only what the user made',
    );
    for (const [path, uid] of owners(folder)) assert.equal(uid, USER.uid, `${path} is owned by ${uid}, not the user`);
    rmSync(join(folder, '.idea'), { recursive: true });
  });

  it('opens the next container of the folder while the last one is removed (Kill All Terminals, then Open Toolbox Shell)', async () => {
    const first = await openFolder(ns, folder, { image, user: USER, namedShell: 'sweep-a' });
    // Planned while the first container's placeholders are there: each is planned as missing
    // again, never as a folder to protect paths inside (a removed .claude took them with it).
    const next = planFolder(ns, folder, { image, user: USER, namedShell: 'sweep-b' });
    assert.deepEqual((next.placeholders ?? []).map((p) => p.path).sort(), MISSING.map((rel) => join(folder, rel)).sort());
    const [, opened2] = await Promise.all([
      stopContainer(first.ctx, first.result.name),
      openContainer(first.ctx, next, { ensureImage: async () => undefined }),
    ]);
    for (const rel of MISSING) {
      const st = lstatSync(join(folder, rel));
      assert.ok(
        st.isDirectory() === (MISSING_AS[rel] === 'dir') && st.uid === USER.uid,
        `${rel} is the user's placeholder while the next container runs`,
      );
    }
    await stopContainer(first.ctx, opened2.name);
    for (const rel of MISSING) assert.equal(existsSync(join(folder, rel)), false, `${rel} was left behind`);
    for (const [path, uid] of owners(folder)) assert.equal(uid, USER.uid, `${path} is owned by ${uid}, not the user`);
  });

  it('refuses to open when a protected path turned into a symbolic link after planning (no container, no placeholder)', async () => {
    const plan = planFolder(ns, folder, { image, user: USER, namedShell: 'raced' });
    assert.ok(plan.placeholders?.some((p) => p.path === join(folder, '.mcp.json')));
    symlinkSync('/etc', join(folder, '.mcp.json'));
    try {
      await assert.rejects(openContainer(opened.ctx, plan, { ensureImage: async () => undefined }), /\.mcp\.json became a symbolic link/);
      assert.deepEqual(await ns.docker.listContainers({ all: true, filters: { name: [plan.name] } }), []);
      // And the planner refuses it from the start.
      assert.throws(() => planFolder(ns, folder, { image, user: USER }), /\.mcp\.json is a symbolic link/);
    } finally {
      rmSync(join(folder, '.mcp.json'));
    }
    for (const rel of MISSING) assert.equal(existsSync(join(folder, rel)), false, `${rel} was left behind`);
  });
});

describe('.gitmodules in a repository without one (issue 38, item 8)', () => {
  let image: string;
  let ns: TestNamespace;
  let dir: string;
  let home: string;
  let untrust: () => void;

  before(async () => {
    untrust = trustTheUsersRepositories();
    image = await ensureTestRuntimeImage();
    ns = testNamespace();
    dir = mkdtempSync(join(tmpdir(), `${ns.names.prefix}-gm-`));
    home = join(dir, 'home');
    mkdirSync(home);
    chownTree(dir, USER);
  });

  after(async () => {
    untrust?.();
    await ns?.cleanup();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  /**
   * Host git as the folder's user would type it (as that user when the test runs as root), with
   * the local file transport allowed, so that a clone of what the container names could happen.
   */
  const hostGit = (cwd: string, ...args: string[]) =>
    spawnSync(
      'git',
      [
        '-c',
        'user.name=Host',
        '-c',
        'user.email=host@example.com',
        '-c',
        'protocol.file.allow=always',
        '-c',
        'init.defaultBranch=main',
        ...args,
      ],
      {
        cwd,
        env: { ...process.env, GIT_CONFIG_NOSYSTEM: '1', HOME: home },
        encoding: 'utf8',
        ...(process.getuid!() === 0 ? { uid: USER.uid, gid: USER.gid } : {}),
      },
    );
  const ok = (cwd: string, ...args: string[]) => {
    const r = hostGit(cwd, ...args);
    assert.equal(r.status, 0, `git ${args.join(' ')}: ${r.stdout}${r.stderr}`);
    return r.stdout;
  };
  /** A repository with one commit and no .gitmodules, cloned from an origin beside it. */
  const repo = (name: string) => {
    const origin = join(dir, `${name}-origin`);
    const folder = join(dir, name);
    mkdirSync(origin);
    writeFileSync(join(origin, 'README.md'), 'hello\n');
    chownTree(origin, USER);
    ok(origin, 'init', '-q');
    ok(origin, 'add', '.');
    ok(origin, 'commit', '-q', '-m', 'initial');
    ok(dir, 'clone', '-q', origin, folder);
    return { origin, folder };
  };
  const inContainer = async (opened: OpenedFolder, folder: string, script: string, user?: string) => {
    const r = await execIn(opened.container, ['sh', '-c', script], { workdir: folder, ...(user ? { user } : {}) });
    return { code: r.code, out: `${r.stdout}${r.stderr}` };
  };
  // The agent's repository to clone, staged as a gitlink at x (the index is the container's to
  // write), then named in .gitmodules: a host `git submodule update --init` would clone and check
  // it out (git has had bugs that run hooks on that step: CVE-2025-48384).
  const STAGE =
    'git init -q evil && git -C evil -c user.name=a -c user.email=a@b commit -q --allow-empty -m evil && ' +
    'git update-index --add --cacheinfo 160000,$(git -C evil rev-parse HEAD),x';
  /** The agent's .gitmodules: x is its repository, by the path the container and the host share. */
  const gitmodulesOf = (folder: string) => `[submodule "x"]\\n\\tpath = x\\n\\turl = ${folder}/evil\\n`;
  const WRITE = (folder: string) => `printf '${gitmodulesOf(folder)}' > .gitmodules`;

  it('the container cannot create, write or replace .gitmodules; host git sees no submodule and no .gitmodules, and clones nothing the agent names', async () => {
    const { folder } = repo('attacked');
    const opened = await openFolder(ns, folder, { image, user: USER });
    const staged = await inContainer(opened, folder, STAGE);
    assert.equal(staged.code, 0, `the agent stages a gitlink: ${staged.out}`);
    for (const [who, user] of [
      ['the container user', undefined],
      ['root', '0'],
    ] as const) {
      for (const line of [
        WRITE(folder),
        'printf x >> .gitmodules',
        'rm -f .gitmodules',
        'mv .gitmodules gm-old; r=$?; rm -f gm-old; exit $r',
        'ln -sf /tmp/evil .gitmodules',
        `git -c safe.directory='*' config -f .gitmodules submodule.x.url ${folder}/evil`,
      ]) {
        const r = await inContainer(opened, folder, line, user);
        assert.notEqual(r.code, 0, `${who}: \`${line}\` succeeded: ${r.out}`);
        assert.match(r.out, /Read-only file system|Device or resource busy|could not (lock|write|commit) config file/, `${who}: ${line}`);
      }
    }
    const placeholder = lstatSync(join(folder, '.gitmodules'));
    assert.ok(placeholder.isFile() && placeholder.size === 0 && placeholder.uid === USER.uid, 'the placeholder: an empty file, the user’s');
    assert.match(readFileSync(join(folder, '.git', 'info', 'exclude'), 'utf8'), /\n\/\.gitmodules\n$/);

    // Host git: no submodule, no .gitmodules in the status, nothing cloned, nothing registered.
    const status = ok(folder, 'status', '--porcelain', '--untracked-files=all');
    assert.doesNotMatch(status, /\.gitmodules/, status);
    assert.match(ok(folder, 'status', '--porcelain', '--ignored'), /^!! \.gitmodules$/m, 'ignored through .git/info/exclude');
    const update = hostGit(folder, 'submodule', 'update', '--init');
    assert.notEqual(update.status, 0, `update --init found a url: ${update.stdout}${update.stderr}`);
    assert.match(update.stderr, /No url found for submodule path 'x' in \.gitmodules/);
    assert.equal(existsSync(join(folder, 'x', '.git')), false, 'nothing was cloned into x');
    assert.equal(hostGit(folder, 'config', '--get', 'submodule.x.url').stdout, '', 'nothing was registered in .git/config');

    // The agent stages a .gitmodules of its own in the index instead: git reads the working tree's
    // (the empty placeholder) first, so the host still clones nothing; the staged file shows.
    const blob = await inContainer(
      opened,
      folder,
      `git update-index --add --cacheinfo 100644,$(printf '${gitmodulesOf(folder)}' | git hash-object -w --stdin),.gitmodules`,
    );
    assert.equal(blob.code, 0, blob.out);
    assert.match(ok(folder, 'status', '--porcelain'), /^AM \.gitmodules$/m, 'a .gitmodules the agent stages is listed');
    const refusedAgain = () => {
      assert.notEqual(hostGit(folder, 'submodule', 'update', '--init').status, 0);
      assert.equal(existsSync(join(folder, 'x', '.git')), false, 'nothing was cloned into x');
    };
    refusedAgain();
    // The container goes, what it staged stays: host git would read it without the placeholder,
    // so the sweep keeps the placeholder (host/git.ts gitmodulesBehindWorkTree).
    await stopContainer(opened.ctx, opened.result.name);
    assert.equal(readFileSync(join(folder, '.gitmodules'), 'utf8'), '', 'kept while the index has a .gitmodules');
    refusedAgain();
    // Committed, then unstaged (git then reads HEAD's): kept as well.
    const next = await openFolder(ns, folder, { image, user: USER, namedShell: 'next' });
    const committed = await inContainer(
      next,
      folder,
      'git -c user.name=a -c user.email=a@b commit -q -m submodule && git rm -q --cached .gitmodules',
    );
    assert.equal(committed.code, 0, committed.out);
    await stopContainer(next.ctx, next.result.name);
    assert.equal(readFileSync(join(folder, '.gitmodules'), 'utf8'), '', 'kept while HEAD has a .gitmodules');
    refusedAgain();
    // The user drops the agent's commit: nothing has a .gitmodules, and the next sweep removes it.
    ok(folder, 'reset', '-q', '--hard', 'HEAD~1');
    const last = await openFolder(ns, folder, { image, user: USER, namedShell: 'last' });
    await stopContainer(last.ctx, last.result.name);
    assert.equal(existsSync(join(folder, '.gitmodules')), false, 'the placeholder went with the last container');

    // The same in a container made without the protection: the write works, and host git clones
    // what the agent named. This test would see it.
    const plainRepo = repo('plain');
    const plain = await openFolder(ns, plainRepo.folder, { image, user: USER, protectedPaths: false });
    const wrote = await inContainer(plain, plainRepo.folder, `${STAGE} && ${WRITE(plainRepo.folder)}`);
    assert.equal(wrote.code, 0, wrote.out);
    const followed = hostGit(plainRepo.folder, 'submodule', 'update', '--init');
    assert.equal(followed.status, 0, `${followed.stdout}${followed.stderr}`);
    assert.equal(existsSync(join(plainRepo.folder, 'x', '.git')), true, 'without the placeholder, host git cloned the agent’s repository');
    assert.match(hostGit(plainRepo.folder, 'config', '--get', 'submodule.x.url').stdout, /evil/);
    await stopContainer(plain.ctx, plain.result.name);
  });

  it('host git submodule commands work with the placeholder; the host’s own submodule add replaces it, which the next open reports, and the sweep keeps it', async () => {
    const { origin, folder } = repo('host');
    const lib = repo('lib').origin;
    const opened = await openFolder(ns, folder, { image, user: USER });
    const excludeAfterOpen = readFileSync(join(folder, '.git', 'info', 'exclude'), 'utf8');

    // "No submodules", and nothing to add.
    for (const args of [
      ['submodule', 'status'],
      ['submodule', 'update', '--init', '--recursive'],
      ['submodule', 'foreach', 'echo in $name'],
      ['submodule', 'sync'],
    ]) {
      assert.equal(ok(folder, ...args), '', args.join(' '));
    }
    ok(folder, 'pull', '--recurse-submodules');
    ok(folder, 'add', '-A');
    assert.equal(ok(folder, 'status', '--porcelain', '--untracked-files=all'), '', 'git add -A adds nothing, git status lists nothing');

    // Upstream adds a submodule: the pull checks its .gitmodules out over the ignored placeholder.
    const upstream = repo('upstream');
    ok(upstream.folder, 'submodule', 'add', '-q', lib, 'lib');
    ok(upstream.folder, 'commit', '-q', '-m', 'add lib');
    ok(upstream.folder, 'push', '-q', origin, 'HEAD:refs/heads/with-lib');
    ok(folder, 'fetch', '-q', 'origin');
    ok(folder, 'checkout', '-q', '-b', 'with-lib', 'origin/with-lib');
    ok(folder, 'submodule', 'update', '--init');
    assert.match(ok(folder, 'submodule', 'status'), /^ [0-9a-f]{40} lib /m);
    assert.match(ok(folder, 'submodule', 'foreach', 'echo in $name'), /in lib/);
    ok(folder, 'checkout', '-q', 'main');
    assert.equal(existsSync(join(folder, '.gitmodules')), false, 'the branch’s .gitmodules went with it');
    rmSync(join(folder, 'lib'), { recursive: true, force: true });
    const reopened = await openContainer(opened.ctx, planFolder(ns, folder, { image, user: USER }), { ensureImage: async () => undefined });
    assert.ok(
      reopened.drift.find((d) => d.kind === 'protections')?.protections?.includes('.gitmodules'),
      `the placeholder the checkout replaced and removed is reported: ${JSON.stringify(reopened.drift)}`,
    );
    await stopContainer(opened.ctx, opened.result.name);

    // The host user adds a submodule while a container runs: git renames its .gitmodules over the
    // placeholder, which detaches the container's read-only bind; the next open says so.
    const second = await openFolder(ns, folder, { image, user: USER, namedShell: 'second' });
    assert.equal(readFileSync(join(folder, '.git', 'info', 'exclude'), 'utf8'), excludeAfterOpen, 'the line is not written twice');
    const before = lstatSync(join(folder, '.gitmodules'), { bigint: true });
    ok(folder, 'submodule', 'add', '-q', lib, 'lib2');
    const after_ = lstatSync(join(folder, '.gitmodules'), { bigint: true });
    assert.notEqual(`${after_.ino}@${after_.birthtimeNs}`, `${before.ino}@${before.birthtimeNs}`, 'git replaced the file');
    assert.match(ok(folder, 'status', '--porcelain'), /^A {2}\.gitmodules$/m, 'submodule add stages its .gitmodules, excluded or not');
    assert.match(ok(folder, 'submodule', 'status'), /^ [0-9a-f]{40} lib2 /m);
    const seen = await inContainer(second, folder, 'cat .gitmodules; printf "#" >> .gitmodules && echo WROTE');
    console.log(
      `# ${TEST_ENGINE}${TEST_ROOTLESS ? ' rootless' : ''}, the container after the host's submodule add:\n${seen.out.replace(/^/gm, '#   ')}`,
    );
    const again = await openContainer(second.ctx, planFolder(ns, folder, { image, user: USER, namedShell: 'second' }), {
      ensureImage: async () => undefined,
    });
    assert.ok(again.drift.find((d) => d.kind === 'protections')?.protections?.includes('.gitmodules'), JSON.stringify(again.drift));
    assert.ok(
      again.warnings.some((w) => /\.gitmodules/.test(w) && /replaced or removed/.test(w)),
      again.warnings.join('\n'),
    );
    await stopContainer(second.ctx, second.result.name);
    assert.match(readFileSync(join(folder, '.gitmodules'), 'utf8'), /\[submodule "lib2"\]/, 'the sweep leaves the user’s .gitmodules');

    // Opened again, the real file is bound read-only as it is.
    const third = await openFolder(ns, folder, { image, user: USER, namedShell: 'third' });
    const refused = await inContainer(third, folder, 'printf x >> .gitmodules');
    assert.notEqual(refused.code, 0, refused.out);
    await stopContainer(third.ctx, third.result.name);
  });
});

describe('what the engine does with a missing mount point (why the placeholders exist)', () => {
  let ns: TestNamespace;
  let dir: string;
  before(async () => {
    ns = testNamespace();
    dir = mkdtempSync(join(tmpdir(), `${ns.names.prefix}-mp-`));
  });
  after(async () => {
    await ns?.cleanup();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it(`${TEST_ENGINE}${TEST_ROOTLESS ? ' (rootless)' : ''}: a bind target missing in the folder is made by the engine, not as the user`, async () => {
    const image = await ensureTestRuntimeImage();
    const folder = join(dir, 'proj');
    mkdirSync(folder);
    const source = join(dir, 'source');
    mkdirSync(source);
    chownTree(dir, USER);
    // As the extension creates containers: rootless Podman maps the user to itself (keep-id).
    const { id } = await createAdapted(ns.docker, {
      name: `${ns.names.prefix}-mountpoint`,
      Image: image,
      Entrypoint: ['sleep', '60'],
      User: `${USER.uid}:${USER.gid}`,
      HostConfig: { Binds: [`${folder}:/workspace`, `${source}:/workspace/.vscode:ro`], NetworkMode: 'none' },
    });
    const container = ns.docker.getContainer(id);
    try {
      await container.start();
      const made = lstatSync(join(folder, '.vscode'));
      // Docker and rootful Podman: root; rootless Podman: the first subordinate id (measured; the decision records them).
      assert.notEqual(made.uid, USER.uid, `the engine made ${folder}/.vscode as ${made.uid}`);
      console.log(`# ${TEST_ENGINE}${TEST_ROOTLESS ? ' rootless' : ''}: the engine made the missing mount point as uid ${made.uid}`);
    } finally {
      await container.remove({ force: true });
    }
  });
});
