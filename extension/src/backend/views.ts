/**
 * What the views show: one snapshot of our containers (with their held shells, posture, ports
 * and drift facts), the peer anchor and socket volume, the registered agent sessions and where
 * they live, and proximo on this host. One list and one inspect per container per refresh.
 */
import { join } from 'node:path';
import { CONTAINER, HOST, HOST_DOCKER_INTERNAL } from '../contract/upstream';
import { ENV } from '../contract/shims';
import type { HostFacts, ObjectNames } from '../contract/types';
import { dockerChildrenByOwner, leftBehindOf } from '../engine/dockerEndpoint/children';
import { listOwnedContainers, listToolboxContainers } from '../engine/lifecycle';
import { inboxSocketPresence, inspectPeerState, readAgentSessions } from '../engine/peerState';
import { holderAddress, listHeldSessions, proveHolder, socketTransport, type HolderTransport } from '../engine/sessions';
import { missingSocketVolume, peerRunOf } from '../plan/drift';
import { peerReach } from '../plan/peerReach';
import { hostReach, protectedPathsOf } from '../plan/posture';
import { containerProfile } from '../plan/profiles';
import { publishedPorts } from '../plan/publish';
import { describeShellCommand } from '../plan/worktree';
import { findProximoBinary } from '../proximo/binary';
import { detectProximo } from '../proximo/facts';
import type { ContainerKind, ContainerSummary, DockerChildrenSummary, ProximoSummary, Snapshot } from './api';
import type { EngineConnector } from './connection';
import type { EgressPolicies } from './egress';

type ListedContainer = Awaited<ReturnType<typeof listToolboxContainers>>[number];

/** The engine's State.StartedAt as ms since the epoch; undefined for Docker's zero time or junk. */
function startedAt(text: string | undefined): number | undefined {
  const ms = text ? Date.parse(text) : NaN;
  return Number.isFinite(ms) && ms > 0 ? ms : undefined;
}

export class Views {
  constructor(
    private readonly names: ObjectNames,
    private readonly host: () => HostFacts,
    private readonly connector: EngineConnector,
    /** Each container's egress policy and counters (backend/egress.ts). */
    private readonly egress?: Pick<EgressPolicies, 'summary' | 'ports'>,
    /** How this window reaches containers' holders (backend/sessions.ts): its exec, and the sessions setting. */
    private readonly holders?: {
      execTransport(containerId: string): HolderTransport | undefined;
      socketAllowed(): boolean;
    },
  ) {}

  async snapshot(): Promise<Snapshot> {
    const ctx = await this.connector.engine();
    // One list (and one inspect per container) serves both the shells and the peer state.
    const owned = listOwnedContainers(ctx);
    const [listed, peer, locality, children] = await Promise.all([
      listToolboxContainers(ctx, owned),
      inspectPeerState(ctx, owned),
      this.connector.locateOrLocal(),
      // Only for the tree: an engine that cannot list them still shows the containers.
      dockerChildrenByOwner(ctx).catch(() => new Map<string, DockerChildrenSummary>()),
    ]);
    const engineId = (await this.connector.connected()).endpoint.endpoint;
    const describe = (c: ListedContainer) => {
      const d = this.describe(c);
      const mine = children.get(c.name);
      const egress = this.egress?.summary(engineId, c.name, c.detail.Config?.Labels, d.workspace);
      // A container under a policy publishes nothing through the engine: the host relays its ports.
      const relayed = egress?.enforced ? this.egress!.ports.ports(c.name, c.id) : [];
      return {
        ...d,
        ...(mine ? { dockerChildren: mine } : {}),
        ...(egress ? { egress } : {}),
        ...(relayed.length > 0 ? { ports: relayed } : {}),
      };
    };
    // A remote engine's run dirs are paths on its machine: no holder socket of theirs is here.
    const containers = await Promise.all(
      listed.map((c) => (locality.remote ? Promise.resolve(describe(c)) : this.withHeldShells(describe(c), c.detail))),
    );
    // Children whose owner something else removed (engine/dockerEndpoint/children.ts leftBehindOf).
    const leftBehind = await leftBehindOf(ctx, children, new Set(listed.map((c) => c.name))).catch(() => []);
    const claudeHome = join(this.host().home, HOST.mountsRoot, '.claude');
    const sessions = await readAgentSessions(claudeHome).catch(() => []);
    const engine = await this.connector.describe(locality);
    const endpoint = (await this.connector.connected()).endpoint.endpoint;
    const facts = containers.map((c) => ({ name: c.name, workspace: c.workspace, running: c.state === 'running', member: c.peer }));
    return {
      containers,
      anchor: { name: ctx.names.anchor, id: peer.anchor.id, state: peer.anchor.state },
      volume: { name: ctx.names.socketVolume, exists: peer.volume.exists, owner: peer.volume.owner, mode: peer.volume.mode },
      members: peer.members,
      ...(engine !== undefined ? { engine } : {}),
      endpoint,
      ...(leftBehind.length > 0 ? { leftBehind } : {}),
      sessions: await Promise.all(
        sessions.map(async (s) => {
          const r = peerReach(s, facts, await inboxSocketPresence(peer.volume, s.messagingSocketPath));
          return { pid: s.pid, name: s.name ?? s.sessionId, cwd: s.cwd, container: r.container, reach: r.state, why: r.why };
        }),
      ),
    };
  }

