/**
 * The contract with the agent hook (images/runtime/toolbox-agent-hook) and the agents' settings
 * that run it (images/runtime/claude-managed-settings.json, codex-hooks.json), which call the
 * bridge's /approval and /agent-event routes (ROUTES in shims.ts). The contract test
 * (test/unit/contract.test.ts) holds the hook and the settings to these values.
 */

/**
 * The agent hook (images/runtime/toolbox-agent-hook) and the two routes it calls
 * (docs/decisions/0050-approvals-over-the-bridge.md). Times in milliseconds unless named _S.
 */
export const AGENT_HOOK_LIMITS = {
  /** Characters of a command, path, URL or description the hook sends; the bridge refuses more. */
  textChars: 4096,
  /** Keys of a tool input object the hook sends (string, number and boolean values only). */
  inputKeys: 16,
  /** Requests one container may have waiting for the user at once; the next is answered "ask". */
  pendingPerContainer: 16,
  /** Requests waiting in one window at once, every container together. */
  pendingTotal: 64,
  /** Default time the editor waits for the user before the agent's own prompt takes over (toolbox.approvals.timeoutSeconds). */
  defaultTimeoutS: 300,
  /** The longest a question may wait; the setting is clamped to it and the hook gives up past it. */
  maxTimeoutS: 3600,
  /** How long the hook keeps trying to reach a bridge that went away (a reload) before it says "ask". */
  reconnectS: 30,
  /** Timeline entries kept per session, and sessions kept per window (the oldest ended one goes first). */
  timelinePerSession: 200,
  timelineSessions: 64,
  /** The most of a transcript the hook reads to add up usage. */
  transcriptBytes: 64 * 1024 * 1024,
} as const;

/** The agents whose hooks the runtime image installs, as the hook names them on the wire. */
export const HOOK_AGENTS = ['claude', 'codex'] as const;

/** The hook events the runtime image's settings subscribe to, per agent (images/runtime/*-hooks.json). */
export const HOOK_EVENTS = {
  approval: 'PermissionRequest',
  /**
   * UserPromptSubmit carries nothing of the prompt: it says the agent is back at its own prompt, so
   * a question still in the inbox from before was answered in the terminal.
   */
  timeline: ['PostToolUse', 'Notification', 'Stop', 'SessionStart', 'SessionEnd', 'UserPromptSubmit'],
  /**
   * The events whose hook Claude Code waits for. Stop too: at the end of a one-shot turn
   * (`claude -p`) it ends the async hooks still running, and the hook returns at once anyway (its
   * report goes from a detached child).
   */
  sync: ['PermissionRequest', 'Stop'],
  /** Codex has no Notification or SessionEnd hook; its hooks run synchronously (it skips async ones). */
  codex: ['PermissionRequest', 'PostToolUse', 'SessionStart', 'Stop', 'UserPromptSubmit'],
} as const;

/** The user's answer to an agent's question, as /approval returns it to the hook. */
export const APPROVAL_DECISIONS = ['allow', 'deny', 'ask'] as const;
