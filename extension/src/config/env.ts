/**
 * The TOOLBOX_* environment layer. Pure: the caller passes the environment in.
 *
 * Upstream uses viper's AutomaticEnv with the TOOLBOX prefix, which resolves a variable only for
 * a key viper already knows: exactly its EnvBoundKeys (config/plan.go), image, registry_mirror,
 * pull, bridge and peer_messaging. This layer reads those five variables and no other, so a
 * TOOLBOX_* variable means the same to the CLI and the editor. Booleans are parsed as Go's
 * strconv.ParseBool does (what viper's decoder calls): 1, t, T, TRUE, true, True, 0, f, F, FALSE,
 * false, False, nothing else, no trimming. Upstream's load fails on any other text, and so does
 * an open here (config/openIssues.ts). Like viper, an empty variable counts as unset.
 */
import { z } from 'zod';
import type { ConfigIssue, ToolboxConfig } from './model';
import { explain } from './parse';
import { imageSchema, pullSchema, registryMirrorSchema } from './schema';

/** Go's strconv.ParseBool, word for word. */
export const GO_BOOL_WORDS: Readonly<Record<string, boolean>> = {
  '1': true,
  t: true,
  T: true,
  TRUE: true,
  true: true,
  True: true,
  '0': false,
  f: false,
  F: false,
  FALSE: false,
  false: false,
  False: false,
};

const envBoolSchema = z.string().transform((s, ctx) => {
  const value = Object.hasOwn(GO_BOOL_WORDS, s) ? GO_BOOL_WORDS[s] : undefined;
  if (value === undefined) {
    ctx.addIssue({ code: 'custom', message: 'expected true or false (or 1/0, t/f, as the toolbox CLI reads it)' });
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
  { variable: 'TOOLBOX_BRIDGE', key: 'bridge', schema: envBoolSchema },
  { variable: PEER_MESSAGING_ENV, key: 'peerMessaging', schema: envBoolSchema },
];

export function parseEnvLayer(env: Record<string, string | undefined>): {
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
    if (result.success) {
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
