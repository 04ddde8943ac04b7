/**
 * Egress policies (issue 30, docs/decisions/0056-egress-through-a-host-proxy.md): the modes, the
 * container side that the forwarder in the runtime image (images/runtime/toolbox-egress) is held
 * to by test/unit/contract.test.ts, the bounds of the host's proxy, and the proxy variables a
 * container under a policy gets.
 */

/**
 * The proxy variables a container under an egress policy gets, both spellings, all pointing at
 * the forwarder (`http://127.0.0.1:<EGRESS.proxyPort>`); NO_PROXY keeps loopback direct.
 * NODE_USE_ENV_PROXY makes Node's own fetch and http honour them (Node 22.21 / 24.5 and later).
 */
export const EGRESS_PROXY_ENV = {
  proxy: ['HTTP_PROXY', 'HTTPS_PROXY', 'ALL_PROXY', 'http_proxy', 'https_proxy', 'all_proxy'],
  noProxy: ['NO_PROXY', 'no_proxy'],
  noProxyValue: 'localhost,127.0.0.1,::1',
  nodeUseEnvProxy: 'NODE_USE_ENV_PROXY',
} as const;

/** Egress policy modes (issue 30, docs/decisions/0056-egress-through-a-host-proxy.md). `open` is upstream's: no policy. */
export const EGRESS_MODES = ['open', 'ask', 'allowlist'] as const;

/**
 * Where a container under an egress policy reaches the network: nowhere but its own loopback
 * (NetworkMode none), where a forwarder (images/runtime/toolbox-egress) listens on `proxyPort` and
 * relays each connection to the host's proxy at `containerSocket`. The host's proxy
 * (bridge/egressProxy.ts) decides, resolves and connects; the container never does. The socket's
 * directory is bound read-only, as the Docker endpoint's is (docs/decisions/0048).
 */
export const EGRESS = {
  dirPrefix: 'egress-',
  socket: 'egress.sock',
  containerDir: '/run/toolbox-egress',
  containerSocket: '/run/toolbox-egress/egress.sock',
  /** The forwarder listens on 127.0.0.1 and [::1] at this port: HTTP(S) CONNECT, plain HTTP and SOCKS5 on one port. */
  proxyPort: 3128,
  /** The forwarder program in the runtime image; the entrypoint starts it when ENV.egressSocket is set. */
  forwarder: '/usr/local/lib/toolbox/toolbox-egress',
  /** The label value of a container created under a policy (LABELS.egress). */
  enforcedLabel: 'enforced',
} as const;

/** Bounds of the host's egress proxy, against a container that may be hostile. Times in ms. */
export const EGRESS_LIMITS = {
  /** Request line and headers (HTTP), or the whole SOCKS5 greeting and request. */
  maxHeaderBytes: 16 * 1024,
  maxHeaders: 64,
  /** A request head not complete in this long is answered 408 and closed (slowloris). */
  headersMs: 10_000,
  /** How long a connection waits for the user's answer in `ask` mode; then it is denied. */
  askMs: 120_000,
  /** The host's DNS lookup and TCP connect to the destination, together. */
  connectMs: 10_000,
  /** After a CONNECT, the client's first TLS record (its ClientHello, for the SNI check) must arrive within this. */
  helloMs: 10_000,
  /** The largest ClientHello read for its SNI; a longer first record is refused. */
  helloBytes: 16 * 1024,
  /** Connections open at once per container; more are refused (503). */
  maxConnections: 256,
  /** Questions waiting at once per container in `ask` mode; more are denied without asking. */
  maxQuestions: 8,
  /** Connection log entries kept per container (newest kept). */
  logEntries: 500,
  /** A host name longer than DNS allows is refused. */
  maxHostChars: 253,
} as const;
