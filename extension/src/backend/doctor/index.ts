/**
 * Run Doctor and Copy Report, backend side (issue 31, item 3): gathers the facts plan/doctor/
 * judges, each with its own time bound (DOCTOR_LIMITS), so a slow engine is a warning line and
 * never a hang. Read-only: nothing here creates, starts or writes anything; the folder's plan is
 * the one an open would make (backend/shells.ts prepare, plan/session.ts), the container facts
 * come from one listing and the inspects it already makes, the transports from
 * backend/transportFacts.ts. Each group of facts is a file of this folder (probes.ts what they
 * share); this one gathers them in order and renders the report.
 */
import { release } from 'node:os';
import { EXTENSION_VERSION } from '../../contract/manifest';
import { listOwnedContainers, listToolboxContainers } from '../../engine/lifecycle';
import {
  doctorChecks,
  doctorCounts,
  doctorSummary,
  isUnread,
  renderDoctorReport,
  type DoctorFacts,
  type FolderFacts,
  type Unread,
} from '../../plan/doctor';
import { redactReport } from '../../plan/redact';
import type { DoctorRequest, DoctorResult } from '../api';
import { containerFacts, workspaceOf } from './containers';
import { engineFacts } from './engine';
import { endpointFacts, folderPlan } from './folderPlan';
import { imageFacts } from './image';
import { peerObjectFacts } from './peer';
import { readFact, type DoctorContext, type DoctorDeps, DOCTOR_LIMITS } from './probes';

export { bounded, DOCTOR_LIMITS, ProbeTimeout, readFact, socketAnswers, type DoctorDeps } from './probes';

export class Doctor {
  private readonly limits: typeof DOCTOR_LIMITS;
  private readonly ctx: DoctorContext;

  constructor(private readonly deps: DoctorDeps) {
    this.limits = { ...DOCTOR_LIMITS, ...deps.limits };
    this.ctx = { deps, limits: this.limits };
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
      engineFacts(this.ctx),
      Promise.all(request.folders.map((folder) => folderPlan(this.ctx, folder, host))),
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
        folders: plans.map((p) => ({ ...p.facts, ...endpointFacts(this.ctx, p, undefined), containers: noEngine })),
      };
    }
    const local = !engine.facts.reachable || engine.facts.remoteHost === undefined;
    const ctx = { docker: connection.docker, names: this.deps.names };
    step('Listing the containers, the peer objects and the images');
    const owned = listOwnedContainers(ctx);
    owned.catch(() => undefined);
    const [listed, peerObjects, images] = await Promise.all([
      readFact('Listing the containers', this.limits.probeMs, () => listToolboxContainers(ctx, owned)),
      readFact('Inspecting the peer anchor and socket volume', this.limits.probeMs, () =>
        peerObjectFacts(this.ctx, connection.docker, owned),
      ),
      readFact('Inspecting the runtime image', this.limits.probeMs, () => imageFacts(this.ctx, connection.docker, plans)),
    ]);
    step('Checking each container');
    const folders = await Promise.all(
      plans.map(async (p): Promise<FolderFacts> => {
        const endpoint = endpointFacts(this.ctx, p, connection);
        if (isUnread(listed)) return { ...p.facts, ...endpoint, containers: listed };
        const mine = listed.filter((c) => workspaceOf(c) === p.facts.folder || c.name === p.facts.container);
        const containers = await Promise.all(mine.map((c) => containerFacts(this.ctx, c, p, host, local)));
        return { ...p.facts, ...endpoint, containers };
      }),
    );
    return { ...base, peerObjects, images, folders };
  }
}
