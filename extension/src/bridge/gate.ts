/**
 * The checks every request passes before a route sees it: the Host header (DNS rebinding), the
 * bearer token (constant time) and the token buckets.
 */
import { createHash, timingSafeEqual } from 'node:crypto';
import { HOST_DOCKER_INTERNAL } from '../contract/upstream';

const LOCAL_HOST_NAMES = new Set(['localhost', '127.0.0.1', HOST_DOCKER_INTERNAL]);

/**
 * A browser tricked by DNS rebinding sends its own host name; only names a shim uses pass.
 * Over TCP the port must be the one we listen on; over the unix socket curl sends a bare
 * `localhost` (no port).
 */
export function isAllowedHostHeader(host: string | undefined, tcpPort: number | undefined): boolean {
  if (host === undefined) return false;
  const match = /^([^:]+)(?::(\d+))?$/.exec(host.trim().toLowerCase());
  if (!match) return false;
  const [, name, port] = match;
  if (!LOCAL_HOST_NAMES.has(name as string)) return false;
  if (tcpPort === undefined) return port === undefined;
  return port !== undefined && Number(port) === tcpPort;
}

/** The token from `Authorization: Bearer <token>`, or undefined. */
export function bearerToken(header: string | undefined): string | undefined {
  const match = /^Bearer +(\S+) *$/i.exec(header ?? '');
  return match?.[1];
}

function digest(value: string): Buffer {
  return createHash('sha256').update(value).digest();
}

/**
 * Finds the candidate whose token matches, comparing against every candidate in constant time
 * (hashing first makes lengths equal, so a short or long token leaks nothing either).
 */
export function matchToken<T extends { token: string }>(presented: string | undefined, candidates: Iterable<T>): T | undefined {
  if (presented === undefined) return undefined;
  const given = digest(presented);
  let found: T | undefined;
  for (const candidate of candidates) {
    if (timingSafeEqual(given, digest(candidate.token)) && found === undefined) found = candidate;
  }
  return found;
}

export interface BucketRate {
  perSecond: number;
  burst: number;
}

/** A token bucket: `burst` requests at once, refilled at `perSecond`. */
export class TokenBucket {
  private tokens: number;
  private last: number;

  constructor(
    private readonly rate: BucketRate,
    private readonly now: () => number,
  ) {
    this.tokens = rate.burst;
    this.last = now();
  }

  take(): boolean {
    const t = this.now();
    this.tokens = Math.min(this.rate.burst, this.tokens + ((t - this.last) / 1000) * this.rate.perSecond);
    this.last = t;
    if (this.tokens < 1) return false;
    this.tokens -= 1;
    return true;
  }
}
