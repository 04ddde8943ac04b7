/** Loopback TCP ports in tests: a free one, and whether one takes a connection. */
import { connect, createServer } from 'node:net';

/** A loopback TCP port that was free a moment ago (bound to port 0, read, closed). */
export async function freePort(): Promise<number> {
  const srv = createServer();
  await new Promise<void>((resolve, reject) => {
    srv.once('error', reject);
    srv.listen(0, '127.0.0.1', resolve);
  });
  const port = (srv.address() as { port: number }).port;
  await new Promise<void>((resolve) => srv.close(() => resolve()));
  return port;
}

/** A TCP connection from the host to 127.0.0.1:<port>: 'connected', or the error's code. */
export function tryConnect(port: number): Promise<string> {
  return new Promise((resolve) => {
    const s = connect({ host: '127.0.0.1', port });
    s.once('connect', () => {
      s.destroy();
      resolve('connected');
    });
    s.once('error', (e: NodeJS.ErrnoException) => resolve(e.code ?? e.message));
  });
}
