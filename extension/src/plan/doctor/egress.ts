/**
 * Run Doctor's egress lines (plan/doctor/; docs/decisions/0056): the folder's egress mode, and
 * whether each container was made under it and its proxy socket answers.
 */
import { SETTINGS } from '../../contract/manifest';
import { oneLine, OPEN_SHELL, RECREATE, shown, unreadCheck } from './shared';
import { isUnread, type DoctorCheck, type FolderFacts } from './types';

export function egressChecks(f: FolderFacts, home: string): DoctorCheck[] {
  if (f.egressMode === undefined) return [];
  const mode = f.egressMode;
  const folder = shown(f.folder, home);
  const checks: DoctorCheck[] = [
    {
      id: `egress:${f.folder}`,
      status: 'info',
      title: `Egress of ${folder}`,
      detail:
        mode === 'open'
          ? `open: its containers reach any host through the engine's network (${SETTINGS.egressMode}).`
          : `${mode}: its new containers have no network of their own and connect through a proxy this window serves.`,
    },
  ];
  if (isUnread(f.containers))
    return [...checks, unreadCheck(`egress.containers:${f.folder}`, `Egress of ${folder}'s containers`, f.containers)];
  for (const c of f.containers) {
    const id = `egress.container:${c.name}`;
    const title = `Egress of ${oneLine(c.name, 200)}`;
    if (c.egress.enforced && c.state === 'running' && c.egress.served === false) {
      checks.push({
        id,
        status: 'fail',
        title,
        detail: 'Created under a policy, but its proxy socket does not answer: programs in it cannot connect out.',
        fix: `Open a shell of the folder in this window (${OPEN_SHELL}): the proxy is served again.`,
      });
    } else if (c.egress.enforced && mode === 'open') {
      checks.push({
        id,
        status: 'warn',
        title,
        detail: 'Created under a policy the folder no longer has: it still has no network of its own.',
        fix: RECREATE,
      });
    } else if (!c.egress.enforced && mode !== 'open') {
      checks.push({
        id,
        status: 'warn',
        title,
        detail: `Created before the folder's ${mode} policy: it still has the engine's network.`,
        fix: RECREATE,
      });
    } else if (c.egress.enforced) {
      checks.push({
        id,
        status: 'pass',
        title,
        detail: `Under the ${mode} policy${c.egress.served ? '; its proxy socket is served' : ''}.`,
      });
    } else {
      checks.push({ id, status: 'pass', title, detail: 'open, as the folder is.' });
    }
  }
  return checks;
}
