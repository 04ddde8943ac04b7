/**
 * Text from outside (a container, git, the engine, a file one of them wrote) made into plain text
 * for one kind of VS Code sink: a notification, a dialog's detail, a tree row, a tooltip, a status
 * bar item, a quick pick row, a terminal's name. What VS Code would draw as something else is
 * neutralised; everything else is left as it was, so a sentence, a path or a branch name reads the
 * same (docs/decisions/0040-outside-text-is-plain-text.md).
 *
 * - Escape sequences (CSI, OSC, DCS, …) are removed; other control characters become a space.
 * - Invisible format characters (bidi overrides and marks, zero-width characters, soft hyphen,
 *   tag characters, the BOM) and the Hangul fillers are removed: nothing reorders or hides text.
 * - One-line sinks get one line (every run of white space, line breaks included, is one space);
 *   multi-line sinks keep at most SINK_LINES lines.
 * - `[label](target)`, the one link syntax VS Code finds in a notification, a dialog button row or
 *   an input box's message, is broken apart: `] (`. A bare URL, `<command:x>` or HTML is not
 *   rendered by any sink that takes a plain string, so it stays as written; outside text is never
 *   put into a MarkdownString (test/unit/plain-text-sinks.test.ts checks that).
 * - Where VS Code draws `$(name)` as an icon (status bar text, quick pick rows, terminal names,
 *   input box prompts: `iconLabel`), `$(` is escaped as `\$(`, which VS Code shows as `$(`.
 * - The result is bounded (SINKS[sink].chars, with an ellipsis), and so is the work: at most
 *   PRECUT characters of input per character of output are read.
 *
 * plainText is idempotent, so a builder may clean the parts it takes from outside and the sink
 * may clean the whole again. No vscode import: unit-tested in test/unit/plain-text.test.ts.
 */

export type Sink = 'message' | 'detail' | 'label' | 'iconLabel' | 'tooltip';

export const SINKS: Record<Sink, { lines: boolean; chars: number; icons: boolean }> = {
  /** A notification's or a dialog's message, a progress title or message: one line. */
  message: { lines: false, chars: 1000, icons: false },
  /** A modal dialog's detail: lines kept. */
  detail: { lines: true, chars: 4000, icons: false },
  /** A tree row's label or description: one line, short. */
  label: { lines: false, chars: 200, icons: false },
  /** Status bar text, a quick pick row, a terminal's name, an input box's prompt or message: `$(` escaped. */
  iconLabel: { lines: false, chars: 1000, icons: true },
  /** A string tooltip (tree rows, the status bar): lines kept. */
  tooltip: { lines: true, chars: 2000, icons: false },
};

/** Lines a multi-line sink keeps. */
export const SINK_LINES = 40;

/** Characters of input read per character of output (a 100 KB string costs as much as max × PRECUT). */
const PRECUT = 8;

