/**
 * Placeholders for the protected paths that do not exist (plan/protect.ts plans them): made as
 * the container's user before the container is created, because an engine that has to make a
 * bind's mount point itself makes it as root (Docker, rootful Podman) or as a subordinate id
 * (rootless Podman), a file the user may not be able to remove. Each is empty (a `commondir`
 * names its own directory) and carries PLACEHOLDER's modification time, which is how a later
 * sweep knows it as ours; the sweep removes one once no container mounts it and it is still as
 * made and untouched (docs/decisions/0042-protected-paths-read-only.md, 0059). A placeholder git
 * would list (`.gitmodules`) first gets its line in the repository's `info/exclude`.
 */
import { lchown, lstat, lutimes, mkdir, open, readdir, readFile, rmdir, unlink } from 'node:fs/promises';
import { constants, type Stats } from 'node:fs';
import { basename, dirname } from 'node:path';
import type Docker from 'dockerode';
import { PLACEHOLDER } from '../contract/constants';
import { gitmodulesBehindWorkTree } from '../host/git';
import {
  GITMODULES,
  isPlaceholderText,
  pathIdentity,
  placeholderText,
  type PlannedExclude,
  type PlannedPlaceholder,
} from '../plan/protect';
import type { EngineContext } from './context';
import { clause, engineMessage } from './errors';

export interface Owner {
  uid: number;
  gid: number;
}

/**
 * Makes every missing placeholder (never over anything that is there: a path that appeared since
 * the plan is bound as it is, but a symbolic link stops the open, as the planner's would).
 * Answers the paths it made.
 */
export async function makePlaceholders(list: readonly PlannedPlaceholder[], owner: Owner | undefined): Promise<string[]> {
  // A sweep already running (a container of the same folder just removed) finishes first: it may
  // be about to remove one of these, which is then made again here.
  await Promise.all(sweeps);
  // Each exclude line before its placeholder, so that git never lists the placeholder (VS Code's
  // git watches the folder); a failure stops the open before anything is made.
  const excludes = new Map<string, PlannedExclude>();
  for (const p of list) if (p.exclude) excludes.set(`${p.exclude.file}\n${p.exclude.line}`, p.exclude);
  for (const e of excludes.values()) await ensureExcludeLine(e, owner);
  const results = await Promise.allSettled(list.map((p) => makeOne(p, owner)));
  const made = list.filter((_, i) => results[i].status === 'fulfilled' && (results[i] as PromiseFulfilledResult<boolean>).value);
  const failed = results.find((r): r is PromiseRejectedResult => r.status === 'rejected');
  if (failed) {
    // All or none: the open stops, and what it made for it goes.
    await Promise.all(made.map((p) => (p.kind === 'dir' ? rmdir(p.path) : unlink(p.path)).catch(() => undefined)));
    throw failed.reason;
  }
  return made.map((p) => p.path);
}

async function makeOne(p: PlannedPlaceholder, owner: Owner | undefined): Promise<boolean> {
  try {
    if (p.kind === 'dir') await mkdir(p.path, { mode: 0o755 });
    else {
      const file = await open(p.path, 'wx', 0o644);
      try {
        const text = placeholderText(p.kind);
        if (text !== '') await file.writeFile(text);
      } finally {
        await file.close();
      }
    }
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
    if ((await lstat(p.path)).isSymbolicLink()) {
      throw new Error(
        `${p.path} became a symbolic link while the container was being prepared, so it cannot be made read-only. Replace the link with the file or folder it points to.`,
        { cause: err },
      );
    }
    return false;
  }
  // The folder's user's, as anything else the container writes there.
  await giveToOwner(p.path, owner);
  await lutimes(p.path, PLACEHOLDER.mtimeSeconds, PLACEHOLDER.mtimeSeconds);
  return true;
}

