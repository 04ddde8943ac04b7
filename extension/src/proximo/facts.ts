/**
 * proximo as seen from the host, gathered before planning: its CA certificate (the planner
 * mounts it at the contract's proximoCa path) and the host names it routes (pinned to the host
 * gateway in ExtraHosts). Only facts here; the planner decides what they mean.
 */
import { isAbsolute, join } from 'node:path';
import { z } from 'zod';
import { isFile } from '../config/files';
import { HOST } from '../contract/upstream';
import type { ProximoFacts } from '../contract/types';
import { runHostProcess } from '../host/process';
import { findProximoBinary, proximoChildPath } from './binary';

/** How long a read-only proximo query may take before we give up on it. */
const QUERY_TIMEOUT_MS = 10_000;
const QUERY_MAX_OUTPUT = 4 * 1024 * 1024;

export interface DetectProximoOptions {
  home: string;
  env: NodeJS.ProcessEnv;
  /** Gets one line when a query fails; detection carries on with what it has. */
  log?: (message: string) => void;
  /** Overrides the dirs searched after PATH (tests). */
  fallbackDirs?: string[];
}

/** Runs `proximo <args>` with argv (no shell) and returns stdout, or throws with stderr. */
async function queryProximo(binary: string, args: string[], opts: DetectProximoOptions): Promise<string> {
  const failed = (detail: string) => new Error(`\`proximo ${args.join(' ')}\` failed: ${detail}`);
  const r = await runHostProcess({
    file: binary,
    args,
    env: { from: opts.env, pass: 'all', set: { PATH: proximoChildPath(binary, opts.env.PATH, opts.home) } },
    cwd: opts.home,
    timeoutMs: QUERY_TIMEOUT_MS,
    maxOutputBytes: QUERY_MAX_OUTPUT,
  }).catch((error: Error) => {
    throw failed(error.message);
  });
  if (r.timedOut) throw failed(`it did not finish within ${QUERY_TIMEOUT_MS / 1000} s`);
  if (r.truncated) throw failed(`it wrote more than ${QUERY_MAX_OUTPUT} bytes`);
  if (r.exit !== 0) throw failed(r.stderr.trim().split('\n')[0] || `exit code ${r.exit}`);
  return r.stdout;
}

/** `proximo config ca-path` prints the CA path even before it exists; fall back to its default. */
export async function proximoCaPath(binary: string | undefined, opts: DetectProximoOptions): Promise<string> {
  const fallback = join(opts.home, HOST.proximoCaFallback);
  if (binary === undefined) return fallback;
  try {
    const printed = (await queryProximo(binary, ['config', 'ca-path'], opts)).trim().split('\n')[0]?.trim() ?? '';
    if (isAbsolute(printed)) return printed;
    opts.log?.(`proximo config ca-path printed no absolute path; using ${fallback}`);
  } catch (error) {
    opts.log?.(`${(error as Error).message}; using ${fallback}`);
  }
  return fallback;
}

/** A DNS name we are willing to put into ExtraHosts. */
const hostName = z
  .string()
  .max(253)
  .regex(/^[A-Za-z0-9](?:[A-Za-z0-9-]*[A-Za-z0-9])?(?:\.[A-Za-z0-9](?:[A-Za-z0-9-]*[A-Za-z0-9])?)*$/);

/** The `proximo status --json` document, read loosely: unknown fields are ignored. */
const statusDocument = z.object({
  routes: z.array(
    z.object({
      bare: z.string().optional(),
      qualified: z.string().optional(),
      peer: z.object({ bare: z.string().optional(), qualified: z.string().optional() }).optional(),
    }),
  ),
});

/**
 * The host names a status document says are served. A row carrying only `claimed` (a warning
 * row) answers on nothing, so only `bare`, `qualified` and the peer's names count.
 */
export function routedHostsFromStatus(json: string): string[] {
  const doc = statusDocument.parse(JSON.parse(json));
  const hosts = new Set<string>();
  for (const route of doc.routes) {
    for (const name of [route.bare, route.qualified, route.peer?.bare, route.peer?.qualified]) {
      if (name !== undefined && hostName.safeParse(name).success) hosts.add(name.toLowerCase());
    }
  }
  return [...hosts].sort();
}

export async function proximoRoutedHosts(binary: string, opts: DetectProximoOptions): Promise<string[]> {
  try {
    return routedHostsFromStatus(await queryProximo(binary, ['status', '--json'], opts));
  } catch (error) {
    const reason = error instanceof z.ZodError ? 'its output is not the expected document' : (error as Error).message;
    opts.log?.(`Could not read proximo's routed hosts (${reason}); the container gets no proximo host entries.`);
    return [];
  }
}

/** proximo is on when its CA exists on the host; undefined means off. */
export async function detectProximo(opts: DetectProximoOptions): Promise<ProximoFacts | undefined> {
  const binary = findProximoBinary({ pathEnv: opts.env.PATH, home: opts.home, fallbackDirs: opts.fallbackDirs });
  const caPath = await proximoCaPath(binary, opts);
  if (!isFile(caPath)) return undefined;
  const hosts = binary === undefined ? [] : await proximoRoutedHosts(binary, opts);
  return { caPath, hosts };
}
