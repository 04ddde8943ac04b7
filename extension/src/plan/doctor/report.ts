/**
 * Run Doctor's counts, its notification's summary and its plain-text report (plan/doctor/): where
 * it ran, the counts, then each section's lines, wrapped.
 */
import { oneLine, shown } from './shared';
import type { DoctorCheck, DoctorFacts, DoctorStatus } from './types';

export interface DoctorCounts {
  passed: number;
  warnings: number;
  failed: number;
}

export function doctorCounts(checks: readonly DoctorCheck[]): DoctorCounts {
  return {
    passed: checks.filter((c) => c.status === 'pass').length,
    warnings: checks.filter((c) => c.status === 'warn').length,
    failed: checks.filter((c) => c.status === 'fail').length,
  };
}

/** The notification's words: "Doctor: 9 passed, 1 warning, 0 failed". */
export function doctorSummary(counts: DoctorCounts): string {
  return `Doctor: ${counts.passed} passed, ${counts.warnings} warning${counts.warnings === 1 ? '' : 's'}, ${counts.failed} failed`;
}

/** The report's sections, by the part of a check's id before `.` or `:`. */
const SECTIONS: ReadonlyArray<[string, string]> = [
  ['engine', 'Engine'],
  ['folders', 'Folders'],
  ['transports', 'Transports'],
  ['config', 'Configuration'],
  ['peer', 'Peer messaging'],
  ['image', 'Runtime image'],
  ['proximo', 'proximo'],
  ['protected', 'Protected paths'],
  ['host-tools', 'Host extensions'],
  ['docker', 'Docker endpoint'],
  ['egress', 'Egress'],
];

const MARK: Record<DoctorStatus, string> = { pass: '[PASS]', warn: '[WARN]', fail: '[FAIL]', info: '[INFO]' };

/** The report's width: a detail longer than this goes on, indented, on the next line. */
export const REPORT_COLUMNS = 100;

/** `text` in lines of at most `width` characters, broken at spaces (a longer word stays whole). */
function wrap(text: string, width: number): string[] {
  const lines: string[] = [];
  let line = '';
  for (const word of text.split(' ').filter((w) => w !== '')) {
    if (line !== '' && line.length + 1 + word.length > width) {
      lines.push(line);
      line = word;
    } else {
      line = line === '' ? word : `${line} ${word}`;
    }
  }
  if (line !== '') lines.push(line);
  return lines;
}

/**
 * The report as plain text: where it ran, the counts, then each section's lines, wrapped at
 * REPORT_COLUMNS. `at` is the time it ran (ISO), given by the caller.
 */
export function renderDoctorReport(
  facts: DoctorFacts,
  checks: readonly DoctorCheck[],
  at: string,
  /** Applied to every line and detail before it is wrapped (Copy Report's plan/redact.ts: a value is never cut in two first). */
  clean: (text: string) => string = (text) => text,
): string {
  const a = facts.about;
  const engine = facts.engine.reachable
    ? `${facts.engine.product} ${oneLine(facts.engine.version, 64)}, API ${oneLine(facts.engine.apiVersion, 32)}`
    : 'not reachable';
  const lines = [
    'Toolbox Doctor',
    `Toolbox for VS Code ${a.extensionVersion} · VS Code ${oneLine(a.vscodeVersion ?? 'unknown', 40)} · ${a.platform} ${a.arch}${a.osRelease ? ` (${oneLine(a.osRelease, 80)})` : ''}`,
    `Engine: ${engine}`,
    `Folders: ${facts.folders.length ? facts.folders.map((f) => shown(f.folder, facts.home)).join(', ') : 'none'}`,
    `Run at: ${at}`,
    `${doctorSummary(doctorCounts(checks))}.`,
  ].map(clean);
  const indent = ' '.repeat(MARK.pass.length + 1);
  for (const [key, heading] of SECTIONS) {
    const mine = checks.filter((c) => c.id.split(/[.:]/)[0] === key);
    if (mine.length === 0) continue;
    lines.push('', heading);
    for (const c of mine) {
      lines.push(`${MARK[c.status]} ${clean(c.title)}`);
      for (const text of [c.detail, ...(c.fix !== undefined ? [`What to do: ${c.fix}`] : [])]) {
        lines.push(...wrap(clean(text), REPORT_COLUMNS - indent.length).map((l) => `${indent}${l}`));
      }
    }
  }
  return `${lines.join('\n')}\n`;
}
