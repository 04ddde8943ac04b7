/**
 * Run Doctor and Copy Report, backend side (issue 31, item 3): gathers the facts plan/doctor.ts
 * judges, each with its own time bound (DOCTOR_LIMITS), so a slow engine is a warning line and
 * never a hang. Read-only: nothing here creates, starts or writes anything; the folder's plan is
 * the one an open would make (backend/shells.ts prepare, plan/session.ts), the container facts
 * come from one listing and the inspects it already makes, the transports from
 * backend/transportFacts.ts.
 */
import { release } from 'node:os';
import { join } from 'node:path';
import type Docker from 'dockerode';
import type * as vscode from 'vscode';
import {
  CONTAINER,
  DOCKER_ENDPOINT,
  DOCTOR_LIMITS,
  EGRESS,
  ENV,
  EXTENSION_VERSION,
  LABELS,
  RUNTIME_IMAGE_LABELS,
  RUNTIME_IMAGE_PUBLISHED,
} from '../contract/constants';
import { connectOutcome } from '../bridge/sweep';
import { errorText } from '../contract/errors';
import { foreignLabel } from '../contract/objects';
import type { HostFacts, ObjectNames } from '../contract/types';
import { describeSource, EngineTooOldError, type EndpointSource, type EngineConnection } from '../engine/client';
import { podmanRootless } from '../engine/compat';
import { engineMessage, isNotFound } from '../engine/errors';
import { listOwnedContainers, listToolboxContainers, type ListedContainer } from '../engine/lifecycle';
import { ANCHOR_ENTRYPOINT } from '../engine/peer';
import { inspectPeerState } from '../engine/peerState';
import {
  doctorChecks,
  doctorCounts,
  doctorSummary,
  isUnread,
  renderDoctorReport,
  type ContainerFacts,
  type DoctorFacts,
  type EndpointFoundBy,
  type EngineFacts,
  type FolderFacts,
  type ImageFacts,
  type PeerObjectFacts,
  type Read,
  type Unread,
} from '../plan/doctor';
import { egressEnforcedOf, missingProtections, missingSocketVolume, peerRunOf, replacedProtections } from '../plan/drift';
import { PROTECTED_MOUNT } from '../plan/protect';
import { hostReach, protectedPathsOf, tildePath } from '../plan/posture';
import { redactReport } from '../plan/redact';
import { previewSession } from '../plan/session';
import type { SessionPlan } from '../plan/types';
import { findProximoBinary } from '../proximo/binary';
import type { DoctorRequest, DoctorResult, PeerSetting } from './api';
import type { EngineConnector } from './connection';
import { endpointUpstream } from './dockerApis';
import type { EgressPolicies } from './egress';
import type { FolderConfig } from './folderConfig';
import type { RuntimeImages } from './images';
import type { BackendSettings } from './settings';
import type { ShellOpener } from './shells';
import type { TransportFacts } from './transportFacts';

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

/** Whether something in the error's cause chain says it timed out (engine/client.ts unreachable) or the engine is too old. */
function causes(err: unknown): unknown[] {
  const out: unknown[] = [];
  for (let e = err, depth = 0; e !== undefined && e !== null && depth < 6; e = (e as { cause?: unknown }).cause, depth++) out.push(e);
  return out;
}

function foundBy(source: EndpointSource): EndpointFoundBy {
  if (source === 'setting' || source === 'DOCKER_HOST') return source;
  if (source.startsWith('context ')) return 'context';
  return 'probe';
}

/** A unix socket something listens on (a connect succeeds); false on any failure or after `ms`. */
export async function socketAnswers(path: string, ms: number): Promise<boolean> {
  return (await connectOutcome(path, ms)) === 'connected';
}

/** Where a folder's peer-messaging choice comes from, as the report says it. */
function peerSourceWords(setting: PeerSetting, home: string): string {
  const s = setting.source;
  switch (s.from) {
    case 'default':
      return 'default';
    case 'user-file':
    case 'project-file':
      return `from ${tildePath(s.file, home)}`;
    case 'env':
      return `from the ${s.variable} environment variable`;
    case 'setting':
      return `from the toolbox.peerMessaging setting in the ${s.scope} settings`;
  }
}

/** What the folder's plan says, for its checks and its containers'. */
interface FolderPlan {
  facts: Omit<FolderFacts, 'containers'>;
  /** The plan an open would make, for comparing the containers' protected paths. */
  plan?: SessionPlan;
  image?: { ref: string; ours: boolean; registryMirror?: string };
}

export class Doctor {
  private readonly limits: typeof DOCTOR_LIMITS;

  constructor(private readonly deps: DoctorDeps) {
    this.limits = { ...DOCTOR_LIMITS, ...deps.limits };
  }

