/**
 * The UI decides nothing from an error's words: what an error means crosses the boundary as a
 * ToolboxError's code and actions (contract/errors.ts). This test reads every file under
 * extension/src/ui and fails on a test of an error's message, reason or name.
 */
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { join, relative, resolve } from 'node:path';
import { describe, it } from 'node:test';

const UI = resolve(__dirname, '../../../extension/src/ui');

/** An identifier that holds an error or its text. */
const ERRORISH = String.raw`\b(?:err|error|retryErr|reason|message|errText|errorText)\b(?:\s*as\s*Error\)?)?(?:\.(?:message|reason|name|stderr))?`;

const PATTERNS: RegExp[] = [
  // message.includes(…), err.message.startsWith(…), reason.match(…)
  new RegExp(String.raw`${ERRORISH}\)?\.(?:includes|startsWith|endsWith|match|matchAll|search|indexOf)\(`),
  // /…/.test(err.message), /…/.test(persistence.reason)
  /\/[gimsuy]*\.test\([^)]*\b(?:message|reason|stderr|err|error)\b/,
  // err.name === 'SessionGoneError'
  /\.name\s*===?\s*'[A-Za-z]*Error'/,
];

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) =>
    e.isDirectory() ? sourceFiles(join(dir, e.name)) : e.name.endsWith('.ts') ? [join(dir, e.name)] : [],
  );
}

/** `file:line: text` for every line that branches on an error's words. */
export function errorTextBranches(file: string, text: string): string[] {
  return text.split('\n').flatMap((line, i) => (PATTERNS.some((p) => p.test(line)) ? [`${file}:${i + 1}: ${line.trim()}`] : []));
}

describe('the UI and error texts', () => {
  it('no file under ui/ tests an error message, reason or name', () => {
    const files = sourceFiles(UI);
    assert.ok(files.length > 30, `found only ${files.length} files under ${UI}`);
    assert.deepEqual(
      files.flatMap((f) => errorTextBranches(relative(UI, f), readFileSync(f, 'utf8'))),
      [],
    );
  });

  it('catches the shapes that used to be there', () => {
    for (const line of [
      "if ((result.reason as Error).name === 'SessionGoneError') {",
      '!/persist is off/.test(persistence.reason)',
      'return message.includes(SETTINGS.dockerHost);',
      'if (err.message.startsWith("Docker")) {',
      "const gone = (retryErr as Error).name === 'SessionGoneError';",
    ]) {
      assert.equal(errorTextBranches('x.ts', line).length, 1, line);
    }
    assert.deepEqual(errorTextBranches('x.ts', "if (errorCode(err) === 'session-gone') {"), []);
  });
});
