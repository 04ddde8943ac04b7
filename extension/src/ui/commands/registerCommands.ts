/** The single registration point of every Toolbox command. */
import * as vscode from 'vscode';
import { attachShell, endShell } from '../shells/heldShellCommands';
import { driftActions } from '../containers/driftActions';
import { focusTerminal, startClaudeCode, startCodex } from '../agents/agentCommands';
import { manageCredentialGrants } from '../approvals/manageCredentialGrants';
import { openNamedShell } from '../shells/openNamedShell';
import { openShell, openShellPeerOff, openShellPeerOn } from '../shells/openShell';
import { openShellWithPorts } from '../shells/openShellWithPorts';
import { openShellWithProfile } from '../shells/openShellWithProfile';
import { openPortInBrowser } from '../containers/openPortInBrowser';
import { rebuildRuntimeImage } from '../engines/rebuildRuntimeImage';
import { recreateContainer } from '../containers/recreateContainer';
import { refreshCommand } from '../views/refreshCommand';
import { showLog } from './showLog';
import { showResolvedConfig } from '../config/showResolvedConfig';
import { selectEngine } from '../engines/selectEngine';
import { removeLeftBehindCommand } from '../containers/removeLeftBehind';
import { stopAllCommand } from '../containers/stopAll';
import { stopContainerCommand } from '../containers/stopContainer';
import { togglePeerMessaging } from '../config/togglePeerMessaging';
import { turnOffReach } from '../config/turnOffReach';
import { newAgentWorktree } from '../worktrees/newAgentWorktree';
import { openAgentWorktree, openAgentWorktreeFolder } from '../worktrees/openAgentWorktree';
import { removeAgentWorktree } from '../worktrees/removeAgentWorktree';
import { syncAgentWorktree } from '../worktrees/syncAgentWorktree';
import { pruneAgentWorktrees } from '../worktrees/pruneAgentWorktrees';
import { compareAgentWorktree } from '../worktrees/compareAgentWorktree';
import { openRefusedGitFile } from '../worktrees/openRefusedGitFile';
import { applyProposal, rejectProposal, reviewProposals } from '../approvals/proposalCommands';
import { approvalAllow, approvalAllowForSession, approvalDeny, approvalOpenTerminal, showApprovals } from '../approvals/approvalCommands';
import { showSessionTimeline } from '../agents/showSessionTimeline';
import { showEgressQuestions } from '../egress/showEgressQuestions';
import { showEgressLog } from '../egress/showEgressLog';
import { forwardLoginPort } from '../loginForwards/forwardLoginPort';
import { stopLoginForward } from '../loginForwards/stopLoginForward';
import { runDoctor } from '../doctor/runDoctor';
import { copyDoctorReport } from '../doctor/copyDoctorReport';
import type { CommandServices, ToolboxCommand } from './toolboxCommand';
import { errorText } from '../../contract/errors';
import { showEngineError } from '../engines/showEngineError';

export const COMMANDS: readonly ToolboxCommand[] = [
  openShell,
  openShellPeerOff,
  openShellPeerOn,
  openNamedShell,
  openShellWithPorts,
  openShellWithProfile,
  openPortInBrowser,
  stopContainerCommand,
  stopAllCommand,
  removeLeftBehindCommand,
  recreateContainer,
  togglePeerMessaging,
  refreshCommand,
  showLog,
  driftActions,
  attachShell,
  endShell,
  manageCredentialGrants,
  turnOffReach,
  rebuildRuntimeImage,
  showResolvedConfig,
  newAgentWorktree,
  openAgentWorktree,
  removeAgentWorktree,
  syncAgentWorktree,
  pruneAgentWorktrees,
  compareAgentWorktree,
  openAgentWorktreeFolder,
  openRefusedGitFile,
  focusTerminal,
  startClaudeCode,
  startCodex,
  selectEngine,
  applyProposal,
  rejectProposal,
  reviewProposals,
  approvalAllow,
  approvalDeny,
  approvalAllowForSession,
  approvalOpenTerminal,
  showApprovals,
  showSessionTimeline,
  showEgressQuestions,
  showEgressLog,
  forwardLoginPort,
  stopLoginForward,
  runDoctor,
  copyDoctorReport,
];

export function registerCommands(services: CommandServices): vscode.Disposable[] {
  return COMMANDS.map((c) =>
    vscode.commands.registerCommand(c.id, async (...args: unknown[]) => {
      try {
        return await c.run(services, ...args);
      } catch (err) {
        services.log.error(`${c.id}: ${errorText(err)}`);
        void showEngineError(err, services.log);
        return undefined;
      }
    }),
  );
}
