/**
 * The scoped Docker endpoint of each workspace container this window opens (issue 27): whether a
 * container gets one (toolbox.dockerEndpoint, a local engine), serving it before the container is
 * created (its directory is bound into it), and serving it again after a window reload for the
 * containers whose shells come back. The server is engine/dockerEndpoint/server.ts, its registry
 * engine/dockerEndpoint/served.ts, the policy plan/dockerEndpoint/policy.ts behind engine/dockerEndpoint/gate.ts
 * (docs/decisions/0047, 0048).
 */
import { realpath } from 'node:fs/promises';
import type * as vscode from 'vscode';
import type Docker from 'dockerode';
import { DOCKER_ENDPOINT } from '../contract/dockerEndpoint';
import { bareName } from '../contract/objects';
import type { ObjectNames } from '../contract/types';
import type { EngineConnection } from '../engine/client';
import type { EndpointEvent, EndpointUpstream } from '../engine/dockerEndpoint/server';
import { engineIdentity, hostGatewayAddress } from '../engine/compat';
import { DockerEndpoints, ownerFromUser } from '../engine/dockerEndpoint/served';
import { policyGate } from '../engine/dockerEndpoint/gate';
import { scopeProtections, type EndpointScope } from '../plan/dockerEndpoint/policy';
import type { InspectedMount } from '../plan/posture';
import type { PlannedMount } from '../plan/types';
import type { BackendSettings } from './settings';

export interface ScopedDockerEndpointsDeps {
  names: ObjectNames;
  settings: BackendSettings;
  log: Pick<vscode.LogOutputChannel, 'info' | 'warn'>;
  /**
   * The folder's egress policy for the container's endpoint (issue 30), when it is `ask` or
   * `allowlist`: the endpoint then gives the daemon's network to nothing the container asks for
   * (plan/dockerEndpoint/egress.ts). `folder` is the workspace folder as the plan (or, after a reload,
   * the container's /workspace mount) names it. Undefined, or no such dep: `open`.
   */
  egressFor?(folder: string, container: string): EndpointScope['egress'] | undefined;
  /** Tests: where the endpoints' directories go (default: XDG_RUNTIME_DIR, else /tmp). */
  host?: { xdgRuntimeDir?: string; tmpRoot?: string };
}

/** The engine as the endpoint forwards to it: its own socket, or a plain TCP address; undefined for one it cannot reach (ssh, TLS). */
export function endpointUpstream(connection: Pick<EngineConnection, 'endpoint'>): EndpointUpstream | undefined {
  const { options } = connection.endpoint;
  if (options.socketPath !== undefined) return { socketPath: options.socketPath };
  if (options.protocol !== 'http' || typeof options.host !== 'string' || options.port === undefined) return undefined;
  return { host: options.host, port: options.port };
}

export class ScopedDockerEndpoints {
  private readonly endpoints: DockerEndpoints;
  /** What this window serves, to tidy up after at dispose: by engine and name, the engine's client. */
  private readonly served = new Map<string, { engine: string; name: string; docker: Docker }>();

  constructor(private readonly deps: ScopedDockerEndpointsDeps) {
    const xdg = deps.host ? deps.host.xdgRuntimeDir : process.env.XDG_RUNTIME_DIR;
    this.endpoints = new DockerEndpoints({
      host: {
        uid: process.getuid?.() ?? 0,
        platform: process.platform,
        ...(xdg ? { xdgRuntimeDir: xdg } : {}),
        tmpRoot: deps.host?.tmpRoot ?? '/tmp',
      },
      log: (container, event) => this.logEvent(container, event),
    });
  }

  /**
   * The directory a new container of `folder` gets bound as its Docker endpoint, or undefined when
   * it gets the docker-sock mount as configured: toolbox.dockerEndpoint is raw-socket, or the
   * engine is one the endpoint cannot forward to from this machine.
   */
  plannedDir(folder: string, container: string, connection: Pick<EngineConnection, 'endpoint'>): string | undefined {
    if (this.deps.settings.dockerEndpoint(folder) !== 'scoped') return undefined;
    if (endpointUpstream(connection) === undefined) return undefined;
    return this.endpoints.plan(connection.endpoint.endpoint, container).dir;
  }

  /**
   * Serves the endpoint a plan's container mounts, before the container is created or attached:
   * scoped to the container's name (its owner label), its folder's realpath and its protected paths.
   */
  async serveForPlan(
    connection: Pick<EngineConnection, 'endpoint' | 'docker'>,
    plan: { name: string; workspace: string; mounts: readonly PlannedMount[]; create: { User?: string } },
  ): Promise<void> {
    const upstream = endpointUpstream(connection);
    if (upstream === undefined) return;
    const mounted: InspectedMount[] = plan.mounts
      .filter((m) => m.type === 'bind')
      .map((m) => ({ Type: 'bind', Source: m.source, Destination: m.target, RW: !m.readonly }));
    await this.serve(connection, upstream, plan.name, plan.workspace, mounted, plan.create.User);
  }

