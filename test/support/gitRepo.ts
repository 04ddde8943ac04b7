/**
 * A real git repository with a real bare `origin` on disk, for the agent-worktree tests. Each rig
 * has its own temporary directory and its own HOME / global config, so nothing of the user's git
 * setup takes part.
 */
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

export interface GitRig {
  dir: string;
  /** The main checkout (the folder the user opens). */
  repo: string;
  /** The bare repository `origin` points at. */
  origin: string;
  /** Another clone of origin, standing for a colleague who pushes to the base. */
  other: string;
  home: string;
  git(cwd: string, ...args: string[]): string;
  /** Commits a file in `cwd` and returns the new commit id. */
  commit(cwd: string, file: string, content: string, message?: string): string;
  cleanup(): void;
}

export function gitEnv(home: string): NodeJS.ProcessEnv {
  return {
    ...process.env,
    HOME: home,
    XDG_CONFIG_HOME: join(home, '.config'),
    GIT_CONFIG_NOSYSTEM: '1',
    GIT_AUTHOR_NAME: 'Test',
    GIT_AUTHOR_EMAIL: 'test@example.com',
    GIT_COMMITTER_NAME: 'Test',
    GIT_COMMITTER_EMAIL: 'test@example.com',
    GIT_TERMINAL_PROMPT: '0',
  };
}

export function makeGitRig(prefix = 'tbxt-wt-'): GitRig {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  const home = join(dir, 'home');
  mkdirSync(home);
  writeFileSync(join(home, '.gitconfig'), '[init]\n\tdefaultBranch = main\n[protocol "file"]\n\tallow = always\n');
  const env = gitEnv(home);
  const git = (cwd: string, ...args: string[]) =>
    execFileSync('git', args, { cwd, env, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] }).trim();
  const origin = join(dir, 'origin.git');
  const seedDir = join(dir, 'seed');
  git(dir, 'init', '--bare', '-b', 'main', origin);
  git(dir, 'init', '-b', 'main', seedDir);
  writeFileSync(join(seedDir, 'README.md'), 'hello\n');
  writeFileSync(join(seedDir, '.gitignore'), '.env\n.env.*\n.claude/settings.local.json\nopenspec/\n.planning/\nlocal-data/\n');
  git(seedDir, 'add', '.');
  git(seedDir, 'commit', '-m', 'initial');
  git(seedDir, 'remote', 'add', 'origin', origin);
  git(seedDir, 'push', '-u', 'origin', 'main');
  const repo = join(dir, 'repo');
  git(dir, 'clone', origin, repo);
  const other = join(dir, 'other');
  git(dir, 'clone', origin, other);
  const commit = (cwd: string, file: string, content: string, message = `change ${file}`) => {
    writeFileSync(join(cwd, file), content);
    git(cwd, 'add', file);
    git(cwd, 'commit', '-m', message);
    return git(cwd, 'rev-parse', 'HEAD');
  };
  return { dir, repo, origin, other, home, git, commit, cleanup: () => rmSync(dir, { recursive: true, force: true }) };
}
