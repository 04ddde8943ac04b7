/**
 * The UI model against the real engine: how fast a container started with the CLI shows up in
 * the tree's model (Docker event → RefreshManager state), how many Docker API calls the model
 * makes while idle, the tree model with 200 toolbox containers, and the memory of the model and
 * the bridge while serving 20 workspaces.
 */
import { execFile } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { installVscodeLite, silentLog } from '../test/support/vscodeLite';
import { fmtMs, spreadOf, stats, type ResultRow } from './harness';
import { docker as testDocker, removeNamespaceObjects } from '../test/support/docker';
import { ensureTestRuntimeImage } from '../test/support/image';
import { RUNTIME_IMAGE_TEST_REPO } from '../extension/src/contract/image';
import { objectNames } from '../extension/src/contract/objects';
import type { HostFacts, ObjectNames } from '../extension/src/contract/types';

installVscodeLite();
const { createEngineBackend } =
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  require('../extension/src/backend/engineBackend') as typeof import('../extension/src/backend/engineBackend');
// eslint-disable-next-line @typescript-eslint/no-require-imports
const { RefreshManager } = require('../extension/src/ui/views/refreshManager') as typeof import('../extension/src/ui/views/refreshManager');
const render =
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  require('../extension/src/ui/views/treeNodes') as typeof import('../extension/src/ui/views/treeNodes');
const { workspacesNodes, peerNodes, OTHER_CONTAINERS_ID } = render;
// eslint-disable-next-line @typescript-eslint/no-require-imports
const Modem = require('docker-modem') as { prototype: { dial: (...args: unknown[]) => unknown } };

const run = promisify(execFile);

/** Counts every Engine API request made through dockerode in this process. */
let apiCalls = 0;
const dial = Modem.prototype.dial;
Modem.prototype.dial = function (this: unknown, ...args: unknown[]) {
  apiCalls++;
  return dial.apply(this, args);
};

/**
 * A container name the snapshot lists as a workspace container of `names`: the planners' grammar
 * `<prefix>-<slug>-<8 hex>` (contract/objects.ts), here with `n` as the hash.
 */
function workspaceName(names: ObjectNames, slug: string, n: number): string {
  return `${names.prefix}-${slug}-${n.toString(16).padStart(8, '0')}`;
}

function backendFor(names: ObjectNames, home: string) {
  const host: HostFacts = { uid: 1000, gid: 1000, home, platform: process.platform, pathExists: existsSync };
  return createEngineBackend({
    names,
    host: () => host,
    extensionPath: join(__dirname, '../..'),
    buildArgs: { INSTALL_AGENTS: '0' },
    imageRepo: RUNTIME_IMAGE_TEST_REPO,
    log: silentLog as never,
    editor: { openInEditor: () => undefined, openUntitled: () => undefined, openExternal: () => undefined },
  });
}

export async function benchRefresh(): Promise<ResultRow[]> {
  const d = testDocker();
  const names = objectNames(`tbxbenchr${process.pid}`);
  const home = mkdtempSync(join(tmpdir(), 'tbxbench-home-'));
  const image = await ensureTestRuntimeImage();
  const backend = backendFor(names, home);
  const refresh = new RefreshManager(backend, () => [], silentLog as never);
  try {
    refresh.setViewVisible('toolbox.workspaces', true);
    await new Promise<void>((resolve) => {
      const sub = refresh.onDidChange((s) => {
        if (!s.loading) {
          sub.dispose();
          resolve();
        }
      });
    });
    const latencies: number[] = [];
    for (let i = 0; i < 11; i++) {
      const name = workspaceName(names, 'refresh', i);
      let timer: NodeJS.Timeout | undefined;
      const seen = new Promise<number>((resolve, reject) => {
        const sub = refresh.onDidChange((s) => {
          if (s.snapshot?.containers.some((c) => c.name === name && c.state === 'running')) {
            sub.dispose();
            clearTimeout(timer);
            resolve(Date.now());
          }
        });
        // Never seen would hang the run: a name the snapshot does not list as ours, or no event.
        timer = setTimeout(() => reject(new Error(`${name} did not reach the tree model within 30 s`)), 30_000);
      });
      const events = await d.getEvents({ filters: { type: ['container'], event: ['start'], container: [name] } });
      const started = new Promise<number>((resolve) => {
        events.on('data', (chunk: Buffer) => {
          const e = JSON.parse(chunk.toString().split('\n')[0]!) as { timeNano: number };
          resolve(e.timeNano / 1e6);
        });
      });
      await run('docker', ['run', '-d', '--rm', '--network', 'none', '--name', name, '--entrypoint', 'sleep', image, '300']);
      const [t0, t1] = await Promise.all([started, seen]);
      (events as unknown as { destroy(): void }).destroy();
      if (i > 0) latencies.push(t1 - t0);
    }
    const lat = stats(latencies);

    // Idle: the model is live (a view is visible) and nothing happens for 60 s.
    await new Promise((r) => setTimeout(r, 1_000));
    const before = apiCalls;
    await new Promise((r) => setTimeout(r, 60_000));
    const idleCalls = apiCalls - before;
    return [
      {
        benchmark: 'Refresh',
        measure: 'container started by the CLI: Docker event → tree model updated',
        value: `p50 ${fmtMs(lat.median)} (debounce 100 ms included)`,
        spread: spreadOf(lat),
        goal: '≤ 250 ms',
        met: lat.median <= 250,
      },
      {
        benchmark: 'Refresh',
        measure: 'Docker API calls in 60 s while idle (view visible, event stream open)',
        value: `${idleCalls} (the event stream itself is one long-lived request, opened before)`,
        spread: '–',
        goal: '0',
        met: idleCalls === 0,
      },
    ];
  } finally {
    refresh.dispose();
    backend.dispose();
    await removeNamespaceObjects(d, names);
    rmSync(home, { recursive: true, force: true });
  }
}

