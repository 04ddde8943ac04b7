/**
 * Run Doctor (issue 31, item 3): what the extension found about the engine and this window's
 * folders (`DoctorFacts`, gathered with bounded probes by backend/doctor/) turned into check
 * lines, each pass, warn, fail or info with what to do, and into the plain-text report the
 * command shows. Pure: no I/O, no clock (the caller gives the time). The checks, in order: the
 * engine, the transports of each container, peer messaging's shared objects, the runtime image,
 * proximo, the protected paths (docs/decisions/0042), the extensions on this host that run the
 * folder's files (0060), the Docker endpoint (0047) and egress (0056). Each group of checks is a
 * file of this folder (types.ts the facts, shared.ts what they share, report.ts the report);
 * this one puts them in the report's order.
 */
import { COMMAND_LABELS } from '../../contract/manifest';
import { dockerChecks } from './dockerEndpoint';
import { egressChecks } from './egress';
import { engineChecks } from './engine';
import { hostToolsChecks } from './hostExtensions';
import { imageChecks } from './image';
import { peerFolderChecks, peerObjectChecks } from './peer';
import { protectedChecks, vscodeGitChecks } from './protectedPaths';
import { proximoChecks } from './proximo';
import { oneLine, shown } from './shared';
import { transportChecks } from './transports';
import type { DoctorCheck, DoctorFacts } from './types';

export { oneLine } from './shared';
export { doctorCounts, doctorSummary, renderDoctorReport, REPORT_COLUMNS, type DoctorCounts } from './report';
export {
  isUnread,
  type ContainerFacts,
  type DoctorAbout,
  type DoctorCheck,
  type DoctorFacts,
  type DoctorStatus,
  type DoctorTransports,
  type EndpointFoundBy,
  type EngineFacts,
  type FolderFacts,
  type ImageFacts,
  type PeerObjectFacts,
  type Read,
  type Unread,
  type VscodeGitOpener,
  type VscodeSettingSource,
} from './types';

/** Every check, in the report's order. */
export function doctorChecks(facts: DoctorFacts): DoctorCheck[] {
  const { home, folders } = facts;
  const noFolder: DoctorCheck[] =
    folders.length === 0
      ? [
          {
            id: 'folders',
            status: 'info',
            title: 'Folders',
            detail: 'No folder is open in this window: the per-folder checks are skipped.',
          },
        ]
      : [];
  return [
    ...engineChecks(facts.engine),
    ...noFolder,
    ...folders.flatMap((f) => transportChecks(f, home)),
    ...folders.flatMap((f) =>
      f.configProblem === undefined
        ? []
        : [
            {
              id: `config:${f.folder}`,
              status: 'fail' as const,
              title: `Configuration of ${shown(f.folder, home)}`,
              detail: `${oneLine(f.configProblem)} The checks that need the folder's plan are skipped.`,
              fix: `Fix the file and line named there (${COMMAND_LABELS.showResolvedConfig.label} lists where each key comes from).`,
            },
          ],
    ),
    ...peerObjectChecks(facts),
    ...folders.flatMap((f) => peerFolderChecks(f, home)),
    ...imageChecks(facts),
    ...folders.flatMap((f) => proximoChecks(f, home)),
    ...folders.flatMap((f) => protectedChecks(f, home)),
    ...folders.flatMap((f) => vscodeGitChecks(f, home)),
    ...hostToolsChecks(facts.hostTools, folders.length),
    ...folders.flatMap((f) => dockerChecks(f, home)),
    ...folders.flatMap((f) => egressChecks(f, home)),
  ];
}
