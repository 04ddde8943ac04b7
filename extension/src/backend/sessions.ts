/**
 * The held sessions of this window: how each container's session holder is reached (its run-dir
 * socket or an exec, engine/sessions.ts), attaching a recorded shell again after a reload, and
 * ending one, with upstream's rule that a container goes when its last shell ends.
 */
import type Docker from 'dockerode';
import type * as vscode from 'vscode';
import { EGRESS } from '../contract/egress';
import { LABELS } from '../contract/upstream';
import { ToolboxError } from '../contract/errors';
import { clause, engineMessage } from '../engine/errors';
import { removeIfIdle } from '../engine/lifecycle';
import {
  attachHeldSession,
  holderHeld,
  HolderUnavailableError,
  killHeldSession,
  listHeldSessions,
  proveHolder,
  reachHolder,
  SessionEndedError,
  socketTransport,
  startSessionSentinel,
  type HolderAddress,
  type HolderTransport,
} from '../engine/sessions';
import { holderMismatchText, unprovenHolderReason } from '../plan/holderProof';
import { SessionGoneError, type SessionProgress, type SessionRecord, type ShellPersistence, type StartedShell } from './api';
import type { BridgeRegistry } from './bridges';
import type { EngineConnector } from './connection';
import type { BackendSettings } from './settings';
import type { ScopedDockerEndpoints } from './dockerEndpoints';
import type { EgressPolicies } from './egress';
import { egressPortsOf } from './egressPorts';

export interface HeldSessionsDeps {
  connector: EngineConnector;
  bridges: BridgeRegistry;
  settings: BackendSettings;
  log: Pick<vscode.LogOutputChannel, 'info'>;
  /** Serves a reattached container's Docker endpoint again (issue 27). */
  dockerEndpoints?: ScopedDockerEndpoints;
  /** Serves a reattached container's egress proxy again (backend/egress.ts). */
  egress?: EgressPolicies;
}

/** How long an ended shell's holder gets to reap it before its container is judged idle. */
const END_SETTLE_MS = 4_000;

/** The holder's answer that the session is over, as the SessionGoneError the UI reports once. */
function throwIfSessionGone(err: Error, record: SessionRecord): void {
  if (err instanceof SessionEndedError) {
    throw new SessionGoneError(
      `The shell "${record.title}" in ${record.container} ended while the window was closed (exit code ${err.exitCode}).`,
    );
  }
  if (err instanceof HolderUnavailableError && err.noSession) {
    throw new SessionGoneError(`The shell "${record.title}" in ${record.container} is gone (${err.message}).`);
  }
}

/** Where a holder answered, as the user reads it. */
function whereHolder(transport: HolderTransport, holder: HolderAddress): string {
  return transport.kind === 'socket' && holder.hostSocket ? `on ${holder.hostSocket}` : `through an exec in the container`;
}

export class HeldSessions {
  /**
   * How each container's session holder was reached (by container id), for this window: only
   * holders that proved they serve that container, or (for its recorded shells only) one too old
   * to say, whose container the engine confirmed runs (docs/decisions/0043).
   */
  private readonly transports = new Map<string, HolderTransport>();
  /** Containers whose holder cannot say which container it serves: no new shell is held there. */
  private readonly unproven = new Set<string>();
  /** Containers whose shells were said to run as plain execs (said once per window). */
  private readonly plainNoticeGiven = new Set<string>();
  /** A container's pending "remove it if idle" check (by name): an open waits for it. */
  private readonly endings = new Map<string, Promise<unknown>>();
  /** Containers whose sentinel is being checked or started right now (by id). */
  private readonly sentinels = new Set<string>();

  constructor(private readonly deps: HeldSessionsDeps) {}

  /** toolbox.sessions.persist: shells are held by the container's holder and outlive the window. */
  persist(): boolean {
    return this.deps.settings.persistSessions();
  }

  /**
   * The holder's address as this window may reach it: without its run-dir socket when
   * toolbox.transport.sessions is `exec` (docs/decisions/0058-forced-fallback-transports.md).
   */
  private reachable(holder: HolderAddress): HolderAddress {
    if (this.deps.settings.transports().sessions !== 'exec' || holder.hostSocket === undefined) return holder;
    return { containerSocket: holder.containerSocket, user: holder.user };
  }

  /** The exec this window reaches the container's holder by, if that is how it does (the views list its shells through it). */
  execTransport(containerId: string): HolderTransport | undefined {
    const transport = this.transports.get(containerId);
    return transport?.kind === 'exec' ? transport : undefined;
  }