  async doctor(request: DoctorRequest): Promise<DoctorResult> {
    const facts = await this.facts(request);
    const checks = doctorChecks(facts);
    const counts = doctorCounts(checks);
    const at = new Date().toISOString();
    const text = renderDoctorReport(facts, checks, at);
    const redacted = renderDoctorReport(facts, checks, at, (t) => redactReport(t, { home: facts.home, env: process.env }));
    const summary = doctorSummary(counts);
    // The log keeps what needs doing (the notification's Show Log, when a check failed).
    for (const c of checks) {
      if (c.status === 'warn' || c.status === 'fail') {
        this.deps.log.warn(
          `Doctor: ${c.status === 'fail' ? 'failed' : 'warning'}: ${c.title}: ${c.detail}${c.fix ? ` What to do: ${c.fix}` : ''}`,
        );
      }
    }
    this.deps.log.info(`${summary}.`);
    return { checks, counts, summary, text, redacted };
  }

  /** Every fact, each probe bounded; the folders' plans while the engine connects. */
  async facts(request: DoctorRequest): Promise<DoctorFacts> {
    const host = this.deps.host();
    const step = request.onStep ?? (() => undefined);
    step('Reaching the engine and planning the folders');
    const [engine, plans] = await Promise.all([
      this.engineFacts(),
      Promise.all(request.folders.map((folder) => this.folderPlan(folder, host))),
    ]);
    const base = {
      about: {
        extensionVersion: EXTENSION_VERSION,
        ...(request.vscodeVersion !== undefined ? { vscodeVersion: request.vscodeVersion } : {}),
        platform: process.platform,
        arch: process.arch,
        osRelease: release(),
      },
      home: host.home,
      uid: host.uid,
      gid: host.gid,
      names: { anchor: this.deps.names.anchor, socketVolume: this.deps.names.socketVolume },
      engine: engine.facts,
      hostTools: this.deps.settings.hostTools(),
    };
    const connection = engine.connection;
    if (connection === undefined) {
      const noEngine: Unread = { unread: 'no-engine', reason: 'the engine is not reachable (see Engine above)' };
      return {
        ...base,
        peerObjects: noEngine,
        images: noEngine,
        folders: plans.map((p) => ({ ...p.facts, ...this.endpointFacts(p, undefined), containers: noEngine })),
      };
    }
    const local = !engine.facts.reachable || engine.facts.remoteHost === undefined;
    const ctx = { docker: connection.docker, names: this.deps.names };
    step('Listing the containers, the peer objects and the images');
    const owned = listOwnedContainers(ctx);
    owned.catch(() => undefined);
    const [listed, peerObjects, images] = await Promise.all([
      readFact('Listing the containers', this.limits.probeMs, () => listToolboxContainers(ctx, owned)),
      readFact('Inspecting the peer anchor and socket volume', this.limits.probeMs, () => this.peerObjects(connection.docker, owned)),
      readFact('Inspecting the runtime image', this.limits.probeMs, () => this.imageFacts(connection.docker, plans)),
    ]);
    step('Checking each container');
    const folders = await Promise.all(
      plans.map(async (p): Promise<FolderFacts> => {
        const endpoint = this.endpointFacts(p, connection);
        if (isUnread(listed)) return { ...p.facts, ...endpoint, containers: listed };
        const mine = listed.filter((c) => workspaceOf(c) === p.facts.folder || c.name === p.facts.container);
        const containers = await Promise.all(mine.map((c) => this.containerFacts(c, p, host, local)));
        return { ...p.facts, ...endpoint, containers };
      }),
    );
    return { ...base, peerObjects, images, folders };
  }

  private async engineFacts(): Promise<{ facts: EngineFacts; connection?: EngineConnection }> {
    let c: EngineConnection;
    try {
      c = await bounded('The engine', this.limits.connectMs, this.deps.connector.connected());
    } catch (err) {
      const chain = causes(err);
      return {
        facts: {
          reachable: false,
          reason: err instanceof ProbeTimeout ? `${err.message} (nothing answered at the endpoint).` : errorText(err),
          timedOut: chain.some((e) => e instanceof ProbeTimeout || (typeof e === 'object' && e !== null && 'timeoutMs' in e)),
          tooOld: chain.some((e) => e instanceof EngineTooOldError),
        },
      };
    }
    const [locality, rootless] = await Promise.all([
      readFact('Where the engine runs', this.limits.probeMs, () => this.deps.connector.locateOrLocal()),
      readFact('Whether the engine is rootless', this.limits.probeMs, () => rootlessOf(c)),
    ]);
    return {
      connection: c,
      facts: {
        reachable: true,
        endpoint: c.endpoint.endpoint,
        foundBy: foundBy(c.endpoint.source),
        source: describeSource(c.endpoint.source),
        product: c.product,
        version: c.version,
        apiVersion: c.apiVersion,
        rootless,
        ...(!isUnread(locality) && locality.remote ? { remoteHost: locality.engineHost } : {}),
      },
    };
  }

