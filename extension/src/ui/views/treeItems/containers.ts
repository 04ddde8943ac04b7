/** Tree item properties for containers: their rows, icons, descriptions and tooltips, and the error row (ui/views/treeItems/index.ts). */
import { inline, plainItem, plainText } from '../../plainText';
import { type ContainerSummary } from '../model';
import { type FindingKind } from '../../containers/driftFindings';

/** A codicon id and an optional theme colour id; the provider turns it into a ThemeIcon. */
export interface IconSpec {
  id: string;
  color?: string;
}

export interface ContainerItemInput {
  container: ContainerSummary;
  drift?: FindingKind;
  /** The container belongs to a folder of this window. */
  inThisWindow: boolean;
  /** This window asked the engine to stop it and the engine has not said it stopped yet. */
  stopping?: boolean;
}

export function containerLabel(c: ContainerSummary): string {
  return plainText(c.name, 'label');
}

/** The Workspaces view's group of the containers of folders this window does not have open (ui/views/treeNodes.ts groupOthers). */
export function otherContainersItem(count: number): { label: string; icon: IconSpec; contextValue: string; tooltip: string } {
  return {
    label: `Other toolbox containers (${count})`,
    icon: { id: 'layers' },
    contextValue: 'otherContainers',
    tooltip:
      `${count} toolbox container${count === 1 ? '' : 's'} on this engine for folders this window does not have open ` +
      "(other windows, the toolbox CLI). Their rows work as this window's do.",
  };
}

/** Short state word for a Docker state. */
export function stateWord(state: string): string {
  switch (state) {
    case 'running':
      return 'running';
    case 'exited':
    case 'created':
    case 'dead':
      return 'stopped';
    default:
      return state;
  }
}

export function containerDescription(i: ContainerItemInput): string {
  // A container opened with a per-run override says so: the folder's setting does not apply to it.
  const run = i.container.peerRun !== undefined ? ' (this run)' : '';
  const parts = [i.stopping ? 'stopping…' : stateWord(i.container.state)];
  // Whose credentials it has: the profile's name is text from the engine (a label or a mount path).
  if (i.container.profile !== undefined) parts.push(`profile ${inline(i.container.profile, 64)}`);
  parts.push(`${i.container.peer ? 'peer on' : 'peer off'}${run}`);
  if (i.drift) parts.push('drifted');
  // Connections its egress policy refused (issue 30): the posture row under it lists them.
  const denied = i.container.egress?.denied ?? 0;
  if (denied > 0) parts.push(`${denied} denied`);
  return plainText(parts.join(' · '), 'label');
}

export function containerIcon(i: ContainerItemInput): IconSpec {
  if (i.stopping) return { id: 'loading~spin' };
  if (i.drift) return { id: 'warning', color: 'list.warningForeground' };
  switch (i.container.state) {
    case 'running':
      return { id: 'vm-running', color: 'testing.iconPassed' };
    case 'paused':
      return { id: 'debug-pause' };
    case 'restarting':
      return { id: 'sync' };
    default:
      return { id: 'vm-outline' };
  }
}

/**
 * `container.<running|stopped|stopping>.<peer|nopeer>[.drifted][.window]`: the menus match with
 * regular expressions such as `viewItem =~ /^container\.running/` or `/\.drifted/`. A container
 * being stopped offers no Stop, so a second click on the same spot stops nothing else.
 */
export function containerContextValue(i: ContainerItemInput): string {
  const run = i.stopping ? 'stopping' : i.container.state === 'running' ? 'running' : 'stopped';
  let v = `container.${run}.${i.container.peer ? 'peer' : 'nopeer'}`;
  if (i.drift) v += '.drifted';
  if (i.inThisWindow) v += '.window';
  return v;
}

export function containerTooltip(i: ContainerItemInput, driftMessage?: string): string {
  const c = i.container;
  // Docker's "Up 3 minutes" is stale as soon as it is shown (the tree refreshes on events, not
  // on a clock): the start time stays true.
  const state = i.stopping
    ? 'State: stopping (waiting for the engine)'
    : c.state === 'running' && c.startedAt
      ? `Running since ${startedText(c.startedAt)}`
      : `State: ${inline(stateWord(c.state))}`;
  const lines = [inline(c.name), state, `Kind: ${c.kind === 'named' ? 'named shell' : c.kind}`];
  if (c.workspace) lines.push(`Folder: ${inline(c.workspace)}`);
  if (c.profile !== undefined) {
    lines.push(
      `Profile: ${inline(c.profile, 64)} (its credentials come from ~/.toolbox/profiles/${inline(c.profile, 64)}, not ~/.toolbox)`,
    );
  }
  if (c.image) lines.push(`Image: ${inline(c.image)}`);
  lines.push(`Peer messaging: ${i.container.peer ? 'shares the PID namespace' : 'not in the shared PID namespace'}`);
  if (c.peerRun !== undefined) {
    lines.push(`Opened with peer messaging ${c.peerRun ? 'on' : 'off'} for that run only: the folder's setting does not apply to it.`);
  }
  if (c.seccomp)
    lines.push(
      `Seccomp: ${c.seccomp === 'unconfined' ? 'unconfined (no filter, as the toolbox CLI creates it)' : "Docker's default profile"}`,
    );
  if (driftMessage) lines.push('', inline(driftMessage));
  return plainText(lines.join('\n'), 'tooltip');
}

/** An absolute start time, as the user's locale writes dates. */
export function startedText(ms: number): string {
  return new Date(ms).toLocaleString(undefined, { dateStyle: 'medium', timeStyle: 'short' });
}

export type ItemProps = { label: string; description: string; icon: IconSpec; contextValue: string; tooltip: string };

/**
 * An error shown as a tree item with actions instead of an empty view. `setting`: the error
 * names toolbox.dockerHost, so Open Setting is one of the actions.
 */
export function errorItem(message: string, setting = false): ItemProps {
  const firstSentence = message.split(/(?<=[.!?])\s/)[0] ?? message;
  return plainItem({
    label: firstSentence,
    description: setting ? 'Open Setting · Retry · Show Log' : 'Retry · Show Log',
    icon: { id: 'error', color: 'errorForeground' },
    contextValue: 'error',
    tooltip: message,
  });
}
