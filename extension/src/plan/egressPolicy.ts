/**
 * A folder's egress policy from what the user set (issue 30,
 * docs/decisions/0056-egress-through-a-host-proxy.md): the mode is the strictest of every place
 * that names one, so a project file or a folder setting (which the container can write) can only
 * tighten it; the rules are the built-in list, the folder's git remotes, the config's `egress.allow`
 * (the project's part only once approved: plan/projectReach.ts) and the folder's own entry in the
 * User settings. Pure: the backend (backend/egress.ts) reads the settings, the config and the remotes.
 */
import { EGRESS_MODES } from '../contract/egress';
import type { EgressConfig } from '../config/model';
import {
  BUILTIN_EGRESS_RULES,
  parseEgressRule,
  type EgressMode,
  type EgressPolicy,
  type EgressRule,
  type EgressRuleSource,
} from './egress';

/** A folder's entry in toolbox.egressForFolder, as read (anything malformed left out). */
export interface FolderEgress {
  mode?: EgressMode;
  allow: string[];
}

export interface EgressInputs {
  /** The config that applies to the folder (`egress:` of ~/.toolbox.yaml and the project file, narrowed). */
  config?: EgressConfig;
  /** toolbox.egress.mode in the User settings. */
  userMode?: EgressMode;
  /** toolbox.egress.mode in the folder's or workspace's settings (trusted workspaces only). */
  projectSettingMode?: EgressMode;
  /** toolbox.egressForFolder[folder] in the User settings. */
  folder?: FolderEgress;
  /** Hosts of the folder's git remotes (its checked .git/config). */
  remoteHosts?: readonly string[];
  /** `host:port` answered "Allow for This Folder" in this window, before the setting write is read back. */
  answered?: readonly string[];
}

export function isEgressMode(value: unknown): value is EgressMode {
  return typeof value === 'string' && (EGRESS_MODES as readonly string[]).includes(value);
}

/** The strictest of the modes given (open < ask < allowlist); none given: open. */
export function strictestMode(...modes: ReadonlyArray<EgressMode | undefined>): EgressMode {
  let out: EgressMode = 'open';
  for (const m of modes) if (m !== undefined && EGRESS_MODES.indexOf(m) > EGRESS_MODES.indexOf(out)) out = m;
  return out;
}

/** The folder's mode alone (no rules): whether its next container gets a policy. */
export function egressModeOf(inputs: Pick<EgressInputs, 'config' | 'userMode' | 'projectSettingMode' | 'folder'>): EgressMode {
  return strictestMode(inputs.config?.mode, inputs.userMode, inputs.projectSettingMode, inputs.folder?.mode);
}

/** The policy and the entries that could not be read as rules (each a sentence naming where it is). */
export function egressPolicyOf(inputs: EgressInputs): { policy: EgressPolicy; problems: string[] } {
  const rules: EgressRule[] = [];
  const problems: string[] = [];
  const add = (text: string, source: EgressRuleSource, where: string) => {
    const parsed = parseEgressRule(text, source);
    if ('error' in parsed) problems.push(`${where}: ${JSON.stringify(text)}: ${parsed.error}`);
    else rules.push(parsed);
  };
  if (inputs.config?.defaults !== false) {
    rules.push(...BUILTIN_EGRESS_RULES);
    for (const host of inputs.remoteHosts ?? []) {
      // A remote is fetched over HTTPS or SSH; the URL's own port is not kept by the host list.
      add(`${host}:443`, 'remote', 'a git remote');
      add(`${host}:22`, 'remote', 'a git remote');
    }
  }
  for (const text of inputs.config?.allow ?? []) add(text, 'user', 'egress.allow');
  for (const text of inputs.folder?.allow ?? []) add(text, 'folder', 'toolbox.egressForFolder');
  for (const text of inputs.answered ?? []) add(text, 'folder', 'an answer in VS Code');
  return { policy: { mode: egressModeOf(inputs), rules }, problems };
}

/** The folder's entry of a toolbox.egressForFolder value (the setting as stored; anything else ignored). */
export function folderEgress(value: unknown, folder: string): FolderEgress | undefined {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return undefined;
  const entry = (value as Record<string, unknown>)[folder];
  if (typeof entry !== 'object' || entry === null || Array.isArray(entry)) return undefined;
  const { mode, allow } = entry as Record<string, unknown>;
  return {
    ...(isEgressMode(mode) ? { mode } : {}),
    allow: Array.isArray(allow) ? allow.filter((a): a is string => typeof a === 'string') : [],
  };
}
