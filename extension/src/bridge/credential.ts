/**
 * /credential: the container's git credential helper asks the host's git. `op` maps to
 * `git credential fill|approve|reject`; `input` is the git credential protocol on stdin. Neither
 * the input nor the output is ever logged.
 *
 * Before git runs, the request names exactly one valid `host`, and the injected authority
 * (credentialConsent.ts) allows it: the folder's own remote hosts by default, others only with
 * the user's consent, `store`/`erase` only for allowed hosts. Host git then runs with a
 * configuration and environment the container cannot influence (hostGit.ts).
 */
import { z } from 'zod';
import { BODY_LIMITS, CREDENTIAL_LIMITS_MS, CREDENTIAL_OPS, FIELDS, ROUTES, RUN_LIMITS_MS } from '../contract/shims';
import { normalizeHost } from './gitRemotes';
import { runHostGitCredential } from './hostGit';
import { failed, forbidden, parseBody, refused, type Route, type RouteResult } from './route';

const OPS = Object.keys(CREDENTIAL_OPS) as Array<keyof typeof CREDENTIAL_OPS>;

const credentialRequest = z.strictObject({
  op: z.enum(OPS as [keyof typeof CREDENTIAL_OPS, ...Array<keyof typeof CREDENTIAL_OPS>]),
  input: z.string(),
});

/**
 * Keys of the git credential protocol (git-credential(1)) that git sends to a helper; nothing
 * else reaches git. `url` is not among them: it would set the host a second way.
 */
const PROTOCOL_KEYS = new Set([
  'protocol',
  'host',
  'path',
  'username',
  'password',
  'password_expiry_utc',
  'oauth_refresh_token',
  'authtype',
  'credential',
  'ephemeral',
  'state[]',
  'state',
  'capability[]',
  'wwwauth[]',
]);

/** Keys that may appear once only (git keeps the last, a checker might read the first). */
const SINGLE_KEYS = new Set(['protocol', 'host', 'path', 'username']);

/** Why `input` is not git credential protocol for one host, or undefined when it is. */
export function credentialInputRefusal(input: string): string | undefined {
  if (input.includes('\0')) return 'the input contains a NUL byte';
  const lines = input.split('\n');
  while (lines.length > 0 && lines[lines.length - 1] === '') lines.pop();
  const seen = new Set<string>();
  for (const [index, line] of lines.entries()) {
    const eq = line.indexOf('=');
    if (eq <= 0) return `line ${index + 1} is not key=value`;
    const key = line.slice(0, eq);
    if (!PROTOCOL_KEYS.has(key)) return `line ${index + 1} has a key that is not part of the git credential protocol a helper receives`;
    if (SINGLE_KEYS.has(key) && seen.has(key)) return `line ${index + 1} repeats "${key}"`;
    seen.add(key);
  }
  return credentialHost(input) === undefined ? 'it names no valid host= (a host name or IP, optionally :port)' : undefined;
}

/** The request's host, normalised, or undefined when it has none or not a valid one. */
export function credentialHost(input: string): string | undefined {
  const line = input.split('\n').find((l) => l.startsWith('host='));
  return line === undefined ? undefined : normalizeHost(line.slice('host='.length));
}

export const credentialRoute: Route = {
  path: ROUTES.credential,
  bodyLimit: BODY_LIMITS.credential,
  bucket: 'credential',
  runLimitMs: RUN_LIMITS_MS.credential,
  logDetail: false,
  async handle(body, workspace, deps): Promise<RouteResult> {
    const parsed = parseBody(credentialRequest, body);
    if ('refusal' in parsed) return parsed.refusal;
    const reason = credentialInputRefusal(parsed.value.input);
    if (reason !== undefined) return refused(`Refused the credential request: ${reason}.`);
    const host = credentialHost(parsed.value.input) as string;
    const { op } = parsed.value;
    const request = { container: workspace.key, folder: workspace.workspaceFolder, op, host };
    const verdict = await deps.credentials.decide(request);
    if (verdict.decision !== 'allow') {
      return forbidden(`The host refused git credentials for ${host} to this container: ${verdict.reason ?? 'not allowed'}.`);
    }
    const input = parsed.value.input.endsWith('\n') ? parsed.value.input : `${parsed.value.input}\n`;
    try {
      const result = await runHostGitCredential({
        action: CREDENTIAL_OPS[op],
        input,
        env: deps.env,
        // What the container can write: the workspace and its read-write mount sources. A read-only
        // bind (the host ~/.gitconfig when there is no ~/.toolbox/gitconfig) is not among them, so
        // the user's own credential.helper there runs. Without that list, every mount source counts.
        writableRoots: [workspace.workspaceFolder, ...(workspace.writableRoots ?? workspace.mountsRoots)],
        timeoutMs: CREDENTIAL_LIMITS_MS.git,
      });
      switch (result.kind) {
        case 'ran':
          return { status: 200, json: { [FIELDS.exit]: result.exit, [FIELDS.output]: result.output } };
        case 'timeout':
          return failed(`git credential did not finish within ${CREDENTIAL_LIMITS_MS.git / 1000} s on the host.`);
        case 'config-error':
          return failed(
            `git on the host could not read its configuration (git config exited ${result.exit}); run \`git config --list\` on the host to see why.`,
          );
        case 'unsafe-config':
          deps.credentials.reportUnsafeConfig(request, result.reason);
          return forbidden(
            "The host's git configuration for credentials is writable from this container, so the bridge will not run it. The Toolbox log on the host names the file.",
          );
      }
    } catch (error) {
      return failed(`Could not run git on the host (${(error as NodeJS.ErrnoException).code ?? 'error'}): is git installed and on PATH?`);
    }
  },
};
