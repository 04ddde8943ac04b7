/**
 * The other side of bench/egressProxy.ts, in a process of its own as a container and a server
 * would be: the loopback origin servers and the client. Given the proxy's socket, it times each
 * contestant (interleaved) and prints the samples as one JSON line. The proxy runs in the parent
 * alone, as it does in the extension host.
 */
import { connect, createServer, type AddressInfo, type Server, type Socket } from 'node:net';
import { interleave } from './harness';

const TOTAL = 100 * 2 ** 20;
const CHUNK = Buffer.alloc(2 ** 20, 'x');

/** Writes TOTAL bytes to each connection, with back-pressure, then ends it. */
function source(): Server {
  return createServer((s) => {
    s.on('error', () => undefined);
    let sent = 0;
    const pump = (): void => {
      while (sent < TOTAL) {
        sent += CHUNK.length;
        if (!s.write(CHUNK)) return void s.once('drain', pump);
      }
      s.end();
    };
    pump();
  });
}

/** Accepts each connection and reads it (the client closes it). */
function sink(): Server {
  return createServer((s) => s.on('error', () => undefined).resume());
}

function listen(server: Server): Promise<number> {
  return new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve((server.address() as AddressInfo).port)));
}

/** Counts what arrives on `s` until it closes. */
function drain(s: Socket, initial = 0): Promise<number> {
  return new Promise((resolve, reject) => {
    let n = initial;
    s.on('data', (c: Buffer) => (n += c.length));
    s.on('error', reject);
    s.on('close', () => resolve(n));
    s.resume();
  });
}

/** CONNECTs through the proxy: the socket once the 200 arrived, and how many bytes came after it. */
function tunnel(socketPath: string, port: number): Promise<{ socket: Socket; extra: number }> {
  return new Promise((resolve, reject) => {
    const s = connect(socketPath);
    let buf: Buffer = Buffer.alloc(0);
    const onData = (c: Buffer): void => {
      buf = buf.length === 0 ? c : Buffer.concat([buf, c]);
      const end = buf.indexOf('\r\n\r\n');
      if (end < 0) return;
      s.off('data', onData);
      s.pause();
      if (!buf.subarray(0, 12).equals(Buffer.from('HTTP/1.1 200')))
        reject(new Error(`the proxy answered ${buf.toString('latin1', 0, 80)}`));
      else resolve({ socket: s, extra: buf.length - end - 4 });
    };
    s.on('data', onData);
    s.on('error', reject);
    s.write(`CONNECT 127.0.0.1:${port} HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\n\r\n`);
  });
}

function direct(port: number): Promise<Socket> {
  return new Promise((resolve, reject) => {
    const s = connect({ host: '127.0.0.1', port }, () => resolve(s));
    s.on('error', reject);
  });
}

async function main(): Promise<void> {
  const socketPath = process.argv[2] as string;
  const big = source();
  const idle = sink();
  const bigPort = await listen(big);
  const idlePort = await listen(idle);
  const check = (n: number): void => {
    if (n !== TOTAL) throw new Error(`received ${n} bytes, not ${TOTAL}`);
  };
  const throughput = await interleave(
    {
      proxy: async () => {
        const { socket, extra } = await tunnel(socketPath, bigPort);
        check(await drain(socket, extra));
      },
      direct: async () => check(await drain(await direct(bigPort))),
    },
    { rounds: 10, warmup: 2 },
  );
  const setup = { proxy: [] as number[], direct: [] as number[] };
  for (let i = 0; i < 550; i++) {
    let t0 = performance.now();
    const { socket } = await tunnel(socketPath, idlePort);
    const p = performance.now() - t0;
    t0 = performance.now();
    const d = await direct(idlePort);
    const q = performance.now() - t0;
    socket.destroy();
    d.destroy();
    if (i >= 50) {
      setup.proxy.push(p);
      setup.direct.push(q);
    }
  }
  big.close();
  idle.close();
  process.stdout.write(`${JSON.stringify({ throughput, setup, totalBytes: TOTAL })}\n`);
}

main().catch((error: Error) => {
  process.stderr.write(`${error.stack ?? error.message}\n`);
  process.exit(1);
});
