/**
 * The host side of /credential: `git credential fill|approve|reject` run with a configuration and
 * an environment the container cannot influence (issue 11, finding 1).
 *
 * The approach, in two steps sharing one deadline:
 *  1. Resolve: `git config --list --show-origin -z` from a fresh empty directory outside every
 *     repository, with the extension host's git configuration (system, global and what they
 *     include unconditionally; `includeIf` conditions need a repository and match nothing here).
 *     Only the `credential.*` entries are kept; if any of them comes from a file inside a
 *     container-writable path (the workspace, the mounts root, any read-write mount source), or
 *     from anything but a file, the request is refused: an `include.path` into such a path, or a
 *     gitconfig an older container still mounts read-write, would let the container choose the
 *     helper the host runs.
 *  2. Run: `git credential` with exactly that snapshot and nothing else: system and global config
 *     off (GIT_CONFIG_NOSYSTEM, GIT_CONFIG_GLOBAL = an empty file), the kept entries passed as
 *     GIT_CONFIG_COUNT/KEY/VALUE in their original order, then `core.askPass` emptied and
 *     `credential.interactive=false`. The repository-local config of the workspace is never read
 *     (the cwd is the empty directory and GIT_CEILING_DIRECTORIES stops discovery above it), and
 *     nothing the container wrote after step 1 can change what step 2 runs.
 *
 * The environment is an allowlist (GIT_ENV_ALLOWLIST): GIT_ASKPASS, SSH_ASKPASS, GIT_CONFIG_*,
 * GIT_DIR and the like from the extension host never reach git; GIT_TERMINAL_PROMPT=0 and
 * GCM_INTERACTIVE=never are forced, so neither git nor Git Credential Manager ever prompts.
 */
import { mkdtemp, realpath, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, isAbsolute, join, resolve, sep } from 'node:path';
import { runHostProcess, HOST_PROCESS_OUTPUT_BYTES } from '../host/process';

/**
 * What host git and the user's credential helpers may inherit from the extension host: the
 * user's identity and locale, where their config and caches live, and what keychain helpers need
 * (D-Bus for libsecret, the pass/gpg stores; the Windows profile variables for GCM on Windows).
 */
export const GIT_ENV_ALLOWLIST = [
  'PATH',
  'HOME',
  'USER',
  'LOGNAME',
  'LANG',
  'LANGUAGE',
  'LC_ALL',
  'LC_CTYPE',
  'LC_MESSAGES',
  'TMPDIR',
  'XDG_CONFIG_HOME',
  'XDG_CACHE_HOME',
  'XDG_DATA_HOME',
  'XDG_RUNTIME_DIR',
  'DBUS_SESSION_BUS_ADDRESS',
  'PASSWORD_STORE_DIR',
  'GNUPGHOME',
  'GIT_EXEC_PATH',
  'SYSTEMROOT',
  'USERPROFILE',
  'APPDATA',
  'LOCALAPPDATA',
  'HOMEDRIVE',
  'HOMEPATH',
  'PATHEXT',
  'COMSPEC',
] as const;

/** Where the user's git configuration lives, honoured in the resolve step only. */
const RESOLVE_ENV = ['GIT_CONFIG_NOSYSTEM', 'GIT_CONFIG_SYSTEM', 'GIT_CONFIG_GLOBAL'] as const;

/** Set for both steps, whatever the extension host has. */
export const FORCED_GIT_ENV = { GIT_TERMINAL_PROMPT: '0', GCM_INTERACTIVE: 'never' } as const;

/** Appended after the user's credential entries in the run step, so they win. */
export const FORCED_GIT_CONFIG: ReadonlyArray<readonly [string, string]> = [
  ['core.askPass', ''],
  ['credential.interactive', 'false'],
];

/** `git credential` operations, by their git names. */
export type GitCredentialAction = 'fill' | 'approve' | 'reject';

export interface ConfigEntry {
  /** `file:<path>`, `command line:`, `blob:…`, `standard input:`. */
  origin: string;
  key: string;
  /** Undefined for a key written without `=` (boolean true). */
  value?: string;
}

/** Parses `git config --list --show-origin -z`: records of `origin NUL key [LF value] NUL`. */
export function parseConfigList(text: string): ConfigEntry[] {
  const fields = text.split('\0');
  if (fields.at(-1) === '') fields.pop();
  const entries: ConfigEntry[] = [];
  for (let i = 0; i + 1 < fields.length; i += 2) {
    const origin = fields[i] as string;
    const pair = fields[i + 1] as string;
    const nl = pair.indexOf('\n');
    entries.push(nl < 0 ? { origin, key: pair } : { origin, key: pair.slice(0, nl), value: pair.slice(nl + 1) });
  }
  return entries;
}

/** The entries the run step carries: the `credential` section, any subsection. */
export function credentialEntries(entries: ConfigEntry[]): ConfigEntry[] {
  return entries.filter((e) => e.key.toLowerCase().startsWith('credential.'));
}

