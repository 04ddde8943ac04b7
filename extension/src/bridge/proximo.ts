/**
 * /proximo: the container's `proximo` shim runs one of a few verbs of the host's proximo
 * (docs/decisions/0008-proximo-through-the-bridge.md). The verb is allowlisted, arguments pass except the few that
 * would write host files, and exactly one resolved binary is executed directly with argv.
 */
import { stat } from 'node:fs/promises';
import { z } from 'zod';
import { BODY_LIMITS, FIELDS, PROXIMO_HOST_ONLY, ROUTES, RUN_LIMITS_MS } from '../contract/shims';
import { runHostProcess, HOST_PROCESS_OUTPUT_BYTES } from '../host/process';
import { findProximoBinary, PROXIMO_INSTALL_HINT, proximoChildPath } from '../proximo/binary';
import { failed, parseBody, refused, type Route, type RouteResult, type WorkspaceBinding } from './route';

/** proximo verbs the bridge runs on the host. */
const PROXIMO_VERBS = ['up', 'down', 'status', 'errors', 'skill'] as const;

const proximoRequest = z.strictObject({
  command: z.string(),
  args: z.array(z.string()).optional(),
  home: z.string().optional(),
  codex_home: z.string().optional(),
});

const SKILL_LEAVES = new Set(['install', 'uninstall']);
const RESTART_NOTE = 'Restart the agent session (Claude Code, Codex) so it picks up the skill change.';

function isOutputFlag(arg: string): boolean {
  if (arg === '-' || arg === '--') return false;
  if (/^--(out|output)(=|$)/.test(arg)) return true;
  // A single-dash arg is a short-flag cluster (`-ao`) or, for Go's flag package, a long flag
  // (`-out`): either way an `o` in it may be the output flag.
  return /^-[^-]/.test(arg) && arg.includes('o');
}

function scopeValue(args: string[]): string | undefined {
  for (const [i, arg] of args.entries()) {
    if (arg === '--') return undefined;
    if (arg === '--scope') return args[i + 1] ?? '';
    if (arg.startsWith('--scope=')) return arg.slice('--scope='.length);
  }
  return undefined;
}

/**
 * The first flag given twice (before a `--`), as it was written. The bridge reads a flag's first
 * value and proximo (cobra/pflag) its last, so `--scope global --scope project` would pass the
 * check and then act as project: any repeated flag is refused.
 */
export function repeatedFlag(args: string[]): string | undefined {
  const seen = new Set<string>();
  for (const arg of args) {
    if (arg === '--') return undefined;
    if (!arg.startsWith('-') || arg === '-') continue;
    const name = arg.split('=')[0] as string;
    if (seen.has(name)) return name;
    seen.add(name);
  }
  return undefined;
}

/** Why a proximo invocation is refused, or undefined when it may run. Pure. */
export function proximoRefusal(command: string, args: string[]): string | undefined {
  if ((PROXIMO_HOST_ONLY as readonly string[]).includes(command)) {
    return (
      `proximo ${command} is host-only: it needs root on the host (or would make toolbox an installer), ` +
      `so the bridge never runs it. Run \`proximo ${[command, ...args].join(' ')}\` in a terminal on the host.`
    );
  }
  if (!(PROXIMO_VERBS as readonly string[]).includes(command)) {
    return `proximo ${JSON.stringify(command)} is not allowed through the bridge; allowed: ${PROXIMO_VERBS.join(', ')}.`;
  }
  const repeated = repeatedFlag(args);
  if (repeated !== undefined) {
    return `The flag ${JSON.stringify(repeated)} is given more than once; give each flag once.`;
  }
  if (command === 'errors' && args.includes('dom')) {
    return 'proximo errors dom is refused: it writes an HTML file on the host, where the container cannot read it.';
  }
  const output = args.find(isOutputFlag);
  if (output !== undefined) {
    return (
      `The argument ${JSON.stringify(output)} is refused: output flags (-o, --out, --output) would write to the ` +
      `host filesystem. Redirect stdout inside the container instead (proximo ... > file).`
    );
  }
  if (command === 'skill' && args.some((a) => SKILL_LEAVES.has(a))) {
    const scope = scopeValue(args);
    if (scope !== undefined && scope !== 'global') {
      return (
        `proximo skill --scope ${scope || '(empty)'} is refused: through the bridge a non-global scope resolves ` +
        `against the host's working directory, not the container's /workspace, so the skill would land where ` +
        `the container's agents never look. Omit --scope; the bridge installs at --scope global into the ` +
        `container's agent homes.`
      );
    }
  }
  return undefined;
}

