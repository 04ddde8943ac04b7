/**
 * Finding 7 of issue 11: /edit. The bridge checked the resolved path but handed the editor the
 * original (a symlink flipped between check and open escaped 18 of 94 times); it ran stat and
 * realpath on any host path before the containment check and said how the path resolved
 * (/proc/self/cwd revealed the extension host's working directory); it accepted FIFOs and
 * device files; and it allowed all of ~/.toolbox, other workspaces' bridge tokens included.
 */
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, readdirSync, readlinkSync, realpathSync, symlinkSync, writeFileSync } from 'node:fs';
import { isAbsolute, join, relative } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { DEFAULT_CONFIG } from '../../extension/src/config/model';
import { objectNames } from '../../extension/src/contract/objects';
import { editRoots } from '../../extension/src/plan/mounts';
import { planSession } from '../../extension/src/plan/session';
import { call, startRig, unixTarget, type Rig } from './support';

/** `candidate` is `root` or below it, as text. */
function isInside(root: string, candidate: string): boolean {
  const rel = relative(root, candidate);
  return rel === '' || (!rel.startsWith('..') && !isAbsolute(rel));
}

const GENERIC =
  /^Refused to open ".*": it is neither an existing file or folder inside the workspace folder or the container's mounts, nor a new file in an existing folder of the workspace\.\n$/s;

describe('/edit symlink flip between check and open (issue 11, finding 7)', () => {
  it('never lets the editor land outside the roots while the container flips a symlink', async (t) => {
    // Where the editor actually lands: the path resolved at the moment it is opened.
    const landed: string[] = [];
    const rig = await startRig({
      prepare({ root, workspace }) {
        writeFileSync(join(workspace, 'inside.txt'), 'in');
        writeFileSync(join(root, 'outside.txt'), 'host secret');
        symlinkSync('inside.txt', join(workspace, 'flip'));
      },
      hub: {
        openInEditor: (path) => {
          try {
            landed.push(realpathSync(path));
          } catch {
            landed.push('(gone)');
          }
        },
      },
    });
    after(() => rig.cleanup());
    const flip = join(rig.workspace, 'flip');
    const flipper = spawn(
      'python3',
      [
        '-c',
        'import os, sys\nlink, a, b = sys.argv[1:4]\ntmp = link + ".t"\nfirst = True\n' +
          'while True:\n  for target in (a, b):\n    try:\n      os.symlink(target, tmp); os.rename(tmp, link)\n    except OSError:\n      pass\n' +
          '  if first:\n    print("flipping", flush=True); first = False\n',
        flip,
        'inside.txt',
        join(rig.root, 'outside.txt'),
      ],
      { stdio: ['ignore', 'pipe', 'ignore'] },
    );
    try {
      // A loaded machine starts python slowly: send requests only once the link flips.
      await new Promise<void>((resolve, reject) => {
        flipper.stdout.once('data', () => resolve());
        flipper.once('exit', (code) => reject(new Error(`the flipper exited with ${code}`)));
      });
      // At least 300 requests, and on until the checks saw each target a few times (bounded).
      const statuses: number[] = [];
      const count = (status: number) => statuses.filter((s) => s === status).length;
      while (statuses.length < 300 || ((count(204) < 10 || count(400) < 10) && statuses.length < 5_000)) {
        statuses.push((await call(unixTarget(rig), '/edit', { token: rig.token, body: { editor: 'code', path: flip } })).status);
      }
      const opened = count(204);
      const refused = count(400);
      const escaped = landed.filter((p) => !isInside(realpathSync(rig.workspace), p));
      t.diagnostic(`${statuses.length} requests during the flips: ${opened} opened, ${refused} refused, ${escaped.length} landed outside`);
      assert.ok(opened > 0 && refused > 0, 'the race was exercised (some checks saw each target)');
      assert.deepEqual(escaped, []);
      assert.ok(landed.every((p) => p === join(realpathSync(rig.workspace), 'inside.txt')));
    } finally {
      flipper.kill('SIGKILL');
    }
  });
});

