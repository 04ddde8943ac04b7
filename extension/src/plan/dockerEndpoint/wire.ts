/**
 * The Docker endpoint's policy, at the level of bytes: the request target, its query, the headers
 * that frame the body, and a strict JSON reader (docs/decisions/0047-docker-endpoint-policy.md).
 * Everything here is hostile input from a workspace container. Each reader refuses what Docker's
 * own parsers (Go's net/url, net/http and encoding/json) would read differently from us, so that
 * what the policy checked is what Docker acts on; where the policy forwards something, it forwards
 * its own re-encoding of what it checked, never the client's bytes. Pure: no I/O.
 */

/** Every refusal the policy makes has one of these ids (plan/dockerEndpoint/policy.ts RULES says what each means). */
export type RuleId =
  | 'target'
  | 'api-version'
  | 'query'
  | 'method'
  | 'headers'
  | 'upgrade'
  | 'body-size'
  | 'unknown-route'
  | 'swarm'
  | 'plugins'
  | 'not-owned'
  | 'json'
  | 'duplicate-key'
  | 'unknown-field'
  | 'field-type'
  | 'owner-label'
  | 'privileged'
  | 'pid-mode'
  | 'ipc-mode'
  | 'uts-mode'
  | 'network-mode'
  | 'userns-mode'
  | 'cgroupns-mode'
  | 'devices'
  | 'device-requests'
  | 'device-cgroup-rules'
  | 'cap-add'
  | 'security-opt'
  | 'sysctls'
  | 'masked-paths'
  | 'readonly-paths'
  | 'runtime'
  | 'cgroup-parent'
  | 'log-driver'
  | 'oom'
  | 'storage-opt'
  | 'annotations'
  | 'blkio-devices'
  | 'realtime'
  | 'container-id-file'
  | 'volume-driver'
  | 'volume-options'
  | 'mount-type'
  | 'bind-source'
  | 'bind-missing'
  | 'bind-options'
  | 'bind-restart'
  | 'protected-path'
  | 'docker-socket'
  | 'network-driver'
  | 'network-options'
  | 'update-restart'
  | 'checkpoint'
  | 'build-remote'
  | 'build-network'
  | 'build-option'
  | 'buildkit-grpc'
  | 'image-import'
  | 'commit-changes'
  | 'runtime-image'
  | 'image-name'
  | 'owner-image'
  | 'reserved-name'
  | 'published-port'
  | 'egress';

export type RefusalStatus = 403 | 400 | 404 | 405 | 413;

/** What the endpoint answers instead of forwarding. */
export interface Refusal {
  kind: 'refuse';
  status: RefusalStatus;
  rule: RuleId;
  /** One or two plain sentences that say what to do; a policy refusal ends with its rule and the opt-out (but an egress refusal). */
  message: string;
}

/** The setting and the mount that give a container the host's raw socket instead (the opt-out every policy refusal names). */
export const OPT_OUT =
  "To give this container the host's own Docker socket instead (root on this host), set toolbox.dockerEndpoint to raw-socket in your VS Code User settings and recreate the container.";

/** Thrown inside the policy and turned into a Refusal at its public functions (plan/dockerEndpoint/policy.ts). */
export class Refused extends Error {
  constructor(
    readonly status: RefusalStatus,
    readonly rule: RuleId,
    message: string,
  ) {
    super(message);
  }

  get refusal(): Refusal {
    const policy = this.status === 403 || this.status === 404;
    // An egress refusal does not offer the raw socket: that would give the container the daemon's
    // network, around the folder's policy (plan/dockerEndpoint/egress.ts).
    const optOut = this.rule === 'egress' ? '' : ` ${OPT_OUT}`;
    return {
      kind: 'refuse',
      status: this.status,
      rule: this.rule,
      message: policy ? `${this.message} (rule ${this.rule})${optOut}` : this.message,
    };
  }
}

/** A refusal that is the container's to fix (400, 405, 413): no opt-out would change it. */
export function malformed(rule: RuleId, message: string, status: RefusalStatus = 400): Refused {
  return new Refused(status, rule, message);
}

