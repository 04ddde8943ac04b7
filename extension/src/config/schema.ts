/**
 * zod schemas for one `.toolbox.yaml` file, with upstream's snake_case keys. Objects are strict so
 * that an unknown key surfaces as an `unrecognized_keys` issue, which the parser turns into a
 * warning (and drops the key) rather than an error. Messages start with "expected" so the parser
 * can append what was actually written; other messages are complete sentences.
 */
import * as path from 'node:path';
import { z } from 'zod';
import { EGRESS_MODES } from '../contract/egress';

/** Upstream's `true`/`false`; YAML 1.2 (like go-yaml v3) reads `yes`/`no` as strings. */
export const boolSchema = z.boolean({ error: 'expected true or false' });

export const shellSchema = z.enum(['zsh'], {
  error: 'expected zsh (the only supported shell; bash is no longer supported)',
});
/** Upstream's SupportedAgents (filippolmt/toolbox@7ebd141d7d563c78ccfa7add7759be5df566adef internal/config/config.go). */
export const agentSchema = z.enum(['claude', 'codex'], { error: 'expected claude or codex' });
export const pullSchema = z.enum(['auto', 'always', 'never'], { error: 'expected auto, always or never' });

/** Empty means "unset" (upstream's zero value), so a higher layer can clear a lower one. */
export const imageSchema = z
  .string({ error: 'expected an image reference such as host/path:tag' })
  .refine((s) => !/\s/.test(s), { error: 'expected an image reference such as host/path:tag, without spaces' });

export const registryMirrorSchema = z
  .string({ error: 'expected a bare host[:port][/path]' })
  .refine((s) => s === '' || (!s.includes('://') && !/\s/.test(s) && !s.startsWith('/')), {
    error: 'expected a bare host[:port][/path] without a scheme, e.g. harbor.corp.io/ghcr-proxy',
  });

export const mountsRootSchema = z
  .string({ error: 'expected an absolute path or ~/sub' })
  .refine((s) => s === '' || path.posix.isAbsolute(s) || /^~\/+[^/]/.test(s), {
    error: 'expected an absolute path or ~/sub (a bare "~" would mount your whole home and defeat credential isolation)',
  });

/**
 * Why a mounts_root cannot be used with this home, or undefined. Upstream
 * (filippolmt/toolbox@7ebd141d7d563c78ccfa7add7759be5df566adef internal/config/config.go
 * ValidateMountsRoot) refuses a bare `~` only; this also refuses the home written any other way
 * (`/home/u`, `~/.`), whose defaults would be the user's own `~/.claude`, `~/.codex` and `~/.pi`
 * bound read-write, the leak upstream's bare-`~` refusal names
 * (docs/decisions/0052-newest-upstream-config.md). A root above the home (`/`, `/home`) is
 * accepted, as upstream: its defaults are directories of their own there.
 */
export function mountsRootProblem(raw: string, home: string | undefined): string | undefined {
  if (raw === '' || home === undefined || home === '') return undefined;
  const h = path.posix.resolve(home);
  let root: string | undefined;
  if (path.posix.isAbsolute(raw)) root = path.posix.resolve(raw);
  else if (raw.startsWith('~/')) root = path.posix.resolve(h, raw.slice(2));
  if (root !== h) return undefined;
  return (
    `"${raw}" is your home directory, so the container would mount your own agent homes (~/.claude, ~/.codex, ~/.pi) ` +
    'read-write instead of its own copies. Use a directory of its own, such as ~/.toolbox (the default, when mounts_root is unset) or ~/toolbox-state.'
  );
}

/**
 * Keys the container env must never take from a file: toolbox sets them itself. As upstream
 * (filippolmt/toolbox@7ebd141d7d563c78ccfa7add7759be5df566adef internal/config/config.go
 * ValidateEnv, on keys whose case internal/config/plan.go restoreEnvKeyCase keeps): exactly `PWD`
 * and the `TOOLBOX_` prefix, case as written, so `pwd` or `toolbox_x` are other variables.
 */
export function reservedEnvKeyProblem(key: string): string | undefined {
  if (key.startsWith('TOOLBOX_')) {
    return `${key} is reserved: TOOLBOX_* variables are set by toolbox itself; remove it from env`;
  }
  if (key === 'PWD') return 'PWD is reserved: toolbox sets it to the working directory; remove it from env';
  if (key === '' || key.includes('=') || key.includes('\0')) {
    return `"${key}" is not a valid variable name (it must be non-empty and contain no "=")`;
  }
  return undefined;
}

