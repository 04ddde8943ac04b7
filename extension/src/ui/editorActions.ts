/**
 * What the bridge does in this window (bridge/route.ts `EditorActions`): /edit opens a file or an
 * untitled editor, /open a URL, /propose a diff, /approval a question, /agent-event the timeline.
 */
import * as vscode from 'vscode';
import type { EditorActions } from '../backend/api/editor';
import type { AgentTimeline } from './agents/agentTimeline';
import type { ApprovalInbox } from './approvals/approvalInbox';
import type { ApprovalPrompter } from './approvals/approvalPrompter';
import type { ProposalReview } from './approvals/proposalReview';

export function editorActions(deps: {
  proposals: ProposalReview;
  approvals: ApprovalPrompter;
  timeline: AgentTimeline;
  inbox: ApprovalInbox;
}): EditorActions {
  const { proposals, approvals, timeline, inbox } = deps;
  return {
    openInEditor,
    openUntitled,
    // False when the user cancels VS Code's "open the external website?" question.
    openExternal: async (url) => vscode.env.openExternal(vscode.Uri.parse(url, true)),
    // The bridge's /propose: a diff with Apply and Reject; nothing is written without the click.
    propose: (proposal) => proposals.propose(proposal),
    // The bridge's /approval: waits for Allow or Deny here; never "allow" without the user's click.
    askApproval: (request, signal) => approvals.ask(request, signal),
    // The bridge's /agent-event: the session timeline and usage.
    // What the agent did next also tells a question answered in its terminal (ApprovalInbox.leftBehind).
    agentEvent: (event) => {
      timeline.record(event);
      inbox.leftBehind(event);
    },
  };
}

/** The bridge's /edit: a file opens in a tab, a folder is revealed in the Explorer. */
async function openInEditor(hostPath: string, isDirectory: boolean): Promise<void> {
  const uri = vscode.Uri.file(hostPath);
  if (isDirectory) await vscode.commands.executeCommand('revealInExplorer', uri);
  else await vscode.window.showTextDocument(uri, { preview: false });
}

/**
 * The bridge's /edit for a file that does not exist yet: an untitled editor bound to that path,
 * as desktop `code new.txt` does. Nothing is written until the user saves.
 */
async function openUntitled(hostPath: string): Promise<void> {
  const document = await vscode.workspace.openTextDocument(vscode.Uri.file(hostPath).with({ scheme: 'untitled' }));
  await vscode.window.showTextDocument(document, { preview: false });
}
