/**
 * How one container's transports run, for Run Doctor (backend/doctor.ts): how its shims reach the
 * bridge and how this window reaches its session holder, each with why. Not measured yet: this
 * answers undefined (the doctor says "not measured yet") until the measurement lands here.
 */

/** The bridge as the container's shims reach it, and its session holder as the host reaches it. */
export interface TransportFacts {
  bridge: { mode: 'unix' | 'tcp' | 'none'; why: string };
  sessions: { mode: 'socket' | 'exec'; why: string };
}

/** The container's transports, or undefined while they are not measured. */
export async function transportFacts(containerName: string): Promise<TransportFacts | undefined> {
  void containerName;
  return undefined;
}