/** Scalars become strings as viper would read them (`PORT: 8080` gives "8080"). */
const envValueSchema = z.union([z.string(), z.number(), z.boolean()], { error: 'expected a string value' }).transform((v) => String(v));

export const envSchema = z.record(z.string(), envValueSchema, { error: 'expected a mapping of NAME: value' }).superRefine((env, ctx) => {
  for (const key of Object.keys(env)) {
    const problem = reservedEnvKeyProblem(key);
    if (problem) ctx.addIssue({ code: 'custom', path: [key], message: problem });
  }
});

const nonEmptyString = z.string({ error: 'expected a string' }).min(1, { error: 'expected a non-empty string' });

export const shellBlockSchema = z.strictObject(
  {
    // Any string loads, as in the toolbox CLI (test/unit/parity.test.ts): an empty or relative path
    // refuses this one shell when it opens (plan/namedShell.ts), never the whole config, and the
    // Problems panel flags it (config/diagnostics.ts).
    path: z
      .string({ error: 'expected a string' })
      .optional()
      .describe('Absolute host path of the folder this named shell opens (toolbox shell <name>).'),
    env: envSchema.optional().describe('Environment variables for this named shell only, added to the top-level env.'),
  },
  { error: 'expected a mapping with path and env' },
);

export const mountSchema = z.strictObject(
  {
    name: z
      .string({ error: 'expected a string' })
      .optional()
      .describe(
        'The mount to change (a default mount such as claude, gh or docker-sock), or the name of a new one. Without target: it patches the default mount of that name. Without a name, the entry adds a new mount (source and target).',
      ),
    source: nonEmptyString.optional().describe('Host path to bind: absolute, ~/…, or relative to the mounts root (~/.toolbox).'),
    target: nonEmptyString
      .optional()
      .describe('Path in the container: absolute, or relative to /home/toolbox. With source: it adds or replaces a mount.'),
    readonly: boolSchema.optional().describe('Mount it read-only.'),
    create_if_missing: boolSchema.optional().describe('Create the host directory when it does not exist, instead of skipping the mount.'),
    symlink_from: nonEmptyString
      .optional()
      .describe(
        'Host path bound instead when source does not exist (the toolbox CLI symlinks source to it); the mount is skipped when this is missing too.',
      ),
    disabled: boolSchema.optional().describe('Drop this mount (true), for example a default one the container should not have.'),
  },
  { error: 'expected a mapping with name, source, target, readonly, create_if_missing, symlink_from, disabled' },
);

const repoRelativePath = nonEmptyString.refine((p) => !path.posix.isAbsolute(p) && !p.split('/').includes('..'), {
  error: 'expected a path relative to the repository, without ".."',
});

/** `egress:` (issue 30, docs/decisions/0056-egress-through-a-host-proxy.md); each rule is checked by plan/egress.ts when the policy is built. */
export const egressSchema = z.strictObject(
  {
    mode: z
      .enum(EGRESS_MODES, { error: 'expected open, ask or allowlist' })
      .optional()
      .describe(
        'open: anywhere (as the toolbox CLI). ask: through a proxy on this host that asks you in VS Code about any host not allowed. allowlist: as ask, but refused without asking.',
      ),
    allow: z
      .array(nonEmptyString, { error: 'expected a list of hosts' })
      .optional()
      .describe('Hosts the container may connect to: host, host:port, *.example.com, an IP address ([v6]:port).'),
    defaults: boolSchema
      .optional()
      .describe("The built-in allowlist (the agents' APIs, the package registries, the folder's git remotes). Unset: on."),
  },
  { error: 'expected a mapping with mode, allow and defaults' },
);

/**
 * Every key has a description: the JSON Schema generated from this (config/jsonSchema.ts,
 * schemas/toolbox.schema.json) shows it as help in the editor's completion and hover.
 */
