/**
 * Upstream's `-p/--publish` parser: the same specs as `docker run -p`, accepted and refused as the
 * CLI does. The CLI hands each spec to go-connections' `nat.ParsePortSpec` and wraps a refusal as
 * `invalid --publish "<spec>": <reason>` (`internal/sessionplan/plan.go` parsePublishSpecs); a
 * spec without a host IP publishes on 127.0.0.1 (defaultHostIP). test/unit/publish.test.ts holds
 * this file to those two, citing them by file and commit.
 *
 * Pure: no I/O. The "Open Toolbox Shell with Ports…" input box validates with it as the user types,
 * and the backend parses the same text again before planning.
 */
import type * as net from 'node:net';
import type { PortSpec } from '../contract/types';

/** Ports publish on loopback unless the spec names a host IP (upstream defaultHostIP). */
export const DEFAULT_PUBLISH_HOST_IP = '127.0.0.1';

type Protocol = NonNullable<PortSpec['protocol']>;
const PROTOCOLS: readonly string[] = ['tcp', 'udp', 'sctp'] satisfies Protocol[];

/** The specs of one input: separated by commas and/or white space (`8080, 127.0.0.1:9229:9229`). */
export function splitPublishList(text: string): string[] {
  return text.split(/[\s,]+/).filter((s) => s !== '');
}

/** Parses every spec, upstream's order kept; throws the first refusal, worded as upstream's. */
export function parsePublishSpecs(specs: readonly string[]): PortSpec[] {
  const out: PortSpec[] = [];
  for (const spec of specs) {
    try {
      out.push(...parsePortSpec(spec));
    } catch (err) {
      throw new Error(`invalid --publish ${goQuote(spec)}: ${(err as Error).message}`, { cause: err });
    }
  }
  return out;
}

/** The spec's mappings, one per container port (a range gives several), as `nat.ParsePortSpec`. */
export function parsePortSpec(raw: string): PortSpec[] {
  const [rawIp, hostPort, containerPart] = splitParts(raw);
  let ip = rawIp;
  const slash = containerPart.indexOf('/');
  const containerPort = slash < 0 ? containerPart : containerPart.slice(0, slash);
  if (containerPort === '') throw new Error(`no port specified: ${raw}<empty>`);
  const proto = (slash < 0 || containerPart.slice(slash + 1) === '' ? 'tcp' : containerPart.slice(slash + 1)).toLowerCase();
  if (!PROTOCOLS.includes(proto)) throw new Error(`invalid proto: ${proto}`);

  if (ip !== '' && ip.startsWith('[')) ip = stripBrackets(ip);
  if (ip !== '' && !isGoIP(ip)) throw new Error(`invalid IP address: ${ip}`);

  const container = portRange(containerPort);
  if (!container) throw new Error(`invalid containerPort: ${containerPort}`);
  let host: [number, number] | undefined;
  if (hostPort !== '') {
    host = portRange(hostPort);
    if (!host) throw new Error(`invalid hostPort: ${hostPort}`);
    // A host range with a single container port is the range Docker picks the host port from.
    if (container[1] - container[0] !== host[1] - host[0] && container[1] !== container[0]) {
      throw new Error(`invalid ranges specified for container and host Ports: ${containerPort} and ${hostPort}`);
    }
  }

  const count = container[1] - container[0] + 1;
  const mappings: PortSpec[] = [];
  for (let i = 0; i < count; i++) {
    let h = '';
    if (host) {
      h = String(host[0] + i);
      if (count === 1 && host[0] !== host[1]) h += `-${host[1]}`;
    }
    mappings.push({
      hostIp: ip === '' ? DEFAULT_PUBLISH_HOST_IP : ip,
      hostPort: h,
      containerPort: container[0] + i,
      protocol: proto as Protocol,
    });
  }
  return mappings;
}

/** One line per mapping for the input box: `127.0.0.1:8080 → 80/tcp`, `127.0.0.1:(Docker picks) → 80/tcp`. */
export function describePortSpec(p: PortSpec): string {
  const ip = p.hostIp ?? DEFAULT_PUBLISH_HOST_IP;
  const host = ip.includes(':') ? `[${ip}]` : ip;
  return `${host}:${p.hostPort === '' ? 'any free port' : p.hostPort} → ${p.containerPort}/${p.protocol ?? 'tcp'}`;
}

/** go-connections splitParts: the last two `:`-separated parts are the ports, the rest the IP. */
function splitParts(raw: string): [string, string, string] {
  const parts = raw.split(':');
  const n = parts.length;
  switch (n) {
    case 1:
      return ['', '', parts[0]!];
    case 2:
      return ['', parts[0]!, parts[1]!];
    case 3:
      return [parts[0]!, parts[1]!, parts[2]!];
    default:
      return [parts.slice(0, n - 2).join(':'), parts[n - 2]!, parts[n - 1]!];
  }
}

