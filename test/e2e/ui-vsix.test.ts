/**
 * Issue 31 in a real VS Code (code-server through Chromium): the VSIX that CI builds
 * (dist/toolbox.vsix, from scripts/release-dry-run.sh, which npm test runs before the UI tests)
 * installs into code-server, and the Extensions view shows its page as whoever installs it sees it: the
 * icon, the display name, the README (Details) with its Screenshots section's images loaded, and
 * the Changelog with the 0.1.0 section.
 *
 * The installed copy must not be shadowed by the one scripts/e2e.sh loads from source for every
 * other UI test, so this file starts a code-server of its own (free loopback port, its own
 * user-data-dir and extensions dir under a temp dir, stopped at the end) with only the VSIX
 * installed, and opens its window without the development extension (openWorkbench's
 * `fromSource: false`).
 *
 * vsce rewrites the README's relative image links (docs/media/*.png) to the repository's raw/HEAD
 * URLs, which this machine cannot reach: the browser context answers every github.com request
 * from the repository's docs/media, records the URLs, and the test holds them to the expected
 * rewrite, so a broken one fails.
 * Screenshots land in test-output/e2e/ (vsix-NN-*.png).
 */
import assert from 'node:assert/strict';
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, openSync, readFileSync, rmSync, statSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { openWorkbench, uiTestsSkip, type Workbench } from './workbench';

const ROOT = resolve(__dirname, '../../..');
const VSIX = join(ROOT, 'dist/toolbox.vsix');
const pkg = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as {
  name: string;
  publisher: string;
  displayName: string;
  version: string;
};
const ID = `${pkg.publisher}.${pkg.name}`;
/** Where vsce points the README's relative links (package.json's repository, branch HEAD). */
const RAW = 'https://github.com/toolbox-dev/toolbox-vscode/raw/HEAD/';
/** The README's screenshots, in order: its relative `docs/media/*.png` image links. */
const screenshots = [...readFileSync(join(ROOT, 'README.md'), 'utf8').matchAll(/!\[[^\]]*\]\((docs\/media\/[^)\s]+\.png)\)/g)].map(
  (m) => m[1],
);
const CODE_SERVER = process.env.E2E_CODE_SERVER ?? '/var/cache/toolbox-e2e/cs/node_modules/.bin/code-server';

/** What the tests read of an <img> in the page (this project compiles without the DOM types). */
interface Img {
  complete: boolean;
  naturalWidth: number;
  src: string;
}

/** A PNG's width, from its IHDR chunk. */
const pngWidth = (file: string) => readFileSync(file).readUInt32BE(16);

function freePort(): Promise<number> {
  return new Promise((done, fail) => {
    const s = createServer().listen(0, '127.0.0.1', () => {
      const { port } = s.address() as { port: number };
      s.close(() => done(port));
    });
    s.on('error', fail);
  });
}

