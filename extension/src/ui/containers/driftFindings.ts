/**
 * Drift: running containers of this window's folders whose peer state or seccomp profile differs
 * from what their open asked for (the planner's rules, plan/drift.ts), and what the user reads
 * about it (the notification, the status bar). No vscode import and no I/O here.
 */
import { driftWarning, peerDrift, profileDrift, seccompDifference, seccompWarning, type PeerDriftKind } from '../../plan/drift';
import type { ContainerSummary, PeerSetting, SeccompSetting } from '../../backend/api';
import type { ObjectNames, SeccompProfile } from '../../contract/types';
import { inline, plainText } from '../plainText';
import { folderOf, peerSourceText, settingScopeText } from '../views/model';

/** What a finding shows first: its peer drift when it has one, else `seccomp`. */
export type FindingKind = PeerDriftKind | 'seccomp';

export interface DriftFinding {
  container: ContainerSummary;
  folder: string;
  /** The peer drift (namespace first), or `seccomp` when only the seccomp profile differs. */
  drift: FindingKind;
  /**
   * The profile the folder's toolbox.seccomp asks for, when the container runs with the other one
   * (alone or besides a peer drift: one finding, one restart fixes both).
   */
  seccomp?: SeccompProfile;
  /** The folder's toolbox.seccomp and where it is set, when the seccomp profile differs. */
  seccompSetting?: SeccompSetting;
  /** Upstream's warning shape, for the log (plan/drift.ts driftWarning). */
  message: string;
  /** What the container's own open asked for: its per-run override, else the folder's setting now. */
  want: boolean;
  /** The container was opened with a per-run override (LABELS.peerRun), so the folder's setting does not apply to it. */
  perRun: boolean;
  /** The folder's setting and its source, when the finding is judged against it. */
  setting?: PeerSetting;
  /** What the user reads: a sentence that ends in the question the fix answers, and details that add to it. */
  notice: DriftNotice;
}

export interface DriftNotice {
  message: string;
  detail: string;
}

/** The folder's setting when a refresh could not read it: on, the default. */
const DEFAULT_SETTING: PeerSetting = { on: true, source: { from: 'default' }, projectFileUsable: false };

/**
 * Running containers of this window's folders whose peer state differs from what their own open
 * asked for: a container opened with a per-run override (Open Toolbox Shell with or without Peer
 * Messaging (this run)) is judged against that override, any other against the folder's setting
 * now (the planner's drift rules, plan/drift.ts). A per-run container whose state matches its
 * own request is never drift, whatever the folder says (docs/decisions/0014-per-run-peer-is-not-drift.md).
 *
 * Also those whose seccomp profile differs from the folder's toolbox.seccomp now (`seccomp`, by
 * folder; a folder missing there, or a container whose profile is not known, is not judged).
 * Both on one container make one finding (docs/decisions/0037-seccomp-drift-in-the-views.md).
 */
export function findDrift(
  list: readonly ContainerSummary[],
  anchorId: string | undefined,
  settings: ReadonlyMap<string, PeerSetting | boolean>,
  names: ObjectNames,
  home = '',
  seccomp: ReadonlyMap<string, SeccompSetting> = new Map(),
): DriftFinding[] {
  const findings: DriftFinding[] = [];
  const folders = [...settings.keys()];
  for (const c of list) {
    if (c.state !== 'running' || (c.kind !== 'workspace' && c.kind !== 'named')) continue;
    const folder = folderOf(c, folders);
    if (folder === undefined) continue;
    const raw = settings.get(folder);
    const setting = raw === undefined ? DEFAULT_SETTING : typeof raw === 'boolean' ? { ...DEFAULT_SETTING, on: raw } : raw;
    const perRun = c.peerRun !== undefined;
    const want = c.peerRun ?? setting.on;
    const peer = peerDrift(c, want, anchorId, names);
    const wantsSeccomp = seccomp.get(folder);
    const profile = wantsSeccomp ? profileDrift(c.seccomp, wantsSeccomp.profile) : undefined;
    const drift: FindingKind | undefined = peer ?? (profile ? 'seccomp' : undefined);
    if (!drift) continue;
    const finding = {
      container: c,
      folder,
      drift,
      want,
      perRun,
      ...(perRun ? {} : { setting }),
      ...(profile ? { seccomp: profile, seccompSetting: wantsSeccomp } : {}),
    };
    const message = [...(peer ? [driftWarning(peer, c.name, names)] : []), ...(profile ? [seccompWarning(c.name, profile)] : [])].join(
      '\n',
    );
    findings.push({ ...finding, message, notice: driftNotice(finding, names, home) });
  }
  return findings;
}

const onOff = (on: boolean) => (on ? 'on' : 'off');
const RESTART = 'Restart it? Its open shells will close.';

/**
 * The drift notification's sentence and its details. The sentence says what differs in words a
 * newcomer understands and asks the question the Restart button answers; the details add which
 * setting (and where it is set), what the container has now, and what a restart does.
 */