/* eslint-disable no-control-regex */
/** CSI (ESC [ or C1 CSI) with its parameters; OSC (ESC ] or C1 OSC) to BEL or ST; DCS, SOS, PM, APC to ST; any other ESC x. */
const ESCAPE_SEQUENCE = new RegExp(
  [
    '(?:\\x1b\\[|\\x9b)[\\x30-\\x3f]*[\\x20-\\x2f]*[\\x40-\\x7e]?',
    '(?:\\x1b\\]|\\x9d)[^\\x07\\x1b\\x9c]*(?:\\x07|\\x1b\\\\|\\x9c)?',
    '(?:\\x1b[PX^_]|[\\x90\\x98\\x9e\\x9f])[^\\x1b\\x9c]*(?:\\x1b\\\\|\\x9c)?',
    '\\x1b[\\x20-\\x2f]*[\\x30-\\x7e]?',
  ].join('|'),
  'g',
);
/** Every way text breaks a line: CR LF, CR, LF, NEL, VT, FF, the Unicode line and paragraph separators. */
const LINE_BREAK = /\r\n|[\r\n\x0b\x0c\x85\u2028\u2029]/g;
/** Format characters (bidi, zero-width, soft hyphen, tags, BOM, …) and the Hangul fillers: invisible. */
const INVISIBLE = /[\p{Cf}\u115f\u1160\u3164\uffa0]/gu;
/** Control characters other than the line feed (tab, C0, DEL, C1). */
const CONTROL = /[^\P{Cc}\n]/gu;
/* eslint-enable no-control-regex */
/** A surrogate half without its other half (it cannot be shown; it is what a cut in the middle of an emoji leaves). */
const LONE_SURROGATE = /[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/g;
/** The `](` that makes `[label](target)` a link. */
const LINK_JOIN = /\]\(/g;
/** `$(` not already escaped. */
const ICON = /(?<!\\)\$\(/g;

/** Outside text as plain text for `sink`, at most `max` characters (SINKS[sink].chars by default). */
export function plainText(raw: unknown, sink: Sink, max: number = SINKS[sink].chars): string {
  const kind = SINKS[sink];
  let s = typeof raw === 'string' ? raw : raw === undefined || raw === null ? '' : String(raw);
  if (s.length > max * PRECUT) s = s.slice(0, max * PRECUT);
  s = s
    .replace(LONE_SURROGATE, '\ufffd')
    .replace(ESCAPE_SEQUENCE, '')
    .replace(LINE_BREAK, '\n')
    .replace(INVISIBLE, '')
    .replace(CONTROL, ' ');
  if (kind.lines) {
    s = s
      .split('\n')
      .map((line) => line.trimEnd())
      .join('\n')
      .replace(/\n{3,}/g, '\n\n')
      .trim();
    const lines = s.split('\n');
    if (lines.length > SINK_LINES) s = [...lines.slice(0, SINK_LINES - 1), '…'].join('\n');
  } else {
    s = s.replace(/\s+/g, ' ').trim();
  }
  s = s.replace(LINK_JOIN, '] (');
  if (kind.icons) s = s.replace(ICON, '\\$(');
  return bounded(s, max);
}

/**
 * Outside text set into a line of ours in a multi-line text (a tooltip, a dialog's detail): one
 * line, so it cannot start a line that passes for one of ours.
 */
export function inline(raw: unknown, max: number = SINKS.message.chars): string {
  return plainText(raw, 'message', max);
}

/**
 * Words a program chose (an agent's notification, a terminal title), quoted after our own words
 * that say who said them: `“…”`, with the curly quotes inside made straight so it cannot close
 * ours and go on as if we spoke. Empty when nothing is left.
 */
export function quoted(raw: unknown, sink: Sink, max: number = SINKS[sink].chars): string {
  const text = plainText(raw, sink, Math.max(1, max - 2)).replace(/[“”]/g, '"');
  return text ? `“${text}”` : '';
}

/**
 * A tree row's texts, each cleaned for where it shows. `tooltip`: 'message' for a tooltip of one
 * sentence, so outside text in it cannot start a line.
 */
export function plainItem<T extends { label: string; description?: string; tooltip?: string }>(
  item: T,
  tooltip: 'tooltip' | 'message' = 'tooltip',
): T {
  return {
    ...item,
    label: plainText(item.label, 'label'),
    ...(item.description !== undefined ? { description: plainText(item.description, 'label') } : {}),
    ...(item.tooltip !== undefined ? { tooltip: plainText(item.tooltip, tooltip) } : {}),
  };
}

/** `s` cut to `max` characters, the last one an ellipsis, never between the halves of a surrogate pair. */
function bounded(s: string, max: number): string {
  if (s.length <= max) return s;
  if (max <= 1) return '…'.slice(0, max);
  let end = max - 1;
  const last = s.charCodeAt(end - 1);
  if (last >= 0xd800 && last <= 0xdbff) end--;
  return `${s.slice(0, end).trimEnd()}…`;
}
