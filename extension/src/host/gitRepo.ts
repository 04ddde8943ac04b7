/**
 * A repository as data, for host git (docs/decisions/0039-host-git-on-a-checked-copy-of-the-config.md):
 * where its `.git` is, its agent worktrees' registrations, and its config, all read from the
 * files without git, because every one of them is container-writable. Each path is checked for
 * what it claims to be (`lstat`, `O_NOFOLLOW`, `realpath`): a symbolic link where git keeps a
 * directory or a file refuses the step, saying where. The config is checked against the data-only
 * allowlist of plan/gitConfig.ts, and host git runs on a private copy of it (`shadowCommonDir`),
 * never on the file the container can rewrite while git reads it.
 */
import { constants } from 'node:fs';
import { lstat, mkdtemp, open, readdir, realpath, rm, symlink, writeFile, type FileHandle } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { basename, dirname, isAbsolute, join, resolve } from 'node:path';
import { PLACEHOLDER } from '../contract/constants';
import { WORKTREE } from '../contract/upstream';
import { ToolboxError, type WorktreeErrorCode } from '../contract/errors';
import {
  checkGitConfig,
  configValue,
  displayConfigKey,
  isLocalRemoteUrl,
  REPO_CONFIG_LIMIT,
  serializeGitConfig,
  type ConfigEntry,
} from '../plan/gitConfig';
import { isToolboxWorktree, type WorktreeEntry } from '../plan/worktree';

export class WorktreeError extends ToolboxError {
  declare readonly code: WorktreeErrorCode;

  constructor(
    code: WorktreeErrorCode,
    message: string,
    file?: string,
    /** The config key refused, as git spells it (outside text: shown only through displayConfigKey). */
    readonly key?: string,
  ) {
    super(code, message, file !== undefined ? ['open-file'] : [], undefined, file);
    this.name = 'WorktreeError';
  }
}

/** A small git file (a `.git` pointer, HEAD, gitdir, commondir) read at most this far. */
const SMALL_FILE_LIMIT = 4096;

/** How far up from a folder its repository is looked for. */
const MAX_DEPTH = 64;

export interface Repository {
  /** The main checkout's folder, with symbolic links above it resolved. */
  root: string;
  /** `<root>/.git`, a directory. */
  common: string;
}

const unsafe = (path: string, what: string) =>
  new WorktreeError(
    'path-unsafe',
    `${path} is ${what}, where git keeps a real folder or file. Agent worktree steps refuse to follow it; remove it (the container may have made it), then try again.`,
  );

/** lstat, or undefined when nothing is there. */
async function lstatOrNone(path: string) {
  try {
    return await lstat(path);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT' || (err as NodeJS.ErrnoException).code === 'ENOTDIR') return undefined;
    throw err;
  }
}

/** A directory that must not be a symbolic link: true when it is there, false when nothing is. */
export async function realDirectory(path: string): Promise<boolean> {
  const info = await lstatOrNone(path);
  if (!info) return false;
  if (info.isSymbolicLink()) throw unsafe(path, 'a symbolic link');
  if (!info.isDirectory()) throw unsafe(path, 'not a folder');
  return true;
}

/**
 * A regular file's text, opened without following a symbolic link, up to `limit` bytes (more is
 * refused); undefined when it is not there.
 */
export async function readRealFile(path: string, limit: number): Promise<string | undefined> {
  let handle;
  try {
    handle = await open(path, constants.O_RDONLY | (constants.O_NOFOLLOW ?? 0) | (constants.O_NONBLOCK ?? 0));
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === 'ENOENT' || code === 'ENOTDIR') return undefined;
    if (code === 'ELOOP') throw unsafe(path, 'a symbolic link');
    throw err;
  }
  try {
    const info = await handle.stat();
    if (!info.isFile()) throw unsafe(path, 'not a regular file');
    const text = await readBounded(handle, limit);
    if (text === undefined)
      throw new WorktreeError('repo-config-unsafe', `${path} is larger than ${limit} bytes, so host git does not read it.`, path);
    return text;
  } finally {
    await handle.close();
  }
}

