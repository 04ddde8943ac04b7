/** Tree item properties for the agents' questions (ui/views/treeItems/index.ts). */
import type { ApprovalRequest } from '../../../backend/api/editor';
import { approvalDescription, approvalTooltip, subjectPhrase } from '../../approvals/approvalText';
import { plainItem } from '../../plainText';
import { type ItemProps } from './containers';

/** The label of the Workspaces view's section of agent questions (shown only while one waits). */
export const APPROVALS_GROUP_LABEL = 'Agent questions';

/** The section at the top of the Workspaces view while agents wait for an answer (issue 28). */
export function approvalGroupItem(count: number): ItemProps {
  return {
    label: APPROVALS_GROUP_LABEL,
    description: `${count} waiting`,
    icon: { id: 'question', color: 'list.warningForeground' },
    contextValue: 'approvals',
    tooltip:
      `${count} question${count === 1 ? '' : 's'} from agents in Toolbox containers, waiting for your answer. ` +
      "Allow or Deny on a question's line, or answer it in the agent's terminal; unanswered, the agent asks there itself.",
  };
}

/**
 * One question: what the agent wants (the subject), who asks (`<container> · <agent> · <age>`), the
 * full question in the tooltip. `approval.session` when the agent can remember an allow for its
 * session (Allow for This Session is offered), else `approval`.
 */
export function approvalItem(request: ApprovalRequest, now: number): ItemProps {
  return plainItem({
    label: subjectPhrase(request),
    description: approvalDescription(request, now),
    icon: { id: 'question', color: 'list.warningForeground' },
    contextValue: request.canAllowForSession ? 'approval.session' : 'approval',
    tooltip: `${approvalTooltip(request)}\n\nClick to answer, or use Allow and Deny on this line.`,
  });
}
