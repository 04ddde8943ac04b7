/**
 * A folder's configuration as the views and commands read and change it: the resolved config
 * (config/files.ts), the peer-messaging and seccomp choices with where they come from, the
 * named shells, and the edits to ~/.toolbox.yaml and the project file (each checked before it
 * is written). Reads VS Code settings only through BackendSettings.
 */
import { lstatSync, promises as fsp } from 'node:fs';
import { join } from 'node:path';
import { setPeerMessaging, setShellPath } from '../config/edit';
import { configProblems, type ConfigProblem } from '../config/diagnostics';
import { PEER_MESSAGING_ENV } from '../config/env';
import {
  findProjectConfig,
  loadConfig,
  nodeConfigFs,
  pinUserPeerMessaging,
  processOwner,
  writeConfigFile,
  type ConfigFs,
} from '../config/files';
import type { ResolvedConfig } from '../config/model';
import { formatIssue, parseConfigFile } from '../config/parse';
import type { SettingScope } from '../config/settingScope';
import { renderResolvedConfig } from '../config/showConfig';
import { HOST } from '../contract/upstream';
import { SETTINGS } from '../contract/manifest';
import type { ObjectNames } from '../contract/types';
import { patchableMountNames, RETIRED_MOUNTS, validateWorkspaceBindPath } from '../plan/mounts';
import { gateProjectConfig } from '../plan/projectReach';
import { listConfiguredShells, shellKeyIn, type PathKind } from '../plan/namedShell';
import { cleanPath, namedShellName } from '../plan/naming';
import { reachTitle, tildePath, turnOffChange, withTurnOff, type HostReach } from '../plan/posture';
import { listedProfiles, MAX_LISTED_PROFILES, profileProblem, profilesDir, type ProfileChoice } from '../plan/profiles';
import type {
  ConfigService,
  NamedShellCreatePlan,
  NamedShellEntry,
  PendingProjectConfig,
  PeerSetting,
  PeerSettingSource,
  ProfilesView,
  SeccompSetting,
  TurnOffPlan,
} from './api';
import type { EngineConnector } from './connection';
import type { ProjectConsents } from './projectConsent';
import type { BackendSettings } from './settings';

export interface FolderConfigDeps {
  names: ObjectNames;
  home: () => string;
  settings: BackendSettings;
  connector: EngineConnector;
  /** The user's approvals of what a project config asks beyond their own (outside the folder). */
  consents: ProjectConsents;
  log: (line: string) => void;
}

/** What is at `path`, a final symlink not followed (upstream's named-shell check uses Lstat). */
export function lstatKind(path: string): PathKind {
  try {
    const st = lstatSync(path);
    return st.isSymbolicLink() ? 'symlink' : st.isDirectory() ? 'directory' : 'file';
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return 'missing';
    throw new Error(`stat ${path}: ${(err as Error).message}`, { cause: err });
  }
}

/** A config file's text before an edit (undefined when missing or empty); a file we may not read throws. */
async function readForEdit(path: string, home: string): Promise<{ exists: boolean; text?: string }> {
  const read = await nodeConfigFs.read(path, processOwner());
  if (read.kind === 'refused') throw new Error(`${tildePath(path, home)} ${read.why}`);
  return { exists: read.kind !== 'missing', ...(read.kind === 'text' ? { text: read.text } : {}) };
}

/** Refuses an edited text that would not load, before anything is written. */
function checkEdit(text: string, file: string, home: string): void {
  const check = parseConfigFile(text, file, { home }).issues.find((i) => i.severity === 'error');
  if (check) throw new Error(`The edit would break ${tildePath(file, home)} (${formatIssue(check, home)}); nothing was written.`);
}

/** An edit function's refusal as the sentence the user reads. */
function editRefused(file: string, home: string, err: unknown): Error {
  return new Error(`${tildePath(file, home)} was not changed: ${(err as Error).message}.`, { cause: err });
}

const UNTRUSTED = 'This workspace is not trusted, so its .toolbox.yaml is ignored';

/** At most this many lines of a pending change are listed (a file can ask for thousands of mounts). */
export const PENDING_ITEMS_MAX = 100;

