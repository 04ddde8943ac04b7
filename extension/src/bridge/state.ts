/**
 * The bridge's host-side files for one workspace: the state dir (token, port; mounted read-only
 * at the contract's bridgeDir) and the short run dir holding the unix socket (mounted read-write
 * at bridgeRunDir). The socket cannot live under the state dir: `~/.toolbox/toolbox/vscode/<key>/`
 * easily exceeds the AF_UNIX path limit, so it gets its own short per-workspace directory.
 */
import { createHash, randomBytes } from 'node:crypto';
import { chmodSync, lstatSync, mkdirSync, readFileSync, unlinkSync, writeFileSync } from 'node:fs';
import { isAbsolute, join } from 'node:path';
import { BRIDGE_FILES, HOST, TOKEN_BYTES } from '../contract/constants';

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

/** 8 hex chars of sha256(key): short, stable for a container, no user text in the path. */
export function workspaceRunId(key: string): string {
  return createHash('sha256').update(key).digest('hex').slice(0, 8);
}

export interface RunDirChoice {
  /** The per-user parent (created 0700 and checked to be ours). */
  parent: string;
  runDir: string;
  socketPath: string;
}

export interface RunDirInput {
  key: string;
  uid: number;
  platform: NodeJS.Platform;
  /** XDG_RUNTIME_DIR, preferred when set, absolute and short enough. */
  xdgRuntimeDir?: string;
  /** Parent of `toolbox-<uid>` otherwise (default `/tmp`, not os.tmpdir(): macOS's is long). */
  tmpRoot: string;
}

/** Picks the run dir; throws a clear error when even the fallback is too long. */
export function chooseRunDir(input: RunDirInput): RunDirChoice {
  const id = workspaceRunId(input.key);
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

/** Creates a 0700 directory (and parents) and refuses one that another user could tamper with. */
export function ensurePrivateDir(path: string, uid: number): void {
  mkdirSync(path, { recursive: true, mode: 0o700 });
  const st = lstatSync(path);
  if (!st.isDirectory()) throw new Error(`${path} is not a directory (a symlink?); remove it and try again.`);
  if (uid >= 0 && st.uid !== uid) {
    throw new Error(`${path} belongs to uid ${st.uid}, not to you (uid ${uid}); remove it and try again.`);
  }
  if ((st.mode & 0o077) !== 0) chmodSync(path, 0o700);
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
  writeFileSync(path, `${token}\n`, { mode: 0o600 });
  chmodSync(path, 0o600);
  return token;
}

export function writePortFile(stateDir: string, port: number): void {
  const path = join(stateDir, BRIDGE_FILES.port);
  writeFileSync(path, `${port}\n`, { mode: 0o644 });
  chmodSync(path, 0o644);
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

/** Unlinks a socket file; refuses to remove anything that is not a socket. */
export function unlinkSocket(socketPath: string): void {
  try {
    if (lstatSync(socketPath).isSocket()) unlinkSync(socketPath);
    else throw new Error(`${socketPath} exists and is not a socket; remove it by hand and try again.`);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
  }
}
