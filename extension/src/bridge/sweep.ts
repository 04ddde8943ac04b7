/**
 * Stale bridge sockets: a window that exits without shutting its bridge down (the extension host
 * killed before deactivation finished) leaves `bridge.sock` behind in its run dir, where the shims
 * keep finding it. When a hub starts it sweeps the run dirs' parent (private to this user, never
 * mounted into a container) and removes the sockets nobody listens on:
 *   - only `<parent>/<8 hex>/bridge.sock` (state.ts workspaceRunId), and the parent's own
 *     `.<12 hex>.sock` staging sockets a crash left between bind and rename (hub.ts bindInto);
 *   - only what lstat calls a socket: never a symlink, a directory or a file, and nothing is
 *     followed (the run dirs are writable from their containers);
 *   - only when connecting is refused (ECONNREFUSED: a socket file whose listener is gone); a
 *     socket that accepts, belongs to another live window or answers nothing in time is kept;
 *   - only the inode that was probed: if another window binds a fresh socket at that path in the
 *     meantime, its inode differs and it stays.
 */
import { lstat, readdir, unlink } from 'node:fs/promises';
import { createConnection } from 'node:net';
import { join } from 'node:path';
import { BRIDGE_FILES } from '../contract/shims';

/**
 * The sweep of stale bridge sockets when a hub starts: a window that exited without shutting its
 * bridge down leaves `bridge.sock` in its run dir. At most `maxRunDirs` run dirs are looked at,
 * and a socket counts as stale only when connecting to it is refused; one that accepts, or does
 * not answer within `connectMs`, is left alone.
 */
export const BRIDGE_SWEEP = {
  maxRunDirs: 256,
  connectMs: 1_000,
} as const;

const RUN_DIR = /^[0-9a-f]{8}$/;
const STAGING_SOCKET = /^\.[0-9a-f]{12}\.sock$/;

export interface SweepLimits {
  maxRunDirs: number;
  connectMs: number;
}

/**
 * How a connect to the unix socket `path` went within `ms`: `connected`, `refused` (a socket file
 * nobody listens on), or `other` (no such file, not a socket, no answer in time). Also the
 * Doctor's "is this socket served" (backend/doctor/ socketAnswers).
 */
export function connectOutcome(path: string, ms: number): Promise<'connected' | 'refused' | 'other'> {
  return new Promise((resolve) => {
    const socket = createConnection({ path });
    const done = (outcome: 'connected' | 'refused' | 'other'): void => {
      clearTimeout(timer);
      socket.destroy();
      resolve(outcome);
    };
    const timer = setTimeout(() => done('other'), ms);
    socket.once('connect', () => done('connected'));
    socket.once('error', (error: NodeJS.ErrnoException) => done(error.code === 'ECONNREFUSED' ? 'refused' : 'other'));
  });
}

/** True when connecting to `path` is refused outright: a socket file nobody listens on. */
export async function connectRefused(path: string, ms: number): Promise<boolean> {
  return (await connectOutcome(path, ms)) === 'refused';
}

/** Removes `path` when it is a socket nobody listens on; true when it did. */
async function removeIfStale(path: string, connectMs: number): Promise<boolean> {
  const before = await lstat(path).catch(() => undefined);
  if (before === undefined || !before.isSocket()) return false;
  if (!(await connectRefused(path, connectMs))) return false;
  const after = await lstat(path).catch(() => undefined);
  if (after === undefined || !after.isSocket() || after.ino !== before.ino || after.dev !== before.dev) return false;
  try {
    await unlink(path);
    return true;
  } catch {
    return false;
  }
}

/** Sweeps the run dirs under `parent`; returns the socket paths it removed. */
export async function sweepStaleSockets(parent: string, limits: SweepLimits = BRIDGE_SWEEP): Promise<string[]> {
  let entries;
  try {
    entries = await readdir(parent, { withFileTypes: true });
  } catch {
    return [];
  }
  const candidates = [
    ...entries
      .filter((e) => e.isDirectory() && RUN_DIR.test(e.name))
      .slice(0, limits.maxRunDirs)
      .map((e) => join(parent, e.name, BRIDGE_FILES.socket)),
    ...entries.filter((e) => e.isSocket() && STAGING_SOCKET.test(e.name)).map((e) => join(parent, e.name)),
  ];
  const removed = await Promise.all(candidates.map(async (path) => ((await removeIfStale(path, limits.connectMs)) ? path : undefined)));
  return removed.filter((p): p is string => p !== undefined);
}
