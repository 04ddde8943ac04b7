/**
 * Run Doctor's peer messaging lines (plan/doctor/): the shared anchor container and socket
 * volume, and whether each folder's running containers agree with its peer messaging setting.
 */
import { COMMAND_LABELS } from '../../contract/manifest';
import { oneLine, OPEN_SHELL, RECREATE_STEPS, RUN, shown, unreadCheck } from './shared';
import { isUnread, type DoctorCheck, type DoctorFacts, type FolderFacts } from './types';

const STOP_ALL = COMMAND_LABELS.stopAll.label;

export function peerObjectChecks(facts: DoctorFacts): DoctorCheck[] {
  const { anchor: anchorName, socketVolume } = facts.names;
  if (isUnread(facts.peerObjects)) return [unreadCheck('peer.objects', 'Peer messaging objects', facts.peerObjects)];
  const { anchor, volume } = facts.peerObjects;
  const wanted = facts.folders.some((f) => f.peer?.on === true);
  const checks: DoctorCheck[] = [];
  const anchorTitle = `Peer anchor ${anchorName}`;
  if (anchor.foreignLabel !== undefined) {
    checks.push({
      id: 'peer.anchor',
      status: 'fail',
      title: anchorTitle,
      detail: `A container of that name belongs to another tool (label ${oneLine(anchor.foreignLabel, 200)}): Toolbox neither uses nor removes it.`,
      fix: `Rename or remove that container yourself (docker rm -f ${anchorName}) if it is not in use.`,
    });
  } else if (anchor.state === 'missing') {
    checks.push({
      id: 'peer.anchor',
      status: 'info',
      title: anchorTitle,
      detail: 'Not created yet: the first shell with peer messaging on creates it.',
    });
  } else if (!anchor.entrypointOk) {
    checks.push({
      id: 'peer.anchor',
      status: 'warn',
      title: anchorTitle,
      detail: `It is ${anchor.state} with an entrypoint that is not the anchor's (stale): the next open replaces it once no container joins it.`,
      fix: `Stop every container (${STOP_ALL}), then run ${OPEN_SHELL}.`,
    });
  } else if (anchor.state === 'stopped') {
    checks.push({
      id: 'peer.anchor',
      status: wanted ? 'warn' : 'info',
      title: anchorTitle,
      detail: 'Stopped: containers opened now cannot join its PID namespace until it runs; the next open with peer messaging starts it.',
      ...(wanted ? { fix: RUN(OPEN_SHELL) } : {}),
    });
  } else {
    checks.push({
      id: 'peer.anchor',
      status: 'pass',
      title: anchorTitle,
      detail: "Running, owned by Toolbox (its name, no other tool's label).",
    });
  }
  const volumeTitle = `Socket volume ${socketVolume}`;
  const user = `${facts.uid}:${facts.gid}`;
  if (volume.foreignLabel !== undefined) {
    checks.push({
      id: 'peer.volume',
      status: 'fail',
      title: volumeTitle,
      detail: `A volume of that name belongs to another tool (label ${oneLine(volume.foreignLabel, 200)}).`,
      fix: `Remove it yourself (docker volume rm ${socketVolume}) if it is not in use; the next open makes Toolbox's own.`,
    });
  } else if (!volume.exists) {
    checks.push({
      id: 'peer.volume',
      status: 'info',
      title: volumeTitle,
      detail: 'Not created yet: the first shell with peer messaging on creates it (yours, mode 0700).',
    });
  } else if (volume.owner === undefined) {
    checks.push({
      id: 'peer.volume',
      status: 'pass',
      title: volumeTitle,
      detail: "Present; its owner and mode cannot be read from this host (the engine's files are elsewhere or not readable).",
    });
  } else if (volume.owner !== user || (volume.mode !== undefined && volume.mode !== '0700')) {
    checks.push({
      id: 'peer.volume',
      status: 'warn',
      title: volumeTitle,
      detail: `Owned by ${oneLine(volume.owner, 40)}, mode ${oneLine(volume.mode ?? 'unknown', 8)}; it should be yours (${user}), mode 0700, or sessions cannot make their sockets in it.`,
      fix: `Stop every container (${STOP_ALL}), remove it (docker volume rm ${socketVolume}), then run ${OPEN_SHELL}.`,
    });
  } else {
    checks.push({
      id: 'peer.volume',
      status: 'pass',
      title: volumeTitle,
      detail: `Present, owned by you (${user}), mode ${volume.mode ?? '0700'}.`,
    });
  }
  return checks;
}

export function peerFolderChecks(f: FolderFacts, home: string): DoctorCheck[] {
  const id = `peer.folder:${f.folder}`;
  const title = `Peer messaging for ${shown(f.folder, home)}`;
  if (f.peer === undefined) return [];
  const setting = `${f.peer.on ? 'On' : 'Off'} (${oneLine(f.peer.source, 300)})`;
  const fix = `To change it: ${COMMAND_LABELS.togglePeerMessaging.label}`;
  if (isUnread(f.containers) || f.containers.length === 0) return [{ id, status: 'info', title, detail: `${setting}.`, fix }];
  const drifted = f.containers.filter((c) => c.state === 'running' && c.peer.perRun === undefined && c.peer.member !== f.peer!.on);
  if (drifted.length > 0) {
    return [
      {
        id,
        status: 'warn',
        title,
        detail: `${setting}, but ${drifted.map((c) => oneLine(c.name, 200)).join(', ')} ${f.peer.on ? 'is not in' : 'is in'} the anchor's namespace.`,
        fix: `Run ${COMMAND_LABELS.recreateContainer.label} (or ${RECREATE_STEPS}).`,
      },
    ];
  }
  return [{ id, status: 'pass', title, detail: `${setting}; the running containers agree.` }];
}