async function pathForms(path: string): Promise<string[]> {
  const forms = new Set([resolve(path)]);
  try {
    forms.add(await realpath(path));
  } catch {
    // A missing file (an include the container may create later): its directory's real path.
    try {
      forms.add(join(await realpath(dirname(path)), path.slice(dirname(path).length + 1)));
    } catch {
      // Neither exists: the lexical form stands.
    }
  }
  return [...forms];
}

const inside = (path: string, root: string): boolean => path === root || path.startsWith(root.endsWith(sep) ? root : `${root}${sep}`);

/**
 * The first entry whose origin is not a file outside every writable root, as a reason; undefined
 * when all of them are safe. Paths are compared both as written and with symlinks resolved.
 */
export async function unsafeOrigin(entries: ConfigEntry[], writableRoots: string[]): Promise<string | undefined> {
  const roots = (await Promise.all(writableRoots.filter((r) => isAbsolute(r)).map(pathForms))).flat();
  for (const entry of entries) {
    if (!entry.origin.startsWith('file:')) return `${entry.key} comes from ${entry.origin.replace(/:.*$/, '')}, not a config file`;
    const file = entry.origin.slice('file:'.length);
    if (!isAbsolute(file)) return `${entry.key} comes from ${file}, a relative path`;
    const forms = await pathForms(file);
    const root = roots.find((r) => forms.some((f) => inside(f, r)));
    if (root !== undefined) return `${entry.key} is set in ${file}, which the container can write (under ${root})`;
  }
  return undefined;
}

export interface HostGitCredentialOptions {
  action: GitCredentialAction;
  /** The git credential protocol text, already validated. */
  input: string;
  /** The extension host's environment (only GIT_ENV_ALLOWLIST names are used). */
  env: NodeJS.ProcessEnv;
  /** Host paths the container can write: config from inside them is refused. */
  writableRoots: string[];
  /** For both git runs together. */
  timeoutMs: number;
  /** The `git` to run; default `git` on the allowlisted PATH. */
  git?: string;
}

export type HostGitCredentialResult =
  | { kind: 'ran'; exit: number; output: string }
  | { kind: 'unsafe-config'; reason: string }
  | { kind: 'config-error'; exit: number }
  | { kind: 'timeout' };

/** Rejects only when git could not be started at all (not installed, not on PATH). */
export async function runHostGitCredential(opts: HostGitCredentialOptions): Promise<HostGitCredentialResult> {
  const deadline = Date.now() + opts.timeoutMs;
  const git = opts.git ?? 'git';
  const dir = await mkdtemp(join(tmpdir(), 'toolbox-git-'));
  try {
    const emptyConfig = join(dir, 'empty.gitconfig');
    await writeFile(emptyConfig, '', { mode: 0o600 });
    const forced = { ...FORCED_GIT_ENV, GIT_CEILING_DIRECTORIES: dirname(dir) };
    const run = { file: git, cwd: dir, maxOutputBytes: HOST_PROCESS_OUTPUT_BYTES, output: 'stdout' } as const;

    const listed = await runHostProcess({
      ...run,
      args: ['--no-pager', 'config', '--list', '--show-origin', '-z'],
      env: { from: opts.env, pass: [...GIT_ENV_ALLOWLIST, ...RESOLVE_ENV], set: forced },
      timeoutMs: Math.max(1, deadline - Date.now()),
    });
    if (listed.timedOut) return { kind: 'timeout' };
    // `git config --list` exits 0 with no config at all; anything else is a config git cannot read.
    if (listed.exit !== 0) return { kind: 'config-error', exit: listed.exit };
    const entries = credentialEntries(parseConfigList(listed.stdout));
    const reason = await unsafeOrigin(entries, opts.writableRoots);
    if (reason !== undefined) return { kind: 'unsafe-config', reason };

    const config: Array<readonly [string, string]> = [...entries.map((e) => [e.key, e.value ?? 'true'] as const), ...FORCED_GIT_CONFIG];
    const configEnv: Record<string, string> = { GIT_CONFIG_COUNT: String(config.length) };
    config.forEach(([key, value], i) => {
      configEnv[`GIT_CONFIG_KEY_${i}`] = key;
      configEnv[`GIT_CONFIG_VALUE_${i}`] = value;
    });
    const ran = await runHostProcess({
      ...run,
      args: ['credential', opts.action],
      env: {
        from: opts.env,
        pass: GIT_ENV_ALLOWLIST,
        set: { ...forced, GIT_CONFIG_NOSYSTEM: '1', GIT_CONFIG_GLOBAL: emptyConfig, ...configEnv },
      },
      input: opts.input,
      timeoutMs: Math.max(1, deadline - Date.now()),
    });
    if (ran.timedOut) return { kind: 'timeout' };
    return { kind: 'ran', exit: ran.exit, output: ran.stdout };
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}
