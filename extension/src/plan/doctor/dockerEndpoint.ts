/**
 * Run Doctor's Docker endpoint lines (plan/doctor/; docs/decisions/0047): what Docker each
 * container has (its own policy endpoint, the host's socket, none) and whether a window serves it.
 */
import { COMMAND_LABELS, SETTINGS } from '../../contract/manifest';
import { containersOr, oneLine, OPEN_SHELL, RECREATE_STEPS, shown } from './shared';
import type { DoctorCheck, FolderFacts } from './types';

export function dockerChecks(f: FolderFacts, home: string): DoctorCheck[] {
  if (f.dockerEndpoint === undefined) return [];
  const setting = f.dockerEndpoint.setting;
  const rawFix = `Set ${SETTINGS.dockerEndpoint} to scoped in your User settings (or turn Docker off for the folder with ${COMMAND_LABELS.turnOffReach.label} on its Docker row), then ${RECREATE_STEPS}.`;
  return containersOr(
    f,
    home,
    'docker',
    `Docker in ${shown(f.folder, home)}`,
    (c) => {
      const id = `docker:${c.name}`;
      const title = `Docker in ${oneLine(c.name, 200)}`;
      if (c.docker.kind === 'raw-socket') {
        return [
          {
            id,
            status: 'fail',
            title,
            detail: `It has the host's Docker socket, which is root on this host${setting === 'raw-socket' ? ` (${SETTINGS.dockerEndpoint} is raw-socket)` : ''}.`,
            fix: rawFix,
          },
        ];
      }
      if (c.docker.kind === 'none') return [{ id, status: 'pass', title, detail: 'No Docker in the container (no endpoint, no socket).' }];
      if (c.docker.served === false && c.state === 'running') {
        return [
          {
            id,
            status: 'warn',
            title,
            detail: 'It has its own policy endpoint, but no window serves it now: docker in the container gets "connection refused".',
            fix: `Open a shell of the folder in this window (${OPEN_SHELL}): the endpoint is served again.`,
          },
        ];
      }
      return [
        {
          id,
          status: 'pass',
          title,
          detail: `Its own policy endpoint (never the host's socket)${c.docker.served ? ', served by this window' : ''}.`,
        },
      ];
    },
    () =>
      setting === 'raw-socket'
        ? [
            {
              id: `docker:${f.folder}`,
              status: 'fail',
              title: `Docker in ${shown(f.folder, home)}`,
              detail: `No container yet; the next one gets the host's Docker socket (${SETTINGS.dockerEndpoint} is raw-socket), which is root on this host.`,
              fix: `Set ${SETTINGS.dockerEndpoint} to scoped in your User settings.`,
            },
          ]
        : [
            {
              id: `docker:${f.folder}`,
              status: 'info',
              title: `Docker in ${shown(f.folder, home)}`,
              detail: f.dockerEndpoint!.forwardable
                ? 'No container yet; the next one gets its own policy endpoint.'
                : 'No container yet; the engine is one the endpoint cannot forward to (ssh:// or TLS), so the next one gets the docker-sock mount as configured.',
            },
          ],
  );
}
