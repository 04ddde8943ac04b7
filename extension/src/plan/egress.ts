/**
 * The egress policy, pure (issue 30, docs/decisions/0056-egress-through-a-host-proxy.md): the
 * rules a folder's container may connect by, and the verdict on one destination. The host's proxy
 * (bridge/egressProxy.ts) asks `decideDestination` before anything else, resolves the name on the
 * host, then `checkResolved` on the addresses before it connects to one of them.
 *
 * No I/O: the backend (backend/egress.ts) gathers the rules from the user's config, the folder's
 * remembered answers and its git remotes. No node built-in either: addresses are parsed here, so
 * that one parser decides what an address is for the rules, the verdict and the classes.
 *
 * Every string that reaches this file came from a container or a file it can write: nothing here
 * throws on it, and no error sentence repeats it.
 */
import { EGRESS_LIMITS, type EGRESS_MODES } from '../contract/egress';

export type EgressMode = (typeof EGRESS_MODES)[number];

/** Where a rule comes from, for the log and the views (never a reason to trust it more). */
export type EgressRuleSource = 'builtin' | 'remote' | 'user' | 'folder' | 'project';

/**
 * One destination a container may reach: a host name (`api.example.com`), a suffix wildcard
 * (`*.example.com`: any name below it, not the name itself), or an IP literal (`10.0.0.5`,
 * `[fd00::1]`); with a port, only that port, else any. Names are lower case, without a trailing dot.
 * An IPv6 literal is held without its brackets, in its compressed form (`fd00::1`).
 */
export interface EgressRule {
  host: string;
  port?: number;
  source: EgressRuleSource;
}

/** What a container's proxy decides by. `open` never reaches the proxy: such a container has the engine's network. */
export interface EgressPolicy {
  mode: EgressMode;
  rules: readonly EgressRule[];
}

/** A destination as the client named it (CONNECT's authority, an absolute-form URL's host, SOCKS5's address). */
export interface EgressDestination {
  host: string;
  port: number;
}

/**
 * One connection the proxy saw: the proxy (bridge/egressProxy.ts) fills it, the backend keeps it
 * in the container's log, the views show it (backend/api/egress.ts re-exports it).
 */
export interface EgressLogEntry {
  /** When it was asked for (ms since the epoch). */
  at: number;
  host: string;
  port: number;
  /** How the container asked: HTTP CONNECT, a plain HTTP request, SOCKS5. */
  via: 'connect' | 'http' | 'socks';
  verdict: 'allowed' | 'denied';
  /** Why it was denied (the sentence the program was given), or which rule allowed it (`api.example.com:443 (folder)`). */
  reason: string;
  /** The address the host connected to, once it did. */
  address?: string;
  /** Bytes from the container to the destination, and back; grow while it is open. */
  bytesUp: number;
  bytesDown: number;
  /** When it ended; absent while it is open. */
  endedAt?: number;
}

export type AddressClass =
  'loopback' | 'link-local' | 'unspecified' | 'multicast' | 'broadcast' | 'private' | 'shared' | 'reserved' | 'public';

/** Never reached, whatever a rule or an answer says: cloud metadata (169.254.169.254), broadcast, multicast, …. */
const ALWAYS_DENIED: ReadonlySet<AddressClass> = new Set(['link-local', 'unspecified', 'multicast', 'broadcast', 'reserved']);

/** Longer input is refused before any parsing: a bracketed IPv6 literal with a port is at most 47 characters. */
const MAX_INPUT_CHARS = EGRESS_LIMITS.maxHostChars + 8;

// ---------------------------------------------------------------------------------------------
// Addresses

const IPV4_OCTET = '(?:25[0-5]|2[0-4][0-9]|1[0-9][0-9]|[1-9]?[0-9])';
const IPV4_CANONICAL = new RegExp(`^${IPV4_OCTET}(?:\\.${IPV4_OCTET}){3}$`);