export function driftNotice(
  f: Pick<DriftFinding, 'container' | 'folder' | 'drift' | 'want' | 'perRun' | 'setting' | 'seccomp' | 'seccompSetting'>,
  names: ObjectNames,
  home = '',
): DriftNotice {
  const c = f.container;
  const name = inline(c.name);
  const staleNamespace = c.pidMode !== '' && !c.peer;
  // What differs, in one sentence; the question the Restart button answers comes last.
  let message: string;
  const seccomp = f.seccomp ?? (f.drift === 'seccomp' ? 'default' : undefined);
  const peerDiffers = f.drift !== 'seccomp';
  if (!peerDiffers) {
    message = `The container ${name} ${seccompDifference(seccomp ?? 'default')}.`;
  } else if (f.drift === 'missing-socket-volume') {
    message = `The container ${name} has peer messaging on but no shared inbox volume (${names.socketVolume}), so its agents cannot reach any peer.`;
  } else if (f.perRun) {
    message =
      f.drift === 'planned-on-but-outside'
        ? `The container ${name} was opened with peer messaging on for that run, but it is no longer in the shared namespace${staleNamespace ? ' (the peer anchor was restarted)' : ''}, so its agents see no peers.`
        : `The container ${name} was opened with peer messaging off for that run, but it runs in the shared namespace, so its processes are visible to other toolbox containers.`;
  } else if (f.drift === 'planned-on-but-outside' && staleNamespace) {
    message = `The container ${name} lost peer messaging: the shared namespace it joined is gone (the peer anchor was restarted).`;
  } else {
    message = `The container ${name} still has peer messaging ${onOff(!f.want)}; this folder is now set to ${onOff(f.want)}.`;
  }
  const has = [
    c.peer
      ? 'It runs in the shared PID namespace of the peer anchor'
      : staleNamespace
        ? 'It runs in the PID namespace of a peer anchor that is gone'
        : 'It runs in a PID namespace of its own',
    c.mountsSocketVolume
      ? `and mounts the shared inbox volume ${names.socketVolume}.`
      : `and does not mount the shared inbox volume ${names.socketVolume}.`,
  ].join(' ');
  const asked = f.perRun
    ? `It was opened with peer messaging ${onOff(f.want)} for that run only (Open Toolbox Shell ${f.want ? 'with' : 'without'} Peer Messaging), so the folder's setting does not apply to it.`
    : f.setting
      ? `This folder's peer messaging is ${onOff(f.setting.on)} (${inline(peerSourceText(f.setting.source, f.folder, home))}).`
      : `This folder's peer messaging is ${onOff(f.want)}.`;
  // Both differ: one sentence more before the question, one restart fixes both.
  if (seccomp && peerDiffers) message += ` It also ${seccompDifference(seccomp)}.`;
  message += ` ${RESTART}`;
  const seccompAsked = seccomp
    ? [
        `This folder's toolbox.seccomp is ${seccomp}${f.seccompSetting?.scope ? ` (set in ${settingScopeText(f.seccompSetting.scope)})` : ''}; ` +
          `the container runs ${seccomp === 'default' ? 'unconfined (without a seccomp filter)' : "under Docker's default seccomp profile"}.`,
      ]
    : [];
  const gets = [
    ...(peerDiffers ? [`peer messaging ${onOff(f.want)}`] : []),
    ...(seccomp ? [seccomp === 'default' ? "Docker's default seccomp profile" : 'no seccomp filter (unconfined)'] : []),
  ].join(' and ');
  const restart =
    `Restart stops ${name}, which closes its open shells and ends the programs running in them, in every window, ` +
    `then opens a new shell with ${gets}. The files in your folder are kept.`;
  return {
    message: plainText(message, 'message'),
    detail: plainText([...(peerDiffers ? [asked, has] : []), ...seccompAsked, restart].join('\n\n'), 'detail'),
  };
}

/**
 * What a Dismiss on the drift warning silences: this container with this difference. A new
 * difference on the same container (the seccomp setting changed after its peer drift was
 * dismissed) shows again.
 */
export function findingKey(f: Pick<DriftFinding, 'container' | 'drift' | 'seccomp'>): string {
  return `${f.container.id}|${f.drift}|${f.seccomp ?? ''}`;
}

/** The status bar warning for the findings: names the first container; undefined hides it. */
export function driftStatus(findings: readonly DriftFinding[]): { text: string; tooltip: string; name: string } | undefined {
  const first = findings[0];
  if (!first) return undefined;
  const more = findings.length > 1 ? ` +${findings.length - 1}` : '';
  return {
    name: plainText(first.container.name, 'label'),
    text: `$(warning) ${plainText(first.container.name, 'iconLabel', 100)} drifted${more}`,
    tooltip: plainText(
      [
        ...findings.map((f) => inline(f.notice.message)),
        '',
        'Click to restart it with the settings it should have, see why, or dismiss.',
      ].join('\n'),
      'tooltip',
    ),
  };
}
