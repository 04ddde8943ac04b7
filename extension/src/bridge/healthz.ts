/** /healthz: any method, no token; how shims and other windows tell a live bridge from a stale socket. */
import { request } from 'node:http';
import { ROUTES } from '../contract/constants';

export const HEALTHZ_BODY = '{"status":"ok"}';

/** True when a bridge answers /healthz on this unix socket within `timeoutMs`. */
export function probeHealthz(socketPath: string, timeoutMs = 1_000): Promise<boolean> {
  return new Promise((resolve) => {
    const req = request(
      { socketPath, path: ROUTES.healthz, method: 'GET', headers: { Host: 'localhost' }, timeout: timeoutMs, agent: false },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => {
          try {
            const body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as { status?: unknown };
            resolve(res.statusCode === 200 && body.status === 'ok');
          } catch {
            resolve(false);
          }
        });
        res.on('error', () => resolve(false));
      },
    );
    req.on('timeout', () => req.destroy());
    req.on('error', () => resolve(false));
    req.end();
  });
}
