/**
 * The egress policy of each container this window opens (issue 30,
 * docs/decisions/0056-egress-through-a-host-proxy.md): its connection log and the counters the
 * views show. Serving the proxy for a container comes with the policy's wiring.
 */
import { EGRESS_LIMITS } from '../contract/constants';
import type { EgressLogEntry } from './api/egress';

export class EgressPolicies {
  /** By container name: its connection log, oldest first, at most EGRESS_LIMITS.logEntries. */
  private readonly logs = new Map<string, EgressLogEntry[]>();
  private readonly listeners = new Set<(container: string) => void>();

  egressLog(container: string): EgressLogEntry[] {
    return (this.logs.get(container) ?? []).map((e) => ({ ...e }));
  }

  onDidChangeEgress(listener: (container: string) => void): { dispose(): void } {
    this.listeners.add(listener);
    return { dispose: () => this.listeners.delete(listener) };
  }

  /** Adds an entry (the proxy keeps updating its byte counts and end until it closes). */
  protected record(container: string, entry: EgressLogEntry): void {
    const log = this.logs.get(container) ?? [];
    log.push(entry);
    if (log.length > EGRESS_LIMITS.logEntries) log.splice(0, log.length - EGRESS_LIMITS.logEntries);
    this.logs.set(container, log);
    this.changed(container);
  }

  protected changed(container: string): void {
    for (const l of this.listeners) l(container);
  }
}
