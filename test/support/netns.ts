/**
 * A network namespace of the test's own, with an origin server in it: the "internet" of the egress
 * tests (issue 30). A veth pair joins it to the host (`10.213.<n>.1` on the host's side, `.2` in the
 * namespace), so the host's egress proxy reaches a server that is neither on loopback nor on any
 * network the tests did not make. Needs root (CI runs as root); `available()` says whether it can.
 */
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

export interface OriginNamespace {
  /** The server's address (in the namespace) and the host side's. */
  address: string;
  hostAddress: string;
  port: number;
  /** What GET /hello answers (GET /bytes/<n> answers n bytes). */
  hello: string;
  close(): void;
}

/**
 * The origin: GET /hello answers the file's text; GET /bytes/<n> answers n bytes (for throughput).
 * Node rather than python3's http.server, which copies in 16 KiB pieces and would measure itself.
 */
const ORIGIN_SERVER = `
const [address, port, helloFile] = process.argv.slice(1);
const hello = require('fs').readFileSync(helloFile);
const chunk = Buffer.alloc(1 << 20, 120);
require('http').createServer((req, res) => {
  const m = /^\\/bytes\\/(\\d+)$/.exec(req.url);
  if (req.url === '/hello') return res.end(hello);
  if (!m) { res.statusCode = 404; return res.end(); }
  let left = Number(m[1]);
  res.setHeader('Content-Length', left);
  const go = () => {
    while (left > 0) {
      const n = Math.min(left, chunk.length);
      left -= n;
      if (!res.write(n === chunk.length ? chunk : chunk.subarray(0, n))) return res.once('drain', go);
    }
    res.end();
  };
  go();
}).listen(Number(port), address);
`;

/** Root and `ip` are here: the namespace can be made. */
export function netnsAvailable(): boolean {
  if (process.getuid?.() !== 0) return false;
  try {
    execFileSync('ip', ['netns', 'list'], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
}

function ip(...args: string[]): void {
  execFileSync('ip', args, { stdio: ['ignore', 'ignore', 'pipe'] });
}

async function waitForPort(host: string, port: number, ms: number): Promise<void> {
  const end = Date.now() + ms;
  for (;;) {
    const ok = await new Promise<boolean>((resolve) => {
      const s = connect({ host, port }, () => {
        s.destroy();
        resolve(true);
      });
      s.on('error', () => resolve(false));
    });
    if (ok) return;
    if (Date.now() > end) throw new Error(`the origin server on ${host}:${port} did not start`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

/** Makes the namespace (named after `tag`, at most 8 characters) and starts python3's http.server in it. */
export async function originNamespace(tag: string): Promise<OriginNamespace> {
  const id = tag.replace(/[^a-z0-9]/gi, '').slice(0, 8);
  const ns = `tbx${id}`;
  // A subnet per run: 10.213.<0-255>.0/30 from the tag.
  const n = [...id].reduce((a, c) => (a * 31 + c.charCodeAt(0)) % 256, 7);
  const hostAddress = `10.213.${n}.1`;
  const address = `10.213.${n}.2`;
  const dir = mkdtempSync(join(tmpdir(), `${ns}-origin-`));
  const hello = `hello from ${ns}\n`;
  writeFileSync(join(dir, 'hello'), hello);
  let server: ChildProcess | undefined;
  const close = () => {
    server?.kill('SIGKILL');
    try {
      ip('netns', 'del', ns);
    } catch {
      // already gone
    }
    rmSync(dir, { recursive: true, force: true });
  };
  try {
    ip('netns', 'add', ns);
    ip('link', 'add', `${ns}h`, 'type', 'veth', 'peer', 'name', `${ns}n`);
    ip('link', 'set', `${ns}n`, 'netns', ns);
    ip('addr', 'add', `${hostAddress}/30`, 'dev', `${ns}h`);
    ip('link', 'set', `${ns}h`, 'up');
    ip('netns', 'exec', ns, 'ip', 'addr', 'add', `${address}/30`, 'dev', `${ns}n`);
    ip('netns', 'exec', ns, 'ip', 'link', 'set', `${ns}n`, 'up');
    ip('netns', 'exec', ns, 'ip', 'link', 'set', 'lo', 'up');
    const port = 8000 + n;
    server = spawn('ip', ['netns', 'exec', ns, process.execPath, '-e', ORIGIN_SERVER, address, String(port), join(dir, 'hello')], {
      stdio: 'ignore',
    });
    await waitForPort(address, port, 10_000);
    return { address, hostAddress, port, hello, close };
  } catch (error) {
    close();
    throw error;
  }
}
