/** A folder's settings as the views and commands read and change them (peer messaging, seccomp, Turn Off). */
import type { SeccompProfile } from '../../contract/types';
import type { SettingScope } from '../../config/settingScope';

/** A `.toolbox.yaml` edit ready to write (ToolboxBackend.prepareTurnOff). */
export interface TurnOffPlan {
  /** The file written: the project file that applies to the folder, or a new one in it. */
  file: string;
  /** The file does not exist yet. */
  creates: boolean;
  /** The file sits in a parent directory, so the change applies to the other folders under it too. */
  sharedWith?: string;
  /** The file already turns it off: the container predates the change. Nothing to write. */
  alreadyOff: boolean;
  /** Writes the file, unless it changed since it was read. */
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

/** A folder's toolbox.seccomp now; `scope` is where it is set, undefined for the default (unconfined). */
export interface SeccompSetting {
  profile: SeccompProfile;
  scope?: SettingScope;
}
