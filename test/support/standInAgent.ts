/**
 * A stand-in coding agent for tests: a script first on a toolbox container's PATH, which starts
 * with ~/.npm-global/bin, mounted from `<mounts root>/npm-global` (plan/mounts.ts DEFAULT_MOUNTS).
 */
import { chmodSync, mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

/** Writes `script` as `<home>/.toolbox/npm-global/bin/<name>` (the default mounts root), executable. */
export function installStandInAgent(home: string, name: string, script: string): void {
  const bin = join(home, '.toolbox', 'npm-global', 'bin');
  mkdirSync(bin, { recursive: true });
  writeFileSync(join(bin, name), script);
  chmodSync(join(bin, name), 0o755);
}
