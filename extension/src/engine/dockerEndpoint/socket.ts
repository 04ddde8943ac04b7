/**
 * The Docker endpoint's socket file (engine/dockerEndpoint/server.ts): its directory, who may connect,
 * and binding it where a running container already looks.
 *
 * Who may connect is decided by the file system alone: the directory is 0700 and the socket 0600,
 * both owned by the container's user as the host sees it (`owner`). That is the host user in
 * every container the extension makes: they run as the user's uid:gid (plan/session.ts), and on
 * rootless Podman with `keep-id` (engine/compat.ts rootlessUsernsMode), which maps the user's uid
 * to itself, so nothing is chowned. A rootless container without keep-id (one the CLI made, say)
 * runs its user as one of the host user's subordinate uids, which the user cannot chown to: the
 * endpoint then refuses to start rather than open the socket to everyone.
 */
import { randomBytes } from 'node:crypto';
import {
  chmodSync,
  chownSync,
  closeSync,
  constants as fsConstants,
  fchmodSync,
  fchownSync,
  fstatSync,
  lstatSync,
  mkdirSync,
  openSync,
  renameSync,
  rmSync,
  unlinkSync,
} from 'node:fs';
import type { Server } from 'node:net';
import { basename, dirname, join } from 'node:path';
import { maxEndpointSocketBytes } from '../../plan/dockerEndpoint/socket';

const { O_DIRECTORY, O_NOFOLLOW, O_RDONLY } = fsConstants;

export interface SocketOwner {
  uid: number;
  gid: number;
}

function self(): SocketOwner {
  return { uid: process.getuid?.() ?? -1, gid: process.getgid?.() ?? -1 };
}

/**
 * Opens `path` as a directory without following a symlink, and hands the descriptor to `use`: the
 * mode and owner are fixed through it, never by a path something could swap.
 */
function withDir<T>(path: string, use: (fd: number) => T): T {
  let fd: number;
  try {
    fd = openSync(path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'ELOOP' || code === 'ENOTDIR')
      throw new Error(`${path} is not a directory (a symlink?); remove it and try again.`, { cause: error });
    throw error;
  }
  try {
    return use(fd);
  } finally {
    closeSync(fd);
  }
}

function chownError(path: string, owner: SocketOwner, error: unknown): Error {
  return new Error(
    `The Docker endpoint could not give ${path} to uid ${owner.uid} (${(error as Error).message}): only root can give a file to ` +
      `another user. The container's user must be yours (as toolbox creates them, and as rootless Podman's keep-id maps it).`,
    { cause: error },
  );
}

/**
 * Creates the endpoint's directory (0700, `owner`'s) under a parent that must be this user's and
 * private (the run dirs' parent, created 0700 here when missing, as bridge/state.ts does).
 */
export function prepareEndpointDir(dir: string, owner: SocketOwner = self()): void {
  const me = self();
  const parent = dirname(dir);
  mkdirSync(parent, { recursive: true, mode: 0o700 });
  withDir(parent, (fd) => {
    const st = fstatSync(fd);
    if (me.uid >= 0 && st.uid !== me.uid)
      throw new Error(`${parent} belongs to uid ${st.uid}, not to you (uid ${me.uid}); remove it and try again.`);
    if ((st.mode & 0o077) !== 0) fchmodSync(fd, 0o700);
  });
  try {
    mkdirSync(dir, { mode: 0o700 });
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
  }
  withDir(dir, (fd) => {
    const st = fstatSync(fd);
    if (st.uid !== me.uid && st.uid !== owner.uid) throw new Error(`${dir} belongs to uid ${st.uid}; remove it and try again.`);
    if ((st.mode & 0o777) !== 0o700) fchmodSync(fd, 0o700);
    if (st.uid !== owner.uid || st.gid !== owner.gid) {
      try {
        fchownSync(fd, owner.uid, owner.gid);
      } catch (error) {
        throw chownError(dir, owner, error);
      }
    }
  });
}

function listen(server: Server, path: string): Promise<void> {
  return new Promise((resolve, reject) => {
    const onError = (error: Error): void => reject(error);
    server.once('error', onError);
    server.listen(path, () => {
      server.off('error', onError);
      resolve();
    });
  });
}

/**
 * Binds `server` at `socketPath` (0600, `owner`'s) and returns the socket's inode. It listens on a
 * fresh name in the same directory, fixes mode and owner there, and renames it into place, so a
 * socket left by an earlier window (whose listener is gone) is replaced in one step and a client
 * never finds the path with the wrong mode. Nothing else can write in the directory: it is 0700
 * on the host and mounted read-only into the container.
 */
export async function bindEndpointSocket(server: Server, socketPath: string, owner: SocketOwner = self()): Promise<number> {
  const max = maxEndpointSocketBytes(process.platform);
  const staging = join(dirname(socketPath), `.${randomBytes(6).toString('hex')}.${basename(socketPath)}`);
  if (Buffer.byteLength(staging) > max) {
    throw new Error(`The Docker endpoint's socket path ${staging} is over the ${max}-byte unix socket limit; use a shorter directory.`);
  }
  prepareEndpointDir(dirname(socketPath), owner);
  try {
    await listen(server, staging);
    chmodSync(staging, 0o600);
    const me = self();
    if (owner.uid !== me.uid || owner.gid !== me.gid) {
      try {
        chownSync(staging, owner.uid, owner.gid);
      } catch (error) {
        throw chownError(socketPath, owner, error);
      }
    }
    renameSync(staging, socketPath);
  } finally {
    rmSync(staging, { force: true });
  }
  return lstatSync(socketPath).ino;
}

/** Unlinks the socket this endpoint bound, unless another window's endpoint has taken its place since. */
export function unlinkOwnSocket(socketPath: string, ino: number): void {
  const st = lstatSync(socketPath, { throwIfNoEntry: false });
  if (st !== undefined && st.isSocket() && st.ino === ino) unlinkSync(socketPath);
}