  /**
   * How this window reaches the container's holder, for the Doctor: `socket` (the run dir's socket
   * from this host) or `exec`, and why; undefined when no shell of this window reached it yet.
   */
  holderPath(containerId: string): { mode: 'socket' | 'exec'; why: string } | undefined {
    const transport = this.transports.get(containerId);
    if (!transport) return undefined;
    if (transport.kind === 'socket')
      return { mode: 'socket', why: 'the holder answers on its socket in the bridge run dir, from this host' };
    const why =
      this.deps.settings.transports().sessions === 'exec'
        ? 'forced by the User setting toolbox.transport.sessions'
        : "the holder's socket in the bridge run dir does not answer from this host (no run dir mounted, a remote engine, or a file sharing that cannot pass a socket)";
    return { mode: 'exec', why };
  }

  /** A shell closed just now may be taking this container with it: an open waits for that first. */
  async settled(container: string): Promise<void> {
    await this.endings.get(container);
  }

  /**
   * How this container's shells are held: its holder through the run dir socket or an exec, or
   * nothing (the setting is off, or the image has no holder: said once per container).
   */
  async transport(
    containerId: string,
    name: string,
    holder: HolderAddress,
    progress: SessionProgress,
    startedByContainer = false,
  ): Promise<{ transport: HolderTransport } | Extract<ShellPersistence, { held: false }>> {
    if (!this.persist()) return { held: false, off: true, reason: 'toolbox.sessions.persist is off' };
    const plain = (reason: string) => {
      if (!this.plainNoticeGiven.has(containerId)) {
        this.plainNoticeGiven.add(containerId);
        progress.log(`Shells in ${name} run as plain execs and will not survive a window reload (${reason}).`);
      }
      return { held: false as const, off: false as const, reason };
    };
    const cached = this.transports.get(containerId);
    if (cached) return this.unproven.has(containerId) ? plain(unprovenHolderReason(name)) : { transport: cached };
    holder = this.reachable(holder);
    let transport: HolderTransport;
    let proof: Awaited<ReturnType<typeof proveHolder>>;
    try {
      const { docker } = await this.deps.connector.engine();
      transport = await reachHolder(docker, containerId, holder, { startedByContainer });
      // Before anything is attached: the holder that answered must serve this very container.
      proof = await proveHolder(transport, containerId);
    } catch (err) {
      return plain(err instanceof HolderUnavailableError ? err.message : `the session holder failed: ${(err as Error).message}`);
    }
    if (proof.kind === 'other') {
      throw new ToolboxError('holder-mismatch', holderMismatchText(name, containerId, proof.serves, whereHolder(transport, holder)));
    }
    this.transports.set(containerId, transport);
    if (proof.kind === 'unproven') {
      this.unproven.add(containerId);
      return plain(unprovenHolderReason(name));
    }
    return { transport };
  }

  /**
   * Attaches to a recorded held shell again, and serves its container's bridge again first (a
   * reloaded window has none yet), so `code` and the other shims work when its prompt shows.
   */
  async reattachShell(record: SessionRecord): Promise<StartedShell> {
    const bridge = record.bridge ? this.deps.bridges.restore(record.bridge) : Promise.resolve();
    const [shell] = await Promise.all([this.attach(record), bridge]);
    // Not awaited: the terminal is back already; docker in it answers once the endpoint listens.
    void this.restoreDockerEndpoint(record);
    return shell;
  }

  /**
   * Keeps the toolbox CLI from removing this container while it holds shells of ours: when its
   * holder says no sentinel runs, starts one (engine/sessions.ts startSessionSentinel, decision
   * 0051). Called after a shell is started or attached; never awaited on the way to a prompt,
   * never thrown (a failure is logged: the shells still work, only the CLI could end them).
   */
  async keepFromCliTeardown(containerId: string, name: string, holder: HolderAddress): Promise<void> {
    const transport = this.transports.get(containerId);
    if (!transport || this.unproven.has(containerId) || this.sentinels.has(containerId)) return;
    this.sentinels.add(containerId);
    try {
      if ((await holderHeld(transport)) !== false) return;
      const { docker } = await this.deps.connector.engine();
      await startSessionSentinel(docker, containerId, holder);
    } catch (err) {
      this.deps.log.info(
        `${name}: could not start the exec that keeps the toolbox CLI from removing the container while it holds shells: ${clause(engineMessage(err))}`,
      );
    } finally {
      this.sentinels.delete(containerId);
    }
  }

  /** The reattached container's Docker endpoint, on the engine that runs it (logged, never thrown). */
  private async restoreDockerEndpoint(record: SessionRecord): Promise<void> {
    if (!this.deps.dockerEndpoints && !this.deps.egress) return;
    const connection = await this.deps.connector.connected().catch(() => undefined);
    if (!connection || (record.engine !== undefined && record.engine !== connection.endpoint.endpoint)) return;
    // One inspect for both. The egress proxy first (issue 30): the endpoint's scope reads the policy it serves.
    const info = await connection.docker
      .getContainer(record.container)
      .inspect()
      .catch(() => undefined);
    // No inspect: the endpoint tries its own and says why it cannot be served.
    if (info === undefined) return this.deps.dockerEndpoints?.restore(connection, record.container);
    if (this.deps.egress) {
      await this.deps.egress.restore(connection.endpoint.endpoint, info);
      if (info.Config?.Labels?.[LABELS.egress] === EGRESS.enforcedLabel) {
        await this.deps.egress.ports.relay(connection.docker, info.Id, record.container, egressPortsOf(info.Config.Labels));
      }
    }
    await this.deps.dockerEndpoints?.restore(connection, record.container, info);
  }

