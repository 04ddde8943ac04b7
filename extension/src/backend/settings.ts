/**
 * The one adapter over VS Code's configuration and workspace trust, and the extensions running
 * beside Toolbox. Every setting the backend reads goes through here, under its name in SETTINGS
 * (contract/manifest.ts); the services get it handed in, so a test can give them a plain object
 * instead.
 */
import * as vscode from 'vscode';

export type DockerEndpointMode = (typeof DOCKER_ENDPOINT_MODES)[number];
export type DockerEndpointPorts = (typeof DOCKER_ENDPOINT_PORTS)[number];
import {
  SETTINGS,
  VSCODE_GIT_DEFAULTS,
  type BRIDGE_TRANSPORTS,
  type SESSIONS_TRANSPORTS,
  SECCOMP_PROFILES,
  type DOCKER_ENDPOINT_MODES,
  type DOCKER_ENDPOINT_PORTS,
} from '../contract/manifest';
import type { SeccompProfile } from '../contract/types';
import { explicitSetting, explicitSettingScope, narrowingSetting, type SettingScope } from '../config/settingScope';
import { folderTurnOff, settingWithTurnOff, type FolderTurnOff } from '../plan/posture';
import { folderProfile, settingWithProfile, type ProfileChoice } from '../plan/profiles';
import type { EgressMode } from '../plan/egress';
import { folderEgress, isEgressMode, strictestMode, type FolderEgress } from '../plan/egressPolicy';
import type { SeccompSetting } from './api';
import type { VscodeGitOpener } from '../plan/doctor';
import { restrictedModeSupport, TRUST_ENABLED_SETTING, type HostToolsFacts } from '../plan/hostTools';

/**
 * A folder's .vscode/settings.json is in the folder its container can write, so a setting that
 * widens what the container reaches counts from there only as far as it narrows
 * (docs/decisions/0041-project-config-narrows-only.md): toolbox.dockerHost only from the user's
 * settings, toolbox.seccomp from the folder only when it is `default`, and toolbox.peerMessaging
 * from the folder as part of the project side (its `user` value is the host side's).
 */
export interface BackendSettings {
  /** toolbox.dockerHost from the user's (or a machine's Remote) settings, '' when unset. */
  dockerHost(): string;
  /** toolbox.sessions.persist: shells are held in the container and outlive the window. */
  persistSessions(): boolean;
  /** toolbox.runtimeImage.pull: our runtime image is pulled before it is built. */
  pullRuntimeImage(): boolean;
  /** The workspace is trusted (its .toolbox.yaml and workspace settings count). */
  trusted(): boolean;
  /**
   * toolbox.peerMessaging as set for the folder (undefined: not set), and where; `user` is the
   * value in the user's own settings, which the folder's cannot widen without approval.
   */
  peerMessaging(folder: string): { value?: boolean; scope?: SettingScope; user?: boolean };
  /** toolbox.seccomp for the folder; anything unknown is the default (unconfined). */
  seccomp(folder: string): SeccompSetting;
  /**
   * toolbox.dockerEndpoint for the folder: `scoped` unless the user's own settings say
   * `raw-socket` (a workspace or folder value counts only when it is `scoped`, which narrows).
   */
  dockerEndpoint(folder: string): DockerEndpointMode;
  /**
   * toolbox.dockerEndpointPorts from the user's own settings: `any-address` lets the containers a
   * workspace container starts publish ports on every address of this host; anything else is `local`.
   */
  dockerEndpointPorts(): DockerEndpointPorts;
  /**
   * The folder's egress settings (issue 30): toolbox.egress.mode in the User settings, in the
   * folder's or workspace's (trusted only; the policy takes the strictest mode, so they only
   * tighten it), and the folder's toolbox.egressForFolder entry (User settings only).
   */
  egress(folder: string): { userMode?: EgressMode; projectSettingMode?: EgressMode; folder?: FolderEgress };
  /** What Turn Off for This Folder turned off for the folder (toolbox.turnedOffForFolder in the user's settings). */
  turnedOff(folder: string): FolderTurnOff;
  /** Records the folder's turn-offs in the user's settings, where its container cannot write. */
  setTurnedOff(folder: string, off: FolderTurnOff): Promise<void>;
  /**
   * The profile the folder opens with (toolbox.profileForFolder in the user's settings only: a
   * profile is another account's credentials, which the folder's own settings must not choose;
   * docs/decisions/0054-profiles-from-the-user-settings.md).
   */
  profile(folder: string): ProfileChoice;
  /** Records the folder's profile in the user's settings, where its container cannot write. */
  setProfile(folder: string, choice: ProfileChoice): Promise<void>;
  /**
   * toolbox.protectedPaths, from the user's settings only: a workspace or folder value is
   * ignored, since .vscode/settings.json is a file the container could write before the protection
   * (docs/decisions/0042-protected-paths-read-only.md).
   */
  protectedPaths(): boolean;
  /**
   * toolbox.transport.bridge and toolbox.transport.sessions from the user's settings only: the
   * paths Docker Desktop, OrbStack, Colima and WSL take, forced on any engine
   * (docs/decisions/0058-forced-fallback-transports.md).
   */
  transports(): ForcedTransports;
  /**
   * VS Code's own git settings whose value differs from VSCODE_GIT_DEFAULTS, so that its git runs
   * git inside other repositories in the folder on its own, with where each value comes from; []
   * when it keeps to the folder's own (docs/decisions/0059-git-indirections-read-only.md).
   */
  vscodeGitOpeners(folder: string): VscodeGitOpener[];
  /**
   * The window's trust (Restricted Mode or not, and whether Workspace Trust is on at all) and the
   * extensions VS Code runs in it, for naming those that run the folder's files
   * (docs/decisions/0060-host-tools-run-workspace-files.md).
   */
  hostTools(): HostToolsFacts;
}