/** The four octets of a canonical dotted quad (`10.0.0.5`), else undefined (`127.1`, `010.0.0.1`, `0x7f.0.0.1`). */
function parseIpv4(text: string): number[] | undefined {
  if (!IPV4_CANONICAL.test(text)) return undefined;
  return text.split('.').map(Number);
}

/**
 * The eight 16-bit groups of an IPv6 address (`fd00::1`, `::ffff:10.0.0.5`, upper case allowed),
 * else undefined. Zone ids (`fe80::1%eth0`) are refused: they name an interface of the host.
 */
function parseIpv6(text: string): number[] | undefined {
  if (text.length < 2 || text.length > 45 || !/^[0-9a-fA-F:.]+$/.test(text)) return undefined;
  let head = text;
  let tail: number[] = [];
  const lastColon = text.lastIndexOf(':');
  if (text.includes('.')) {
    const v4 = parseIpv4(text.slice(lastColon + 1));
    if (v4 === undefined) return undefined;
    tail = [((v4[0] as number) << 8) | (v4[1] as number), ((v4[2] as number) << 8) | (v4[3] as number)];
    head = text.slice(0, lastColon + 1);
    // `::1.2.3.4` keeps its `::`; `1::2:1.2.3.4` loses the colon before the quad.
    if (head.endsWith(':') && !head.endsWith('::')) head = head.slice(0, -1);
  }
  const groups = (part: string): number[] | undefined => {
    if (part === '') return [];
    const out: number[] = [];
    for (const g of part.split(':')) {
      if (!/^[0-9a-fA-F]{1,4}$/.test(g)) return undefined;
      out.push(parseInt(g, 16));
    }
    return out;
  };
  const halves = head.split('::');
  if (halves.length > 2) return undefined;
  const want = 8 - tail.length;
  if (halves.length === 1) {
    const all = groups(halves[0] as string);
    if (all === undefined || all.length !== want) return undefined;
    return [...all, ...tail];
  }
  const left = groups(halves[0] as string);
  const right = groups(halves[1] as string);
  if (left === undefined || right === undefined || left.length + right.length > want - 1) return undefined;
  return [...left, ...new Array<number>(want - left.length - right.length).fill(0), ...right, ...tail];
}

/** RFC 5952's text form: lower case, no leading zeros, the longest run of two or more zero groups as `::`. */
function formatIpv6(g: readonly number[]): string {
  let best = -1;
  let bestLen = 1;
  for (let i = 0; i < 8;) {
    if (g[i] !== 0) {
      i++;
      continue;
    }
    let j = i;
    while (j < 8 && g[j] === 0) j++;
    if (j - i > bestLen) {
      best = i;
      bestLen = j - i;
    }
    i = j;
  }
  const hex = (a: readonly number[]): string => a.map((x) => x.toString(16)).join(':');
  if (best < 0) return hex(g);
  return `${hex(g.slice(0, best))}::${hex(g.slice(best + bestLen))}`;
}

/** The IPv4 address an IPv6 one carries in its last 32 bits. */
function embeddedIpv4(g: readonly number[]): string {
  const a = g[6] as number;
  const b = g[7] as number;
  return `${a >> 8}.${a & 0xff}.${b >> 8}.${b & 0xff}`;
}

const isMapped = (g: readonly number[]): boolean => g.slice(0, 5).every((x) => x === 0) && g[5] === 0xffff;
const isNat64 = (g: readonly number[]): boolean => g[0] === 0x64 && g[1] === 0xff9b && g.slice(2, 6).every((x) => x === 0);

function classifyIpv4(o: readonly number[]): AddressClass {
  const [a, b, c] = o as [number, number, number, number];
  if (o.every((x) => x === 255)) return 'broadcast';
  if (a === 127) return 'loopback';
  if (a === 169 && b === 254) return 'link-local';
  if (a === 0) return 'unspecified';
  if (a >= 224 && a <= 239) return 'multicast';
  if (a >= 240) return 'reserved';
  if (a === 10 || (a === 172 && b >= 16 && b <= 31) || (a === 192 && b === 168)) return 'private';
  if (a === 100 && b >= 64 && b <= 127) return 'shared';
  // The benchmarking range is where local proxies with fake-IP DNS (TUN mode) answer every name:
  // reserved would refuse every name on such a host, so it counts as a local network.
  if (a === 198 && (b === 18 || b === 19)) return 'private';
  // IETF protocol assignments and the three documentation ranges: never a real destination.
  if (a === 192 && b === 0 && (c === 0 || c === 2)) return 'reserved';
  if ((a === 198 && b === 51 && c === 100) || (a === 203 && b === 0 && c === 113)) return 'reserved';
  return 'public';
}