/** Where a folder's own VS Code settings live (the container can write it). */
const FOLDER_SETTINGS_FILE = '.vscode/settings.json';

export class FolderConfig implements ConfigService {
  constructor(private readonly deps: FolderConfigDeps) {}

  /**
   * The folder's resolved config as an open uses it: Turn Off for This Folder over every layer,
   * and what the project side (its .toolbox.yaml, its .vscode/settings.json) asks beyond the user's
   * own config only when the user approved exactly that for the folder, or for `alsoApprovedIn`
   * (a worktree's repository); otherwise without it, reported in `widening`
   * (docs/decisions/0041-project-config-narrows-only.md). `fs` reads the files elsewhere (a New
   * Agent Worktree's checkout to come, read from git: the same rule applies).
   */
  async read(folder: string, fs?: ConfigFs, alsoApprovedIn?: string): Promise<ResolvedConfig> {
    const { settings, consents } = this.deps;
    const home = this.deps.home();
    const peer = settings.peerMessaging(folder);
    const resolved = await loadConfig({
      folder,
      home,
      env: process.env,
      settings: { peerMessaging: peer.value },
      hostSettings: { peerMessaging: peer.user },
      trusted: settings.trusted(),
      ...(fs ? { fs } : {}),
    });
    return gateProjectConfig(resolved, {
      home,
      folder,
      turnedOff: settings.turnedOff(folder),
      turnedOffOrigin: { from: 'setting', setting: SETTINGS.turnedOffForFolder },
      approved: (hash) => consents.approved(folder, hash) || (alsoApprovedIn !== undefined && consents.approved(alsoApprovedIn, hash)),
    });
  }

  /** Where the folder's peer-messaging setting that decides was set; the user's own when the folder's was refused. */
  private peerScope(folder: string, resolved: ResolvedConfig): SettingScope | undefined {
    const refused = resolved.widening?.approved === false && resolved.widening.items.some((i) => i.key === 'peer_messaging');
    return refused ? 'user' : this.deps.settings.peerMessaging(folder).scope;
  }

  async resolvedConfigText(folder: string): Promise<string> {
    const resolved = await this.read(folder);
    const scope = this.peerScope(folder, resolved);
    return renderResolvedConfig(resolved, {
      folder,
      home: this.deps.home(),
      settingScopes: { ...(scope ? { [SETTINGS.peerMessaging]: scope } : {}), [SETTINGS.turnedOffForFolder]: 'user' },
    });
  }

  async approveProjectConfig(folder: string, hash: string): Promise<void> {
    await this.deps.consents.approve(folder, hash);
    this.deps.log(
      `Approved what the project configuration of ${folder} asks beyond your own (${hash.slice(0, 12)}); the next open applies it.`,
    );
  }

  /** What the project side asks that `resolved` left out, for the notification; undefined when nothing was. */
  pendingProjectConfig(folder: string, resolved: ResolvedConfig): PendingProjectConfig | undefined {
    const widening = resolved.widening;
    if (widening === undefined || widening.approved) return undefined;
    const sources = new Set<string>();
    for (const item of widening.items) {
      if (item.origin?.from === 'project-file') sources.add(HOST.projectConfig);
      if (item.origin?.from === 'setting') sources.add(FOLDER_SETTINGS_FILE);
    }
    const keys = [...new Set(widening.items.map((i) => i.key.split('.')[0]!))];
    const items = widening.items.slice(0, PENDING_ITEMS_MAX).map((i) => i.adds);
    if (widening.items.length > PENDING_ITEMS_MAX) items.push(`… and ${widening.items.length - PENDING_ITEMS_MAX} more`);
    return { folder, hash: widening.hash, sources: [...sources].sort(), keys, items };
  }

  async configProblems(file: string, text: string): Promise<ConfigProblem[]> {
    return configProblems(text, file, { home: this.deps.home(), knownMounts: patchableMountNames(), retiredMounts: RETIRED_MOUNTS });
  }

  async seccompSetting(folder: string): Promise<SeccompSetting> {
    return this.deps.settings.seccomp(folder);
  }

