/**
 * The one adapter over VS Code's configuration and workspace trust. Every setting the backend
 * reads goes through here, under its name in SETTINGS (contract/manifest.ts); the services get
 * it handed in, so a test can give them a plain object instead.
 */
import * as vscode from 'vscode';
import { SECCOMP_PROFILES } from '../contract/constants';
import { SETTINGS } from '../contract/manifest';
import type { SeccompProfile } from '../contract/types';
import { explicitSetting, explicitSettingScope, type SettingScope } from '../config/settingScope';
import type { SeccompSetting } from './api';

export interface BackendSettings {
  /** toolbox.dockerHost ('' when unset). */
  dockerHost(): string;
  /** toolbox.sessions.persist: shells are held in the container and outlive the window. */
  persistSessions(): boolean;
  /** toolbox.runtimeImage.pull: our runtime image is pulled before it is built. */
  pullRuntimeImage(): boolean;
  /** The workspace is trusted (its .toolbox.yaml and workspace settings count). */
  trusted(): boolean;
  /** toolbox.peerMessaging as the user set it for the folder (undefined: not set), and where. */
  peerMessaging(folder: string): { value?: boolean; scope?: SettingScope };
  /** toolbox.seccomp for the folder; anything unknown is the default (unconfined). */
  seccomp(folder: string): SeccompSetting;
  /**
   * toolbox.protectedPaths, from the user's settings only: a workspace or folder value is
   * ignored, since .vscode/settings.json is a file the container could write before the protection
   * (docs/decisions/0042-protected-paths-read-only.md).
   */
  protectedPaths(): boolean;
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
    dockerHost: () => section().get<string>(key(SETTINGS.dockerHost)) ?? '',
    persistSessions: () => section().get<boolean>(key(SETTINGS.sessionsPersist)) ?? true,
    pullRuntimeImage: () => section().get<boolean>(key(SETTINGS.runtimeImagePull), true),
    trusted,
    peerMessaging: (folder) => {
      // Only a value the user set counts; the default must not hide peer_messaging in .toolbox.yaml.
      const inspected = section(folder).inspect<boolean>(key(SETTINGS.peerMessaging));
      const value = explicitSetting(inspected, trusted());
      const scope = folderScope(explicitSettingScope(inspected, trusted()));
      return { ...(value !== undefined ? { value } : {}), ...(scope ? { scope } : {}) };
    },
    seccomp: (folder) => {
      // No .toolbox.yaml key (upstream has none); workspace and folder values count only when trusted.
      const inspected = section(folder).inspect<string>(key(SETTINGS.seccomp));
      const value = explicitSetting(inspected, trusted());
      if (!(SECCOMP_PROFILES as readonly string[]).includes(value ?? '')) return { profile: 'unconfined' };
      const scope = folderScope(explicitSettingScope(inspected, trusted()));
      return { profile: value as SeccompProfile, ...(scope ? { scope } : {}) };
    },
    protectedPaths: () => section().inspect<boolean>(key(SETTINGS.protectedPaths))?.globalValue !== false,
  };
}
