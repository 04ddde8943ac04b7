/**
 * A repository's git config, read as data (docs/decisions/0039-host-git-on-a-checked-copy-of-the-config.md).
 * The workspace's `.git/config` is container-writable, so host git never reads it: this module
 * parses the text with git's own grammar (config.c), refuses any key outside a short allowlist of
 * keys that are data (a key that names a program, an include, a filter, a hook…), and writes the
 * allowlisted entries back in one canonical form, which is the only config host git then sees
 * (host/gitRepo.ts). Pure: text in, entries or a refusal out.
 */

/** A repository config larger than this is refused unread (it is container-writable). */
export const REPO_CONFIG_LIMIT = 64 * 1024;

export interface ConfigEntry {
  /** Lowercased. */
  section: string;
  /** As written (case-sensitive) for `[section "sub"]`, lowercased for the old `[section.sub]`. */
  subsection?: string;
  /** Lowercased. */
  name: string;
  /** undefined for a key written without `=` (boolean true). */
  value?: string;
  /** 1-based line of the key. */
  line: number;
}

export interface ConfigRefusal {
  /** The key as git names it (`core.fsmonitor`, `remote.origin.uploadpack`), or empty for a syntax error. */
  key: string;
  line: number;
  /** Why, as the end of a sentence ("names a program git would run"). */
  reason: string;
}

export type ParsedConfig = { entries: ConfigEntry[] } | { refused: ConfigRefusal };

const isKeyChar = (c: string) => /^[A-Za-z0-9-]$/.test(c);
const isSpace = (c: string) => c === ' ' || c === '\t' || c === '\n' || c === '\v' || c === '\f' || c === '\r';

/**
 * Parses config text as git does (config.c git_parse_source, get_base_var, get_value,
 * parse_value): sections `[s]`, `[s "sub"]` (`\` takes the next character), the old `[s.sub]`,
 * `key = value` with quotes, `\t \n \b \" \\` escapes and `\`-newline continuations, `#`/`;`
 * comments. Anything git would reject is refused here too, and so is anything this parser is not
 * sure git reads the same way (a NUL, a lone CR).
 */
export function parseGitConfig(text: string): ParsedConfig {
  if (text.includes('\0')) return { refused: { key: '', line: 1, reason: 'contains a NUL byte' } };
  const src = (text.startsWith('\uFEFF') ? text.slice(1) : text).replace(/\r\n/g, '\n');
  const lone = src.indexOf('\r');
  if (lone >= 0) return { refused: { key: '', line: lineAt(src, lone), reason: 'contains a carriage return git may read differently' } };
  const entries: ConfigEntry[] = [];
  let pos = 0;
  let line = 1;
  let section: string | undefined;
  let subsection: string | undefined;
  // git's get_next_char: the end of the text reads as one last newline.
  const next = (): string => {
    if (pos >= src.length) {
      pos = src.length + 1;
      return '\n';
    }
    const c = src[pos++] as string;
    if (c === '\n') line++;
    return c;
  };
  const eof = () => pos > src.length;
  const bad = (reason: string): ParsedConfig => ({ refused: { key: '', line, reason } });
  let comment = false;
  for (;;) {
    const c = next();
    if (c === '\n') {
      if (eof()) return { entries };
      comment = false;
      continue;
    }
    if (comment || isSpace(c)) continue;
    if (c === '#' || c === ';') {
      comment = true;
      continue;
    }
    if (c === '[') {
      let base = '';
      let sub: string | undefined;
      for (;;) {
        const h = next();
        if (eof() || h === '\n') return bad('has a section header without "]"');
        if (h === ']') break;
        if (isSpace(h)) {
          let q = h;
          while (isSpace(q)) {
            if (q === '\n') return bad('has a section header without "]"');
            q = next();
          }
          if (q !== '"') return bad('has a section header git does not accept');
          sub = '';
          for (;;) {
            let s = next();
            if (s === '\n') return bad('has a section header without its closing quote');
            if (s === '"') break;
            if (s === '\\') {
              s = next();
              if (s === '\n') return bad('has a section header without its closing quote');
            }
            sub += s;
          }
          if (next() !== ']') return bad('has a section header git does not accept');
          break;
        }
        if (!isKeyChar(h) && h !== '.') return bad('has a section header git does not accept');
        base += h.toLowerCase();
      }
      if (base === '') return bad('has an empty section name');
      if (sub !== undefined) {
        if (base.includes('.')) return bad('has a section header git does not accept');
        section = base;
        subsection = sub;
      } else {
        const dot = base.indexOf('.');
        section = dot < 0 ? base : base.slice(0, dot);
        subsection = dot < 0 ? undefined : base.slice(dot + 1);
        if (section === '') return bad('has an empty section name');
      }
      continue;
    }
    if (!/^[A-Za-z]$/.test(c)) return bad('has a line git does not accept');
    const keyLine = line;
    let name = c.toLowerCase();
    let k = next();
    while (!eof() && isKeyChar(k)) {
      name += k.toLowerCase();
      k = next();
    }
    while (k === ' ' || k === '\t') k = next();
    let value: string | undefined;
    if (k !== '\n') {
      if (k !== '=') return bad('has a key git does not accept');
      const parsed = parseValue(next);
      if (parsed === undefined) return bad('has a value git does not accept (an open quote or an unknown escape)');
      value = parsed;
    }
    if (section === undefined) return { refused: { key: name, line: keyLine, reason: 'has a key outside any section' } };
    entries.push({ section, subsection, name, value, line: keyLine });
  }
}

