/**
 * The configuration module's only I/O: find and read ~/.toolbox.yaml and the project's
 * .toolbox.yaml, then hand the texts to the pure resolver.
 *
 * A config file decides what the container mounts and runs, so only a file the user controls is
 * applied (issue 11, finding 5). Each file is opened once and checked on the open descriptor
 * (what is checked is what is read): it must be a regular file, owned by the user or by root,
 * and writable by nobody else. Anything else is skipped with a warning that names the file, the
 * reason and the fix.
 *
 * Root-owned files are accepted: root can already rewrite any of the user's files, so refusing
 * them protects nothing, while root-owned checkouts (`sudo git clone` into /opt, /srv) and
 * root-provisioned configs are common. A file owned by another non-root user, or writable by
 * the world or by a group other than the user's own private group, is refused.
 */
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { HOST } from '../contract/upstream';
import type { ConfigIssue, ResolvedConfig } from './model';
import { resolveConfig, type ConfigFileText, type ResolveInput } from './resolve';
import { setPeerMessaging } from './edit';
import { formatIssue, parseConfigFile } from './parse';

/** A config file is a few lines; anything this big is not one. */
const MAX_CONFIG_BYTES = 1024 * 1024;

/**
 * Who "the user" is for the owner check. Undefined uid (Windows, where files carry no POSIX
 * owner): no owner or mode check.
 */
export interface FileOwner {
  uid: number | undefined;
  /** True when a group-writable file with this group id is still writable by the user alone. */
  groupIsPrivate(gid: number): boolean;
}

/** The filesystem calls the loader makes, so a test can see which files were opened. */
export interface ConfigFs {
  /** A regular file (after symlinks); false for anything that cannot be stat'ed. Never opens it. */
  isFile(p: string): boolean;
  /** Opens and reads a config file, refusing what `owner` does not control. */
  read(p: string, owner: FileOwner): Promise<ConfigRead>;
}

export type ConfigRead =
  | { kind: 'text'; text: string }
  | { kind: 'missing' }
  /** Not applied; `why` completes "<file> …" and says what to do. */
  | { kind: 'refused'; why: string };

/**
 * The nearest .toolbox.yaml for `folder`. Inside HOME it walks up like upstream's walkUp and
 * stops before HOME (whose file is the user layer, never a project file). Outside HOME only the
 * folder's own file counts: upstream walks on to `/`, where a parent directory someone else
 * controls (/tmp, /srv, a shared mount) could plant a file that mounts the user's credentials.
 * Symlinks are not resolved.
 */
export function findProjectConfig(folder: string, home: string, configFs: Pick<ConfigFs, 'isFile'> = nodeConfigFs): string | undefined {
  const stop = home ? path.resolve(home) : undefined;
  let dir = path.resolve(folder);
  const insideHome = stop !== undefined && dir.startsWith(stop === '/' ? '/' : `${stop}/`);
  for (;;) {
    if (dir === stop) return undefined;
    const candidate = path.join(dir, HOST.projectConfig);
    if (configFs.isFile(candidate)) return candidate;
    const parent = path.dirname(dir);
    if (!insideHome || parent === dir) return undefined;
    dir = parent;
  }
}

export interface LoadConfigOptions extends Omit<ResolveInput, 'userFile' | 'projectFile'> {
  /** The workspace folder the walk starts from. */
  folder: string;
  home: string;
  /** Default: the process's user (test: another uid). */
  owner?: FileOwner;
  /** Default: node:fs (test: a recording wrapper). */
  fs?: ConfigFs;
}

export async function loadConfig(options: LoadConfigOptions): Promise<ResolvedConfig> {
  const { folder, home, owner = processOwner(), fs: configFs = nodeConfigFs, ...rest } = options;
  const readIssues: ConfigIssue[] = [];
  const read = (file: string, skippable = false) => readConfigFile(file, configFs, owner, readIssues, skippable);
  // As upstream (config.LoadLayers): an unreadable ~/.toolbox.yaml is skipped with a warning, an
  // unreadable project file stops the open.
  const userFile = home ? await read(path.join(home, HOST.userConfig), true) : undefined;
  const projectPath = findProjectConfig(folder, home, configFs);
  // An untrusted project file is never opened: the resolver only needs its path to say it was ignored.
  const projectFile: ConfigFileText | undefined =
    projectPath === undefined ? undefined : options.trusted ? await read(projectPath) : { path: projectPath, text: '' };
  const resolved = resolveConfig({ ...rest, home, userFile, projectFile });
  return { ...resolved, issues: [...readIssues, ...resolved.issues] };
}