/** An open file's text, up to `limit` bytes; undefined when it holds more. */
export async function readBounded(handle: FileHandle, limit: number): Promise<string | undefined> {
  const buffer = Buffer.alloc(limit + 1);
  let size = 0;
  for (;;) {
    const { bytesRead } = await handle.read(buffer, size, buffer.length - size, size);
    if (bytesRead === 0) break;
    size += bytesRead;
    if (size > limit) return undefined;
  }
  return buffer.subarray(0, size).toString('utf8');
}

/** `gitdir: <path>` of a `.git` file, resolved against the folder holding it. */
function gitdirPointer(text: string, holder: string): string | undefined {
  const m = /^gitdir: (.+)\n?$/.exec(text);
  if (!m) return undefined;
  return isAbsolute(m[1]) ? resolve(m[1]) : resolve(holder, m[1]);
}

const notARepo = (folder: string) =>
  new WorktreeError(
    'not-a-repo',
    `${folder} is not in a git repository, so it cannot have agent worktrees. Open a folder that is a git repository (or run git init in it), then try again.`,
  );

/**
 * The repository holding `folder`, found as git would (the nearest `.git` above it) but read as
 * data: a `.git` folder is the main checkout; a `.git` file must be a linked worktree of a main
 * checkout, registered under its `.git/worktrees/` and pointing back at that `.git` file. A bare
 * repository, a submodule and anything that does not hold together is refused.
 */
export async function findRepository(folder: string): Promise<Repository> {
  let dir = resolve(folder);
  for (let depth = 0; depth < MAX_DEPTH; depth++) {
    const dotGit = join(dir, '.git');
    const info = await lstatOrNone(dotGit);
    if (info?.isSymbolicLink()) throw unsafe(dotGit, 'a symbolic link');
    if (info?.isDirectory()) {
      // A protected folder's .git has a read-only commondir naming itself (plan/protect.ts): the same repository.
      const commondir = join(dotGit, 'commondir');
      if ((await lstatOrNone(commondir)) && (await readRealFile(commondir, SMALL_FILE_LIMIT)) !== PLACEHOLDER.commonDirText) {
        throw new WorktreeError(
          'not-a-repo',
          `${dotGit} names another repository (it has a commondir file), which agent worktrees do not support.`,
        );
      }
      const root = await realpath(dir);
      return { root, common: join(root, '.git') };
    }
    if (info?.isFile()) return linkedWorktreeRepository(folder, dir);
    const up = dirname(dir);
    if (up === dir) break;
    dir = up;
  }
  if (basename(resolve(folder)) === '.git' || (await lstatOrNone(join(folder, 'HEAD')))?.isFile()) {
    throw new WorktreeError(
      'not-a-repo',
      `${folder} is in a bare git repository, which has no working tree to branch from. Open a checkout of it instead.`,
    );
  }
  throw notARepo(folder);
}

async function linkedWorktreeRepository(folder: string, dir: string): Promise<Repository> {
  const dotGit = join(dir, '.git');
  const gitDir = gitdirPointer((await readRealFile(dotGit, SMALL_FILE_LIMIT)) ?? '', dir);
  if (gitDir === undefined || !(await realDirectory(gitDir))) throw notARepo(folder);
  const commonText = await readRealFile(join(gitDir, 'commondir'), SMALL_FILE_LIMIT);
  if (commonText === undefined) {
    throw new WorktreeError(
      'not-a-repo',
      `${folder} is in a submodule or a separate git directory (${gitDir}), which agent worktrees do not support.`,
    );
  }
  const common = resolve(gitDir, commonText.trim());
  if (basename(common) !== '.git' || dirname(gitDir) !== join(common, 'worktrees')) {
    throw new WorktreeError(
      'not-a-repo',
      `${dotGit} does not point into a main checkout's .git/worktrees, so agent worktrees do not use it.`,
    );
  }
  const repo = await findRepository(dirname(common));
  // The registration must point back at this .git file, and the worktree must be where git has it.
  const registered = await registrationOf(repo, basename(gitDir));
  if (registered === undefined || registered.path !== (await realpath(dir))) {
    throw new WorktreeError(
      'not-a-repo',
      `${dotGit} and the registration ${gitDir} do not point at each other, so agent worktrees do not use it.`,
    );
  }
  return repo;
}

