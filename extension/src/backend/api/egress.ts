/**
 * The egress policy as the UI sees it (issue 30, docs/decisions/0056-egress-through-a-host-proxy.md):
 * the question a connection in `ask` mode waits on, the answers, the connection log and the
 * container's summary. Every host name here came from a container: the UI shows it as plain text.
 */
import type { EgressMode } from '../../plan/egress';

/** A connection held while the user is asked (EditorActions.askEgress). */
export interface EgressQuestion {
  /** Unique in the window: the same question is answered once. */
  id: string;
  /** The container that asks (its name). */
  container: string;
  /** The folder whose policy applies; "Allow for This Folder" writes the rule for it. */
  folder: string;
  /** Lower case, as the container named it (a name or an IP literal). */
  host: string;
  port: number;
}

/**
 * The user's answer: `once` lets the connections waiting on this question through (the next one
 * asks again), `folder` writes `host:port` into the folder's rules (toolbox.egressForFolder, User
 * settings) and lets them through, `deny` refuses them. No answer in time is `deny`.
 */
export type EgressChoice = 'once' | 'folder' | 'deny';

/** One connection the container's proxy saw (its shape is the proxy's: plan/egress.ts). */
export type { EgressLogEntry } from '../../plan/egress';

/** A container's policy and counters, for its row and its posture row. */
export interface EgressSummary {
  mode: EgressMode;
  /** The container was created under a policy (LABELS.egress): false for `open` or one created before the policy was set. */
  enforced: boolean;
  /** Served by this window now: its connections are logged here. */
  served: boolean;
  allowed: number;
  denied: number;
  /** Questions waiting for the user now. */
  asking: number;
}

/** Who asks the user (ui/egress/egressQuestions.ts); the backend holds the connection meanwhile, up to EGRESS_LIMITS.askMs. */
export interface EgressPrompter {
  /** `signal` aborts when the connection gave up (closed by the program) or the time ran out: the question must go. */
  ask(question: EgressQuestion, signal: AbortSignal): Promise<EgressChoice>;
}
