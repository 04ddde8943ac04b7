/**
 * The problems of one `.toolbox.yaml` text, placed on its lines, for the editor's Problems panel
 * (ui/configDiagnostics.ts), as upstream's `config doctor` reports them (configedit/doctor.go):
 * YAML syntax errors, unknown keys with "did you mean", values of the wrong type or shape, the
 * removed `tools:` block, and a `mounts:` patch that names no default mount. The same parser as
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
}

export interface ProblemContext {
  /** The user's home (a mounts_root at or above it is refused). */
  home?: string;
  /** Names of the default mounts a `mounts:` patch may name (plan/mounts.ts DEFAULT_MOUNTS). */
  knownMounts: readonly string[];
}

export function configProblems(text: string, filePath: string, context: ProblemContext): ConfigProblem[] {
  const parsed = parseConfigFile(text, filePath, { home: context.home });
  const problems: ConfigProblem[] = parsed.issues.map((issue) => ({
    severity: issue.severity,
    message: issue.key ? `${issue.key}: ${issue.message}` : `This file ${issue.message}`,
    span: issue.span ?? wholeLine(issue.line ?? 1),
  }));
  // As at open (plan/mounts.ts mergeUserMounts, docs/decisions/0017): a patch naming no default is ignored.
  parsed.layer.mounts?.forEach((mount, index) => {
    if (mount.target !== undefined || context.knownMounts.includes(mount.name)) return;
    const meant = closest(mount.name, context.knownMounts);
    problems.push({
      severity: 'warning',
      message:
        `mounts[${index}].name: no default mount is named ${mount.name}, so this entry is ignored` +
        `${meant === undefined ? '' : `; did you mean ${meant}?`}. ` +
        'Check the spelling, or give the entry a source: and a target: to add a new mount.',
      span: locate(text, ['mounts', index, 'name'], 'value') ?? wholeLine(1),
    });
  });
  return problems.sort((a, b) => a.span.line - b.span.line || a.span.column - b.span.column);
}

function wholeLine(line: number): TextSpan {
  return { line, column: 1, endLine: line, endColumn: Number.MAX_SAFE_INTEGER };
}