/** Which file each of `list` is now (HostPathFact identity, by path), for the container's record; a path gone meanwhile has none. */
export async function placeholderIdentities(list: readonly PlannedPlaceholder[]): Promise<Record<string, string>> {
  const out: Record<string, string> = {};
  for (const p of list) {
    const st = await lstat(p.path, { bigint: true }).catch(() => undefined);
    if (st !== undefined) out[p.path] = pathIdentity(st);
  }
  return out;
}

/** The appends to each `info/exclude` in this process, one after the other: two opens at once write the line once. */
const excludeWrites = new Map<string, Promise<void>>();

/**
 * Appends `e.line` to `e.file` unless a line of the file is exactly that already: in place (a
 * container that binds `info/` read-only keeps seeing the same file), after a newline when the
 * file does not end with one, never through a link or into a file with other names. The file and
 * its `info/` directory are made (as the user) when missing. The line stays when the placeholder
 * goes: it hides only an untracked file of that name (docs/decisions/0042-protected-paths-read-only.md).
 */
export async function ensureExcludeLine(e: PlannedExclude, owner: Owner | undefined): Promise<void> {
  const before = excludeWrites.get(e.file) ?? Promise.resolve();
  const write = before.catch(() => undefined).then(() => appendOnce(e, owner));
  excludeWrites.set(e.file, write);
  try {
    await write;
  } finally {
    if (excludeWrites.get(e.file) === write) excludeWrites.delete(e.file);
  }
}

async function appendOnce(e: PlannedExclude, owner: Owner | undefined): Promise<void> {
  const dir = dirname(e.file);
  const refuse = (what: string) =>
    new Error(
      `${e.file} ${what}, so the line that keeps the .gitmodules placeholder out of git status is not written there. Replace it with a file of its own, or turn off toolbox.protectedPaths in your user settings to open the folder without the protection.`,
    );
  const madeDir = await mkdir(dir, { mode: 0o755 }).then(
    () => true,
    (err: NodeJS.ErrnoException) => {
      if (err.code !== 'EEXIST') throw err;
      return false;
    },
  );
  const dirStat = await lstat(dir);
  if (!dirStat.isDirectory()) throw refuse(`is in ${dir}, which is no folder (a symbolic link?)`);
  if (madeDir) await giveToOwner(dir, owner);
  let handle;
  let madeFile = false;
  try {
    handle = await open(e.file, constants.O_RDWR | constants.O_APPEND | constants.O_NOFOLLOW | constants.O_NONBLOCK);
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === 'ELOOP') throw refuse('is a symbolic link');
    if (code !== 'ENOENT') throw err;
    handle = await open(e.file, constants.O_RDWR | constants.O_APPEND | constants.O_CREAT | constants.O_EXCL | constants.O_NOFOLLOW, 0o644);
    madeFile = true;
  }
  try {
    const st = await handle.stat();
    if (!st.isFile()) throw refuse('is no file');
    if (st.nlink > 1) throw refuse('has other names (hard links)');
    const text = (await handle.readFile({ encoding: 'utf8' })) as string;
    if (text.split('\n').some((l) => l.replace(/\r$/, '') === e.line)) return;
    await handle.write(`${text === '' || text.endsWith('\n') ? '' : '\n'}${e.line}\n`);
  } finally {
    await handle.close();
  }
  if (madeFile) await giveToOwner(e.file, owner);
}

/** Made by this process: when that is root for another container user (a test, a root VS Code server), the folder's user gets it. */
async function giveToOwner(path: string, owner: Owner | undefined): Promise<void> {
  if (owner !== undefined && process.getuid?.() === 0 && owner.uid !== 0) await lchown(path, owner.uid, owner.gid);
}

/** Ours and untouched: as made (empty, or a commondir naming its own directory), with PLACEHOLDER's time, and the owner's when one is given. */
export async function isPlaceholder(path: string, owner?: Owner): Promise<boolean> {
  let st: Stats;
  try {
    st = await lstat(path);
  } catch {
    return false;
  }
  if (st.mtimeMs !== PLACEHOLDER.mtimeSeconds * 1000) return false;
  if (owner !== undefined && st.uid !== owner.uid) return false;
  if (st.isFile()) {
    if (st.size === 0) return true;
    if (st.size > PLACEHOLDER.commonDirText.length) return false;
    const text = await readFile(path, { encoding: 'utf8', flag: constants.O_RDONLY | constants.O_NOFOLLOW }).catch(() => undefined);
    return text !== undefined && isPlaceholderText(basename(path), text);
  }
  if (!st.isDirectory()) return false;
  return (await readdir(path).catch(() => ['?'])).length === 0;
}