function classifyIpv6(g: readonly number[]): AddressClass {
  if (isMapped(g) || isNat64(g)) return classifyIpv4(embeddedIpv4(g).split('.').map(Number));
  const first = g[0] as number;
  if (g.every((x) => x === 0)) return 'unspecified';
  if (g.slice(0, 7).every((x) => x === 0) && g[7] === 1) return 'loopback';
  if ((first & 0xffc0) === 0xfe80) return 'link-local';
  if ((first & 0xff00) === 0xff00) return 'multicast';
  if ((first & 0xfe00) === 0xfc00) return 'private';
  // Global unicast is 2000::/3, less the documentation prefix; everything else is not a destination.
  if ((first & 0xe000) === 0x2000 && !(first === 0x2001 && g[1] === 0x0db8)) return 'public';
  return 'reserved';
}

/**
 * The class of an address (IPv4 dotted quad or IPv6 in any valid text form). IPv4-mapped
 * (`::ffff:a.b.c.d`) and NAT64 (`64:ff9b::a.b.c.d`) addresses are classed by the IPv4 they carry.
 * Anything that is not an address is `reserved`, which the policy never lets through.
 */
export function classifyAddress(ip: string): AddressClass {
  const v4 = parseIpv4(ip);
  if (v4 !== undefined) return classifyIpv4(v4);
  const v6 = parseIpv6(ip);
  return v6 !== undefined ? classifyIpv6(v6) : 'reserved';
}

/** The canonical text of an address (IPv4-mapped IPv6 as its IPv4), for comparing two; undefined when not an address. */
function canonicalAddress(ip: string): string | undefined {
  if (parseIpv4(ip) !== undefined) return ip;
  const v6 = parseIpv6(ip);
  if (v6 === undefined) return undefined;
  return isMapped(v6) ? embeddedIpv4(v6) : formatIpv6(v6);
}

// ---------------------------------------------------------------------------------------------
// Names

type Host = { host: string; literal?: 'ipv4' | 'ipv6' };

/**
 * Checks a host without brackets or port: an IPv6 literal, a canonical IPv4, or a DNS name
 * (lower-cased, one trailing dot stripped). `wildcard` allows a leading `*.`.
 */
