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

/** One connection the container's proxy saw. */
export interface EgressLogEntry {
  /** When it was asked for (ms since the epoch). */
  at: number;
  host: string;
  port: number;
  /** How the container asked: HTTP CONNECT, a plain HTTP request, SOCKS5. */
  via: 'connect' | 'http' | 'socks';
  verdict: 'allowed' | 'denied';
  /** Why it was denied (the sentence the program was given), or which rule allowed it (`api.example.com:443 (folder)`). */
  reason: string;
  /** The address the host connected to, once it did. */
  address?: string;
  /** Bytes from the container to the destination, and back; grow while it is open. */
  bytesUp: number;
  bytesDown: number;
  /** When it ended; absent while it is open. */
  endedAt?: number;
}

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

/** Who asks the user (ui/egress.ts); the backend holds the connection meanwhile, up to EGRESS_LIMITS.askMs. */
export interface EgressPrompter {
  /** `signal` aborts when the connection gave up (closed by the program) or the time ran out: the question must go. */
  ask(question: EgressQuestion, signal: AbortSignal): Promise<EgressChoice>;
}
