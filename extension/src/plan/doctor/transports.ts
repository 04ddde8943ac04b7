/**
 * Run Doctor's transport lines (plan/doctor/): how each running container's shims reach the
 * bridge and how shells reach its session holder (backend/transportFacts.ts measures them).
 */
import { COMMAND_LABELS, SETTINGS } from '../../contract/manifest';
import { containersOr, oneLine, OPEN_SHELL, RUN, shown, unreadCheck } from './shared';
import { isUnread, type DoctorCheck, type FolderFacts } from './types';

export function transportChecks(f: FolderFacts, home: string): DoctorCheck[] {
  return containersOr(
    f,
    home,
    'transports',
    'Transports',
    (c) => {
      const title = `Transports of ${oneLine(c.name, 200)}`;
      const id = `transports:${c.name}`;
      if (c.state !== 'running')
        return [{ id, status: 'info', title, detail: `The container is ${oneLine(c.state, 40)}: nothing to reach.` }];
      if (c.transports === undefined) {
        return [
          {
            id,
            status: 'warn',
            title,
            detail:
              'Not measured yet: how the shims reach the bridge (unix socket or TCP) and how shells reach the session holder are not known.',
            fix: `Nothing for now; if code, xdg-open or a shell misbehaves in it, run ${COMMAND_LABELS.showLog.label} to see how it connected.`,
          },
        ];
      }
      if (isUnread(c.transports)) return [unreadCheck(id, title, c.transports)];
      const t = c.transports;
      const bridge = t.bridge.mode === 'unix' ? 'unix socket' : t.bridge.mode === 'tcp' ? 'TCP via host.docker.internal' : 'none';
      const sessions = t.sessions.mode === 'socket' ? 'holder socket' : 'exec';
      const detail = `Bridge: ${bridge} (${oneLine(t.bridge.why, 300)}). Sessions: ${sessions} (${oneLine(t.sessions.why, 300)}).`;
      if (t.bridge.mode === 'none') {
        return [
          {
            id,
            status: 'warn',
            title,
            detail: `${detail} code, xdg-open, git credentials and proximo do not reach VS Code from it.`,
            fix: t.bridge.why.includes(SETTINGS.bridgeTransport)
              ? `Set ${SETTINGS.bridgeTransport} back to auto in your User settings, unless this engine's host.docker.internal reaches this machine's loopback, then recreate the container (${COMMAND_LABELS.stopContainer.label} and open a shell again).`
              : `Open a shell of the folder again (${OPEN_SHELL}); if the bridge is off (bridge: false in .toolbox.yaml), that is why.`,
          },
        ];
      }
      return [{ id, status: 'pass', title, detail }];
    },
    () => [
      {
        id: `transports:${f.folder}`,
        status: 'info',
        title: `Transports (${shown(f.folder, home)})`,
        detail: 'No container yet: open a shell first.',
        fix: RUN(OPEN_SHELL),
      },
    ],
  );
}