/**
 * Missing is fine (undefined, no issue); refused is a warning, unreadable an error (a warning for
 * a `skippable` file); neither is a layer.
 */
async function readConfigFile(
  file: string,
  configFs: ConfigFs,
  owner: FileOwner,
  issues: ConfigIssue[],
  skippable: boolean,
): Promise<ConfigFileText | undefined> {
  try {
    const r = await configFs.read(file, owner);
    if (r.kind === 'text') return { path: file, text: r.text };
    if (r.kind === 'refused') issues.push({ severity: 'warning', source: file, key: '', message: r.why, fileSkipped: true });
    return undefined;
  } catch (err) {
    const why = err instanceof Error ? err.message : String(err);
    issues.push(
      skippable
        ? {
            severity: 'warning',
            source: file,
            key: '',
            message: `could not be read (${why}), so its settings are not applied (the toolbox CLI skips it too). Fix its permissions or remove it.`,
            fileSkipped: true,
          }
        : { severity: 'error', source: file, key: '', message: `could not be read (${why})` },
    );
    return undefined;
  }
}

/**
 * Why `owner` must not trust a file with this owner and mode, as the rest of a sentence that
 * starts with the file's path; undefined when it may.
 */
export function untrustedFileReason(st: { uid: number; gid: number; mode: number }, owner: FileOwner): string | undefined {
  if (owner.uid === undefined) return undefined;
  const skipped = 'so its settings are not applied: a file someone else can change must not decide what the container mounts or runs.';
  if (st.uid !== owner.uid && st.uid !== 0) {
    return `is owned by another user (uid ${st.uid}), ${skipped} If you trust its contents, copy them into a file you own.`;
  }
  if (st.mode & 0o002) {
    return `is writable by every user on this machine (mode ${octal(st.mode)}), ${skipped} Run chmod o-w on it.`;
  }
  if (st.mode & 0o020 && !owner.groupIsPrivate(st.gid)) {
    return `is writable by group ${st.gid} (mode ${octal(st.mode)}), ${skipped} Run chmod g-w on it.`;
  }
  return undefined;
}

function octal(mode: number): string {
  return `0${(mode & 0o777).toString(8)}`;
}

/** node:fs: open once (never blocking on a FIFO, never taking a terminal), check the descriptor, read it. */
export const nodeConfigFs: ConfigFs = {
  isFile,
  async read(file, owner) {
    let handle: fs.promises.FileHandle;
    try {
      handle = await fs.promises.open(file, fs.constants.O_RDONLY | fs.constants.O_NONBLOCK | fs.constants.O_NOCTTY);
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') return { kind: 'missing' };
      throw err;
    }
    try {
      const st = await handle.stat();
      if (st.isDirectory()) throw new Error('it is a directory, not a file');
      if (!st.isFile())
        return {
          kind: 'refused',
          why: 'is not a regular file (a FIFO, socket or device), so it is not read. Replace it with a plain file.',
        };
      const reason = untrustedFileReason(st, owner);
      if (reason !== undefined) return { kind: 'refused', why: reason };
      // Read at most one byte more than the limit, whatever the size said at open.
      const buf = Buffer.alloc(MAX_CONFIG_BYTES + 1);
      let n = 0;
      for (;;) {
        const { bytesRead } = await handle.read(buf, n, buf.length - n, n);
        if (bytesRead === 0) break;
        n += bytesRead;
        if (n > MAX_CONFIG_BYTES) break;
      }
      if (n > MAX_CONFIG_BYTES) {
        throw new Error(`it is ${Math.max(st.size, n)} bytes, more than the ${MAX_CONFIG_BYTES} a config file may have`);
      }
      return { kind: 'text', text: buf.subarray(0, n).toString('utf8') };
    } finally {
      await handle.close();
    }
  },
};

/** The user this process runs as. */
export function processOwner(): FileOwner {
  const uid = typeof process.getuid === 'function' ? process.getuid() : undefined;
  const gid = typeof process.getgid === 'function' ? process.getgid() : undefined;
  let privateGroup: boolean | undefined;
  return {
    uid,
    // Only the user's primary group can be private, and only when no one else is in it.
    groupIsPrivate: (g) => uid !== undefined && g === gid && (privateGroup ??= isPrivateGroup(g, uid)),
  };
}

/**
 * A user private group (Debian/Ubuntu give every user one, with umask 002, so their files are
 * group-writable by default): no member listed in /etc/group other than the user, and no other
 * account in /etc/passwd with it as primary group. A group these files do not list (LDAP, sssd)
 * is not known to be private.
 */