/** A refusal by the policy (403): the container asked for something this endpoint does not give. */
export function forbidden(rule: RuleId, message: string): Refused {
  return new Refused(403, rule, message);
}

/** Limits on what the endpoint reads before the policy has judged it. */
export const ENDPOINT_LIMITS = {
  /**
   * The request target. dockerode (Testcontainers' client) copies a container's whole create
   * options into the query as well as the body, so a create's target can be long; the adapter's
   * HTTP server must accept request heads this large (Node's maxHeaderSize).
   */
  targetChars: 64 * 1024,
  /** JSON bodies of /containers/create and /commit. */
  createBody: 1024 * 1024,
  /** Any other JSON body. */
  jsonBody: 256 * 1024,
  /** How deep a JSON body may nest (a create body needs about 7). */
  jsonDepth: 24,
  /** One header value the policy forwards (X-Registry-Auth carries base64 JSON). */
  headerChars: 64 * 1024,
  /** One string inside a query parameter or a JSON body. */
  stringChars: 64 * 1024,
} as const;

/** The lowest API version accepted in a `/v1.NN/` prefix: older versions take a HostConfig on start. */
export const MIN_API_MINOR = 24;

export interface ParsedTarget {
  /** `v1.41` when the client gave a version prefix (kept when forwarding), else undefined. */
  version?: string;
  /** The path's segments after the version, checked: each is non-empty, ASCII, no dot segments. */
  segments: string[];
  /** Query parameters in order of appearance, decoded once as Go's url.ParseQuery does. */
  query: Map<string, string[]>;
}

/** Characters a path segment may hold: every Docker object name, id and image reference fits. */
const SEGMENT = /^[A-Za-z0-9_.:@-]+$/;

/**
 * Reads a request target. Only origin-form (`/path?query`) is accepted: no absolute-form
 * (`http://host/...`), no `*`, no fragment, no byte outside printable ASCII, no percent-encoding in
 * the path (every name Docker takes is plain ASCII, so an encoded byte is only ever a trick: `%2e`,
 * `%2f`, `%5c`), no empty or dot segment, no backslash.
 */
export function parseTarget(raw: string): ParsedTarget {
  if (typeof raw !== 'string' || raw.length === 0) throw malformed('target', 'The request has no target.');
  if (raw.length > ENDPOINT_LIMITS.targetChars) {
    throw malformed('target', `The request target is longer than ${ENDPOINT_LIMITS.targetChars} characters.`);
  }
  if (raw[0] !== '/') throw malformed('target', 'Only a path (origin-form target) is accepted, not an absolute URL or *.');
  for (let i = 0; i < raw.length; i++) {
    const c = raw.charCodeAt(i);
    if (c < 0x21 || c > 0x7e) throw malformed('target', 'The request target may hold only printable ASCII characters.');
  }
  if (raw.includes('#')) throw malformed('target', 'The request target may not hold a fragment (#).');
  if (raw.includes('\\')) throw malformed('target', 'The request target may not hold a backslash.');
  const q = raw.indexOf('?');
  const path = q < 0 ? raw : raw.slice(0, q);
  if (path.includes('%')) throw malformed('target', 'The request path may not be percent-encoded: Docker names are plain ASCII.');
  const segments = path.slice(1).split('/');
  for (const s of segments) {
    if (s === '') throw malformed('target', 'The request path may not have an empty segment (// or a trailing /).');
    if (s.includes('..') || s === '.') throw malformed('target', 'The request path may not have . or .. in it.');
    if (!SEGMENT.test(s)) throw malformed('target', `The request path segment "${s}" has characters no Docker name has.`);
  }
  let version: string | undefined;
  if (/^v\d/.test(segments[0])) {
    const m = /^v1\.(\d{1,2})$/.exec(segments[0]);
    if (!m || Number(m[1]) < MIN_API_MINOR) {
      throw malformed(
        'api-version',
        `The API version ${segments[0]} is not accepted: use v1.${MIN_API_MINOR} or later, or no version prefix.`,
      );
    }
    version = segments.shift();
    if (segments.length === 0) throw malformed('target', 'The request path has a version and nothing after it.');
  }
  return { ...(version !== undefined ? { version } : {}), segments, query: parseQuery(q < 0 ? '' : raw.slice(q + 1)) };
}

