import type * as vscode from 'vscode';
import type { ToolboxBackend } from '../../backend/api';
import type { GrantState } from '../../backend/api/editor';
import type { RefreshManager } from '../views/refreshManager';
import type { ShellLauncher } from '../shells/shellLauncher';
import type { DriftStatusBar } from '../views/statusBars';
import type { ResolvedConfigDocuments } from '../config/resolvedConfigDocuments';
import type { ProposalReview } from '../approvals/proposalReview';
import type { ApprovalPrompter } from '../approvals/approvalPrompter';
import type { AgentTimeline } from '../agents/agentTimeline';
import type { SessionTimelineDocuments } from '../agents/sessionTimelineDocuments';
import type { EgressQuestions } from '../egress/egressQuestions';
import type { EgressLogDocuments } from '../egress/egressLogDocuments';
import type { DoctorDocuments } from '../doctor/doctorDocuments';

/** The collaborators every command gets from the composition root. */
export interface CommandServices {
  backend: ToolboxBackend;
  shells: ShellLauncher;
  refresh: RefreshManager;
  statusBar: DriftStatusBar;
  log: vscode.LogOutputChannel;
  /** Git credential grants per folder (globalState), for the manage command. */
  credentialGrants: GrantState;
  /** Show Resolved Configuration's documents. */
  resolvedConfig: ResolvedConfigDocuments;
  /** Proposed changes to protected paths, waiting for Apply or Reject. */
  proposals: ProposalReview;
  /** Agents' questions waiting for an answer (issue 28). */
  approvals: ApprovalPrompter;
  /** What each agent session did, and its documents. */
  timeline: AgentTimeline;
  timelineDocs: SessionTimelineDocuments;
  /** Connection questions of the egress policy waiting for an answer (issue 30). */
  egress: EgressQuestions;
  /** Open Connection Log's documents. */
  egressDocs: EgressLogDocuments;
  /** Run Doctor's document. */
  doctorDocs: DoctorDocuments;
}

export interface ToolboxCommand {
  id: string;
  run(services: CommandServices, ...args: unknown[]): unknown;
}
