import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { execFileSync } from 'node:child_process';
import {
  findProjectConfig,
  isPrivateGroup,
  loadConfig,
  nodeConfigFs,
  withProjectFile,
  writeConfigFile,
  type ConfigFs,
  type FileOwner,
  type LoadConfigOptions,
} from '../../extension/src/config/files';
import { issuesForOpen } from '../../extension/src/config/openIssues';

const NAME = '.toolbox.yaml';

describe('config files on disk', () => {
  // <root>/.toolbox.yaml (above HOME), <root>/home/{.toolbox.yaml, a/b/c}, <root>/outside/x/y
  let root: string;
  let home: string;
  const write = (rel: string, text: string) => {
    const file = path.join(root, rel);
    fs.mkdirSync(path.dirname(file), { recursive: true });
    fs.writeFileSync(file, text);
    return file;
  };
  const dir = (rel: string) => {
    const d = path.join(root, rel);
    fs.mkdirSync(d, { recursive: true });
    return d;
  };
  const cleanFrom = (rel: string) => fs.rmSync(path.join(root, rel), { recursive: true, force: true });

  before(() => {
    root = fs.mkdtempSync(path.join(os.tmpdir(), 'tbx-config-'));
    home = dir('home');
    write(NAME, 'image: above-home:1\n');
    write(`home/${NAME}`, 'image: user:1\nenv: {FROM_USER: "1"}\n');
    dir('home/a/b/c');
    dir('outside/x/y');
  });
  after(() => fs.rmSync(root, { recursive: true, force: true }));

  describe('findProjectConfig', () => {
    it('finds the file in the folder itself', () => {
      const file = write(`home/a/b/c/${NAME}`, 'pull: never\n');
      try {
        assert.equal(findProjectConfig(path.join(home, 'a/b/c'), home), file);
      } finally {
        cleanFrom(`home/a/b/c/${NAME}`);
      }
    });

    it('walks up to the nearest file, which wins over one further up', () => {
      write(`home/a/${NAME}`, 'pull: always\n');
      const nearest = write(`home/a/b/${NAME}`, 'pull: never\n');
      try {
        assert.equal(findProjectConfig(path.join(home, 'a/b/c'), home), nearest);
      } finally {
        cleanFrom(`home/a/${NAME}`);
        cleanFrom(`home/a/b/${NAME}`);
      }
    });

    it('stops at HOME: the user file is not a project file and nothing above HOME is read', () => {
      assert.equal(findProjectConfig(path.join(home, 'a/b/c'), home), undefined);
      assert.equal(findProjectConfig(home, home), undefined);
    });

    it("outside HOME reads only the folder's own file, never a parent directory's (issue 11, finding 5)", () => {
      const parent = write(`outside/${NAME}`, 'pull: never\n');
      try {
        assert.equal(findProjectConfig(path.join(root, 'outside/x/y'), home), undefined, `${parent} is not the folder's`);
        const own = write(`outside/x/y/${NAME}`, 'pull: always\n');
        assert.equal(findProjectConfig(path.join(root, 'outside/x/y'), home), own);
      } finally {
        cleanFrom(`outside/${NAME}`);
        cleanFrom(`outside/x/y/${NAME}`);
      }
    });

    it('outside HOME and without HOME, a folder without the file has no project file', () => {
      assert.equal(findProjectConfig(path.join(root, 'outside/x/y'), home), undefined);
      assert.equal(findProjectConfig(path.join(root, 'outside/x/y'), ''), undefined);
      assert.equal(findProjectConfig('/', home), fs.existsSync(`/${NAME}`) ? `/${NAME}` : undefined);
    });

    it('a sibling of HOME that shares its name as a prefix is outside HOME', () => {
      const sibling = dir('home2/p');
      const above = write(`home2/${NAME}`, 'pull: never\n');
      try {
        assert.equal(findProjectConfig(sibling, home), undefined, `${above} is above the folder, outside HOME`);
      } finally {
        cleanFrom(`home2/${NAME}`);
      }
    });

    it('skips a directory named .toolbox.yaml', () => {
      dir(`home/a/b/${NAME}`);
      const file = write(`home/a/${NAME}`, 'pull: never\n');
      try {
        assert.equal(findProjectConfig(path.join(home, 'a/b/c'), home), file);
      } finally {
        cleanFrom(`home/a/b/${NAME}`);
        cleanFrom(`home/a/${NAME}`);
      }
    });
  });

  describe('loadConfig', () => {
    const load = (folder: string, trusted = true, h = home) => loadConfig({ folder, home: h, env: {}, settings: {}, trusted });

    it('merges ~/.toolbox.yaml and the nearest project file', async () => {
      const project = write(`home/a/${NAME}`, 'image: project:1\nenv: {FROM_PROJECT: "1"}\n');
      try {
        const r = await load(path.join(home, 'a/b/c'));
        assert.equal(r.config.image, 'project:1');
        assert.deepEqual(r.config.env, { FROM_USER: '1', FROM_PROJECT: '1' });
        assert.deepEqual(r.files, [path.join(home, NAME), project]);
        assert.deepEqual(r.issues, []);
      } finally {
        cleanFrom(`home/a/${NAME}`);
      }
    });

    it('is fine without any file', async () => {
      const emptyHome = dir('empty-home');
      const r = await load(dir('empty-home/w'), true, emptyHome);
      assert.deepEqual(r.files, []);
      assert.deepEqual(r.issues, []);
      assert.equal(r.config.pull, 'auto');
    });

    it('does not read an untrusted project file, and says it was ignored', async () => {
      const project = write(`home/a/${NAME}`, 'pull: [this is broken\nenv: {INJECTED: "1"}\n');
      try {
        const r = await load(path.join(home, 'a/b/c'), false);
        assert.equal(r.projectFileIgnored, true);
        assert.equal(r.config.image, 'user:1');
        assert.deepEqual(
          r.issues.map((i) => [i.severity, i.source]),
          [['warning', project]],
        );
      } finally {
        cleanFrom(`home/a/${NAME}`);
      }
    });

    it('skips an unreadable user file with a warning, as upstream, and still applies the project file', async () => {
      const odd = dir('odd-home');
      dir(`odd-home/${NAME}`); // a directory where the file should be: reading it fails
      const project = write(`odd-home/p/${NAME}`, 'pull: never\n');
      const r = await load(path.join(odd, 'p'), true, odd);
      assert.equal(r.config.pull, 'never');
      assert.deepEqual(r.files, [project]);
      assert.equal(r.issues.length, 1);
      assert.equal(r.issues[0]!.severity, 'warning');
      assert.equal(r.issues[0]!.fileSkipped, true);
      assert.equal(r.issues[0]!.source, path.join(odd, NAME));
      assert.match(r.issues[0]!.message, /could not be read .*the toolbox CLI skips it too/);
      assert.deepEqual(issuesForOpen(r.issues, odd).notices.length, 1);
    });

    it('stops the open on an unreadable project file', async () => {
      const odd = dir('odd-home2');
      fs.writeFileSync(path.join(dir('odd-home2/p'), NAME), 'x'.repeat(2 * 1024 * 1024)); // too large to be read
      const r = await load(path.join(odd, 'p'), true, odd);
      assert.equal(r.issues[0]!.severity, 'error');
      assert.throws(
        () => issuesForOpen(r.issues, odd),
        /~\/p\/\.toolbox\.yaml: could not be read .*Fix that file, then open the shell again/,
      );
    });

    // Issue 15, item 9: a broken project file fails the open, as upstream's `toolbox shell` fails.
    it('stops the open on a project file that is not YAML, naming file:line and the fix', async () => {
      const project = write(`home/a/${NAME}`, 'pull: never\nmounts:\n  - {name: x\nenv: {A: "1"}\n');
      try {
        const r = await load(path.join(home, 'a/b/c'));
        assert.deepEqual(r.files, [path.join(home, NAME)]);
        assert.deepEqual(
          r.issues.map((i) => [i.severity, i.source]),
          [['error', project]],
        );
        assert.throws(
          () => issuesForOpen(r.issues, home),
          (err: Error) => {
            assert.match(
              err.message,
              /^Toolbox did not open the shell because of a configuration error: ~\/a\/\.toolbox\.yaml:4: is not valid YAML: /,
            );
            assert.match(
              err.message,
              /Fix that file around line 4, then open the shell again \(the toolbox CLI refuses this configuration too\)\.$/,
            );
            return true;
          },
        );
      } finally {
        cleanFrom(`home/a/${NAME}`);
      }
    });

    it('stops the open on a project file with a bad value, naming file:line and the key', async () => {
      const project = write(`home/a/${NAME}`, 'pull: never\npeer_messaging: maybe\n');
      try {
        const r = await load(path.join(home, 'a/b/c'));
        assert.equal(r.issues[0]!.source, project);
        assert.throws(
          () => issuesForOpen(r.issues, home),
          /~\/a\/\.toolbox\.yaml:2: peer_messaging: expected true or false, got "maybe"\. Fix line 2 of that file/,
        );
      } finally {
        cleanFrom(`home/a/${NAME}`);
      }
    });

    it('skips a user file that is not YAML with a warning, as upstream, and applies the project file', async () => {
      const odd = dir('yaml-home');
      const user = path.join(odd, NAME);
      fs.writeFileSync(user, 'image: [broken\n');
      const project = write(`yaml-home/p/${NAME}`, 'pull: never\n');
      const r = await load(path.join(odd, 'p'), true, odd);
      assert.equal(r.config.pull, 'never');
      assert.deepEqual(r.files, [project]);
      assert.deepEqual(
        r.issues.map((i) => [i.severity, i.source, i.fileSkipped]),
        [['warning', user, true]],
      );
      const open = issuesForOpen(r.issues, odd);
      assert.equal(open.notices.length, 1);
      assert.match(open.notices[0]!, /^~\/\.toolbox\.yaml:2: is not valid YAML: .*Its settings are not applied until it is fixed/);
    });

    it('refuses a file too large to be a config file', async () => {
      const big = dir('big-home');
      fs.writeFileSync(path.join(big, NAME), 'x'.repeat(2 * 1024 * 1024));
      const r = await load(dir('big-home/w'), true, big);
      assert.deepEqual(r.files, []);
      assert.match(r.issues[0]!.message, /more than the 1048576 a config file may have/);
    });
  });

  // Issue 11, finding 5: a config file someone else controls is never applied.
  describe('files the user does not control', { skip: process.getuid?.() !== 0 ? 'chown needs root' : false }, () => {
    const OTHER_UID = 12345;
    const OTHER_GID = 12346;
    const load = (folder: string, h: string, options: Partial<LoadConfigOptions> = {}) =>
      loadConfig({ folder, home: h, env: {}, settings: {}, trusted: true, ...options });
    const me = (uid: number, privateGid?: number): FileOwner => ({ uid, groupIsPrivate: (g) => g === privateGid });
    let n = 0;
    /** A fresh home with its own ~/.toolbox.yaml, and a folder outside it. */
    const fresh = () => {
      const h = dir(`owners-${++n}/home`);
      fs.writeFileSync(path.join(h, NAME), 'image: user:1\n', { mode: 0o644 });
      fs.chmodSync(path.join(h, NAME), 0o644);
      return { h, folder: dir(`owners-${n}/srv/x/proj`), srv: path.join(root, `owners-${n}/srv`) };
    };
    const plant = (file: string, text: string, uid: number, gid: number, mode: number) => {
      fs.writeFileSync(file, text);
      fs.chownSync(file, uid, gid);
      fs.chmodSync(file, mode);
      return file;
    };
    const EVIL = 'image: evil.example/backdoor:1\nmounts:\n  - {name: aws, source: ~/.aws, target: .aws}\n';

    it("applies no file another user planted in a parent directory outside HOME (the finding's attack)", async () => {
      const { h, folder, srv } = fresh();
      plant(path.join(srv, NAME), EVIL, OTHER_UID, OTHER_GID, 0o644);
      const r = await load(folder, h);
      assert.equal(r.config.image, 'user:1');
      assert.deepEqual(r.config.mounts, []);
      assert.deepEqual(r.files, [path.join(h, NAME)]);
    });

    it("skips the folder's own file when another user owns it, and says so naming the file and why", async () => {
      const { h, folder } = fresh();
      const file = plant(path.join(folder, NAME), EVIL, OTHER_UID, OTHER_GID, 0o644);
      const r = await load(folder, h);
      assert.equal(r.config.image, 'user:1');
      assert.deepEqual(r.config.mounts, []);
      assert.deepEqual(r.files, [path.join(h, NAME)]);
      assert.equal(r.issues.length, 1);
      const issue = r.issues[0]!;
      assert.equal(issue.severity, 'warning');
      assert.equal(issue.fileSkipped, true);
      assert.equal(issue.source, file);
      assert.match(issue.message, /^is owned by another user \(uid 12345\), so its settings are not applied/);
    });

    it('skips ~/.toolbox.yaml when another user owns it', async () => {
      const { h, folder } = fresh();
      plant(path.join(h, NAME), EVIL, OTHER_UID, OTHER_GID, 0o644);
      const r = await load(folder, h);
      assert.equal(r.config.image, undefined);
      assert.deepEqual(r.files, []);
      assert.match(r.issues[0]!.message, /owned by another user \(uid 12345\)/);
    });

    it("skips a file writable by a group that is not the user's private group", async () => {
      const { h, folder } = fresh();
      const file = plant(path.join(folder, NAME), EVIL, 0, OTHER_GID, 0o664);
      const r = await load(folder, h, { owner: me(0, 0) });
      assert.equal(r.config.image, 'user:1');
      assert.equal(r.issues[0]!.source, file);
      assert.match(r.issues[0]!.message, /is writable by group 12346 \(mode 0664\).*Run chmod g-w on it\.$/);
    });

    it("accepts a group-writable file in the user's private group (umask 002 on Debian and Ubuntu)", async () => {
      const { h, folder } = fresh();
      plant(path.join(folder, NAME), 'image: mine:1\n', 0, OTHER_GID, 0o664);
      const r = await load(folder, h, { owner: me(0, OTHER_GID) });
      assert.equal(r.config.image, 'mine:1');
      assert.deepEqual(r.issues, []);
    });

    it('skips a world-writable file, even one the user owns in a private group', async () => {
      const { h, folder } = fresh();
      plant(path.join(folder, NAME), EVIL, 0, OTHER_GID, 0o666);
      const r = await load(folder, h, { owner: me(0, OTHER_GID) });
      assert.equal(r.config.image, 'user:1');
      assert.match(r.issues[0]!.message, /is writable by every user on this machine \(mode 0666\).*Run chmod o-w on it\.$/);
    });

    it("accepts the user's own file and a root-owned one, refuses another non-root user's (for a non-root user)", async () => {
      const user = 4242;
      for (const [owner, applied] of [
        [user, true],
        [0, true],
        [user + 1, false],
      ] as const) {
        const { h, folder } = fresh();
        fs.chownSync(path.join(h, NAME), user, user);
        plant(path.join(folder, NAME), 'image: project:1\n', owner, owner, 0o644);
        const r = await load(folder, h, { owner: me(user) });
        assert.equal(r.config.image, applied ? 'project:1' : 'user:1', `a project file owned by uid ${owner}`);
      }
    });

    it('checks the file a symlink points to, not the link', async () => {
      const { h, folder } = fresh();
      const target = plant(path.join(root, `owners-${n}/theirs.yaml`), EVIL, OTHER_UID, OTHER_GID, 0o644);
      fs.symlinkSync(target, path.join(folder, NAME));
      const r = await load(folder, h);
      assert.equal(r.config.image, 'user:1');
      assert.match(r.issues[0]!.message, /owned by another user/);
    });
  });

  describe('what is opened', () => {
    /** node:fs, recording every file the loader opens. */
    const recording = () => {
      const opened: string[] = [];
      const recorder: ConfigFs = {
        isFile: (p) => nodeConfigFs.isFile(p),
        read: (p, owner) => {
          opened.push(p);
          return nodeConfigFs.read(p, owner);
        },
      };
      return { opened, recorder };
    };

    it('never opens the project file of an untrusted workspace, not even to discard it', async () => {
      const project = write(`home/a/${NAME}`, 'image: project:1\n');
      try {
        const { opened, recorder } = recording();
        const r = await loadConfig({ folder: path.join(home, 'a/b/c'), home, env: {}, settings: {}, trusted: false, fs: recorder });
        assert.deepEqual(opened, [path.join(home, NAME)], 'only the user file is opened');
        assert.equal(r.projectFileIgnored, true);
        assert.equal(r.config.image, 'user:1');
        const trusted = recording();
        await loadConfig({ folder: path.join(home, 'a/b/c'), home, env: {}, settings: {}, trusted: true, fs: trusted.recorder });
        assert.deepEqual(trusted.opened, [path.join(home, NAME), project], 'the recorder sees a project file that is read');
      } finally {
        cleanFrom(`home/a/${NAME}`);
      }
    });

    it('does not hang on a FIFO where ~/.toolbox.yaml should be, and says it is not a regular file', async () => {
      const fifoHome = dir('fifo-home');
      execFileSync('mkfifo', [path.join(fifoHome, NAME)]);
      const loaded = loadConfig({ folder: dir('fifo-home/w'), home: fifoHome, env: {}, settings: {}, trusted: true });
      let timer: NodeJS.Timeout | undefined;
      const timeout = new Promise<never>((_, reject) => {
        timer = setTimeout(() => reject(new Error('loadConfig blocked on the FIFO')), 3000);
      });
      try {
        const r = await Promise.race([loaded, timeout]);
        assert.deepEqual(r.files, []);
        assert.match(r.issues[0]!.message, /is not a regular file/);
      } finally {
        clearTimeout(timer);
        // Unblock a reader stuck on the FIFO (the old code), so the test process can end.
        fs.promises
          .open(path.join(fifoHome, NAME), fs.constants.O_WRONLY | fs.constants.O_NONBLOCK)
          .then((h) => h.close())
          .catch(() => undefined);
      }
    });
  });

  describe('isPrivateGroup', () => {
    const user = os.userInfo().username;
    const files = (group: string, passwd: string) => {
      const d = fs.mkdtempSync(path.join(root, 'accounts-'));
      fs.writeFileSync(path.join(d, 'group'), group);
      fs.writeFileSync(path.join(d, 'passwd'), passwd);
      return { group: path.join(d, 'group'), passwd: path.join(d, 'passwd') };
    };
    it('a group with no other member and no other account using it as primary is private', () => {
      const f = files(`${user}:x:5000:\nstaff:x:50:a,b\n`, `${user}:x:5000:5000::/h:/bin/sh\n`);
      assert.equal(isPrivateGroup(5000, 5000, f), true);
      assert.equal(isPrivateGroup(5000, 5000, files(`${user}:x:5000:${user}\n`, `${user}:x:5000:5000::/h:/bin/sh\n`)), true);
    });
    it('not when another user is a member, another account has it as primary group, or it is unknown', () => {
      assert.equal(isPrivateGroup(50, 5000, files(`staff:x:50:mallory\n`, `${user}:x:5000:50::/h:/bin/sh\n`)), false);
      assert.equal(
        isPrivateGroup(100, 5000, files(`users:x:100:\n`, `${user}:x:5000:100::/h:/bin/sh\nbob:x:5001:100::/b:/bin/sh\n`)),
        false,
      );
      assert.equal(isPrivateGroup(777, 5000, files(`users:x:100:\n`, `${user}:x:5000:100::/h:/bin/sh\n`)), false);
    });
  });

  describe('writeConfigFile', () => {
    it('replaces the text atomically, keeping the mode', async () => {
      const file = write('write/keep/.toolbox.yaml', 'image: a\n');
      fs.chmodSync(file, 0o600);
      await writeConfigFile(file, 'image: b\n', 'image: a\n');
      assert.equal(fs.readFileSync(file, 'utf8'), 'image: b\n');
      assert.equal(fs.statSync(file).mode & 0o777, 0o600);
      assert.deepEqual(
        fs.readdirSync(path.dirname(file)).filter((f) => f.endsWith('.tmp')),
        [],
        'no temporary file left behind',
      );
    });

    it('creates a missing file 0644', async () => {
      const file = path.join(dir('write/new'), NAME);
      await writeConfigFile(file, 'mounts: []\n', undefined);
      assert.equal(fs.readFileSync(file, 'utf8'), 'mounts: []\n');
      assert.equal(fs.statSync(file).mode & 0o777, 0o644);
    });

    it('writes through a symlink to the file it points to', async () => {
      const real = write('write/dotfiles/toolbox.yaml', 'image: a\n');
      const link = path.join(dir('write/linked'), NAME);
      fs.symlinkSync(real, link);
      await writeConfigFile(link, 'image: b\n', 'image: a\n');
      assert.equal(fs.lstatSync(link).isSymbolicLink(), true);
      assert.equal(fs.readFileSync(real, 'utf8'), 'image: b\n');
    });

    it('refuses to overwrite a file that changed since it was read, or appeared', async () => {
      const file = write('write/changed/.toolbox.yaml', 'image: edited-meanwhile\n');
      await assert.rejects(writeConfigFile(file, 'image: b\n', 'image: a\n'), /changed while it was being edited; nothing was written/);
      await assert.rejects(writeConfigFile(file, 'image: b\n', undefined), /changed while it was being edited/);
      assert.equal(fs.readFileSync(file, 'utf8'), 'image: edited-meanwhile\n');
    });

    it('refuses a file another user owns', { skip: process.getuid?.() !== 0 ? 'chown needs root' : false }, async () => {
      const file = write('write/theirs/.toolbox.yaml', 'image: a\n');
      fs.chownSync(file, 12345, 12345);
      await assert.rejects(writeConfigFile(file, 'image: b\n', 'image: a\n'), /is owned by another user \(uid 12345\)/);
    });
  });

  it("reads a worktree's .toolbox.yaml from the text git has for it, before the checkout is there (withProjectFile)", async () => {
    // <home>/repo/.toolbox.yaml on disk; the worktree folder is still empty.
    write('home/repo/.toolbox.yaml', 'image: from-the-main-checkout\n');
    const folder = dir('home/repo/.worktrees/tbx-x');
    const file = path.join(folder, NAME);
    const load = (fsOverlay: ConfigFs) => loadConfig({ folder, home, env: {}, settings: {}, trusted: true, fs: fsOverlay });
    assert.equal((await load(withProjectFile(file, 'image: from-git\n'))).config.image, 'from-git');
    // Not in git at the base: the walk goes on up, as it will after the checkout.
    assert.equal((await load(withProjectFile(file, undefined))).config.image, 'from-the-main-checkout');
    // More than a config file may hold is not planned from (the open after the checkout decides).
    assert.equal((await load(withProjectFile(file, `# ${'x'.repeat(1024 * 1024)}\nimage: big\n`))).config.image, 'from-the-main-checkout');
    cleanFrom('home/repo');
  });
});