function checkHost(raw: string, wildcard: boolean): (Host & { wildcard?: true }) | { error: string } {
  if (raw === '') return { error: 'The host is empty; write a name (api.example.com), *.example.com, or an IP address.' };
  if (/[^\x21-\x7e]/.test(raw)) {
    return {
      error:
        'The host holds a space, a control character or a character outside ASCII; write names in ASCII ' +
        '(an internationalised name in its punycode form, xn--…).',
    };
  }
  if (raw.includes(':')) {
    const v6 = parseIpv6(raw);
    if (v6 === undefined)
      return { error: 'The host is not a valid IPv6 address; write one such as fd00::1 (in brackets with a port: [fd00::1]:443).' };
    return isMapped(v6) ? { host: embeddedIpv4(v6), literal: 'ipv4' } : { host: formatIpv6(v6), literal: 'ipv6' };
  }
  let name = raw.toLowerCase();
  if (name.endsWith('.')) name = name.slice(0, -1);
  let star = false;
  if (name.startsWith('*.')) {
    if (!wildcard) return { error: 'A wildcard is not a destination; name one host.' };
    star = true;
    name = name.slice(2);
  }
  if (name.includes('*')) {
    return { error: 'A wildcard may only be a leading "*." before a name (*.example.com), matching the names below it.' };
  }
  if (name.length > EGRESS_LIMITS.maxHostChars) {
    return { error: `The host name is longer than ${EGRESS_LIMITS.maxHostChars} characters, the most DNS allows.` };
  }
  const labels = name.split('.');
  const last = labels[labels.length - 1] as string;
  // A name whose last label is a number is an IPv4 address to every resolver and URL parser
  // (127.1, 2130706433, 0x7f.0.0.1): only the dotted quad everyone reads the same way is accepted.
  if (/^(?:[0-9]+|0x[0-9a-f]*)$/.test(last)) {
    if (star) return { error: 'A wildcard needs a name after "*.", not an address.' };
    if (parseIpv4(name) === undefined) {
      return {
        error:
          'The host looks like an IPv4 address but is not written in the canonical form; write four decimal ' +
          'numbers from 0 to 255 without leading zeros, such as 10.0.0.5.',
      };
    }
    return { host: name, literal: 'ipv4' };
  }
  for (const label of labels) {
    if (label === '') return { error: 'The host name has an empty label (two dots in a row, or a leading dot).' };
    if (label.length > 63) return { error: 'The host name has a label longer than 63 characters, the most DNS allows.' };
    if (label.startsWith('-') || label.endsWith('-')) return { error: 'A label of the host name starts or ends with "-".' };
    if (!/^[a-z0-9_-]+$/.test(label)) {
      return { error: 'The host name holds a character other than letters, digits, "-", "_" and dots.' };
    }
  }
  return star ? { host: name, wildcard: true } : { host: name };
}

/** A port written in decimal without leading zeros, 1 to 65535. */
function parsePort(text: string): number | { error: string } {
  const n = /^[1-9][0-9]{0,4}$/.test(text) ? Number(text) : NaN;
  if (!(n >= 1 && n <= 65535)) return { error: 'The port must be a number from 1 to 65535 (written without leading zeros).' };
  return n;
}

/** Splits `host`, `host:port`, `[v6]`, `[v6]:port` or a bare IPv6 literal (no port). */
function splitHostPort(text: string): { host: string; port?: string; bracketed: boolean } | { error: string } {
  if (text.startsWith('[')) {
    const close = text.indexOf(']');
    if (close < 0) return { error: 'An IPv6 address opened with "[" is not closed with "]".' };
    const rest = text.slice(close + 1);
    if (rest !== '' && !rest.startsWith(':')) return { error: 'After "]" only ":" and a port may follow.' };
    return { host: text.slice(1, close), bracketed: true, ...(rest !== '' ? { port: rest.slice(1) } : {}) };
  }
  const first = text.indexOf(':');
  if (first < 0) return { host: text, bracketed: false };
  if (text.indexOf(':', first + 1) >= 0) return { host: text, bracketed: false }; // bare IPv6, no port
  return { host: text.slice(0, first), port: text.slice(first + 1), bracketed: false };
}

/**
 * A rule as a person writes it: `host`, `host:port`, `*.suffix[:port]`, `1.2.3.4[:port]`,
 * `[fd00::1][:port]` or a bare `fd00::1` (no port). Names are lower-cased and lose one trailing dot.
 */
export function parseEgressRule(text: string, source: EgressRuleSource): EgressRule | { error: string } {
  if (typeof text !== 'string' || text === '') {
    return { error: 'The rule is empty; write a host (api.example.com), host:port, *.example.com or an IP address.' };
  }
  if (text.length > MAX_INPUT_CHARS) {
    return { error: `The rule is longer than a host name can be (${EGRESS_LIMITS.maxHostChars} characters) with a port.` };
  }
  const parts = splitHostPort(text);
  if ('error' in parts) return parts;
  const host = checkHost(parts.host, true);
  if ('error' in host) return host;
  if (parts.bracketed && !parts.host.includes(':')) return { error: 'Only an IPv6 address is written in brackets.' };
  if (parts.port === undefined) return { host: host.wildcard ? `*.${host.host}` : host.host, source };
  const port = parsePort(parts.port);
  if (typeof port !== 'number') return port;
  return { host: host.wildcard ? `*.${host.host}` : host.host, port, source };
}

