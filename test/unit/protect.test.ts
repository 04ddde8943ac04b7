/**
 * The protected paths as planned (plan/protect.ts, through plan/session.ts): which read-only
 * binds, pins and placeholders appear for which host paths, the refusals (symbolic links, hard
 * links), and the worktree container's variant. Pure: the host is a table of lstat answers.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { DEFAULT_CONFIG } from '../../extension/src/config/model';
import { LABELS } from '../../extension/src/contract/upstream';
import { objectNames } from '../../extension/src/contract/objects';
import type { HostFacts, HostPathFact } from '../../extension/src/contract/types';
import { isPlaceholderText, placeholderText, planProtections, PROTECTED_MOUNT, withIdentities } from '../../extension/src/plan/protect';
import { driftAgainstPlan, missingProtections, openDriftNotice, replacedProtections } from '../../extension/src/plan/drift';
import { planSession } from '../../extension/src/plan/session';
import type { SessionRequest } from '../../extension/src/plan/types';

const WS = '/home/u/proj';
const MIRROR_TARGETS = ['/workspace', WS];

type Tree = Record<string, HostPathFact['kind'] | HostPathFact>;

function facts(tree: Tree, files: Record<string, string> = {}): Pick<HostFacts, 'lstat' | 'readDir' | 'readSmall'> {
  const at = (p: string): HostPathFact => {
    const v = tree[p];
    return v === undefined ? { kind: 'missing' } : typeof v === 'string' ? { kind: v, ...(v === 'file' ? { links: 1 } : {}) } : v;
  };
  return {
    lstat: at,
    readDir: (dir) =>
      Object.keys(tree)
        .filter((p) => p.startsWith(`${dir}/`) && !p.slice(dir.length + 1).includes('/'))
        .map((p) => p.slice(dir.length + 1)),
    readSmall: (p) => files[p],
  };
}

/** A cloned repository: .git with config, hooks and info, and a .vscode folder. */
const REPO: Tree = {
  [`${WS}/.git`]: 'dir',
  [`${WS}/.git/config`]: 'file',
  [`${WS}/.git/hooks`]: 'dir',
  [`${WS}/.git/info`]: 'dir',
  [`${WS}/.git/objects`]: 'dir',
  [`${WS}/.git/objects/info`]: 'dir',
  [`${WS}/.vscode`]: 'dir',
};

const ro = (plan: ReturnType<typeof planProtections>) => plan.mounts.filter((m) => m.readonly).map((m) => m.target);
const pins = (plan: ReturnType<typeof planProtections>) => plan.mounts.filter((m) => !m.readonly).map((m) => m.target);

