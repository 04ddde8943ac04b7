/**
 * /credential: the container's git credential helper asks the host's git. `op` maps to
 * `git credential fill|approve|reject`; `input` is the git credential protocol on stdin. Neither
 * the input nor the output is ever logged.
 */
import { z } from 'zod';
import { BODY_LIMITS, CREDENTIAL_OPS, FIELDS, ROUTES, RUN_LIMITS_MS } from '../contract/constants';
import { runArgv } from './hostProcess';
import { failed, parseBody, refused, type Route, type RouteResult } from './route';

const OPS = Object.keys(CREDENTIAL_OPS) as Array<keyof typeof CREDENTIAL_OPS>;

const credentialRequest = z.strictObject({
  op: z.enum(OPS as [keyof typeof CREDENTIAL_OPS, ...Array<keyof typeof CREDENTIAL_OPS>]),
  input: z.string(),
});

/** Keys of the git credential protocol (git-credential(1)); nothing else reaches git. */
const PROTOCOL_KEYS = new Set([
  'protocol',
  'host',
  'path',
  'username',
  'password',
  'url',
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

/** Why `input` is not git credential protocol, or undefined when it is. */
export function credentialInputRefusal(input: string): string | undefined {
  if (input.includes('\0')) return 'the input contains a NUL byte';
  const lines = input.split('\n');
  while (lines.length > 0 && lines[lines.length - 1] === '') lines.pop();
  for (const [index, line] of lines.entries()) {
    const eq = line.indexOf('=');
    if (eq <= 0) return `line ${index + 1} is not key=value`;
    const key = line.slice(0, eq);
    if (!PROTOCOL_KEYS.has(key)) return `line ${index + 1} has a key that is not part of the git credential protocol`;
  }
  return undefined;
}

export const credentialRoute: Route = {
  path: ROUTES.credential,
  bodyLimit: BODY_LIMITS.credential,
  bucket: 'credential',
  runLimitMs: RUN_LIMITS_MS.credential,
  logDetail: false,
  async handle(body, _workspace, deps): Promise<RouteResult> {
    const parsed = parseBody(credentialRequest, body);
    if ('refusal' in parsed) return parsed.refusal;
    const reason = credentialInputRefusal(parsed.value.input);
    if (reason !== undefined) return refused(`Refused the credential request: ${reason}.`);
    const input = parsed.value.input.endsWith('\n') ? parsed.value.input : `${parsed.value.input}\n`;
    try {
      const result = await runArgv({
        file: 'git',
        args: ['credential', CREDENTIAL_OPS[parsed.value.op]],
        env: { ...deps.env, GIT_TERMINAL_PROMPT: '0' },
        cwd: deps.home,
        input,
        timeoutMs: RUN_LIMITS_MS.credential,
        mergeStderr: false,
      });
      if (result.timedOut) return failed(`git credential did not finish within ${RUN_LIMITS_MS.credential / 1000} s.`);
      return { status: 200, json: { [FIELDS.exit]: result.exit, [FIELDS.output]: result.output } };
    } catch (error) {
      return failed(`Could not run git on the host (${(error as NodeJS.ErrnoException).code ?? 'error'}): is git installed and on PATH?`);
    }
  },
};
