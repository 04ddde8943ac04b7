/**
 * What the views render: the backend's snapshot (backend/api.ts) and pure derivations of it. No
 * vscode import and no I/O here, so they are unit-tested (test/unit/tree-items.test.ts).
 */
import { driftWarning, peerDrift, type PeerDriftKind } from '../plan/drift';
import type { ContainerSummary } from '../backend/api';
import type { ObjectNames } from '../contract/types';
import { SETTINGS } from '../contract/constants';

export type {
  AgentSessionSummary,
  AnchorSummary,
  ContainerKind,
  ContainerSummary,
  HeldShellSummary,
  ProximoSummary,
  SocketVolumeSummary,
} from '../backend/api';

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

export interface DriftFinding {
  container: ContainerSummary;
  folder: string;
  drift: PeerDriftKind;
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
    const drift = peerDrift(c, want, anchorId, names);
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

/** How many names the Stop All confirmation spells out before it says "and N more". */
export const STOP_ALL_NAMES_SHOWN = 8;

/**
 * The Stop All confirmation: what it will stop, by name (the first few, then a count), and the
 * label of the destructive button, which says how many.
 */
export function stopAllConfirmation(targets: readonly string[], anchor: string): { message: string; detail: string; stopLabel: string } {
  const n = targets.length;
  const shown = targets.slice(0, STOP_ALL_NAMES_SHOWN).map((t) => (t === anchor ? `${t} (the peer anchor)` : t));
  const more = n - shown.length;
  const list = [...shown.map((t) => `• ${t}`), ...(more > 0 ? [`• … and ${more} more`] : [])].join('\n');
  return {
    message: `Stop ${n} toolbox container${n === 1 ? '' : 's'}?`,
    detail:
      `${list}\n\nShells in these containers end, in every window. Stopped containers are removed; ` +
      'the socket volume and your files are kept.',
    stopLabel: `Stop ${n} Container${n === 1 ? '' : 's'}`,
  };
}

/** An engine error that the toolbox.dockerHost setting can fix (it names the setting). */
export function pointsAtDockerHost(message: string): boolean {
  return message.includes(SETTINGS.dockerHost);
}

/**
 * The terminal name for a new shell: `base` while no terminal of this window has it, then
 * `base (2)`, `base (3)`, … (the lowest number free), so two shells never look the same.
 */
export function numberedTitle(base: string, taken: Iterable<string>): string {
  const names = new Set(taken);
  if (!names.has(base)) return base;
  for (let n = 2; ; n++) if (!names.has(`${base} (${n})`)) return `${base} (${n})`;
}

/**
 * The Stop Container confirmation, only when shells are attached to it (named, the first few),
 * or undefined: stopping a container nobody uses needs no question.
 */
export function stopContainerConfirmation(
  container: string,
  attached: readonly string[],
): { message: string; detail: string; stopLabel: string } | undefined {
  const n = attached.length;
  if (n === 0) return undefined;
  const shown = attached.slice(0, STOP_ALL_NAMES_SHOWN).map((s) => `• ${s}`);
  if (n > shown.length) shown.push(`• … and ${n - shown.length} more`);
  return {
    message: `Stop ${container}? ${n === 1 ? 'A shell is' : `${n} shells are`} attached to it.`,
    detail: `${shown.join('\n')}\n\n${n === 1 ? 'This shell ends' : 'These shells end'}, and anything running in ${n === 1 ? 'it' : 'them'} stops. Your files in the folder are kept.`,
    stopLabel: 'Stop Container',
  };
}