describe('protected paths: the plan', () => {
  it('binds every protected path read-only at /workspace and at the mirror, existing or not', () => {
    const plan = planProtections({ workspace: WS, targets: MIRROR_TARGETS, facts: facts(REPO) });
    // The list, and what the planner adds to it (.git's own worktrees, upstream's worktree folder).
    const expected =
      '.envrc .mcp.json .toolbox.yaml .vscode .idea .devcontainer .claude .git/config .git/hooks .git/info .git/worktrees .worktrees';
    for (const rel of expected.split(' ')) {
      for (const t of MIRROR_TARGETS) assert.ok(ro(plan).includes(`${t}/${rel}`), `${t}/${rel} read-only: ${ro(plan).join(' ')}`);
    }
    // Every bind is the host path at the same place under the folder's target.
    for (const m of plan.mounts) {
      const rel = m.source.slice(WS.length);
      assert.ok(m.target === `/workspace${rel}` || m.target === `${WS}${rel}`, `${m.source} at ${m.target}`);
      assert.equal(m.type, 'bind');
      assert.equal(m.createIfMissing, false);
    }
  });

  it('a missing .gitmodules in a repository is an empty placeholder file with its line in .git/info/exclude; an existing one is bound as it is (issue 38, item 8)', () => {
    const exclude = { file: `${WS}/.git/info/exclude`, line: '/.gitmodules' };
    const without = planProtections({ workspace: WS, targets: MIRROR_TARGETS, facts: facts(REPO) });
    for (const t of MIRROR_TARGETS) assert.ok(ro(without).includes(`${t}/.gitmodules`), t);
    assert.deepEqual(
      without.placeholders.filter((p) => p.path.endsWith('/.gitmodules')),
      [{ path: `${WS}/.gitmodules`, kind: 'file', exclude }],
    );
    // An existing exclude file (the usual case: git init and clone write one) gets the line too.
    const withExclude = planProtections({
      workspace: WS,
      targets: ['/workspace'],
      facts: facts({ ...REPO, [`${WS}/.git/info/exclude`]: 'file' }),
    });
    assert.deepEqual(withExclude.placeholders[0], { path: `${WS}/.gitmodules`, kind: 'file', exclude });
    // A repository without info/ (the engine makes it): its info/ is planned as a placeholder too.
    const noInfo = planProtections({ workspace: WS, targets: ['/workspace'], facts: facts({ ...REPO, [`${WS}/.git/info`]: 'missing' }) });
    assert.deepEqual(noInfo.placeholders[0], { path: `${WS}/.gitmodules`, kind: 'file', exclude });

    const withFile = planProtections({ workspace: WS, targets: MIRROR_TARGETS, facts: facts({ ...REPO, [`${WS}/.gitmodules`]: 'file' }) });
    for (const t of MIRROR_TARGETS) assert.ok(ro(withFile).includes(`${t}/.gitmodules`), t);
    assert.ok(!withFile.placeholders.some((p) => p.path.endsWith('/.gitmodules')));
    assert.throws(
      () => planProtections({ workspace: WS, targets: ['/workspace'], facts: facts({ ...REPO, [`${WS}/.gitmodules`]: 'symlink' }) }),
      /\.gitmodules is a symbolic link/,
    );
  });

  it('no repository: no .gitmodules placeholder (nothing reads it, and .git is a read-only placeholder); one that exists is still bound', () => {
    const none = planProtections({ workspace: WS, targets: ['/workspace'], facts: facts({}) });
    assert.ok(!none.mounts.some((m) => m.target.endsWith('/.gitmodules')), ro(none).join(' '));
    assert.ok(!none.placeholders.some((p) => p.path.endsWith('/.gitmodules') || p.exclude !== undefined));
    const present = planProtections({ workspace: WS, targets: ['/workspace'], facts: facts({ [`${WS}/.gitmodules`]: 'file' }) });
    assert.ok(ro(present).includes('/workspace/.gitmodules'));
    // A .git pointer that names nothing (or no pointer at all): no repository git could use either.
    for (const pointer of [undefined, 'gitdir: /nowhere/.git\n', 'not a pointer\n']) {
      const broken = planProtections({
        workspace: WS,
        targets: ['/workspace'],
        facts: facts({ [`${WS}/.git`]: 'file' }, pointer !== undefined ? { [`${WS}/.git`]: pointer } : {}),
      });
      assert.ok(!broken.placeholders.some((p) => p.path.endsWith('/.gitmodules')), String(pointer));
    }
  });

  it('the exclude line goes where host git reads it: the common directory of a worktree, the git directory of a submodule, past a commondir', () => {
    const gitmodules = (plan: ReturnType<typeof planProtections>) => plan.placeholders.find((p) => p.path === `${WS}/.gitmodules`);
    // A linked worktree opened as the folder: info/ is shared, in the main .git (git's path.c).
    const main = '/home/u/main/.git';
    const worktree = planProtections({
      workspace: WS,
      targets: ['/workspace'],
      facts: facts(
        {
          [`${WS}/.git`]: 'file',
          [main]: 'dir',
          [`${main}/worktrees/w`]: 'dir',
          [`${main}/info`]: 'dir',
          [`${main}/info/exclude`]: 'file',
        },
        { [`${WS}/.git`]: `gitdir: ${main}/worktrees/w\n`, [`${main}/worktrees/w/commondir`]: '../..\n' },
      ),
    });
    assert.deepEqual(gitmodules(worktree)?.exclude, { file: `${main}/info/exclude`, line: '/.gitmodules' });
    // A submodule's checkout: its git directory under the superproject's .git/modules, no commondir.
    const modules = '/home/u/.git/modules/proj';
    const submodule = planProtections({
      workspace: WS,
      targets: ['/workspace'],
      facts: facts({ [`${WS}/.git`]: 'file', [modules]: 'dir' }, { [`${WS}/.git`]: 'gitdir: ../.git/modules/proj\n' }),
    });
    assert.equal(gitmodules(submodule)?.exclude?.file, `${modules}/info/exclude`);
    // The folder's own .git with a commondir that names another directory (a placeholder's "." is itself).
    const elsewhere = planProtections({
      workspace: WS,
      targets: ['/workspace'],
      facts: facts(
        { ...REPO, [`${WS}/.git/commondir`]: 'file', '/home/u/common': 'dir' },
        { [`${WS}/.git/commondir`]: '/home/u/common\n' },
      ),
    });
    assert.equal(gitmodules(elsewhere)?.exclude?.file, '/home/u/common/info/exclude');
    const itself = planProtections({ workspace: WS, targets: ['/workspace'], facts: facts(REPO, { [`${WS}/.git/commondir`]: '.\n' }) });
    assert.equal(gitmodules(itself)?.exclude?.file, `${WS}/.git/info/exclude`);
    // An empty commondir is a repository git refuses: no placeholder.
    const empty = planProtections({ workspace: WS, targets: ['/workspace'], facts: facts(REPO, { [`${WS}/.git/commondir`]: '' }) });
    assert.equal(gitmodules(empty), undefined);
  });

  it('refuses an info/exclude or info/ that is a symbolic link or has other names: the engine appends to it as the user', () => {
    for (const [rel, fact] of [
      ['.git/info/exclude', 'symlink'],
      ['.git/info', 'symlink'],
      ['.git/info/exclude', { kind: 'file', links: 2 }],
    ] as const) {
      assert.throws(
        () => planProtections({ workspace: WS, targets: ['/workspace'], facts: facts({ ...REPO, [`${WS}/${rel}`]: fact }) }),
        (err: Error) => err.message.startsWith(`${WS}/${rel} `) && /symbolic link|other names/.test(err.message),
        rel,
      );
    }
    // Something else there (a directory named exclude): git reads no excludes from it, no placeholder is planned.
    const odd = planProtections({ workspace: WS, targets: ['/workspace'], facts: facts({ ...REPO, [`${WS}/.git/info/exclude`]: 'dir' }) });
    assert.ok(!odd.placeholders.some((p) => p.path.endsWith('/.gitmodules')));
  });

  it('pins .git read-write (a mount point cannot be renamed aside) and makes placeholders only for what is missing', () => {
    const plan = planProtections({ workspace: WS, targets: MIRROR_TARGETS, facts: facts(REPO) });
    assert.deepEqual(pins(plan), [
      '/workspace/.git',
      `${WS}/.git`,
      '/workspace/.git/objects',
      `${WS}/.git/objects`,
      '/workspace/.git/objects/info',
      `${WS}/.git/objects/info`,
    ]);
    assert.ok(plan.mounts.filter((m) => !m.readonly).every((m) => m.name === PROTECTED_MOUNT.pin));
    assert.deepEqual(plan.placeholders, [
      { path: `${WS}/.gitmodules`, kind: 'file', exclude: { file: `${WS}/.git/info/exclude`, line: '/.gitmodules' } },
      { path: `${WS}/.envrc`, kind: 'dir' },
      { path: `${WS}/.mcp.json`, kind: 'dir' },
      { path: `${WS}/.toolbox.yaml`, kind: 'dir' },
      { path: `${WS}/.idea`, kind: 'dir' },
      { path: `${WS}/.devcontainer`, kind: 'dir' },
      { path: `${WS}/.claude`, kind: 'dir' },
      { path: `${WS}/.git/worktrees`, kind: 'dir' },
      { path: `${WS}/.git/commondir`, kind: 'commondir' },
      { path: `${WS}/.git/modules`, kind: 'dir' },
      { path: `${WS}/.git/objects/info/alternates`, kind: 'file' },
      { path: `${WS}/.worktrees`, kind: 'dir' },
    ]);
  });

  it('binds read-only every file git follows from .git to another repository: commondir, alternates, modules (issue 38, item 1)', () => {
    const plan = planProtections({ workspace: WS, targets: MIRROR_TARGETS, facts: facts(REPO) });
    for (const rel of ['.git/commondir', '.git/modules', '.git/objects/info/alternates', '.git/info', '.git/worktrees']) {
      for (const t of MIRROR_TARGETS) assert.ok(ro(plan).includes(`${t}/${rel}`), `${t}/${rel}: ${ro(plan).join(' ')}`);
    }
    // Existing ones are bound as they are (the host's own), never replaced by a placeholder.
    const existing = planProtections({
      workspace: WS,
      targets: ['/workspace'],
      facts: facts({
        ...REPO,
        [`${WS}/.git/commondir`]: 'file',
        [`${WS}/.git/modules`]: 'dir',
        [`${WS}/.git/objects/info/alternates`]: 'file',
      }),
    });
    for (const rel of ['commondir', 'modules', 'objects/info/alternates']) assert.ok(ro(existing).includes(`/workspace/.git/${rel}`), rel);
    assert.deepEqual(
      existing.placeholders.filter((p) => /\/(commondir|modules|alternates)$/.test(p.path)),
      [],
      JSON.stringify(existing.placeholders),
    );
    // Missing objects/info: read-only as a whole (no alternates can be made below it); missing objects likewise.
    const noInfo = planProtections({
      workspace: WS,
      targets: ['/workspace'],
      facts: facts({ ...REPO, [`${WS}/.git/objects/info`]: 'missing' }),
    });
    assert.ok(ro(noInfo).includes('/workspace/.git/objects/info') && pins(noInfo).includes('/workspace/.git/objects'));
    assert.ok(!noInfo.mounts.some((m) => m.target.endsWith('/alternates')));
    const noObjects = planProtections({
      workspace: WS,
      targets: ['/workspace'],
      facts: facts({ ...REPO, [`${WS}/.git/objects`]: 'missing' }),
    });
    assert.ok(ro(noObjects).includes('/workspace/.git/objects') && !noObjects.mounts.some((m) => m.target.includes('/objects/')));
    // A link where git keeps its object store refuses the open, as any protected path.
    for (const rel of ['objects', 'objects/info', 'objects/info/alternates', 'commondir', 'modules']) {
      assert.throws(
        () => planProtections({ workspace: WS, targets: ['/workspace'], facts: facts({ ...REPO, [`${WS}/.git/${rel}`]: 'symlink' }) }),
        new RegExp(`\\.git/${rel.replace(/\//g, '\\/')} is a symbolic link`),
        rel,
      );
    }
  });

  it('a commondir placeholder names its own directory, every other placeholder file is empty; only those count as ours', () => {
    assert.equal(placeholderText('commondir'), '.\n');
    assert.equal(placeholderText('file'), '');
    assert.ok(isPlaceholderText('commondir', '.\n') && isPlaceholderText('config', '') && isPlaceholderText('commondir', ''));
    for (const [name, text] of [
      ['commondir', '..\n'],
      ['commondir', '.'],
      ['config', '.\n'],
      ['alternates', '/elsewhere/objects\n'],
    ] as const) {
      assert.equal(isPlaceholderText(name, text), false, `${name} ${JSON.stringify(text)}`);
    }
  });

  it('a missing git config is an empty file (git reads a directory there as an error); a missing .git one read-only directory', () => {
    const noConfig = planProtections({ workspace: WS, targets: ['/workspace'], facts: facts({ [`${WS}/.git`]: 'dir' }) });
    assert.deepEqual(
      noConfig.placeholders.filter((p) => p.path.startsWith(`${WS}/.git/`)),
      [
        { path: `${WS}/.git/config`, kind: 'file' },
        { path: `${WS}/.git/hooks`, kind: 'dir' },
        { path: `${WS}/.git/info`, kind: 'dir' },
        { path: `${WS}/.git/worktrees`, kind: 'dir' },
        { path: `${WS}/.git/commondir`, kind: 'commondir' },
        { path: `${WS}/.git/modules`, kind: 'dir' },
        { path: `${WS}/.git/objects`, kind: 'dir' },
      ],
    );
    const notARepo = planProtections({ workspace: WS, targets: ['/workspace'], facts: facts({}) });
    assert.ok(notARepo.placeholders.some((p) => p.path === `${WS}/.git` && p.kind === 'dir'));
    assert.ok(ro(notARepo).includes('/workspace/.git'));
    assert.ok(!ro(notARepo).includes('/workspace/.git/config'), 'nothing below a placeholder');
    assert.ok(!ro(notARepo).includes('/workspace/.worktrees'), 'no worktrees folder outside a repository');
  });

  it('a .git file (a worktree or submodule pointer) is bound read-only as it is', () => {
    const plan = planProtections({ workspace: WS, targets: ['/workspace'], facts: facts({ [`${WS}/.git`]: 'file' }) });
    assert.ok(ro(plan).includes('/workspace/.git'));
    assert.ok(!plan.placeholders.some((p) => p.path === `${WS}/.git` || p.path.startsWith(`${WS}/.git/`)));
    assert.deepEqual(pins(plan), []);
  });

  it('an existing .claude is pinned, its settings*.json, commands and agents read-only (missing ones as placeholders)', () => {
    const tree: Tree = {
      ...REPO,
      [`${WS}/.claude`]: 'dir',
      [`${WS}/.claude/settings.json`]: 'file',
      [`${WS}/.claude/settings.team.json`]: 'file',
      [`${WS}/.claude/commands`]: 'dir',
      [`${WS}/.claude/skills`]: 'dir',
    };
    const plan = planProtections({ workspace: WS, targets: ['/workspace'], facts: facts(tree) });
    assert.ok(pins(plan).includes('/workspace/.claude'));
    for (const rel of ['settings.json', 'settings.local.json', 'settings.team.json', 'commands', 'agents']) {
      assert.ok(ro(plan).includes(`/workspace/.claude/${rel}`), rel);
    }
    assert.ok(!ro(plan).includes('/workspace/.claude/skills'), 'the rest of .claude stays writable');
    assert.deepEqual(
      plan.placeholders.filter((p) => p.path.startsWith(`${WS}/.claude`)),
      [
        { path: `${WS}/.claude/settings.local.json`, kind: 'dir' },
        { path: `${WS}/.claude/agents`, kind: 'dir' },
      ],
    );
  });

  it('refuses a protected path that is a symbolic link, wherever it points, and a file with hard links', () => {
    for (const rel of ['.vscode', '.envrc', '.git', '.git/config', '.git/hooks', '.claude', '.worktrees']) {
      const tree: Tree = { ...REPO, [`${WS}/${rel}`]: 'symlink' };
      assert.throws(
        () => planProtections({ workspace: WS, targets: ['/workspace'], facts: facts(tree) }),
        (err: Error) => err.message.includes(`${WS}/${rel} is a symbolic link`) && /toolbox\.protectedPaths/.test(err.message),
        rel,
      );
    }
    assert.throws(
      () =>
        planProtections({
          workspace: WS,
          targets: ['/workspace'],
          facts: facts({ ...REPO, [`${WS}/.git/config`]: { kind: 'file', links: 2 } }),
        }),
      /\.git\/config has other names \(hard links\)/,
    );
  });

  it("a worktree container: the worktree folder's pointer read-only, the main .git's config, hooks, info and worktrees too, its own gitdir writable", () => {
    const root = '/home/u/repo';
    const wt = `${root}/.worktrees/tbx-task`;
    const own = `${root}/.git/worktrees/tbx-task`;
    const tree: Tree = {
      [`${wt}/.git`]: 'file',
      [`${root}/.git`]: 'dir',
      [`${root}/.git/config`]: 'file',
      [`${root}/.git/hooks`]: 'dir',
      [`${root}/.git/info`]: 'dir',
      [`${root}/.git/worktrees`]: 'dir',
      [`${root}/.git/commondir`]: 'file',
      [`${root}/.git/modules`]: 'dir',
      [`${root}/.git/objects`]: 'dir',
      [`${root}/.git/objects/info`]: 'dir',
      [`${root}/.git/objects/info/alternates`]: 'file',
      [own]: 'dir',
      [`${own}/commondir`]: 'file',
      [`${own}/gitdir`]: 'file',
    };
    const plan = planProtections({
      workspace: wt,
      targets: ['/workspace', wt],
      worktreeRoot: root,
      facts: facts(tree, { [`${wt}/.git`]: `gitdir: ${own}\n`, [`${own}/commondir`]: '../..\n' }),
    });
    assert.ok(ro(plan).includes('/workspace/.git') && ro(plan).includes(`${wt}/.git`));
    // Its .gitmodules placeholder is kept out of git status by the main repository's excludes (info/ is shared).
    assert.deepEqual(
      plan.placeholders.find((p) => p.path === `${wt}/.gitmodules`),
      { path: `${wt}/.gitmodules`, kind: 'file', exclude: { file: `${root}/.git/info/exclude`, line: '/.gitmodules' } },
    );
    for (const rel of ['config', 'hooks', 'info', 'worktrees', 'commondir', 'modules', 'objects/info/alternates']) {
      assert.ok(ro(plan).includes(`${root}/.git/${rel}`), rel);
    }
    assert.deepEqual(
      pins(plan),
      [`${root}/.git/objects`, `${root}/.git/objects/info`, own],
      'only its own gitdir is writable under worktrees/ (and the object store is pinned)',
    );
    for (const name of ['config.worktree', 'commondir', 'gitdir']) assert.ok(ro(plan).includes(`${own}/${name}`), name);
    assert.deepEqual(
      plan.placeholders.filter((p) => p.path.startsWith(`${root}/.git`)),
      [{ path: `${own}/config.worktree`, kind: 'file' }],
    );
    // The main .git's paths are bound at their own host path only (the container mounts that .git there).
    assert.ok(!plan.mounts.some((m) => m.target.startsWith('/workspace/.git/')));

    // A pointer somewhere else: worktrees/ stays read-only as a whole, nothing below it is writable.
    const elsewhere = planProtections({
      workspace: wt,
      targets: ['/workspace', wt],
      worktreeRoot: root,
      facts: facts(tree, { [`${wt}/.git`]: 'gitdir: /elsewhere/.git/worktrees/x\n' }),
    });
    assert.deepEqual(pins(elsewhere), [`${root}/.git/objects`, `${root}/.git/objects/info`]);
  });

  it('relative gitdir pointers resolve against the worktree folder', () => {
    const root = '/home/u/repo';
    const wt = `${root}/.worktrees/tbx-rel`;
    const own = `${root}/.git/worktrees/tbx-rel`;
    const plan = planProtections({
      workspace: wt,
      targets: ['/workspace'],
      worktreeRoot: root,
      facts: facts(
        { [`${wt}/.git`]: 'file', [`${root}/.git/worktrees`]: 'dir', [own]: 'dir' },
        { [`${wt}/.git`]: 'gitdir: ../../.git/worktrees/tbx-rel\n' },
      ),
    });
    assert.deepEqual(pins(plan), [own]);
  });
});

