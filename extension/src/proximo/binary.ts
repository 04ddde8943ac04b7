/**
 * Finding the host's proximo binary and the PATH its children see. The bridge runs exactly one
 * resolved binary, directly with an argv array and no shell
 * (docs/decisions/0008-proximo-through-the-bridge.md).
 */
import { accessSync, constants, statSync } from 'node:fs';
import { delimiter, dirname, isAbsolute, join } from 'node:path';

export const PROXIMO_BINARY = 'proximo';

/** What a user runs to get proximo onto the host (upstream README). */
export const PROXIMO_INSTALL_HINT =
  'install it on the host with `brew install filippolmt/tap/proximo` (macOS) or ' +
  '`go install github.com/filippolmt/proximo@latest` (Linux), then run `proximo install` once';

/** Where proximo lands when PATH (a GUI-launched editor's PATH especially) does not name it. */
export function proximoFallbackDirs(home: string): string[] {
  return ['/opt/homebrew/bin', '/usr/local/bin', join(home, 'go', 'bin')];
}

/** Extra dirs a proximo child needs on PATH: docker and its compose plugin live there. */
function childPathExtras(home: string): string[] {
  return [...proximoFallbackDirs(home), join(home, '.docker', 'bin'), join(home, '.orbstack', 'bin')];
}

function isExecutableFile(path: string): boolean {
  try {
    if (!statSync(path).isFile()) return false;
    accessSync(path, constants.X_OK);
    return true;
  } catch {
    return false;
  }
}

export interface ProximoLookup {
  /** The PATH to search first (the extension host's own PATH). */
  pathEnv: string | undefined;
  home: string;
  /** Searched after PATH; defaults to proximoFallbackDirs(home). */
  fallbackDirs?: string[];
}

/** The absolute path of the one proximo binary the bridge may run, or undefined. */
export function findProximoBinary(lookup: ProximoLookup): string | undefined {
  const fromPath = (lookup.pathEnv ?? '').split(delimiter).filter((d) => isAbsolute(d));
  const dirs = [...fromPath, ...(lookup.fallbackDirs ?? proximoFallbackDirs(lookup.home))];
  for (const dir of dirs) {
    const candidate = join(dir, PROXIMO_BINARY);
    if (isExecutableFile(candidate)) return candidate;
  }
  return undefined;
}

/** PATH for a proximo child: its own dir first, the inherited PATH, then the usual tool dirs. */
export function proximoChildPath(binary: string, pathEnv: string | undefined, home: string): string {
  const dirs = [dirname(binary), ...(pathEnv ?? '').split(delimiter), ...childPathExtras(home)];
  return [...new Set(dirs.filter((d) => d !== ''))].join(delimiter);
}