  /** The folder's configuration and the plan an open would make (no Docker, nothing written). */
  private async folderPlan(folder: string, host: HostFacts): Promise<FolderPlan> {
    try {
      const [{ prepared, plan }, peer, egressMode] = await bounded(
        "The folder's plan",
        this.limits.planMs,
        Promise.all([this.deps.shells.prepare({ folder }), this.deps.config.peerSetting(folder), this.deps.egress.mode(folder)]),
      );
      const { request } = plan;
      const session = previewSession(request, host);
      const planned = [
        ...new Set(
          session.mounts
            .filter((m) => m.name === PROTECTED_MOUNT.readonly)
            .map((m) => (m.source.startsWith(`${session.workspace}/`) ? m.source.slice(session.workspace.length + 1) : m.source)),
        ),
      ];
      const ours = request.config.image === undefined;
      return {
        plan: session,
        image: { ref: request.image, ours, ...(request.config.registryMirror ? { registryMirror: request.config.registryMirror } : {}) },
        facts: {
          folder,
          container: prepared.container,
          peer: { on: peer.on, source: peerSourceWords(peer, host.home) },
          imageRef: request.image,
          proximo: {
            enabled: request.config.proximo !== false,
            installed: findProximoBinary({ pathEnv: process.env.PATH, home: host.home }) !== undefined,
            ...(request.proximo ? { caPath: request.proximo.caPath } : {}),
            hosts: request.proximo?.hosts.length ?? 0,
          },
          protection: { enabled: request.protectedPaths === true, planned },
          vscodeGit: this.deps.settings.vscodeGitOpeners(folder),
          egressMode,
        },
      };
    } catch (err) {
      return { facts: { folder, configProblem: err instanceof ProbeTimeout ? `${err.message}.` : errorText(err) } };
    }
  }

  /** What Docker the folder's next container gets: the setting, and whether the endpoint can forward to this engine. */
  private endpointFacts(p: FolderPlan, connection: EngineConnection | undefined): Pick<FolderFacts, 'dockerEndpoint'> {
    if (p.facts.configProblem !== undefined) return {};
    return {
      dockerEndpoint: {
        setting: this.deps.settings.dockerEndpoint(p.facts.folder),
        forwardable: connection !== undefined && endpointUpstream(connection) !== undefined,
      },
    };
  }

  private async peerObjects(docker: Docker, owned: ReturnType<typeof listOwnedContainers>): Promise<PeerObjectFacts> {
    const { names } = this.deps;
    const [state, anchor, volume] = await Promise.all([
      inspectPeerState({ docker, names }, owned),
      docker
        .getContainer(names.anchor)
        .inspect()
        .catch((err: unknown) => {
          if (isNotFound(err)) return undefined;
          throw err;
        }),
      (docker.getVolume(names.socketVolume).inspect() as Promise<{ Labels?: Record<string, string> | null }>).catch((err: unknown) => {
        if (isNotFound(err)) return undefined;
        throw err;
      }),
    ]);
    const entrypoint = anchor?.Config?.Entrypoint;
    const argv = Array.isArray(entrypoint) ? entrypoint : entrypoint ? [entrypoint] : [];
    const anchorLabel = foreignLabel(anchor?.Config?.Labels);
    const volumeLabel = foreignLabel(volume?.Labels);
    return {
      anchor: {
        state: anchor === undefined ? 'missing' : anchor.State.Running ? 'running' : 'stopped',
        ...(anchorLabel !== undefined ? { foreignLabel: anchorLabel } : {}),
        entrypointOk:
          anchor === undefined || (argv.length === ANCHOR_ENTRYPOINT.length && argv.every((a, i) => a === ANCHOR_ENTRYPOINT[i])),
      },
      volume: {
        exists: state.volume.exists,
        ...(volumeLabel !== undefined ? { foreignLabel: volumeLabel } : {}),
        ...(state.volume.owner !== undefined ? { owner: state.volume.owner } : {}),
        ...(state.volume.mode !== undefined ? { mode: state.volume.mode } : {}),
      },
    };
  }

