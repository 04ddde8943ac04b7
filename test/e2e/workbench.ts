/**
 * A VS Code window (code-server through Chromium) for the UI test files, with the steps they
 * share: run a palette command by its exact title, read and type into the terminal, open the
 * Toolbox view, take numbered screenshots. scripts/e2e.sh runs every out/test/e2e/ui*.test.js
 * on a fresh folder of its own and sets E2E_BASE_URL, E2E_EXT_PATH, E2E_FOLDER, E2E_SHOTS and
 * TOOLBOX_VSCODE_NAME_PREFIX; a UI test file skips itself without them (`uiTestsSkip`).
 */
import { basename, join } from 'node:path';
import { after, before } from 'node:test';
import { launchBrowser, workbenchUrl, type Browser, type Page } from './browser';

export const base = process.env.E2E_BASE_URL;
export const prefix = process.env.TOOLBOX_VSCODE_NAME_PREFIX ?? '';
export const shots = process.env.E2E_SHOTS ?? 'test-output/e2e';
/** The folder this file's window has open (a fresh one per UI test file). */
export const folder = process.env.E2E_FOLDER ?? '';
/** The timeout of a test that may build the runtime image. */
export const LONG = Number(process.env.E2E_LONG_MS ?? 540_000);
/** `describe(…, { skip: uiTestsSkip })`: the UI tests only run through scripts/e2e.sh. */
export const uiTestsSkip: false | string = base ? false : 'run through scripts/e2e.sh';

export interface Workbench {
  browser: Browser;
  page: Page;
  /** Saves `<shotPrefix><NN>-<name>.png` after notifications had time to slide in. */
  shot(name: string): Promise<void>;
  /** Wraps a test body: on failure it saves FAIL-<shotPrefix><name>.png of what the window showed. */
  scenario(name: string, body: () => Promise<void>): () => Promise<void>;
  /** Runs the palette command whose label is exactly `title` (Enter would take the first hit). */
  runCommand(title: string): Promise<void>;
  /**
   * Types `query` into the command palette and returns the labels it lists, in order (at least
   * two rows); takes screenshot `shotName` when given, then closes the palette.
   */
  paletteLabels(query: string, shotName?: string): Promise<string[]>;
  /** Text of the visible terminal. */
  terminalText(): Promise<string>;
  /** Waits (30 s) until the visible terminal shows `pattern`; returns what it captured. */
  waitForTerminal(pattern: RegExp): Promise<string>;
  /** Types a command into the active terminal at its prompt; returns what `pattern` captured. */
  ask(command: string, pattern: RegExp): Promise<string>;
  /**
   * Presses `key` in the active terminal until its text matches `until` (20 s): the keyboard is
   * taken into the terminal first, and the key pressed again only while the screen says it never
   * arrived (a full-screen program still drawn, say).
   */
  pressInTerminal(key: string, until: RegExp): Promise<void>;
  /** Shows the Toolbox view in the side bar. */
  openToolboxView(): Promise<void>;
  /**
   * Hovers `target` until `tip` (its tooltip) shows. A view redrawn while the pointer is on it can
   * drop the hover, so the pointer leaves and comes back, up to six times; fails saying `what`.
   */
  hoverUntilShown(target: Page, tip: Page, what: string): Promise<void>;
  /**
   * Clicks the inline action `label` of tree row `row` until `shown` appears. A tree redrawn
   * between the hover and the click (an engine event) can swallow the click, so it hovers and
   * clicks again, up to four times; `shown` (a modal) blocks a second click once it is up.
   */
  clickRowAction(row: Page, label: string, shown: Page): Promise<void>;
  /**
   * The first row of view `view` whose text has `target`, under the top-level row whose text has
   * `under`, opening that row and, beneath it, the rows whose text has `open` on the way. It walks
   * the tree with the keyboard (the list scrolls to the focused row), so it finds rows below the
   * fold of a short view and never clicks a row that a redraw moved; fails after 120 rows.
   */
  revealRow(view: string, under: string, target: string, open: string): Promise<Page>;
  /** The Workspaces view's description (the engine it talks to), once it names one; screenshot `shotName`. */
  engineDescription(shotName: string): Promise<string>;
  /** Reloads the window and selects the folder's terminal (a held session: it comes back by itself). */
  reloadToTerminal(): Promise<void>;
  /**
   * The shown Output channel filtered for `filter`, once a line matching `line` is there; answers
   * the filtered text, wrapped lines joined, white space as plain spaces. The Output view renders
   * visible lines only (later lines can scroll one out) and can clear the filter when it switches to
   * the channel, so the filter is typed again until the line shows (six times at most).
   */
  outputLines(filter: string, line: RegExp): Promise<string>;
  close(): Promise<void>;
}

