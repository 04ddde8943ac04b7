/**
 * The rig of the engine tests of a workspace container's Docker endpoint (engine/docker-endpoint-*
 * and engine/left-behind.test.ts): a folder in the test namespace's home, the endpoint's socket
 * planned for a workspace container named `owner`, the endpoint started in front of the real engine,
 * `sleep infinity` containers (the workspace container among them: its folder at /workspace, the
 * endpoint's directory read-only, DOCKER_HOST pointing there, the host's docker CLI bound in), the
 * docker CLI on the host and inside that container, and the clean-up of what went through it.
 */
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, realpathSync } from 'node:fs';
import { join } from 'node:path';
import type Docker from 'dockerode';
import { DOCKER_ENDPOINT } from '../../extension/src/contract/dockerEndpoint';
import { startDockerEndpoint, type DockerEndpoint, type EndpointGate } from '../../extension/src/engine/dockerEndpoint/server';
import type { EndpointScope } from '../../extension/src/plan/dockerEndpoint/routes';
import { planEndpointSocket } from '../../extension/src/plan/dockerEndpoint/socket';
import { TEST_LABEL, type TestNamespace } from './docker';
import { spawnRun, type Run } from './run';

/** The engine's own socket, which the endpoint forwards to. */
export const ENGINE_SOCKET = process.env.TOOLBOX_TEST_DOCKER_SOCKET ?? '/var/run/docker.sock';
/** The image of every container the rig starts (present locally: tests never pull). */
export const BASE_IMAGE = 'debian:bookworm-slim';
/** The host's docker CLI, bound into the workspace container. */
export const HOST_CLI = '/usr/bin/docker';

export interface EndpointRig {
  /** The /tmp directory the endpoint's socket directory is planned under (the test removes it). */
  runRoot: string;
  /** `<home>/proj`, as the test made it. */
  folder: string;
  /** The folder's real path: the workspace the gate's scope names. */
  workspace: string;
  plan: ReturnType<typeof planEndpointSocket>;
  /** The test's own user: it owns the folder and the endpoint's socket, and the workspace container runs as it. */
  user: { uid: number; gid: number };
  /** The gate's scope for the workspace container: its owner, workspace and endpoint socket, no protected paths. */
  scope: EndpointScope;
  /** Fails the test unless BASE_IMAGE is present locally (tests never pull). */
  requireBaseImage(): Promise<void>;
  /** Starts the endpoint in front of the engine, judged by `gate`, its socket the rig user's. */
  startEndpoint(gate: EndpointGate): Promise<DockerEndpoint>;
  /**
   * Creates and starts container `name`: BASE_IMAGE running `sleep infinity`, labelled
   * TEST_LABEL=<the namespace's prefix> (plus `options.Labels`); the rest of `options` is added to that
   * body. Made through `engine`: the engine itself unless given (a client of the endpoint makes it as
   * the workspace would).
   */
  startSleeper(name: string, options?: Partial<Docker.ContainerCreateOptions>, engine?: Docker): Promise<void>;
  /** Body options that run a container as the rig's user, with HOME=/tmp (and `env`). */
  asUser(env?: string[]): Partial<Docker.ContainerCreateOptions>;
  /**
   * Body options of the workspace container, as the open path makes it: run as the rig's user, its
   * folder at /workspace, the endpoint's directory read-only, DOCKER_HOST at the endpoint's socket,
   * the host's docker CLI bound in; `hostConfig` adds to the host config (NetworkMode, say).
   */
  workspaceContainer(hostConfig?: Docker.HostConfig): Partial<Docker.ContainerCreateOptions>;
  /** The host's docker CLI against the engine itself (HOME the namespace's home). */
  host(args: string[], timeoutMs?: number): Promise<Run>;
  /** The docker CLI inside the workspace container, through its endpoint, with `env` set for it. */
  inside(args: string[], env?: Record<string, string>, timeoutMs?: number): Promise<Run>;
  /** Force-removes, errors ignored, every container, volume or image whose label `label` names the workspace container. */
  removeLabelled(kind: 'containers' | 'volumes' | 'images', label: string): Promise<void>;
}

