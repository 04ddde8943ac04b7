// Renders the extension's Marketplace icon, extension/media/icon.png (package.json's "icon"),
// from the SVG below with Debian's chromium (headless) driven by playwright-core, as the VS Code
// tests do (scripts/ensure-e2e-tools.sh installs both). No download, no image library.
//
//   node scripts/make-icon.mjs            writes extension/media/icon.png (128×128)
//   node scripts/make-icon.mjs --scale 4  writes /tmp/toolbox-icon@4x.png, a large copy to look at
//
// The design: a toolbox (lid, handle, latch) whose body is ribbed like a shipping container, with
// a shell prompt on the latch, on an opaque navy square (galleryBanner.color in package.json is the
// navy of its middle, so the icon sits on the Marketplace banner without a frame). The activity
// bar keeps extension/media/toolbox.svg, a monochrome outline VS Code tints.
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const SIZE = 128;
const scaleArg = process.argv.indexOf('--scale');
const scale = scaleArg >= 0 ? Number(process.argv[scaleArg + 1]) : 1;
if (!Number.isInteger(scale) || scale < 1 || scale > 8) throw new Error('--scale takes an integer from 1 to 8');
const out = scale === 1 ? join(root, 'extension/media/icon.png') : join(tmpdir(), `toolbox-icon@${scale}x.png`);

const NAVY_TOP = '#24466f';
const NAVY = '#162c48';
const AMBER = '#f2b233';
const AMBER_LIGHT = '#f7c65a';
const AMBER_DARK = '#b97a12';
const RIB = '#d69418';

const svg = `<svg xmlns="http://www.w3.org/2000/svg" width="${SIZE}" height="${SIZE}" viewBox="0 0 ${SIZE} ${SIZE}">
  <defs>
    <linearGradient id="bg" x1="0" y1="0" x2="0" y2="1">
      <stop offset="0" stop-color="${NAVY_TOP}"/>
      <stop offset="1" stop-color="${NAVY}"/>
    </linearGradient>
  </defs>
  <rect width="${SIZE}" height="${SIZE}" fill="url(#bg)"/>
  <path d="M48 40V31a5 5 0 0 1 5-5h22a5 5 0 0 1 5 5v9" fill="none" stroke="${AMBER}" stroke-width="7" stroke-linecap="round"/>
  <rect x="16" y="40" width="96" height="66" rx="8" fill="${AMBER}"/>
  <rect x="16" y="40" width="96" height="20" rx="8" fill="${AMBER_LIGHT}"/>
  <rect x="16" y="52" width="96" height="8" fill="${AMBER_LIGHT}"/>
  <rect x="16" y="59" width="96" height="4" fill="${AMBER_DARK}"/>
  <path d="M28 70v26M40 70v26M88 70v26M100 70v26" stroke="${RIB}" stroke-width="4" stroke-linecap="round"/>
  <rect x="52" y="52" width="24" height="20" rx="3" fill="${NAVY}"/>
  <path d="M57 58l5 4-5 4M64 67h7" fill="none" stroke="${AMBER_LIGHT}" stroke-width="2.5" stroke-linecap="round" stroke-linejoin="round"/>
</svg>`;

// playwright-core from the VS Code tests' tools cache drives the browser: chromium's own
// --screenshot with a fresh profile paints only the top 40 px of a 128 px window.
const tools = process.env.TOOLBOX_E2E_TOOLS ?? '/var/cache/toolbox-e2e';
let chromium;
try {
  ({ chromium } = createRequire(join(tools, 'pw', 'package.json'))('playwright-core'));
} catch {
  throw new Error(`playwright-core is not in ${tools}/pw: run scripts/ensure-e2e-tools.sh (as root) first`);
}
const browser = await chromium.launch({
  executablePath: process.env.CHROMIUM ?? '/usr/bin/chromium',
  headless: true,
  args: ['--no-sandbox', '--disable-gpu'], // root in CI and in the dev container; the page is our own markup
});
try {
  const page = await browser.newPage({ viewport: { width: SIZE, height: SIZE }, deviceScaleFactor: scale });
  await page.setContent(
    `<!doctype html><html><head><style>html,body{margin:0;overflow:hidden}svg{display:block}</style></head><body>${svg}</body></html>`,
  );
  await page.screenshot({ path: out, clip: { x: 0, y: 0, width: SIZE, height: SIZE } });
} finally {
  await browser.close();
}

// The PNG's IHDR (bytes 16..23: width, height) must say what the Marketplace is promised.
const png = readFileSync(out);
const [width, height] = [png.readUInt32BE(16), png.readUInt32BE(20)];
if (png.toString('latin1', 1, 4) !== 'PNG' || width !== SIZE * scale || height !== SIZE * scale) {
  throw new Error(`chromium wrote ${out} as ${width}×${height}, not ${SIZE * scale}×${SIZE * scale}`);
}
console.log(`${out}: ${width}×${height}, ${png.length} bytes`);