describe('/edit refusals (issue 11, finding 7)', () => {
  let rig: Rig;
  let device = false;
  before(async () => {
    rig = await startRig({
      prepare({ root, workspace }) {
        writeFileSync(join(workspace, 'a.txt'), 'a');
        spawnSync('mkfifo', [join(workspace, 'pipe')]);
        spawnSync('python3', ['-c', `import socket; socket.socket(socket.AF_UNIX).bind(${JSON.stringify(join(workspace, 'sock'))})`]);
        device = spawnSync('mknod', [join(workspace, 'zero'), 'c', '1', '5']).status === 0;
        symlinkSync('/dev/null', join(workspace, 'null'));
        symlinkSync('/proc/self/cwd', join(workspace, 'cwd'));
        writeFileSync(join(root, 'outside.txt'), 'o');
      },
    });
  });
  after(async () => {
    await rig.cleanup();
  });
  const edit = (path: string) => call(unixTarget(rig), '/edit', { token: rig.token, body: { editor: 'code', path } });

  it('refuses FIFOs, sockets and devices inside the workspace, with the one generic refusal', async (t) => {
    const before = rig.recorded.edits.length;
    const paths = ['pipe', 'sock', 'null', ...(device ? ['zero'] : [])].map((p) => join(rig.workspace, p));
    if (!device) t.diagnostic('mknod is not permitted here: the device-file case is skipped');
    for (const path of paths) {
      const reply = await edit(path);
      assert.equal(reply.status, 400, path);
      assert.match(reply.text, GENERIC, path);
    }
    assert.equal(rig.recorded.edits.length, before, 'nothing was opened');
    assert.equal((await edit(join(rig.workspace, 'a.txt'))).status, 204, 'a regular file still opens');
  });

  it('never looks at a host path outside the roots, and never says how a path resolved', async () => {
    // The module objects themselves, so the bridge's compiled CommonJS calls go through the spies.
    // eslint-disable-next-line @typescript-eslint/no-require-imports -- see above
    const fsp = require('node:fs/promises') as Record<string, unknown>;
    // eslint-disable-next-line @typescript-eslint/no-require-imports -- see above
    const fs = require('node:fs') as Record<string, unknown>;
    const looked: string[] = [];
    const restore: Array<() => void> = [];
    const spy = (mod: Record<string, unknown>, names: string[]): void => {
      for (const name of names) {
        const original = mod[name] as (...a: unknown[]) => unknown;
        mod[name] = (...args: unknown[]) => {
          looked.push(String(args[0]));
          return original(...args);
        };
        restore.push(() => (mod[name] = original));
      }
    };
    spy(fsp, ['stat', 'lstat', 'realpath', 'access', 'open', 'opendir', 'readlink']);
    spy(fs, ['statSync', 'lstatSync', 'realpathSync', 'accessSync', 'openSync', 'existsSync', 'readlinkSync']);
    const pid = process.pid;
    const probes = [
      '/proc/self/cwd',
      '/proc/self/cwd/package.json',
      `/proc/${pid}/fd/1`,
      `/proc/${pid}/root/etc/hostname`,
      '/proc/self/environ',
      join(rig.root, 'outside.txt'),
      '/nonexistent/a',
    ];
    const replies: string[] = [];
    try {
      for (const path of probes) {
        const reply = await edit(path);
        assert.equal(reply.status, 400, path);
        replies.push(reply.text.replace(JSON.stringify(path), '"<path>"'));
      }
    } finally {
      for (const undo of restore) undo();
    }
    const outside = looked.filter((p) => !isInside(rig.workspace, p) && !isInside(realpathSync(rig.workspace), p));
    assert.deepEqual(outside, [], 'the bridge stat-ed or resolved a host path outside the roots');
    assert.equal(new Set(replies).size, 1, `one refusal text for every probe:\n${[...new Set(replies)].join('')}`);
    const revealing = [process.cwd(), readlinkSync(`/proc/${pid}/fd/1`), '/etc/hostname'];
    for (const text of replies) for (const secret of revealing) assert.ok(!text.includes(secret), `${text} reveals ${secret}`);
  });

  it('refuses a symlink inside the workspace to /proc/self/cwd without saying where it points', async () => {
    const reply = await edit(join(rig.workspace, 'cwd'));
    assert.equal(reply.status, 400);
    assert.match(reply.text, GENERIC);
    assert.ok(!reply.text.includes(process.cwd()));
  });
});

