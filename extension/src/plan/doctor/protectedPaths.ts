/**
 * Run Doctor's protected paths lines (plan/doctor/; docs/decisions/0042): the read-only binds
 * each container has against its folder's plan, and VS Code's git settings that let it run git
 * inside other repositories in the folder (docs/decisions/0059).
 */
import { SETTINGS, VSCODE_GIT_DEFAULTS } from '../../contract/manifest';
import { tildePath } from '../posture';
import { containersOr, oneLine, RECREATE, RECREATE_STEPS, shown } from './shared';
import type { DoctorCheck, FolderFacts, VscodeSettingSource } from './types';

export function protectedChecks(f: FolderFacts, home: string): DoctorCheck[] {
  if (f.protection === undefined) return [];
  const folder = shown(f.folder, home);
  if (!f.protection.enabled) {
    return [
      {
        id: `protected:${f.folder}`,
        status: 'warn',
        title: `Protected paths of ${folder}`,
        detail: `${SETTINGS.protectedPaths} is off: .git/config, hooks, .vscode/ and the other files host programs run are writable in the container.`,
        fix: `Set ${SETTINGS.protectedPaths} to true in your User settings, then ${RECREATE_STEPS}.`,
      },
    ];
  }
  const planned = f.protection.planned;
  const list = (paths: readonly string[]) => {
    const shownPaths = paths.slice(0, 8).map((p) => oneLine(tildePath(p, home), 200));
    return `${shownPaths.join(', ')}${paths.length > 8 ? `, and ${paths.length - 8} more` : ''}`;
  };
  return containersOr(
    f,
    home,
    'protected',
    `Protected paths of ${folder}`,
    (c) => {
      const id = `protected:${c.name}`;
      const title = `Protected paths in ${oneLine(c.name, 200)}`;
      if (!c.protection.labelled) {
        return [
          {
            id,
            status: 'warn',
            title,
            detail:
              'It was made without the protection (before it, by the toolbox CLI, or with it off): the paths host programs run are writable there.',
            fix: RECREATE,
          },
        ];
      }
      if (c.protection.missing.length > 0 || c.protection.replaced.length > 0) {
        const parts = [
          ...(c.protection.missing.length ? [`not read-only there: ${list(c.protection.missing)}`] : []),
          ...(c.protection.replaced.length
            ? [`replaced or removed on the host since it was made (no longer bound): ${list(c.protection.replaced)}`]
            : []),
        ];
        return [{ id, status: 'warn', title, detail: `${parts.join('; ')}.`, fix: RECREATE }];
      }
      return [
        {
          id,
          status: 'pass',
          title,
          detail: `Every protected path the plan has is read-only there (${planned.length}${planned.length ? `: ${list(planned)}` : ''}).`,
        },
      ];
    },
    () => [
      {
        id: `protected:${f.folder}`,
        status: 'info',
        title: `Protected paths of ${folder}`,
        detail: `No container yet; its plan binds ${planned.length} read-only${planned.length ? `: ${list(planned)}` : ''}.`,
      },
    ],
  );
}

const SOURCE_WORDS: Record<VscodeSettingSource, string> = {
  folder: "the folder's .vscode/settings.json",
  workspace: 'the workspace settings',
  user: 'your User settings',
  default: "VS Code's default",
};

/**
 * VS Code's git and repositories inside the folder: one an agent makes in the container (a
 * `git init`, a clone, a submodule it stages) has a config of the container's writing, and
 * VS Code's git runs the programs it names on the host as soon as it runs git there
 * (docs/decisions/0059).
 */
export function vscodeGitChecks(f: FolderFacts, home: string): DoctorCheck[] {
  if (f.vscodeGit === undefined) return [];
  const id = `protected.vscode-git:${f.folder}`;
  const title = `VS Code's git in ${shown(f.folder, home)}`;
  if (f.vscodeGit.length === 0) {
    const defaults = Object.entries(VSCODE_GIT_DEFAULTS)
      .map(([setting, value]) => `${setting} ${String(value)}`)
      .join(', ');
    return [
      {
        id,
        status: 'pass',
        title,
        detail: `VS Code's git keeps to the folder's own repository and never runs git inside another one in it (${defaults}).`,
      },
    ];
  }
  const set = f.vscodeGit.map((o) => `${o.setting} is ${oneLine(o.value, 40)} in ${SOURCE_WORDS[o.source]}`).join('; ');
  const sources = [...new Set(f.vscodeGit.map((o) => SOURCE_WORDS[o.source]))].join(' and ');
  return [
    {
      id,
      status: 'warn',
      title,
      detail: `VS Code's git runs git inside other repositories in the folder on its own (${set}): one an agent makes in the container runs, on this host and without a click, the programs its config names.`,
      fix: `Remove ${f.vscodeGit.map((o) => o.setting).join(' and ')} from ${sources} (Toolbox's defaults keep VS Code's git to the folder's own repository).`,
    },
  ];
}
