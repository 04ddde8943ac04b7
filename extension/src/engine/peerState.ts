/**
 * What the peer-messaging machinery looks like right now: the anchor, the socket volume and the
 * containers in the anchor's PID namespace, plus the agent sessions registered in the shared
 * session registry. Read-only: nothing here creates, starts or changes anything.
 */
import { promises as fs } from 'node:fs';
import { join } from 'node:path';
import type Docker from 'dockerode';
import { z } from 'zod';
import { engineMessage, isNotFound } from './errors';
import { joinsNamespace } from '../plan/drift';
import type { SocketPresence } from '../plan/peerReach';
import { CONTAINER } from '../contract/upstream';
import type { EngineContext } from './context';
import { listOwnedContainers, type OwnedContainer } from './lifecycle';
import { familiarImageName } from './compat';

export interface AnchorState {
  state: 'running' | 'stopped' | 'missing';
  id?: string;
  image?: string;
}

export interface SocketVolumeState {
  exists: boolean;
  /** `uid:gid` of the volume's directory, when it could be read without starting a container. */
  owner?: string;
  /** Permission bits as four octal digits (`0700`), when readable. */
  mode?: string;
  mountpoint?: string;
}

export interface PeerState {
  anchor: AnchorState;
  volume: SocketVolumeState;
  /** Names of our containers whose PidMode joins the anchor's namespace. */
  members: string[];
}

/** `owned` lets a caller that also lists the shells list the engine once for both. */
export async function inspectPeerState(
  ctx: EngineContext,
  owned: OwnedContainer[] | Promise<OwnedContainer[]> = listOwnedContainers(ctx),
): Promise<PeerState> {
  const [anchor, volume, listed] = await Promise.all([
    inspectAnchor(ctx.docker, ctx.names.anchor),
    inspectSocketVolume(ctx.docker, ctx.names.socketVolume),
    owned,
  ]);
  const ref = { name: ctx.names.anchor, id: anchor.id };
  const members = listed
    .filter((c) => c.name !== ctx.names.anchor && joinsNamespace(c.pidMode, ref))
    .map((c) => c.name)
    .sort();
  return { anchor, volume, members };
}

async function inspectAnchor(docker: Docker, name: string): Promise<AnchorState> {
  try {
    const info = await docker.getContainer(name).inspect();
    return { state: info.State.Running ? 'running' : 'stopped', id: info.Id, image: familiarImageName(info.Config.Image) };
  } catch (err) {
    if (isNotFound(err)) return { state: 'missing' };
    throw new Error(`Could not inspect the peer anchor ${name}: ${engineMessage(err)}`, { cause: err });
  }
}

async function inspectSocketVolume(docker: Docker, name: string): Promise<SocketVolumeState> {
  let mountpoint: string;
  try {
    const info = (await docker.getVolume(name).inspect()) as { Mountpoint?: string };
    mountpoint = info.Mountpoint ?? '';
  } catch (err) {
    if (isNotFound(err)) return { exists: false };
    throw new Error(`Could not inspect the socket volume ${name}: ${engineMessage(err)}`, { cause: err });
  }
  const state: SocketVolumeState = { exists: true, mountpoint: mountpoint || undefined };
  if (mountpoint === '' || !engineSharesOurFilesystem(docker)) return state;
  try {
    const st = await fs.stat(mountpoint);
    if (!st.isDirectory()) return state;
    return { ...state, owner: `${st.uid}:${st.gid}`, mode: (st.mode & 0o7777).toString(8).padStart(4, '0') };
  } catch {
    // Not readable from here (not root, or the engine runs in a VM): ownership stays unknown.
    return state;
  }
}

/**
 * The engine's Mountpoint is a path on the engine's machine; it only means something here when
 * the engine is local: a Linux host talking to a unix socket. Docker Desktop also answers on a
 * local socket, but its paths live in its VM and simply fail to stat.
 */
function engineSharesOurFilesystem(docker: Docker): boolean {
  const modem = docker.modem as { socketPath?: unknown };
  return process.platform === 'linux' && typeof modem.socketPath === 'string' && modem.socketPath !== '';
}

/** One entry of Claude Code's session registry (`~/.claude/sessions/<pid>.json`). */
export interface AgentSession {
  pid: number;
  sessionId?: string;
  cwd?: string;
  name?: string;
  messagingSocketPath?: string;
  startedAt?: number | string;
}

const optionalString = z.string().optional().catch(undefined);
/** Loose on purpose: the registry is Claude Code's internal format and may grow or change. */
const AgentSessionSchema = z.looseObject({
  pid: z.number().int().positive(),
  sessionId: optionalString,
  cwd: optionalString,
  name: optionalString,
  messagingSocketPath: optionalString,
  startedAt: z.union([z.number(), z.string()]).optional().catch(undefined),
});

/**
 * The agent sessions registered under `<claudeHome>/sessions`, sorted by pid. Files that are
 * not `<pid>.json`, cannot be read or do not parse are skipped; a missing directory is no
 * sessions. Never throws.
 */
export async function readAgentSessions(claudeHome: string): Promise<AgentSession[]> {
  const dir = join(claudeHome, 'sessions');
  let entries: string[];
  try {
    entries = await fs.readdir(dir);
  } catch {
    return [];
  }
  const sessions = await Promise.all(
    entries
      .filter((f) => /^\d+\.json$/.test(f))
      .map(async (f): Promise<AgentSession | undefined> => {
        try {
          const parsed = AgentSessionSchema.safeParse(JSON.parse(await fs.readFile(join(dir, f), 'utf8')));
          if (!parsed.success) return undefined;
          const { pid, sessionId, cwd, name, messagingSocketPath, startedAt } = parsed.data;
          return dropUndefined({ pid, sessionId, cwd, name, messagingSocketPath, startedAt });
        } catch {
          return undefined;
        }
      }),
  );
  return sessions.filter((s): s is AgentSession => s !== undefined).sort((a, b) => a.pid - b.pid);
}

function dropUndefined<T extends object>(value: T): T {
  return Object.fromEntries(Object.entries(value).filter(([, v]) => v !== undefined)) as T;
}

/**
 * Whether a registered session's inbox socket is in the shared socket volume, read on this host
 * (a local engine, the volume's directory readable: `volume.owner` was read). The path comes from
 * a container-writable registry: only a plain name under the socket directory is looked at, with
 * lstat (a symlink is not followed); anything else is missing.
 */
export async function inboxSocketPresence(volume: SocketVolumeState, socketPath: string | undefined): Promise<SocketPresence> {
  if (!socketPath) return 'missing';
  const prefix = `${CONTAINER.peerSocketDir}/`;
  const rel = socketPath.startsWith(prefix) ? socketPath.slice(prefix.length) : '';
  if (!/^[A-Za-z0-9._-]{1,200}$/.test(rel) || rel === '.' || rel === '..') return 'missing';
  if (!volume.mountpoint || volume.owner === undefined) return 'unknown';
  try {
    return (await fs.lstat(join(volume.mountpoint, rel))).isSocket() ? 'present' : 'missing';
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'ENOENT' ? 'missing' : 'unknown';
  }
}
