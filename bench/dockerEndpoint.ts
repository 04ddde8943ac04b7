/**
 * The per-container Docker endpoint (issue 27, engine/dockerEndpoint/server.ts) against the engine's own
 * socket, in one run on the same machine: the docker CLI pointed at each, interleaved. `docker
 * ps` (two small requests on a new connection), `docker run --rm … true` (create, attach hijack,
 * start, wait, remove) and `docker logs` of a container that printed 100 MiB (one long chunked
 * answer). Then the memory 20 open endpoints cost this process, each having served a `docker ps`.
 * The gate is the policy a workspace container's endpoint runs (engine/dockerEndpoint/gate.ts): the owner
 * label added and checked, bodies read and written again, binds resolved.
 */
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync, realpathSync } from 'node:fs';
import { objectNames } from '../extension/src/contract/objects';
import { startDockerEndpoint, type DockerEndpoint } from '../extension/src/engine/dockerEndpoint/server';
import { policyGate } from '../extension/src/engine/dockerEndpoint/gate';
import { planEndpointSocket } from '../extension/src/plan/dockerEndpoint/socket';
import { docker as testDocker, removeNamespaceObjects } from '../test/support/docker';
import { fmtMs, interleave, type ResultRow, type Stats } from './harness';

const ENGINE_SOCKET = process.env.TOOLBOX_TEST_DOCKER_SOCKET ?? '/var/run/docker.sock';
const BASE_IMAGE = 'debian:bookworm-slim';
const LOG_BYTES = 100 * 1024 * 1024;

/** The docker CLI against `socket`, its output thrown away; rejects on a non-zero exit. */
function cli(socket: string, args: string[]): Promise<void> {
  return new Promise((resolve, reject) => {
    const child = spawn('docker', args, {
      env: { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: '/nonexistent', DOCKER_HOST: `unix://${socket}` },
      stdio: ['ignore', 'ignore', 'pipe'],
    });
    let stderr = '';
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    child.on('error', reject);
    child.on('close', (code) => (code === 0 ? resolve() : reject(new Error(`docker ${args.join(' ')}: exit ${code}: ${stderr.trim()}`))));
  });
}

const signed = (n: number, digits: number): string => `${n < 0 ? '−' : '+'}${Math.abs(n).toFixed(digits)}`;

function ratioRow(measure: string, s: Record<string, Stats>): ResultRow {
  const raw = s.raw!;
  const endpoint = s.endpoint!;
  const ratio = endpoint.median / raw.median;
  return {
    benchmark: 'Docker endpoint',
    measure,
    value: `${ratio.toFixed(3)}× (endpoint ${fmtMs(endpoint.median)}, engine socket ${fmtMs(raw.median)})`,
    spread: `endpoint p10 ${fmtMs(endpoint.p10)} – p90 ${fmtMs(endpoint.p90)} (n=${endpoint.n}); socket p10 ${fmtMs(raw.p10)} – p90 ${fmtMs(raw.p90)} (n=${raw.n})`,
    goal: '≤ 1.15×',
    met: ratio <= 1.15,
  };
}

export async function benchDockerEndpoint(): Promise<ResultRow[]> {
  const names = objectNames(`tbxb${randomBytes(3).toString('hex')}`);
  const d = testDocker();
  await d
    .getImage(BASE_IMAGE)
    .inspect()
    .catch(() => {
      throw new Error(`${BASE_IMAGE} must be present locally (the bench never pulls).`);
    });
  const root = mkdtempSync(`/tmp/${names.prefix}-`);
  const place = (container: string) =>
    planEndpointSocket({
      engine: `unix://${ENGINE_SOCKET}`,
      container,
      uid: process.getuid?.() ?? 0,
      platform: process.platform,
      tmpRoot: root,
    });
  const endpoints: DockerEndpoint[] = [];
  const start = async (container: string): Promise<DockerEndpoint> => {
    const socketPath = place(container).socketPath;
    const e = await startDockerEndpoint({
      socketPath,
      upstream: { socketPath: ENGINE_SOCKET },
      gate: policyGate({ docker: d, scope: { owner: container, workspace: realpathSync(root), endpointSocket: socketPath } }),
      log: () => undefined,
    });
    endpoints.push(e);
    return e;
  };
  const rows: ResultRow[] = [];
  try {
    const endpoint = (await start(`${names.prefix}-bench`)).socketPath;
    const both = (args: (i: number) => string[]) => {
      let i = 0;
      return { raw: () => cli(ENGINE_SOCKET, args(i++)), endpoint: () => cli(endpoint, args(i++)) };
    };

    rows.push(
      ratioRow(
        '`docker ps` through the endpoint vs the engine socket',
        await interleave(
          both(() => ['ps']),
          { rounds: 20, warmup: 2 },
        ),
      ),
    );
    rows.push(
      ratioRow(
        '`docker run --rm debian:bookworm-slim true` through the endpoint vs the engine socket',
        await interleave(
          both((i) => ['run', '--rm', '--name', `${names.prefix}-run${i}`, BASE_IMAGE, 'true']),
          { rounds: 8, warmup: 1 },
        ),
      ),
    );

    // A container that printed 100 MiB in lines of 100 bytes, then exited: `docker logs` reads it all.
    const logs = `${names.prefix}-logs`;
    const line = '0123456789'.repeat(10).slice(0, 99);
    // Made through the endpoint, so that it is the endpoint's own to read.
    await cli(endpoint, [
      'run',
      '-d',
      '--name',
      logs,
      '--log-driver',
      'json-file',
      BASE_IMAGE,
      'sh',
      '-c',
      `yes ${line} | head -c ${LOG_BYTES}`,
    ]);
    await cli(endpoint, ['wait', logs]);
    rows.push(
      ratioRow(
        '`docker logs` of a container that printed 100 MiB, through the endpoint vs the engine socket',
        await interleave(
          both(() => ['logs', logs]),
          { rounds: 3, warmup: 1 },
        ),
      ),
    );

    // Memory: 20 more endpoints, each having served one `docker ps`, measured after full collections.
    const gc = (globalThis as { gc?: () => void }).gc;
    const settle = () => {
      gc?.();
      gc?.();
      return process.memoryUsage();
    };
    const before = settle();
    const twenty: DockerEndpoint[] = [];
    for (let w = 0; w < 20; w++) twenty.push(await start(`${names.prefix}-mem${w}`));
    for (const e of twenty) await cli(e.socketPath, ['ps']);
    const after = settle();
    const rss = (after.rss - before.rss) / 2 ** 20;
    const heap = (after.heapUsed - before.heapUsed) / 2 ** 20;
    rows.push({
      benchmark: 'Docker endpoint',
      measure: 'memory of 20 more open endpoints in this process, each after one `docker ps` through it',
      value: gc ? `RSS ${signed(rss, 1)} MiB, heap ${signed(heap, 2)} MiB (${twenty.length} live)` : 'run with --expose-gc',
      spread: '–',
      goal: '≤ 30 MiB',
      met: gc ? Math.max(rss, heap) <= 30 : undefined,
    });
  } finally {
    await Promise.all(endpoints.map((e) => e.close()));
    await removeNamespaceObjects(d, names);
    rmSync(root, { recursive: true, force: true });
  }
  return rows;
}
