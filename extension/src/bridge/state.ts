/**
 * The bridge's host-side files for one workspace: the state dir (token, port; mounted read-only
 * at the contract's bridgeDir) and the short run dir holding the unix socket (mounted read-write
 * at bridgeRunDir). The socket cannot live under the state dir: `~/.toolbox/toolbox/vscode/<key>/`
 * easily exceeds the AF_UNIX path limit, so it gets its own short per-workspace directory.
 */
import { createHash, randomBytes } from 'node:crypto';
import {
  closeSync,
  constants as fsConstants,
  fchmodSync,
  fstatSync,
  linkSync,
  mkdirSync,
  openSync,
  readFileSync,
  readSync,
  renameSync,
  rmSync,
  unlinkSync,
  writeSync,
} from 'node:fs';
import { isAbsolute, join } from 'node:path';
import { BRIDGE_FILES, TOKEN_BYTES } from '../contract/shims';
import { BRIDGE_PROBE } from './healthz';
import { HOST } from '../contract/upstream';

const { O_CREAT, O_DIRECTORY, O_EXCL, O_NOFOLLOW, O_RDONLY, O_TRUNC, O_WRONLY } = fsConstants;

/** Bytes of sun_path including the terminating NUL. */
const SUN_PATH_BYTES: Partial<Record<NodeJS.Platform, number>> = { linux: 108 };
const SUN_PATH_BYTES_DEFAULT = 104; // macOS and the BSDs

/** The longest socket path (in bytes) the platform can bind. */
export function maxSocketPathBytes(platform: NodeJS.Platform): number {
  return (SUN_PATH_BYTES[platform] ?? SUN_PATH_BYTES_DEFAULT) - 1;
}

/** Throws when a socket path would not fit in sun_path; never shortens it. */
export function assertSocketPathFits(socketPath: string, platform: NodeJS.Platform): void {
  const bytes = Buffer.byteLength(socketPath);
  const max = maxSocketPathBytes(platform);
  if (bytes > max) {
    throw new Error(
      `The bridge socket path ${socketPath} is ${bytes} bytes, over the ${max}-byte unix socket limit on ` +
        `${platform}; binding it would truncate it, so the bridge refuses. Give the bridge a shorter ` +
        `directory: unset XDG_RUNTIME_DIR or point it at a short path, and keep the temp root short (/tmp).`,
    );
  }
}

/** Container names only: nothing that can climb out of the vscode state dir. */
const WORKSPACE_KEY = /^[A-Za-z0-9][A-Za-z0-9_.-]{0,127}$/;

export function assertWorkspaceKey(key: string): void {
  if (!WORKSPACE_KEY.test(key) || key.includes('..')) {
    throw new Error(`Bridge workspace key ${JSON.stringify(key)} is not a container name.`);
  }
}

/** `<home>/.toolbox/toolbox/vscode/<key>`: next to the upstream daemon's `bridge` dir. */
export function workspaceStateDir(home: string, key: string): string {
  assertWorkspaceKey(key);
  return join(home, HOST.mountsRoot, 'toolbox', 'vscode', key);
}

/**
 * 8 hex chars of sha256 of the container name and the engine that runs it: short, stable for a
 * container, no user text in the path. The engine is part of it because a name is unique only on
 * one engine: containers of the same name on Docker and Podman (or two contexts) must never share
 * the run dir, and so the session holder's socket (docs/decisions/0043). Without an engine (a
 * registration recorded before the engine was part of it) the name alone, as before.
 */
export function workspaceRunId(key: string, engine?: string): string {
  return createHash('sha256')
    .update(engine === undefined ? key : `${engine}\n${key}`)
    .digest('hex')
    .slice(0, 8);
}

export interface RunDirChoice {
  /** The per-user parent (created 0700 and checked to be ours). */
  parent: string;
  runDir: string;
  socketPath: string;
}

export interface RunDirInput {
  key: string;
  /** The engine's identity (its endpoint), when known: see workspaceRunId. */
  engine?: string;
  uid: number;
  platform: NodeJS.Platform;
  /** XDG_RUNTIME_DIR, preferred when set, absolute and short enough. */
  xdgRuntimeDir?: string;
  /** Parent of `toolbox-<uid>` otherwise (default `/tmp`, not os.tmpdir(): macOS's is long). */
  tmpRoot: string;
}

/** Picks the run dir; throws a clear error when even the fallback is too long. */
export function chooseRunDir(input: RunDirInput): RunDirChoice {
  const id = workspaceRunId(input.key, input.engine);
  const candidates: string[] = [];
  if (input.xdgRuntimeDir && isAbsolute(input.xdgRuntimeDir)) candidates.push(join(input.xdgRuntimeDir, 'toolbox'));
  candidates.push(join(input.tmpRoot, `toolbox-${input.uid}`));
  for (const parent of candidates) {
    const runDir = join(parent, id);
    const socketPath = join(runDir, BRIDGE_FILES.socket);
    if (Buffer.byteLength(socketPath) <= maxSocketPathBytes(input.platform)) return { parent, runDir, socketPath };
  }
  const last = candidates[candidates.length - 1] as string;
  assertSocketPathFits(join(last, id, BRIDGE_FILES.socket), input.platform);
  throw new Error('unreachable');
}

