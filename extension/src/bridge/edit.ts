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
 * Every refusal after step 1 reads the same, so the answer never tells how a path resolved or
 * whether something exists outside the roots.
 */
import { lstat, realpath } from 'node:fs/promises';
import { isAbsolute, normalize, relative } from 'node:path';
import { z } from 'zod';
import { BODY_LIMITS, EDITORS, ROUTES, RUN_LIMITS_MS } from '../contract/constants';
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
    `Refused to open ${JSON.stringify(path)}: it is not an existing file or folder inside the workspace folder or the container's mounts.`,
  );
}

/** The resolved path to open, or undefined when the path may not be opened. */
async function checkedPath(path: string, roots: string[]): Promise<{ real: string; isDirectory: boolean } | undefined> {
  const textRoots = roots.filter(isCleanAbsolutePath);
  if (!textRoots.some((root) => isInside(root, path))) return undefined;
  let real: string;
  try {
    real = await realpath(path);
  } catch {
    return undefined;
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
  return { real, isDirectory: kind.isDirectory() };
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
    const checked = await checkedPath(path, [workspace.workspaceFolder, ...workspace.mountsRoots]);
    if (checked === undefined) return notOpenable(path);
    try {
      await withDeadline(deps.openInEditor(checked.real, checked.isDirectory), RUN_LIMITS_MS.edit, 'Opening the editor');
    } catch (error) {
      return failed(`The editor could not open ${JSON.stringify(path)}: ${(error as Error).message}`);
    }
    return { status: 204 };
  },
};