/** A registration's checked facts: where its worktree is and where its per-worktree git files are. */
export interface Registration extends WorktreeEntry {
  /** `<common>/worktrees/<name>`. */
  gitDir: string;
}

/**
 * One registration under `<common>/worktrees/<name>`, when it is a toolbox worktree: its `gitdir`
 * file names `<root>/.worktrees/tbx-…/.git`, that folder is real (no symbolic link on the way)
 * and, while it is there, its `.git` file points back here. undefined for a registration of
 * another worktree.
 */
async function registrationOf(repo: Repository, name: string): Promise<Registration | undefined> {
  const gitDir = join(repo.common, 'worktrees', name);
  if (!(await realDirectory(gitDir))) return undefined;
  const pointer = (await readRealFile(join(gitDir, 'gitdir'), SMALL_FILE_LIMIT))?.trim();
  if (pointer === undefined || !isAbsolute(pointer) || basename(pointer) !== '.git') return undefined;
  const path = resolve(dirname(pointer));
  if (!isToolboxWorktree(repo.root, path)) return undefined;
  const head = ((await readRealFile(join(gitDir, 'HEAD'), SMALL_FILE_LIMIT)) ?? '').trim();
  const branch = /^ref: refs\/heads\/(.+)$/.exec(head)?.[1];
  const present = await realDirectory(path);
  if (present) {
    if ((await realpath(path)) !== path) throw unsafe(path, 'reached through a symbolic link');
    const back = gitdirPointer((await readRealFile(join(path, '.git'), SMALL_FILE_LIMIT)) ?? '', path);
    if (back !== gitDir) throw unsafe(join(path, '.git'), `a pointer to another git directory than ${gitDir}`);
  }
  return {
    path,
    gitDir,
    branch,
    head: branch === undefined && /^[0-9a-f]{40,64}$/.test(head) ? head : undefined,
    bare: false,
    prunable: !present,
  };
}

/**
 * The repository's toolbox worktrees, from the registrations git keeps (`.git/worktrees/*`),
 * each checked to be a real worktree pointing back at it. `.worktrees` and `.git/worktrees` must
 * be real folders.
 */
export async function toolboxRegistrations(repo: Repository): Promise<Registration[]> {
  await realDirectory(join(repo.root, WORKTREE.dir));
  const dir = join(repo.common, 'worktrees');
  if (!(await realDirectory(dir))) return [];
  const names = (await readdir(dir)).sort();
  const out: Registration[] = [];
  for (const name of names) {
    const r = await registrationOf(repo, name);
    if (r) out.push(r);
  }
  return out;
}

/** The checked config of a repository: its entries, and the file they came from. */
export interface CheckedConfig {
  file: string;
  entries: ConfigEntry[];
}

/**
 * `<common>/config`, read as data and checked (plan/gitConfig.ts); a key outside the allowlist, an
 * include, a file git cannot read, `objects/info/alternates` all refuse with the file and key.
 */
