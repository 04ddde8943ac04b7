/** A checked agent question as the bridge hands it to the editor (bridge/route.ts), for the UI's unit tests. */
import type { ApprovalRequest } from '../../extension/src/bridge/route';

let nextId = 1;

/** A Claude Code question to run `npm test` in a held session, asked now; `over` replaces fields. */
export function approvalRequest(over: Partial<ApprovalRequest> = {}): ApprovalRequest {
  return {
    id: `q${nextId++}`,
    container: 'toolbox-app-1234abcd',
    workspaceFolder: '/src/app',
    session: 's1',
    agent: 'claude',
    tool: 'Bash',
    subject: { kind: 'command', text: 'npm test' },
    canAllowForSession: true,
    truncated: false,
    retry: 0,
    receivedAt: Date.now(),
    ...over,
  };
}
