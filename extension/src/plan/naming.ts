/**
 * Container names, byte-identical to upstream `sessionplan` (plan.go, peer.go) so the CLI and
 * the extension find the same container for the same workspace. Pure: no I/O.
 *
 *   workspace:   <prefix>-<slug>-<sha256(seed)[:8]>
 *   named shell: <prefix>-named-<sanitized>[-<sanitized profile>][.peer]
 *
 * Production passes objectNames() (prefix `toolbox`); tests pass their own prefix. The slug and
 * named-shell caps are upstream's fixed numbers (46, 49), not derived from the prefix, so a test
 * prefix exercises exactly the slug production would compute.
 */
import { createHash } from 'node:crypto';
import { NAME_PREFIX, NAMING, OBJECT_SUFFIX } from '../contract/upstream';
import type { ObjectNames } from '../contract/types';

export interface WorkspaceNameOptions {
  /** Active profile (`--profile`); folded into the hash seed. */
  profile?: string;
  /** Share tokens of the profile; ignored without a profile, as upstream does. */
  share?: string[];
  /** Peer messaging for this run; on folds `\x00peer=1` into the seed. */
  peer: boolean;
}

export interface NamedShellOptions {
  profile?: string;
  peer: boolean;
}

/**
 * Go's `filepath.Clean` for POSIX paths: collapses `//`, drops `.`, resolves `..` lexically
 * (never above `/`), removes a trailing slash; the empty path becomes `.`.
 */
export function cleanPath(p: string): string {
  if (p === '') return '.';
  const rooted = p.startsWith('/');
  const out: string[] = [];
  for (const part of p.split('/')) {
    if (part === '' || part === '.') continue;
    if (part === '..') {
      if (out.length > 0 && out[out.length - 1] !== '..') out.pop();
      else if (!rooted) out.push('..');
      continue;
    }
    out.push(part);
  }
  const body = out.join('/');
  if (rooted) return `/${body}`;
  return body === '' ? '.' : body;
}

/** Go's `filepath.Base` for POSIX paths. */
function basename(p: string): string {
  if (p === '') return '.';
  const trimmed = p.replace(/\/+$/, '');
  if (trimmed === '') return '/';
  return trimmed.slice(trimmed.lastIndexOf('/') + 1);
}

/**
 * Go's `strings.ToLower` as far as the slug can tell: Go maps each code point on its own
 * (simple case mapping), JS `toLowerCase` uses full mappings. The only two non-ASCII code points
 * whose simple lowercase is ASCII are U+0130 (İ → i) and U+212A (Kelvin sign → k); every other
 * non-ASCII code point ends up in a `-` run either way. JS would turn İ into "i\u0307" and so
 * produce a different slug ("i-stanbul" instead of "istanbul").
 */
function goLower(s: string): string {
  let out = '';
  for (const ch of s) {
    const cp = ch.codePointAt(0)!;
    if (cp >= 0x41 && cp <= 0x5a) out += String.fromCharCode(cp + 0x20);
    else if (cp === 0x130) out += 'i';
    else if (cp === 0x212a) out += 'k';
    else out += ch;
  }
  return out;
}

/** Lowercase, runs outside [a-z0-9] become `-`, outer `-` trimmed (upstream `sanitizeRe`). */
function slugify(s: string): string {
  return goLower(s)
    .replace(/[^a-z0-9]+/g, '-')
    .replace(/^-+|-+$/g, '');
}

/**
 * The workspace slug: the basename, slugified, `root` when nothing survives. Uncapped: this is
 * also CLAUDE_REMOTE_CONTROL_SESSION_NAME_PREFIX; only the container name cuts it to 46.
 */
export function workspaceSlug(absPath: string): string {
  return slugify(basename(cleanPath(absPath))) || NAMING.slugFallback;
}

/** Upstream SanitizeShellName: trim, lowercase, runs outside [a-z0-9] → `-`, trim `-`. */
export function sanitizeShellName(name: string): string {
  return slugify(name.trim());
}

/** First 8 lowercase hex chars of SHA-256(seed): the workspace hash. */
export function hashSeed(seed: string): string {
  return createHash('sha256').update(seed, 'utf8').digest('hex').slice(0, NAMING.hashHexChars);
}

/**
 * Why a profile name cannot be used, or undefined: a profile is a directory under
 * ~/.toolbox/profiles, so upstream refuses an empty name, `.`, `..` and a path separator
 * (`/` or a backslash) before it becomes a path (filippolmt/toolbox@2818a99f09e808fc036fd3abae9d1928665d617a
 * cmd/shell.go resolveShellProfile); a NUL cannot be in a file name either.
 */
