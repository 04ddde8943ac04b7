/**
 * /approval and /agent-event: what the agent hook in the container (images/runtime/toolbox-agent-hook,
 * run by Claude Code and Codex on their hook events) sends
 * (docs/decisions/0050-approvals-over-the-bridge.md).
 *
 * /approval holds the request open while the editor asks the user (EditorActions.askApproval)
 * and answers allow, deny or ask. The container is named by the bridge token that reached this
 * workspace, never by the body; the session id in the body is a label inside that container. The
 * question is alive exactly as long as the hook's connection: the hook hanging up (the user
 * answered in the terminal, the agent was interrupted) takes it out of the inbox. Nothing here
 * ever answers "allow" on its own: no editor, a full inbox or a time-out is "ask", and the agent's
 * own prompt takes over.
 *
 * /agent-event takes one timeline entry (a command run, a file written, a stop, usage) and answers
 * 204 at once.
 */
import { randomBytes } from 'node:crypto';
import { z } from 'zod';
import { AGENT_HOOK_LIMITS, HOOK_AGENTS } from '../contract/agentHook';
import { BODY_LIMITS, ROUTES, RUN_LIMITS_MS } from '../contract/shims';
import { describeToolInput, oneLine, timelineKind, type HookInput } from '../plan/agentHooks';
import {
  parseBody,
  type AgentEvent,
  type AgentUsage,
  type ApprovalRequest,
  type HookOrigin,
  type Route,
  type WorkspaceBinding,
} from './route';

const text = z.string().max(AGENT_HOOK_LIMITS.textChars);
/** A tool as the agents name it (Bash, Write, mcp__server__tool, …). */
const toolName = z.string().regex(/^[A-Za-z0-9_.:-]{1,128}$/);
const input = z
  .record(z.string().regex(/^[A-Za-z0-9_.-]{1,64}$/), z.union([text, z.number().finite(), z.boolean()]))
  .refine((o) => Object.keys(o).length <= AGENT_HOOK_LIMITS.inputKeys, `at most ${AGENT_HOOK_LIMITS.inputKeys} keys`);

/** Fields both routes share: who asks, from which session. */
const origin = {
  agent: z.enum(HOOK_AGENTS),
  /** The holder's id of the session (ENV.sessionId). */
  session: z
    .string()
    .regex(/^s[0-9]{1,9}$/)
    .optional(),
  agent_session: z
    .string()
    .regex(/^[A-Za-z0-9._:-]{1,128}$/)
    .optional(),
  truncated: z.boolean().optional(),
};

const approvalBody = z.strictObject({
  ...origin,
  tool: toolName,
  input,
  cwd: text.optional(),
  session_rule: z.boolean().optional(),
  retry: z.number().int().min(0).max(100_000).optional(),
});

const count = z.number().int().min(0).max(1e15);
const usage = z.strictObject({
  input_tokens: count,
  output_tokens: count,
  cache_read_tokens: count.optional(),
  cache_write_tokens: count.optional(),
  cost_usd: z.number().finite().min(0).max(1e6).optional(),
});

const EVENTS = ['PostToolUse', 'Notification', 'Stop', 'SubagentStop', 'SessionStart', 'SessionEnd', 'UserPromptSubmit'] as const;
const eventBody = z.strictObject({
  ...origin,
  event: z.enum(EVENTS),
  tool: toolName.optional(),
  input: input.optional(),
  message: text.optional(),
  reason: z.string().max(128).optional(),
  usage: usage.optional(),
  /** When the agent fired the event (ms since the epoch, the container's clock, which is the host's). */
  at: z.number().int().optional(),
});

/** How far an event's own time may be from the bridge's before the bridge's is taken instead. */
const CLOCK_SLACK_MS = 60_000;

function originOf(body: z.infer<typeof eventBody> | z.infer<typeof approvalBody>, workspace: WorkspaceBinding): HookOrigin {
  return {
    container: workspace.key,
    workspaceFolder: workspace.workspaceFolder,
    agent: body.agent,
    ...(body.session !== undefined ? { session: body.session } : {}),
    ...(body.agent_session !== undefined ? { agentSession: body.agent_session } : {}),
  };
}

/** The answer when nobody in this window can take the question: the agent's own prompt. */
const NO_EDITOR = { decision: 'ask', reason: 'This VS Code window does not take agent questions.' } as const;

/** The hook asks again on a 503 (within AGENT_HOOK_LIMITS.reconnectS), as when the bridge went away. */
const WITHDRAWN = 'The VS Code window that held this question is going away; ask again.';