/**
 * A query as Go's url.ParseQuery reads it, stricter where Go skips a pair without saying so
 * (a `;`, a bad escape): those are refused, since a pair Go skips is one the client meant Docker
 * to see differently from us.
 */
export function parseQuery(raw: string): Map<string, string[]> {
  const out = new Map<string, string[]>();
  if (raw.includes(';')) throw malformed('query', 'The query may not hold a semicolon.');
  for (const pair of raw.split('&')) {
    if (pair === '') continue;
    const eq = pair.indexOf('=');
    const key = unescapeQuery(eq < 0 ? pair : pair.slice(0, eq));
    const value = unescapeQuery(eq < 0 ? '' : pair.slice(eq + 1));
    const list = out.get(key);
    if (list) list.push(value);
    else out.set(key, [value]);
  }
  return out;
}

const UTF8 = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });

/** Go's url.QueryUnescape: `+` is a space, `%XX` a byte; a bad escape, bytes that are not UTF-8 or a control character is refused. */
function unescapeQuery(s: string): string {
  const bytes: number[] = [];
  for (let i = 0; i < s.length; i++) {
    const c = s[i];
    if (c === '+') bytes.push(0x20);
    else if (c === '%') {
      const hex = s.slice(i + 1, i + 3);
      if (!/^[0-9A-Fa-f]{2}$/.test(hex)) throw malformed('query', 'The query has a malformed percent-escape.');
      bytes.push(parseInt(hex, 16));
      i += 2;
    } else bytes.push(c.charCodeAt(0));
  }
  let text: string;
  try {
    text = UTF8.decode(Uint8Array.from(bytes));
  } catch {
    throw malformed('query', 'The query decodes to bytes that are not UTF-8.');
  }
  if (hasControl(text, false)) throw malformed('query', 'The query may not hold control characters.');
  if (text.length > ENDPOINT_LIMITS.stringChars) throw malformed('query', 'A query parameter is too long.');
  return text;
}

/** Whether `s` holds a C0 control character or DEL (a tab allowed where `tab` says so). */
function hasControl(s: string, tab: boolean): boolean {
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if ((c < 0x20 && !(tab && c === 0x09)) || c === 0x7f) return true;
  }
  return false;
}