/** `skill install|uninstall` without a scope gets `--scope global` (before a `--`, if any). */
export function withGlobalScope(command: string, args: string[]): string[] {
  if (command !== 'skill' || !args.some((a) => SKILL_LEAVES.has(a)) || scopeValue(args) !== undefined) return args;
  const end = args.indexOf('--');
  return end === -1 ? [...args, '--scope', 'global'] : [...args.slice(0, end), '--scope', 'global', ...args.slice(end)];
}

async function isDirectory(path: string): Promise<boolean> {
  try {
    return (await stat(path)).isDirectory();
  } catch {
    return false;
  }
}

/**
 * HOME and CODEX_HOME for `skill`: the workspace's agent homes (the host directories behind the
 * container's .claude and .codex mounts). The shim sends them from its environment; a request
 * naming any other directory is refused, so a container cannot point proximo at /root or /etc.
 */
async function skillHomes(
  home: string,
  codexHome: string,
  workspace: WorkspaceBinding,
): Promise<{ env: { HOME: string; CODEX_HOME: string } } | { refusal: RouteResult }> {
  const pinned = [
    [FIELDS.home, home, workspace.defaultAgentHome],
    [FIELDS.codexHome, codexHome, workspace.defaultCodexHome],
  ] as const;
  for (const [field, sent, own] of pinned) {
    // 502 as upstream, whose launchProximo fails the run on a home it cannot use (bridge/proximo.go checkHostDir).
    if (sent !== '' && sent !== own) {
      return {
        refusal: failed(
          `Refused proximo skill: ${field} ${JSON.stringify(sent)} is not the agent home this container mounts ` +
            `(${JSON.stringify(own)}); send that one, or none.`,
        ),
      };
    }
  }
  for (const dir of [workspace.defaultAgentHome, workspace.defaultCodexHome]) {
    if (!(await isDirectory(dir))) {
      return { refusal: failed(`The agent home ${dir} does not exist on the host; start the container once so it is created.`) };
    }
  }
  return { env: { HOME: workspace.defaultAgentHome, CODEX_HOME: workspace.defaultCodexHome } };
}

export const proximoRoute: Route = {
  path: ROUTES.proximo,
  bodyLimit: BODY_LIMITS.proximo,
  bucket: 'shared',
  runLimitMs: RUN_LIMITS_MS.proximo,
  logDetail: true,
  async handle(body, workspace, deps): Promise<RouteResult> {
    const parsed = parseBody(proximoRequest, body);
    if ('refusal' in parsed) return parsed.refusal;
    const { command } = parsed.value;
    const requested = parsed.value.args ?? [];
    if (!workspace.proximoEnabled) {
      return refused(
        'Refused: proximo is off for this workspace — it has proximo: false in .toolbox.yaml, or proximo is not ' +
          'installed on the host.',
      );
    }
    const reason = proximoRefusal(command, requested);
    if (reason !== undefined) return refused(reason);
    const args = withGlobalScope(command, requested);

    const extraEnv: Record<string, string> = {};
    if (command === 'skill') {
      const homes = await skillHomes(parsed.value.home ?? '', parsed.value.codex_home ?? '', workspace);
      if ('refusal' in homes) return homes.refusal;
      Object.assign(extraEnv, homes.env);
    }

    const binary = findProximoBinary({ pathEnv: deps.env.PATH, home: deps.home, fallbackDirs: deps.proximoFallbackDirs });
    if (binary === undefined) return failed(`proximo is not installed on the host: ${PROXIMO_INSTALL_HINT}.`);

    let result;
    try {
      result = await runHostProcess({
        file: binary,
        args: [command, ...args],
        env: { from: deps.env, pass: 'all', set: { PATH: proximoChildPath(binary, deps.env.PATH, deps.home), ...extraEnv } },
        cwd: deps.home,
        timeoutMs: RUN_LIMITS_MS.proximo,
        maxOutputBytes: HOST_PROCESS_OUTPUT_BYTES,
        output: 'merged',
      });
    } catch (error) {
      return failed(`Could not run ${binary}: ${(error as Error).message}`);
    }
    if (result.timedOut) return failed(`proximo ${command} did not finish within ${RUN_LIMITS_MS.proximo / 1000} s and was stopped.`);
    let output = result.stdout;
    if (result.truncated) {
      output += `\n[the bridge stopped proximo ${command}: it wrote more than ${HOST_PROCESS_OUTPUT_BYTES} bytes of output]\n`;
    }
    if (command === 'skill' && args.some((a) => SKILL_LEAVES.has(a)) && result.exit === 0) {
      output = `${output}${output === '' || output.endsWith('\n') ? '' : '\n'}${RESTART_NOTE}\n`;
    }
    return { status: 200, json: { [FIELDS.exit]: result.exit, [FIELDS.output]: output } };
  },
};
