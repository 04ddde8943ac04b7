/**
 * Runs the extension-host suite (test/suite) inside code-server's Node extension host, with the
 * same `payload` + window.codeAutomationExit protocol VS Code's own web integration tests use.
 * Env: E2E_BASE_URL, E2E_EXT_PATH, E2E_FOLDER, optional E2E_LOGS and E2E_SUITE_TIMEOUT_MS.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { format } from 'node:util';
import { launchBrowser, workbenchUrl } from './browser';

async function main(): Promise<number> {
  const base = required('E2E_BASE_URL');
  const extPath = required('E2E_EXT_PATH');
  const folder = required('E2E_FOLDER');
  const timeoutMs = Number(process.env.E2E_SUITE_TIMEOUT_MS ?? 600_000);
  const browser = await launchBrowser();
  try {
    const page = await browser.newPage();
    let finish: (code: number) => void = () => undefined;
    const exited = new Promise<number>((resolve) => (finish = resolve));
    await page.exposeFunction('codeAutomationLog', (type: string, args: unknown[]) => console.log(`  [exthost ${type}]`, format(...args)));
    await page.exposeFunction('codeAutomationExit', (code: number, logs?: Array<{ relativePath: string; contents: string }>) => {
      if (process.env.E2E_LOGS && logs) {
        for (const l of logs) {
          const file = join(process.env.E2E_LOGS, l.relativePath);
          mkdirSync(dirname(file), { recursive: true });
          writeFileSync(file, l.contents);
        }
      }
      finish(code);
    });
    page.on('pageerror', (e: Error) => console.log('  [pageerror]', String(e).slice(0, 300)));
    await page.goto(workbenchUrl(base, folder, extPath, join(extPath, 'out/test/suite/index')));
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<number>((resolve) => (timer = setTimeout(() => resolve(-1), timeoutMs)));
    const code = await Promise.race([exited, timeout]);
    clearTimeout(timer);
    if (code === -1) {
      console.log(`The extension-host suite did not finish within ${timeoutMs / 1000} s.`);
      return 2;
    }
    return code;
  } finally {
    await browser.close();
  }
}

function required(name: string): string {
  const v = process.env[name];
  if (!v) throw new Error(`${name} is not set: run this through scripts/e2e.sh.`);
  return v;
}

main().then(
  (code) => process.exit(code),
  (err: unknown) => {
    console.error(err);
    process.exit(3);
  },
);