/** Go's url.QueryEscape, which Docker's url.ParseQuery reverses exactly. */
export function escapeQuery(s: string): string {
  return encodeURIComponent(s)
    .replace(/[!'()*]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`)
    .replace(/%20/g, '+');
}

/** Header values by lowercased name, however the adapter handed them (Node joins some, lists others). */
export type RawHeaders = Readonly<Record<string, string | readonly string[] | undefined>>;

export function headerValues(headers: RawHeaders): Map<string, string[]> {
  const out = new Map<string, string[]>();
  for (const [name, value] of Object.entries(headers)) {
    if (value === undefined) continue;
    const key = name.toLowerCase();
    if (!/^[!#$%&'*+.^_`|~0-9a-z-]+$/.test(key)) throw malformed('headers', `The header name "${name}" is not a valid token.`);
    const values = typeof value === 'string' ? [value] : [...value];
    for (const v of values) {
      if (typeof v !== 'string' || hasControl(v, true)) {
        throw malformed('headers', `The ${key} header holds a control character.`);
      }
      if (v.length > ENDPOINT_LIMITS.headerChars) throw malformed('headers', `The ${key} header is too long.`);
    }
    out.set(key, [...(out.get(key) ?? []), ...values]);
  }
  return out;
}

/** `a, b` and repeated headers as one list of trimmed, lowercased tokens. */
export function tokens(values: readonly string[] | undefined): string[] {
  return (values ?? [])
    .flatMap((v) => v.split(','))
    .map((t) => t.trim().toLowerCase())
    .filter((t) => t !== '');
}

/** The one media type of a Content-Type header, lowercased, without parameters. */
export function mediaType(values: readonly string[] | undefined): string | undefined {
  if (values === undefined || values.length === 0) return undefined;
  if (values.length > 1) throw malformed('headers', 'The request has more than one Content-Type header.');
  return values[0].split(';')[0].trim().toLowerCase();
}

/** A value of a JSON document as the strict reader returns it: integers only. */
export type Json = null | boolean | number | string | Json[] | { [key: string]: Json };

/**
 * Docker decodes bodies with Go's encoding/json, which matches object keys to struct fields without
 * regard to case (with Unicode folding: `ſ` is `s`, the Kelvin sign is `k`) and lets the last of
 * two equal keys win. Two keys that fold to the same string are therefore refused anywhere in a
 * body; this fold errs towards refusing (it also folds a few pairs Go keeps apart).
 */
export function foldKey(key: string): string {
  return key.toUpperCase().toLowerCase();
}

/**
 * A strict JSON reader: valid UTF-8 without a BOM, no duplicate keys (case-folded), no `__proto__`,
 * no lone surrogate, no NUL in a string, whole numbers only (every number Docker takes in these
 * bodies is an integer, and a safe one keeps its exact value when the policy writes the body
 * again), bounded nesting, nothing after the value.
 */
export function readJson(bytes: Uint8Array, maxDepth: number = ENDPOINT_LIMITS.jsonDepth): Json {
  if (bytes.length >= 3 && bytes[0] === 0xef && bytes[1] === 0xbb && bytes[2] === 0xbf)
    throw malformed('json', 'The body starts with a byte order mark.');
  let text: string;
  try {
    text = UTF8.decode(bytes);
  } catch {
    throw malformed('json', 'The body is not valid UTF-8.');
  }
  const reader = new JsonReader(text, maxDepth);
  const value = reader.value(0);
  reader.end();
  return value;
}

class JsonReader {
  private i = 0;

  constructor(
    private readonly s: string,
    private readonly maxDepth: number,
  ) {}

  private fail(what: string): never {
    throw malformed('json', `The body is not the strict JSON this endpoint reads: ${what} at character ${this.i}.`);
  }

  private ws(): void {
    while (this.i < this.s.length && ' \t\n\r'.includes(this.s[this.i])) this.i++;
  }

  end(): void {
    this.ws();
    if (this.i !== this.s.length) this.fail('something after the value');
  }

  value(depth: number): Json {
    this.ws();
    const c = this.s[this.i];
    if (c === '{' || c === '[') {
      if (depth >= this.maxDepth) this.fail(`nesting deeper than ${this.maxDepth}`);
      return c === '{' ? this.object(depth + 1) : this.array(depth + 1);
    }
    if (c === '"') return this.string();
    if (c === '-' || (c >= '0' && c <= '9')) return this.number();
    for (const [word, v] of [
      ['true', true],
      ['false', false],
      ['null', null],
    ] as const) {
      if (this.s.startsWith(word, this.i)) {
        this.i += word.length;
        return v;
      }
    }
    return this.fail(c === undefined ? 'an unexpected end' : 'an unexpected character');
  }

  private object(depth: number): { [key: string]: Json } {
    this.i++;
    const out: { [key: string]: Json } = {};
    const seen = new Set<string>();
    this.ws();
    if (this.s[this.i] === '}') {
      this.i++;
      return out;
    }
    for (;;) {
      this.ws();
      if (this.s[this.i] !== '"') this.fail('a key that is not a string');
      const key = this.string();
      if (key === '__proto__') this.fail('the key __proto__');
      const folded = foldKey(key);
      if (seen.has(folded)) {
        throw malformed(
          'duplicate-key',
          `The body has the key "${key}" twice (Docker reads keys without regard to case, and the last one wins).`,
        );
      }
      seen.add(folded);
      this.ws();
      if (this.s[this.i] !== ':') this.fail('a missing colon');
      this.i++;
      Object.defineProperty(out, key, { value: this.value(depth), enumerable: true, writable: true, configurable: true });
      this.ws();
      const c = this.s[this.i++];
      if (c === '}') return out;
      if (c !== ',') this.fail('a missing comma');
    }
  }

  private array(depth: number): Json[] {
    this.i++;
    const out: Json[] = [];
    this.ws();
    if (this.s[this.i] === ']') {
      this.i++;
      return out;
    }
    for (;;) {
      out.push(this.value(depth));
      this.ws();
      const c = this.s[this.i++];
      if (c === ']') return out;
      if (c !== ',') this.fail('a missing comma');
    }
  }

  private string(): string {
    this.i++;
    let out = '';
    for (;;) {
      const c = this.s[this.i++];
      if (c === undefined) this.fail('an unterminated string');
      if (c === '"') break;
      if (c < ' ') this.fail('a control character in a string');
      if (c !== '\\') {
        out += c;
        continue;
      }
      const e = this.s[this.i++];
      const simple: Record<string, string> = { '"': '"', '\\': '\\', '/': '/', b: '\b', f: '\f', n: '\n', r: '\r', t: '\t' };
      if (e !== undefined && Object.hasOwn(simple, e)) {
        out += simple[e];
        continue;
      }
      if (e !== 'u') this.fail('a bad escape');
      const unit = this.hex4();
      if (unit >= 0xd800 && unit <= 0xdbff) {
        if (this.s.slice(this.i, this.i + 2) !== '\\u') this.fail('a lone surrogate');
        this.i += 2;
        const low = this.hex4();
        if (low < 0xdc00 || low > 0xdfff) this.fail('a lone surrogate');
        out += String.fromCharCode(unit, low);
      } else if (unit >= 0xdc00 && unit <= 0xdfff) {
        this.fail('a lone surrogate');
      } else {
        out += String.fromCharCode(unit);
      }
    }
    if (out.includes('\u0000')) this.fail('a NUL character in a string');
    if (out.length > ENDPOINT_LIMITS.stringChars) this.fail('a string that is too long');
    return out;
  }

  private hex4(): number {
    const h = this.s.slice(this.i, this.i + 4);
    if (!/^[0-9A-Fa-f]{4}$/.test(h)) this.fail('a bad \\u escape');
    this.i += 4;
    return parseInt(h, 16);
  }

  private number(): number {
    const m = /^-?(?:0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?/.exec(this.s.slice(this.i, this.i + 40));
    if (!m) return this.fail('a malformed number');
    if (m[1] !== undefined || m[2] !== undefined) this.fail('a number that is not a whole number');
    const n = Number(m[0]);
    if (!Number.isSafeInteger(n)) this.fail('a number too large to keep exactly');
    this.i += m[0].length;
    return n;
  }
}

/**
 * Refuses a name in Toolbox's own namespace (`<prefix>-…`: its workspace containers, the peer
 * anchor, the socket volume) for a container, volume or network the caller creates or renames: a
 * container named as the anchor would hold the PID namespace other workspaces join.
 */
export function checkNotReserved(name: string, reservedPrefix: string | undefined, what: string): void {
  const bare = name.startsWith('/') ? name.slice(1) : name;
  if (reservedPrefix !== undefined && reservedPrefix !== '' && bare.startsWith(reservedPrefix)) {
    throw forbidden(
      'reserved-name',
      `${what} ${bare} is in Toolbox's own namespace (${reservedPrefix}…), where its workspace containers, the peer anchor and the socket volume live. Choose another name.`,
    );
  }
}

/**
 * A ulimit that lets a container's processes take real-time scheduling (rtprio: SCHED_FIFO and
 * SCHED_RR up to that priority; rttime: how long they may hold a CPU), which runs them ahead of
 * every process of the host on that CPU. Docker reads the name exactly (go-units' table), Podman
 * upper-cases it after `RLIMIT_`: compared case-folded, with or without that prefix.
 */
export function isRealtimeUlimit(name: string): boolean {
  const bare = foldKey(name.trim()).replace(/^rlimit_/, '');
  return bare === 'rtprio' || bare === 'rttime';
}

export function realtimeUlimit(where: string, name: string): Refused {
  return forbidden(
    'realtime',
    `${where} sets the ${name} ulimit, which lets the container's processes take real-time CPU scheduling ahead of this host's own; it is not offered. Leave it out (the other ulimits are fine).`,
  );
}
