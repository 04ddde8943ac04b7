/**
 * What the views render: the backend's snapshot (backend/api.ts) and pure derivations of it. No
 * vscode import and no I/O here, so they are unit-tested (test/unit/tree-items.test.ts).
 */
import { basename, dirname } from 'node:path';
import { tildePath } from '../../plan/posture';
import type { ContainerSummary, PeerSettingSource } from '../../backend/api';

export type {
  AgentSessionSummary,
  AnchorSummary,
  ContainerKind,
  ContainerSummary,
  HeldShellSummary,
  PeerSetting,
  PeerSettingSource,
  ProximoSummary,
  SeccompSetting,
  SocketVolumeSummary,
} from '../../backend/api';

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
    .filter((c) => c.kind === 'workspace' || c.kind === 'named')
    .filter((c) => c.state !== 'removing')
    .slice()
    .sort((a, b) => rank(a) - rank(b) || a.name.localeCompare(b.name));
}

/**
 * Where a folder's peer-messaging choice comes from, as the words after "on" or "off":
 * "default", "from .toolbox.yaml", "from the toolbox.peerMessaging setting in your user settings".
 */
export function peerSourceText(source: PeerSettingSource, folder: string, home: string): string {
  switch (source.from) {
    case 'default':
      return 'default';
    case 'user-file':
      return `from ${tildePath(source.file, home)}`;
    case 'project-file':
      return `from ${dirname(source.file) === folder.replace(/\/+$/, '') ? basename(source.file) : tildePath(source.file, home)}`;
    case 'env':
      return `from the ${source.variable} environment variable`;
    case 'setting':
      return `from the toolbox.peerMessaging setting in ${settingScopeText(source.scope)}`;
  }
}

/** `peerSourceText` short enough for a tree row: "from .vscode/settings.json", "from user settings". */
export function peerSourceShort(source: PeerSettingSource, folder: string, home: string): string {
  if (source.from === 'env') return `from ${source.variable}`;
  if (source.from !== 'setting') return peerSourceText(source, folder, home);
  return source.scope === 'folder' ? 'from .vscode/settings.json' : `from ${source.scope} settings`;
}

/**
 * Why a toggle written to .toolbox.yaml would change nothing for the folder, or undefined when it
 * would work: TOOLBOX_PEER_MESSAGING or a user/workspace setting wins over the project file
 * (config/resolve.ts has the order). A folder setting does not count: the toggle removes it.
 */
export function projectFileOverriddenBy(source: PeerSettingSource): string | undefined {
  if (source.from === 'env') return `the ${source.variable} environment variable is set`;
  if (source.from === 'setting' && source.scope !== 'folder') return `${settingScopeText(source.scope)} set toolbox.peerMessaging`;
  return undefined;
}

/** Where a VS Code setting of that scope is kept, in words. */
export function settingScopeText(scope: 'folder' | 'workspace' | 'user'): string {
  switch (scope) {
    case 'folder':
      return "this folder's .vscode/settings.json";
    case 'workspace':
      return 'the workspace settings';
    case 'user':
      return 'your user settings';
  }
}