export const fileSchema = z
  .strictObject(
    {
      shell: shellSchema.optional().describe('Login shell inside the container. Only zsh is supported.'),
      agent: agentSchema
        .optional()
        .describe('Default AI agent launched by toolbox worktree sessions: claude (default) or codex. Not used by the VS Code extension.'),
      image: imageSchema
        .optional()
        .describe(
          'Full image reference used verbatim (host/path:tag or a digest) instead of the Toolbox runtime image. Wins over registry_mirror.',
        ),
      registry_mirror: registryMirrorSchema
        .optional()
        .describe(
          'Pull the runtime image through this registry (a proxy or pull-through cache): a bare host[:port][/path], no scheme. Ignored when image is set.',
        ),
      pull: pullSchema
        .optional()
        .describe(
          'When to ask the registry for the image: auto (default), always, or never (air-gapped: the image must already be on this machine).',
        ),
      mounts_root: mountsRootSchema
        .optional()
        .describe(
          'Where the container keeps its own copies of credentials and caches: an absolute path or ~/sub. Default ~/.toolbox. A bare ~ is refused.',
        ),
      bridge: boolSchema
        .optional()
        .describe('The host bridge for code, xdg-open, git credentials and proximo inside the container. Unset: on. false: no bridge.'),
      /** Deprecated spelling of `bridge`; `bridge` wins when a file has both. */
      browser_bridge: boolSchema.optional().describe('Deprecated: the old spelling of bridge. Rename it to bridge.'),
      proximo: boolSchema
        .optional()
        .describe('Reach the apps proximo serves on this host (https://app.test) from the container. Unset: on when proximo is installed.'),
      managed_statusline: boolSchema
        .optional()
        .describe("The image's Claude Code status line, applied on every shell start. Unset: on. false keeps your own."),
      image_reclaim: boolSchema
        .optional()
        .describe('Remove old runtime images that no container uses. Unset: on. false keeps every generation.'),
      peer_messaging: boolSchema
        .optional()
        .describe(
          'Let agent sessions in different toolbox containers message each other (a shared PID namespace and socket volume). On by default in VS Code; the toolbox.peerMessaging setting wins over this key.',
        ),
      /** Spec-driven-development skill packs: accepted in any shape and not used by the extension. */
      sdd: z
        .unknown()
        .optional()
        .describe(
          'Spec-driven-development skill packs installed by the toolbox CLI (gsd, bmad, openspec). Not used by the VS Code extension.',
        ),
      env: envSchema
        .optional()
        .describe('Environment variables for every shell in the container (NAME: value). TOOLBOX_* and PWD are reserved.'),
      shells: z
        .record(z.string(), shellBlockSchema, { error: 'expected a mapping of shell name to block' })
        .optional()
        .describe('Named shells (toolbox shell <name>): each a host folder (path) and its own env.'),
      mounts: z
        .array(mountSchema, { error: 'expected a list of mounts' })
        .optional()
        .describe(
          'Changes to the default mounts: patch one by name, disable it, or add a new one with source and target. A list in .toolbox.yaml replaces the one in ~/.toolbox.yaml.',
        ),
      inherit_host_auth: z
        .array(nonEmptyString, { error: 'expected a list of CLI names' })
        .optional()
        .describe(
          "CLIs whose host login the container uses instead of its own copy (for example gh). Shares the host's credentials with the container.",
        ),
      worktree: z
        .strictObject(
          {
            seed: z
              .array(repoRelativePath, { error: 'expected a list of paths' })
              .optional()
              .describe('Gitignored files copied into a new worktree (.env, local settings): paths relative to the repository.'),
          },
          { error: 'expected a mapping with seed' },
        )
        .optional()
        .describe('Settings for toolbox worktree.'),
      egress: egressSchema
        .optional()
        .describe(
          'Where the container may connect (VS Code only; the toolbox CLI ignores it): mode open (default), ask or allowlist, the hosts it may reach (allow), and whether the built-in list (agents, package registries, git remotes) counts (defaults).',
        ),
      /** Removed upstream (every bundled tool is always installed): accepted in any shape, warned about, not used. */
      tools: z.unknown().optional().describe('No longer supported: every tool in the image is always installed. Remove this block.'),
    },
    { error: 'expected a mapping of configuration keys at the top level' },
  )
  .meta({ title: 'Toolbox configuration (.toolbox.yaml, ~/.toolbox.yaml)' });

export type ToolboxFile = z.infer<typeof fileSchema>;
