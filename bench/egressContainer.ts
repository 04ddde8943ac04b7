/**
 * The egress policy as a program in a container sees it (issue 30): curl downloads 100 MiB from
 * an origin in a network namespace the bench makes (test/support/netns.ts), once from a container
 * of an `open` folder (the engine's bridge network and NAT) and once from a container of an
 * `allowlist` folder (its loopback, the forwarder, the unix socket, this process's proxy), the two
 * interleaved in one run; and the time to the first byte of a small answer, the same two ways.
 * curl's own timings, so the exec that runs it is not counted. Needs root for the namespace.
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { ShellSession } from '../extension/src/backend/api';
import { EGRESS } from '../extension/src/contract/egress';
import { objectNames } from '../extension/src/contract/objects';
import { testBackend } from '../test/support/backend';
import { docker, removeNamespaceObjects } from '../test/support/docker';
import { execIn } from '../test/support/exec';
import { ensureTestRuntimeImage } from '../test/support/image';
import { netnsAvailable, originNamespace } from '../test/support/netns';
import { hardenedUserFile } from '../test/support/projectAttack';
import { standInSettings } from '../test/support/settings';
import { fmtMs, stats, type ResultRow } from './harness';

const BYTES = 100 * 2 ** 20;
const RUNS = 7;
const FIRST_BYTE_RUNS = 40;

export async function benchEgressContainer(): Promise<ResultRow[]> {
  if (!netnsAvailable()) {
    return [
      {
        benchmark: 'Egress policy: 100 MiB in a container',
        measure: 'needs root (a network namespace for the origin)',
        value: 'skipped',
        spread: '',
        goal: '≥ 0.9×',
        met: false,
      },
    ];
  }
  const names = objectNames(`tbxb${Math.random().toString(16).slice(2, 8)}`);
  const image = await ensureTestRuntimeImage();
  const dir = mkdtempSync(join(tmpdir(), `${names.prefix}-egress-bench-`));
  const home = join(dir, 'home');
  const open = join(home, 'open');
  const policed = join(home, 'policed');
  mkdirSync(open, { recursive: true });
  mkdirSync(policed, { recursive: true });
  writeFileSync(join(home, '.toolbox.yaml'), `${hardenedUserFile(image)}peer_messaging: false\n`);
  const origin = await originNamespace(names.prefix.slice(4));
  const rule = `${origin.address}:${origin.port}`;
  const backend = testBackend(names, home, {
    settings: standInSettings({
      persistSessions: () => false,
      egress: (folder) => (folder === policed ? { folder: { mode: 'allowlist', allow: [rule] } } : {}),
    }),
  });
  try {
    const openSession: ShellSession = await (
      await backend.prepareShell({ folder: open })
    ).open({ step: () => undefined, log: () => undefined }, new AbortController().signal);
    const policedSession: ShellSession = await (
      await backend.prepareShell({ folder: policed })
    ).open({ step: () => undefined, log: () => undefined }, new AbortController().signal);
    const curl = async (session: ShellSession, path: string, field: string): Promise<number> => {
      const r = await execIn(docker().getContainer(session.id), [
        'curl',
        '-sS',
        '--noproxy',
        '',
        '-o',
        '/dev/null',
        '-w',
        `%{${field}} %{size_download}`,
        `http://${rule}${path}`,
      ]);
      const [seconds, size] = r.stdout.trim().split(' ');
      if (r.code !== 0) throw new Error(`curl in ${session.name} failed: ${r.stderr.trim()}`);
      if (path.startsWith('/bytes/') && Number(size) !== BYTES) throw new Error(`curl in ${session.name} got ${size} bytes`);
      return Number(seconds) * 1000;
    };
    // An exec needs no entrypoint: the first curl waits until the forwarder listens (as a held shell does).
    const listening = await execIn(docker().getContainer(policedSession.id), [
      'sh',
      '-c',
      `for i in $(seq 150); do grep -q -F ':${EGRESS.proxyPort.toString(16).toUpperCase().padStart(4, '0')} 00000000:0000 0A' /proc/net/tcp && exit 0; sleep 0.02; done; exit 1`,
    ]);
    if (listening.code !== 0) throw new Error(`the egress forwarder in ${policedSession.name} does not listen after 3 s`);
    const down = { open: [] as number[], policed: [] as number[] };
    await curl(openSession, `/bytes/${BYTES}`, 'time_total');
    await curl(policedSession, `/bytes/${BYTES}`, 'time_total');
    for (let i = 0; i < RUNS; i++) {
      down.open.push(await curl(openSession, `/bytes/${BYTES}`, 'time_total'));
      down.policed.push(await curl(policedSession, `/bytes/${BYTES}`, 'time_total'));
    }
    const first = { open: [] as number[], policed: [] as number[] };
    for (let i = 0; i < FIRST_BYTE_RUNS; i++) {
      first.open.push(await curl(openSession, '/hello', 'time_starttransfer'));
      first.policed.push(await curl(policedSession, '/hello', 'time_starttransfer'));
    }
    const o = stats(down.open);
    const p = stats(down.policed);
    const mib = (ms: number): number => BYTES / 2 ** 20 / (ms / 1000);
    const ratio = o.median / p.median;
    const fo = stats(first.open);
    const fp = stats(first.policed);
    const overhead = fp.median - fo.median;
    return [
      {
        benchmark: 'Egress policy: 100 MiB in a container',
        measure: 'curl in an allowlist container (forwarder, unix socket, host proxy) vs in an open one (bridge network, NAT), throughput',
        value: `${ratio.toFixed(2)}× the open container's speed (${mib(p.median).toFixed(0)} vs ${mib(o.median).toFixed(0)} MiB/s)`,
        spread: `policy p10 ${fmtMs(p.p10)} – p90 ${fmtMs(p.p90)}; open p10 ${fmtMs(o.p10)} – p90 ${fmtMs(o.p90)} (n=${RUNS} each)`,
        goal: '≥ 0.9×',
        met: ratio >= 0.9,
      },
      {
        benchmark: 'Egress policy: first byte in a container, p50',
        measure: 'curl’s time to the first byte of a small answer, allowlist container vs open one (connection set-up through the policy)',
        value: `+${fmtMs(overhead)} (policy p50 ${fmtMs(fp.median)}, open p50 ${fmtMs(fo.median)})`,
        spread: `policy p10 ${fmtMs(fp.p10)} – p90 ${fmtMs(fp.p90)}; open p10 ${fmtMs(fo.p10)} – p90 ${fmtMs(fo.p90)} (n=${FIRST_BYTE_RUNS} each)`,
        goal: '≤ 2 ms over open',
        met: overhead <= 2,
      },
    ];
  } finally {
    backend.dispose();
    await removeNamespaceObjects(docker(), names).catch(() => undefined);
    origin.close();
    rmSync(dir, { recursive: true, force: true });
  }
}
