/**
 * The per-container Docker Engine API endpoint (issue 27): where its socket is, on the host and in
 * the container, and the bounds of each endpoint.
 */

/**
 * The per-container Docker Engine API endpoint (issue 27; engine/dockerEndpoint/server.ts serves it,
 * plan/dockerEndpoint/socket.ts places it): a unix socket the extension serves on the host, forwarding
 * to the real engine once a policy has seen each request, instead of the host's own socket.
 *
 * Host side: `<run dirs' parent>/docker-<run id>/docker.sock`, the parent and the 8-hex run id
 * being the bridge's (bridge/state.ts chooseRunDir, workspaceRunId: engine endpoint and container
 * name, docs/decisions/0043). Container side: that directory is bind-mounted read-only at
 * `containerDir` and DOCKER_HOST names the socket in it. The directory, not the socket file, is
 * the mount, because a bind of a socket file holds that file's inode: a socket bound again after
 * a window reload is a new inode, which a running container would never see
 * (docs/decisions/0048-docker-endpoint-socket-in-a-directory-mount.md).
 */
export const DOCKER_ENDPOINT = {
  dirPrefix: 'docker-',
  socket: 'docker.sock',
  containerDir: '/run/toolbox-docker',
  containerSocket: '/run/toolbox-docker/docker.sock',
} as const;

/**
 * Bounds of one Docker endpoint, all against a container that may be hostile. Times in ms.
 * `headersMs` closes a connection whose request head is not complete in time (slowloris);
 * `idleMs` one that sends no next request on a kept-alive connection; `bodyMs` a body the policy
 * asked to see that does not arrive in full (other bodies are streams: a `docker build` context,
 * `docker load`, and have no deadline, as a request's total time has none: `docker logs -f`,
 * `/events` and `docker wait` last as long as they must). `upstreamHeadMs` is how long a hijack
 * (attach, exec start, BuildKit's session) waits for the engine's answer before the splice.
 */
export const DOCKER_ENDPOINT_LIMITS = {
  /**
   * Request line and headers together: a target of `maxTargetBytes` and the CLI's X-Registry-Config,
   * which carries every registry login.
   */
  maxHeaderBytes: 128 * 1024,
  maxHeaders: 100,
  /** dockerode (Testcontainers' client) repeats a create's whole options in its query (plan/dockerEndpoint/policy.ts's ENDPOINT_LIMITS). */
  maxTargetBytes: 64 * 1024,
  /** Open connections per endpoint (each holds a second one to the engine). */
  maxConnections: 64,
  /** Connections over the cap kept open at once to be told so (503); the rest are closed on accept. */
  refusing: 16,
  /** The body of a hijack request (exec start's small JSON) when the policy set no bound of its own. */
  upgradeBodyBytes: 64 * 1024,
  /** The largest JSON response the policy's onResponse is given. */
  responseJsonBytes: 64 * 1024,
  headersMs: 10_000,
  idleMs: 30_000,
  bodyMs: 30_000,
  upstreamHeadMs: 60_000,
} as const;