describe('protected paths in the session plan', () => {
  const names = objectNames();
  const request = (over: Partial<SessionRequest> = {}): SessionRequest => ({
    workspace: WS,
    config: { ...DEFAULT_CONFIG },
    peer: false,
    image: 'toolbox-runtime:test',
    names,
    protectedPaths: true,
    ...over,
  });
  const host = (tree: Tree, files: Record<string, string> = {}): HostFacts => ({
    uid: 1000,
    gid: 1000,
    home: '/home/u',
    platform: 'linux',
    pathExists: () => false,
    ...facts(tree, files),
  });

  it('adds the binds after the folder and its mirror, the label, and the placeholders; none when the setting is off', () => {
    const { plan } = planSession(request(), host(REPO));
    const ws = plan.create.HostConfig.Binds.indexOf(`${WS}:/workspace`);
    const first = plan.create.HostConfig.Binds.findIndex((b) => b.includes('/.git'));
    assert.ok(ws >= 0 && first > ws, 'nested binds come after the folder');
    assert.ok(plan.create.HostConfig.Binds.includes(`${WS}/.git/config:${WS}/.git/config:ro`));
    assert.ok(plan.create.HostConfig.Binds.includes(`${WS}/.git/config:/workspace/.git/config:ro`));
    assert.ok(plan.create.HostConfig.Binds.includes(`${WS}/.git:${WS}/.git`));
    assert.equal(plan.create.Labels[LABELS.protectedPaths], 'read-only');
    assert.ok(plan.placeholders?.some((p) => p.path === `${WS}/.envrc`));

    const off = planSession(request({ protectedPaths: false }), host(REPO)).plan;
    assert.ok(!off.create.HostConfig.Binds.some((b) => b.includes('/.git')));
    assert.equal(off.create.Labels[LABELS.protectedPaths], undefined);
    assert.equal(off.placeholders, undefined);
  });

  it('a folder under a system directory has no mirror: only /workspace is protected', () => {
    const usr = '/usr/src/proj';
    const { plan } = planSession(request({ workspace: usr }), host({ [`${usr}/.git`]: 'dir', [`${usr}/.git/config`]: 'file' }));
    assert.ok(plan.create.HostConfig.Binds.includes(`${usr}/.git/config:/workspace/.git/config:ro`));
    assert.ok(!plan.create.HostConfig.Binds.includes(`${usr}/.git/config:${usr}/.git/config:ro`));
  });

  it('a worktree container protects the main .git after mounting it', () => {
    const root = '/home/u/repo';
    const wt = `${root}/.worktrees/tbx-x`;
    const own = `${root}/.git/worktrees/tbx-x`;
    const { plan } = planSession(
      request({ workspace: wt, worktreeRoot: root }),
      host(
        {
          [`${wt}/.git`]: 'file',
          [`${root}/.git`]: 'dir',
          [`${root}/.git/config`]: 'file',
          [`${root}/.git/worktrees`]: 'dir',
          [own]: 'dir',
        },
        { [`${wt}/.git`]: `gitdir: ${own}` },
      ),
    );
    const b = plan.create.HostConfig.Binds;
    assert.ok(b.indexOf(`${root}/.git:${root}/.git`) < b.indexOf(`${root}/.git/config:${root}/.git/config:ro`));
    assert.ok(b.includes(`${own}:${own}`));
    assert.ok(b.includes(`${wt}/.git:${wt}/.git:ro`));
  });

  it('refuses without the facts it needs', () => {
    assert.throws(() => planSession(request(), { uid: 1, gid: 1, home: '/home/u', platform: 'linux', pathExists: () => false }), /lstat/);
  });
});