  /**
   * After a window reload, for a container whose shell comes back: serves its endpoint again at the
   * same path, when its mounts show it was created with one. Failures are logged, never thrown:
   * the shell comes back either way.
   */
  async restore(
    connection: Pick<EngineConnection, 'endpoint' | 'docker'>,
    container: string,
    /** The container's inspect when the caller already has it (a reattach inspects once). */
    inspected?: Docker.ContainerInspectInfo,
  ): Promise<void> {
    const upstream = endpointUpstream(connection);
    if (upstream === undefined) return;
    const name = bareName(container);
    const engine = connection.endpoint.endpoint;
    if (this.endpoints.get(engine, name) !== undefined) return;
    try {
      const info = inspected ?? (await connection.docker.getContainer(name).inspect());
      const dir = this.endpoints.plan(engine, name).dir;
      const mounts = (info.Mounts ?? []) as InspectedMount[];
      if (!mounts.some((m) => m.Source === dir && m.Destination === DOCKER_ENDPOINT.containerDir)) return;
      const workspace = mounts.find((m) => m.Destination === '/workspace')?.Source;
      if (workspace === undefined) return;
      await this.serve(connection, upstream, name, workspace, mounts, info.Config?.User);
      this.deps.log.info(`Docker endpoint of ${name} served again after the window reload.`);
    } catch (error) {
      this.deps.log.warn(`The Docker endpoint of ${name} could not be served again: ${(error as Error).message}`);
    }
  }

  /** Stops serving a container's endpoint; its directory goes when the container is gone. */
  release(engine: string, container: string, gone: boolean): Promise<void> {
    return this.endpoints.release(engine, container, { removeDir: gone });
  }

  /**
   * The window goes away: every endpoint stops. The directory of a container that no longer exists
   * goes too (one that still runs keeps its mount, for the next window to serve again).
   */
  async dispose(): Promise<void> {
    await this.endpoints.dispose();
    await Promise.all(
      [...this.served.values()].map(async ({ engine, name, docker }) => {
        const gone = await docker
          .getContainer(name)
          .inspect()
          .then(
            () => false,
            (err: { statusCode?: number }) => err.statusCode === 404,
          );
        if (gone) await this.endpoints.release(engine, name, { removeDir: true }).catch(() => undefined);
      }),
    );
    this.served.clear();
  }

  private async serve(
    connection: Pick<EngineConnection, 'endpoint' | 'docker'>,
    upstream: EndpointUpstream,
    name: string,
    folder: string,
    mounts: readonly InspectedMount[],
    user: string | undefined,
  ): Promise<void> {
    const engine = connection.endpoint.endpoint;
    const workspace = await realpath(folder);
    const socketPath = this.endpoints.plan(engine, name).socketPath;
    const egress = this.deps.egressFor?.(folder, name);
    // Published ports listen where the workspace container reaches this host (issue 38).
    const hostIp = await hostGatewayAddress(connection.docker as Docker);
    // Podman's compat /build puts RUN steps on this host's network whatever networkmode says.
    const buildsOnHostNetwork = (await engineIdentity(connection.docker as Docker)).product === 'Podman';
    const scope: EndpointScope = {
      owner: name,
      workspace,
      endpointSocket: socketPath,
      protectedPaths: scopeProtections(mounts, workspace),
      reservedPrefix: `${this.deps.names.prefix}-`,
      ...(egress ? { egress } : {}),
      publish: { ...(hostIp !== undefined ? { hostIp } : {}), anyAddress: this.deps.settings.dockerEndpointPorts() === 'any-address' },
      ...(buildsOnHostNetwork ? { buildsOnHostNetwork } : {}),
    };
    const owner = ownerFromUser(user, process.getgid?.() ?? 0);
    this.served.set(`${engine}\n${name}`, { engine, name, docker: connection.docker as Docker });
    await this.endpoints.ensure({
      engine,
      container: name,
      upstream,
      gate: policyGate({
        docker: connection.docker as Docker,
        scope,
        log: (e) => this.deps.log.info(`Docker endpoint of ${name}: ${e.message}`),
      }),
      ...(owner ? { owner } : {}),
    });
  }

  private logEvent(container: string, event: EndpointEvent): void {
    if (event.kind === 'request') {
      // Refusals are worth a line; forwarded requests are the container's own business.
      if (event.rule !== undefined) {
        this.deps.log.info(`Docker endpoint of ${container}: refused ${event.method} ${event.path} (${event.rule}, ${event.status}).`);
      }
      return;
    }
    this.deps.log[event.kind](`Docker endpoint of ${container}: ${event.message}`);
  }
}