export interface WorkbenchOptions {
  /** Leave the side bar at its default width (it is widened for the screenshots otherwise). */
  defaultWidth?: boolean;
  /** Another code-server than scripts/e2e.sh's (ui-vsix.test.ts starts one with its own extensions dir). */
  base?: string;
  /** false: no extension loaded from source, so the window runs only what code-server has installed. */
  fromSource?: boolean;
}

/**
 * Opens `folder` in a new window with the extension loaded from source (unless `fromSource` is
 * false), the Toolbox view shown, the side bar widened for the screenshots unless `defaultWidth`.
 */
export async function openWorkbench(shotPrefix = '', options: WorkbenchOptions = {}): Promise<Workbench> {
  const browser: Browser = await launchBrowser();
  const page: Page = await browser.newPage({ viewport: { width: 1400, height: 850 } });
  page.on('pageerror', (e: Error) => console.log('  [pageerror]', String(e).slice(0, 200)));
  let step = 0;

  const shot = async (name: string) => {
    await page.waitForTimeout(800); // notifications slide in
    step += 1;
    await page.screenshot({ path: join(shots, `${shotPrefix}${String(step).padStart(2, '0')}-${name}.png`) });
  };

  const scenario = (name: string, body: () => Promise<void>) => async () => {
    try {
      await body();
    } catch (err) {
      await page.screenshot({ path: join(shots, `FAIL-${shotPrefix}${name}.png`) }).catch(() => undefined);
      throw err;
    }
  };

  /**
   * The command palette's input. F1 opens it, unless the focused widget keeps the key (a Settings
   * editor's control, seen in CI): then the title bar's command center opens it.
   */
  const openPalette = async () => {
    const input = page.locator('.quick-input-widget input');
    await page.keyboard.press('F1');
    const shown = await input
      .waitFor({ state: 'visible', timeout: 5_000 })
      .then(() => true)
      .catch(() => false);
    if (!shown) {
      await page.locator('.command-center .command-center-center').first().click();
      await input.waitFor({ state: 'visible' });
    }
    return input;
  };

  const runCommand = async (title: string) => {
    const input = await openPalette();
    await input.fill(`>${title}`);
    const exact = new RegExp(`^${title.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}$`);
    const row = page
      .locator('.quick-input-list .monaco-list-row')
      .filter({ has: page.locator('.label-name', { hasText: exact }) })
      .first();
    await row.waitFor();
    await row.click();
  };

  const paletteLabels = async (query: string, shotName?: string): Promise<string[]> => {
    const input = await openPalette();
    await input.fill(`>${query}`);
    const labels = page.locator('.quick-input-list .monaco-list-row .label-name');
    await labels.nth(1).waitFor();
    const ranked = (await labels.allInnerTexts()) as string[];
    if (shotName) await shot(shotName);
    await page.keyboard.press('Escape');
    return ranked;
  };

  // DOM renderer: e2e.sh turns GPU acceleration off, so the rows are text.
  const terminalText = async (): Promise<string> => {
    const rows = page.locator('.terminal-wrapper.active .xterm-rows').filter({ visible: true });
    if ((await rows.count()) === 0) return '';
    return ((await rows.first().innerText()) as string).replace(/\u00a0/g, ' ');
  };

  const waitForTerminal = async (pattern: RegExp): Promise<string> => {
    const deadline = Date.now() + 30_000;
    for (;;) {
      const m = pattern.exec(await terminalText());
      if (m) return m[1] ?? m[0];
      if (Date.now() > deadline) throw new Error(`The terminal never showed ${pattern}; it shows:\n${await terminalText()}`);
      await page.waitForTimeout(200);
    }
  };

  /** Whether the keyboard is in the active terminal (xterm.js takes keys through its textarea). */
  const terminalHasFocus = async (): Promise<boolean> =>
    (await page.evaluate(
      `!!document.activeElement?.classList.contains('xterm-helper-textarea') && !!document.activeElement.closest('.terminal-wrapper.active')`,
    )) as boolean;

  /** Clicks the active terminal until the keyboard is in it (10 s). */
  const focusTerminal = async (): Promise<void> => {
    const terminal = page.locator('.terminal-wrapper.active .xterm').filter({ visible: true }).first();
    // Top left: notification toasts (bottom right) must not take the click.
    await terminal.click({ position: { x: 12, y: 8 } });
    for (const end = Date.now() + 10_000; !(await terminalHasFocus()) && Date.now() < end;) {
      await page.waitForTimeout(100);
      await terminal.click({ position: { x: 12, y: 8 } });
    }
  };

  const pressInTerminal = async (key: string, until: RegExp): Promise<void> => {
    for (let attempt = 1; ; attempt++) {
      await focusTerminal();
      await page.keyboard.press(key);
      for (const end = Date.now() + 5_000; Date.now() < end;) {
        if (until.test(await terminalText())) return;
        await page.waitForTimeout(200);
      }
      if (attempt >= 4) throw new Error(`The terminal never showed ${until} after ${key}; it shows:\n${await terminalText()}`);
    }
  };

  const ask = async (command: string, pattern: RegExp): Promise<string> => {
    // zsh's prompt ends in `%` or `#`: wait for it so the line editor is up before typing.
    for (const end = Date.now() + 30_000; !/[#%$] *$/.test((await terminalText()).trimEnd() + ' ') && Date.now() < end;) {
      await page.waitForTimeout(200);
    }
    // The shell echoes what it is typed: its first characters on screen say the keys arrived.
    const echo = command.slice(0, 12);
    for (let attempt = 1; ; attempt++) {
      // After a reload the workbench can move the keyboard elsewhere as it restores its parts: type once it is here.
      await focusTerminal();
      const before = (await terminalText()).split(echo).length;
      await page.keyboard.type(command);
      let echoed = false;
      for (const end = Date.now() + 10_000; !echoed && Date.now() < end;) {
        echoed = (await terminalText()).split(echo).length > before;
        if (!echoed) await page.waitForTimeout(200);
      }
      // Keys the workbench dropped (focus taken between the check and the typing): type again.
      if (echoed || attempt >= 3) break;
    }
    await page.keyboard.press('Enter');
    return waitForTerminal(pattern);
  };

  const openToolboxView = async () => {
    const tab = page.locator('.activitybar').getByRole('tab', { name: /Toolbox/ });
    await tab.waitFor({ timeout: 60_000 });
    if ((await tab.getAttribute('aria-selected')) !== 'true') await tab.click();
  };

  const hoverUntilShown = async (target: Page, tip: Page, what: string) => {
    for (let attempt = 1; ; attempt++) {
      await page.mouse.move(900, 300);
      await target.hover();
      const shown = await tip.waitFor({ timeout: 3_000 }).then(
        () => true,
        () => false,
      );
      if (shown) return;
      if (attempt >= 6) throw new Error(`${what} never showed`);
    }
  };

  const clickRowAction = async (row: Page, label: string, shown: Page) => {
    for (let attempt = 1; ; attempt++) {
      await row.hover();
      await row.locator(`.action-label[aria-label="${label}"]`).click();
      const up = await shown.waitFor({ timeout: 10_000 }).then(
        () => true,
        () => false,
      );
      if (up) return;
      if (attempt >= 4) throw new Error(`"${label}" never showed what it should`);
      await page.mouse.move(900, 300);
    }
  };

  const revealRow = async (view: string, under: string, target: string, open: string): Promise<Page> => {
    const pane = page.locator('.pane', { has: page.locator('.pane-header', { hasText: view }) });
    const list = pane.locator('.monaco-list').first();
    const focused = pane.locator('.monaco-list-row.focused').first();
    // A key goes to the tree only while it has the keyboard: a terminal or a notification can take
    // it. The list itself takes it back: a click on a row could land on the sticky header over it.
    const press = async (key: string): Promise<void> => {
      // A string: this file is compiled without the DOM's types.
      if (!(await list.evaluate('el => el.contains(document.activeElement)'))) await list.focus();
      await page.keyboard.press(key);
    };
    const changed = async (read: () => Promise<string | null>, before: string | null): Promise<boolean> => {
      for (let wait = 0; wait < 20; wait++) {
        if ((await read().catch(() => before)) !== before) return true;
        await page.waitForTimeout(100);
      }
      return false;
    };
    let seen: string[] = [];
    // The row may not be there yet (an engine event still to come): walk again, for 30 s.
    for (const end = Date.now() + 30_000; Date.now() < end;) {
      await press('Home');
      let inside = false;
      seen = [];
      for (let step = 0; step < 120; step++) {
        await focused.waitFor({ timeout: 5_000 });
        const text = (await focused.innerText()).replace(/\s+/g, ' ');
        const top = (await focused.getAttribute('aria-level')) === '1';
        if (top) inside = text.includes(under);
        if (inside && text.includes(target)) return focused;
        seen.push(text);
        const expanded = () => focused.getAttribute('aria-expanded');
        if ((await expanded()) === 'false' && inside && (top || text.includes(open))) {
          await press('ArrowRight');
          await changed(expanded, 'false'); // not yet: the next step looks at the same row again
          continue;
        }
        const index = () => focused.getAttribute('data-index');
        const before = await index();
        await press('ArrowDown');
        if (!(await changed(index, before))) break; // the last row
      }
      await page.waitForTimeout(1_000);
    }
    throw new Error(`no row "${target}" under "${under}" in ${view}; rows walked: ${seen.join(' | ').slice(0, 1500)}`);
  };

  const engineDescription = async (shotName: string) => {
    const header = page.locator('.pane-header', { hasText: 'Workspaces' });
    const description = header.locator('.description', { hasText: /^Docker \d/ });
    await description.first().waitFor({ timeout: 60_000 });
    await shot(shotName);
    return (await description.first().innerText()).trim();
  };

  const reloadToTerminal = async () => {
    await runCommand('Developer: Reload Window');
    await page.locator('.monaco-workbench').waitFor({ timeout: 60_000 });
    const tab = page.locator('.terminal-tabs-entry', { hasText: basename(folder) }).first();
    const single = page.locator('.single-terminal-tab', { hasText: basename(folder) }).first();
    await tab.or(single).first().waitFor({ timeout: 60_000 });
    if (await tab.isVisible()) await tab.click();
    await page.locator('.terminal-wrapper.active .xterm-rows').filter({ visible: true }).first().waitFor({ timeout: 60_000 });
  };

  const outputLines = async (filterText: string, line: RegExp) => {
    const filter = page.locator('.part.panel input[placeholder="Filter"]').first();
    await filter.waitFor({ timeout: 15_000 });
    const shownLine = page.locator('.part.panel .view-line', { hasText: line }).first();
    for (let attempt = 1; ; attempt++) {
      await filter.fill(filterText);
      const shown = await shownLine.waitFor({ timeout: 10_000 }).then(
        () => true,
        () => false,
      );
      if (shown) break;
      if (attempt >= 6) throw new Error(`the Output view never showed ${String(line)} under the filter "${filterText}"`);
    }
    // A long line wraps over several view lines, which Monaco may keep in any DOM order: by their top.
    const text = (await page.evaluate(
      `[...document.querySelectorAll('.part.panel .view-lines .view-line')].sort((a, b) => parseFloat(a.style.top) - parseFloat(b.style.top)).map((l) => l.textContent).join('')`,
    )) as string;
    return text.replace(/\s+/g, ' ');
  };

  const extensionPath = options.fromSource === false ? undefined : process.env.E2E_EXT_PATH!;
  await page.goto(workbenchUrl(options.base ?? base!, folder, extensionPath), { waitUntil: 'domcontentloaded' });
  await page.locator('.monaco-workbench').waitFor({ timeout: 60_000 });
  await openToolboxView();
  // A wider side bar, so the screenshots show the tree items' descriptions.
  const box = options.defaultWidth ? null : await page.locator('.part.sidebar').boundingBox();
  if (box) {
    await page.mouse.move(box.x + box.width + 1, box.y + 200);
    await page.mouse.down();
    await page.mouse.move(box.x + box.width + 260, box.y + 200, { steps: 5 });
    await page.mouse.up();
  }
  return {
    browser,
    page,
    shot,
    scenario,
    runCommand,
    paletteLabels,
    terminalText,
    waitForTerminal,
    ask,
    pressInTerminal,
    openToolboxView,
    hoverUntilShown,
    clickRowAction,
    revealRow,
    engineDescription,
    reloadToTerminal,
    outputLines,
    close: () => browser.close(),
  };
}

/**
 * The workbench of a describe block: registers a `before` hook that opens it (after the `before`
 * hooks registered above the call) and an `after` hook that closes it. The answered `wb` and `page`
 * stand for the opened window's Workbench and page: use them in hooks and tests, not while the
 * describe block is being defined (they throw until the window is open).
 */
export function workbenchForSuite(
  shotPrefix = '',
  options: WorkbenchOptions & {
    /** Runs in the `before` hook just before the window opens: what the folder must hold when the extension starts. */
    beforeOpen?: () => unknown;
  } = {},
): { wb: Workbench; page: Page } {
  let opened: Workbench | undefined;
  before(async () => {
    await options.beforeOpen?.();
    opened = await openWorkbench(shotPrefix, options);
  });
  after(async () => {
    await opened?.close();
  });
  const current = (): Workbench => {
    if (!opened) throw new Error(`the ${shotPrefix} workbench is not open yet (it opens in the suite's before hook)`);
    return opened;
  };
  return { wb: forwardTo(current), page: forwardTo(() => current().page) };
}

/** An object whose properties are those of `target()` at the time they are read (methods bound to it). */
function forwardTo<T extends object>(target: () => T): T {
  return new Proxy({} as T, {
    get: (_, key) => {
      const t = target();
      const value: unknown = Reflect.get(t, key);
      return typeof value === 'function' ? (value as (...args: unknown[]) => unknown).bind(t) : value;
    },
  });
}
