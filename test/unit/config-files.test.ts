import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { findProjectConfig, loadConfig } from '../../extension/src/config/files';

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

    it('walks outside HOME up to the filesystem root', () => {
      const file = write(`outside/${NAME}`, 'pull: never\n');
      try {
        assert.equal(findProjectConfig(path.join(root, 'outside/x/y'), home), file);
      } finally {
        cleanFrom(`outside/${NAME}`);
      }
    });

    it('ends at / and returns nothing when no directory on the way has the file', () => {
      const bare = fs.mkdtempSync(path.join(os.tmpdir(), 'tbx-config-bare-'));
      try {
        const ancestors: string[] = [];
        for (let d = bare; ; d = path.dirname(d)) {
          ancestors.push(d);
          if (path.dirname(d) === d) break;
        }
        const expected = ancestors.map((d) => path.join(d, NAME)).find((f) => fs.existsSync(f) && fs.statSync(f).isFile());
        assert.equal(findProjectConfig(bare, home), expected); // undefined on a clean machine
        assert.equal(findProjectConfig('/', home), fs.existsSync(`/${NAME}`) ? `/${NAME}` : undefined);
      } finally {
        fs.rmSync(bare, { recursive: true, force: true });
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

    it('reports an unreadable user file and still applies the project file', async () => {
      const odd = dir('odd-home');
      dir(`odd-home/${NAME}`); // a directory where the file should be: reading it fails
      const project = write(`odd-home/p/${NAME}`, 'pull: never\n');
      const r = await load(path.join(odd, 'p'), true, odd);
      assert.equal(r.config.pull, 'never');
      assert.deepEqual(r.files, [project]);
      assert.equal(r.issues.length, 1);
      assert.equal(r.issues[0]!.severity, 'error');
      assert.equal(r.issues[0]!.source, path.join(odd, NAME));
      assert.match(r.issues[0]!.message, /could not be read/);
    });

    it('refuses a file too large to be a config file', async () => {
      const big = dir('big-home');
      fs.writeFileSync(path.join(big, NAME), 'x'.repeat(2 * 1024 * 1024));
      const r = await load(dir('big-home/w'), true, big);
      assert.deepEqual(r.files, []);
      assert.match(r.issues[0]!.message, /more than the 1048576 a config file may have/);
    });
  });
});