export function isPrivateGroup(gid: number, uid: number, files = { group: '/etc/group', passwd: '/etc/passwd' }): boolean {
  try {
    const user = os.userInfo().username;
    const group = fs
      .readFileSync(files.group, 'utf8')
      .split('\n')
      .map((l) => l.split(':'))
      .find((f) => f.length >= 4 && Number(f[2]) === gid);
    if (!group) return false;
    const members = (group[3] ?? '').split(',').filter((m) => m !== '');
    if (members.some((m) => m !== user)) return false;
    const others = fs
      .readFileSync(files.passwd, 'utf8')
      .split('\n')
      .map((l) => l.split(':'))
      .filter((f) => f.length >= 4 && Number(f[3]) === gid && Number(f[2]) !== uid);
    return others.length === 0;
  } catch {
    return false;
  }
}

/** A regular file (after symlinks); false for anything that cannot be stat'ed. */
export function isFile(p: string): boolean {
  try {
    return fs.statSync(p).isFile();
  } catch {
    return false;
  }
}

/**
 * Replaces a config file's text, only if it still reads `expected` (undefined: the file must not
 * exist yet), so an edit made meanwhile is never overwritten. Atomic (a temporary file in the
 * same directory, renamed over the real one: through a symlink, the file it points to), with
 * the old file's mode; a new file gets 0644.
 */
export async function writeConfigFile(
  file: string,
  text: string,
  expected: string | undefined,
  owner: FileOwner = processOwner(),
): Promise<void> {
  const current = await nodeConfigFs.read(file, owner);
  if (current.kind === 'refused') throw new Error(`${file} ${current.why}`);
  const now = current.kind === 'text' ? current.text : undefined;
  if (now !== expected) throw new Error(`${file} changed while it was being edited; nothing was written. Try again.`);
  const real = current.kind === 'text' ? await fs.promises.realpath(file) : file;
  const mode = current.kind === 'text' ? (await fs.promises.stat(real)).mode & 0o777 : 0o644;
  const temp = path.join(path.dirname(real), `.${path.basename(real)}.${process.pid}.${Date.now().toString(36)}.tmp`);
  try {
    await fs.promises.writeFile(temp, text, { flag: 'wx', mode });
    await fs.promises.chmod(temp, mode); // the umask may have taken bits off
    await fs.promises.rename(temp, real);
  } catch (err) {
    await fs.promises.rm(temp, { force: true });
    throw err;
  }
}

/**
 * Writes `peer_messaging: <on>` into ~/.toolbox.yaml (created when missing), the rest of the file
 * and its comments as they were (config/edit.ts setPeerMessaging): the one place both the CLI and
 * the editor read, so pinning it there makes them agree (docs/decisions/0018). `note` becomes a
 * comment above a new key. Refuses a file that is not the user's, or an edit that would break it.
 * Returns the file written.
 */
export async function pinUserPeerMessaging(home: string, on: boolean, note: string, owner: FileOwner = processOwner()): Promise<string> {
  const file = path.join(home, HOST.userConfig);
  const read = await nodeConfigFs.read(file, owner);
  if (read.kind === 'refused') throw new Error(`${file} ${read.why}`);
  const before = read.kind === 'text' ? read.text : undefined;
  let text: string;
  try {
    text = setPeerMessaging(before ?? '', on, note);
  } catch (err) {
    throw new Error(`${file} was not changed: ${(err as Error).message}.`, { cause: err });
  }
  const check = parseConfigFile(text, file, { home }).issues.find((i) => i.severity === 'error');
  if (check) throw new Error(`The edit would break ${file} (${formatIssue(check, home)}); nothing was written.`);
  await writeConfigFile(file, text, before, owner);
  return file;
}

/**
 * `base`, except that `file` reads as `text` (undefined: as missing). A New Agent Worktree plans
 * its container from the .toolbox.yaml its checkout will bring, read from git before the checkout
 * is there (backend createAgentWorktree); the same size limit applies.
 */
export function withProjectFile(file: string, text: string | undefined, base: ConfigFs = nodeConfigFs): ConfigFs {
  const target = path.resolve(file);
  const known = text !== undefined && Buffer.byteLength(text) <= MAX_CONFIG_BYTES ? text : undefined;
  return {
    isFile: (p) => (path.resolve(p) === target ? known !== undefined : base.isFile(p)),
    read: async (p, owner) =>
      path.resolve(p) === target ? (known !== undefined ? { kind: 'text', text: known } : { kind: 'missing' }) : base.read(p, owner),
  };
}