/** git's parse_value: undefined where git refuses the line. */
function parseValue(next: () => string): string | undefined {
  let out = '';
  let quote = false;
  let comment = false;
  let space = 0;
  for (;;) {
    let c = next();
    if (c === '\n') return quote ? undefined : out;
    if (comment) continue;
    if (isSpace(c) && !quote) {
      if (out !== '') space++;
      continue;
    }
    if (!quote && (c === ';' || c === '#')) {
      comment = true;
      continue;
    }
    out += ' '.repeat(space);
    space = 0;
    if (c === '\\') {
      c = next();
      if (c === '\n') continue;
      const esc = ({ t: '\t', b: '\b', n: '\n', '\\': '\\', '"': '"' } as Record<string, string>)[c];
      if (esc === undefined) return undefined;
      out += esc;
      continue;
    }
    if (c === '"') {
      quote = !quote;
      continue;
    }
    out += c;
  }
}

function lineAt(text: string, index: number): number {
  let n = 1;
  for (let i = 0; i < index; i++) if (text[i] === '\n') n++;
  return n;
}

/** The key as git spells it: `section.name` or `section.subsection.name`. */
export function configKey(e: Pick<ConfigEntry, 'section' | 'subsection' | 'name'>): string {
  return e.subsection === undefined ? `${e.section}.${e.name}` : `${e.section}.${e.subsection}.${e.name}`;
}

type ValueRule = 'any' | ((value: string | undefined) => string | undefined);

const isFalse = (v: string | undefined) => (v !== undefined && /^(false|no|off|0)$/i.test(v) ? undefined : 'is only accepted as false');
const oneOf =
  (...allowed: string[]) =>
  (v: string | undefined) =>
    v !== undefined && allowed.includes(v) ? undefined : `is only accepted as ${allowed.join(' or ')}`;

/**
 * The keys a repository config may hold for host git to work on it: what `git init`, `git clone`,
 * `git remote add`, `git branch` and our own create write, each one data that names no program,
 * no file to include and no other command. Section and name lowercased, `*` for any subsection.
 * Everything else is refused with its key; the user moves it to their global config (which the
 * container cannot write) or removes it.
 */
const ALLOWED: Record<string, Record<string, ValueRule>> = {
  core: {
    repositoryformatversion: oneOf('0', '1'),
    filemode: 'any',
    bare: isFalse,
    logallrefupdates: 'any',
    ignorecase: 'any',
    precomposeunicode: 'any',
    symlinks: 'any',
    autocrlf: 'any',
    eol: 'any',
    safecrlf: 'any',
    quotepath: 'any',
    checkstat: 'any',
    trustctime: 'any',
  },
  extensions: { objectformat: oneOf('sha1', 'sha256') },
  'remote.*': {
    url: (v) => remoteUrlProblem(v ?? ''),
    pushurl: (v) => remoteUrlProblem(v ?? ''),
    fetch: 'any',
    tagopt: oneOf('--no-tags', '--tags'),
    prune: 'any',
    // GitHub Pull Requests marks the remote it resolved; git does not read it.
    'gh-resolved': 'any',
  },
  'branch.*': {
    remote: 'any',
    pushremote: 'any',
    merge: 'any',
    rebase: oneOf('true', 'false', 'merges'),
    base: 'any',
    description: 'any',
    // What editors write beside a branch, read by nothing in git: VS Code's git extension (every
    // repository it opens), GitHub Pull Requests and GitLens.
    'vscode-merge-base': 'any',
    'github-pr-owner-number': 'any',
    'gk-merge-base': 'any',
  },
  push: { autosetupremote: 'any', default: 'any' },
  pull: { rebase: oneOf('true', 'false', 'merges'), ff: 'any' },
  fetch: { prune: 'any' },
  user: { name: 'any', email: 'any' },
  init: { defaultbranch: 'any' },
  lfs: { repositoryformatversion: 'any' },
};

/** Why a key is refused, when it is: `[include]`, a program key, anything not allowlisted. */
function keyProblem(e: ConfigEntry): string | undefined {
  if (e.section === 'include' || e.section === 'includeif') return 'includes another file, which host git would read as well';
  const rules = ALLOWED[e.subsection === undefined ? e.section : `${e.section}.*`];
  const rule = rules?.[e.name];
  if (rule === undefined) return PROGRAM_KEYS.test(configKey(e)) ? 'names a program git would run' : 'is not one host git accepts here';
  return rule === 'any' ? undefined : rule(e.value);
}

