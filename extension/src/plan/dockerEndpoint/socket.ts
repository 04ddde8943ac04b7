/**
 * Where a workspace container's Docker endpoint lives (issue 27): the host socket the extension
 * serves for it, the directory the container mounts, and the DOCKER_HOST it is given. Pure: the
 * engine (engine/dockerEndpoint/server.ts) creates the directory and binds the socket.
 *
 * The path is a function of the engine endpoint and the container name only, so a window that
 * comes back after a reload finds the endpoint of a container that is still running without
 * asking the engine, and serves it again where the container's mount already points. It sits
 * next to the bridge's run dir, under the same parent and the same 8-hex id
 * (bridge/state.ts chooseRunDir and workspaceRunId; docs/decisions/0043): the same name on two
 * engines is two endpoints, and one look at the parent shows which directories belong together.
 */
import { createHash } from 'node:crypto';
import { isAbsolute, join } from 'node:path';
import { DOCKER_ENDPOINT } from '../../contract/dockerEndpoint';
import { ENV } from '../../contract/shims';

export interface EndpointSocketInput {
  /** The engine's identity, its endpoint URL as engine/client.ts resolves it (`unix:///var/run/docker.sock`). */
  engine: string;
  /** The container's name (without the `/` the Engine API puts in front). */
  container: string;
  /** The host user's uid: the fallback parent is `/tmp/toolbox-<uid>`. */
  uid: number;
  platform: NodeJS.Platform;
  /** XDG_RUNTIME_DIR, preferred when set, absolute and short enough. */
  xdgRuntimeDir?: string;
  /** Parent of `toolbox-<uid>` otherwise (`/tmp`, not os.tmpdir(): macOS's is long). */
  tmpRoot: string;
  /**
   * The directory's prefix, the socket's name and where the container sees it: the Docker
   * endpoint's (DOCKER_ENDPOINT) unless given; the egress proxy's socket lives the same way (EGRESS).
   */
  files?: { dirPrefix: string; socket: string; containerDir: string };
}

export interface EndpointSocketPlan {
  /** The per-user parent of the run dirs (private: 0700, never mounted). */
  parent: string;
  /** `<parent>/docker-<run id>`: holds only the socket; the container mounts it read-only. */
  dir: string;
  socketPath: string;
  /** The bind that gives the container its endpoint. */
  mount: { source: string; target: string; readonly: true };
  /** `DOCKER_HOST=unix://…` for the container's environment. */
  env: string;
}

/** sun_path bytes including the terminating NUL; macOS and the BSDs have 104. */
const SUN_PATH_BYTES: Partial<Record<NodeJS.Platform, number>> = { linux: 108 };
const SUN_PATH_BYTES_DEFAULT = 104;

/** The longest socket path, in bytes, a unix socket can be bound at on `platform`. */
export function maxEndpointSocketBytes(platform: NodeJS.Platform): number {
  return (SUN_PATH_BYTES[platform] ?? SUN_PATH_BYTES_DEFAULT) - 1;
}

/** The bridge's run id for a name on an engine (bridge/state.ts workspaceRunId with an engine). */
export function endpointRunId(engine: string, container: string): string {
  return createHash('sha256').update(`${engine}\n${container}`).digest('hex').slice(0, 8);
}

/**
 * The endpoint of `container` on `engine`. Throws when the engine or the name is empty, or when
 * even the `/tmp` fallback would not fit a unix socket path (a bind would truncate it).
 */
export function planEndpointSocket(input: EndpointSocketInput): EndpointSocketPlan {
  const container = input.container.startsWith('/') ? input.container.slice(1) : input.container;
  if (input.engine.trim() === '' || container === '') {
    throw new Error('A Docker endpoint needs the engine endpoint and the container name; one of them is empty.');
  }
  const files = input.files ?? DOCKER_ENDPOINT;
  const name = `${files.dirPrefix}${endpointRunId(input.engine, container)}`;
  const parents: string[] = [];
  if (input.xdgRuntimeDir && isAbsolute(input.xdgRuntimeDir)) parents.push(join(input.xdgRuntimeDir, 'toolbox'));
  parents.push(join(input.tmpRoot, `toolbox-${input.uid}`));
  const max = maxEndpointSocketBytes(input.platform);
  for (const parent of parents) {
    const dir = join(parent, name);
    const socketPath = join(dir, files.socket);
    if (Buffer.byteLength(socketPath) <= max) {
      return {
        parent,
        dir,
        socketPath,
        mount: { source: dir, target: files.containerDir, readonly: true },
        env: `${ENV.dockerHost}=unix://${DOCKER_ENDPOINT.containerSocket}`,
      };
    }
  }
  const last = join(parents[parents.length - 1] as string, name, files.socket);
  throw new Error(
    `The Docker endpoint's socket path ${last} is ${Buffer.byteLength(last)} bytes, over the ${max}-byte unix socket limit on ` +
      `${input.platform}; binding it would truncate it. Keep XDG_RUNTIME_DIR and the temp root short (/tmp).`,
  );
}
