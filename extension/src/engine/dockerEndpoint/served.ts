/**
 * The Docker endpoints of one window (engine/dockerEndpoint/server.ts), one per workspace container:
 * started before the container is created (its directory must exist to be bind-mounted), kept
 * while the container exists, and started again after a window reload for the containers still
 * running, at the same path (plan/dockerEndpoint/socket.ts), where their mounts already point.
 *
 * The container mounts the endpoint's directory, never the socket file: a bind of a file holds
 * its inode, and the socket a reloaded window binds is a new one, so a file mount would leave a
 * running container with a dead socket (docs/decisions/0048-docker-endpoint-socket-in-a-directory-mount.md).
 *
 * Not wired into the open path yet: that join comes with the policy (plan/dockerEndpoint/policy.ts), which
 * supplies the gate of each container.
 */
import { rmSync } from 'node:fs';
import { DOCKER_ENDPOINT } from '../../contract/dockerEndpoint';
import { bareName } from '../../contract/objects';
import { planEndpointSocket, type EndpointSocketPlan } from '../../plan/dockerEndpoint/socket';
import type { EngineContext } from '../context';
import {
  startDockerEndpoint,
  type DockerEndpoint,
  type EndpointEvent,
  type EndpointGate,
  type EndpointLimits,
  type EndpointUpstream,
} from './server';
import type { SocketOwner } from './socket';

export interface EndpointHost {
  uid: number;
  platform: NodeJS.Platform;
  /** XDG_RUNTIME_DIR, as the bridge's hub reads it. */
  xdgRuntimeDir?: string;
  /** `/tmp` in production. */
  tmpRoot: string;
}

export interface EndpointSpec {
  /** The engine's identity: its endpoint URL (engine/client.ts), as the bridge keys run dirs. */
  engine: string;
  container: string;
  upstream: EndpointUpstream;
  gate: EndpointGate;
  /** The container's user as the host sees it (engine/dockerEndpoint/socket.ts); default this process's. */
  owner?: SocketOwner;
}

export interface ServedEndpoint {
  plan: EndpointSocketPlan;
  endpoint: DockerEndpoint;
}

export interface DockerEndpointsOptions {
  host: EndpointHost;
  log(container: string, event: EndpointEvent): void;
  /** Tests shorten the timeouts. */
  limits?: Partial<EndpointLimits>;
}

/** `uid:gid` (or `uid`) of a container's Config.User as the host sees it; undefined for a user name. */
export function ownerFromUser(user: string | undefined, defaultGid: number): SocketOwner | undefined {
  const m = /^([0-9]+)(?::([0-9]+))?$/.exec(user ?? '');
  if (!m) return undefined;
  return { uid: Number(m[1]), gid: m[2] !== undefined ? Number(m[2]) : defaultGid };
}

export class DockerEndpoints {
  private readonly served = new Map<string, Promise<ServedEndpoint>>();
  private disposed = false;

  constructor(private readonly options: DockerEndpointsOptions) {}

  /** Where the endpoint of `container` on `engine` lives. Pure. */
  plan(engine: string, container: string): EndpointSocketPlan {
    return planEndpointSocket({ engine, container, ...this.options.host });
  }

  /** Serves the container's endpoint; a second call for the same container gets the first one. */
  ensure(spec: EndpointSpec): Promise<ServedEndpoint> {
    if (this.disposed) return Promise.reject(new Error('The Docker endpoints have been shut down (the window is closing).'));
    const container = bareName(spec.container);
    const key = `${spec.engine}\n${container}`;
    const known = this.served.get(key);
    if (known !== undefined) return known;
    const plan = this.plan(spec.engine, container);
    const started = startDockerEndpoint({
      socketPath: plan.socketPath,
      upstream: spec.upstream,
      gate: spec.gate,
      log: (event) => this.options.log(container, event),
      ...(spec.owner !== undefined ? { owner: spec.owner } : {}),
      ...(this.options.limits !== undefined ? { limits: this.options.limits } : {}),
    }).then((endpoint) => ({ plan, endpoint }));
    this.served.set(key, started);
    started.catch(() => this.served.delete(key));
    return started;
  }

  /** The served endpoint of a container, if this window serves one. */
  get(engine: string, container: string): Promise<ServedEndpoint> | undefined {
    return this.served.get(`${engine}\n${bareName(container)}`);
  }

  /**
   * Stops serving a container's endpoint. `removeDir` once the container is gone: nothing mounts
   * the directory any more. Without it (a container that only stopped) the next start finds it.
   */
  async release(engine: string, container: string, opts: { removeDir: boolean }): Promise<void> {
    const key = `${engine}\n${bareName(container)}`;
    const served = this.served.get(key);
    this.served.delete(key);
    if (served !== undefined) await (await served.catch(() => undefined))?.endpoint.close();
    if (opts.removeDir) rmSync(this.plan(engine, container).dir, { recursive: true, force: true });
  }

  /**
   * After a window reload: serves again the endpoint of every running container of ours on this
   * engine whose mounts show it was created with one (its planned directory at
   * DOCKER_ENDPOINT.containerDir). The socket is owned by the container's own user (its
   * Config.User). Returns the names served; a container whose endpoint fails is logged and skipped.
   */
  async adoptRunning(
    ctx: EngineContext,
    args: { engine: string; upstream: EndpointUpstream; gateFor(container: string): EndpointGate },
  ): Promise<string[]> {
    const listed = await ctx.docker.listContainers({ filters: { name: [ctx.names.prefix], status: ['running'] } });
    const adopted: string[] = [];
    for (const c of listed) {
      const name = bareName(c.Names?.[0] ?? '');
      if (!ctx.names.isOurs(name, c.Labels)) continue;
      const plan = this.plan(args.engine, name);
      const mounted = (c.Mounts ?? []).some((m) => m.Source === plan.dir && m.Destination === DOCKER_ENDPOINT.containerDir);
      if (!mounted) continue;
      try {
        const info = await ctx.docker.getContainer(c.Id).inspect();
        const owner = ownerFromUser(info.Config?.User, process.getgid?.() ?? 0);
        await this.ensure({
          engine: args.engine,
          container: name,
          upstream: args.upstream,
          gate: args.gateFor(name),
          ...(owner ? { owner } : {}),
        });
        adopted.push(name);
      } catch (error) {
        this.options.log(name, {
          kind: 'warn',
          message: `The Docker endpoint of ${name} could not be served again: ${(error as Error).message}`,
        });
      }
    }
    return adopted;
  }

  /** The window goes away: every endpoint stops; directories stay for the containers that still mount them. */
  async dispose(): Promise<void> {
    this.disposed = true;
    const all = [...this.served.values()];
    this.served.clear();
    await Promise.all(all.map((p) => p.then((s) => s.endpoint.close()).catch(() => undefined)));
  }
}
