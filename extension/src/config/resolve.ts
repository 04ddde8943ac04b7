/**
 * Merge the configuration layers into the model the planner consumes. Pure: file texts, the
 * environment and the relevant settings are passed in.
 *
 * Precedence, lowest first: defaults < ~/.toolbox.yaml < project .toolbox.yaml < TOOLBOX_* env
 * < VS Code settings (only `toolbox.peerMessaging`, and only when the user set it somewhere).
 * Merging follows viper's deep merge: mappings (env, shells, shells.<n>.env) merge key by
 * key; lists (mounts, inherit_host_auth, worktree.seed) are replaced whole by the higher layer —
 * a project `mounts:` list does not append to the user file's list, it supersedes it.
 */
import { DEFAULT_CONFIG, type ConfigIssue, type ConfigLayer, type KeyOrigin, type ResolvedConfig, type ToolboxConfig } from './model';
import { SETTINGS } from '../contract/manifest';
import { parseEnvLayer } from './env';
import { isPlainObject, parseConfigFile } from './parse';

export interface ConfigFileText {
  path: string;
  text: string;
}

export interface ResolveInput {
  userFile?: ConfigFileText;
  /** When the workspace is untrusted the text is not needed (and need not have been read). */
  projectFile?: ConfigFileText;
  env: Record<string, string | undefined>;
  /** Only values the user actually set (inspect() showed a non-default value). */
  settings: { peerMessaging?: boolean };
  /**
   * The same, from the user's own settings only (not the folder's .vscode/settings.json, which the
   * container can write): what `hostSide` is resolved with. Default: `settings`.
   */
  hostSettings?: { peerMessaging?: boolean };
  /** VS Code workspace trust. */
  trusted: boolean;
  /** The user's home, for the checks that depend on it (a mounts_root at or above it is refused). */
  home?: string;
}

/** Completes the warning for a ~/.toolbox.yaml that is not YAML. */
export const USER_FILE_SKIPPED =
  'Its settings are not applied until it is fixed (the toolbox CLI skips it too); fix that line, then open the shell again to use them';

export const UNTRUSTED_PROJECT_FILE_MESSAGE =
  'was ignored because this workspace is not trusted: a project .toolbox.yaml can add mounts and ' +
  'environment variables to the container. Toolbox uses only ~/.toolbox.yaml, TOOLBOX_* variables ' +
  'and your settings until you trust the workspace (Workspaces: Manage Workspace Trust).';

/**
 * Every layer merged, and beside it `hostSide`: the same without the project file and with the
 * user's own settings, what the host side alone gives (plan/projectReach.ts compares the two).
 */
export function resolveConfig(input: ResolveInput): ResolvedConfig {
  const resolved = resolveLayers(input);
  const host = resolveLayers({ ...input, projectFile: undefined, settings: input.hostSettings ?? input.settings });
  return { ...resolved, hostSide: { config: host.config, origins: host.origins, peerMessagingFrom: host.peerMessagingFrom } };
}

function resolveLayers(input: ResolveInput): Omit<ResolvedConfig, 'hostSide'> {
  const issues: ConfigIssue[] = [];
  const files: string[] = [];
  const layers: LayerSource[] = [];

  const addFile = (from: ConfigLayer, file: ConfigFileText) => {
    const parsed = parseConfigFile(file.text, file.path, { home: input.home });
    if (from === 'user-file' && parsed.notYaml) {
      // As upstream (config.LoadLayers): a ~/.toolbox.yaml that is not YAML is skipped with a
      // warning and the open carries on; a project file that is not YAML fails the open.
      issues.push(
        ...parsed.issues.map((i) => ({
          ...i,
          severity: 'warning' as const,
          message: `${i.message}. ${USER_FILE_SKIPPED}`,
          fileSkipped: true,
        })),
      );
      return;
    }
    issues.push(...parsed.issues);
    if (parsed.issues.some((i) => i.severity === 'error')) return; // a broken file contributes nothing
    files.push(file.path);
    layers.push({ from, layer: parsed.layer, file: file.path, keyLines: parsed.keyLines });
  };

  if (input.userFile) addFile('user-file', input.userFile);
  const projectFileIgnored = input.projectFile !== undefined && !input.trusted;
  if (input.projectFile && input.trusted) addFile('project-file', input.projectFile);
  if (input.projectFile && projectFileIgnored) {
    issues.push({ severity: 'warning', source: input.projectFile.path, key: '', message: UNTRUSTED_PROJECT_FILE_MESSAGE });
  }
  const env = parseEnvLayer(input.env);
  issues.push(...env.issues);
  layers.push({ from: 'env', layer: env.layer, variables: env.variables });
  if (input.settings.peerMessaging !== undefined) {
    layers.push({ from: 'setting', layer: { peerMessaging: input.settings.peerMessaging } });
  }

  let config = structuredClone(DEFAULT_CONFIG); // callers may mutate their copy
  let peerMessagingFrom: ConfigLayer = 'default';
  const origins: Record<string, KeyOrigin> = {};
  for (const source of layers) {
    config = deepMerge(config, source.layer);
    if (source.layer.peerMessaging !== undefined) peerMessagingFrom = source.from;
    recordOrigins(origins, source);
  }
  return { config: clearEmptyStrings(config), files, peerMessagingFrom, origins, issues, projectFileIgnored };
}