/** The text a rule is written as: `host`, `host:443`, `*.example.com`, `[fd00::1]:443`. */
export function formatEgressRule(rule: Pick<EgressRule, 'host' | 'port'>): string {
  const host = rule.host.includes(':') ? `[${rule.host}]` : rule.host;
  return rule.port === undefined ? host : `${host}:${rule.port}`;
}

/** `host:port` of a destination, IPv6 in brackets. */
export function formatDestination(dest: EgressDestination): string {
  return formatEgressRule(dest);
}

/**
 * A host as a client named it, normalised as rules are: a name (lower case, no trailing dot), an
 * IPv4 dotted quad, or an IPv6 address in its compressed lower-case form (brackets allowed);
 * IPv4-mapped IPv6 becomes the IPv4. Wildcards and ports are refused.
 */
export function normalizeDestinationHost(raw: string): Host | { error: string } {
  if (typeof raw !== 'string' || raw.length > MAX_INPUT_CHARS) {
    return { error: `The host name is longer than ${EGRESS_LIMITS.maxHostChars} characters, the most DNS allows.` };
  }
  const inner = raw.startsWith('[') && raw.endsWith(']') ? raw.slice(1, -1) : raw;
  if (inner !== raw && !inner.includes(':')) return { error: 'Only an IPv6 address is written in brackets.' };
  const host = checkHost(inner, false);
  if ('error' in host) return host;
  return host.literal !== undefined ? { host: host.host, literal: host.literal } : { host: host.host };
}

// ---------------------------------------------------------------------------------------------
// Verdicts

/** The rule that lets `dest` through, if any: the same name, a wildcard above it, or the same address; a rule without a port matches any. */
export function matchRule(rules: readonly EgressRule[], dest: EgressDestination): EgressRule | undefined {
  const d = normalizeDestinationHost(dest.host);
  if ('error' in d) return undefined;
  for (const rule of rules) {
    if (rule.port !== undefined && rule.port !== dest.port) continue;
    if (rule.host.startsWith('*.')) {
      if (d.literal === undefined && d.host.endsWith(rule.host.slice(1))) return rule;
      continue;
    }
    if (d.literal === undefined) {
      if (rule.host === d.host) return rule;
    } else if (canonicalAddress(rule.host) === d.host) {
      return rule;
    }
  }
  return undefined;
}

const CLASS_WORDS: Record<AddressClass, string> = {
  loopback: 'a loopback address',
  'link-local': 'a link-local address (where cloud metadata services answer)',
  unspecified: 'the unspecified address',
  multicast: 'a multicast address',
  broadcast: 'the broadcast address',
  private: 'a private address',
  shared: 'a shared (carrier-grade NAT) address',
  reserved: 'a reserved address',
  public: 'a public address',
};

/** An error sentence as the reason part of another sentence: no capital, no full stop. */
const asReason = (error: string): string => error.charAt(0).toLowerCase() + error.slice(1).replace(/\.$/, '');

export type EgressVerdict = { kind: 'allow'; rule?: EgressRule } | { kind: 'deny'; reason: string } | { kind: 'ask' };

/**
 * The verdict on one destination before any lookup. An IP literal of a class no container may
 * reach (link-local, metadata, multicast, …) is denied whatever the rules say; then a matching
 * rule allows; else `allowlist` denies and `ask` asks. `open` allows without a rule (its
 * containers never reach the proxy; the verdict is given for completeness).
 */
export function decideDestination(policy: EgressPolicy, dest: EgressDestination): EgressVerdict {
  const d = normalizeDestinationHost(dest.host);
  if ('error' in d) return { kind: 'deny', reason: asReason(d.error) };
  if (!Number.isInteger(dest.port) || dest.port < 1 || dest.port > 65535) {
    return { kind: 'deny', reason: 'the port is not a number from 1 to 65535' };
  }
  if (d.literal !== undefined) {
    const cls = classifyAddress(d.host);
    if (ALWAYS_DENIED.has(cls)) return { kind: 'deny', reason: `${d.host} is ${CLASS_WORDS[cls]}, which no container may reach` };
  }
  const rule = matchRule(policy.rules, { host: d.host, port: dest.port });
  if (rule !== undefined) return { kind: 'allow', rule };
  if (policy.mode === 'allowlist') return { kind: 'deny', reason: "not in the folder's allowlist" };
  if (policy.mode === 'ask') return { kind: 'ask' };
  return { kind: 'allow' };
}

