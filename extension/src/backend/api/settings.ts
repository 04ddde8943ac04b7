/** A folder's settings as the views and commands read and change them (peer messaging, seccomp, Turn Off). */
import type { SeccompProfile } from '../../contract/types';
import type { ProfileChoice } from '../../plan/profiles';
import type { SettingScope } from '../../config/settingScope';

/**
 * Turn Off for This Folder, ready to record (ToolboxBackend.prepareTurnOff): in the user's
 * settings, where the folder's container cannot undo it (docs/decisions/0041).
 */
export interface TurnOffPlan {
  /** The user setting it is kept in (toolbox.turnedOffForFolder). */
  setting: string;
  /** The setting already turns it off: the container predates the change. Nothing to write. */
  alreadyOff: boolean;
  /** Records it in the user's settings. */
  apply(): Promise<void>;
}

/** Where a folder's peer-messaging choice comes from (the highest layer that sets it, config/resolve.ts). */
export type PeerSettingSource =
  | { from: 'default' }
  | { from: 'user-file'; file: string }
  | { from: 'project-file'; file: string }
  | { from: 'env'; variable: string }
  | { from: 'setting'; scope: SettingScope };

/** A folder's peer-messaging choice now, and where it comes from. */
export interface PeerSetting {
  on: boolean;
  source: PeerSettingSource;
  /** The project .toolbox.yaml that applies to the folder (maybe in a parent directory), if any. */
  projectFile?: string;
  /** A project .toolbox.yaml can be read and written (the workspace is trusted). */
  projectFileUsable: boolean;
}

/** Open Toolbox Shell with Profile's choices: what ~/.toolbox/profiles holds and the folder's remembered profile. */
export interface ProfilesView {
  /** The profiles directory (`~/.toolbox/profiles`), for the picker's words. */
  dir: string;
  /** Its subdirectories whose names the CLI takes, sorted (plan/profiles.ts listedProfiles). */
  existing: string[];
  /** The folder's entry of toolbox.profileForFolder (no profile: the default root). */
  folder: ProfileChoice;
}

/** A folder's toolbox.seccomp now; `scope` is where it is set, undefined for the default (unconfined). */
export interface SeccompSetting {
  profile: SeccompProfile;
  scope?: SettingScope;
}
