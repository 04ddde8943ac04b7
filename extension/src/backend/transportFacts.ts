/**
 * How one container's transports run, for Run Doctor (backend/doctor/): how its shims reach the
 * bridge (measured by a probe in the container, engine/bridgePath.ts) and how this window reaches
 * its session holder (the transport a shell of this window used, else what would be used), each
 * with why (docs/decisions/0058-forced-fallback-transports.md).
 */
import type Docker from 'dockerode';
import { CONTAINER } from '../contract/upstream';
import { SESSION_PROTOCOL } from '../contract/image';
import { SETTINGS } from '../contract/manifest';
import { probeBridgePath } from '../engine/bridgePath';

/** The bridge as the container's shims reach it, and its session holder as the host reaches it. */
export interface TransportFacts {
  bridge: { mode: 'unix' | 'tcp' | 'none'; why: string };
  sessions: { mode: 'socket' | 'exec'; why: string };
}

export interface TransportFactsDeps {
  docker: () => Promise<Docker>;
  /** How a shell of this window reached the container's holder (backend/sessions.ts holderPath). */
  holderPath: (containerId: string) => TransportFacts['sessions'] | undefined;
  /** toolbox.transport.sessions (User settings). */
  sessionsTransport: () => 'auto' | 'exec';
  /** A unix socket something listens on (backend/doctor/ socketAnswers). */
  socketAnswers: (path: string) => Promise<boolean>;
}

/** The measurement, for one running container as its inspect shows it (the Doctor's listing has it). */
export function transportFactsFor(deps: TransportFactsDeps): (container: Docker.ContainerInspectInfo) => Promise<TransportFacts> {
  return async (info) => {
    const docker = await deps.docker();
    const [bridge, sessions] = await Promise.all([probeBridgePath(docker, info.Id, info), holderPath(deps, info)]);
    return { bridge, sessions };
  };
}

async function holderPath(deps: TransportFactsDeps, info: Docker.ContainerInspectInfo): Promise<TransportFacts['sessions']> {
  const used = deps.holderPath(info.Id);
  if (used) return used;
  if (deps.sessionsTransport() === 'exec') return { mode: 'exec', why: `forced by the User setting ${SETTINGS.sessionsTransport}` };
  const runDir = (info.Mounts ?? []).find((m) => m.Destination === CONTAINER.bridgeRunDir)?.Source;
  if (!runDir) return { mode: 'exec', why: 'the container has no bridge run dir mounted, where the holder’s socket would be' };
  if (await deps.socketAnswers(`${runDir}/${SESSION_PROTOCOL.socket}`)) {
    return {
      mode: 'socket',
      why: 'the holder answers on its socket in the bridge run dir, from this host (no shell of this window attached yet)',
    };
  }
  return {
    mode: 'exec',
    why: "the holder's socket in the bridge run dir does not answer from this host (no holder yet, a remote engine, or a file sharing that cannot pass a socket)",
  };
}
