import * as vscode from 'vscode';
import { sessionPickItem } from './agentTimeline';
import { plainText } from '../plainText';
import type { ToolboxCommand } from '../commands/toolboxCommand';

/** The session a command was run on: a session row of the Workspaces view (its node's timeline). */
function sessionOf(arg: unknown): { container: string; sessionId: string } | undefined {
  const t = arg !== null && typeof arg === 'object' ? (arg as { timeline?: unknown }).timeline : undefined;
  if (t === null || typeof t !== 'object') return undefined;
  const { container, sessionId } = t as { container?: unknown; sessionId?: unknown };
  return typeof container === 'string' && typeof sessionId === 'string' ? { container, sessionId } : undefined;
}

/**
 * What an agent session did, as a read-only document (ui/agents/sessionTimelineDocuments.ts): from a session's
 * row, or from the palette with a pick of the sessions this window heard from (latest first).
 */
export const showSessionTimeline: ToolboxCommand = {
  id: 'toolbox.showSessionTimeline',
  run: async (s, arg) => {
    let session = sessionOf(arg);
    if (session === undefined) {
      const sessions = s.timeline.list();
      if (sessions.length === 0) {
        void vscode.window.showInformationMessage(
          'No agent session has reported anything to this window yet (agents in Toolbox containers report what they do as they work).',
        );
        return;
      }
      const picked = await vscode.window.showQuickPick(
        sessions.map((t) => {
          const item = sessionPickItem(t);
          return {
            label: plainText(item.label, 'iconLabel'),
            description: plainText(item.description, 'iconLabel'),
            detail: plainText(item.detail, 'iconLabel'),
            session: { container: t.container, sessionId: t.sessionId },
          };
        }),
        { placeHolder: 'Show the timeline of which agent session?', matchOnDescription: true },
      );
      if (picked === undefined) return;
      session = picked.session;
    }
    await s.timelineDocs.show(session.container, session.sessionId);
  },
};