export async function benchScale(): Promise<ResultRow[]> {
  const d = testDocker();
  const names = objectNames(`tbxbenchs${process.pid}`);
  const home = mkdtempSync(join(tmpdir(), 'tbxbench-home-'));
  const image = await ensureTestRuntimeImage();
  const backend = backendFor(names, home);
  try {
    // 200 created (not started) toolbox containers, 20 at a time.
    for (let i = 0; i < 200; i += 20) {
      await Promise.all(
        Array.from({ length: 20 }, (_, k) =>
          d.createContainer({
            name: workspaceName(names, 'scale', i + k),
            Image: image,
            Cmd: ['true'],
            HostConfig: { NetworkMode: 'none' },
          }),
        ),
      );
    }
    const folders = ['/nowhere'];
    const times: number[] = [];
    let count = 0;
    for (let i = 0; i < 11; i++) {
      const t0 = performance.now();
      const snapshot = await backend.snapshot();
      const state = { snapshot, wantPeer: new Map(), findings: [], loading: false, takenAt: Date.now() };
      // Every container row counts, those in the "Other toolbox containers" group too (decision 0046).
      count = workspacesNodes(state, folders).reduce(
        (n, node) => n + (node.id === OTHER_CONTAINERS_ID ? (node.children?.length ?? 0) : 1),
        0,
      );
      peerNodes(state);
      if (i > 0) times.push(performance.now() - t0);
    }
    const s = stats(times);

    // Memory: the model with those 200 containers and the bridge serving 20 workspaces, kept
    // referenced while the heap is measured after full collections.
    const gc = (globalThis as { gc?: () => void }).gc;
    const settle = () => {
      gc?.();
      gc?.();
      return process.memoryUsage().heapUsed;
    };
    const heap0 = settle();
    const { BridgeHub } = await import('../extension/src/bridge/hub');
    const tmpRoot = mkdtempSync('/tmp/tbxbm-');
    const hub = new BridgeHub({
      home,
      tmpRoot,
      port: 0,
      openInEditor: () => undefined,
      openUntitled: () => undefined,
      openExternal: () => undefined,
    });
    for (let w = 0; w < 20; w++) {
      const ws = join(home, `ws${w}`);
      mkdirSync(ws, { recursive: true });
      await hub.ensureWorkspace({
        key: `${names.prefix}-mem${w}`,
        workspaceFolder: ws,
        mountsRoots: [],
        proximoEnabled: false,
        defaultAgentHome: join(home, '.toolbox'),
        defaultCodexHome: join(home, '.toolbox', '.codex'),
      });
    }
    const snapshot = await backend.snapshot();
    const model = workspacesNodes({ snapshot, wantPeer: new Map(), findings: [], loading: false, takenAt: Date.now() }, folders);
    const heap1 = settle();
    const kept = [hub, snapshot, model];
    const { rss } = process.memoryUsage();
    await hub.dispose();
    rmSync(tmpRoot, { recursive: true, force: true });
    const memory = gc
      ? `heap ${(heap1 / 2 ** 20).toFixed(1)} MiB, RSS ${(rss / 2 ** 20).toFixed(0)} MiB (the whole process, ${kept.length} parts live); ` +
        `the parts' own share is below the noise (${((heap1 - heap0) / 2 ** 10).toFixed(0)} KiB)`
      : 'run with --expose-gc';
    return [
      {
        benchmark: 'Scale',
        measure: `tree model with 200 toolbox containers (snapshot + render, ${count} container rows)`,
        value: fmtMs(s.median),
        spread: spreadOf(s),
        goal: '≤ 300 ms',
        met: s.median <= 300,
      },
      {
        benchmark: 'Scale',
        measure: `memory with the model (${count} container rows, ${model.length} at the top) and the bridge serving 20 workspaces`,
        value: memory,
        spread: '–',
        goal: '–',
        met: undefined,
      },
    ];
  } finally {
    backend.dispose();
    await removeNamespaceObjects(d, names);
    rmSync(home, { recursive: true, force: true });
  }
}