  async proximo(): Promise<ProximoSummary> {
    const host = this.host();
    const binary = findProximoBinary({ pathEnv: process.env.PATH, home: host.home });
    const facts = await detectProximo({ home: host.home, env: process.env });
    return { installed: binary !== undefined, binary, caPath: facts?.caPath, hosts: facts?.hosts ?? [] };
  }

  /**
   * The shells a running container's holder keeps, when its socket is reachable from this host
   * (the run dir is mounted and the engine is local), or through the exec this window already
   * reaches that holder by (toolbox.transport.sessions `exec`, or a socket that does not answer
   * from here; docs/decisions/0058). Never starts a holder, never opens a socket the setting
   * forbids: a refresh stays one list and one inspect per container, plus one local connection
   * (or one short exec) each.
   */
  private async withHeldShells(summary: ContainerSummary, detail: ListedContainer['detail']): Promise<ContainerSummary> {
    if (summary.state !== 'running') return summary;
    const runDir = (detail.Mounts ?? []).find((m) => m.Destination === CONTAINER.bridgeRunDir)?.Source;
    if (!runDir) return summary;
    const holder = holderAddress(runDir, detail.Config?.User ?? '');
    const viaExec = this.holders?.execTransport(summary.id);
    if (!viaExec && this.holders?.socketAllowed() === false) return summary;
    try {
      const transport = viaExec ?? socketTransport(holder.hostSocket!);
      // Another container's holder in a shared run dir lists none of this one's shells (docs/decisions/0043).
      if (!viaExec && (await proveHolder(transport, summary.id)).kind === 'other') return summary;
      const listed = await listHeldSessions(transport);
      const shells = listed
        .filter((s) => !s.ended)
        .map((s) => ({
          id: s.id,
          pid: s.pid,
          command: describeShellCommand(s.cmd ?? []),
          title: s.title ?? undefined,
          started: s.started,
          attached: s.attached,
        }));
      return { ...summary, holder, shells };
    } catch {
      return summary;
    }
  }

  /** Adds what the list endpoint lacks (mounts, env, extra hosts) from the inspect data. */
  private describe(c: ListedContainer): ContainerSummary {
    const names = this.names;
    const kind: ContainerKind = names.kindOf(c.name) ?? 'workspace';
    const info = c.detail;
    const env = info.Config?.Env ?? [];
    const key = `${ENV.hostWorkspace}=`;
    const ws = env.find((e) => e.startsWith(key))?.slice(key.length);
    const hosts = ((info.HostConfig?.ExtraHosts ?? []) as string[])
      .map((h: string) => h.split(':')[0] ?? h)
      .filter((h) => h !== HOST_DOCKER_INTERNAL);
    const peerRun = peerRunOf(info.Config?.Labels);
    const profile = containerProfile(info.Config?.Labels, info.Mounts, this.host().home);
    return {
      id: c.id,
      name: c.name,
      state: c.state,
      status: c.status,
      startedAt: startedAt(info.State?.StartedAt),
      image: c.image,
      kind,
      pidMode: c.pidMode,
      peer: c.peer,
      ...(peerRun !== undefined ? { peerRun } : {}),
      seccomp: c.seccomp,
      workspace: c.workspace ?? ws,
      ...(profile !== undefined ? { profile } : {}),
      mountsSocketVolume: !missingSocketVolume(info.Mounts, names),
      proximoCa: (info.Mounts ?? []).some((m) => m.Destination === CONTAINER.proximoCa),
      proximoHosts: hosts,
      reach: hostReach(info.Mounts, this.host().home),
      protectedPaths: protectedPathsOf(info.Mounts, info.Config?.Labels, this.host().home),
      ports: publishedPorts(info.State?.Running ? info.NetworkSettings?.Ports : undefined, info.HostConfig?.PortBindings),
    };
  }
}
