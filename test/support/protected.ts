/**
 * A folder opened as a window opens it, for the protected-path tests: the real planner (every
 * default mount, the folder and its mirror, the protections read from this host) and the real
 * open flow, in a test namespace, as a given container user.
 */
import { chownSync, existsSync, lstatSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import type Docker from 'dockerode';
import { protectedPathFacts } from '../../extension/src/backend/hostFacts';
import { DEFAULT_CONFIG, type MountOverride } from '../../extension/src/config/model';
import { HOST } from '../../extension/src/contract/upstream';
import type { HostFacts } from '../../extension/src/contract/types';
import type { EngineContext } from '../../extension/src/engine/context';
import { openContainer, type OpenResult } from '../../extension/src/engine/open';
import { planSession } from '../../extension/src/plan/session';
import type { SessionPlan } from '../../extension/src/plan/types';
import type { TestNamespace } from './docker';

export interface OpenFolderOptions {
  image: string;
  user: { uid: number; gid: number };
  worktreeRoot?: string;
  mounts?: MountOverride[];
  /** Default on, as the setting. */
  protectedPaths?: boolean;
  /** A second container for the same folder (a named shell's name). */
  namedShell?: string;
}

export interface OpenedFolder {
  plan: SessionPlan;
  result: OpenResult;
  container: Docker.Container;
  ctx: EngineContext;
}

export function hostFactsFor(ns: TestNamespace, user: { uid: number; gid: number }): HostFacts {
  return {
    ...user,
    home: ns.home,
    platform: 'linux',
    // Everything a user mount names exists; the host's Docker socket is left out of the container.
    pathExists: (p) => p !== HOST.dockerSocket && existsSync(p),
    ...protectedPathFacts(),
  };
}

export function planFolder(ns: TestNamespace, folder: string, o: OpenFolderOptions): SessionPlan {
  return planSession(
    {
      workspace: folder,
      config: { ...DEFAULT_CONFIG, mounts: o.mounts ?? [] },
      peer: false,
      image: o.image,
      names: ns.names,
      protectedPaths: o.protectedPaths ?? true,
      ...(o.worktreeRoot !== undefined ? { worktreeRoot: o.worktreeRoot } : {}),
      ...(o.namedShell !== undefined ? { namedShell: o.namedShell } : {}),
    },
    hostFactsFor(ns, o.user),
  ).plan;
}

export async function openFolder(ns: TestNamespace, folder: string, o: OpenFolderOptions): Promise<OpenedFolder> {
  const ctx: EngineContext = { docker: ns.docker, names: ns.names };
  const plan = planFolder(ns, folder, o);
  const result = await openContainer(ctx, plan, { ensureImage: async () => undefined });
  return { plan, result, container: ns.docker.getContainer(result.id), ctx };
}

/** Every path under `dir` (itself excluded) with the uid that owns it, without following links. */
export function owners(dir: string): Map<string, number> {
  const out = new Map<string, number>();
  const walk = (d: string) => {
    for (const name of readdirSync(d)) {
      const p = join(d, name);
      const st = lstatSync(p);
      out.set(p, st.uid);
      if (st.isDirectory()) walk(p);
    }
  };
  walk(dir);
  return out;
}

/** Gives `dir` and everything in it to `user`, when this process is root (a test's folder is the container user's, as a real one is). */
export function chownTree(dir: string, user: { uid: number; gid: number }): void {
  if (process.getuid!() !== 0) return;
  chownSync(dir, user.uid, user.gid);
  for (const name of readdirSync(dir)) {
    const p = join(dir, name);
    if (lstatSync(p).isDirectory()) chownTree(p, user);
    else chownSync(p, user.uid, user.gid);
  }
}
