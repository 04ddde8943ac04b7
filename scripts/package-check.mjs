// The checks a Marketplace or Open VSX upload would run on this extension, run here without a
// network and without publishing; any problem, a warning included, fails (exit 1).
//
//   npm run package:check        (builds first: vsce refuses a VSIX whose `main` is missing)
//   node scripts/package-check.mjs
//
// 1. vsce, in process, through its own functions (node_modules/@vscode/vsce/out/package.js):
//    readManifest and validateManifestForPackaging (what `vsce package` refuses), then pack, the
//    whole `vsce package --no-dependencies`: every processor (README and CHANGELOG links and
//    images, LICENSE, icon, entry points, extensionKind, repository, `*` activation, secrets).
//    Its log's warn and error and its prompts ("Do you want to continue?", answered no) are
//    caught: each one is a problem here.
// 2. The VSIX's files: what must be in it, nothing outside the .vscodeignore allowlist, and the
//    runtime image's build context whole (its tag hashes every file: runtimeContextFiles in
//    extension/src/engine/imageBuild.ts).
// 3. ovsx, through its own functions (node_modules/ovsx/lib): `ovsx publish` first runs
//    checkLicense (check-license.js: validateManifest from util.js, then isLicenseOk, else it
//    asks to license the extension under MIT), then vsce's createVSIX (1. above), then reads the
//    namespace from the VSIX's package.json (readVSIXPackage in zip.js) and uploads at most
//    DEFAULT_PUBLISH_SIZE bytes (registry.js). `ovsx verify-pat` needs the registry: not run.
// 4. What the Open VSX server checks on upload (its ExtensionValidator: validateNamespace,
//    validateExtensionName, validateMetadata), which ovsx does not check first; mirrored below
//    from the server's rules, on the package.json inside the VSIX.
// 5. What the Marketplace checks on upload that vsce 3 does not (scripts/marketplace-rules.json):
//    categories from VS Code's list, at most 30 keywords, a PNG icon at least 128 px square.
//    Plus what makes the Marketplace page right: README images that exist (vsce rewrites relative
//    ones to the repository's raw/HEAD URLs without looking) and a CHANGELOG section for this version.
import { build } from 'esbuild';
import { existsSync, mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const require = createRequire(import.meta.url);
const vsce = require('@vscode/vsce/out/package.js');
const vsceUtil = require('@vscode/vsce/out/util.js');
const ovsx = require('ovsx');
const { readVSIXPackage } = require('ovsx/lib/zip.js');
const { DEFAULT_PUBLISH_SIZE } = require('ovsx/lib/registry.js');
const rules = JSON.parse(readFileSync(join(root, 'scripts/marketplace-rules.json'), 'utf8'));

const problems = [];
const problem = (check, message) => problems.push(`${check}: ${message}`);
const ok = (check, detail = '') => console.log(`ok    ${check}${detail ? ` (${detail})` : ''}`);
/** Runs one check; a throw is a problem, named after the check. */
const check = async (name, body) => {
  const before = problems.length;
  try {
    const detail = await body();
    if (problems.length === before) ok(name, detail);
  } catch (err) {
    problem(name, err instanceof Error ? err.message : String(err));
  }
  for (const p of problems.slice(before)) console.log(`FAIL  ${p}`);
};

// ---- 1. vsce ---------------------------------------------------------------------------------
const manifest = await vsce.readManifest(root);
await check('vsce validateManifestForPackaging', () => {
  vsce.validateManifestForPackaging(manifest);
});

const dir = mkdtempSync(join(tmpdir(), 'toolbox-package-check-'));
const vsixPath = join(dir, 'toolbox.vsix');
let files = [];
await check('vsce package --no-dependencies, no warning', async () => {
  const { log } = vsceUtil;
  const saved = { warn: log.warn, error: log.error, info: log.info, read: vsceUtil.read, consoleWarn: console.warn };
  const caught = [];
  log.warn = (msg) => caught.push(`warning: ${msg}`);
  log.error = (msg) => caught.push(`error: ${msg}`);
  log.info = () => undefined; // the file tree; the summary below says what matters
  vsceUtil.read = async (prompt) => (caught.push(`prompt: ${prompt.trim()}`), 'n');
  console.warn = (...args) => caught.push(`console.warn: ${args.join(' ')}`);
  try {
    ({ files } = await vsce.pack({ cwd: root, packagePath: vsixPath, dependencies: false }));
  } finally {
    Object.assign(log, { warn: saved.warn, error: saved.error, info: saved.info });
    vsceUtil.read = saved.read;
    console.warn = saved.consoleWarn;
    for (const c of caught) problem('vsce package', c);
  }
  return `${files.length} files, ${(statSync(vsixPath).size / 1024).toFixed(1)} KiB`;
});
if (!existsSync(vsixPath)) {
  console.log(`FAIL  vsce package: no VSIX was written, so nothing else is checked`);
  problems.push('no VSIX');
  finish();
}

// ---- 2. the VSIX's files -----------------------------------------------------------------------
await check('VSIX holds what an installed extension needs, and nothing else', async () => {
  const paths = new Set(files.map((f) => f.path));
  const required = [
    'extension/package.json',
    'extension/readme.md',
    'extension/changelog.md',
    'extension/LICENSE.txt',
    `extension/${manifest.icon}`,
    `extension/${manifest.main.replace(/^\.\//, '')}`,
    'extension/dist/backend.js',
    'extension/schemas/toolbox.schema.json',
  ];
  for (const p of required) if (!paths.has(p)) problem('VSIX', `${p} is missing`);
  // The VSIX format's own two files, then what .vscodeignore lets in.
  const allowed =
    /^(extension\.vsixmanifest|\[Content_Types\]\.xml|extension\/(package\.json|readme\.md|changelog\.md|LICENSE\.txt|dist\/(extension|backend)\.js|schemas\/toolbox\.schema\.json|extension\/media\/.+|images\/runtime\/.+|shims\/.+))$/;
  for (const p of paths) if (!allowed.test(p)) problem('VSIX', `${p} is not something an installed extension uses (.vscodeignore)`);

  const out = await build({
    entryPoints: [join(root, 'extension/src/engine/imageBuild.ts')],
    bundle: true,
    write: false,
    platform: 'node',
    format: 'cjs',
    external: ['dockerode'],
    logLevel: 'error',
  });
  const mod = { exports: {} };
  new Function('module', 'exports', 'require', out.outputFiles[0].text)(mod, mod.exports, require);
  const context = mod.exports.runtimeContextFiles(root).map((f) => `extension/${f}`);
  const packed = [...paths].filter((p) => /^extension\/(images\/runtime|shims)\//.test(p));
  for (const f of context) if (!paths.has(f)) problem('VSIX', `${f} is part of the runtime image's build context (its tag) but not packed`);
  for (const p of packed) if (!context.includes(p)) problem('VSIX', `${p} is packed but not part of the runtime image's build context`);
  return `${context.length} build-context files`;
});

// ---- 3. ovsx -----------------------------------------------------------------------------------
await check('ovsx validateManifest', () => {
  ovsx.validateManifest(manifest);
});
await check('ovsx isLicenseOk (open-vsx.org requires a license)', async () => {
  if (!(await ovsx.isLicenseOk(root, manifest))) problem('ovsx', 'no license field and no LICENSE file: ovsx publish would ask to add MIT');
});
const vsixManifest = await readVSIXPackage(vsixPath);
await check('ovsx readVSIXPackage: the namespace it publishes to', () => {
  if (vsixManifest.publisher !== manifest.publisher)
    problem('ovsx', `the VSIX's publisher is ${vsixManifest.publisher}, package.json's ${manifest.publisher}`);
  return vsixManifest.publisher;
});
await check('ovsx publish size limit', () => {
  const size = statSync(vsixPath).size;
  if (size > DEFAULT_PUBLISH_SIZE) problem('ovsx', `the VSIX is ${size} bytes, more than ${DEFAULT_PUBLISH_SIZE}`);
  return `${size} of ${DEFAULT_PUBLISH_SIZE} bytes`;
});

// ---- 4. the Open VSX server's checks, on the VSIX's package.json --------------------------------
await check("Open VSX server's metadata checks", () => {
  const m = vsixManifest;
  const NAME = /^[\w\-+$~]+$/; // letters, digits, _ - + $ ~
  const SHORT = 255;
  // Java's Character.getType CONTROL, FORMAT, UNASSIGNED, PRIVATE_USE, LINE_ and PARAGRAPH_SEPARATOR.
  const BAD_CHAR = /[\p{Cc}\p{Cf}\p{Cn}\p{Co}\p{Zl}\p{Zp}]/u;
  const text = (value, field, limit) => {
    if (value === undefined || value === null) return;
    const s = String(value);
    if (BAD_CHAR.test(s)) problem('Open VSX', `invalid character in ${field}: ${JSON.stringify(s)}`);
    if (s.length > limit) problem('Open VSX', `${field} is longer than ${limit} characters`);
  };
  const isUrl = (value) => {
    try {
      return new URL(String(value).replace(/^git\+/, '')).host !== '';
    } catch {
      return false;
    }
  };
  const url = (value, field) => {
    if (!value) return;
    if (!isUrl(value)) problem('Open VSX', `${field} is not a URL: ${value}`);
    text(value, field, SHORT);
  };
  for (const [field, value] of [
    ['namespace (publisher)', m.publisher],
    ['name', m.name],
  ]) {
    if (!value || value === '-' || !NAME.test(value) || value.length > SHORT) problem('Open VSX', `invalid ${field}: ${value}`);
  }
  if (!m.version || ['latest', 'pre-release', 'reviews'].includes(m.version) || /[^\p{L}\p{N}$+\-,.:;_]/u.test(m.version))
    problem('Open VSX', `invalid version: ${m.version}`);
  text(m.displayName, 'displayName', SHORT);
  text(m.description, 'description', 2048);
  for (const c of m.categories ?? []) text(c, 'categories', SHORT);
  for (const k of m.keywords ?? []) text(k, 'keywords', SHORT);
  text(m.license, 'license', SHORT);
  url(m.homepage, 'homepage');
  url(typeof m.repository === 'string' ? m.repository : m.repository?.url, 'repository');
  url(typeof m.bugs === 'string' ? m.bugs : m.bugs?.url, 'bugs');
  if (m.markdown && !['github', 'standard'].includes(m.markdown)) problem('Open VSX', `markdown is ${m.markdown}, not github or standard`);
  text(m.galleryBanner?.color, 'galleryBanner.color', 16);
  if (m.galleryBanner?.theme && !['dark', 'light'].includes(m.galleryBanner.theme))
    problem('Open VSX', `galleryBanner.theme is ${m.galleryBanner.theme}, not dark or light`);
  if (m.qna !== undefined && m.qna !== '' && !['marketplace', 'false'].includes(String(m.qna)) && !isUrl(m.qna))
    problem('Open VSX', `qna is ${m.qna}: marketplace, false or a URL`);
  text(m.qna, 'qna', SHORT);
});

// ---- 5. the Marketplace's own rules, and the page ------------------------------------------------
await check('Marketplace: categories, keywords, gallery banner, icon', () => {
  const categories = manifest.categories ?? [];
  if (categories.length === 0) problem('Marketplace', 'no categories');
  for (const c of categories)
    if (!rules.categories.includes(c)) problem('Marketplace', `category ${c} is not one of ${rules.categories.join(', ')}`);
  const keywords = manifest.keywords ?? [];
  if (keywords.length > rules.maxKeywords) problem('Marketplace', `${keywords.length} keywords, more than ${rules.maxKeywords}`);
  for (const k of keywords) if (typeof k !== 'string' || k.trim() === '') problem('Marketplace', `empty keyword ${JSON.stringify(k)}`);
  if (new Set(keywords).size !== keywords.length) problem('Marketplace', 'a keyword is repeated');
  if (!/^#[0-9a-f]{6}$/i.test(manifest.galleryBanner?.color ?? '')) problem('Marketplace', 'galleryBanner.color is not a #rrggbb colour');
  if (!manifest.icon) return problem('Marketplace', 'no icon');
  const png = readFileSync(join(root, manifest.icon));
  // A PNG: the 8-byte signature, then the IHDR chunk (length, "IHDR", width, height).
  const isPng =
    png.subarray(0, 8).equals(Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a])) && png.toString('latin1', 12, 16) === 'IHDR';
  if (!isPng) return problem('Marketplace', `${manifest.icon} is not a PNG`);
  const [width, height] = [png.readUInt32BE(16), png.readUInt32BE(20)];
  if (width !== height || width < rules.iconMinSize)
    problem('Marketplace', `${manifest.icon} is ${width}×${height}, not square and at least ${rules.iconMinSize} px`);
  return `${categories.join(', ')}; ${keywords.length} keywords; icon ${width}×${height}`;
});
await check('Marketplace page: README images and the CHANGELOG section', () => {
  const readme = readFileSync(join(root, 'README.md'), 'utf8');
  const images = [...readme.matchAll(/!\[[^\]]*\]\(([^)\s]+)[^)]*\)|<img[^>]+src=["']([^"']+)["']/g)].map((m) => m[1] ?? m[2]);
  for (const src of images) {
    if (/^\w+:/.test(src)) continue; // absolute: vsce checks https and no SVG
    if (!/\.png$/i.test(src)) problem('README', `${src}: relative images are PNG`);
    if (!existsSync(join(root, src))) problem('README', `${src} does not exist (vsce links it to the repository's raw/HEAD)`);
  }
  const changelog = readFileSync(join(root, 'CHANGELOG.md'), 'utf8');
  if (!new RegExp(`^## \\[${manifest.version.replace(/\./g, '\\.')}\\]`, 'm').test(changelog))
    problem('CHANGELOG', `no "## [${manifest.version}]" section for package.json's version`);
  return `${images.length} README images`;
});

finish();

function finish() {
  rmSync(dir, { recursive: true, force: true });
  if (problems.length > 0) {
    console.log(`\npackage-check: ${problems.length} problem(s)`);
    process.exit(1);
  }
  console.log('\npackage-check: no problem, no warning');
}
