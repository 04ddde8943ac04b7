/**
 * Which VS Code setting value counts, and where it was set: folder over workspace over user, and
 * only the user's own in an untrusted workspace. No dependencies, so the activation bundle can
 * use it (backend/settings.ts).
 */
/** The shape of VS Code's `WorkspaceConfiguration.inspect()` result that matters here. */
export interface InspectedSetting<T> {
  globalValue?: T;
  workspaceValue?: T;
  workspaceFolderValue?: T;
}

/**
 * The value the user actually set for a setting (folder over workspace over user), or undefined
 * when only the default applies, so the files keep their say. Workspace and folder values live in
 * the project's .vscode/settings.json: in an untrusted workspace they are not honoured, like the
 * project's .toolbox.yaml.
 */
export function explicitSetting<T>(inspected: InspectedSetting<T> | undefined, trusted: boolean): T | undefined {
  if (!inspected) return undefined;
  if (trusted) return inspected.workspaceFolderValue ?? inspected.workspaceValue ?? inspected.globalValue;
  return inspected.globalValue;
}

/** Where the value `explicitSetting` returns was set: VS Code's settings scopes, most specific first. */
export type SettingScope = 'folder' | 'workspace' | 'user';

/** The scope of the value `explicitSetting` picks (same order and trust rule); undefined when none. */
export function explicitSettingScope<T>(inspected: InspectedSetting<T> | undefined, trusted: boolean): SettingScope | undefined {
  if (!inspected) return undefined;
  if (trusted && inspected.workspaceFolderValue !== undefined) return 'folder';
  if (trusted && inspected.workspaceValue !== undefined) return 'workspace';
  return inspected.globalValue !== undefined ? 'user' : undefined;
}

/**
 * As `explicitSetting`, for a setting that can widen what a container reaches: a workspace or
 * folder value (the project's .vscode/settings.json, which its container can write) counts only
 * when `narrows` says it takes reach away; otherwise the user's own value counts
 * (docs/decisions/0041-project-config-narrows-only.md). The most specific narrowing value wins.
 */
export function narrowingSetting<T>(
  inspected: InspectedSetting<T> | undefined,
  trusted: boolean,
  narrows: (value: T) => boolean,
): { value?: T; scope?: SettingScope } {
  if (!inspected) return {};
  const project: Array<[T | undefined, SettingScope]> = trusted
    ? [
        [inspected.workspaceFolderValue, 'folder'],
        [inspected.workspaceValue, 'workspace'],
      ]
    : [];
  for (const [value, scope] of project) if (value !== undefined && narrows(value)) return { value, scope };
  return inspected.globalValue === undefined ? {} : { value: inspected.globalValue, scope: 'user' };
}
