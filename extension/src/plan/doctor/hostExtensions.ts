/**
 * Run Doctor's host extensions line (plan/doctor/; docs/decisions/0060): the extensions on this
 * host that run the folder's files, as plan/hostTools.ts words them.
 */
import { hostToolsChoice, hostToolsDetail, hostToolsOffer, hostToolsPosture, runningOnTheirOwn, type HostToolsFacts } from '../hostTools';
import type { DoctorCheck } from './types';

/**
 * The extensions on this host that run files of the window's folders, which their containers can
 * write (docs/decisions/0060): named, with Restricted Mode as the user's choice. Info, never a
 * warning: trusting the folder is the user's call, and the list is Toolbox's, not VS Code's.
 */
export function hostToolsChecks(facts: HostToolsFacts | undefined, folders: number): DoctorCheck[] {
  if (facts === undefined || folders === 0) return [];
  const p = hostToolsPosture(facts);
  const choice = hostToolsChoice(p);
  const offer = hostToolsOffer(p);
  return [
    {
      id: 'host-tools',
      status: runningOnTheirOwn(p).length === 0 ? 'pass' : 'info',
      title: "Extensions on this host that run the folder's files",
      detail: hostToolsDetail(p),
      ...(choice !== undefined ? { fix: choice } : {}),
      ...(offer !== undefined ? { offer } : {}),
    },
  ];
}
