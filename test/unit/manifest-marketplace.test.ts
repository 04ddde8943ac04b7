/**
 * package.json and the files around it against what the Marketplace and Open VSX need to list the
 * extension (issue 31, item 1). The same rules as scripts/package-check.mjs, which runs vsce's and
 * ovsx's own checks on a packed VSIX (npm run package:check); these run without packing, so
 * `npm test` catches a broken manifest before anyone packages it.
 */
import assert from 'node:assert/strict';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { runtimeContextFiles } from '../../extension/src/engine/imageBuild';

const root = join(__dirname, '../../..');
const read = (rel: string) => readFileSync(join(root, rel), 'utf8');

interface Manifest {
  name: string;
  displayName?: string;
  description?: string;
  version: string;
  publisher: string;
  license?: string;
  icon?: string;
  galleryBanner?: { color?: string; theme?: string };
  repository?: { url?: string } | string;
  bugs?: { url?: string } | string;
  homepage?: string;
  categories?: string[];
  keywords?: unknown[];
  engines?: { vscode?: string };
  activationEvents?: string[];
  main?: string;
}
const pkg = JSON.parse(read('package.json')) as Manifest;
/** scripts/marketplace-rules.json: VS Code's category list, the keyword limit, the icon's size. */
const rules = JSON.parse(read('scripts/marketplace-rules.json')) as { categories: string[]; maxKeywords: number; iconMinSize: number };

/** The width and height a PNG's IHDR chunk gives; throws when the bytes are not a PNG. */
function pngSize(bytes: Buffer): { width: number; height: number } {
  const signature = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);
  assert.ok(bytes.subarray(0, 8).equals(signature), 'the PNG signature');
  assert.equal(bytes.toString('latin1', 12, 16), 'IHDR', 'the first chunk is IHDR');
  return { width: bytes.readUInt32BE(16), height: bytes.readUInt32BE(20) };
}

/** The relative image links of a Markdown file: `![alt](src)` and `<img src="…">`. */
function markdownImages(markdown: string): string[] {
  return [...markdown.matchAll(/!\[[^\]]*\]\(([^)\s]+)[^)]*\)|<img[^>]+src=["']([^"']+)["']/g)].map((m) => m[1] ?? m[2] ?? '');
}

/**
 * Which of `candidates` (paths relative to the repository) `vsce package` would pack: vsce's own
 * filter (collectFiles in node_modules/@vscode/vsce/out/package.js) with its own minimatch. The
 * .vscodeignore lines, each non-glob one also as `<line>/**`; a path is left out when an ignore
 * pattern matches it and no `!` pattern does; package.json and README.md are always in. vsce's
 * built-in ignores are left out: every one of them is inside our leading `**` anyway.
 */
function packed(candidates: string[], vscodeignore: string): string[] {
  const vsceRequire = createRequire(require.resolve('@vscode/vsce/package.json'));
  const { Minimatch } = vsceRequire('minimatch') as { Minimatch: new (p: string, o: object) => { match(f: string): boolean } };
  const lines = vscodeignore
    .split(/[\n\r]/)
    .map((s) => s.trim())
    .filter((s) => s !== '' && !s.startsWith('#'));
  const all = [...lines, ...lines.filter((l) => !/(^|\/)[^/]*\*[^/]*$/.test(l)).map((l) => (l.endsWith('/') ? `${l}**` : `${l}/**`))];
  all.push('!package.json', '!README.md');
  const ignore = all.filter((p) => !p.startsWith('!')).map((p) => new Minimatch(p, { dot: true }));
  const negate = all.filter((p) => p.startsWith('!')).map((p) => new Minimatch(p.slice(1), { dot: true }));
  return candidates.filter((f) => !ignore.some((m) => m.match(f)) || negate.some((m) => m.match(f)));
}

/** Every file of the repository, as vsce's glob sees it, without the trees no package holds. */
function repositoryFiles(): string[] {
  const skip = new Set(['.git', 'node_modules', 'out', 'test-output', 'dist', '.vscode-test']);
  const out: string[] = [];
  const walk = (rel: string) => {
    for (const entry of readdirSync(join(root, rel), { withFileTypes: true })) {
      const path = rel ? `${rel}/${entry.name}` : entry.name;
      if (entry.isDirectory()) {
        if (!skip.has(entry.name) && !entry.name.startsWith('.out-')) walk(path);
      } else out.push(path);
    }
  };
  walk('');
  // What the build and npm ci make, which a packaging machine has and this one may not yet.
  return [...out, 'dist/extension.js', 'dist/backend.js', 'node_modules/yaml/package.json', 'node_modules/dockerode/lib/docker.js'];
}

