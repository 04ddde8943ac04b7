/** Run Doctor and Copy Report as the UI calls them (backend/doctor/, plan/doctor/). */
import type { DoctorCheck, DoctorCounts } from '../../plan/doctor';

export type { DoctorCheck, DoctorCounts, DoctorStatus } from '../../plan/doctor';

export interface DoctorRequest {
  /** This window's folders. */
  folders: readonly string[];
  /** VS Code's version (vscode.version), for the report's first lines. */
  vscodeVersion?: string;
  /** Each probe as it starts, for the progress notification. */
  onStep?: (message: string) => void;
}

export interface DoctorResult {
  checks: DoctorCheck[];
  counts: DoctorCounts;
  /** "Doctor: 9 passed, 1 warning, 0 failed". */
  summary: string;
  /** The report as the document shows it (plain text). */
  text: string;
  /** The same report redacted for the clipboard (plan/redact.ts): no secrets, user names, home paths or environment values. */
  redacted: string;
}
