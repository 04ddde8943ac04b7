/**
 * Copy Report's redaction (issue 31, item 3): the doctor's report made fit to paste into an issue.
 * Pure, and held to each rule by test/unit/redact.test.ts:
 *
 * - secrets: the ones the caller knows (bridge tokens, share tokens), a bearer or basic
 *   credential, a `token=`/`password:`-style value, a run of 16 or more hex digits, and a long
 *   mixed-case token (upper, lower and digits, 32 characters or more) become `<redacted>`;
 * - URLs keep their host, never their user: `ssh://alice@host` is `ssh://<user>@host`, a
 *   password in one is dropped;
 * - the home directory is `~`, and any other home (`/home/<name>`, `/Users/<name>`,
 *   `C:\Users\<name>`) loses its user's name;
 * - the value of an environment variable is never shown, only its name (`<$NAME>`), unless it is
 *   one the report names on purpose (the engine endpoint), a plain path (the path rules apply) or
 *   a short plain word (hiddenValue).
 */

/**
 * Variables whose value the report shows on purpose: the endpoint (its user redacted by the URL
 * rule), paths the path rules handle, and the tests' object-name prefix (extension.ts
 * testOverrides), with which every object name in the report starts.
 */
const SHOWN_VARIABLES = new Set([
  'DOCKER_HOST',
  'DOCKER_CONTEXT',
  'HOME',
  'PWD',
  'OLDPWD',
  'SHELL',
  'TERM',
  'LANG',
  'USER',
  'LOGNAME',
  'TOOLBOX_VSCODE_NAME_PREFIX',
]);
/**
 * Values hidden wherever they appear: 8 characters or more with something besides lower-case
 * letters in them, or 16 or more of anything. Shorter or plain words ("true", "x64", "vscode",
 * "truecolor") are words the report says for its own reasons.
 */
function hiddenValue(v: string): boolean {
  return v.length >= 16 || (v.length >= 8 && /[^a-z]/.test(v));
}
const REDACTED = '<redacted>';

export interface RedactContext {
  /** The user's home directory: paths under it are shown as `~/…`. */
  home: string;
  /** The environment whose values must not show (names are fine). */
  env?: Readonly<Record<string, string | undefined>>;
  /** Secrets the caller knows of (bridge tokens, share tokens): removed wherever they appear. */
  secrets?: readonly string[];
}

function escape(s: string): string {
  return s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

/** A value that is a path or a list of paths (PATH, XDG_*): left to the path rules, not hidden. */
function isPathValue(v: string): boolean {
  return /^(?:[~/][^\s:]*)(?::[~/][^\s:]*)*$/.test(v);
}

/** The report with secrets, user names, home paths and environment values taken out. */
export function redactReport(text: string, ctx: RedactContext): string {
  let s = text;
  // Secrets the caller knows, longest first (one may contain another).
  for (const secret of [...(ctx.secrets ?? [])].filter((x) => x.length >= 4).sort((a, b) => b.length - a.length)) {
    s = s.split(secret).join(REDACTED);
  }
  // Environment values, longest first, before the patterns below change the text around them.
  const env = Object.entries(ctx.env ?? {})
    .filter((e): e is [string, string] => typeof e[1] === 'string')
    .map(([name, value]) => [name, value.trim()] as const)
    .filter(([name, value]) => hiddenValue(value) && !SHOWN_VARIABLES.has(name) && !isPathValue(value))
    .sort((a, b) => b[1].length - a[1].length);
  for (const [name, value] of env) s = s.split(value).join(`<$${name}>`);
  // A URL's user (and password): the host stays, whose account it is does not.
  s = s.replace(/\b([a-z][a-z0-9+.-]*:\/\/)[^\s/@<>]+@/gi, '$1<user>@');
  // Credentials after their scheme word, and `key=value` / `key: value` whose key names a secret.
  s = s.replace(/\b(Bearer|Basic|Token)(\s+)[A-Za-z0-9._~+/=-]{6,}/gi, `$1$2${REDACTED}`);
  s = s.replace(
    /\b([A-Za-z0-9_.-]*(?:token|secret|password|passwd|pwd|api[_-]?key|auth|credential|cookie)[A-Za-z0-9_.-]*)(\s*[=:]\s*)("?)(?!(?:Bearer|Basic|Token)\s|<redacted>)[^\s"',;]{4,}\3/gi,
    `$1$2$3${REDACTED}$3`,
  );
  // Long hex runs (tokens, digests, ids) and long mixed-case tokens.
  s = s.replace(/(?<![A-Za-z0-9])[0-9a-fA-F]{16,}(?![A-Za-z0-9])/g, REDACTED);
  s = s.replace(
    /(?<![A-Za-z0-9_-])(?=[A-Za-z0-9_-]*[A-Z])(?=[A-Za-z0-9_-]*[a-z])(?=[A-Za-z0-9_-]*[0-9])[A-Za-z0-9_-]{32,}(?![A-Za-z0-9_-])/g,
    REDACTED,
  );
  // The home as `~`, then any other user's home without the name.
  const home = ctx.home.replace(/[/\\]+$/, '');
  if (home !== '' && home !== '/') s = s.replace(new RegExp(`${escape(home)}(?=[/\\\\]|$|[^A-Za-z0-9._-])`, 'g'), '~');
  s = s.replace(/(^|[^A-Za-z0-9._~-])\/(home|Users)\/(?!<user>)[^/\s:'",;)]+/g, '$1/$2/<user>');
  s = s.replace(/\b([A-Za-z]:\\Users\\)(?!<user>)[^\\\s:'",;)]+/g, '$1<user>');
  return s;
}
