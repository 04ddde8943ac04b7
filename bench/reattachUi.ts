/**
 * Driven by bench/reattach.ts through scripts/e2e.sh (a UI test file by shape, never part of
 * `npm test`): opens one Toolbox shell, reloads the window a few times, then ten shells and
 * reloads again, and reads from the extension's log how long after activation every reattached
 * terminal showed its screen (extension.ts logs it). Writes the samples as JSON to BENCH_OUT.
 */
import assert from 'node:assert/strict';
import { readFileSync, readdirSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { LONG, openWorkbench, uiTestsSkip, type Workbench } from '../test/e2e/workbench';

const RELOADS = Number(process.env.BENCH_RELOADS ?? 4);
const LINE =
  /Reattached (\d+) Toolbox shell\(s\): engine and holders answered (\d+) ms after activation, terminals opened at (\d+) ms, every screen shown (\d+) ms after activation\./g;

/** Every reattach line in the window's logs so far, oldest first (one log dir per extension host). */
function reattachLines(): { shells: number; ms: number; line: string }[] {
  const found: { at: number; shells: number; ms: number; line: string }[] = [];
  const walk = (dir: string): void => {
    for (const name of readdirSync(dir)) {
      const path = join(dir, name);
      const st = statSync(path);
      if (st.isDirectory()) walk(path);
      else if (name.endsWith('.log')) {
        for (const m of readFileSync(path, 'utf8').matchAll(LINE))
          found.push({ at: st.mtimeMs, shells: Number(m[1]), ms: Number(m[4]), line: m[0] });
      }
    }
  };
  walk(join(process.env.E2E_USER_DATA!, 'logs'));
  return found.sort((a, b) => a.at - b.at);
}

describe('reattach after a window reload (benchmark)', { skip: uiTestsSkip }, () => {
  let wb: Workbench;
  before(async () => {
    wb = await openWorkbench('bench-reattach-');
  });
  after(async () => {
    await wb?.close();
  });

  it('measures activation → every screen shown, for one and for ten shells', { timeout: LONG * 2 }, async () => {
    await wb.scenario('reattach', measure)();
  });

  async function measure(): Promise<void> {
    const { page, runCommand, ask } = wb;
    const samples: Record<string, number[]> = { one: [], ten: [] };

    const openShell = async (n: number) => {
      await runCommand('Toolbox: Open Toolbox Shell');
      // From two terminals on, the panel lists them as tabs: wait for the new one's tab, so the
      // terminal typed into is the new one, not the one it replaces as the active terminal.
      if (n > 1) {
        for (const end = Date.now() + LONG; (await page.locator('.terminal-tabs-entry').count()) < n && Date.now() < end;) {
          await page.waitForTimeout(200);
        }
        await page.waitForTimeout(500);
      }
      await page.locator('.terminal-wrapper.active .xterm').filter({ visible: true }).first().waitFor({ timeout: LONG });
      assert.equal(await ask(`echo "SHELL_${n}=$((${n}*2))"`, new RegExp(`SHELL_${n}=(\\d+)`)), String(n * 2));
    };

    /** Reloads the window and waits for the extension's reattach line for `shells` shells. */
    const reload = async (shells: number): Promise<number> => {
      const seen = reattachLines().length;
      await runCommand('Developer: Reload Window');
      await page.locator('.monaco-workbench').waitFor({ timeout: 60_000 });
      for (const end = Date.now() + 60_000; Date.now() < end;) {
        const lines = reattachLines();
        if (lines.length > seen) {
          const last = lines.at(-1)!;
          assert.equal(last.shells, shells, `reattached ${last.shells} shells, expected ${shells}`);
          console.log(`# ${last.line}`);
          return last.ms;
        }
        await page.waitForTimeout(250);
      }
      throw new Error('no reattach line in the log within 60 s of the reload');
    };

    await runCommand('Terminal: Kill All Terminals');
    await openShell(1);
    for (let i = 0; i < RELOADS; i++) samples.one!.push(await reload(1));
    for (let n = 2; n <= 10; n++) await openShell(n);
    for (let i = 0; i < RELOADS; i++) samples.ten!.push(await reload(10));
    await wb.shot('ten-reattached');
    writeFileSync(process.env.BENCH_OUT!, JSON.stringify(samples));
    await runCommand('Terminal: Kill All Terminals');
  }
});