export interface ForcedTransports {
  bridge: (typeof BRIDGE_TRANSPORTS)[number];
  sessions: (typeof SESSIONS_TRANSPORTS)[number];
}

/** The key under the `toolbox` section (SETTINGS holds full names such as `toolbox.dockerHost`). */
function key(setting: string): string {
  return setting.replace(/^toolbox\./, '');
}

/** In a single-folder window the workspace settings are the folder's .vscode/settings.json. */
function folderScope(scope: SettingScope | undefined): SettingScope | undefined {
  return scope === 'workspace' && !vscode.workspace.workspaceFile ? 'folder' : scope;
}

export function vscodeSettings(): BackendSettings {
  const section = (folder?: string) =>
    vscode.workspace.getConfiguration('toolbox', folder === undefined ? undefined : vscode.Uri.file(folder));
  const trusted = () => vscode.workspace.isTrusted;
  return {
    // A workspace value is ignored: an engine chosen by the project would get every create spec.
    dockerHost: () => section().inspect<string>(key(SETTINGS.dockerHost))?.globalValue ?? '',
    persistSessions: () => section().get<boolean>(key(SETTINGS.sessionsPersist)) ?? true,
    pullRuntimeImage: () => section().get<boolean>(key(SETTINGS.runtimeImagePull), true),
    trusted,
    peerMessaging: (folder) => {
      // Only a value the user set counts; the default must not hide peer_messaging in .toolbox.yaml.
      const inspected = section(folder).inspect<boolean>(key(SETTINGS.peerMessaging));
      const value = explicitSetting(inspected, trusted());
      const scope = folderScope(explicitSettingScope(inspected, trusted()));
      const user = inspected?.globalValue;
      return { ...(value !== undefined ? { value } : {}), ...(scope ? { scope } : {}), ...(user !== undefined ? { user } : {}) };
    },
    seccomp: (folder) => {
      // No .toolbox.yaml key (upstream has none); a workspace or folder value counts only when
      // trusted, and only `default` (Docker's profile), which narrows.
      const inspected = section(folder).inspect<string>(key(SETTINGS.seccomp));
      const { value, scope } = narrowingSetting(inspected, trusted(), (v) => v === 'default');
      if (!(SECCOMP_PROFILES as readonly string[]).includes(value ?? '')) return { profile: 'unconfined' };
      const shown = folderScope(scope);
      return { profile: value as SeccompProfile, ...(shown ? { scope: shown } : {}) };
    },
    dockerEndpoint: (folder) => {
      const inspected = section(folder).inspect<string>(key(SETTINGS.dockerEndpoint));
      const { value } = narrowingSetting(inspected, trusted(), (v) => v === 'scoped');
      return value === 'raw-socket' ? 'raw-socket' : 'scoped';
    },
    dockerEndpointPorts: () =>
      section().inspect<string>(key(SETTINGS.dockerEndpointPorts))?.globalValue === 'any-address' ? 'any-address' : 'local',
    egress: (folder) => {
      const inspected = section(folder).inspect<string>(key(SETTINGS.egressMode));
      const user = inspected?.globalValue;
      const project = trusted() ? [inspected?.workspaceFolderValue, inspected?.workspaceValue].filter(isEgressMode) : [];
      const entry = folderEgress(section().inspect(key(SETTINGS.egressForFolder))?.globalValue, folder);
      return {
        ...(isEgressMode(user) ? { userMode: user } : {}),
        ...(project.length > 0 ? { projectSettingMode: strictestMode(...project) } : {}),
        ...(entry ? { folder: entry } : {}),
      };
    },
    turnedOff: (folder) => folderTurnOff(section().inspect(key(SETTINGS.turnedOffForFolder))?.globalValue, folder),
    setTurnedOff: async (folder, off) => {
      const current = section().inspect(key(SETTINGS.turnedOffForFolder))?.globalValue;
      const next = settingWithTurnOff(current, folder, off);
      await section().update(key(SETTINGS.turnedOffForFolder), next, vscode.ConfigurationTarget.Global);
    },
    profile: (folder) => folderProfile(section().inspect(key(SETTINGS.profileForFolder))?.globalValue, folder),
    setProfile: async (folder, choice) => {
      const current = section().inspect(key(SETTINGS.profileForFolder))?.globalValue;
      await section().update(
        key(SETTINGS.profileForFolder),
        settingWithProfile(current, folder, choice),
        vscode.ConfigurationTarget.Global,
      );
    },
    protectedPaths: () => section().inspect<boolean>(key(SETTINGS.protectedPaths))?.globalValue !== false,
    transports: () => {
      const bridge = section().inspect<string>(key(SETTINGS.bridgeTransport))?.globalValue;
      const sessions = section().inspect<string>(key(SETTINGS.sessionsTransport))?.globalValue;
      return { bridge: bridge === 'tcp' ? 'tcp' : 'auto', sessions: sessions === 'exec' ? 'exec' : 'auto' };
    },
    vscodeGitOpeners: (folder) => {
      // VS Code's git does not run at all in Restricted Mode.
      if (!trusted()) return [];
      const git = vscode.workspace.getConfiguration(undefined, vscode.Uri.file(folder));
      return Object.entries(VSCODE_GIT_DEFAULTS).flatMap(([setting, safe]): VscodeGitOpener[] => {
        const value = git.get<unknown>(setting);
        if (value === safe) return [];
        const scope = explicitSettingScope(git.inspect<unknown>(setting), true);
        return [{ setting, value: JSON.stringify(value) ?? 'unset', source: folderScope(scope) ?? 'default' }];
      });
    },
    hostTools: () => {
      const dot = TRUST_ENABLED_SETTING.lastIndexOf('.');
      const trustEnabled = vscode.workspace
        .getConfiguration(TRUST_ENABLED_SETTING.slice(0, dot))
        .get<boolean>(TRUST_ENABLED_SETTING.slice(dot + 1), true);
      // vscode.extensions.all lists the extensions this window runs: in Restricted Mode, not those VS Code turned off.
      const extensions = vscode.extensions.all.map((e) => ({ id: e.id, restricted: restrictedModeSupport(e.packageJSON) }));
      return { trusted: trusted(), trustEnabled: trustEnabled !== false, extensions };
    },
  };
}
