/**
 * What the views render: plain data gathered from the engine by the refresh manager. No vscode
 * import and no I/O here, so the derivations below are unit-tested (test/unit/tree-items.test.ts).
 */
import { driftWarning, pidModeDrift, type PeerDriftKind } from '../plan/drift';
import type { ObjectNames } from '../contract/types';

export type ContainerKind = 'workspace' | 'named' | 'anchor' | 'init' | 'legacy';

export interface ContainerSummary {
  id: string;
  name: string;
  /** Docker's State: running, exited, created, paused, restarting, removing, dead. */
  state: string;
  /** Docker's human status, e.g. "Up 3 minutes". */
  status?: string;
  image?: string;
  kind: ContainerKind;
  /** HostConfig.PidMode as stored (`container:<id>` once Docker has resolved it); '' for none. */
  pidMode: string;
  /** Joined the current anchor's PID namespace. */
  peer: boolean;
  /** Mounts the peer socket volume at the contract's socket dir. */
  mountsSocketVolume: boolean;
  /** Host workspace folder, from the container's TOOLBOX_HOST_WORKSPACE. */
  workspace?: string;
  /** Routed proximo hosts pinned in the container (ExtraHosts other than host.docker.internal). */
  proximoHosts?: string[];
  /** The proximo CA is mounted. */
  proximoCa?: boolean;
}

export interface AnchorSummary {
  name: string;
  id?: string;
  state: 'running' | 'stopped' | 'missing';
}

export interface SocketVolumeSummary {
  name: string;
  exists: boolean;
  /** `uid:gid` owning the volume root, when known. */
  owner?: string;
  /** Octal mode, e.g. `0700`, when known. */
  mode?: string;
}

export interface AgentSessionSummary {
  pid: number;
  /** Session or agent name as the registry records it. */
  name?: string;
  cwd?: string;
  /** The container whose PID namespace the pid resolves in, when known. */
  container?: string;
}

export interface ProximoSummary {
  installed: boolean;
  binary?: string;
  caPath?: string;
  hosts: string[];
}

/** Why a container no longer matches its folder's plan (the planner's kinds, namespace first). */
export type PeerDrift = PeerDriftKind;

/** A workspace/named container that belongs to one of this window's folders. */
export function folderOf(c: ContainerSummary, folders: readonly string[]): string | undefined {
  if (!c.workspace) return undefined;
  const ws = trimSlash(c.workspace);
  return folders.find((f) => trimSlash(f) === ws);
}

function trimSlash(p: string): string {
  return p.length > 1 ? p.replace(/\/+$/, '') : p;
}

/** This window's folders first (in folder order), then the rest by name; infrastructure excluded. */
export function sortForWorkspacesView(list: readonly ContainerSummary[], folders: readonly string[]): ContainerSummary[] {
  const rank = (c: ContainerSummary) => {
    const f = folderOf(c, folders);
    return f === undefined ? folders.length : folders.indexOf(f);
  };
  return list
    .filter((c) => c.kind === 'workspace' || c.kind === 'named' || c.kind === 'legacy')
    .filter((c) => c.state !== 'removing')
    .slice()
    .sort((a, b) => rank(a) - rank(b) || a.name.localeCompare(b.name));
}

export interface DriftFinding {
  container: ContainerSummary;
  folder: string;
  drift: PeerDrift;
  message: string;
}

/**
 * Running containers of this window's folders whose peer state no longer matches the folder's
 * setting now: the planner's drift rules, applied to every container of the folder (the setting
 * is folded into the name, so after a toggle the running container is the old one).
 */
export function findDrift(
  list: readonly ContainerSummary[],
  anchorId: string | undefined,
  wantPeerByFolder: ReadonlyMap<string, boolean>,
  names: ObjectNames,
): DriftFinding[] {
  const findings: DriftFinding[] = [];
  const folders = [...wantPeerByFolder.keys()];
  for (const c of list) {
    if (c.state !== 'running' || (c.kind !== 'workspace' && c.kind !== 'named')) continue;
    const folder = folderOf(c, folders);
    if (folder === undefined) continue;
    const want = wantPeerByFolder.get(folder) ?? true;
    const drift =
      pidModeDrift(c.pidMode, want, anchorId, names)?.kind ?? (want && !c.mountsSocketVolume ? 'missing-socket-volume' : undefined);
    if (drift) findings.push({ container: c, folder, drift, message: driftWarning(drift, c.name, names) });
  }
  return findings;
}

/** The status bar warning for the findings: names the first container; undefined hides it. */
export function driftStatus(findings: readonly DriftFinding[]): { text: string; tooltip: string; name: string } | undefined {
  const first = findings[0];
  if (!first) return undefined;
  const more = findings.length > 1 ? ` +${findings.length - 1}` : '';
  return {
    name: first.container.name,
    text: `$(warning) ${first.container.name} drifted${more}`,
    tooltip: [...findings.map((f) => f.message), '', 'Click to stop it and reopen the shell with the current settings.'].join('\n'),
  };
}
