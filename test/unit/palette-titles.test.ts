/**
 * Issue 13, item 1: typing a Toolbox command's exact title in the command palette must list that
 * command first, so Enter runs it and not a longer, more destructive command that also matches.
 *
 * The command palette (VS Code's commandsQuickAccess.ts) keeps every command whose label matches
 * the typed text by prefix, by word starts or as a contiguous substring (its WORD_FILTER), then
 * lists recently used ones first and the rest by `label.localeCompare` — no match score. So a
 * title that also matches another command's whole title, and sorts before it, takes Enter. The
 * three matchers below are faithful ports of VS Code's base/common/filters.ts (ASCII labels, so
 * without its alternate-character table).
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';

interface Contributed {
  command: string;
  title: string;
  category?: string;
}
interface PackageJson {
  contributes: { commands: Contributed[]; menus: { commandPalette: Array<{ command: string; when?: string }> } };
}

const pkg = JSON.parse(readFileSync(join(__dirname, '../../../package.json'), 'utf8')) as PackageJson;
const hidden = new Set(pkg.contributes.menus.commandPalette.filter((m) => m.when === 'false').map((m) => m.command));
/** What the palette shows: `Category: Title`, for every command it lists. */
const listed = pkg.contributes.commands
  .filter((c) => !hidden.has(c.command))
  .map((c) => ({ id: c.command, label: c.category ? `${c.category}: ${c.title}` : c.title }));

const SEPARATORS = new Set('()[]{}<>`\'"-/;:,.?!'.split('').map((c) => c.charCodeAt(0)));
const isWordSeparator = (code: number) => code === 32 || code === 9 || SEPARATORS.has(code);
const charactersMatch = (a: number, b: number) => a === b || (isWordSeparator(a) && isWordSeparator(b));

function nextWord(word: string, start: number): number {
  for (let i = start; i < word.length; i++) {
    if (isWordSeparator(word.charCodeAt(i)) || (i > 0 && isWordSeparator(word.charCodeAt(i - 1)))) return i;
  }
  return word.length;
}

function matchesWordsAt(word: string, target: string, wi: number, ti: number): boolean {
  if (wi === word.length) return true;
  if (ti === target.length) return false;
  if (!charactersMatch(word.charCodeAt(wi), target.charCodeAt(ti))) return false;
  let next = ti + 1;
  if (matchesWordsAt(word, target, wi + 1, next)) return true;
  while ((next = nextWord(target, next)) < target.length) {
    if (matchesWordsAt(word, target, wi + 1, next)) return true;
    next++;
  }
  return false;
}

function matchesWords(word: string, target: string): boolean {
  const w = word.toLowerCase();
  const t = target.toLowerCase();
  for (let ti = 0; ti < t.length; ti = nextWord(t, ti + 1)) if (matchesWordsAt(w, t, 0, ti)) return true;
  return false;
}

/** The palette's WORD_FILTER: prefix, word starts, or contiguous substring, ignoring case. */
export function paletteMatches(query: string, label: string): boolean {
  const q = query.trim();
  return label.toLowerCase().startsWith(q.toLowerCase()) || matchesWords(q, label) || label.toLowerCase().includes(q.toLowerCase());
}

/** The labels the palette lists for a query, in its order for commands never used. */
function ranked(query: string, labels: readonly string[]): string[] {
  return labels.filter((l) => paletteMatches(query, l)).sort((a, b) => a.localeCompare(b));
}

describe('command palette titles', () => {
  it('the port of the palette filter matches as VS Code does', () => {
    // The two pairs the issue found, under their old titles.
    assert.equal(paletteMatches('Toolbox: Stop Container', 'Toolbox: Stop All Toolbox Containers'), true);
    assert.equal(paletteMatches('Toolbox: Open Toolbox Shell', 'Toolbox: Open Named Toolbox Shell…'), true);
    assert.deepEqual(ranked('Toolbox: Stop Container', ['Toolbox: Stop Container', 'Toolbox: Stop All Toolbox Containers']), [
      'Toolbox: Stop All Toolbox Containers',
      'Toolbox: Stop Container',
    ]);
    // "Git: Pull" from "gp" (word starts) and a plain substring.
    assert.equal(paletteMatches('gp', 'Git: Pull'), true);
    assert.equal(paletteMatches('ull', 'Git: Pull'), true);
    assert.equal(paletteMatches('Toolbox: Refresh', 'Toolbox: Recreate Drifted Container…'), false);
  });

  it('list every Toolbox command first when its exact title is typed, with or without the closing "…"', () => {
    const labels = listed.map((c) => c.label);
    for (const { label } of listed) {
      for (const query of new Set([label, label.replace(/…$/, '')])) {
        const order = ranked(query, labels);
        assert.equal(order[0], label, `typing "${query}" lists ${order.map((l) => `"${l}"`).join(', ')}: Enter would run the first`);
      }
    }
  });

  it('end in "…" for every command that asks something before it acts', () => {
    const asks = [
      'toolbox.openNamedShell',
      'toolbox.stopContainer',
      'toolbox.stopAll',
      'toolbox.recreateContainer',
      'toolbox.togglePeerMessaging',
      'toolbox.driftActions',
      'toolbox.endShell',
      'toolbox.manageCredentialGrants',
    ];
    for (const id of asks) {
      const c = pkg.contributes.commands.find((x) => x.command === id);
      assert.ok(c, `${id} is contributed`);
      assert.match(c.title, /…$/, `${id}: "${c.title}" opens a dialog, so its title ends in "…"`);
    }
  });
});
