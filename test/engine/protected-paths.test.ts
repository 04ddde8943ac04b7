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
import { execFileSync } from 'node:child_process';
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

  before(async () => {
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
    opened = await openFolder(ns, folder, { image, user: USER });
  });

  after(async () => {
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
  /** The snapshot as it is while the container runs: the placeholders added, nothing else. */
  const before_with_placeholders = () =>
    [
      ...before_.split('\n'),
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
