/**
 * test/README.md, the map from each feature to its test files in every tier (issue 39, item 8),
 * kept true: every path it names in backticks under test/ or bench/ exists, every relative link
 * in it resolves, and every test file (test/**\/*.test.ts, the extension-host suite) and every
 * benchmark (bench/*.ts) is listed at least once, so a file added, moved or removed without the
 * map fails here.
 */
import assert from 'node:assert/strict';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { dirname, join, posix } from 'node:path';
import { describe, it } from 'node:test';

// The compiled file runs from out/test/unit/.
const root = join(__dirname, '../../..');
const MAP = 'test/README.md';

/** The page without its fenced code blocks (commands there are examples, not paths). */
function prose(markdown: string): string {
  return markdown.replace(/^(```|~~~)[^\n]*\n[\s\S]*?^\1[ \t]*$/gm, '');
}

/** Every backtick span that is a path under test/ or bench/, as written. */
export function mappedPaths(markdown: string): string[] {
  const paths: string[] = [];
  for (const m of prose(markdown).matchAll(/`([^`\n]+)`/g)) {
    const token = m[1].trim();
    if (/^(test|bench)\/[\w./-]*$/.test(token)) paths.push(token.replace(/\/+$/, '') || token);
  }
  return paths;
}

/** Every relative link target (no scheme, no anchor-only), without its #fragment. */
export function relativeLinks(markdown: string): string[] {
  const links: string[] = [];
  for (const m of prose(markdown).matchAll(/\]\(\s*<?([^)\s>]+)>?(?:\s+"[^"]*")?\s*\)/g)) {
    const target = m[1];
    if (/^[a-z][a-z0-9+.-]*:/i.test(target) || target.startsWith('#')) continue;
    links.push(target.split('#')[0]);
  }
  return links;
}

/** Repository-relative paths of the files under `dir` whose names pass `keep`. */
function filesUnder(dir: string, keep: (name: string) => boolean, recurse: boolean): string[] {
  const found: string[] = [];
  for (const entry of readdirSync(join(root, dir), { withFileTypes: true })) {
    const rel = posix.join(dir, entry.name);
    if (entry.isDirectory()) {
      if (recurse) found.push(...filesUnder(rel, keep, recurse));
    } else if (entry.isFile() && keep(entry.name)) {
      found.push(rel);
    }
  }
  return found.sort();
}

describe('the parsing of the test map', () => {
  it('takes backtick paths under test/ and bench/ and leaves commands, globs and code blocks out', () => {
    const text = [
      'See `test/unit/a.test.ts`, `bench/b.ts` and `test/support/`.',
      'Not `npm run test:unit`, `test-output/e2e/`, `out/test/unit`, `ui*.test.ts` or `test/e2e/ui*.test.ts`.',
      '```sh',
      'node --test `test/unit/not-here.test.ts`',
      '```',
    ].join('\n');
    assert.deepEqual(mappedPaths(text), ['test/unit/a.test.ts', 'bench/b.ts', 'test/support']);
  });

  it('takes relative links without their fragment, and leaves URLs and anchors out', () => {
    const text = '[a](../docs/architecture.md#layers) [b](https://example.com/x) [c](#tiers) [d](unit/x.ts "t")';
    assert.deepEqual(relativeLinks(text), ['../docs/architecture.md', 'unit/x.ts']);
  });
});

describe('test/README.md, the map of features to test files', () => {
  const text = readFileSync(join(root, MAP), 'utf8');
  const listed = mappedPaths(text);
  const listedSet = new Set(listed);

  it('names test files at all (the parser found the tables)', () => {
    assert.ok(listed.length > 100, `only ${listed.length} paths found in ${MAP}`);
  });

  it('names only paths that exist, relative to the repository root', () => {
    const missing = [...listedSet].filter((p) => !existsSync(join(root, p)));
    assert.deepEqual(missing, [], `${MAP} names paths that do not exist: move or remove them in the map`);
  });

  it('links only to files that exist, relative to test/', () => {
    const dir = dirname(join(root, MAP));
    const broken = relativeLinks(text).filter((target) => !existsSync(join(dir, decodeURIComponent(target))));
    assert.deepEqual(broken, [], `${MAP} has relative links that do not resolve`);
  });

  it('lists every test file under test/ (and the extension-host suite) at least once', () => {
    const tests = filesUnder('test', (name) => /\.(test|suite)\.ts$/.test(name), true);
    assert.ok(tests.length > 100, `only ${tests.length} test files found under test/`);
    const unlisted = tests.filter((f) => !listedSet.has(f));
    assert.deepEqual(unlisted, [], `add these test files to ${MAP}, under the feature they test`);
  });

  it('lists every benchmark file in bench/ at least once', () => {
    const benches = filesUnder('bench', (name) => name.endsWith('.ts'), false);
    const unlisted = benches.filter((f) => !listedSet.has(f));
    assert.deepEqual(unlisted, [], `add these benchmark files to ${MAP}, under the feature they measure`);
  });
});
