/**
 * The configuration module's only I/O: find and read ~/.toolbox.yaml and the project's
 * .toolbox.yaml, then hand the texts to the pure resolver.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { HOST } from '../contract/constants';
import type { ConfigIssue, ResolvedConfig } from './model';
import { resolveConfig, type ConfigFileText, type ResolveInput } from './resolve';

/** A config file is a few lines; anything this big is not one. */
const MAX_CONFIG_BYTES = 1024 * 1024;

/**
 * The nearest .toolbox.yaml walking up from `folder`, like upstream's walkUp: the walk stops
 * before HOME (whose file is the user layer, never a project file) so nothing above HOME is
 * read, and outside HOME it ends after checking `/`. Symlinks are not resolved.
 */
export function findProjectConfig(folder: string, home: string): string | undefined {
  const stop = home ? path.resolve(home) : undefined;
  let dir = path.resolve(folder);
  for (;;) {
    if (dir === stop) return undefined;
    const candidate = path.join(dir, HOST.projectConfig);
    if (isFile(candidate)) return candidate;
    const parent = path.dirname(dir);
    if (parent === dir) return undefined;
    dir = parent;
  }
}

export interface LoadConfigOptions extends Omit<ResolveInput, 'userFile' | 'projectFile'> {
  /** The workspace folder the walk starts from. */
  folder: string;
  home: string;
}

export async function loadConfig(options: LoadConfigOptions): Promise<ResolvedConfig> {
  const { folder, home, ...rest } = options;
  const readIssues: ConfigIssue[] = [];
  const userFile = home ? await readConfigFile(path.join(home, HOST.userConfig), readIssues) : undefined;
  const projectPath = findProjectConfig(folder, home);
  // An untrusted project file is never read: the resolver only needs its path to say it was ignored.
  const projectFile: ConfigFileText | undefined =
    projectPath === undefined
      ? undefined
      : options.trusted
        ? await readConfigFile(projectPath, readIssues)
        : { path: projectPath, text: '' };
  const resolved = resolveConfig({ ...rest, userFile, projectFile });
  return { ...resolved, issues: [...readIssues, ...resolved.issues] };
}

/** Missing is fine (undefined, no issue); unreadable is an error issue and no layer. */
async function readConfigFile(file: string, issues: ConfigIssue[]): Promise<ConfigFileText | undefined> {
  try {
    const stat = await fs.promises.stat(file);
    if (stat.size > MAX_CONFIG_BYTES) {
      throw new Error(`it is ${stat.size} bytes, more than the ${MAX_CONFIG_BYTES} a config file may have`);
    }
    return { path: file, text: await fs.promises.readFile(file, 'utf8') };
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    const why = err instanceof Error ? err.message : String(err);
    issues.push({
      severity: 'error',
      source: file,
      key: '',
      message: `could not be read (${why}); fix its permissions or remove it. Its settings are not applied.`,
    });
    return undefined;
  }
}

/** A regular file (after symlinks); false for anything that cannot be stat'ed. */
export function isFile(p: string): boolean {
  try {
    return fs.statSync(p).isFile();
  } catch {
    return false;
  }
}
