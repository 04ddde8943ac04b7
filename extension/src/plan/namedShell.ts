/**
 * Named shells (`toolbox shell <name>`), after upstream `cmd/shell_named.go`: the name is looked up
 * in the config's `shells:` block, and the container works in that entry's `path`, bound at
 * /workspace and at its own path, whatever folder the command ran from. A name that is not
 * configured is refused with upstream's hint (what to add to ~/.toolbox.yaml, and the
 * `--create` that writes it); a configured path that is missing, a symlink or not a directory is
 * refused too. Pure: the one host fact it needs (what is at a path, without following a final
 * symlink) comes in as an argument.
 *
 * The refusal texts are upstream's, byte for byte (test/unit/parity.test.ts cites them), because
 * a user who switches between the CLI and the editor reads the same words in both.
 */
import { cleanPath, namedShellName, sanitizeShellName } from './naming';
import { validateWorkspaceBindPath } from './mounts';
import type { ShellConfig } from '../config/model';
import type { ObjectNames } from '../contract/types';

/** What `lstat` finds at a path (a final symlink is not followed). */
export type PathKind = 'directory' | 'symlink' | 'file' | 'missing';

/** Why a named shell cannot open; `message` is upstream's text. */
export type NamedShellProblem = 'not-configured' | 'empty-path' | 'not-absolute' | 'missing-path' | 'symlink' | 'not-directory';

/**
 * A named shell refused before anything was created. `name` is `NamedShellRefusal` (checked by
 * name, not `instanceof`: the UI and the backend are separate bundles).
 */
export class NamedShellRefusal extends Error {
  constructor(
    message: string,
    readonly problem: NamedShellProblem,
    /** The `shells:` key the entry has, or would get. */
    readonly key: string,
    /** The configured path, or the path upstream's `--create` would use. */
    readonly path: string,
  ) {
    super(message);
    this.name = 'NamedShellRefusal';
  }
}

export function isNamedShellRefusal(err: unknown): err is NamedShellRefusal {
  return err instanceof Error && err.name === 'NamedShellRefusal' && 'problem' in err;
}

/**
 * The `shells:` key a name is found under: trimmed and lower-cased, as viper lower-cases every
 * key it loads (upstream `config.NormalizeShellKey`).
 */
export function shellKey(name: string): string {
  return name.trim().toLowerCase();
}

/** The entry of `shells` for `name` (keys compared by their normalised form), if any. */
export function configuredShell(
  shells: Readonly<Record<string, ShellConfig>>,
  name: string,
): { key: string; path: string | undefined; env: Record<string, string> } | undefined {
  const want = shellKey(name);
  const key = Object.keys(shells).find((k) => k === name) ?? Object.keys(shells).find((k) => shellKey(k) === want);
  if (key === undefined) return undefined;
  return { key, path: shells[key]!.path, env: shells[key]!.env };
}

/** The configured shells, sorted by key, for a picker. */
export function listConfiguredShells(shells: Readonly<Record<string, ShellConfig>>): Array<{ key: string; path: string }> {
  return Object.keys(shells)
    .sort()
    .map((key) => ({ key, path: (shells[key]!.path ?? '').trim() }));
}

/**
 * The key a writer must use for `name` in a file whose `shells:` has `existing` keys: the
 * existing spelling when one normalises to the same key, else the normalised form (upstream
 * `configedit.ShellKeyIn`), so an edit never adds a second key that collapses onto the first.
 */
export function shellKeyIn(existing: readonly string[], name: string): string {
  const key = shellKey(name);
  return existing.find((e) => shellKey(e) === key) ?? key;
}

/** `$HOME/toolbox-shells/<key>`, or `/tmp/<key>` without a home (upstream `defaultShellPath`). */
export function defaultShellPath(home: string, name: string): string {
  const key = shellKey(name);
  return home === '' ? cleanPath(`/tmp/${key}`) : cleanPath(`${home}/toolbox-shells/${key}`);
}

/** Go's `%q` for the strings these messages quote. */
function q(s: string): string {
  return JSON.stringify(s);
}

function createHint(name: string, path: string): string {
  return `Create the directory:\n\n  mkdir -p ${path}\n\nOr re-run with auto-create:\n\n  toolbox shell ${name} --create`;
}

/** Upstream `missingShellHint`: the name as typed, then the block and command by the canonical key. */
export function missingShellHint(home: string, name: string): string {
  const key = shellKey(name);
  const path = defaultShellPath(home, name);
  return `shell ${q(name)} not configured\n\nAdd to ~/.toolbox.yaml:\n\n  shells:\n    ${key}:\n      path: ${path}\n\n${createHint(key, path)}`;
}

/** Upstream `missingPathHint`. */
export function missingPathHint(sanitized: string, path: string): string {
  return `path ${path} does not exist\n\n${createHint(sanitized, path)}`;
}

/**
 * The folder a named shell works in: its configured `path`, checked as upstream's
 * `resolveShellWorkspace` and `ensureNamedShellPath` do. `sanitized` is the name as it appears
 * in the container name (the messages name the shell by it). Throws NamedShellRefusal.
 */
export function namedShellWorkspace(
  name: string,
  sanitized: string,
  shells: Readonly<Record<string, ShellConfig>>,
  home: string,
  lstat: (path: string) => PathKind,
): string {
  const entry = configuredShell(shells, name);
  if (entry === undefined) {
    throw new NamedShellRefusal(missingShellHint(home, name), 'not-configured', shellKey(name), defaultShellPath(home, name));
  }
  const path = (entry.path ?? '').trim();
  if (path === '') throw new NamedShellRefusal(`shell ${q(name)} has empty path`, 'empty-path', entry.key, path);
  if (!path.startsWith('/')) throw new NamedShellRefusal(`path ${q(path)} is not absolute`, 'not-absolute', entry.key, path);
  // A ':' is refused with the same words as a folder path that has one (upstream workspace.Validate).
  validateWorkspaceBindPath(cleanPath(path));
  switch (lstat(path)) {
    case 'missing':
      throw new NamedShellRefusal(missingPathHint(sanitized, path), 'missing-path', entry.key, path);
    case 'symlink':
      throw new NamedShellRefusal(
        `shell ${q(sanitized)} path ${path} is a symlink; point shells.${sanitized}.path at the resolved target directly`,
        'symlink',
        entry.key,
        path,
      );
    case 'file':
      throw new NamedShellRefusal(`shell ${q(sanitized)} path ${path} is not a directory`, 'not-directory', entry.key, path);
    case 'directory':
      return path;
  }
}

/**
 * The folder `toolbox shell <name>` works in, whatever folder it is run from: the name checked
 * by the CLI's rules first (plan/naming.ts throws its refusal), then looked up and checked
 * (namedShellWorkspace). The backend's open and the parity tests both go through here.
 */
export function namedShellFolder(
  name: string,
  shells: Readonly<Record<string, ShellConfig>>,
  home: string,
  lstat: (path: string) => PathKind,
  names: ObjectNames,
): string {
  namedShellName(name, { peer: false }, names);
  return namedShellWorkspace(name, sanitizeShellName(name), shells, home, lstat);
}
