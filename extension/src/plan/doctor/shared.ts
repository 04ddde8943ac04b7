/**
 * What Run Doctor's check groups (plan/doctor/) share: the fixes that are one command or a
 * recreate, outside text as one line of the report, a folder shown under the home, the line of a
 * fact that could not be read, and a folder's containers or the line that says there are none.
 */
import { COMMAND_LABELS } from '../../contract/manifest';
import { tildePath } from '../posture';
import { isUnread, type ContainerFacts, type DoctorCheck, type FolderFacts, type Unread } from './types';

/** A fix that is one command: its palette label. */
export const RUN = (label: string) => `Run ${label}.`;
export const OPEN_SHELL = COMMAND_LABELS.openShell.label;
/** The container's fix when it was made with something its folder no longer asks for. */
export const RECREATE_STEPS = `stop the container (${COMMAND_LABELS.stopContainer.label}) and open a shell again (${OPEN_SHELL})`;
export const RECREATE = `${RECREATE_STEPS[0]!.toUpperCase()}${RECREATE_STEPS.slice(1)}.`;

/**
 * Outside text (engine, container, config files) as one line of the report: escape sequences and
 * invisible characters out, line breaks and runs of white space one space, at most `max`
 * characters, so it can never start a line that passes for one of ours
 * (docs/decisions/0040-outside-text-is-plain-text.md).
 */
export function oneLine(raw: unknown, max = 600): string {
  const s = (typeof raw === 'string' ? raw : String(raw ?? ''))
    .slice(0, max * 8)
    // eslint-disable-next-line no-control-regex
    .replace(/(?:\x1b\[|\x9b)[\x30-\x3f]*[\x20-\x2f]*[\x40-\x7e]?|(?:\x1b\]|\x9d)[^\x07\x1b\x9c]*(?:\x07|\x1b\\|\x9c)?|\x1b./g, '')
    .replace(/[\p{Cf}\p{Cc}\u2028\u2029]/gu, ' ')
    .replace(/\s+/g, ' ')
    .trim();
  return s.length > max ? `${s.slice(0, max - 1).trimEnd()}…` : s;
}

export function unreadCheck(id: string, title: string, fact: Unread): DoctorCheck {
  if (fact.unread === 'no-engine') return { id, status: 'info', title, detail: `Not checked: ${oneLine(fact.reason)}` };
  if (fact.unread === 'timeout') {
    return {
      id,
      status: 'warn',
      title,
      detail: `Not checked: ${oneLine(fact.reason)}. The engine (or this host) is slow to answer.`,
      fix: `Run ${COMMAND_LABELS.runDoctor.label} again; if it stays slow, restart the engine or check its load.`,
    };
  }
  return {
    id,
    status: 'warn',
    title,
    detail: `Not checked: ${oneLine(fact.reason)}`,
    fix: `Run ${COMMAND_LABELS.showLog.label} for the details, then ${COMMAND_LABELS.runDoctor.label} again.`,
  };
}

/** `~/proj` for a folder under the home. */
export function shown(path: string, home: string): string {
  return oneLine(tildePath(path, home), 400);
}

/** The folder's containers, or the one line that says why there are none to look at. */
export function containersOr(
  f: FolderFacts,
  home: string,
  id: string,
  title: string,
  each: (c: ContainerFacts) => DoctorCheck[],
  none: () => DoctorCheck[],
): DoctorCheck[] {
  if (isUnread(f.containers)) return [unreadCheck(`${id}:${f.folder}`, `${title} (${shown(f.folder, home)})`, f.containers)];
  if (f.containers.length === 0) return none();
  return f.containers.flatMap(each);
}
