/**
 * /edit: a host path from the container's `code`/`codium` shim, opened in this window. The shim
 * already rewrote /workspace to the host workspace. The order of the checks matters:
 *   1. the path text must be clean and lie under the workspace folder or one of the container's
 *      mount sources — before anything on the host is looked at, so a request cannot make the
 *      bridge stat or resolve arbitrary host paths (/proc/self/cwd, /proc/<pid>/fd/1);
 *   2. the path is resolved (symlinks followed) and the resolved path must still lie under one
 *      of those roots (resolved too), and be a regular file or a directory (no FIFO, device or
 *      socket);
 *   3. the editor is handed the resolved path, the one that was checked, never the original: a
 *      symlink the container flips after the check cannot redirect what is opened.
 * A path that does not exist opens as a new, unsaved editor bound to it (as desktop `code new.txt`
 * does), only inside the workspace folder: its parent must resolve to a directory inside the
 * workspace folder (resolved), the name itself must not exist at all (a dangling symlink does: a
 * save would write where it points), and the name must be a sane file name (no control
 * characters, at most NAME_MAX bytes). Nothing is written on the host until the user saves.
 * Every refusal after step 1 reads the same, so the answer never tells how a path resolved or
 * whether something exists outside the roots.
 */
import { lstat, realpath } from 'node:fs/promises';
import { basename, dirname, isAbsolute, join, normalize, relative } from 'node:path';
import { z } from 'zod';
import { BODY_LIMITS, EDITORS, ROUTES, RUN_LIMITS_MS } from '../contract/shims';
import { failed, parseBody, refused, withDeadline, type Route, type RouteResult } from './route';

const editRequest = z.strictObject({ editor: z.enum(EDITORS), path: z.string() });

/** A path as `filepath.Clean` would leave it: absolute, no `.`/`..`, no doubled or trailing `/`. */
export function isCleanAbsolutePath(path: string): boolean {
  if (!isAbsolute(path) || path.includes('\0')) return false;
  if (path.length > 1 && path.endsWith('/')) return false;
  return normalize(path) === path && !path.split('/').includes('..');
}

/** True when `candidate` is `root` or below it (both clean absolute paths; compared as text). */
export function isInside(root: string, candidate: string): boolean {
  const rel = relative(root, candidate);
  return rel === '' || (!rel.startsWith('..') && !isAbsolute(rel));
}

async function realRoots(roots: string[]): Promise<string[]> {
  const resolved = await Promise.all(roots.map((r) => realpath(r).catch(() => undefined)));
  return resolved.filter((r): r is string => r !== undefined);
}

/** The one refusal for a path that may not be opened, whatever the reason. */
function notOpenable(path: string): RouteResult {
  return refused(
    `Refused to open ${JSON.stringify(path)}: it is neither an existing file or folder inside the workspace folder or the container's mounts, nor a new file in an existing folder of the workspace.`,
  );
}

/** The longest name a new file may have, in bytes (NAME_MAX on Linux and macOS). */
export const MAX_NEW_FILE_NAME_BYTES = 255;
// C0 controls (newline, tab, escape…), DEL and the C1 controls: never part of a new file's name.
// eslint-disable-next-line no-control-regex -- matching control characters is the point
const CONTROL_CHARACTER = /[\u0000-\u001f\u007f-\u009f]/;

type CheckedPath = { kind: 'file' | 'directory' | 'new'; real: string };

const errorCode = (error: unknown): string | undefined => (error as NodeJS.ErrnoException).code;

/** The resolved path to open, or undefined when the path may not be opened. */
async function checkedPath(path: string, roots: string[], workspaceFolder: string): Promise<CheckedPath | undefined> {
  const textRoots = roots.filter(isCleanAbsolutePath);
  if (!textRoots.some((root) => isInside(root, path))) return undefined;
  let real: string;
  try {
    real = await realpath(path);
  } catch (error) {
    return errorCode(error) === 'ENOENT' ? newFilePath(path, workspaceFolder) : undefined;
  }
  const resolvedRoots = await realRoots(textRoots);
  if (!resolvedRoots.some((root) => isInside(root, real))) return undefined;
  let kind;
  try {
    // lstat: `real` has no symlink left in it; one appearing now is a flip, and is refused.
    kind = await lstat(real);
  } catch {
    return undefined;
  }
  if (!kind.isFile() && !kind.isDirectory()) return undefined;
  return { real, kind: kind.isDirectory() ? 'directory' : 'file' };
}

/**
 * A path that does not exist, as a new file: the resolved parent (a directory inside the resolved
 * workspace folder) joined with the name, or undefined when it may not be created there.
 */
async function newFilePath(path: string, workspaceFolder: string): Promise<CheckedPath | undefined> {
  if (!isCleanAbsolutePath(workspaceFolder) || path === workspaceFolder || !isInside(workspaceFolder, path)) return undefined;
  const name = basename(path);
  if (name === '' || Buffer.byteLength(name) > MAX_NEW_FILE_NAME_BYTES || CONTROL_CHARACTER.test(name)) return undefined;
  const [root] = await realRoots([workspaceFolder]);
  if (root === undefined) return undefined;
  let parent: string;
  try {
    parent = await realpath(dirname(path));
    if (!isInside(root, parent) || !(await lstat(parent)).isDirectory()) return undefined;
  } catch {
    return undefined;
  }
  const real = join(parent, name);
  try {
    // lstat: a dangling symlink fails realpath like a missing file, but it exists, and a save
    // would write wherever it points.
    await lstat(real);
    return undefined;
  } catch (error) {
    return errorCode(error) === 'ENOENT' ? { kind: 'new', real } : undefined;
  }
}

export const editRoute: Route = {
  path: ROUTES.edit,
  bodyLimit: BODY_LIMITS.edit,
  bucket: 'shared',
  runLimitMs: RUN_LIMITS_MS.edit,
  logDetail: true,
  async handle(body, workspace, deps): Promise<RouteResult> {
    const parsed = parseBody(editRequest, body);
    if ('refusal' in parsed) return parsed.refusal;
    const { path } = parsed.value;
    if (!isCleanAbsolutePath(path)) {
      return refused(`Refused to open ${JSON.stringify(path)}: the path must be absolute and clean (no "..", "." or "//").`);
    }
    const checked = await checkedPath(path, [workspace.workspaceFolder, ...workspace.mountsRoots], workspace.workspaceFolder);
    if (checked === undefined) return notOpenable(path);
    try {
      const opening =
        checked.kind === 'new' ? deps.openUntitled(checked.real) : deps.openInEditor(checked.real, checked.kind === 'directory');
      await withDeadline(opening, RUN_LIMITS_MS.edit, 'Opening the editor');
    } catch (error) {
      return failed(`The editor could not open ${JSON.stringify(path)}: ${(error as Error).message}`);
    }
    return { status: 204 };
  },
};