export async function checkRepositoryConfig(repo: Repository): Promise<CheckedConfig> {
  const file = join(repo.common, 'config');
  const text = (await readRealFile(file, REPO_CONFIG_LIMIT)) ?? '';
  const checked = checkGitConfig(text);
  if ('refused' in checked) {
    const { key, line, reason } = checked.refused;
    const what = key === '' ? `${file} ${reason} (line ${line})` : `The key ${displayConfigKey(key)} in ${file} (line ${line}) ${reason}`;
    throw new WorktreeError(
      'repo-config-unsafe',
      `${what}. The container can write this file, so host git does not run on this repository until the key is gone: open the file, remove it (or move it to your global git config), then refresh.`,
      file,
      key === '' ? undefined : key.slice(0, 200),
    );
  }
  // An empty one names no other store (a protected folder's placeholder, plan/protect.ts).
  const alternates = join(repo.common, 'objects', 'info', 'alternates');
  if ((await lstatOrNone(alternates)) !== undefined && (await readRealFile(alternates, SMALL_FILE_LIMIT)) !== '') {
    throw new WorktreeError(
      'repo-config-unsafe',
      `${alternates} makes git read objects from other repositories. The container can write it, so host git does not run on this repository until it is gone: remove it (git repack -a -d first keeps the objects), then refresh.`,
      alternates,
    );
  }
  return { file, entries: checked.entries };
}

/** What git keeps in the common directory (git's path.c common_list), linked into a shadow. */
const COMMON_ENTRIES = ['objects', 'refs', 'packed-refs', 'logs', 'worktrees', 'info', 'shallow', 'remotes', 'branches', 'rr-cache'];

/**
 * Options for a remote reached through the local transport: upload-pack and receive-pack in the
 * other repository run without its hooks, without fetching for it (a partial clone there would
 * otherwise fetch its missing objects with programs its own config names) and without checking
 * anything out into it.
 */
const LOCAL_REMOTE_ENTRIES = (remote: string): Pick<ConfigEntry, 'section' | 'subsection' | 'name' | 'value'>[] => {
  const hardened = 'GIT_ALLOW_PROTOCOL= git -c core.hooksPath=/dev/null -c core.fsmonitor=false -c gc.auto=0 -c receive.autogc=false';
  return [
    { section: 'remote', subsection: remote, name: 'uploadpack', value: `${hardened} upload-pack` },
    { section: 'remote', subsection: remote, name: 'receivepack', value: `${hardened} -c receive.denyCurrentBranch=refuse receive-pack` },
  ];
};

/** The remotes whose URL the local transport reaches. */
export function localRemotes(entries: readonly ConfigEntry[]): string[] {
  const out = new Set<string>();
  for (const e of entries)
    if (
      e.section === 'remote' &&
      e.subsection !== undefined &&
      (e.name === 'url' || e.name === 'pushurl') &&
      isLocalRemoteUrl(e.value ?? '')
    )
      out.add(e.subsection);
  return [...out];
}

/**
 * A private common directory for one git call: the repository's own entries linked in, and a
 * `config` written from the checked entries (plus the hardened local transport), so git reads
 * exactly what was checked. Host git runs with GIT_COMMON_DIR set to it; `dispose` removes it.
 */
export async function shadowCommonDir(repo: Repository, config: CheckedConfig): Promise<{ dir: string; dispose: () => Promise<void> }> {
  const dir = await mkdtemp(join(tmpdir(), 'toolbox-git-'));
  try {
    for (const name of COMMON_ENTRIES) {
      if ((await lstatOrNone(join(repo.common, name))) !== undefined) await symlink(join(repo.common, name), join(dir, name));
    }
    const extra = localRemotes(config.entries).flatMap(LOCAL_REMOTE_ENTRIES);
    await writeFile(join(dir, 'config'), serializeGitConfig([...config.entries, ...extra]), { mode: 0o600 });
  } catch (err) {
    await rm(dir, { recursive: true, force: true });
    throw err;
  }
  return { dir, dispose: () => rm(dir, { recursive: true, force: true }) };
}

/** The value of a key in the checked config (`branch.<b>.base`, `remote.origin.url`…). */
export function checkedValue(config: CheckedConfig, section: string, subsection: string | undefined, name: string): string | undefined {
  return configValue(config.entries, section, subsection, name);
}
