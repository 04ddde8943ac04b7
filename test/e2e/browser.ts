/**
 * Chromium (Debian's) driven by playwright-core, which lives in the e2e tools cache outside the
 * repository (scripts/ensure-e2e-tools.sh; NODE_PATH points at it). Loosely typed on purpose:
 * the package is not a dependency of this project.
 */
/* eslint-disable @typescript-eslint/no-explicit-any */
export type Page = any;
export type Browser = any;

export const CHROMIUM_ARGS = [
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
  '--disable-dev-shm-usage',
];

export async function launchBrowser(): Promise<Browser> {
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const { chromium } = require('playwright-core') as { chromium: any };
  return chromium.launch({ executablePath: process.env.CHROMIUM ?? '/usr/bin/chromium', headless: true, args: CHROMIUM_ARGS });
}

/** `vscode-remote://host:port/abs/path`: how the workbench names a path on the code-server host. */
export function remoteUri(base: string, path: string): string {
  return `vscode-remote://${new URL(base).host}${path}`;
}

/**
 * The workbench URL for a folder, loading the extension from source (and, optionally, tests);
 * without `extensionPath`, the window has only the extensions installed in code-server.
 */
export function workbenchUrl(base: string, folder: string, extensionPath: string | undefined, testsPath?: string): string {
  const payload: string[][] = [];
  if (extensionPath) payload.push(['extensionDevelopmentPath', remoteUri(base, extensionPath)]);
  if (testsPath) payload.push(['extensionTestsPath', remoteUri(base, testsPath)]);
  payload.push(['skipWelcome', 'true']);
  const u = new URL(base);
  return `${u.origin}/?folder=${encodeURIComponent(folder)}&payload=${encodeURIComponent(JSON.stringify(payload))}`;
}
