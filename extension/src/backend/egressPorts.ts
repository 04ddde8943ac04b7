/**
 * Published ports of a container under an egress policy (issue 30,
 * docs/decisions/0056-egress-through-a-host-proxy.md). Such a container has no network, so the
 * engine cannot publish anything: the host listens where the port spec says (127.0.0.1 unless it
 * names an address) and relays each connection through an exec into the container's own loopback
 * (engine/loginRelay.ts, as login callbacks are relayed). The specs live in the container's label
 * LABELS.egressPorts, so a reloaded window relays them again. TCP only: a UDP or SCTP spec is
 * said to be left out.
 */
import { createServer, type Server, type Socket } from 'node:net';
import type Docker from 'dockerode';
import type * as vscode from 'vscode';
import { LABELS } from '../contract/upstream';
import type { PortSpec } from '../contract/types';
import { openLoginRelay } from '../engine/loginRelay';
import { DEFAULT_PUBLISH_HOST_IP, type PublishedPort } from '../plan/publish';

/** Connections relayed at once per port; more are closed at once. */
const MAX_CONCURRENT = 64;

interface Relayed {
  containerId: string;
  servers: Server[];
  ports: PublishedPort[];
}

/** The port specs a container's label carries (anything malformed left out). */
export function egressPortsOf(labels: Readonly<Record<string, string>> | null | undefined): PortSpec[] {
  const raw = labels?.[LABELS.egressPorts];
  if (raw === undefined) return [];
  try {
    const parsed: unknown = JSON.parse(raw);
    if (!Array.isArray(parsed)) return [];
    return parsed.filter(
      (p): p is PortSpec =>
        typeof p === 'object' &&
        p !== null &&
        Number.isInteger((p as PortSpec).containerPort) &&
        typeof (p as PortSpec).hostPort === 'string' &&
        ((p as PortSpec).hostIp === undefined || typeof (p as PortSpec).hostIp === 'string'),
    );
  } catch {
    return [];
  }
}

export class EgressPorts {
  /** By container name: a container made again under the same name takes its predecessor's ports. */
  private readonly relayed = new Map<string, Promise<Relayed>>();
  /** The same, once listening: what the views show. */
  private readonly listening = new Map<string, Relayed>();

  constructor(private readonly log: Pick<vscode.LogOutputChannel, 'info' | 'warn'>) {}

  /** Relays the container's ports (once per container in this window); refusals are logged, never thrown. */
  async relay(docker: Docker, containerId: string, name: string, specs: readonly PortSpec[]): Promise<PublishedPort[]> {
    const known = await this.relayed.get(name)?.catch(() => undefined);
    if (known?.containerId === containerId) return known.ports;
    if (known !== undefined) await this.release(name);
    if (specs.length === 0) return [];
    const started = this.start(docker, containerId, name, specs);
    this.relayed.set(name, started);
    const done = await started;
    if (this.relayed.get(name) === started) this.listening.set(name, done);
    return done.ports;
  }

  /** The host ports relayed to the container now (by its name and id: a container of the same name made since has none yet). */
  ports(name: string, containerId: string): PublishedPort[] {
    const r = this.listening.get(name);
    return r?.containerId === containerId ? [...r.ports] : [];
  }

  /** Stops relaying to a container (it is gone, or the window closes). */
  async release(name: string): Promise<void> {
    const r = await this.relayed.get(name)?.catch(() => undefined);
    this.relayed.delete(name);
    this.listening.delete(name);
    await Promise.all((r?.servers ?? []).map((s) => new Promise<void>((resolve) => s.close(() => resolve()))));
  }

  async dispose(): Promise<void> {
    await Promise.all([...this.relayed.keys()].map((name) => this.release(name)));
  }

  private async start(docker: Docker, containerId: string, name: string, specs: readonly PortSpec[]): Promise<Relayed> {
    const out: Relayed = { containerId, servers: [], ports: [] };
    for (const spec of specs) {
      if ((spec.protocol ?? 'tcp') !== 'tcp') {
        this.log.warn(
          `${name}: port ${spec.containerPort}/${spec.protocol} is not published: under an egress policy only TCP ports are relayed.`,
        );
        continue;
      }
      const hostIp = spec.hostIp ?? DEFAULT_PUBLISH_HOST_IP;
      const [first, last] = spec.hostPort === '' ? [0, 0] : spec.hostPort.split('-').map(Number);
      let bound: { server: Server; port: number } | undefined;
      for (let port = first ?? 0; bound === undefined && port <= (last ?? first ?? 0); port++) {
        bound = await listen(hostIp, port, (socket) => this.connect(docker, containerId, name, spec.containerPort, socket)).catch(
          () => undefined,
        );
        if (port === 0) break;
      }
      if (bound === undefined) {
        this.log.warn(
          `${name}: port ${spec.containerPort} could not be published on ${hostIp}:${spec.hostPort || 'any'} (taken, or not an address of this host).`,
        );
        continue;
      }
      out.servers.push(bound.server);
      out.ports.push({ containerPort: spec.containerPort, protocol: 'tcp', hostIp, hostPort: bound.port });
      this.log.info(
        `${name}: ${hostIp}:${bound.port} relays to port ${spec.containerPort} in the container (egress policy: no engine network).`,
      );
    }
    return out;
  }

  private connect(docker: Docker, containerId: string, name: string, port: number, socket: Socket): void {
    socket.on('error', () => socket.destroy());
    openLoginRelay(docker, containerId, port, (text) => this.log.info(`${name}: port ${port}: ${JSON.stringify(text)}`)).then(
      (relay) => {
        relay.on('error', () => socket.destroy());
        socket.pipe(relay);
        relay.pipe(socket);
        socket.on('close', () => relay.destroy());
      },
      () => socket.destroy(),
    );
  }
}

function listen(host: string, port: number, onConnection: (socket: Socket) => void): Promise<{ server: Server; port: number }> {
  return new Promise((resolve, reject) => {
    const server = createServer(onConnection);
    server.maxConnections = MAX_CONCURRENT;
    server.once('error', reject);
    server.listen({ host, port }, () => {
      server.off('error', reject);
      const address = server.address();
      resolve({ server, port: typeof address === 'object' && address !== null ? address.port : port });
    });
  });
}
