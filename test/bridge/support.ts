/**
 * Fixtures for bridge tests: a hub on a temporary home with short temp run dirs, a recording of
 * the editor actions, a raw HTTP client for the unix socket and the loopback port, and the fake
 * proximo binary installed into a temp bin dir.
 */
import { chmodSync, copyFileSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { request } from 'node:http';
import { join, resolve } from 'node:path';
import { after, before } from 'node:test';
import { BridgeHub, type BridgeHubOptions, type WorkspaceBridge, type WorkspaceRegistration } from '../../extension/src/bridge/hub';
import type { BridgeEvent } from '../../extension/src/bridge/log';

export const FAKE_PROXIMO_SOURCE = resolve(__dirname, '../../../test/fixtures/fake-proximo');

/** Limits high enough that tests unrelated to rate limiting never see a 429. */
export const NO_RATE_LIMIT = {
  shared: { perSecond: 1e9, burst: 1e9 },
  credential: { perSecond: 1e9, burst: 1e9 },
  sound: { perSecond: 1e9, burst: 1e9 },
  propose: { perSecond: 1e9, burst: 1e9 },
  agent: { perSecond: 1e9, burst: 1e9 },
};

export interface Recorded {
  /** Opened paths; a new file (an untitled editor bound to the path) has `untitled: true`. */
  edits: Array<{ path: string; isDirectory: boolean; untitled?: true }>;
  urls: string[];
  events: BridgeEvent[];
}

export interface Rig {
  root: string;
  home: string;
  tmpRoot: string;
  workspace: string;
  hub: BridgeHub;
  bridge: WorkspaceBridge;
  token: string;
  recorded: Recorded;
  registration: WorkspaceRegistration;
  /** Another hub on the same home (for reuse tests), disposed with the rig. */
  extraHubs: BridgeHub[];
  cleanup(): Promise<void>;
}

export interface RigDirs {
  root: string;
  home: string;
  workspace: string;
}

export interface RigOptions {
  /** Hub options, or a function of the rig's dirs returning them (called after prepare). */
  hub?: Partial<BridgeHubOptions> | ((dirs: RigDirs) => Partial<BridgeHubOptions>);
  registration?: Partial<WorkspaceRegistration>;
  /** Called before the hub starts, with the rig's dirs (to create files, fake binaries). */
  prepare?(dirs: RigDirs): void;
}

export function makeTempRoot(): string {
  // Short on purpose: /tmp/tbb-XXXXXX keeps socket paths far from the AF_UNIX limit.
  return mkdtempSync('/tmp/tbb-');
}

export function recorder(): Recorded & Pick<BridgeHubOptions, 'openInEditor' | 'openUntitled' | 'openExternal' | 'log'> {
  const recorded: Recorded = { edits: [], urls: [], events: [] };
  return {
    ...recorded,
    openInEditor: (path, isDirectory) => void recorded.edits.push({ path, isDirectory }),
    openUntitled: (path) => void recorded.edits.push({ path, isDirectory: false, untitled: true }),
    openExternal: (url) => void recorded.urls.push(url),
    log: (event) => void recorded.events.push(event),
  };
}

export async function startRig(options: RigOptions = {}): Promise<Rig> {
  const root = makeTempRoot();
  const home = join(root, 'home');
  const tmpRoot = join(root, 't');
  const workspace = join(root, 'ws');
  for (const dir of [home, tmpRoot, workspace, join(home, '.toolbox', '.codex')]) mkdirSync(dir, { recursive: true });
  options.prepare?.({ root, home, workspace });
  const hubOptions = typeof options.hub === 'function' ? options.hub({ root, home, workspace }) : options.hub;
  const rec = recorder();
  const hub = new BridgeHub({
    home,
    tmpRoot,
    env: { PATH: process.env.PATH },
    port: 0,
    rateLimits: NO_RATE_LIMIT,
    openInEditor: rec.openInEditor,
    openUntitled: rec.openUntitled,
    openExternal: rec.openExternal,
    log: rec.log,
    ...hubOptions,
  });
  const registration: WorkspaceRegistration = {
    key: `tbbtest-${root.slice(-6)}`,
    workspaceFolder: workspace,
    mountsRoots: [],
    proximoEnabled: true,
    defaultAgentHome: join(home, '.toolbox'),
    defaultCodexHome: join(home, '.toolbox', '.codex'),
    ...options.registration,
  };
  const extraHubs: BridgeHub[] = [];
  try {
    const bridge = await hub.ensureWorkspace(registration);
    const token = readFileSync(join(bridge.stateDir, 'token'), 'utf8').trim();
    return {
      root,
      home,
      tmpRoot,
      workspace,
      hub,
      bridge,
      token,
      recorded: rec,
      registration,
      extraHubs,
      async cleanup() {
        for (const h of extraHubs) await h.dispose();
        await hub.dispose();
        rmSync(root, { recursive: true, force: true });
      },
    };
  } catch (error) {
    await hub.dispose();
    rmSync(root, { recursive: true, force: true });
    throw error;
  }
}

/**
 * One default rig shared by the tests of the enclosing `describe`: started before them, handed to
 * `use` (typically `let rig: Rig; rigForSuite((r) => (rig = r));`), cleaned up after them.
 */
export function rigForSuite(use: (rig: Rig) => void): void {
  let rig: Rig | undefined;
  before(async () => {
    rig = await startRig();
    use(rig);
  });
  after(async () => {
    await rig?.cleanup();
  });
}

export interface Target {
  socketPath?: string;
  port?: number;
}

export const unixTarget = (rig: Rig): Target => ({ socketPath: rig.bridge.socketPath });
export const tcpTarget = (rig: Rig): Target => ({ port: rig.hub.port as number });

export interface CallOptions {
  method?: string;
  token?: string | null;
  /** An object is sent as JSON; a string or Buffer as is. */
  body?: unknown;
  host?: string | null;
  /** Send the body chunked, without Content-Length. */
  chunked?: boolean;
  /** Extra headers; a Content-Type here replaces the default application/json ('' sends none). */
  headers?: Record<string, string>;
}

export interface Reply {
  status: number;
  text: string;
  headers: Record<string, string | string[] | undefined>;
}

/** One HTTP request on its own connection; never throws for an HTTP status. */
export function call(target: Target, path: string, opts: CallOptions = {}): Promise<Reply> {
  const data =
    opts.body === undefined
      ? undefined
      : Buffer.isBuffer(opts.body)
        ? opts.body
        : Buffer.from(typeof opts.body === 'string' ? opts.body : JSON.stringify(opts.body));
  const headers: Record<string, string> = { ...opts.headers };
  const host = opts.host === undefined ? (target.socketPath ? 'localhost' : `127.0.0.1:${target.port}`) : opts.host;
  if (host !== null) headers.Host = host;
  if (opts.token) headers.Authorization = `Bearer ${opts.token}`;
  if (data !== undefined) {
    // JSON unless the test names a type; an empty one means no Content-Type header at all.
    headers['Content-Type'] ??= 'application/json';
    if (headers['Content-Type'] === '') delete headers['Content-Type'];
    if (!opts.chunked) headers['Content-Length'] = String(data.length);
  }
  return new Promise((resolvePromise, reject) => {
    const req = request(
      {
        ...(target.socketPath ? { socketPath: target.socketPath } : { host: '127.0.0.1', port: target.port }),
        path,
        method: opts.method ?? 'POST',
        headers,
        agent: false,
        setHost: false,
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () =>
          resolvePromise({ status: res.statusCode ?? 0, text: Buffer.concat(chunks).toString('utf8'), headers: res.headers }),
        );
        res.on('error', reject);
      },
    );
    req.on('error', reject);
    if (data !== undefined) req.write(data);
    req.end();
  });
}

/** Installs the fake proximo as `<dir>/proximo`; its runs are recorded next to it. */
export function installFakeProximo(dir: string): {
  binary: string;
  calls(): Array<{ argv: string[]; cwd: string; env: Record<string, string | undefined> }>;
} {
  mkdirSync(dir, { recursive: true });
  const binary = join(dir, 'proximo');
  copyFileSync(FAKE_PROXIMO_SOURCE, binary);
  chmodSync(binary, 0o755);
  const record = `${binary}.calls.jsonl`;
  return {
    binary,
    calls: () =>
      existsSync(record)
        ? readFileSync(record, 'utf8')
            .split('\n')
            .filter((l) => l !== '')
            .map((l) => JSON.parse(l) as { argv: string[]; cwd: string; env: Record<string, string | undefined> })
        : [],
  };
}
