/**
 * Login callbacks (issue 29, docs/decisions/0053-login-callbacks-forwarded-per-login.md): which
 * port of the container's loopback an authorize URL sends the browser back to, and which ports the
 * host may listen on for it. Pure: the URL comes from the container and is hostile; every answer is
 * a port number or nothing.
 */
import { BRIDGE_DEFAULT_PORT, BRIDGE_PORT_COUNT } from '../contract/manifest';
import { LOGIN_FORWARD } from '../contract/constants';
import { LOGIN_PRESETS } from '../contract/upstream';

/**
 * The query parameters of an authorize URL that carry the login's callback address (OAuth's
 * `redirect_uri`, and the names other CLIs use). Only the URL's own top-level query is read.
 */
const LOGIN_REDIRECT_PARAMS = ['redirect_uri', 'redirect_url', 'redirect', 'callback', 'callback_url'] as const;

/** Redirect hosts that mean the container's own loopback (the forward listens on the host's 127.0.0.1). */
const LOGIN_LOOPBACK_HOSTS = ['localhost', '127.0.0.1'] as const;

/** A loopback callback an authorize URL names. */
export interface LoginCallback {
  port: number;
  /** The query parameter it came from (`redirect_uri`, …). */
  param: string;
  /** The callback's host as written (`localhost` or `127.0.0.1`). */
  host: string;
}

/** The longest URL looked at (the bridge's /open refuses longer ones before this). */
const MAX_URL_CHARS = 8192;

/**
 * The loopback callback `url` names in a redirect parameter of its own query, or undefined.
 * Counted only: an http(s) URL whose parameter (LOGIN_REDIRECT_PARAMS) is itself an `http:` URL on
 * `localhost` or `127.0.0.1` with an explicit port the host may listen on (loginPortRefusal).
 * Several such parameters naming different ports name none: the host cannot tell which one the
 * login uses, so nothing is forwarded.
 */
export function loginCallbackOf(url: string): LoginCallback | undefined {
  if (url.length > MAX_URL_CHARS) return undefined;
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return undefined;
  }
  if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:') return undefined;
  const found: LoginCallback[] = [];
  for (const param of LOGIN_REDIRECT_PARAMS) {
    for (const value of parsed.searchParams.getAll(param)) {
      const callback = loopbackCallback(value);
      if (callback !== undefined) found.push({ ...callback, param });
    }
  }
  const ports = new Set(found.map((f) => f.port));
  return ports.size === 1 ? found[0] : undefined;
}

function loopbackCallback(value: string): { port: number; host: string } | undefined {
  let redirect: URL;
  try {
    redirect = new URL(value);
  } catch {
    return undefined;
  }
  // A login callback is plain http on loopback; userinfo in it is no callback anyone serves.
  if (redirect.protocol !== 'http:' || redirect.username !== '' || redirect.password !== '') return undefined;
  const host = redirect.hostname.toLowerCase();
  if (!(LOGIN_LOOPBACK_HOSTS as readonly string[]).includes(host)) return undefined;
  // WHATWG drops the default port (80), so an empty port is "none written" or 80: neither is forwarded.
  if (redirect.port === '') return undefined;
  const port = Number(redirect.port);
  return loginPortRefusal(port) === undefined ? { port, host } : undefined;
}

/** Why the host must not listen on `port` for a login callback, or undefined when it may. */
export function loginPortRefusal(port: number): string | undefined {
  if (!Number.isInteger(port)) return 'a port is a whole number';
  if (port < LOGIN_FORWARD.minPort || port > LOGIN_FORWARD.maxPort) {
    return `only ports ${LOGIN_FORWARD.minPort}–${LOGIN_FORWARD.maxPort} are forwarded`;
  }
  if (port >= BRIDGE_DEFAULT_PORT && port < BRIDGE_DEFAULT_PORT + BRIDGE_PORT_COUNT) {
    return `ports ${BRIDGE_DEFAULT_PORT}–${BRIDGE_DEFAULT_PORT + BRIDGE_PORT_COUNT - 1} belong to the Toolbox bridge`;
  }
  return undefined;
}

/** A port typed by the user: the number, or why it is not one the host may listen on. */
export function parseLoginPort(text: string): { port: number } | { refusal: string } {
  const trimmed = text.trim();
  if (!/^\d{1,5}$/.test(trimmed)) return { refusal: 'Type a port number, for example 1455.' };
  const port = Number(trimmed);
  const refusal = loginPortRefusal(port);
  return refusal === undefined ? { port } : { refusal: `Port ${port}: ${refusal}.` };
}

/** Upstream's `--oauth` preset for `tool` (LOGIN_PRESETS), or undefined. */
export function loginPreset(tool: string): (typeof LOGIN_PRESETS)[number] | undefined {
  return LOGIN_PRESETS.find((p) => p.tool === tool);
}

/** "1455" or "8877–8886": a preset's port or range, as the picker shows it. */
export function presetPorts(preset: (typeof LOGIN_PRESETS)[number]): string {
  const [first, last] = preset.ports;
  return first === last ? String(first) : `${first}–${last}`;
}