/** Whether an IP literal destination is one no rule nor answer lets through. */
export function isAlwaysDenied(host: string): boolean {
  const d = normalizeDestinationHost(host);
  return !('error' in d) && d.literal !== undefined && ALWAYS_DENIED.has(classifyAddress(d.host));
}

/**
 * After the host resolved an allowed NAME: refuses it when any address is one a name must not
 * lead to (loopback, link-local, unspecified, multicast, broadcast, reserved, or one of the host's
 * own addresses: DNS rebinding onto the host), else returns the address to connect to, the first.
 * The proxy connects to exactly that one, never resolving again. For an IP literal (`viaName`
 * false) the address is the literal itself, already decided.
 */
export function checkResolved(
  dest: EgressDestination,
  viaName: boolean,
  addresses: readonly string[],
  hostOwn: readonly string[],
): { address: string } | { reason: string } {
  if (!viaName) {
    const d = normalizeDestinationHost(dest.host);
    return 'error' in d || d.literal === undefined ? { reason: 'the destination is not an IP address' } : { address: d.host };
  }
  if (addresses.length === 0) return { reason: `${dest.host} does not resolve` };
  const own = new Set(hostOwn.map((a) => canonicalAddress(a)).filter((a): a is string => a !== undefined));
  let first: string | undefined;
  for (const raw of addresses) {
    const address = canonicalAddress(raw);
    if (address === undefined) return { reason: `${dest.host} resolves to something that is not an address` };
    const cls = classifyAddress(address);
    if (cls === 'loopback' || ALWAYS_DENIED.has(cls)) {
      return { reason: `${dest.host} resolves to ${address}, ${CLASS_WORDS[cls]}; a name may not lead there (DNS rebinding)` };
    }
    if (own.has(address)) {
      return { reason: `${dest.host} resolves to ${address}, an address of this host; a name may not lead there (DNS rebinding)` };
    }
    first ??= address;
  }
  return { address: first as string };
}

/**
 * The sentence a program is given when its connection is refused (the 403 body) and the log
 * keeps. `dest` must be normalised (the proxy's own); `reason` is one of this file's sentences.
 * `fixable` false (a destination no rule can open: metadata, rebinding, a forged SNI) leaves out
 * how to allow it; by default only the always-denied addresses are not fixable. No `mode`: the
 * sentence names none.
 */
export function deniedMessage(
  mode: EgressMode | undefined,
  dest: EgressDestination,
  reason: string,
  options: { fixable?: boolean } = {},
): string {
  const d = normalizeDestinationHost(dest.host);
  const where = 'error' in d ? `a destination it could not read (port ${dest.port})` : formatDestination({ host: d.host, port: dest.port });
  const why = reason.replace(/[.\s]+$/, '');
  const fixable = options.fixable ?? !('error' in d || isAlwaysDenied(d.host));
  const hint = fixable
    ? 'Allow it from VS Code (Allow for This Folder when asked, or the setting toolbox.egressForFolder).'
    : 'Toolbox does not let a container reach it.';
  return `Toolbox egress policy${mode !== undefined ? ` (${mode})` : ''} refused ${where}: ${why}. ${hint}`;
}

// ---------------------------------------------------------------------------------------------
// Rules that come with Toolbox, and from a folder's git remotes

const builtin = (host: string, port = 443): EgressRule => ({ host, port, source: 'builtin' });