/** `[::1]` → `::1`, as Go's net.SplitHostPort(ip + ":") does; its refusals keep Go's words. */
function stripBrackets(ip: string): string {
  const hostport = `${ip}:`;
  const fail = (why: string) => new Error(`invalid IP address ${ip}: address ${hostport}: ${why}`);
  const end = hostport.indexOf(']');
  if (end < 0) throw fail("missing ']' in address");
  const lastColon = hostport.lastIndexOf(':');
  if (end + 1 === hostport.length) throw fail('missing port in address');
  if (end + 1 !== lastColon) throw fail(hostport[end + 1] === ':' ? 'too many colons in address' : 'missing port in address');
  if (hostport.indexOf('[', 1) >= 0) throw fail("unexpected '[' in address");
  if (hostport.indexOf(']', end + 1) >= 0) throw fail("unexpected ']' in address");
  return hostport.slice(1, end);
}

/**
 * node:net, required on first use: the activation bundle imports this file (the Workspaces view's
 * port links, the ports command), and a window that never parses a port needs no node:net.
 */
function nodeNet(): typeof net {
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  return require('node:net') as typeof net;
}

/** Go's net.ParseIP: dotted IPv4 without leading zeros, or IPv6 without a zone. */
function isGoIP(ip: string): boolean {
  const { isIPv4, isIPv6 } = nodeNet();
  if (isIPv4(ip)) return true;
  return !ip.includes('%') && isIPv6(ip);
}

/** go-connections parsePortRange: `80` or `8000-8010`, each 0–65535 (Go's ParseInt: an optional sign, decimal digits). */
function portRange(ports: string): [number, number] | undefined {
  if (ports === '') return undefined;
  const dash = ports.indexOf('-');
  const start = portNumber(dash < 0 ? ports : ports.slice(0, dash));
  if (start === undefined) return undefined;
  if (dash < 0 || ports.slice(0, dash) === ports.slice(dash + 1)) return [start, start];
  const end = portNumber(ports.slice(dash + 1));
  if (end === undefined || end < start) return undefined;
  return [start, end];
}

function portNumber(raw: string): number | undefined {
  if (!/^[+-]?[0-9]+$/.test(raw)) return undefined;
  const n = Number(raw);
  return n >= 0 && n <= 65535 ? n : undefined;
}

/** Go's %q for the spec: a double-quoted string with Go's escapes (JSON's, for what a user types). */
function goQuote(s: string): string {
  return JSON.stringify(s);
}

/** A port a container publishes now, as the Workspaces view lists it. */
export interface PublishedPort {
  containerPort: number;
  protocol: Protocol;
  /** As Docker reports it: `127.0.0.1`, `0.0.0.0`, `::`, … */
  hostIp: string;
  hostPort: number;
}

/** At most this many rows per container: a published range can be thousands of ports. */
export const PUBLISHED_PORTS_SHOWN = 64;

/**
 * The ports a container publishes, from inspect: `NetworkSettings.Ports` while it runs (the host
 * ports Docker picked included), else `HostConfig.PortBindings` (what it will publish). Engine data
 * is read as untrusted: malformed keys and values are skipped, the list is bounded, and a port
 * Docker publishes on both 0.0.0.0 and :: is one row. Sorted by container port, then protocol.
 */
export function publishedPorts(networkPorts: unknown, portBindings: unknown): PublishedPort[] {
  const source = isRecord(networkPorts) && Object.keys(networkPorts).length > 0 ? networkPorts : portBindings;
  if (!isRecord(source)) return [];
  const { isIPv4, isIPv6 } = nodeNet();
  const out: PublishedPort[] = [];
  const seen = new Set<string>();
  for (const [key, bindings] of Object.entries(source)) {
    const m = /^([0-9]{1,5})\/(tcp|udp|sctp)$/.exec(key);
    if (!m || !Array.isArray(bindings)) continue;
    const containerPort = Number(m[1]);
    if (containerPort > 65535) continue;
    for (const b of bindings.slice(0, PUBLISHED_PORTS_SHOWN)) {
      if (!isRecord(b) || typeof b.HostPort !== 'string' || !/^[0-9]{1,5}$/.test(b.HostPort)) continue;
      const hostPort = Number(b.HostPort);
      const hostIp =
        typeof b.HostIp === 'string' && b.HostIp.length <= 64 && (b.HostIp === '' || isIPv4(b.HostIp) || isIPv6(b.HostIp))
          ? b.HostIp || '0.0.0.0'
          : undefined;
      if (hostIp === undefined || hostPort < 1 || hostPort > 65535) continue;
      const id = `${containerPort}/${m[2]}:${hostPort}`;
      if (seen.has(id)) continue;
      seen.add(id);
      out.push({ containerPort, protocol: m[2] as Protocol, hostIp, hostPort });
    }
  }
  out.sort((a, b) => a.containerPort - b.containerPort || a.protocol.localeCompare(b.protocol) || a.hostPort - b.hostPort);
  return out.slice(0, PUBLISHED_PORTS_SHOWN);
}

/**
 * The address a browser on this host opens for a published port: loopback for a port published
 * on every interface (0.0.0.0, ::) or on loopback, else the host IP it is bound to.
 */
export function publishedPortUrl(p: Pick<PublishedPort, 'hostIp' | 'hostPort'>): string {
  const ip = p.hostIp;
  const host = ip === '' || ip === '0.0.0.0' || ip === '::' || ip.startsWith('127.') ? '127.0.0.1' : ip.includes(':') ? `[${ip}]` : ip;
  return `http://${host}:${p.hostPort}/`;
}

function isRecord(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}