describe('protections drift (plan/drift.ts)', () => {
  const names = objectNames();
  const host = (tree: Tree): HostFacts => ({
    uid: 1000,
    gid: 1000,
    home: '/home/u',
    platform: 'linux',
    pathExists: () => false,
    ...facts(tree),
  });
  const plan = (tree: Tree) =>
    planSession({ workspace: WS, config: { ...DEFAULT_CONFIG }, peer: false, image: 'img', names, protectedPaths: true }, host(tree)).plan;
  /** What Docker's inspect reports for a container made from `p`. */
  const mountsOf = (p: ReturnType<typeof plan>) =>
    p.mounts.map((m) => ({ Type: m.type, Source: m.source, Destination: m.target, RW: !m.readonly }));

  it('a container made without the protection lacks every path; one made with it lacks none', () => {
    const p = plan(REPO);
    const bare = mountsOf(p).filter((m) => m.Destination === '/workspace' || m.Destination === WS);
    const missing = missingProtections(bare, p);
    assert.ok(missing.includes('.git/config') && missing.includes('.vscode') && missing.includes('.git'), missing.join(' '));
    assert.deepEqual(missingProtections(mountsOf(p), p), []);
    const drift = driftAgainstPlan({ HostConfig: { SecurityOpt: p.create.HostConfig.SecurityOpt }, Mounts: bare }, p, names, undefined);
    assert.deepEqual(
      drift.map((d) => d.kind),
      ['protections'],
    );
    assert.match(
      openDriftNotice(drift[0]),
      /does not have the read-only protection of \.gitmodules, \.envrc, \.mcp\.json, \.toolbox\.yaml and \d+ more/,
    );
    assert.match(openDriftNotice(drift[0]), /stop the container/);
  });

  it('a read-only mount above a path covers it (a container made while .claude was missing)', () => {
    const before = plan(REPO);
    const after = plan({ ...REPO, [`${WS}/.claude`]: 'dir', [`${WS}/.claude/commands`]: 'dir' });
    assert.deepEqual(missingProtections(mountsOf(before), after), []);
  });

  it('a protected path the host replaced since the container was made (another identity) is reported', () => {
    const made = plan({ ...REPO, [`${WS}/.git/config`]: { kind: 'file', links: 1, identity: '7@100' } });
    const now = plan({ ...REPO, [`${WS}/.git/config`]: { kind: 'file', links: 1, identity: '7@200' } });
    assert.deepEqual(replacedProtections(made.create.Labels, now), ['.git/config']);
    assert.deepEqual(replacedProtections(made.create.Labels, made), []);
    assert.deepEqual(replacedProtections({}, now), [], 'a container without the record');
    assert.deepEqual(replacedProtections({ [LABELS.protectedIdentities]: 'not json' }, now), []);
    const info = {
      HostConfig: { SecurityOpt: now.create.HostConfig.SecurityOpt },
      Mounts: mountsOf(made),
      Config: { Labels: made.create.Labels },
    };
    assert.deepEqual(driftAgainstPlan(info, now, names, undefined)[0]?.protections, ['.git/config']);
  });

  it('a placeholder the container recorded is reported once the host replaces or removes it, and so is a removed file (issue 38, item 8)', () => {
    // The engine adds the placeholders it made to the record (engine/open.ts); the host facts give
    // a placeholder its identity while it plans as missing (backend/hostFacts.ts).
    const gitmodules = `${WS}/.gitmodules`;
    const made = plan(REPO);
    const labels = withIdentities(made.create.Labels, { [gitmodules]: '9@1' });
    assert.equal(JSON.parse(labels[LABELS.protectedIdentities]!)[gitmodules], '9@1');
    assert.deepEqual(
      Object.keys(JSON.parse(labels[LABELS.protectedIdentities]!)).sort(),
      [...Object.keys(JSON.parse(made.create.Labels[LABELS.protectedIdentities]!)), gitmodules].sort(),
      'added to what the plan recorded',
    );
    assert.deepEqual(withIdentities({ a: 'b' }, { [gitmodules]: '9@1' }), { a: 'b' }, 'no record without the protection');

    const still = plan({ ...REPO, [gitmodules]: { kind: 'missing', identity: '9@1' } });
    assert.deepEqual(replacedProtections(labels, still), [], 'the same placeholder');
    // A host `git submodule add` renames its .gitmodules over the placeholder.
    const replaced = plan({ ...REPO, [gitmodules]: { kind: 'file', links: 1, identity: '9@2' } });
    assert.deepEqual(replacedProtections(labels, replaced), ['.gitmodules']);
    // A host `git clean -fdX` removes it (it is ignored).
    const removed = plan(REPO);
    assert.deepEqual(replacedProtections(labels, removed), ['.gitmodules']);
    // A real file the host removed detached its bind as well.
    const withConfig = plan({ ...REPO, [`${WS}/.git/config`]: { kind: 'file', links: 1, identity: '7@100' } });
    assert.deepEqual(replacedProtections(withConfig.create.Labels, plan({ ...REPO, [`${WS}/.git/config`]: 'missing' })), ['.git/config']);
    // A recorded path the plan no longer binds is not judged (nothing says where it went).
    assert.deepEqual(replacedProtections(labels, { ...removed, mounts: removed.mounts.filter((m) => m.source !== gitmodules) }), []);
  });
});
