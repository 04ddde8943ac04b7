/** The words of the destructive confirmations (Stop Every Container, Stop Container): pure, unit-tested. */
import type { DockerChildrenSummary } from '../../backend/api/editor';
import { inline, plainText } from '../plainText';

/** How many names the Stop All confirmation spells out before it says "and N more". */
export const STOP_ALL_NAMES_SHOWN = 8;

/**
 * The Stop All confirmation: what it will stop, by name (the first few, then a count), and the
 * label of the destructive button, which says how many.
 */
export function stopAllConfirmation(
  targets: readonly string[],
  anchor: string,
  children: readonly DockerChildrenSummary[] = [],
): { message: string; detail: string; stopLabel: string } {
  const n = targets.length;
  const shown = targets.slice(0, STOP_ALL_NAMES_SHOWN).map((t) => (t === anchor ? `${inline(t)} (the peer anchor)` : inline(t)));
  const more = n - shown.length;
  const list = [...shown.map((t) => `• ${t}`), ...(more > 0 ? [`• … and ${more} more`] : [])].join('\n');
  const gone = childrenLines(
    {
      containers: children.flatMap((c) => c.containers),
      networks: children.flatMap((c) => c.networks),
      volumes: children.flatMap((c) => c.volumes),
    },
    'them',
  );
  return {
    message: `Stop ${n} toolbox container${n === 1 ? '' : 's'}?`,
    detail: plainText(
      `${list}\n\nShells in these containers end, in every window. Stopped containers are removed; ` +
        'the socket volume and your files are kept.' +
        (gone === undefined ? '' : `\n\n${gone}`),
      'detail',
    ),
    stopLabel: `Stop ${n} Container${n === 1 ? '' : 's'}`,
  };
}

/**
 * The Stop Container confirmation, only when shells are attached to it (named, the first few),
 * or undefined: stopping a container nobody uses needs no question.
 */
export function stopContainerConfirmation(
  container: string,
  attached: readonly string[],
  children?: DockerChildrenSummary,
): { message: string; detail: string; stopLabel: string } | undefined {
  const n = attached.length;
  const gone = childrenLines(children);
  // Named volumes alone are kept: nothing to ask about.
  const removing = (children?.containers.length ?? 0) + (children?.networks.length ?? 0) > 0;
  if (n === 0 && !removing) return undefined;
  const shown = attached.slice(0, STOP_ALL_NAMES_SHOWN).map((s) => `• ${inline(s)}`);
  if (n > shown.length) shown.push(`• … and ${n - shown.length} more`);
  const shells =
    n === 0
      ? ''
      : `${shown.join('\n')}\n\n${n === 1 ? 'This shell ends' : 'These shells end'}, and anything running in ${n === 1 ? 'it' : 'them'} stops. `;
  return {
    message: plainText(
      n === 0
        ? `Stop ${container}? What it started with Docker goes with it.`
        : `Stop ${container}? ${n === 1 ? 'A shell is' : `${n} shells are`} attached to it.`,
      'message',
    ),
    detail: plainText(`${shells}${gone === undefined ? '' : `\n\n${gone}\n\n`}Your files in the folder are kept.`.trimStart(), 'detail'),
    stopLabel: 'Stop Container',
  };
}

/**
 * What goes with a container it started through its Docker endpoint, and the named volumes that
 * stay (engine/dockerEndpoint/children.ts); undefined when it started nothing.
 */
export function childrenLines(children: DockerChildrenSummary | undefined, whom: 'it' | 'them' = 'it'): string | undefined {
  if (!children) return undefined;
  const removed = [...children.containers.map((c) => c.name), ...children.networks.map((n) => `network ${n}`)];
  const list = (names: string[]) => {
    const shown = names.slice(0, STOP_ALL_NAMES_SHOWN).map((x) => `• ${inline(x)}`);
    if (names.length > shown.length) shown.push(`• … and ${names.length - shown.length} more`);
    return shown.join('\n');
  };
  const parts: string[] = [];
  if (removed.length > 0)
    parts.push(`Removed with ${whom}, started through ${whom === 'it' ? 'its' : 'their'} Docker endpoint:\n${list(removed)}`);
  if (children.volumes.length > 0) parts.push(`Kept (named volumes, they hold data):\n${list(children.volumes.map((v) => `volume ${v}`))}`);
  return parts.length > 0 ? parts.join('\n\n') : undefined;
}

/**
 * The Remove What Was Left Behind confirmation: what goes (containers, networks) and what stays
 * (named volumes), for children whose owner something else removed (engine/dockerEndpoint/children.ts).
 */
export function leftBehindConfirmation(
  owner: string,
  children: DockerChildrenSummary,
): { message: string; detail: string; removeLabel: string } {
  const list = (names: string[]) => {
    const shown = names.slice(0, STOP_ALL_NAMES_SHOWN).map((x) => `• ${inline(x)}`);
    if (names.length > shown.length) shown.push(`• … and ${names.length - shown.length} more`);
    return shown.join('\n');
  };
  const removed = [...children.containers.map((c) => c.name), ...children.networks.map((n) => `network ${n}`)];
  const parts = [
    `${inline(owner)}, the container that started these through its Docker endpoint, is gone.`,
    removed.length > 0
      ? `Removed (containers with their anonymous volumes, then networks):\n${list(removed)}`
      : 'No containers or networks to remove.',
  ];
  if (children.volumes.length > 0) parts.push(`Kept (named volumes, they hold data):\n${list(children.volumes.map((v) => `volume ${v}`))}`);
  parts.push(`Nothing is removed if a container named ${inline(owner)} exists again by then.`);
  return {
    message: plainText(`Remove what ${owner} left behind?`, 'message'),
    detail: plainText(parts.join('\n\n'), 'detail'),
    removeLabel: 'Remove',
  };
}
