/**
 * Run Doctor's proximo lines (plan/doctor/): off, not installed, its certificate authority
 * missing or mounted, and the running containers made without it.
 */
import { oneLine, RECREATE, shown } from './shared';
import { isUnread, type DoctorCheck, type FolderFacts } from './types';

export function proximoChecks(f: FolderFacts, home: string): DoctorCheck[] {
  if (f.proximo === undefined) return [];
  const id = `proximo:${f.folder}`;
  const title = `proximo for ${shown(f.folder, home)}`;
  const p = f.proximo;
  if (!p.enabled) return [{ id, status: 'info', title, detail: 'Off for this folder (proximo: false in the configuration).' }];
  if (!p.installed && p.caPath === undefined) {
    return [
      { id, status: 'info', title, detail: 'Not installed on this host: containers start without it, and nothing else is affected.' },
    ];
  }
  if (p.caPath === undefined) {
    return [
      {
        id,
        status: 'warn',
        title,
        detail: "Installed, but its certificate authority is missing: containers do not trust proximo's HTTPS names.",
        fix: 'Run `proximo install` on this host, then open a new shell (a running container keeps what it had).',
      },
    ];
  }
  const checks: DoctorCheck[] = [
    {
      id,
      status: 'pass',
      title,
      detail: `On: its CA at ${shown(p.caPath, home)} is mounted into new containers; ${p.hosts} routed host${p.hosts === 1 ? '' : 's'}.`,
    },
  ];
  if (!isUnread(f.containers)) {
    for (const c of f.containers.filter((c) => c.state === 'running' && !c.proximoCa)) {
      checks.push({
        id: `proximo.container:${c.name}`,
        status: 'warn',
        title: `proximo in ${oneLine(c.name, 200)}`,
        detail: "It was created without proximo's CA (proximo was not set up then): https://….test names fail there.",
        fix: RECREATE,
      });
    }
  }
  return checks;
}
