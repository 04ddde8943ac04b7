/**
 * The resolved configuration: what the planner consumes after every layer (defaults,
 * ~/.toolbox.yaml, the nearest .toolbox.yaml, TOOLBOX_* env, VS Code settings) is merged and
 * validated. Plain data, no I/O. The YAML keys are upstream's snake_case; this model is camelCase.
 */

import type { EGRESS_MODES } from '../contract/egress';

export type PullPolicy = 'auto' | 'always' | 'never';

/**
 * One entry of the `mounts:` list: a patch of a default mount (known name), a replacement or a new
 * one (with a target). Without a name (undefined or empty) it is a new mount that no later entry
 * can address, as upstream's anonymous mounts.
 */
export interface MountOverride {
  name?: string;
  source?: string;
  target?: string;
  readonly?: boolean;
  createIfMissing?: boolean;
  /** Host path bound instead when the source does not exist (upstream's `symlink_from`). */
  symlinkFrom?: string;
  disabled?: boolean;
}

export interface ShellConfig {
  /** Absolute host path bound at the same path in the container. */
  path?: string;
  env: Record<string, string>;
}

export interface ToolboxConfig {
  shell: 'zsh';
  agent?: 'claude' | 'codex';
  /** Unset: the extension's own runtime image. Wins over registryMirror. */
  image?: string;
  registryMirror?: string;
  pull: PullPolicy;
  /** Raw as written: absolute, or `~/sub`. Unset: `~/.toolbox`. */
  mountsRoot?: string;
  /** Tri-state: undefined means on. */
  bridge?: boolean;
  /** Tri-state: undefined means on when proximo's CA exists on the host. */
  proximo?: boolean;
  managedStatusline?: boolean;
  imageReclaim?: boolean;
  peerMessaging: boolean;
  env: Record<string, string>;
  shells: Record<string, ShellConfig>;
  mounts: MountOverride[];
  inheritHostAuth: string[];
  /** `worktree.seed`: repo-relative, gitignored paths copied into a new worktree. */
  worktreeSeed?: string[];
  /** `egress:` (VS Code only): where the container may connect (plan/egress.ts). */
  egress?: EgressConfig;
}

/** `egress:` as written: each key optional, a higher layer's key replaces a lower one's (the `allow` list whole). */
export interface EgressConfig {
  mode?: (typeof EGRESS_MODES)[number];
  allow?: string[];
  defaults?: boolean;
}

export const DEFAULT_CONFIG: ToolboxConfig = {
  shell: 'zsh',
  pull: 'auto',
  peerMessaging: true,
  env: {},
  shells: {},
  mounts: [],
  inheritHostAuth: [],
};

/** Where a resolved value came from, for messages and the tree. */
export type ConfigLayer = 'default' | 'user-file' | 'project-file' | 'env' | 'setting';

/**
 * The layer that set one resolved key, for Show Resolved Configuration (upstream's
 * `config show --origin`). A key with no entry in `ResolvedConfig.origins` has its default.
 */
export type KeyOrigin =
  | { from: 'default' }
  /** `line`: 1-based, of the key in that file. */
  | { from: 'user-file' | 'project-file'; file: string; line?: number }
  | { from: 'env'; variable: string }
  | { from: 'setting'; setting: string };

/** A stretch of a file's text: 1-based lines and columns, the end exclusive. */
export interface TextSpan {
  line: number;
  column: number;
  endLine: number;
  endColumn: number;
}

/** A problem found while reading one layer: unknown keys are warnings, bad values errors. */
export interface ConfigIssue {
  severity: 'error' | 'warning';
  /** Absolute file path, `environment`, or `settings`. */
  source: string;
  /** Key path as written in the file, e.g. `mounts[2].target`, or the env variable name. */
  key: string;
  /** 1-based line in the file, when the source is a file. */
  line?: number;
  /** What the issue is about in the file (the key, or its value), for the editor's diagnostics. */
  span?: TextSpan;
  message: string;
  /** The key is not one the file may have: ignored, and said at open (ui/config/unknownKeyNotice.ts). */
  unknownKey?: boolean;
  /** An unknown key's likely meaning ("did you mean"): the key written in its place fixes it. */
  suggestion?: string;
  /** The whole file was skipped (not the user's, writable by others): worth telling the user, not just the log. */
  fileSkipped?: boolean;
}

/** One thing the project side asks for beyond what the host side gives (plan/projectReach.ts). */
export interface ConfigWidening {
  /** The key as the file names it: `image`, `mounts`, `inherit_host_auth`, `shells.dev`, … */
  key: string;
  /** What it would add, one line of plain text; every value from the file quoted and bounded. */
  adds: string;
  /** Where the project side set it. */
  origin?: KeyOrigin;
}

/** What the project side asks beyond the host side, and whether the user approved exactly that for the folder. */
export interface ProjectWidening {
  items: ConfigWidening[];
  /** The hash of the normalized widening: a consent is given for this, and a changed widening has another. */
  hash: string;
  /** True: applied (the user approved this hash for the folder); false: left out of `config`. */
  approved: boolean;
}

/** A config as the host side alone gives it, with where each key came from. */
export interface LayeredConfig {
  config: ToolboxConfig;
  origins: Record<string, KeyOrigin>;
  peerMessagingFrom: ConfigLayer;
}

export interface ResolvedConfig {
  config: ToolboxConfig;
  /** Files that were read, lowest precedence first. */
  files: string[];
  /** Which layer set peerMessaging, for the UI ("off by .toolbox.yaml"). */
  peerMessagingFrom: ConfigLayer;
  /**
   * Where each key that is not at its default was set, by its name in the file: `pull`,
   * `worktree.seed`, one per entry of a map (`env.FOO`, `shells.dev`), and `mounts` with one per
   * entry of the list that won (`mounts[0]`, …).
   */
  origins: Record<string, KeyOrigin>;
  issues: ConfigIssue[];
  /** True when a project .toolbox.yaml exists but was ignored (untrusted workspace). */
  projectFileIgnored: boolean;
  /**
   * The same layers without the project file and with the user's own settings only (not the
   * folder's): what the host side gives. The project side may narrow it; what it widens needs the
   * user's approval (plan/projectReach.ts).
   */
  hostSide: LayeredConfig;
  /** What the project side asks beyond `hostSide`, once judged (plan/projectReach.ts gateProjectConfig). */
  widening?: ProjectWidening;
}