describe("/edit roots are this container's mounts, not all of ~/.toolbox (issue 11, finding 7)", () => {
  it("refuses another workspace's bridge token, and this one's, while the container's own mounts open", async () => {
    const rig = await startRig({
      prepare({ home }) {
        mkdirSync(join(home, '.toolbox', '.claude'), { recursive: true });
        writeFileSync(join(home, '.toolbox', '.claude', 'settings.json'), '{}');
      },
    });
    after(() => rig.cleanup());
    const other = await rig.hub.ensureWorkspace({ ...rig.registration, key: `${rig.registration.key}-b` });
    const otherToken = join(other.stateDir, 'token');
    const ownToken = join(rig.bridge.stateDir, 'token');
    assert.ok(existsSync(otherToken) && readFileSync(otherToken, 'utf8').length > 0);

    // The registration the backend builds: the bind sources of the container's real plan.
    const { plan } = planSession(
      {
        workspace: rig.workspace,
        config: DEFAULT_CONFIG,
        peer: false,
        bridge: { stateDir: rig.bridge.stateDir, runDir: rig.bridge.runDir },
        image: 'toolbox-runtime:test',
        names: objectNames(),
      },
      { uid: 1000, gid: 1000, home: rig.home, platform: 'linux', pathExists: existsSync },
    );
    await rig.hub.ensureWorkspace({ ...rig.registration, mountsRoots: editRoots(plan.mounts) });
    const edit = (path: string) => call(unixTarget(rig), '/edit', { token: rig.token, body: { editor: 'code', path } });

    for (const path of [otherToken, ownToken, join(rig.home, '.toolbox', 'toolbox', 'vscode')]) {
      const reply = await edit(path);
      assert.equal(reply.status, 400, path);
      assert.match(reply.text, GENERIC);
    }
    assert.equal((await edit(join(rig.home, '.toolbox', '.claude', 'settings.json'))).status, 204, "the container's .claude mount opens");
    assert.equal((await edit(rig.workspace)).status, 204);

    // Control: with all of ~/.toolbox as a root (what the backend registered before), the other
    // workspace's token opened. The roots are what closes it.
    await rig.hub.ensureWorkspace({ ...rig.registration, mountsRoots: [join(rig.home, '.toolbox')] });
    assert.equal((await edit(otherToken)).status, 204);
  });
});

describe('/edit of a file that does not exist yet opens a new, unsaved editor (issue 13, item 3)', () => {
  let rig: Rig;
  let mounts: string;
  before(async () => {
    rig = await startRig({
      prepare({ root, workspace }) {
        mkdirSync(join(workspace, 'sub'));
        mkdirSync(join(root, 'outside-dir'));
        symlinkSync(join(root, 'outside-dir'), join(workspace, 'out'));
        symlinkSync(join(root, 'not-there.txt'), join(workspace, 'dangling'));
        symlinkSync('sub', join(workspace, 'inner-dir'));
        mkdirSync(join(root, 'mounts'));
      },
    });
    mounts = join(rig.root, 'mounts');
    await rig.hub.ensureWorkspace({ ...rig.registration, mountsRoots: [mounts] });
  });
  after(async () => {
    await rig.cleanup();
  });
  const edit = (path: string) => call(unixTarget(rig), '/edit', { token: rig.token, body: { editor: 'code', path } });
  const real = (path: string) => join(realpathSync(rig.workspace), path);

  it('opens a missing file of the workspace as an untitled editor bound to its resolved path, writing nothing', async () => {
    for (const [path, opened] of [
      [join(rig.workspace, 'brand-new.txt'), real('brand-new.txt')],
      [join(rig.workspace, 'sub', 'new.ts'), real('sub/new.ts')],
      [join(rig.workspace, 'inner-dir', 'via-link.md'), real('sub/via-link.md')],
      [join(rig.workspace, 'a'.repeat(255)), real('a'.repeat(255))],
    ]) {
      const reply = await edit(path);
      assert.equal(reply.status, 204, `${path}: ${reply.text}`);
      assert.deepEqual(rig.recorded.edits.at(-1), { path: opened, isDirectory: false, untitled: true });
      assert.equal(existsSync(path), false, `${path} was created on the host`);
    }
  });

  it('refuses ../, a symlinked folder leading out, a dangling symlink, a missing folder, long names, control characters and the mounts', async () => {
    const before = rig.recorded.edits.length;
    const cases = [
      `${rig.workspace}/../outside-new.txt`,
      `${rig.workspace}/sub/../../outside-new.txt`,
      join(rig.workspace, 'out', 'new.txt'),
      join(rig.workspace, 'dangling'),
      join(rig.workspace, 'no-such-dir', 'new.txt'),
      join(rig.workspace, 'a'.repeat(256)),
      join(rig.workspace, `${'é'.repeat(128)}`),
      join(rig.workspace, 'new\nfile.txt'),
      join(rig.workspace, 'tab\there.txt'),
      join(rig.workspace, 'esc\u001b[31m.txt'),
      join(mounts, 'new.md'),
      join(rig.root, 'outside-new.txt'),
    ];
    for (const path of cases) {
      const reply = await edit(path);
      assert.equal(reply.status, 400, JSON.stringify(path));
      assert.match(reply.text, path.includes('..') ? /absolute and clean/ : GENERIC, JSON.stringify(path));
      assert.ok(!reply.text.includes(join(rig.root, 'outside-dir')), `the refusal says where ${path} resolves`);
    }
    assert.equal(rig.recorded.edits.length, before, 'nothing was opened');
    assert.deepEqual(readdirSync(join(rig.root, 'outside-dir')), [], 'nothing was written outside');
    assert.equal(existsSync(join(rig.root, 'not-there.txt')), false, 'nothing was written through the dangling symlink');
  });
});