/**
 * Creates a 0700 directory (and parents) and refuses one that another user could tamper with.
 * The mode is fixed through a descriptor opened with O_NOFOLLOW, never by path, so a symlink
 * swapped in at `path` cannot redirect the chmod.
 */
export function ensurePrivateDir(path: string, uid: number): void {
  mkdirSync(path, { recursive: true, mode: 0o700 });
  let fd: number;
  try {
    fd = openSync(path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'ELOOP' || code === 'ENOTDIR') {
      throw new Error(`${path} is not a directory (a symlink?); remove it and try again.`, { cause: error });
    }
    throw error;
  }
  try {
    const st = fstatSync(fd);
    if (uid >= 0 && st.uid !== uid) {
      throw new Error(`${path} belongs to uid ${st.uid}, not to you (uid ${uid}); remove it and try again.`);
    }
    if ((st.mode & 0o077) !== 0) fchmodSync(fd, 0o700);
  } finally {
    closeSync(fd);
  }
}

/**
 * Writes `text` to a file with exactly `mode`: opened with O_NOFOLLOW (a symlink at `path` fails
 * instead of being followed), checked to be a regular file, and chmodded through the descriptor.
 */
function writeFileNoFollow(path: string, text: string, mode: number, exclusive = false): void {
  const fd = openSync(path, O_WRONLY | O_CREAT | O_NOFOLLOW | (exclusive ? O_EXCL : O_TRUNC), mode);
  try {
    if (!fstatSync(fd).isFile()) throw new Error(`${path} is not a regular file; remove it and try again.`);
    fchmodSync(fd, mode);
    writeSync(fd, text);
  } finally {
    closeSync(fd);
  }
}

const TOKEN_LINE = new RegExp(`^[0-9a-f]{${TOKEN_BYTES * 2}}\\n?$`);

/**
 * Reads the workspace token, creating it (0600, hex + newline) when missing or unusable. Never
 * rotates a valid one: running containers hold it read-only, like upstream.
 */
export function ensureToken(stateDir: string): string {
  const path = join(stateDir, BRIDGE_FILES.token);
  try {
    const text = readFileSync(path, 'utf8');
    if (TOKEN_LINE.test(text)) return text.trim();
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
  }
  const token = randomBytes(TOKEN_BYTES).toString('hex');
  writeFileNoFollow(path, `${token}\n`, 0o600);
  return token;
}

export function writePortFile(stateDir: string, port: number): void {
  writeFileNoFollow(join(stateDir, BRIDGE_FILES.port), `${port}\n`, 0o644);
}

const HUB_KEY_BYTES = 32;

/** The key in `path`; 'missing' when there is none, 'unusable' when it is not one we wrote. */
function readHubKey(path: string, uid: number): Buffer | 'missing' | 'unusable' {
  let fd: number;
  try {
    fd = openSync(path, O_RDONLY | O_NOFOLLOW);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'ENOENT') return 'missing';
    if (code === 'ELOOP') return 'unusable';
    throw error;
  }
  try {
    const st = fstatSync(fd);
    const usable = st.isFile() && (uid < 0 || st.uid === uid) && (st.mode & 0o077) === 0 && st.size === HUB_KEY_BYTES * 2;
    if (!usable) return 'unusable';
    const text = Buffer.alloc(HUB_KEY_BYTES * 2);
    if (readSync(fd, text, 0, text.length, 0) !== text.length) return 'unusable';
    const hex = text.toString('latin1');
    return /^[0-9a-f]+$/.test(hex) ? Buffer.from(hex, 'hex') : 'unusable';
  } finally {
    closeSync(fd);
  }
}

/**
 * The hub key: a random secret in `parent` (the 0700 parent of the run dirs, which is never
 * mounted into a container; only each workspace's own run dir below it is). Every window of this
 * user reads the same key, so a bridge can prove to another window that it is one of ours (see
 * healthz.ts). The key is written to a temporary file first and linked into place, so no window
 * ever reads a half-written one; an unusable key (wrong owner, mode or size) is replaced.
 */
export function ensureHubKey(parent: string, uid: number): Buffer {
  const path = join(parent, BRIDGE_PROBE.keyFile);
  const found = readHubKey(path, uid);
  if (Buffer.isBuffer(found)) return found;
  const tmp = join(parent, `.${BRIDGE_PROBE.keyFile}.${randomBytes(6).toString('hex')}`);
  writeFileNoFollow(tmp, randomBytes(HUB_KEY_BYTES).toString('hex'), 0o600, true);
  try {
    if (found === 'unusable') renameSync(tmp, path);
    else {
      try {
        linkSync(tmp, path);
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error; // another window made it first
      }
    }
  } finally {
    rmSync(tmp, { force: true });
  }
  const key = readHubKey(path, uid);
  if (!Buffer.isBuffer(key)) throw new Error(`The bridge key ${path} could not be created or read; remove it and try again.`);
  return key;
}

/** Removes the port file if it still names our port (another server may have rewritten it). */
export function removePortFile(stateDir: string, port: number): void {
  const path = join(stateDir, BRIDGE_FILES.port);
  try {
    if (readFileSync(path, 'utf8').trim() === String(port)) unlinkSync(path);
  } catch {
    // already gone
  }
}
