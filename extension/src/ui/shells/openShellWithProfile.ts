import * as vscode from 'vscode';
import { SETTINGS } from '../../contract/manifest';
import { profileNameProblem } from '../../plan/naming';
import type { ProfileChoice } from '../../plan/profiles';
import type { ProfilesView } from '../../backend/api';
import { pickFolder } from '../folders';
import { plainText } from '../plainText';
import type { CommandServices, ToolboxCommand } from '../commands/toolboxCommand';

/** One row of the profile picker: a profile, no profile, or a new one. */
export interface ProfilePickRow {
  choice: 'profile' | 'none' | 'new';
  /** The profile's name (kind `profile`). */
  profile?: string;
  label: string;
  description?: string;
  detail?: string;
}

/**
 * The picker's rows: each profile under ~/.toolbox/profiles (and the folder's remembered one when
 * its directory is gone), no profile, New Profile…; the folder's current choice first and marked.
 * The names come from the user's own directory and settings, shown as plain text all the same.
 */
export function profilePickRows(view: ProfilesView): ProfilePickRow[] {
  const current = view.folder.profile;
  const names = [...view.existing];
  if (current !== undefined && !names.includes(current)) names.push(current);
  const marked = (yes: boolean) => (yes ? "this folder's profile" : undefined);
  const rows: ProfilePickRow[] = names.map((name) => {
    const exists = view.existing.includes(name);
    const mark = marked(name === current);
    const share = name === current && view.folder.share.length > 0 ? `shares ${view.folder.share.join(', ')} with the default` : undefined;
    return {
      choice: 'profile',
      profile: name,
      label: `$(account) ${plainText(name, 'iconLabel')}`,
      ...(mark || share ? { description: plainText([mark, share].filter(Boolean).join(' · '), 'iconLabel') } : {}),
      detail: plainText(`${view.dir}/${name}${exists ? '' : ' (not made yet: every CLI starts logged out)'}`, 'iconLabel'),
    };
  });
  const none: ProfilePickRow = {
    choice: 'none',
    label: '$(home) No profile',
    ...(current === undefined ? { description: "this folder's profile" } : {}),
    detail: 'The default credentials, under ~/.toolbox',
  };
  const fresh: ProfilePickRow = {
    choice: 'new',
    label: '$(add) New Profile…',
    detail: `A new directory under ${plainText(view.dir, 'iconLabel')}`,
  };
  const currentFirst =
    current === undefined
      ? [none, ...rows]
      : [...rows.filter((r) => r.profile === current), ...rows.filter((r) => r.profile !== current), none];
  return [...currentFirst, fresh];
}

/** Live check of a new profile's name: upstream's refusal, or where its credentials will live. */
export function validateNewProfile(
  name: string,
  existing: readonly string[],
  dir: string,
): string | vscode.InputBoxValidationMessage | undefined {
  const problem = profileNameProblem(name);
  if (problem !== undefined) return problem;
  if (existing.includes(name))
    return { message: `${name} exists: its container uses ${dir}/${name}.`, severity: vscode.InputBoxValidationSeverity.Info };
  return {
    message: `Creates ${dir}/${name} (mode 0700) at the open: a new account, so every CLI in it starts logged out.`,
    severity: vscode.InputBoxValidationSeverity.Info,
  };
}

function sameChoice(a: ProfileChoice, b: ProfileChoice): boolean {
  return a.profile === b.profile && a.share.join(',') === b.share.join(',');
}

function describeChoice(c: ProfileChoice): string {
  return c.profile === undefined ? 'no profile' : `the profile ${c.profile}`;
}

/**
 * `toolbox shell --profile <name>`: opens the folder's container for that profile, whose
 * credentials come from ~/.toolbox/profiles/<name> (its own container, beside the default one).
 * The choice can be remembered for the folder in the user setting toolbox.profileForFolder, where
 * the folder's container cannot write (docs/decisions/0054-profiles-from-the-user-settings.md); the
 * plain Open Toolbox Shell then uses it. A second argument (a profile name, '' for none) opens
 * without asking and remembers nothing, for keybindings and automation.
 */
export const openShellWithProfile: ToolboxCommand = {
  id: 'toolbox.openShellWithProfile',
  run: async (s, arg, preset) => {
    const folder = await pickFolder(arg);
    if (!folder) return undefined;
    let choice: ProfileChoice | undefined;
    if (typeof preset === 'string') {
      if (preset !== '') {
        const problem = profileNameProblem(preset);
        if (problem !== undefined) throw new Error(problem);
      }
      choice = preset === '' ? { share: [] } : { profile: preset, share: [] };
    } else {
      choice = await askProfile(s, folder);
      if (choice === undefined) return undefined;
    }
    const shell = await s.shells.openTerminal({ folder, profile: choice });
    if (shell) s.refresh.noteShellOpened();
    return shell;
  },
};

/** The picker, the name of a new profile, then whether to remember the choice for the folder. */
async function askProfile(s: CommandServices, folder: string): Promise<ProfileChoice | undefined> {
  const view = await s.backend.profiles(folder);
  const picked = await vscode.window.showQuickPick(profilePickRows(view), {
    title: 'Open Toolbox Shell with Profile',
    placeHolder: 'Whose credentials the container gets: a profile keeps its own under ~/.toolbox/profiles',
    matchOnDetail: true,
    ignoreFocusOut: true,
  });
  if (!picked) return undefined;
  let profile: string | undefined;
  if (picked.choice === 'profile') profile = picked.profile;
  else if (picked.choice === 'new') {
    const name = await vscode.window.showInputBox({
      title: 'New Profile',
      prompt: 'The profile’s name: a directory under ~/.toolbox/profiles, such as work or personal.',
      ignoreFocusOut: true,
      validateInput: (text) => validateNewProfile(text, view.existing, view.dir),
    });
    if (name === undefined || profileNameProblem(name) !== undefined) return undefined;
    profile = name;
  }
  // The remembered share tokens go with their profile; another profile starts with none (set them in the setting).
  const choice: ProfileChoice = {
    ...(profile !== undefined ? { profile } : {}),
    share: profile === view.folder.profile ? view.folder.share : [],
  };
  if (sameChoice(choice, view.folder)) return choice;
  const once = { label: plainText(`Open with ${describeChoice(choice)} this time`, 'iconLabel'), remember: false };
  const always = {
    label: plainText(`Open with ${describeChoice(choice)} and remember it for this folder`, 'iconLabel'),
    detail: `Writes the user setting ${SETTINGS.profileForFolder}; Open Toolbox Shell then uses it.`,
    remember: true,
  };
  const how = await vscode.window.showQuickPick([once, always], { title: 'Open Toolbox Shell with Profile', ignoreFocusOut: true });
  if (!how) return undefined;
  if (how.remember) await s.backend.setFolderProfile(folder, choice);
  return choice;
}
