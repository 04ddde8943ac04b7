/**
 * The problems of one `.toolbox.yaml` text, placed on its lines, for the editor's Problems panel
 * (ui/config/configDiagnostics.ts), as upstream's `config doctor` reports them (configedit/doctor.go):
 * YAML syntax errors, unknown keys with "did you mean", values of the wrong type or shape, the
 * removed `tools:` block, a `mounts:` patch that names no default mount, and a named shell whose
 * path is empty or not absolute. The same parser as
 * an open (parse.ts), so the editor and Open Toolbox Shell never disagree. Pure.
 */
import type { TextSpan } from './model';
import { locate, parseConfigFile } from './parse';
import { closest } from './suggest';

export interface ConfigProblem {
  severity: 'error' | 'warning';
  /** A sentence that starts with the key it is about. */
  message: string;
  span: TextSpan;
  /** The text that fixes it when written over `span` (the key or mount name it probably meant): the editor's quick fix. */
  replacement?: string;
}

export interface ProblemContext {
  /** The user's home (a mounts_root equal to it is refused). */
  home?: string;
  /** Names of the default mounts a `mounts:` patch may name (plan/mounts.ts DEFAULT_MOUNTS). */
  knownMounts: readonly string[];
  /** Names of retired default mounts an entry is ignored for (plan/mounts.ts RETIRED_MOUNTS). */
  retiredMounts?: readonly string[];
}

export function configProblems(text: string, filePath: string, context: ProblemContext): ConfigProblem[] {
  const parsed = parseConfigFile(text, filePath, { home: context.home });
  const problems: ConfigProblem[] = parsed.issues.map((issue) => ({
    severity: issue.severity,
    message: issue.key ? `${issue.key}: ${issue.message}` : `This file ${issue.message}`,
    span: issue.span ?? wholeLine(issue.line ?? 1),
    ...(issue.suggestion !== undefined && issue.span !== undefined ? { replacement: issue.suggestion } : {}),
  }));
  // As at open (plan/mounts.ts mergeUserMounts, docs/decisions/0017): a patch naming no default is ignored.
  parsed.layer.mounts?.forEach((mount, index) => {
    if (mount.name !== undefined && context.retiredMounts?.includes(mount.name)) {
      problems.push({
        severity: 'warning',
        message: `mounts[${index}].name: ${mount.name} is retired (the toolbox CLI no longer mounts rtk), so this entry is ignored. Remove it.`,
        span: locate(text, ['mounts', index, 'name'], 'value') ?? wholeLine(1),
      });
      return;
    }
    if (mount.target !== undefined || !mount.name || context.knownMounts.includes(mount.name)) return;
    const meant = closest(mount.name, context.knownMounts);
    const span = locate(text, ['mounts', index, 'name'], 'value');
    problems.push({
      severity: 'warning',
      message:
        `mounts[${index}].name: no default mount is named ${mount.name}, so this entry is ignored` +
        `${meant === undefined ? '' : `; did you mean ${meant}?`}. ` +
        'Check the spelling, or give the entry a source: and a target: to add a new mount.',
      span: span ?? wholeLine(1),
      ...(meant !== undefined && span !== undefined ? { replacement: meant } : {}),
    });
  });
  // As the CLI's config doctor: a shell whose path cannot open is flagged, the rest of the file still loads.
  for (const [name, shell] of Object.entries(parsed.layer.shells ?? {})) {
    const problem = shellPathProblem(name, shell.path);
    if (problem === undefined) continue;
    const span = locate(text, ['shells', name, 'path'], 'value') ?? locate(text, ['shells', name], 'key') ?? wholeLine(1);
    problems.push({ ...problem, span });
  }
  return problems.sort((a, b) => a.span.line - b.span.line || a.span.column - b.span.column);
}

/** Why `toolbox shell <name>` would refuse this entry's path (plan/namedShell.ts), if it would. */
function shellPathProblem(name: string, path: string | undefined): Omit<ConfigProblem, 'span'> | undefined {
  const p = (path ?? '').trim();
  if (p === '') {
    return {
      severity: 'error',
      message: `shells.${name}.path is empty, so this named shell cannot open. Set it to the absolute path of its folder.`,
    };
  }
  if (!p.startsWith('/')) {
    return {
      severity: 'warning',
      message: `shells.${name}.path: ${p} is not an absolute path, so opening this named shell is refused. Write the folder's full path, starting with /.`,
    };
  }
  return undefined;
}

function wholeLine(line: number): TextSpan {
  return { line, column: 1, endLine: line, endColumn: Number.MAX_SAFE_INTEGER };
}

/**
 * `text` with `problem`'s quick fix applied: its replacement written over its span, as the editor's
 * quick fix edits the document (ui/config/configDiagnostics.ts). The text unchanged when it has none.
 */
export function applyFix(text: string, problem: ConfigProblem): string {
  if (problem.replacement === undefined) return text;
  const lines = text.split('\n');
  const offset = (line: number, column: number) =>
    lines.slice(0, line - 1).reduce((n, l) => n + l.length + 1, 0) + Math.min(column - 1, (lines[line - 1] ?? '').length);
  const { span } = problem;
  return text.slice(0, offset(span.line, span.column)) + problem.replacement + text.slice(offset(span.endLine, span.endColumn));
}
