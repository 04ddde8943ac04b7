/**
 * Profiles (upstream's `toolbox shell --profile <name> --share <tokens>`): which account's
 * credentials a folder's container gets. The planner (plan/mounts.ts, plan/naming.ts) does what a
 * profile changes; this file is the choice around it, pure: the user setting that remembers a
 * folder's profile, the refusals the CLI makes before anything is planned, the profiles on disk as
 * a list, and which profile a container has. See docs/decisions/0054-profiles-from-the-user-settings.md.
 */
import { HOST, LABELS } from '../contract/upstream';
import { cleanPath, profileNameProblem } from './naming';
import { mountsRootOf, type InspectedMount } from './posture';

/** A folder's profile: none (the default root, ~/.toolbox), or a name with its share tokens. */
export interface ProfileChoice {
  /** Undefined: no profile. */
  profile?: string;
  /** Tokens whose mounts stay on the default root (upstream's --share); only with a profile. */
  share: string[];
}

/** The keys of one folder's entry in toolbox.profileForFolder. */
export const PROFILE_KEYS = { profile: 'profile', share: 'share' } as const;

/** The most profiles the picker lists (a directory of thousands is not a list anyone reads). */
export const MAX_LISTED_PROFILES = 200;

function record(value: unknown): Record<string, unknown> {
  return value !== null && typeof value === 'object' && !Array.isArray(value) ? (value as Record<string, unknown>) : {};
}

/**
 * The folder's entry of the toolbox.profileForFolder setting, `{"<folder>": {"profile": "work",
 * "share": ["gh"]}}`. A missing or empty profile is none; what is not a string (list) counts as
 * nothing. The name is not checked here: `profileProblem` says what is wrong with it, at the open.
 */
export function folderProfile(setting: unknown, folder: string): ProfileChoice {
  const all = record(setting);
  const entry = record(Object.hasOwn(all, cleanPath(folder)) ? all[cleanPath(folder)] : undefined);
  const profile = entry[PROFILE_KEYS.profile];
  const share = entry[PROFILE_KEYS.share];
  return {
    ...(typeof profile === 'string' && profile !== '' ? { profile } : {}),
    share: Array.isArray(share) ? share.filter((t): t is string => typeof t === 'string' && t.trim() !== '').map((t) => t.trim()) : [],
  };
}

/** The setting's new value with the folder's entry set to `choice` (removed for no profile); the other folders' entries as they were. */
export function settingWithProfile(setting: unknown, folder: string, choice: ProfileChoice): Record<string, unknown> {
  const next = { ...record(setting) };
  delete next[cleanPath(folder)];
  if (choice.profile === undefined) return next;
  return {
    ...next,
    [cleanPath(folder)]: {
      [PROFILE_KEYS.profile]: choice.profile,
      ...(choice.share.length > 0 ? { [PROFILE_KEYS.share]: choice.share } : {}),
    },
  };
}

/**
 * What stops an open with this choice before anything is planned, as upstream's
 * resolveShellProfile (filippolmt/toolbox@2818a99f09e808fc036fd3abae9d1928665d617a cmd/shell.go):
 * a name that cannot be a directory, share tokens without a profile. `where` names the setting the
 * choice came from, for the fix. Share tokens naming no mount are refused by the planner
 * (plan/mounts.ts validateShare), as upstream's mountplan.Merge does.
 */
export function profileProblem(choice: ProfileChoice, where: string): string | undefined {
  if (choice.profile === undefined) {
    return choice.share.length > 0
      ? `${where} lists share tokens (${choice.share.join(', ')}) but no profile: they keep mounts shared with the default profile, so they mean something only with a profile. Add a profile, or remove the share list.`
      : undefined;
  }
  const problem = profileNameProblem(choice.profile);
  return problem === undefined ? undefined : `${problem} (from ${where})`;
}

/** The host directory that holds one profile's credentials: `<home>/.toolbox/profiles/<name>`. */
export function profileRoot(home: string, profile: string): string {
  return cleanPath(`${home}/${HOST.mountsRoot}/${HOST.profilesDir}/${profile}`);
}

/** The host directory every profile is a subdirectory of: `<home>/.toolbox/profiles`. */
export function profilesDir(home: string): string {
  return cleanPath(`${home}/${HOST.mountsRoot}/${HOST.profilesDir}`);
}

/**
 * The profiles the picker offers, from the entries of ~/.toolbox/profiles: directories whose name
 * upstream would take, sorted, at most MAX_LISTED_PROFILES.
 */
export function listedProfiles(entries: ReadonlyArray<{ name: string; directory: boolean }>): string[] {
  return entries
    .filter((e) => e.directory && profileNameProblem(e.name) === undefined)
    .map((e) => e.name)
    .sort((a, b) => a.localeCompare(b))
    .slice(0, MAX_LISTED_PROFILES);
}

/**
 * The profile a container was opened with: our label (LABELS.profile) when it is a name upstream
 * would take, else the profile whose root its default mounts come from (a container the toolbox
 * CLI made with --profile, which labels nothing). Undefined: the default root, or not known.
 */
export function containerProfile(
  labels: Readonly<Record<string, string>> | null | undefined,
  mounts: readonly InspectedMount[] | null | undefined,
  home: string,
): string | undefined {
  const label = labels?.[LABELS.profile];
  if (label !== undefined && profileNameProblem(label) === undefined) return label;
  const root = mountsRootOf(mounts);
  const dir = profilesDir(home);
  if (root === undefined || !root.startsWith(`${dir}/`)) return undefined;
  const name = root.slice(dir.length + 1);
  return profileNameProblem(name) === undefined ? name : undefined;
}
