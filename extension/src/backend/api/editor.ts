/**
 * What the editor shows and answers for the bridge (agents' questions and events, proposals,
 * credential consent, the editor's own actions), and the Docker endpoint's children the views
 * list: the UI takes these types through backend/api, never from bridge/ or engine/ themselves
 * (docs/architecture.md; test/unit/layers.test.ts).
 */
export type {
  AgentEvent,
  AgentUsage,
  ApplyOutcome,
  ApprovalAnswer,
  ApprovalRequest,
  EditorActions,
  HookAgent,
  Proposal,
  ProposalAnswer,
  ToolSubject,
} from '../../bridge/route';
export type { ConsentAnswer, ConsentQuestion } from '../../bridge/credentialConsent';
export { GrantState } from '../../bridge/credentialGrants';
export type { DockerChildrenSummary, LeftBehind } from '../../engine/dockerEndpoint/children';
