/**
 * What a route is, what it gets and what it answers. Routes never see HTTP: the server runs the
 * gate (Host, method, token, bucket, body size, JSON) and hands them a parsed body.
 */
import type { z } from 'zod';
import type { APPROVAL_DECISIONS, HOOK_AGENTS } from '../contract/agentHook';
import type { CredentialRequestInfo, CredentialVerdict } from './credentialConsent';
import type { BucketRate, TokenBucket } from './gate';

export type BucketName = 'shared' | 'credential' | 'sound' | 'propose' | 'agent';
export type BucketRates = Record<BucketName, BucketRate>;

/** One registered workspace as the routes see it. */
export interface WorkspaceBinding {
  /** The container name. */
  key: string;
  token: string;
  workspaceFolder: string;
  /** Host paths besides the workspace folder that /edit may open (the container's bind-mount sources). */
  mountsRoots: string[];
  /**
   * Host paths the container can write besides the workspace and mountsRoots (its read-write
   * mount sources, when known): /credential never runs git config from inside them.
   */
  writableRoots?: string[];
  proximoEnabled: boolean;
  /** The host dirs behind the container's agent homes: the only HOME/CODEX_HOME proximo skill gets. */
  defaultAgentHome: string;
  defaultCodexHome: string;
  buckets: Record<BucketName, TokenBucket>;
  /** Requests each route is handling right now, by route path (the server's concurrency cap). */
  inFlight: Map<string, number>;
}

/** The editor actions, injected by the UI layer (the bridge never imports vscode). */
export interface EditorActions {
  /** Opens a file in an editor tab, or reveals a folder, in this window. */
  openInEditor(hostPath: string, isDirectory: boolean): Promise<void> | void;
  /**
   * Opens a new, unsaved editor bound to `hostPath`, a file that does not exist yet (an untitled
   * document with that path): nothing is written until the user saves.
   */
  openUntitled(hostPath: string): Promise<void> | void;
  /**
   * Opens a URL in the host's browser. May wait for the user (VS Code asks before opening a site
   * it does not trust); `false` means the user cancelled, anything else that it was opened.
   */
  openExternal(url: string): Promise<boolean | void> | boolean | void;
  /**
   * /propose: shows a checked proposal to the user (a diff with Apply and Reject), answering at
   * once whether it was taken; nothing is written unless the user applies it. Absent: the route
   * refuses every proposal.
   */
  propose?(proposal: Proposal): Promise<ProposalAnswer> | ProposalAnswer;
  /**
   * /approval: puts an agent's question in front of the user and resolves with the answer.
   * `signal` aborts when the hook hangs up (the user answered in the terminal, the agent was
   * interrupted): the question must leave the inbox then. Never resolves "allow" by itself: a
   * time-out or a closed inbox is "ask". Absent: every question is answered "ask" at once.
   */
  askApproval?(request: ApprovalRequest, signal: AbortSignal): Promise<ApprovalAnswer>;
  /** /agent-event: one checked entry for the session timeline. Absent: events are dropped. */
  agentEvent?(event: AgentEvent): void;
}

export type HookAgent = (typeof HOOK_AGENTS)[number];

/** What a question or an event is about, in words (plan/agentHooks.ts describes the tool input). */
export interface ToolSubject {
  /** command: a shell command; file: a path written or read; fetch: a URL; network: a host; tool: anything else. */
  kind: 'command' | 'file' | 'fetch' | 'network' | 'tool';
  /** One line, control characters replaced, at most AGENT_HOOK_LIMITS.textChars. */
  text: string;
}

/** Where a question or an event comes from: the container (by its bridge token) and the session it names. */
export interface HookOrigin {
  /** The container name, from the bridge token: never from the body. */
  container: string;
  /** The host workspace folder of that container. */
  workspaceFolder: string;
  /** The held session the hook says it runs in (ENV.sessionId, `s<n>`): a label inside this container only. */
  session?: string;
  /** The agent's own session id, as the agent gave it to the hook. */
  agentSession?: string;
  agent: HookAgent;
}

/** A checked question, as the editor gets it. */
export interface ApprovalRequest extends HookOrigin {
  /** Made by the bridge for this request (random); the container never sees or names it. */
  id: string;
  /** The tool as the agent names it (Bash, Write, …). */
  tool: string;
  subject: ToolSubject;
  /** The agent's own words for why (a description the tool input carried), when it gave any. */
  reason?: string;
  cwd?: string;
  /** The agent can remember an allow for the rest of its session (Claude Code with rule suggestions). */
  canAllowForSession: boolean;
  /** The hook cut something it sent (a long command): the text ends with an ellipsis. */
  truncated: boolean;
  /** How many times the hook asked again after losing the bridge (a reload); 0 the first time. */
  retry: number;
  receivedAt: number;
}

/** The user's answer, as /approval returns it to the hook. */
export interface ApprovalAnswer {
  decision: (typeof APPROVAL_DECISIONS)[number];
  /** With allow: remember it for the agent's session (only when canAllowForSession). */
  scope?: 'once' | 'session';
  /** Said to the agent with deny, or why the answer is "ask". */
  reason?: string;
  /**
   * With ask: the window is going away (a reload, a close), so nothing is answered; the hook is
   * told to ask again, and the next window (the same one reloaded) shows the question anew.
   */
  withdrawn?: true;
}