interface LayerSource {
  from: ConfigLayer;
  layer: Partial<ToolboxConfig>;
  /** A file layer: its path and the lines of its keys. */
  file?: string;
  keyLines?: Record<string, number>;
  /** The env layer: the variable of each key. */
  variables?: Partial<Record<keyof ToolboxConfig, string>>;
}

/** The name of each model key in the file (and in `ResolvedConfig.origins`). */
export const FILE_KEYS: Readonly<Record<keyof ToolboxConfig, string>> = {
  shell: 'shell',
  agent: 'agent',
  image: 'image',
  registryMirror: 'registry_mirror',
  pull: 'pull',
  mountsRoot: 'mounts_root',
  bridge: 'bridge',
  proximo: 'proximo',
  managedStatusline: 'managed_statusline',
  imageReclaim: 'image_reclaim',
  peerMessaging: 'peer_messaging',
  env: 'env',
  shells: 'shells',
  mounts: 'mounts',
  inheritHostAuth: 'inherit_host_auth',
  worktreeSeed: 'worktree.seed',
  egress: 'egress',
};

/** The setting that can set a key (only peer messaging has one). */
const SETTING_OF: Partial<Record<keyof ToolboxConfig, string>> = { peerMessaging: SETTINGS.peerMessaging };

/**
 * Credits every key `source` sets to it, following the merge: maps (env, shells) per entry, a
 * list whole (a higher `mounts:` list replaces the lower one, with its entries).
 */
function recordOrigins(origins: Record<string, KeyOrigin>, source: LayerSource): void {
  const { from, layer, file, keyLines = {}, variables = {} } = source;
  for (const [modelKey, value] of Object.entries(layer) as Array<[keyof ToolboxConfig, unknown]>) {
    if (value === undefined) continue;
    const at = (name: string, alias?: string): KeyOrigin => {
      if (from === 'default') return { from };
      if (from === 'env') return { from, variable: variables[modelKey] ?? '' };
      if (from === 'setting') return { from, setting: SETTING_OF[modelKey] ?? '' };
      const line = keyLines[name] ?? (alias === undefined ? undefined : keyLines[alias]);
      return line === undefined ? { from, file: file ?? '' } : { from, file: file ?? '', line };
    };
    const key = FILE_KEYS[modelKey];
    if ((modelKey === 'env' || modelKey === 'shells') && isPlainObject(value)) {
      for (const name of Object.keys(value)) origins[`${key}.${name}`] = at(`${key}.${name}`);
    } else if (modelKey === 'mounts' && Array.isArray(value)) {
      for (const old of Object.keys(origins)) if (old.startsWith('mounts[')) delete origins[old];
      origins.mounts = at('mounts');
      value.forEach((_, i) => (origins[`mounts[${i}]`] = at(`mounts[${i}]`)));
    } else {
      // The deprecated browser_bridge sets bridge when bridge is not written.
      origins[key] = at(key, modelKey === 'bridge' ? 'browser_bridge' : undefined);
    }
  }
}

/** Plain objects merge key by key; anything else (lists, scalars) in `over` replaces `base`. */
function deepMerge<T extends object>(base: T, over: Partial<T>): T {
  const out: Record<string, unknown> = { ...(base as Record<string, unknown>) };
  for (const [key, value] of Object.entries(over)) {
    if (value === undefined) continue;
    const prev = out[key];
    out[key] = isPlainObject(prev) && isPlainObject(value) ? deepMerge(prev, value) : value;
  }
  return out as T;
}

/** Upstream treats an empty string as unset, so `image: ""` in a project file restores the default. */
function clearEmptyStrings(config: ToolboxConfig): ToolboxConfig {
  const out = { ...config };
  for (const key of ['image', 'registryMirror', 'mountsRoot'] as const) if (out[key] === '') delete out[key];
  return out;
}