describe('package.json for the Marketplace and Open VSX', () => {
  it('has an icon that is a square PNG of 128 px (extension/media/icon.png, scripts/make-icon.mjs)', () => {
    assert.ok(pkg.icon, 'package.json names an icon');
    assert.ok(!/\.svg$/i.test(pkg.icon), 'vsce refuses an SVG icon');
    assert.ok(existsSync(join(root, pkg.icon)), `${pkg.icon} exists`);
    const { width, height } = pngSize(readFileSync(join(root, pkg.icon)));
    assert.deepEqual({ width, height }, { width: rules.iconMinSize, height: rules.iconMinSize });
  });

  it('has a display name, a short description and a gallery banner', () => {
    assert.ok(pkg.displayName && pkg.displayName.trim() !== '', 'displayName');
    assert.ok(pkg.description && pkg.description.length <= 250, 'a description short enough for the Marketplace card');
    assert.match(pkg.galleryBanner?.color ?? '', /^#[0-9a-f]{6}$/i, 'galleryBanner.color is #rrggbb');
    assert.ok(['dark', 'light'].includes(pkg.galleryBanner?.theme ?? ''), 'galleryBanner.theme is dark or light');
  });

  it("takes its categories from VS Code's list (scripts/marketplace-rules.json)", () => {
    assert.ok((pkg.categories ?? []).length > 0, 'at least one category');
    for (const c of pkg.categories ?? []) assert.ok(rules.categories.includes(c), `${c} is one of ${rules.categories.join(', ')}`);
  });

  it('has at most 30 keywords, each a non-empty string, none twice', () => {
    const keywords = pkg.keywords ?? [];
    assert.ok(keywords.length > 0, 'keywords help people find it');
    assert.ok(keywords.length <= rules.maxKeywords, `${keywords.length} keywords, at most ${rules.maxKeywords}`);
    for (const k of keywords) assert.ok(typeof k === 'string' && k.trim() !== '', `keyword ${JSON.stringify(k)} is a non-empty string`);
    assert.equal(new Set(keywords).size, keywords.length, 'no keyword twice');
  });

  it('links the repository, its issues and its home page over https', () => {
    const urls = {
      repository: typeof pkg.repository === 'string' ? pkg.repository : pkg.repository?.url,
      bugs: typeof pkg.bugs === 'string' ? pkg.bugs : pkg.bugs?.url,
      homepage: pkg.homepage,
    };
    for (const [field, value] of Object.entries(urls)) {
      assert.ok(value, `${field} is set`);
      assert.equal(new URL(value).protocol, 'https:', `${field} is https: ${value}`);
    }
    assert.equal(urls.repository, 'https://github.com/toolbox-dev/toolbox-vscode');
  });

  it('names its license and ships the file (vsce warns without it, ovsx asks to add one)', () => {
    assert.ok(pkg.license, 'license is set');
    assert.ok(existsSync(join(root, 'LICENSE')), 'LICENSE exists');
    assert.ok(read('LICENSE').includes(pkg.license), `LICENSE is the ${pkg.license} license`);
  });

  it("has a CHANGELOG.md section for package.json's version", () => {
    assert.ok(existsSync(join(root, 'CHANGELOG.md')), 'CHANGELOG.md exists');
    const heading = new RegExp(`^## \\[${pkg.version.replace(/\./g, '\\.')}\\]`, 'm');
    assert.match(read('CHANGELOG.md'), heading, `a "## [${pkg.version}]" section`);
  });

  it('shows README images that are PNG files in the repository (vsce links them to raw/HEAD)', () => {
    const images = markdownImages(read('README.md'));
    assert.ok(images.length > 0, 'the README has screenshots');
    for (const src of images) {
      assert.ok(!/^\w+:/.test(src), `${src} is a relative link, so vsce points it at this repository`);
      assert.match(src, /\.png$/i, `${src} is a PNG (vsce refuses SVG images in the README)`);
      assert.ok(existsSync(join(root, src)), `${src} exists`);
    }
  });

  it('packs the bundles, the runtime image context and the Marketplace files, never sources, tests or node_modules', () => {
    const files = packed(repositoryFiles(), read('.vscodeignore'));
    const leaked = files.filter((f) => /^(extension\/src|test|node_modules|out|docs|scripts|bench)\//.test(f) || /\.ts$/.test(f));
    assert.deepEqual(leaked, [], 'nothing from sources, tests, docs, scripts or node_modules');
    for (const f of ['package.json', 'README.md', 'CHANGELOG.md', 'LICENSE', pkg.icon, 'dist/extension.js', 'dist/backend.js']) {
      assert.ok(f && files.includes(f), `${f} is packed`);
    }
    // The runtime image's tag hashes every file of its context: a missing one misses the published image.
    for (const f of runtimeContextFiles(root)) assert.ok(files.includes(f), `${f} (runtime image context) is packed`);
  });

  it('runs on a stated VS Code and never activates on every start (`*`)', () => {
    assert.match(pkg.engines?.vscode ?? '', /^(\^|>=)?\d+\.\d+\.\d+$/, 'engines.vscode is a version range vsce accepts');
    assert.ok(!(pkg.activationEvents ?? []).includes('*'), 'no `*` activation event');
  });
});
