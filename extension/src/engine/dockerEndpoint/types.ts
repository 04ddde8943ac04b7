/**
 * The Docker endpoint's shared types (engine/dockerEndpoint/server.ts and the two modules it serves
 * requests with, dockerEndpoint/forward.ts and dockerEndpoint/hijack.ts): what the gate sees and
 * answers, the engine upstream, the endpoint's events, limits and counters. No endpoint module is
 * imported here, so each may import it.
 */
import type { Socket } from 'node:net';
import type { DOCKER_ENDPOINT_LIMITS } from '../../contract/dockerEndpoint';
import type { Refusal } from './wire';

/**
 * What the gate sees of a request: never a byte of its body. `headers` holds every value of every
 * header, by lowercased name (Node's headersDistinct: nothing joined, nothing dropped).
 */
export interface EndpointRequestHead {
  method: string;
  target: string;
  headers: Record<string, string | string[] | undefined>;
}

export type GateRefusal = { kind: 'refuse' } & Refusal;

export interface GateForward {
  kind: 'forward';
  /** The target sent to the engine (the policy may normalise it); a path. */
  target: string;
  /**
   * The request takes the connection over (attach, exec start, /session, /grpc). Only such a
   * request may come with the upgrade headers; one that comes without them goes as an ordinary
   * request, and the engine's raw stream comes back as its body (dockerode's exec start).
   */
  upgrade: boolean;
  /**
   * The only request headers sent to the engine, in place of the client's end-to-end ones; the
   * endpoint adds the framing (and the upgrade pair of a hijack) itself, and drops hop-by-hop
   * headers from these too. Absent: the client's end-to-end headers.
   */
  headers?: Record<string, string | readonly string[]>;
  /** Read the whole body (at most `maxBytes`, else 413) and let `check` decide; it may rewrite it. */
  body?: {
    maxBytes: number;
    check(body: Buffer): Promise<GateRefusal | { kind: 'forward'; body: Buffer }>;
  };
  /**
   * Told how the engine answered, once the answer is complete (e.g. to remember an exec id the
   * container created): `body` is the JSON body when the answer was JSON of at most
   * DOCKER_ENDPOINT_LIMITS.responseJsonBytes, undefined when it was empty. Not called for
   * other answers (streams, large or non-JSON bodies) nor for hijacks.
   */
  onResponse?(status: number, body: Buffer | undefined): void;
  /**
   * Read the engine's whole answer (JSON, at most `maxBytes`) and send the client what `rewrite`
   * makes of it, e.g. /info without the host's paths. An answer that cannot be read so is not
   * passed on (502): what the rewrite takes out must never reach the client by another way.
   */
  response?: { maxBytes: number; rewrite(status: number, body: Buffer): Buffer };
}

export type GateHead = GateRefusal | GateForward;

/** The policy's seat. Called with the request head before any body byte is read. */
export interface EndpointGate {
  head(req: EndpointRequestHead): Promise<GateHead>;
}

export interface EndpointTls {
  ca?: string | Buffer;
  cert?: string | Buffer;
  key?: string | Buffer;
  servername?: string;
  rejectUnauthorized?: boolean;
}

/** The real engine: a unix socket, or a TCP address (with TLS when `tls` is given). */
export type EndpointUpstream = { socketPath: string } | { host: string; port: number; tls?: EndpointTls };

export type EndpointEvent =
  | {
      kind: 'request';
      method: string;
      /** The target's path, without its query. */
      path: string;
      status: number;
      durationMs: number;
      /** The rule that refused it; absent when it was forwarded. */
      rule?: string;
      hijack?: boolean;
      detail?: string;
    }
  | { kind: 'info' | 'warn'; message: string };

export type EndpointLimits = { -readonly [K in keyof typeof DOCKER_ENDPOINT_LIMITS]: number };

export interface EndpointStats {
  /** Client connections open now. */
  open: number;
  /** Connections closed on accept or answered 503 because `maxConnections` were open. */
  overCap: number;
  requests: number;
  /** Requests refused: by the gate, or before it (framing, limits, timeouts). */
  refused: number;
  hijacks: number;
  hijacksOpen: number;
  /** Requests the engine failed (no connection, reset). */
  upstreamErrors: number;
}

export type EndpointCounters = Omit<EndpointStats, 'open'>;

/** What the hijack path needs of its endpoint. */
export interface HijackContext {
  gate: EndpointGate;
  upstream: EndpointUpstream;
  limits: EndpointLimits;
  log(event: EndpointEvent): void;
  /** Client connections, counted against the cap. */
  sockets: Set<Socket>;
  /** Connections to the engine that hijacks opened; ended with the endpoint. */
  upstreams: Set<Socket>;
  closing: boolean;
  counters: EndpointCounters;
  /** Writes a last response and closes the socket, without resetting it while the client still writes. */
  endSocket(socket: Socket, response: Buffer): void;
}