  /**
   * The profile the folder opens with (toolbox.profileForFolder), refused as the CLI refuses its
   * flags (plan/profiles.ts profileProblem) before anything is planned.
   */
  folderProfile(folder: string): ProfileChoice {
    const choice = this.deps.settings.profile(folder);
    const problem = profileProblem(choice, `the user setting ${SETTINGS.profileForFolder} for ${folder}`);
    if (problem !== undefined) throw new Error(problem);
    return choice;
  }

  async profiles(folder: string): Promise<ProfilesView> {
    const dir = profilesDir(this.deps.home());
    const entries: Array<{ name: string; directory: boolean }> = [];
    try {
      // Bounded: the picker lists MAX_LISTED_PROFILES; a few times that many entries are read at most.
      const handle = await fsp.opendir(dir);
      for await (const e of handle) {
        entries.push({ name: e.name, directory: e.isDirectory() });
        if (entries.length >= MAX_LISTED_PROFILES * 4) break;
      }
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'ENOENT')
        throw new Error(`Cannot list ${dir}: ${(err as Error).message}`, { cause: err });
    }
    return { dir, existing: listedProfiles(entries), folder: this.deps.settings.profile(folder) };
  }

  async setFolderProfile(folder: string, choice: ProfileChoice): Promise<void> {
    const problem = profileProblem(choice, 'the profile chosen');
    if (problem !== undefined) throw new Error(problem);
    await this.deps.settings.setProfile(cleanPath(folder), choice);
    this.deps.log(
      choice.profile === undefined
        ? `${folder} opens without a profile again (removed from the user setting ${SETTINGS.profileForFolder}).`
        : `${folder} opens with the profile ${choice.profile} (the user setting ${SETTINGS.profileForFolder}).`,
    );
  }

  /** toolbox.protectedPaths (user settings only). */
  protectedPaths(): boolean {
    return this.deps.settings.protectedPaths();
  }

  async peerWanted(folder: string): Promise<boolean> {
    return (await this.read(folder)).config.peerMessaging;
  }

  async peerSetting(folder: string): Promise<PeerSetting> {
    const home = this.deps.home();
    const resolved = await this.read(folder);
    const projectFile = findProjectConfig(folder, home);
    const source = ((): PeerSettingSource => {
      switch (resolved.peerMessagingFrom) {
        case 'default':
          return { from: 'default' };
        case 'user-file':
          return { from: 'user-file', file: join(home, HOST.userConfig) };
        case 'project-file':
          return { from: 'project-file', file: projectFile ?? join(folder, HOST.projectConfig) };
        case 'env':
          return { from: 'env', variable: PEER_MESSAGING_ENV };
        case 'setting':
          return { from: 'setting', scope: this.peerScope(folder, resolved) ?? 'user' };
      }
    })();
    return {
      on: resolved.config.peerMessaging,
      source,
      ...(projectFile ? { projectFile } : {}),
      projectFileUsable: this.deps.settings.trusted(),
    };
  }

  async writeProjectPeerMessaging(folder: string, on: boolean): Promise<string> {
    const home = this.deps.home();
    if (!this.deps.settings.trusted()) {
      throw new Error(`${UNTRUSTED}. Trust the workspace first (Workspaces: Manage Workspace Trust).`);
    }
    const existing = findProjectConfig(folder, home);
    const file = existing ?? join(folder, HOST.projectConfig);
    const before = existing === undefined ? undefined : (await readForEdit(existing, home)).text;
    let text: string;
    try {
      text = setPeerMessaging(before ?? '', on, 'Peer messaging for this folder, set in the Toolbox view (the toolbox CLI reads it too).');
    } catch (err) {
      throw editRefused(file, home, err);
    }
    checkEdit(text, file, home);
    await writeConfigFile(file, text, before);
    this.deps.log(`Peer messaging ${on ? 'on' : 'off'} for ${folder}: wrote peer_messaging: ${on} into ${file}.`);
    return file;
  }

  async pinUserPeerMessaging(on: boolean): Promise<string> {
    const file = await pinUserPeerMessaging(
      this.deps.home(),
      on,
      'Peer messaging, pinned from Toolbox for VS Code so the toolbox CLI and the editor open the same containers.',
    );
    this.deps.log(`Peer messaging pinned ${on ? 'on' : 'off'} for both the CLI and the editor: wrote peer_messaging: ${on} into ${file}.`);
    return file;
  }

  async namedShells(folder: string): Promise<NamedShellEntry[]> {
    return listConfiguredShells((await this.read(folder)).config.shells);
  }

  async prepareNamedShellCreate(folder: string, name: string, path: string): Promise<NamedShellCreatePlan> {
    const home = this.deps.home();
    // The CLI's name rules (throws its refusal), then an absolute path Docker can bind.
    namedShellName(name, { peer: false }, this.deps.names);
    // The shell would be refused on an engine on another machine: say so before writing anything
    // (with no engine at all the entry is still worth writing, so only a known remote one stops it).
    await this.deps.connector.refuseIfRemote(path.trim() || folder, await this.deps.connector.locateOrLocal());
    const wanted = path.trim();
    if (!wanted.startsWith('/')) throw new Error(`The folder "${wanted}" is not an absolute path. Give its full path, starting with /.`);
    const target = cleanPath(wanted);
    validateWorkspaceBindPath(target);
    const kind = lstatKind(target);
    if (kind === 'symlink') {
      throw new Error(`${target} is a symbolic link; the toolbox CLI refuses those for a named shell. Give the folder it points to.`);
    }
    if (kind === 'file') throw new Error(`${target} is a file, not a folder.`);
    const file = join(home, HOST.userConfig);
    const { exists, text: before } = await readForEdit(file, home);
    let edit: { text: string; key: string };
    try {
      edit = setShellPath(exists ? (before ?? '') : undefined, (keys) => shellKeyIn(keys, name), target);
    } catch (err) {
      throw editRefused(file, home, err);
    }
    checkEdit(edit.text, file, home);
    return {
      file,
      creates: !exists,
      key: edit.key,
      path: target,
      block: `shells:\n  ${edit.key}:\n    path: ${target}`,
      createsFolder: kind === 'missing',
      apply: async () => {
        // The folder first: ~/.toolbox.yaml never names a folder that could not be made.
        if (kind === 'missing') await fsp.mkdir(target, { recursive: true, mode: 0o755 });
        await writeConfigFile(file, edit.text, before);
        this.deps.log(`Named shell "${edit.key}" (${folder}): wrote shells.${edit.key}.path: ${target} into ${file}.`);
      },
    };
  }

  /**
   * Turn Off for This Folder, kept in the user's settings (toolbox.turnedOffForFolder), where the
   * folder's container cannot undo it, and applied over every config file (read above); no
   * project file is edited (docs/decisions/0041-project-config-narrows-only.md).
   */
  async prepareTurnOff(folder: string, reach: HostReach): Promise<TurnOffPlan> {
    const home = this.deps.home();
    const what = reachTitle(reach, home);
    const resolved = await this.read(folder);
    const broken = resolved.issues.find((i) => i.severity === 'error');
    if (broken) throw new Error(`Fix the configuration first: ${formatIssue(broken, home)}`);
    const change = turnOffChange(reach, resolved.config);
    if (typeof change === 'string') throw new Error(change);
    const { settings } = this.deps;
    return {
      setting: SETTINGS.turnedOffForFolder,
      alreadyOff: withTurnOff(settings.turnedOff(folder), change) === undefined,
      apply: async () => {
        // Read again: another window may have turned something else off meanwhile.
        const next = withTurnOff(settings.turnedOff(folder), change);
        if (next === undefined) return;
        await settings.setTurnedOff(folder, next);
        const which = change.kind === 'disable-mount' ? `mount ${change.name}` : `inherit_host_auth key ${change.key}`;
        this.deps.log(
          `Turned off the ${what} (${tildePath(reach.source, home)}) for ${folder}: the ${which} in the user setting ${SETTINGS.turnedOffForFolder}.`,
        );
      },
    };
  }
}
