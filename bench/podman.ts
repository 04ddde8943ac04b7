/**
 * Podman benchmarks (issue 18), against the test engine scripts/ensure-podman.sh serves, each a
 * pair interleaved in one run:
 * - warm open: openContainer (connect path) + a TTY shell exec to its first output, vs
 *   `podman exec <c> true` with the podman CLI;
 * - tree refresh: the container listing the Workspaces view reads (list + inspect of ours), vs
 *   `podman ps -a` plus `podman inspect` of the same containers with the CLI;
 * - connect: a new client to its first answer, through /_ping's headers vs /version.
 */
import { execFile } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import Docker from 'dockerode';
import { DEFAULT_CONFIG } from '../extension/src/config/model';
import { objectNames } from '../extension/src/contract/objects';
import type { HostFacts } from '../extension/src/contract/types';
import { connectEngine } from '../extension/src/engine/client';
import type { EngineContext } from '../extension/src/engine/context';
import { startShellExec } from '../extension/src/engine/exec';
import { buildRuntimeImage } from '../extension/src/engine/imageBuild';
import { listToolboxContainers } from '../extension/src/engine/lifecycle';
import { openContainer } from '../extension/src/engine/open';
import { planSession } from '../extension/src/plan/session';
import { PODMAN_TEST_CONF, PODMAN_TEST_SOCKET, removeNamespaceObjects } from '../test/support/docker';
import { repoRoot, TEST_BUILD_ARGS, testRuntimeImageTag } from '../test/support/image';
import { fmtMs, interleave, spreadOf, type ResultRow } from './harness';

const run = promisify(execFile);
const UID = 1000;
const GID = 1000;
const CLI_ENV = { ...process.env, CONTAINERS_CONF: PODMAN_TEST_CONF };
const podmanCli = (args: string[]) => run('podman', args, { env: CLI_ENV });

async function runtimeImage(d: Docker): Promise<string> {
  const tag = testRuntimeImageTag();
  const present = await d
    .getImage(tag)
    .inspect()
    .then(() => true)
    .catch(() => false);
  if (!present) await buildRuntimeImage(d, { contextRoot: repoRoot(), tag, buildArgs: TEST_BUILD_ARGS, networkMode: 'host' });
  return tag;
}

export async function benchPodman(): Promise<ResultRow[]> {
  if (!existsSync(PODMAN_TEST_SOCKET)) throw new Error(`No Podman socket at ${PODMAN_TEST_SOCKET}: run scripts/ensure-podman.sh first.`);
  const d = new Docker({ socketPath: PODMAN_TEST_SOCKET });
  const names = objectNames(`tbxbenchp${process.pid}`);
  const home = mkdtempSync(join(tmpdir(), 'tbxbench-home-'));
  const ws = mkdtempSync(join(tmpdir(), 'tbxbench-ws-'));
  const ctx: EngineContext = { docker: d, names };
  try {
    const image = await runtimeImage(d);
    const host: HostFacts = { uid: UID, gid: GID, home, platform: process.platform, pathExists: existsSync };
    const plan = planSession({ workspace: ws, config: DEFAULT_CONFIG, peer: true, image, names }, host).plan;
    const opened = await openContainer(ctx, plan, { ensureImage: async () => undefined });
    const firstOutput = async (id: string) => {
      const shell = await startShellExec(d, id, { cmd: ['printf', 'x'], cols: 120, rows: 40, user: `${UID}:${GID}` });
      await new Promise<void>((resolve, reject) => {
        shell.stream.once('data', () => resolve());
        shell.stream.once('error', reject);
      });
      shell.dispose();
    };
    const open = await interleave(
      {
        extension: async () => firstOutput((await openContainer(ctx, plan, { ensureImage: async () => undefined })).id),
        cli: async () => void (await podmanCli(['exec', opened.name, 'true'])),
      },
      { rounds: 12, warmup: 2 },
    );

    // Four more shells of ours, so the listing has something to read.
    for (let i = 0; i < 4; i++) {
      const dir = mkdtempSync(join(tmpdir(), 'tbxbench-ws-'));
      await openContainer(ctx, planSession({ workspace: dir, config: DEFAULT_CONFIG, peer: true, image, names }, host).plan, {
        ensureImage: async () => undefined,
      });
      rmSync(dir, { recursive: true, force: true });
    }
    const refresh = await interleave(
      {
        extension: async () => void (await listToolboxContainers(ctx)),
        cli: async () => {
          const { stdout } = await podmanCli(['ps', '-a', '-q', '--filter', `name=${names.prefix}`]);
          await podmanCli(['inspect', ...stdout.split('\n').filter(Boolean)]);
        },
      },
      { rounds: 12, warmup: 2 },
    );

    const connect = await interleave(
      {
        ping: async () => void (await connectEngine({ setting: `unix://${PODMAN_TEST_SOCKET}`, env: {}, home })).docker,
        version: async () => void (await new Docker({ socketPath: PODMAN_TEST_SOCKET }).version()),
      },
      { rounds: 10, warmup: 1 },
    );

    const ratio = (a: number, b: number) => `${(a / b).toFixed(a / b < 0.1 ? 3 : 2)}×`;
    return [
      {
        benchmark: 'Podman',
        measure: 'warm open (openContainer + TTY exec to first output) vs `podman exec <c> true` (CLI)',
        value: `${ratio(open.extension!.median, open.cli!.median)} (${fmtMs(open.extension!.median)} vs CLI ${fmtMs(open.cli!.median)})`,
        spread: spreadOf(open.extension!),
        goal: '≤ 0.7×',
        met: open.extension!.median / open.cli!.median <= 0.7,
      },
      {
        benchmark: 'Podman',
        measure: 'tree refresh (list + inspect of 5 shells and the anchor) vs `podman ps -a` + `podman inspect` (CLI)',
        value: `${ratio(refresh.extension!.median, refresh.cli!.median)} (${fmtMs(refresh.extension!.median)} vs CLI ${fmtMs(refresh.cli!.median)})`,
        spread: spreadOf(refresh.extension!),
        goal: '≤ 0.5×',
        met: refresh.extension!.median / refresh.cli!.median <= 0.5,
      },
      {
        benchmark: 'Podman',
        measure: 'connect: new client to first answer, /_ping headers vs GET /version',
        value: `${ratio(connect.ping!.median, connect.version!.median)} (${fmtMs(connect.ping!.median)} vs ${fmtMs(connect.version!.median)})`,
        spread: spreadOf(connect.ping!),
        goal: '≤ 0.1×',
        met: connect.ping!.median / connect.version!.median <= 0.1,
      },
    ];
  } finally {
    await removeNamespaceObjects(d, names);
    rmSync(home, { recursive: true, force: true });
    rmSync(ws, { recursive: true, force: true });
  }
}
