/** The words of the destructive confirmations (Stop Every Container, Stop Container): pure, unit-tested. */
import { inline, plainText } from './plainText';

/** How many names the Stop All confirmation spells out before it says "and N more". */
export const STOP_ALL_NAMES_SHOWN = 8;

/**
 * The Stop All confirmation: what it will stop, by name (the first few, then a count), and the
 * label of the destructive button, which says how many.
 */
export function stopAllConfirmation(targets: readonly string[], anchor: string): { message: string; detail: string; stopLabel: string } {
  const n = targets.length;
  const shown = targets.slice(0, STOP_ALL_NAMES_SHOWN).map((t) => (t === anchor ? `${inline(t)} (the peer anchor)` : inline(t)));
  const more = n - shown.length;
  const list = [...shown.map((t) => `• ${t}`), ...(more > 0 ? [`• … and ${more} more`] : [])].join('\n');
  return {
    message: `Stop ${n} toolbox container${n === 1 ? '' : 's'}?`,
    detail: plainText(
      `${list}\n\nShells in these containers end, in every window. Stopped containers are removed; ` +
        'the socket volume and your files are kept.',
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
): { message: string; detail: string; stopLabel: string } | undefined {
  const n = attached.length;
  if (n === 0) return undefined;
  const shown = attached.slice(0, STOP_ALL_NAMES_SHOWN).map((s) => `• ${inline(s)}`);
  if (n > shown.length) shown.push(`• … and ${n - shown.length} more`);
  return {
    message: plainText(`Stop ${container}? ${n === 1 ? 'A shell is' : `${n} shells are`} attached to it.`, 'message'),
    detail: plainText(
      `${shown.join('\n')}\n\n${n === 1 ? 'This shell ends' : 'These shells end'}, and anything running in ${n === 1 ? 'it' : 'them'} stops. Your files in the folder are kept.`,
      'detail',
    ),
    stopLabel: 'Stop Container',
  };
}
