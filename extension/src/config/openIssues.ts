/**
 * What the config issues of one open mean for it, as upstream's `toolbox shell`: an error (a
 * project .toolbox.yaml that is not YAML or has a bad value, a bad TOOLBOX_* variable) stops the
 * open with the place and the fix; warnings are logged, and the ones about a whole file that was
 * skipped are also shown. Pure.
 */
import type { ConfigIssue } from './model';
import { formatIssue } from './parse';

export interface OpenIssues {
  /** Every issue that did not stop the open, formatted for the log. */
  warnings: string[];
  /** The warnings worth a notification: a whole file was skipped. */
  notices: string[];
  /** Keys a config file has that mean nothing (a typo keeps the default): said once at open (issue 26, item 10). */
  unknownKeys: UnknownKey[];
}

/** An unknown key in a config file. `key` is as the file wrote it: text from the file, shown as plain text only. */
export interface UnknownKey {
  /** The file's absolute path. */
  file: string;
  key: string;
  line?: number;
  /** The key it probably meant, when one is close. */
  suggestion?: string;
}

/** Throws the first error as a sentence that names `file:line` and says what to do; else sorts the warnings. */
export function issuesForOpen(issues: readonly ConfigIssue[], home?: string): OpenIssues {
  const broken = issues.find((i) => i.severity === 'error');
  if (broken !== undefined) throw new Error(openRefusal(broken, home));
  const warnings = issues.map((i) => formatIssue(i, home));
  const notices = issues.filter((i) => i.fileSkipped).map((i) => formatIssue(i, home));
  const unknownKeys = issues
    .filter((i) => i.unknownKey && i.source !== 'environment' && i.source !== 'settings')
    .map((i) => ({
      file: i.source,
      key: i.key,
      ...(i.line !== undefined ? { line: i.line } : {}),
      ...(i.suggestion !== undefined ? { suggestion: i.suggestion } : {}),
    }));
  return { warnings, notices, unknownKeys };
}

/** `Toolbox did not open the shell because of a configuration error: <file>:<line>: <key>: <problem>. <fix>` */
export function openRefusal(issue: ConfigIssue, home?: string): string {
  const where = formatIssue(issue, home).replace(/[.;\s]+$/, '');
  // A YAML parser notices a broken structure where it ends, not always where it starts.
  const place =
    issue.line === undefined
      ? 'that file'
      : issue.message.startsWith('is not valid YAML')
        ? `that file around line ${issue.line}`
        : `line ${issue.line} of that file`;
  const fix =
    issue.source === 'environment'
      ? `Fix or unset ${issue.key} in the environment VS Code was started from, then open the shell again.`
      : `Fix ${place}, then open the shell again (the toolbox CLI refuses this configuration too).`;
  return `Toolbox did not open the shell because of a configuration error: ${where}. ${fix}`;
}
