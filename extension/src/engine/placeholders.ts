/**
 * Placeholders for the protected paths that do not exist (plan/protect.ts plans them): made as
 * the container's user before the container is created, because an engine that has to make a
 * bind's mount point itself makes it as root (Docker, rootful Podman) or as a subordinate id
 * (rootless Podman), a file the user may not be able to remove. Each is empty (a `commondir`
 * names its own directory) and carries PLACEHOLDER's modification time, which is how a later
 * sweep knows it as ours; the sweep removes one once no container mounts it and it is still as
 * made and untouched (docs/decisions/0042-protected-paths-read-only.md, 0059).
 */
import { lchown, lstat, lutimes, mkdir, open, readdir, readFile, rmdir, unlink } from 'node:fs/promises';
import { constants, type Stats } from 'node:fs';
import { basename } from 'node:path';
import type Docker from 'dockerode';
import { PLACEHOLDER } from '../contract/constants';
import { isPlaceholderText, placeholderText, type PlannedPlaceholder } from '../plan/protect';
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
  // Made by this process: when that is root for another container user (a test, a root VS Code
  // server), the folder's user gets it, as anything else the container writes there.
  if (owner !== undefined && process.getuid?.() === 0 && owner.uid !== 0) await lchown(p.path, owner.uid, owner.gid);
  await lutimes(p.path, PLACEHOLDER.mtimeSeconds, PLACEHOLDER.mtimeSeconds);
  return true;
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