/**
 * Removes those of `candidates` that are still placeholders and that no container (ours or not,
 * running or not) mounts any more. A failure is logged, never thrown: the container is gone
 * either way, and an empty placeholder left behind is removed by the next sweep. Answers what
 * it removed.
 */
export async function removeUnusedPlaceholders(ctx: EngineContext, candidates: readonly string[], owner?: Owner): Promise<string[]> {
  if (candidates.length === 0) return [];
  const sweep = sweepPlaceholders(ctx, candidates, owner);
  sweeps.add(sweep);
  try {
    return await sweep;
  } finally {
    sweeps.delete(sweep);
  }
}

/** The sweeps running in this process, which an open's makePlaceholders waits for. */
const sweeps = new Set<Promise<string[]>>();

/**
 * Paths an open in this process has made or found for a container it has not created yet: no
 * engine lists them as mounted until the create, so a sweep must not take them.
 */
const claimed = new Map<string, number>();

/** Holds `paths` against sweeps until the returned release is called (after the create, or its failure). */
export function claimPlaceholders(paths: readonly string[]): () => void {
  for (const p of paths) claimed.set(p, (claimed.get(p) ?? 0) + 1);
  let released = false;
  return () => {
    if (released) return;
    released = true;
    for (const p of paths) {
      const n = (claimed.get(p) ?? 1) - 1;
      if (n <= 0) claimed.delete(p);
      else claimed.set(p, n);
    }
  };
}

async function sweepPlaceholders(ctx: EngineContext, candidates: readonly string[], owner?: Owner): Promise<string[]> {
  try {
    const inUse = await mountedSources(ctx.docker);
    const removed: string[] = [];
    for (const path of new Set(candidates)) {
      if (inUse.has(path) || claimed.has(path) || !(await isPlaceholder(path, owner))) continue;
      // Without the file, host git reads a `.gitmodules` from the index, else from HEAD, which the
      // container stages and commits: the placeholder stays while either has one (or git cannot say).
      const behind = basename(path) === GITMODULES.name ? await gitmodulesBehindWorkTree(dirname(path)) : false;
      if (behind !== false) {
        ctx.log?.(
          behind
            ? `Kept ${path}: the repository's index or HEAD has a .gitmodules, which host git would read without it.`
            : `Kept ${path}: host git could not say whether the repository's index or HEAD has a .gitmodules, which it would read without it.`,
        );
        continue;
      }
      if (claimed.has(path)) continue;
      const st = await lstat(path);
      try {
        await (st.isDirectory() ? rmdir(path) : unlink(path));
        removed.push(path);
      } catch (err) {
        // Filled or removed since the check: it is the user's now, or gone.
        ctx.log?.(`Kept ${path}: ${clause(engineMessage(err))}.`);
      }
    }
    return removed;
  } catch (err) {
    ctx.log?.(`Could not remove the placeholders of a removed container: ${clause(engineMessage(err))}.`);
    return [];
  }
}

/** The host paths every container the engine knows binds. */
async function mountedSources(docker: Docker): Promise<Set<string>> {
  const all = await docker.listContainers({ all: true });
  return new Set(all.flatMap((c) => (c.Mounts ?? []).filter((m) => m.Type === 'bind' && m.Source).map((m) => m.Source)));
}

/** The read-only binds of an inspected container: where its placeholders, if any, are. */
export function placeholderCandidates(mounts: readonly { Type?: string; Source?: string; RW?: boolean }[] | null | undefined): string[] {
  return (mounts ?? []).filter((m) => m.Type === 'bind' && m.RW === false && m.Source).map((m) => m.Source!);
}