export const approvalRoute: Route = {
  path: ROUTES.approval,
  bodyLimit: BODY_LIMITS.approval,
  bucket: 'agent',
  runLimitMs: RUN_LIMITS_MS.approval,
  logDetail: true,
  async handle(body, workspace, deps, signal) {
    const parsed = parseBody(approvalBody, body);
    if ('refusal' in parsed) return parsed.refusal;
    const b = parsed.value;
    const hookInput: HookInput = b.input;
    const description = typeof hookInput.description === 'string' ? oneLine(hookInput.description, 500) : '';
    const request: ApprovalRequest = {
      ...originOf(b, workspace),
      id: randomBytes(12).toString('base64url'),
      tool: b.tool,
      subject: describeToolInput(b.tool, hookInput),
      ...(description !== '' ? { reason: description } : {}),
      ...(b.cwd !== undefined ? { cwd: oneLine(b.cwd) } : {}),
      canAllowForSession: b.agent === 'claude' && b.session_rule === true,
      truncated: b.truncated === true,
      retry: b.retry ?? 0,
      receivedAt: Date.now(),
    };
    if (deps.askApproval === undefined) return { status: 200, json: { ...NO_EDITOR } };
    const answer = await deps.askApproval(request, signal);
    if (answer.withdrawn === true) return { status: 503, message: WITHDRAWN };
    const scope = answer.decision === 'allow' && answer.scope === 'session' && request.canAllowForSession ? 'session' : 'once';
    return {
      status: 200,
      json: {
        decision: answer.decision,
        ...(answer.decision === 'allow' ? { scope } : {}),
        ...(answer.reason !== undefined ? { reason: oneLine(answer.reason, 500) } : {}),
      },
    };
  },
};

function usageOf(u: z.infer<typeof usage>): AgentUsage {
  return {
    inputTokens: u.input_tokens,
    outputTokens: u.output_tokens,
    cacheReadTokens: u.cache_read_tokens ?? 0,
    cacheWriteTokens: u.cache_write_tokens ?? 0,
    ...(u.cost_usd !== undefined ? { costUsd: u.cost_usd } : {}),
  };
}

/** The timeline entry for a checked event body. */
export function timelineEntry(b: z.infer<typeof eventBody>, workspace: WorkspaceBinding, at: number): AgentEvent {
  const base = { ...originOf(b, workspace), at, ...(b.usage !== undefined ? { usage: usageOf(b.usage) } : {}) };
  switch (b.event) {
    case 'PostToolUse': {
      const tool = b.tool ?? 'tool';
      const hookInput: HookInput = b.input ?? {};
      return { ...base, kind: timelineKind(tool, hookInput), tool, text: describeToolInput(tool, hookInput).text };
    }
    case 'Notification':
      return { ...base, kind: 'notification', text: oneLine(b.message ?? 'asked for attention') };
    case 'Stop':
    case 'SubagentStop':
      return { ...base, kind: 'stop', text: b.event === 'Stop' ? 'finished its turn' : 'a sub-agent finished' };
    case 'SessionStart':
      return { ...base, kind: 'session-start', text: oneLine(`started${b.reason ? ` (${b.reason})` : ''}`) };
    case 'SessionEnd':
      return { ...base, kind: 'session-end', text: oneLine(`ended${b.reason ? ` (${b.reason})` : ''}`) };
    case 'UserPromptSubmit':
      // Never the prompt itself: only that the user gave the agent a new one.
      return { ...base, kind: 'prompt', text: 'a new prompt' };
  }
}

export const agentEventRoute: Route = {
  path: ROUTES.agentEvent,
  bodyLimit: BODY_LIMITS.agentEvent,
  bucket: 'agent',
  runLimitMs: RUN_LIMITS_MS.agentEvent,
  logDetail: true,
  handle(body, workspace, deps) {
    const parsed = parseBody(eventBody, body);
    if ('refusal' in parsed) return Promise.resolve(parsed.refusal);
    // The hook reports from a detached child, so reports can arrive out of order (a Stop before the
    // last PostToolUse): the entry keeps the time the agent fired it, when it is believable.
    const now = Date.now();
    const at = parsed.value.at;
    deps.agentEvent?.(timelineEntry(parsed.value, workspace, at !== undefined && Math.abs(at - now) <= CLOCK_SLACK_MS ? at : now));
    return Promise.resolve({ status: 204 });
  },
};
