/**
 * The egress policy, pure (issue 30, docs/decisions/0056-egress-through-a-host-proxy.md): the
 * rules a folder's container may connect by, and the verdict on one destination. The host's proxy
 * (bridge/egressProxy.ts) asks `decideDestination` before anything else, resolves the name on the
 * host, then `checkResolved` on the addresses before it connects to one of them.
 *
 * No I/O: the backend (backend/egress.ts) gathers the rules from the user's config, the folder's
 * remembered answers and its git remotes.
 */
import type { EGRESS_MODES } from '../contract/constants';

export type EgressMode = (typeof EGRESS_MODES)[number];

/** Where a rule comes from, for the log and the views (never a reason to trust it more). */
export type EgressRuleSource = 'builtin' | 'remote' | 'user' | 'folder' | 'project';

/**
 * One destination a container may reach: a host name (`api.example.com`), a suffix wildcard
 * (`*.example.com`: any name below it, not the name itself), or an IP literal (`10.0.0.5`,
 * `[fd00::1]`); with a port, only that port, else any. Names are lower case, without a trailing dot.
 */
export interface EgressRule {
  host: string;
  port?: number;
  source: EgressRuleSource;
}

/** What a container's proxy decides by. `open` never reaches the proxy: such a container has the engine's network. */
export interface EgressPolicy {
  mode: EgressMode;
  rules: readonly EgressRule[];
}

/** A destination as the client named it (CONNECT's authority, an absolute-form URL's host, SOCKS5's address). */
export interface EgressDestination {
  host: string;
  port: number;
}
