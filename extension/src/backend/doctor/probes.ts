/**
 * What Run Doctor's fact gatherers (backend/doctor/) share: the backend parts they read with
 * (DoctorDeps) and their time bounds (DOCTOR_LIMITS), a probe bounded in time and its answer or
 * why there is none, and whether a unix socket answers.
 */
import type Docker from 'dockerode';
import type * as vscode from 'vscode';
import type { HostFacts, ObjectNames } from '../../contract/types';
import { connectOutcome } from '../../bridge/sweep';
import { engineMessage } from '../../engine/errors';
import type { Read } from '../../plan/doctor';
import type { EngineConnector } from '../connection';
import type { EgressPolicies } from '../egress';
import type { FolderConfig } from '../folderConfig';
import type { RuntimeImages } from '../images';
import type { BackendSettings } from '../settings';
import type { ShellOpener } from '../shells';
import type { TransportFacts } from '../transportFacts';

/**
 * Bounds of Run Doctor's probes (backend/doctor/), in ms: a probe that takes longer is a
 * warning line saying so, never a wait. `connectMs` covers an ssh:// engine's own 10 s connect;
 * `planMs` a folder's plan, which may ask the host's proximo for its routes (10 s at most);
 * `socketMs` a connect to a socket this window should be serving.
 */
export const DOCTOR_LIMITS = {
  connectMs: 12_000,
  probeMs: 5_000,
  planMs: 15_000,
  socketMs: 1_000,
} as const;

export interface DoctorDeps {
  names: ObjectNames;
  host: () => HostFacts;
  settings: Pick<BackendSettings, 'dockerEndpoint' | 'pullRuntimeImage' | 'vscodeGitOpeners' | 'hostTools'>;
  connector: Pick<EngineConnector, 'connected' | 'locateOrLocal'>;
  config: Pick<FolderConfig, 'peerSetting'>;
  shells: Pick<ShellOpener, 'prepare'>;
  images: Pick<RuntimeImages, 'pullRef'>;
  egress: Pick<EgressPolicies, 'mode'>;
  log: Pick<vscode.LogOutputChannel, 'info' | 'warn'>;
  /** How a container's transports run (backend/transportFacts.ts); none: not measured. */
  transports?: (container: Docker.ContainerInspectInfo) => Promise<TransportFacts>;
  /** Tests shorten the bounds. */
  limits?: Partial<typeof DOCTOR_LIMITS>;
}

/** What each group of facts reads with: the backend's parts and the bounds (Doctor's). */
export interface DoctorContext {
  readonly deps: DoctorDeps;
  readonly limits: typeof DOCTOR_LIMITS;
}

/** A probe that did not answer in time. */
export class ProbeTimeout extends Error {
  constructor(
    readonly what: string,
    readonly ms: number,
  ) {
    super(`${what} did not answer within ${Math.round(ms / 100) / 10} s`);
  }
}

/** `work`, or a ProbeTimeout after `ms`; the timer holds no process. */
export function bounded<T>(what: string, ms: number, work: Promise<T>): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new ProbeTimeout(what, ms)), ms);
    timer.unref?.();
  });
  return Promise.race([work, timeout]).finally(() => clearTimeout(timer));
}

/** A probe's answer, or why there is none: it timed out, or failed. */
export async function readFact<T>(what: string, ms: number, work: () => Promise<T>): Promise<Read<T>> {
  try {
    return await bounded(what, ms, Promise.resolve().then(work));
  } catch (err) {
    if (err instanceof ProbeTimeout) return { unread: 'timeout', reason: err.message };
    return { unread: 'error', reason: `${what} failed: ${engineMessage(err)}` };
  }
}

/** A unix socket something listens on (a connect succeeds); false on any failure or after `ms`. */
export async function socketAnswers(path: string, ms: number): Promise<boolean> {
  return (await connectOutcome(path, ms)) === 'connected';
}
