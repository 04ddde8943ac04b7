/**
 * What the views render: plain data gathered from the engine by the refresh manager. No vscode
 * import and no I/O here, so the derivations below are unit-tested (test/unit/tree-items.test.ts).
 */

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
  /** HostConfig.PidMode as stored (`container:<id>` once Docker has resolved it). */
  pidMode?: string;
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

/** Why a container no longer matches its folder's plan, namespace first like upstream. */
export type PeerDrift = 'namespace-unwanted' | 'namespace-missing' | 'socket-volume-missing';

/** True when the container joined the current anchor's PID namespace. */
export function inPeerNamespace(c: ContainerSummary, anchor: AnchorSummary | undefined): boolean {
  if (!c.pidMode || !c.pidMode.startsWith('container:')) return false;
  const target = c.pidMode.slice('container:'.length);
  if (!anchor) return false;
  return target === anchor.name || (anchor.id !== undefined && (target === anchor.id || anchor.id.startsWith(target)));
}

/** Compares a running container with the peer setting its folder has now. */
export function peerDrift(inNamespace: boolean, mountsSocketVolume: boolean, wantPeer: boolean): PeerDrift | undefined {
  if (inNamespace && !wantPeer) return 'namespace-unwanted';
  if (!inNamespace && wantPeer) return 'namespace-missing';
  if (wantPeer && !mountsSocketVolume) return 'socket-volume-missing';
  return undefined;
}

/** The warning text, in upstream's shape but naming the VS Code fix. */
export function peerDriftMessage(name: string, drift: PeerDrift, socketVolume: string): string {
  const fix = `stop ${name} and open the shell again (Toolbox: Stop Container, or the status bar warning)`;
  switch (drift) {
    case 'namespace-unwanted':
      return `peer messaging: ${name} already runs in the shared PID namespace, but peer messaging is now off for its folder — ${fix}.`;
    case 'namespace-missing':
      return `peer messaging: ${name} was created without the shared PID namespace, but peer messaging is on for its folder — ${fix}.`;
    case 'socket-volume-missing':
      return `peer messaging: ${name} does not mount the ${socketVolume} volume, so its agent sessions cannot be reached — ${fix}.`;
  }
}

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

/** Running containers of this window's folders whose peer state no longer matches the folder's setting. */
export function findDrift(
  list: readonly ContainerSummary[],
  anchor: AnchorSummary | undefined,
  wantPeerByFolder: ReadonlyMap<string, boolean>,
  socketVolume: string,
): DriftFinding[] {
  const findings: DriftFinding[] = [];
  const folders = [...wantPeerByFolder.keys()];
  for (const c of list) {
    if (c.state !== 'running' || (c.kind !== 'workspace' && c.kind !== 'named')) continue;
    const folder = folderOf(c, folders);
    if (folder === undefined) continue;
    const drift = peerDrift(inPeerNamespace(c, anchor), c.mountsSocketVolume, wantPeerByFolder.get(folder) ?? true);
    if (drift) findings.push({ container: c, folder, drift, message: peerDriftMessage(c.name, drift, socketVolume) });
  }
  return findings;
}
