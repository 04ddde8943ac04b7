/**
 * /edit: a host path from the container's `code`/`codium` shim, opened in this window. The shim
 * already rewrote /workspace to the host workspace; here the path must be clean, exist and,
 * after resolving symlinks, stay inside the workspace folder or one of the mounts roots.
 */
import { realpath, stat } from 'node:fs/promises';
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

function isInside(root: string, candidate: string): boolean {
  const rel = relative(root, candidate);
  return rel === '' || (!rel.startsWith('..') && !isAbsolute(rel));
}

async function realRoots(roots: string[]): Promise<string[]> {
  const resolved = await Promise.all(roots.map((r) => realpath(r).catch(() => undefined)));
  return resolved.filter((r): r is string => r !== undefined);
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
    let isDirectory: boolean;
    let real: string;
    try {
      isDirectory = (await stat(path)).isDirectory();
      real = await realpath(path);
    } catch {
      return refused(`Refused to open ${path}: it does not exist on the host.`);
    }
    const roots = await realRoots([workspace.workspaceFolder, ...workspace.mountsRoots]);
    if (!roots.some((root) => isInside(root, real))) {
      const shown = real === path ? path : `${path} (which resolves to ${real})`;
      return refused(`Refused to open ${shown}: it is outside the workspace folder and the container's mounts.`);
    }
    try {
      await withDeadline(deps.openInEditor(path, isDirectory), RUN_LIMITS_MS.edit, 'Opening the editor');
    } catch (error) {
      return failed(`The editor could not open ${path}: ${(error as Error).message}`);
    }
    return { status: 204 };
  },
};
