/**
 * A container registry on loopback for the pull-before-build tests (issue #14): Debian's
 * distribution registry started by scripts/ensure-registry.sh with its own config and storage in
 * a temporary directory, stopped again by the test that started it.
 */
import type Docker from 'dockerode';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { TEST_ENGINE } from './docker';
import { repoRoot } from './image';

export interface LoopbackRegistry {
  /** `127.0.0.1:<port>`, usable as a registry_mirror. */
  address: string;
  stop(): void;
}

export function startRegistry(prefix: string): LoopbackRegistry {
  const dir = mkdtempSync(join(tmpdir(), `${prefix}-registry-`));
  const script = join(repoRoot(), 'scripts', 'ensure-registry.sh');
  // The Podman pass uses the one port its test engine trusts over plain HTTP (scripts/ensure-podman.sh).
  const port = TEST_ENGINE === 'podman' ? (process.env.TOOLBOX_TEST_REGISTRY_PORT ?? '55055') : undefined;
  const env = port ? { ...process.env, REGISTRY_PORT: port } : process.env;
  const address = execFileSync('bash', [script, 'start', dir], { encoding: 'utf8', env }).trim();
  return {
    address,
    stop() {
      execFileSync('bash', [script, 'stop', dir]);
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** `docker push` through the Engine API; rejects with the engine's error text. */
export async function pushImage(d: Docker, ref: string): Promise<void> {
  // The engine wants an X-Registry-Auth header even for a registry without authentication.
  const stream = (await d.getImage(ref).push({ authconfig: {} } as object)) as NodeJS.ReadableStream;
  await new Promise<void>((resolve, reject) => {
    d.modem.followProgress(stream, (err: Error | null, events: { error?: string }[]) => {
      const failed = events?.find((e) => e.error);
      if (err) reject(err);
      else if (failed) reject(new Error(failed.error));
      else resolve();
    });
  });
}