/**
 * The rig of workspace container `owner` in namespace `ns`: makes `<ns.home>/proj` (then lets `seed`
 * fill it) and plans the endpoint's socket under a fresh /tmp directory.
 */
export function endpointRig(ns: TestNamespace, owner: string, seed: (folder: string) => void = () => undefined): EndpointRig {
  const d = ns.docker;
  const runRoot = mkdtempSync(`/tmp/${ns.names.prefix}-`);
  const folder = join(ns.home, 'proj');
  mkdirSync(folder, { recursive: true });
  seed(folder);
  const workspace = realpathSync(folder);
  const plan = planEndpointSocket({
    engine: `unix://${ENGINE_SOCKET}`,
    container: owner,
    uid: process.getuid!(),
    platform: process.platform,
    tmpRoot: runRoot,
  });
  const user = { uid: process.getuid!(), gid: process.getgid!() };
  const asUser = (env: string[] = []): Partial<Docker.ContainerCreateOptions> => ({
    User: `${user.uid}:${user.gid}`,
    Env: ['HOME=/tmp', ...env],
  });
  const host = (args: string[], timeoutMs?: number) =>
    spawnRun(HOST_CLI, args, { HOME: ns.home, DOCKER_HOST: `unix://${ENGINE_SOCKET}` }, timeoutMs);
  return {
    runRoot,
    folder,
    workspace,
    plan,
    user,
    scope: { owner, workspace, endpointSocket: plan.socketPath, protectedPaths: [] },
    async requireBaseImage() {
      await d
        .getImage(BASE_IMAGE)
        .inspect()
        .catch(() => assert.fail(`${BASE_IMAGE} must be present locally (tests never pull).`));
    },
    startEndpoint: (gate) =>
      startDockerEndpoint({
        socketPath: plan.socketPath,
        upstream: { socketPath: ENGINE_SOCKET },
        gate,
        log: () => undefined,
        owner: user,
      }),
    async startSleeper(name, options = {}, engine = d) {
      const c = await engine.createContainer({
        name,
        Image: BASE_IMAGE,
        Cmd: ['sleep', 'infinity'],
        ...options,
        Labels: { [TEST_LABEL]: ns.names.prefix, ...options.Labels },
      });
      await c.start();
    },
    asUser,
    workspaceContainer: (hostConfig = {}) => ({
      ...asUser([`DOCKER_HOST=unix://${DOCKER_ENDPOINT.containerSocket}`]),
      HostConfig: {
        ...hostConfig,
        Binds: [`${workspace}:/workspace`, `${plan.dir}:${DOCKER_ENDPOINT.containerDir}:ro`, `${HOST_CLI}:/usr/bin/docker:ro`],
      },
    }),
    host,
    inside: (args, env = {}, timeoutMs) =>
      host(['exec', ...Object.entries(env).flatMap(([k, v]) => ['-e', `${k}=${v}`]), owner, 'docker', ...args], timeoutMs),
    async removeLabelled(kind, label) {
      const filters = { label: [`${label}=${owner}`] };
      if (kind === 'containers') {
        const list = await d.listContainers({ all: true, filters }).catch(() => []);
        await Promise.all(
          list.map((c) =>
            d
              .getContainer(c.Id)
              .remove({ force: true })
              .catch(() => undefined),
          ),
        );
      } else if (kind === 'volumes') {
        const list = (await d.listVolumes({ filters }).catch(() => ({ Volumes: [] }))).Volumes ?? [];
        await Promise.all(
          list.map((v) =>
            d
              .getVolume(v.Name)
              .remove({ force: true })
              .catch(() => undefined),
          ),
        );
      } else {
        for (const image of await d.listImages({ filters }).catch(() => []))
          await d
            .getImage(image.Id)
            .remove({ force: true })
            .catch(() => undefined);
      }
    },
  };
}
