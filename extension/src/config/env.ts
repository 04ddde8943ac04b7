/**
 * The TOOLBOX_* environment layer. Pure: the caller passes the environment in.
 *
 * Upstream uses viper's AutomaticEnv with the TOOLBOX prefix, which resolves a variable only for
 * a key viper already knows; upstream binds image, registry_mirror, pull, bridge and
 * peer_messaging. We also read TOOLBOX_PROXIMO and TOOLBOX_MOUNTS_ROOT (top-level scalars a user
 * may reasonably switch per shell). Deliberately not read: TOOLBOX_MANAGED_STATUSLINE (the name of
 * a variable toolbox sets inside containers), TOOLBOX_SHELL and TOOLBOX_AGENT. Like viper, an empty
 * variable counts as unset.
 */
import { z } from 'zod';
import type { ConfigIssue, ToolboxConfig } from './model';
import { explain } from './parse';
import { imageSchema, mountsRootProblem, mountsRootSchema, pullSchema, registryMirrorSchema } from './schema';

const BOOL_WORDS: Record<string, boolean> = {
  true: true,
  '1': true,
  yes: true,
  on: true,
  false: false,
  '0': false,
  no: false,
  off: false,
};

const envBoolSchema = z.string().transform((s, ctx) => {
  const value = BOOL_WORDS[s.trim().toLowerCase()];
  if (value === undefined) {
    ctx.addIssue({ code: 'custom', message: 'expected true or false (or 1/0, yes/no, on/off)' });
    return z.NEVER;
  }
  return value;
});

/** Upstream's removed per-tool switches (TOOLBOX_TOOLS_CODEX=false, …): warned about, never read. */
const TOOLS_ENV_PREFIX = 'TOOLBOX_TOOLS_';

/** The variable that sets peer messaging (named in the Peer Messaging view when it decides). */
export const PEER_MESSAGING_ENV = 'TOOLBOX_PEER_MESSAGING';

/** Variable name → model key and the schema its text must pass. */
const ENV_BINDINGS: ReadonlyArray<{ variable: string; key: keyof ToolboxConfig; schema: z.ZodType }> = [
  { variable: 'TOOLBOX_IMAGE', key: 'image', schema: imageSchema },
  { variable: 'TOOLBOX_REGISTRY_MIRROR', key: 'registryMirror', schema: registryMirrorSchema },
  { variable: 'TOOLBOX_PULL', key: 'pull', schema: pullSchema },
  { variable: 'TOOLBOX_MOUNTS_ROOT', key: 'mountsRoot', schema: mountsRootSchema },
  { variable: 'TOOLBOX_BRIDGE', key: 'bridge', schema: envBoolSchema },
  { variable: 'TOOLBOX_PROXIMO', key: 'proximo', schema: envBoolSchema },
  { variable: PEER_MESSAGING_ENV, key: 'peerMessaging', schema: envBoolSchema },
];

/** The variables this layer reads, for docs and the UI ("set by TOOLBOX_PULL"). */
export const ENV_VARIABLES: readonly string[] = ENV_BINDINGS.map((b) => b.variable);

export function parseEnvLayer(
  env: Record<string, string | undefined>,
  home?: string,
): {
  layer: Partial<ToolboxConfig>;
  issues: ConfigIssue[];
  /** The variable that set each key of the layer. */
  variables: Partial<Record<keyof ToolboxConfig, string>>;
} {
  const layer: Record<string, unknown> = {};
  const variables: Partial<Record<keyof ToolboxConfig, string>> = {};
  const issues: ConfigIssue[] = [];
  for (const { variable, key, schema } of ENV_BINDINGS) {
    const text = env[variable];
    if (text === undefined || text === '') continue;
    const result = schema.safeParse(text);
    const rootProblem = result.success && key === 'mountsRoot' ? mountsRootProblem(text, home) : undefined;
    if (rootProblem !== undefined) {
      issues.push({
        severity: 'error',
        source: 'environment',
        key: variable,
        message: `${rootProblem} This variable is ignored until it is fixed or unset.`,
      });
    } else if (result.success) {
      layer[key] = result.data;
      variables[key] = variable;
    } else {
      const message = `${explain(result.error.issues[0]!, text)}; this variable is ignored until it is fixed or unset`;
      issues.push({ severity: 'error', source: 'environment', key: variable, message });
    }
  }
  const tools = Object.keys(env)
    .filter((name) => name.startsWith(TOOLS_ENV_PREFIX) && env[name] !== undefined)
    .sort();
  if (tools.length > 0) {
    issues.push({
      severity: 'warning',
      source: 'environment',
      key: tools.join(', '),
      message:
        'per-tool switches are no longer supported and are ignored: every tool in the image is always installed, as with the toolbox CLI. Unset them to silence this warning.',
    });
  }
  return { layer: layer as Partial<ToolboxConfig>, issues, variables };
}