/** Token counts an agent reported for a session (its transcript, added up by the hook). */
export interface AgentUsage {
  inputTokens: number;
  outputTokens: number;
  cacheReadTokens: number;
  cacheWriteTokens: number;
  /** Only when the agent itself reported a cost. */
  costUsd?: number;
}

/** One checked timeline entry. */
export interface AgentEvent extends HookOrigin {
  at: number;
  kind:
    | 'command'
    | 'file'
    | 'git-commit'
    | 'git-push'
    | 'pr-create'
    | 'tool'
    | 'notification'
    | 'stop'
    | 'session-start'
    | 'session-end'
    | 'prompt';
  /** The tool of a finished tool call (PostToolUse). */
  tool?: string;
  /** One line, control characters replaced. */
  text: string;
  /** The session's totals so far (Stop, SessionEnd), replacing earlier ones. */
  usage?: AgentUsage;
}

/** A checked proposal, as the editor gets it. */
export interface Proposal {
  /** The container that sent it. */
  container: string;
  /** The host workspace folder, resolved. */
  workspaceFolder: string;
  /** Relative to the workspace folder (plan/proposals.ts checked it). */
  path: string;
  /** The host path it would write. */
  hostPath: string;
  /** The proposed text. */
  content: string;
  /** The host file's text now ('' when there is none), for the diff; read with O_NOFOLLOW, bounded. */
  current(): Promise<string>;
  /** Writes the content to the host file, checking the path again; rejects with the reason it did not. */
  apply(): Promise<ApplyOutcome>;
}

/** What Apply did: wrote over the file in place, created it, or replaced the protection's empty placeholder folder. */
export type ApplyOutcome = 'updated' | 'created' | 'replaced-placeholder';

/** The editor's answer: taken for review, or refused (too many waiting, one for that path waiting). */
export type ProposalAnswer = { accepted: true } | { accepted: false; reason: string };

/** What /credential asks before host git runs (credentialConsent.ts's CredentialAuthority). */
export interface CredentialGate {
  decide(request: CredentialRequestInfo): Promise<CredentialVerdict>;
  reportUnsafeConfig(request: CredentialRequestInfo, reason: string): void;
}

/**
 * /open's login callbacks (issue 29): forwards the host's 127.0.0.1:<port> into the container's
 * own loopback before the browser opens a URL naming that callback. Never rejects (a refusal is
 * told to the user by whoever forwards); `release` takes it back when the user cancels the URL.
 */
export type LoginCallbackForwarder = (container: string, port: number) => Promise<{ release(): Promise<void> } | undefined>;

export interface RouteDeps extends EditorActions {
  credentials: CredentialGate;
  /** Absent: /open forwards nothing (the URL still opens). */
  forwardLoginCallback?: LoginCallbackForwarder;
  /** How long /open waits for the user's answer; default OPEN_LIMITS_MS.confirm (tests shorten it). */
  openConfirmMs?: number;
  /** The host home (default proximo lookup dirs, cwd of host commands). */
  home: string;
  /** Environment host commands inherit (PATH, HOME, git config). */
  env: NodeJS.ProcessEnv;
  /** Dirs searched for proximo after PATH; default /opt/homebrew/bin, /usr/local/bin, ~/go/bin. */
  proximoFallbackDirs?: string[];
}

export type RouteResult =
  { status: 200; json: Record<string, unknown> } | { status: 204 } | { status: 400 | 403 | 502 | 503; message: string };

export interface Route {
  path: string;
  bodyLimit: number;
  bucket: BucketName;
  /** How long the host side may take; the response deadline adds the write timeout. */
  runLimitMs: number;
  /** False for routes whose refusals could echo secrets into the log (/credential). */
  logDetail: boolean;
  /** `signal` aborts when the client hangs up before the answer is written. */
  handle(body: unknown, workspace: WorkspaceBinding, deps: RouteDeps, signal: AbortSignal): Promise<RouteResult>;
}

export const refused = (message: string): RouteResult => ({ status: 400, message });
export const failed = (message: string): RouteResult => ({ status: 502, message });
/** A well-formed request the host will not serve (the user's consent, the host's policy). */
export const forbidden = (message: string): RouteResult => ({ status: 403, message });

/** One sentence naming the first thing wrong with a request body. */
function describeIssue(error: z.ZodError): string {
  const issue = error.issues[0];
  if (issue === undefined) return 'the request body is not valid';
  if (issue.code === 'unrecognized_keys') {
    const names = issue.keys.map((k) => `"${k}"`).join(', ');
    return `unknown field ${names} (this bridge does not accept it)`;
  }
  if (issue.path.length === 0) return `the request body must be a JSON object (${issue.message})`;
  return `field "${issue.path.join('.')}": ${issue.message}`;
}

/** Validates a body against a strict schema: a value, or the 400 to answer. */
export function parseBody<T>(schema: z.ZodType<T>, body: unknown): { value: T } | { refusal: RouteResult } {
  const result = schema.safeParse(body);
  return result.success ? { value: result.data } : { refusal: refused(describeIssue(result.error)) };
}

/** What withDeadline rejects with when the time is up (the work itself may still finish later). */
export class DeadlineError extends Error {}

/** Awaits an injected callback, failing with a DeadlineError after `ms`. */
export async function withDeadline<T>(work: Promise<T> | T, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new DeadlineError(`${what} did not finish within ${ms / 1000} s`)), ms);
  });
  try {
    return await Promise.race([Promise.resolve(work), timeout]);
  } finally {
    clearTimeout(timer);
  }
}