describe('The packaged VSIX installed into code-server (issue 31)', { skip: uiTestsSkip }, () => {
  let wb: Workbench;
  let page: Workbench['page'];
  let run: string;
  let server: ChildProcess | undefined;
  /** The test's code-server's extensions dir: only the VSIX is installed there. */
  let extensions: string;
  /** Every github.com URL the window asked for (the route answers them all). */
  const requested: string[] = [];

  before(
    async () => {
      assert.ok(screenshots.length > 0, 'README.md links no docs/media/*.png screenshot');
      // npm test packages it (scripts/test.sh); run alone, this file packages it the same way.
      const sources = ['README.md', 'CHANGELOG.md', 'package.json'].map((f) => join(ROOT, f));
      const stale = existsSync(VSIX) && sources.some((f) => statSync(f).mtimeMs > statSync(VSIX).mtimeMs);
      if (!existsSync(VSIX) || stale) {
        console.log(
          `dist/toolbox.vsix is ${stale ? 'older than the README, changelog or manifest' : 'missing'}: building it with \`bash scripts/release-dry-run.sh\``,
        );
        execFileSync('bash', ['scripts/release-dry-run.sh'], { cwd: ROOT, stdio: ['ignore', 'ignore', 'inherit'] });
      }
      run = mkdtempSync(join(tmpdir(), 'toolbox-vsix-'));
      const userData = join(run, 'ud');
      extensions = join(run, 'exts');
      mkdirSync(join(userData, 'User'), { recursive: true });
      // The settings scripts/e2e.sh writes (no start page, tips, update checks or telemetry).
      const settings = join(process.env.E2E_USER_DATA ?? '', 'User/settings.json');
      if (process.env.E2E_USER_DATA && existsSync(settings)) copyFileSync(settings, join(userData, 'User/settings.json'));
      const cs = (...args: string[]) =>
        execFileSync(CODE_SERVER, [...args, '--extensions-dir', extensions, '--user-data-dir', userData], { encoding: 'utf8' });
      const installed = cs('--install-extension', VSIX);
      assert.match(installed, /Extension 'toolbox\.vsix' was successfully installed/, installed);
      assert.deepEqual(cs('--list-extensions', '--show-versions').trim().split('\n'), [`${ID}@${pkg.version}`]);

      const port = await freePort();
      const log = openSync(join(run, 'code-server.log'), 'w');
      // Started as scripts/e2e.sh starts the shared one; detached: a process group of its own,
      // which after() stops.
      server = spawn(
        CODE_SERVER,
        [
          ...['--bind-addr', `127.0.0.1:${port}`, '--auth', 'none', '--disable-telemetry', '--disable-update-check'],
          ...['--disable-workspace-trust', '--disable-getting-started-override'],
          ...['--user-data-dir', userData, '--extensions-dir', extensions],
        ],
        { detached: true, stdio: ['ignore', log, log] },
      );
      const base = `http://127.0.0.1:${port}`;
      for (const end = Date.now() + 30_000; ;) {
        const up = await fetch(`${base}/healthz`).then(
          (r) => r.ok,
          () => false,
        );
        if (up) break;
        if (Date.now() > end) throw new Error(`code-server did not answer:\n${readFileSync(join(run, 'code-server.log'), 'utf8')}`);
        await new Promise((r) => setTimeout(r, 200));
      }

      // openWorkbench waits for the Toolbox activity bar entry: the installed extension's.
      wb = await openWorkbench('vsix-', { base, fromSource: false, defaultWidth: true });
      page = wb.page;
      // Context-wide, so the README's webview (nested iframes) is covered too.
      await page.context().route('https://github.com/**', async (route: Workbench['page']) => {
        const url: string = route.request().url();
        requested.push(url);
        const rel = url.startsWith(RAW) ? url.slice(RAW.length) : '';
        const file = join(ROOT, rel);
        if (/^docs\/media\/[\w.-]+\.png$/.test(rel) && existsSync(file)) {
          await route.fulfill({ status: 200, contentType: 'image/png', body: readFileSync(file) });
        } else {
          await route.fulfill({ status: 404, body: 'not a README screenshot' });
        }
      });
    },
    { timeout: 240_000 },
  );

  after(async () => {
    await wb?.close();
    if (server?.pid && server.exitCode === null) {
      const exited = new Promise((r) => server!.once('exit', r));
      process.kill(-server.pid, 'SIGTERM'); // the process group: code-server and its extension hosts
      await exited;
    }
    if (run) rmSync(run, { recursive: true, force: true });
  });

  const editor = () => page.locator('.extension-editor');
  /** The text of every h2 in a webview document, as an expression. */
  const h2s = `[...document.querySelectorAll('h2')].map((h) => h.textContent.trim())`;
  /**
   * The webview frame (the extension editor's README or changelog, two iframes down) whose
   * document satisfies `test`, an expression; fails after 30 s naming `what`.
   */
  const webviewFrame = async (what: string, test: string): Promise<Workbench['page']> => {
    for (const end = Date.now() + 30_000; Date.now() < end; await page.waitForTimeout(250)) {
      for (const frame of page.frames()) {
        if (!frame.url().includes('/webview/browser/pre/')) continue;
        if (await frame.evaluate(test).catch(() => false)) return frame;
      }
    }
    throw new Error(`The ${what} tab never showed`);
  };

  it('lists the installed extension once, and opens its page with the icon and the display name', { timeout: 60_000 }, async () =>
    wb.scenario('page', async () => {
      await page
        .locator('.activitybar')
        .getByRole('tab', { name: /^Extensions/ })
        .click();
      const search = page.locator('.extensions-viewlet .suggest-input-container');
      await search.waitFor();
      await search.click();
      await page.keyboard.type('@installed');
      await page.keyboard.press('Escape'); // the filter suggestion
      // The view runs the query once typing pauses (half a second), with the side bar's progress
      // bar going, and drops the list it showed before (the default view's) meanwhile.
      const progress = page.locator('.part.sidebar .monaco-progress-container.active');
      await progress.waitFor({ timeout: 5_000 }).catch(() => undefined); // a quick query may end unseen
      await progress.waitFor({ state: 'hidden', timeout: 30_000 });
      const rows = page.locator('.extensions-viewlet .monaco-list-row');
      await rows.first().waitFor({ timeout: 30_000 });
      const listed = (await rows.allInnerTexts()) as string[];
      assert.equal(listed.length, 1, `only the VSIX is installed, and no development copy is listed beside it:\n${listed.join('\n')}`);
      assert.match(listed[0], new RegExp(`^${pkg.displayName}`));
      assert.doesNotMatch(await page.title(), /Extension Development Host/, 'the window loads no extension from source');
      await rows.first().click();
      const name = editor().locator('.header .name').first();
      await name.waitFor({ timeout: 30_000 });
      assert.equal((await name.innerText()).trim(), pkg.displayName);
      const icon = editor().locator('.header .icon-container img.icon').first();
      await page.waitForFunction((img: Img) => img.complete && img.naturalWidth > 0, await icon.elementHandle(), { timeout: 15_000 });
      const { src, naturalWidth } = (await icon.evaluate((img: Img) => ({ src: img.src, naturalWidth: img.naturalWidth }))) as Img;
      assert.equal(naturalWidth, pngWidth(join(ROOT, 'extension/media/icon.png')), 'the icon loads at its own size');
      // The page is the installed copy's: the icon comes from the VSIX's files in the extensions dir.
      const path = new URL(src).searchParams.get('path');
      assert.equal(path, join(extensions, `${ID}-${pkg.version}`, 'extension/media/icon.png'), src);
      const info = (await editor().locator('.more-info').first().innerText()).replace(/\s+/g, ' ');
      assert.match(info, new RegExp(`Version ${pkg.version.replace(/\./g, '\\.')} `), info);
      assert.match(info, /Source VSIX/, info);
    })(),
  );

  it('shows the README (Details) with the Screenshots section, its images loaded from the rewritten URLs', { timeout: 60_000 }, async () =>
    wb.scenario('readme', async () => {
      const readme = await webviewFrame('Details', `${h2s}.includes('Screenshots')`);
      await wb.shot('details');
      // The images between the "Screenshots" heading and the next one.
      const section = `(() => {
        const start = [...document.querySelectorAll('h2')].find((h) => h.textContent.trim() === 'Screenshots');
        const imgs = [];
        for (let e = start.nextElementSibling; e && e.tagName !== 'H2'; e = e.nextElementSibling) imgs.push(...e.querySelectorAll('img'));
        return imgs;
      })()`;
      await readme.waitForFunction(`${section}.length > 0 && ${section}.every((i) => i.complete)`, undefined, { timeout: 30_000 });
      const images = JSON.parse(
        await readme.evaluate(`JSON.stringify(${section}.map((i) => ({ src: i.src, naturalWidth: i.naturalWidth })))`),
      ) as Pick<Img, 'src' | 'naturalWidth'>[];
      assert.deepEqual(
        images.map((i) => i.src),
        screenshots.map((rel) => RAW + rel),
        'vsce rewrote each docs/media link to the raw/HEAD URL',
      );
      for (const [n, image] of images.entries()) {
        assert.equal(image.naturalWidth, pngWidth(join(ROOT, screenshots[n])), `${image.src} loaded`);
      }
      assert.deepEqual(
        [...new Set(requested)].sort(),
        screenshots.map((rel) => RAW + rel).sort(),
        'github.com was asked for the screenshots only',
      );
      await readme.evaluate(`[...document.querySelectorAll('h2')].find((h) => h.textContent.trim() === 'Screenshots').scrollIntoView()`);
      await wb.shot('readme-screenshots');
      await readme.evaluate(`${section}.at(-1).scrollIntoView({ block: 'end' })`);
      await wb.shot('readme-last-screenshot');
    })(),
  );

  it('shows the Changelog tab with the section for this version', { timeout: 60_000 }, async () =>
    wb.scenario('changelog', async () => {
      await editor()
        .locator('.navbar .action-label', { hasText: /^changelog$/i })
        .click();
      const version = pkg.version.replace(/\./g, '\\.');
      const changelog = await webviewFrame('Changelog', `${h2s}.some((t) => /^\\[${version}\\]/.test(t))`);
      const headings = JSON.parse(
        await changelog.evaluate(
          `JSON.stringify([...document.querySelectorAll('h1, h2, h3')].map((h) => h.tagName + ' ' + h.textContent.trim()))`,
        ),
      ) as string[];
      assert.equal(headings[0], 'H1 Changelog', headings.join('\n'));
      const at = headings.findIndex((h) => h.startsWith(`H2 [${pkg.version}]`));
      assert.ok(at > 0, headings.join('\n'));
      assert.equal(headings[at + 1], 'H3 Added', 'the section lists what was added');
      await wb.shot('changelog');
    })(),
  );
});
