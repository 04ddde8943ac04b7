/**
 * The hosts of a workspace's own git remotes, read from its `.git/config` as data. The file is
 * container-writable, so git is never run on it (a repository-local config can name programs
 * git runs: `core.fsmonitor`, `credential.helper`, …): it is opened without following a
 * symlink, only when it is a regular file, up to GIT_CONFIG_READ_LIMIT bytes, and parsed here.
 */
import { constants } from 'node:fs';
import { lstat, open } from 'node:fs/promises';
import { join } from 'node:path';
import { readBounded } from '../host/gitRepo';

/** A workspace's `.git/config` larger than this is not read for its remotes (it is container-writable). */
export const GIT_CONFIG_READ_LIMIT = 64 * 1024;

/** The git credential protocol's `host`: a DNS name or IP literal, optionally `:port`. */
const HOST_RE = /^(?:[a-z0-9_](?:[a-z0-9_-]*[a-z0-9_])?(?:\.[a-z0-9_](?:[a-z0-9_-]*[a-z0-9_])?)*|\[[0-9a-f:.]+\])(?::\d{1,5})?$/;

/** The host in the form every comparison uses (lowercase), or undefined when it is not a host name. */
export function normalizeHost(host: string): string | undefined {
  const lower = host.toLowerCase();
  return lower.length <= 260 && HOST_RE.test(lower) ? lower : undefined;
}

/**
 * The credential host a remote URL leads to: `host[:port]` for http(s), where git asks for
 * credentials with exactly that host; the host name alone for ssh and scp-like remotes (a
 * token for the same server is asked for over https, on its default port). Local paths and
 * other transports have none.
 */
export function hostOfRemoteUrl(url: string): string | undefined {
  const scheme = /^([a-z][a-z0-9+.-]*):\/\/([^/?#]*)/i.exec(url);
  if (scheme) {
    const kind = scheme[1].toLowerCase();
    // The first `@` ends the user part, as in git's credential_from_url.
    const authority = scheme[2].slice(scheme[2].indexOf('@') + 1);
    if (kind === 'http' || kind === 'https') return normalizeHost(authority);
    if (['ssh', 'git', 'git+ssh', 'ssh+git'].includes(kind)) return normalizeHost(authority.replace(/:\d*$/, ''));
    return undefined;
  }
  // scp-like `[user@]host:path`: a colon before any slash (git's rule), not a Windows drive.
  const scp = /^(?:[^@/]*@)?(\[[^\]]*\]|[^:/]+):/.exec(url);
  if (scp && !/^[a-z]$/i.test(scp[1])) return normalizeHost(scp[1]);
  return undefined;
}

/** One git config value: quotes removed, escapes applied, a trailing comment dropped. */
function parseValue(raw: string): string {
  let out = '';
  let quoted = false;
  let pendingSpace = '';
  for (let i = 0; i < raw.length; i++) {
    const c = raw[i] as string;
    if (c === '\\' && i + 1 < raw.length) {
      const n = raw[++i] as string;
      out += pendingSpace + ({ n: '\n', t: '\t', b: '\b' }[n] ?? n);
      pendingSpace = '';
    } else if (c === '"') {
      out += pendingSpace;
      pendingSpace = '';
      quoted = !quoted;
    } else if (!quoted && (c === '#' || c === ';')) {
      break;
    } else if (!quoted && (c === ' ' || c === '\t')) {
      pendingSpace += out === '' ? '' : c;
    } else {
      out += pendingSpace + c;
      pendingSpace = '';
    }
  }
  return out;
}

interface ParsedConfig {
  urls: string[];
  /** `url.<base>.insteadOf` rewrites: [prefix, base]. */
  insteadOf: Array<[string, string]>;
}

function parseRemotes(text: string): ParsedConfig {
  const parsed: ParsedConfig = { urls: [], insteadOf: [] };
  let section = '';
  let subsection = '';
  // Continuation lines (a backslash at the end) are joined first.
  for (let line of text.replace(/\\\r?\n/g, '').split(/\r?\n/)) {
    line = line.trim();
    if (line.startsWith('[')) {
      const close = line.indexOf(']');
      if (close < 0) continue;
      const header = line.slice(1, close).trim();
      const sub = /^([\w.-]+)\s+"((?:[^"\\]|\\.)*)"$/.exec(header);
      if (sub) {
        section = sub[1].toLowerCase();
        subsection = sub[2].replace(/\\(.)/g, '$1');
      } else {
        // `[remote.origin]`, the deprecated form: the subsection is lowercased by git.
        const dot = header.indexOf('.');
        section = (dot < 0 ? header : header.slice(0, dot)).toLowerCase();
        subsection = dot < 0 ? '' : header.slice(dot + 1).toLowerCase();
      }
      line = line.slice(close + 1).trim();
      if (line === '') continue;
    }
    const kv = /^([a-z][\w-]*)\s*(?:=\s*(.*))?$/i.exec(line);
    if (!kv || kv[2] === undefined) continue;
    const key = kv[1].toLowerCase();
    const value = parseValue(kv[2]);
    if (section === 'remote' && (key === 'url' || key === 'pushurl')) parsed.urls.push(value);
    if (section === 'url' && (key === 'insteadof' || key === 'pushinsteadof')) parsed.insteadOf.push([value, subsection]);
  }
  return parsed;
}

/** Hosts of every `remote.*.url` / `pushurl` in a git config text, after `insteadOf` rewrites. */
export function remoteHostsFromConfig(text: string): string[] {
  const { urls, insteadOf } = parseRemotes(text);
  const hosts = new Set<string>();
  for (const url of urls) {
    let best: [string, string] | undefined;
    for (const rule of insteadOf) if (rule[0] !== '' && url.startsWith(rule[0]) && (!best || rule[0].length > best[0].length)) best = rule;
    const host = hostOfRemoteUrl(best ? best[1] + url.slice(best[0].length) : url);
    if (host !== undefined) hosts.add(host);
  }
  return [...hosts].sort();
}

export interface WorkspaceRemotes {
  hosts: string[];
  /** Why nothing was read, when something was there but could not be used. */
  skipped?: string;
}

/** The remote hosts of `<folder>/.git/config`; none when there is no repository there. */
export async function readWorkspaceRemoteHosts(folder: string): Promise<WorkspaceRemotes> {
  const gitDir = join(folder, '.git');
  let dir;
  try {
    dir = await lstat(gitDir);
  } catch {
    return { hosts: [] };
  }
  // A `.git` file (worktree, submodule) points elsewhere, at a path the container chose.
  if (!dir.isDirectory()) return { hosts: [], skipped: `${gitDir} is not a directory` };
  const flags = constants.O_RDONLY | (constants.O_NOFOLLOW ?? 0) | (constants.O_NONBLOCK ?? 0);
  let handle;
  try {
    handle = await open(join(gitDir, 'config'), flags);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    return code === 'ENOENT' ? { hosts: [] } : { hosts: [], skipped: `${gitDir}/config could not be opened (${code ?? 'error'})` };
  }
  try {
    const stat = await handle.stat();
    if (!stat.isFile()) return { hosts: [], skipped: `${gitDir}/config is not a regular file` };
    const text = await readBounded(handle, GIT_CONFIG_READ_LIMIT);
    if (text === undefined) return { hosts: [], skipped: `${gitDir}/config is larger than ${GIT_CONFIG_READ_LIMIT} bytes` };
    return { hosts: remoteHostsFromConfig(text) };
  } finally {
    await handle.close();
  }
}