/**
 * What every container under a policy may reach without asking.
 *
 * - Claude Code: its API, and the logins of claude.ai and Console accounts (its enterprise
 *   network page lists api.anthropic.com, claude.ai and platform.claude.com; console.anthropic.com
 *   is the older Console host, statsig.anthropic.com its feature flags and metrics).
 * - Codex: the OpenAI API, the ChatGPT sign-in (auth.openai.com) and the ChatGPT backend a
 *   ChatGPT-plan login talks to (chatgpt.com).
 * - Package registries the runtime image and the agents install from: npm, PyPI and its files,
 *   Debian's archive and security archive (apt speaks plain HTTP to them too).
 * - GitHub: clones, the API, archives and release assets, raw files.
 */
export const BUILTIN_EGRESS_RULES: readonly EgressRule[] = Object.freeze([
  builtin('api.anthropic.com'),
  builtin('claude.ai'),
  builtin('console.anthropic.com'),
  builtin('platform.claude.com'),
  builtin('statsig.anthropic.com'),
  builtin('api.openai.com'),
  builtin('auth.openai.com'),
  builtin('chatgpt.com'),
  builtin('registry.npmjs.org'),
  builtin('pypi.org'),
  builtin('files.pythonhosted.org'),
  builtin('deb.debian.org', 80),
  builtin('deb.debian.org'),
  builtin('security.debian.org', 80),
  builtin('security.debian.org'),
  builtin('github.com'),
  builtin('api.github.com'),
  builtin('codeload.github.com'),
  builtin('objects.githubusercontent.com'),
  builtin('raw.githubusercontent.com'),
]);

const SCHEME_PORTS: Record<string, number> = {
  https: 443,
  http: 80,
  ssh: 22,
  'git+ssh': 22,
  'ssh+git': 22,
  git: 9418,
};

/** The `host[:port]` rule for one remote's authority (userinfo dropped), or undefined. */
function authorityRule(authority: string, defaultPort: number): EgressRule | undefined {
  const at = authority.lastIndexOf('@');
  const hostPort = at >= 0 ? authority.slice(at + 1) : authority;
  const parts = splitHostPort(hostPort);
  if ('error' in parts) return undefined;
  if (parts.port === '') return undefined;
  const rule = parseEgressRule(formatEgressRule({ host: parts.host, port: Number(parts.port ?? defaultPort) }), 'remote');
  if ('error' in rule || rule.host.startsWith('*.')) return undefined;
  if (parts.port !== undefined && String(rule.port) !== parts.port) return undefined;
  return rule;
}

/** One git remote URL's rule: https/http/ssh/git URLs and scp-like `user@host:path`; anything else none. */
function remoteRule(url: string): EgressRule | undefined {
  if (typeof url !== 'string' || url.length > 4096) return undefined;
  const scheme = /^([a-z][a-z0-9+.-]*):\/\//i.exec(url);
  if (scheme) {
    const port = SCHEME_PORTS[(scheme[1] as string).toLowerCase()];
    if (port === undefined) return undefined;
    const rest = url.slice(scheme[0].length);
    const end = rest.search(/[/?#]/);
    return authorityRule(end < 0 ? rest : rest.slice(0, end), port);
  }
  // git's scp-like syntax: a colon before any slash; `C:\…` (a drive) and `ext::…` are not hosts.
  if (url.includes('::')) return undefined;
  const colon = url.indexOf(':');
  const slash = url.indexOf('/');
  if (colon <= 0 || (slash >= 0 && slash < colon)) return undefined;
  const authority = url.slice(0, colon);
  const host = authority.slice(authority.lastIndexOf('@') + 1);
  if (/^[a-z]$/i.test(host) || host.startsWith('[')) return undefined;
  return authorityRule(authority, 22);
}

/** The rules a folder's git remotes need (`git fetch` and `git push` from the container), deduplicated. */
export function remoteRules(urls: readonly string[]): EgressRule[] {
  const out: EgressRule[] = [];
  const seen = new Set<string>();
  for (const url of Array.isArray(urls) ? urls : []) {
    const rule = remoteRule(url);
    if (rule === undefined) continue;
    const key = formatEgressRule(rule);
    if (seen.has(key)) continue;
    seen.add(key);
    out.push(rule);
  }
  return out;
}
