/**
 * /healthz: any method, no token; how shims and other windows tell a live bridge from a stale
 * socket. The socket's directory is writable from the container, so a window that finds
 * something answering there asks it to prove it is one of ours: it sends a random challenge,
 * and a bridge of this user answers with an HMAC of its socket path and the challenge, keyed by
 * the hub key (a host-only file the container cannot read, see state.ts ensureHubKey).
 */
import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import { request } from 'node:http';
import { ROUTES } from '../contract/shims';

/**
 * The liveness probe of a socket found at a bridge path. The run dir is writable from the
 * container, so whatever answers there is untrusted: the probe gives up after `totalMs`, never
 * reads more than `maxHeaderBytes` of headers and no body, and only a reply carrying the proof
 * header (an HMAC, keyed by a secret the container cannot read, of the socket path and the
 * challenge it was sent) counts as one of our bridges.
 */
export const BRIDGE_PROBE = {
  totalMs: 1_000,
  maxHeaderBytes: 4096,
  challengeHeader: 'x-toolbox-challenge',
  proofHeader: 'x-toolbox-proof',
  /** The host-only secret, in the run dirs' parent (never mounted into a container). */
  keyFile: 'hub.key',
} as const;

export const HEALTHZ_BODY = '{"status":"ok"}';

const CHALLENGE = /^[0-9a-f]{64}$/;

export function isChallenge(value: unknown): value is string {
  return typeof value === 'string' && CHALLENGE.test(value);
}

/** The proof a bridge listening on `socketPath` gives for `challenge`. */
export function healthzProof(key: Buffer, socketPath: string, challenge: string): string {
  return createHmac('sha256', key).update(`toolbox-bridge-healthz-v1\0${socketPath}\0${challenge}`).digest('hex');
}

export type ProbeOutcome =
  /** A bridge holding the hub key serves this socket. */
  | { kind: 'ours' }
  /** Nothing listens (no socket file, or nobody accepts on it): a stale socket at most. */
  | { kind: 'none' }
  /** Something answered but did not prove it is ours: treat it as hostile. */
  | { kind: 'foreign'; why: string };

export interface ProbeLimits {
  totalMs: number;
  maxHeaderBytes: number;
}

/**
 * Asks whatever listens on `socketPath` to prove it is one of our bridges. Bounded: the whole
 * exchange is abandoned after `totalMs` (not an idle timeout: a peer that keeps sending is cut
 * off too), response headers are capped at `maxHeaderBytes`, and the body is never read.
 */
export function probeBridge(socketPath: string, key: Buffer, limits: ProbeLimits = BRIDGE_PROBE): Promise<ProbeOutcome> {
  const challenge = randomBytes(32).toString('hex');
  const expected = Buffer.from(healthzProof(key, socketPath, challenge), 'utf8');
  return new Promise((resolve) => {
    let settled = false;
    const settle = (outcome: ProbeOutcome): void => {
      if (settled) return;
      settled = true;
      clearTimeout(deadline);
      req.destroy();
      resolve(outcome);
    };
    const req = request(
      {
        socketPath,
        path: ROUTES.healthz,
        method: 'GET',
        headers: { Host: 'localhost', [BRIDGE_PROBE.challengeHeader]: challenge },
        agent: false,
        maxHeaderSize: limits.maxHeaderBytes,
      },
      (res) => {
        const proof = res.headers[BRIDGE_PROBE.proofHeader];
        res.destroy(); // the body is never read
        const given = Buffer.from(typeof proof === 'string' ? proof : '', 'utf8');
        const valid = res.statusCode === 200 && given.length === expected.length && timingSafeEqual(given, expected);
        settle(valid ? { kind: 'ours' } : { kind: 'foreign', why: `it answered HTTP ${res.statusCode ?? '?'} without a valid proof` });
      },
    );
    const deadline = setTimeout(() => settle({ kind: 'foreign', why: `it did not answer within ${limits.totalMs} ms` }), limits.totalMs);
    req.on('error', (error: NodeJS.ErrnoException) => {
      const code = error.code ?? '';
      if (code === 'ENOENT' || code === 'ECONNREFUSED') settle({ kind: 'none' });
      else settle({ kind: 'foreign', why: `its answer was unusable (${code || error.message})` });
    });
    req.end();
  });
}
