/**
 * The host facts the planner needs, read from this machine. The planner itself is pure; this
 * adapter is the only place the UI layer asks the OS about users and paths.
 */
import { closeSync, constants, existsSync, lstatSync, openSync, readdirSync, readSync, statSync } from 'node:fs';
import { homedir, userInfo } from 'node:os';
import { basename } from 'node:path';
import { HOST } from '../contract/upstream';
import { PLACEHOLDER } from '../contract/constants';
import type { HostFacts, HostPathFact } from '../contract/types';
import { isPlaceholderText, pathIdentity } from '../plan/protect';

export function readHostFacts(env: NodeJS.ProcessEnv = process.env): HostFacts {
  const info = safeUserInfo();
  return {
    uid: process.getuid?.() ?? info?.uid ?? 1000,
    gid: process.getgid?.() ?? info?.gid ?? 1000,
    // HOME first: the tests point it at a temporary directory so ~/.toolbox is theirs.
    home: env.HOME || homedir(),
    platform: process.platform,
    arch: process.arch,
    pathExists: (p: string) => existsSync(p),
    dockerSocketGid: socketGid(HOST.dockerSocket),
    ...protectedPathFacts(),
  };
}

/** What the protected paths' planner asks of the host (plan/protect.ts): lstat, a directory's names, a small file's start. */
export function protectedPathFacts(): Required<Pick<HostFacts, 'lstat' | 'readDir' | 'readSmall'>> {
  return { lstat: lstatFact, readDir, readSmall };
}

function lstatFact(path: string): HostPathFact {
  try {
    const st = lstatSync(path, { bigint: true });
    const identity = pathIdentity(st);
    if (st.isSymbolicLink()) return { kind: 'symlink' };
    // One of our placeholders (engine/placeholders.ts) plans as missing: the placeholder is made
    // again if a removed container's sweep takes it meanwhile, and nothing is planned inside it.
    // Its identity tells drift it is still the one a container recorded (plan/drift.ts).
    if (isPlaceholderStat(st, path)) return { kind: 'missing', identity };
    if (st.isDirectory()) return { kind: 'dir', identity };
    if (st.isFile()) return { kind: 'file', links: Number(st.nlink), identity };
    return { kind: 'other' };
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT' || (err as NodeJS.ErrnoException).code === 'ENOTDIR') return { kind: 'missing' };
    // Unreadable (EACCES, ELOOP…): not something to bind blind.
    return { kind: 'other' };
  }
}

/** As made, with the placeholder's modification time: what engine/placeholders.ts isPlaceholder checks, synchronously. */
function isPlaceholderStat(st: import('node:fs').BigIntStats, path: string): boolean {
  if (st.mtimeMs !== BigInt(PLACEHOLDER.mtimeSeconds * 1000)) return false;
  if (st.isFile()) {
    if (st.size > BigInt(PLACEHOLDER.commonDirText.length)) return false;
    const text = st.size === 0n ? '' : readSmall(path);
    return text !== undefined && isPlaceholderText(basename(path), text);
  }
  return st.isDirectory() && readDir(path).length === 0;
}

function readDir(path: string): string[] {
  try {
    return readdirSync(path);
  } catch {
    return [];
  }
}

/** At most 4 KiB: a `.git` pointer file is one line. */
function readSmall(path: string): string | undefined {
  let fd: number | undefined;
  try {
    // Never through a link, and never waiting on a FIFO someone put there.
    fd = openSync(path, constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK);
    const buf = Buffer.alloc(4096);
    return buf.subarray(0, readSync(fd, buf, 0, buf.length, 0)).toString('utf8');
  } catch {
    return undefined;
  } finally {
    if (fd !== undefined) closeSync(fd);
  }
}

function safeUserInfo(): { uid: number; gid: number } | undefined {
  try {
    return userInfo();
  } catch {
    return undefined;
  }
}

function socketGid(path: string): number | undefined {
  try {
    return statSync(path).gid;
  } catch {
    return undefined;
  }
}