  private async attach(record: SessionRecord): Promise<StartedShell> {
    // A holder that answers on its run-dir socket and proves it serves the recorded container is
    // alive, and so is its container: attach with no engine call at all (after a reload the
    // engine connection is not even made yet).
    const holder = this.reachable(record.holder);
    const direct = holder.hostSocket ? socketTransport(holder.hostSocket) : undefined;
    if (direct && !this.transports.has(record.containerId)) {
      // Nobody listens there, or the holder is another container's or cannot say: the engine decides.
      const proof = await proveHolder(direct, record.containerId).catch(() => undefined);
      if (proof?.kind === 'proven') {
        const session = await attachHeldSession(direct, record.sessionId, { cols: record.cols, rows: record.rows }).catch((err: Error) => {
          throwIfSessionGone(err, record);
          return undefined; // the holder went away meanwhile: the engine says whether the container is gone
        });
        if (session) {
          this.transports.set(record.containerId, direct);
          void this.keepFromCliTeardown(record.containerId, record.container, record.holder);
          return Object.assign(session, { record });
        }
      }
    }
    return this.reattachThroughEngine(record);
  }

  private async reattachThroughEngine(record: SessionRecord): Promise<StartedShell> {
    const { docker } = await this.deps.connector.engine();
    // Only the engine's own answer says the container is gone (404, or not running); an engine
    // that cannot be asked (restarting, asleep) is an error the terminal retries.
    const running = await docker
      .getContainer(record.containerId)
      .inspect()
      .then((i) => i.State.Running)
      .catch((err: { statusCode?: number }) => {
        if (err.statusCode === 404) return false;
        throw err;
      });
    if (!running) throw new SessionGoneError(`${record.container} is no longer running, so the shell "${record.title}" ended with it.`);
    try {
      const transport = this.transports.get(record.containerId) ?? (await this.reachRecorded(docker, record));
      const session = await attachHeldSession(transport, record.sessionId, { cols: record.cols, rows: record.rows });
      void this.keepFromCliTeardown(record.containerId, record.container, record.holder);
      return Object.assign(session, { record });
    } catch (err) {
      throwIfSessionGone(err as Error, record);
      throw err;
    }
  }

  /**
   * The holder of a recorded shell's container, reached through the engine and proved to serve it
   * (or too old to say, for a container the caller confirmed runs: its recorded shells would be
   * lost otherwise; new shells there are not held). Another container's holder is refused.
   */
  private async reachRecorded(docker: Docker, record: SessionRecord): Promise<HolderTransport> {
    const transport = await reachHolder(docker, record.containerId, this.reachable(record.holder));
    const proof = await proveHolder(transport, record.containerId);
    if (proof.kind === 'other') {
      throw new SessionGoneError(
        `The shell "${record.title}" cannot be reached. ` +
          holderMismatchText(record.container, record.containerId, proof.serves, whereHolder(transport, record.holder)),
      );
    }
    if (proof.kind === 'unproven') this.unproven.add(record.containerId);
    this.transports.set(record.containerId, transport);
    return transport;
  }

  async endShell(record: SessionRecord): Promise<void> {
    const { docker } = await this.deps.connector.engine();
    const ending = (async () => {
      const transport = this.transports.get(record.containerId) ?? (await this.reachRecorded(docker, record));
      await killHeldSession(transport, record.sessionId);
    })();
    this.endings.set(
      record.container,
      ending.catch(() => undefined),
    );
    await ending;
    // SIGHUP first; the holder reaps it within its grace period.
    await this.shellEnded({ id: record.containerId, name: record.container, holder: record.holder }, END_SETTLE_MS);
  }

  async shellEnded(container: { id: string; name: string; holder?: HolderAddress }, settleMs = 0): Promise<void> {
    const ctx = await this.deps.connector.engine();
    const transport = this.transports.get(container.id);
    const live = async () => {
      if (!transport) return 0;
      const deadline = Date.now() + settleMs;
      for (;;) {
        const n = (await listHeldSessions(transport)).filter((s) => !s.ended).length;
        if (n === 0 || Date.now() >= deadline) return n;
        await new Promise((r) => setTimeout(r, 100));
      }
    };
    const ending = removeIfIdle(ctx, container.name, live);
    this.endings.set(
      container.name,
      ending.catch(() => undefined),
    );
    const outcome = await ending.finally(() => this.endings.delete(container.name));
    if (outcome === 'removed') {
      this.transports.delete(container.id);
      this.unproven.delete(container.id);
      this.deps.log.info(`${container.name}: its last shell ended, so the container was removed (as the toolbox CLI does).`);
    }
  }
}