  /** Each image the folders' next containers use, once. */
  private async imageFacts(docker: Docker, plans: readonly FolderPlan[]): Promise<ImageFacts[]> {
    const byRef = new Map<string, NonNullable<FolderPlan['image']>>();
    for (const p of plans) if (p.image && !byRef.has(p.image.ref)) byRef.set(p.image.ref, p.image);
    return Promise.all(
      [...byRef.values()].map(async ({ ref, ours, registryMirror }): Promise<ImageFacts> => {
        const info = await docker
          .getImage(ref)
          .inspect()
          .catch((err: unknown) => {
            if (isNotFound(err)) return undefined;
            throw err;
          });
        const pullFrom = ours ? this.deps.images.pullRef(ref, registryMirror) : undefined;
        const labelHash = info?.Config?.Labels?.[RUNTIME_IMAGE_LABELS.contextHash];
        return {
          ref,
          ours,
          present: info !== undefined,
          ...(info?.Id ? { id: info.Id } : {}),
          ...(ours ? { tagHash: ref.slice(ref.lastIndexOf(':') + 1) } : {}),
          ...(labelHash !== undefined ? { labelHash } : {}),
          pulled: pulledFromRegistry(info?.RepoDigests, ours),
          ...(pullFrom !== undefined ? { pullFrom } : {}),
        };
      }),
    );
  }

  private async containerFacts(c: ListedContainer, p: FolderPlan, host: HostFacts, local: boolean): Promise<ContainerFacts> {
    const { detail } = c;
    const labels = detail.Config?.Labels ?? {};
    const mounts = detail.Mounts ?? [];
    const running = c.state === 'running';
    const reach = hostReach(mounts, host.home);
    const endpoint = reach.find((r) => r.kind === 'docker-endpoint');
    const egressDir = mounts.find((m) => m.Destination === EGRESS.containerDir)?.Source;
    const enforced = egressEnforcedOf(labels);
    const probe = (path: string) => socketAnswers(path, this.limits.socketMs);
    const [transports, endpointServed, egressServed] = await Promise.all([
      running && this.deps.transports
        ? readFact('Measuring the transports', this.limits.probeMs, () => this.deps.transports!(detail))
        : undefined,
      endpoint !== undefined && running && local ? probe(join(endpoint.source, DOCKER_ENDPOINT.socket)) : undefined,
      enforced && running && local ? (egressDir !== undefined ? probe(join(egressDir, EGRESS.socket)) : false) : undefined,
    ]);
    const perRun = peerRunOf(labels);
    return {
      name: c.name,
      state: c.state,
      ...(detail.Image ? { imageId: detail.Image } : {}),
      // undefined: not running, or not measured (yet).
      ...(transports !== undefined ? { transports } : {}),
      peer: { member: c.peer, socketVolume: !missingSocketVolume(mounts, this.deps.names), ...(perRun !== undefined ? { perRun } : {}) },
      proximoCa: mounts.some((m) => m.Destination === CONTAINER.proximoCa),
      protection: {
        labelled: labels[LABELS.protectedPaths] !== undefined,
        count: protectedPathsOf(mounts, labels, host.home)?.length ?? 0,
        missing: p.plan ? missingProtections(mounts, p.plan) : [],
        replaced: p.plan ? replacedProtections(labels, p.plan) : [],
      },
      docker: {
        kind: endpoint !== undefined ? 'endpoint' : reach.some((r) => r.kind === 'docker-socket') ? 'raw-socket' : 'none',
        ...(endpointServed !== undefined ? { served: endpointServed } : {}),
      },
      egress: { enforced, ...(egressServed !== undefined ? { served: egressServed } : {}) },
    };
  }
}

/**
 * Whether the image came from a registry: ours when a digest names the repository the workflow
 * publishes it under (RUNTIME_IMAGE_PUBLISHED, or a mirror of it); Podman gives a digest of its own
 * repository to a local build too, so any digest is not enough. Someone else's: any digest.
 */
function pulledFromRegistry(repoDigests: readonly string[] | undefined, ours: boolean): boolean {
  const repos = (repoDigests ?? []).map((d) => d.slice(0, Math.max(0, d.indexOf('@'))));
  return ours ? repos.some((r) => r.endsWith(`/${RUNTIME_IMAGE_PUBLISHED.path}`)) : repos.length > 0;
}

/** The host folder a container works on: its workspace label, else its TOOLBOX_HOST_WORKSPACE. */
function workspaceOf(c: ListedContainer): string | undefined {
  if (c.workspace !== undefined) return c.workspace;
  const key = `${ENV.hostWorkspace}=`;
  return (c.detail.Config?.Env ?? []).find((e) => e.startsWith(key))?.slice(key.length);
}

/** Rootless: Podman's /info (engine/compat.ts), Docker's security options (`name=rootless`). */
async function rootlessOf(c: EngineConnection): Promise<boolean> {
  if (c.product === 'Podman') return podmanRootless(c.docker);
  const info = (await c.docker.info()) as { SecurityOptions?: unknown };
  return Array.isArray(info.SecurityOptions) && info.SecurityOptions.some((o) => typeof o === 'string' && o.includes('name=rootless'));
}