export function profileNameProblem(profile: string): string | undefined {
  if (profile === '' || profile === '.' || profile === '..' || /[/\\]/.test(profile) || profile.includes('\x00')) {
    return `Invalid profile name "${profile}": a profile is a directory under ~/.toolbox/profiles, so it must be non-empty, contain no "/" or "\\", and not be "." or "..". Pick a plain name such as "work".`;
  }
  return undefined;
}

/** Throws profileNameProblem's sentence for a name upstream refuses. */
export function validateProfileName(profile: string): void {
  const problem = profileNameProblem(profile);
  if (problem !== undefined) throw new Error(problem);
}

/**
 * The hash seed of a workspace container: the clean absolute path, plus
 * `\x00profile=<name>\x00share=<sorted share + bridge>` under a profile and `\x00peer=1` when
 * peer messaging is on. Peer on without a profile gives `abs + "\x00profile=\x00peer=1"`.
 */
export function workspaceSeed(absPath: string, opts: WorkspaceNameOptions): string {
  const abs = absoluteWorkspace(absPath);
  let discriminator = '';
  if (opts.profile !== undefined) {
    validateProfileName(opts.profile);
    // Go sort.Strings is bytewise; share tokens are mount names (ASCII), where UTF-16 order agrees.
    const share = [...(opts.share ?? []), NAMING.bridgeShareToken].sort();
    discriminator = opts.profile + NAMING.shareSeed + share.join(',');
  }
  if (opts.peer) discriminator += NAMING.peerSeed;
  return discriminator === '' ? abs : abs + NAMING.profileSeed + discriminator;
}

/** `<prefix>-<slug>-<hash8>`, slug cut to 46 chars with trailing `-` trimmed. */
export function workspaceContainerName(absPath: string, opts: WorkspaceNameOptions, names: ObjectNames): string {
  const abs = absoluteWorkspace(absPath);
  let slug = workspaceSlug(abs);
  if (slug.length > NAMING.maxSlug) {
    slug = slug.slice(0, NAMING.maxSlug).replace(/-+$/, '') || NAMING.slugFallback;
  }
  return `${names.prefix}-${slug}-${hashSeed(workspaceSeed(abs, opts))}`;
}

/**
 * `<prefix>-named-<s>[-<profile>][.peer]`. The limits are upstream's CLI refusals: a name with
 * no letter or digit, a sanitized name that looks like a workspace hash (8 hex chars, which
 * would impersonate a workspace container), or one longer than 49 chars. No truncation.
 * `.peer` cannot come out of sanitizing, so `infra` with peer on never meets `infra-peer` or
 * `infra.peer` (which sanitizes to `infra-peer`).
 */
export function namedShellName(name: string, opts: NamedShellOptions, names: ObjectNames): string {
  let sanitized = sanitizeShellName(name);
  if (sanitized === '') {
    throw new Error(
      `Shell name "${name}" has no letters or digits, so it cannot name a container. Use letters, digits and "-" (for example "infra").`,
    );
  }
  if (new RegExp(`^[a-f0-9]{${NAMING.hashHexChars}}$`).test(sanitized)) {
    throw new Error(
      `Shell name "${name}" looks like a workspace hash (${NAMING.hashHexChars} hex characters) and would be mistaken for a workspace container. Pick a different name.`,
    );
  }
  if (sanitized.length > NAMING.maxNamedShell) {
    throw new Error(
      `Shell name "${name}" is too long: it becomes "${sanitized}" (${sanitized.length} characters) and the limit is ${NAMING.maxNamedShell}. Pick a shorter name.`,
    );
  }
  if (opts.profile !== undefined && opts.profile !== '') {
    sanitized += `-${sanitizeShellName(opts.profile)}`;
  }
  if (opts.peer) sanitized += NAMING.namedPeerSuffix;
  return `${names.prefix}-${OBJECT_SUFFIX.named}-${sanitized}`;
}

/** The clean absolute workspace path; a relative one is refused (there is no CWD to resolve it). */
export function absoluteWorkspace(p: string): string {
  if (!p.startsWith('/')) {
    throw new Error(
      `Workspace path "${p}" is not absolute: the container name is derived from the absolute folder path. Open the folder by its full path.`,
    );
  }
  return cleanPath(p);
}

/** The longest DNS label (RFC 1123): a container's host name is one label. */
export const MAX_HOSTNAME_CHARS = 63;

/**
 * The container's host name, from its name (the prompt shows it instead of a container id): one
 * RFC 1123 label, lower case letters, digits and inner hyphens, at most 63 characters. A named
 * shell's `.peer` becomes `-peer`: a dot would split the name into a host and a domain.
 */
export function containerHostname(containerName: string): string {
  const label = containerName
    .toLowerCase()
    .replace(/[^a-z0-9-]+/g, '-')
    .slice(0, MAX_HOSTNAME_CHARS)
    .replace(/^-+|-+$/g, '');
  return label === '' ? NAME_PREFIX : label;
}