/** Keys known to name a program (for the wording only: every key outside the allowlist is refused). */
const PROGRAM_KEYS =
  /^(core\.(fsmonitor|hookspath|sshcommand|gitproxy|askpass|pager|editor|alternaterefscommand)|sequence\.editor|credential\..*helper|gpg\..*program|diff\..*\.(textconv|command)|diff\.external|filter\..*\.(clean|smudge|process)|merge\..*\.driver|remote\..*\.(uploadpack|receivepack|vcs)|uploadpack\.packobjectshook|url\..*\.(insteadof|pushinsteadof)|extensions\.partialclone|remote\..*\.promisor|submodule\..*\.update|pager\..*|alias\..*)$/i;

/**
 * Why a remote URL is refused, if it is: a remote helper (`<transport>::…`, `ext::`, `fd::`), a
 * scheme git hands to a helper program, an option-like value, a relative path. Accepted: http(s),
 * ssh (URL or scp-like), git://, and absolute local paths or file:// (fetched with a hardened
 * upload-pack, host/gitRepo.ts).
 */
export function remoteUrlProblem(url: string): string | undefined {
  if (url.startsWith('-')) return 'starts with "-"';
  if (/^[A-Za-z][A-Za-z0-9+.-]*::/.test(url)) return 'names a remote helper program (<transport>::)';
  const scheme = /^([A-Za-z][A-Za-z0-9+.-]*):\/\//.exec(url);
  if (scheme) {
    if (!['http', 'https', 'ssh', 'git', 'git+ssh', 'ssh+git', 'file'].includes(scheme[1].toLowerCase()))
      return `uses the transport ${scheme[1]}, which git hands to a helper program`;
    const host = url.slice(scheme[0].length).replace(/^[^@/]*@/, '');
    return host.startsWith('-') ? 'names a host that starts with "-"' : undefined;
  }
  if (url.startsWith('/')) return undefined;
  // scp-like `[user@]host:path`: a colon before any slash.
  const scp = /^([^/:]*):/.exec(url);
  if (scp) return scp[1].replace(/^[^@]*@/, '').startsWith('-') ? 'names a host that starts with "-"' : undefined;
  return url === '' ? undefined : 'is a relative path';
}

/** A remote URL git reaches through the local (file) transport. */
export function isLocalRemoteUrl(url: string): boolean {
  return url.startsWith('/') || /^file:\/\//i.test(url);
}

/** The parsed config, or the first key host git must not read, with its line. */
export function checkGitConfig(text: string): ParsedConfig {
  if (text.length > REPO_CONFIG_LIMIT) return { refused: { key: '', line: 1, reason: `is larger than ${REPO_CONFIG_LIMIT} bytes` } };
  const parsed = parseGitConfig(text);
  if ('refused' in parsed) return parsed;
  for (const e of parsed.entries) {
    const why = keyProblem(e);
    if (why !== undefined) return { refused: { key: configKey(e), line: e.line, reason: why } };
  }
  return parsed;
}

/** The last value of a key (git's single-value rule), matching the subsection exactly. */
export function configValue(
  entries: readonly ConfigEntry[],
  section: string,
  subsection: string | undefined,
  name: string,
): string | undefined {
  let out: string | undefined;
  for (const e of entries) if (e.section === section && e.subsection === subsection && e.name === name) out = e.value ?? 'true';
  return out;
}

/** Every value of a multi-valued key, in order. */
export function configValues(entries: readonly ConfigEntry[], section: string, subsection: string | undefined, name: string): string[] {
  return entries.filter((e) => e.section === section && e.subsection === subsection && e.name === name).map((e) => e.value ?? 'true');
}

const ESCAPES: Record<string, string> = { '\\': '\\\\', '"': '\\"', '\n': '\\n', '\t': '\\t', '\b': '\\b' };
const quoteValue = (v: string) => `"${[...v].map((c) => ESCAPES[c] ?? c).join('')}"`;

/**
 * Entries as config text in one form git reads back exactly: one section header per entry, every
 * subsection and value quoted and escaped. Whatever this parser understood is what git gets.
 */
export function serializeGitConfig(entries: readonly Pick<ConfigEntry, 'section' | 'subsection' | 'name' | 'value'>[]): string {
  return entries
    .map((e) => {
      const header =
        e.subsection === undefined ? `[${e.section}]` : `[${e.section} "${e.subsection.replace(/\\/g, '\\\\').replace(/"/g, '\\"')}"]`;
      return `${header}\n\t${e.name}${e.value === undefined ? '' : ` = ${quoteValue(e.value)}`}\n`;
    })
    .join('');
}

/**
 * A config key as a UI may show it: only letters, digits and `._-/:@+`, at most 120 characters;
 * anything else reads as the section and name with the subsection left out.
 */
export function displayConfigKey(key: string): string {
  if (/^[A-Za-z0-9._\-/:@+]{1,120}$/.test(key)) return key;
  const first = key.indexOf('.');
  const last = key.lastIndexOf('.');
  const section = key.slice(0, first);
  const name = key.slice(last + 1);
  return /^[A-Za-z0-9-]{1,40}$/.test(section) && /^[A-Za-z0-9-]{1,40}$/.test(name) ? `${section}.<…>.${name}` : 'a key';
}
