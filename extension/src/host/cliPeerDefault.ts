/**
 * Which peer-messaging default the `toolbox` CLI on PATH ships (docs/decisions/0018): newer
 * releases ship it off (upstream ADR 0013), older ones on, and the extension on
 * (docs/decisions/0001). The CLI is asked for the value it would use, `toolbox config show`
 * (its `peer_messaging:` line), run with no TOOLBOX_* variable and from the home folder, so
 * when the user has set the key nowhere the answer is the CLI's built-in default. A CLI whose
 * `config show` prints no such line (older releases, which shipped it on) answers nothing.
 *
 * No vscode here (unit-tested with a fake `toolbox` script, test/unit/cli-peer-default.test.ts).
 * The program is run through host/process.ts (node built-ins only, so this stays light in the
 * activation bundle): an argv array, never a shell, bounded in time and output.
 */
import { constants, promises as fsp } from 'node:fs';
import { delimiter, isAbsolute, join } from 'node:path';
import { runHostProcess } from './process';

/** The CLI's name on PATH. */
export const CLI_NAME = 'toolbox';

/** Limits for the one `config show` run (it reads two YAML files and prints ~40 lines). */
export const CLI_QUERY_LIMITS = { timeoutMs: 5_000, maxOutputBytes: 256 * 1024 };

/** The first executable regular file named `name` in PATH's directories (absolute ones only), or undefined. */
export async function findOnPath(name: string, pathVar: string | undefined): Promise<string | undefined> {
  for (const dir of (pathVar ?? '').split(delimiter)) {
    if (dir === '' || !isAbsolute(dir)) continue; // a relative PATH entry would depend on the cwd
    const candidate = join(dir, name);
    try {
      const st = await fsp.stat(candidate);
      if (!st.isFile()) continue;
      await fsp.access(candidate, constants.X_OK);
      return candidate;
    } catch {
      // not there, or not executable: try the next directory
    }
  }
  return undefined;
}

/** `peer_messaging: true|false` in `toolbox config show` output; undefined when the line is absent. */
export function parsePeerMessagingLine(stdout: string): boolean | undefined {
  const m = /^peer_messaging:\s*(true|false)\b/m.exec(stdout);
  return m ? m[1] === 'true' : undefined;
}

/** The environment for the query: the caller's, without any TOOLBOX_* variable, HOME set. */
export function queryEnv(env: NodeJS.ProcessEnv, home: string): NodeJS.ProcessEnv {
  const out: NodeJS.ProcessEnv = {};
  for (const [k, v] of Object.entries(env)) if (!k.startsWith('TOOLBOX_')) out[k] = v;
  out.HOME = home;
  return out;
}

/**
 * The peer-messaging value the CLI at `binary` uses when nothing sets it, or undefined when it
 * does not say (older CLI, error, timeout, oversized output).
 */
export async function readCliPeerDefault(
  binary: string,
  home: string,
  env: NodeJS.ProcessEnv,
  limits: { timeoutMs: number; maxOutputBytes: number } = CLI_QUERY_LIMITS,
): Promise<boolean | undefined> {
  const r = await runHostProcess({
    file: binary,
    args: ['config', 'show'],
    cwd: home,
    env: { from: queryEnv(env, home), pass: 'all' },
    timeoutMs: limits.timeoutMs,
    maxOutputBytes: limits.maxOutputBytes,
    output: 'stdout',
  }).catch(() => undefined);
  return r?.exit === 0 && !r.truncated ? parsePeerMessagingLine(r.stdout) : undefined;
}
