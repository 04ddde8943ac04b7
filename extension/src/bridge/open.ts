/**
 * /open: a URL from the container opened by the host's browser (through the injected action).
 * VS Code may first ask the user whether to open the site; the route waits for that answer (up to
 * OPEN_LIMITS_MS.confirm) and answers 204 when the URL was opened, 403 when the user cancelled
 * (the shim exits non-zero with "cancelled in VS Code"), 502 when the host failed or nobody
 * answered in time. One request per workspace at a time (CONCURRENCY_LIMITS.open), so a
 * container cannot stack up dialogs.
 * What is forwarded is the URL as the WHATWG parser serialised it, the one that was checked, never
 * the raw text: `https://good.example\t@evil.example/` is one URL to the checker (tabs are
 * stripped) and could be another to the next parser that reads the raw string.
 * A URL whose redirect names a callback on the container's loopback (`codex login`'s
 * `redirect_uri=http://localhost:1455/auth/callback`, plan/loginCallback.ts) first gets that port
 * forwarded from the host's 127.0.0.1 into the container (issue 29,
 * docs/decisions/0053-login-callbacks-forwarded-per-login.md); the user's Cancel takes it back,
 * and so does no answer in time (an Open given later forwards it again).
 */
import { z } from 'zod';
import { BODY_LIMITS, ROUTES, RUN_LIMITS_MS } from '../contract/shims';
import { LOGIN_FORWARD } from '../contract/constants';
import { loginCallbackOf } from '../plan/loginCallback';
import { DeadlineError, failed, forbidden, parseBody, refused, withDeadline, type Route, type RouteResult } from './route';

const URL_SCHEMES = ['http', 'https'] as const;

const MAX_URL_CHARS = 8192;

const openRequest = z.strictObject({ url: z.string() });

/** The normalised URL to open, or why it may not be opened. */
export function checkUrl(url: string): { href: string } | { refusal: string } {
  const reason = urlRefusal(url);
  if (reason !== undefined) return { refusal: reason };
  const href = new URL(url).href;
  // Percent-encoding can lengthen it.
  return href.length > MAX_URL_CHARS ? { refusal: `the normalised url is longer than ${MAX_URL_CHARS} characters` } : { href };
}

/** Why a URL may not be opened, or undefined when it may. */
export function urlRefusal(url: string): string | undefined {
  if (url.length === 0) return 'the url is empty';
  if (url.length > MAX_URL_CHARS) return `the url is longer than ${MAX_URL_CHARS} characters`;
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return 'the url does not parse';
  }
  const scheme = parsed.protocol.replace(/:$/, '').toLowerCase();
  if (!(URL_SCHEMES as readonly string[]).includes(scheme)) {
    return `the url scheme "${scheme}" is not allowed; only ${URL_SCHEMES.join(' and ')} URLs are opened`;
  }
  if (parsed.hostname === '') return 'the url has no host';
  return undefined;
}

export const openRoute: Route = {
  path: ROUTES.open,
  bodyLimit: BODY_LIMITS.open,
  bucket: 'shared',
  runLimitMs: RUN_LIMITS_MS.open,
  logDetail: true,
  async handle(body, workspace, deps): Promise<RouteResult> {
    const parsed = parseBody(openRequest, body);
    if ('refusal' in parsed) return parsed.refusal;
    const checked = checkUrl(parsed.value.url);
    if ('refusal' in checked) return refused(`Refused to open the URL: ${checked.refusal}.`);
    const started = Date.now();
    const callback = loginCallbackOf(checked.href);
    // Bounded: an engine slow to answer costs the forward, never the URL.
    const forwarded =
      callback === undefined || deps.forwardLoginCallback === undefined
        ? undefined
        : await withDeadline(
            deps.forwardLoginCallback(workspace.key, callback.port),
            LOGIN_FORWARD.startMs,
            'Forwarding the login callback',
          ).catch(() => undefined);
    const confirmMs = deps.openConfirmMs ?? RUN_LIMITS_MS.open;
    let answer: Promise<boolean | void> | undefined;
    let opened;
    try {
      // The route's run limit covers the forward too: what is left of it is the user's to answer.
      const left = Math.max(Math.min(1_000, confirmMs), confirmMs - (Date.now() - started));
      answer = Promise.resolve(deps.openExternal(checked.href));
      opened = await withDeadline(answer, left, 'Opening the URL');
    } catch (error) {
      if (error instanceof DeadlineError) {
        let unforwarded = '';
        if (forwarded !== undefined && callback !== undefined) {
          // Nobody answered: the forward made for this login goes now, not at the end of its lifetime.
          await forwarded.release();
          // VS Code's question stays up by itself: an Open given later forwards the port again.
          const forward = deps.forwardLoginCallback;
          void answer?.then((late) => (late === false ? undefined : forward?.(workspace.key, callback.port))).catch(() => undefined);
          unforwarded = ` The forward of its login callback's port ${callback.port} is taken back; answering Open in VS Code, or Forward a Login Port…, forwards it again.`;
        }
        return failed(
          `Nobody answered VS Code's question about opening the URL within ${Math.round(confirmMs / 1000)} s, so it was not opened from here.${unforwarded}`,
        );
      }
      return failed(`The host could not open the URL: ${(error as Error).message}`);
    }
    if (opened === false) {
      await forwarded?.release();
      return forbidden('Cancelled in VS Code: the user chose not to open the URL.');
    }
    return { status: 204 };
  },
};
