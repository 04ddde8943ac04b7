import * as vscode from 'vscode';
import { showEngineError } from '../engines/showEngineError';
import { windowFolders } from '../folders';
import { plainText } from '../plainText';
import type { RefreshManager } from '../views/refreshManager';
import type { ShellLauncher } from './shellLauncher';

/**
 * Reattaches this window's held shells; says once which could not come back and why.
 * `activatedAt`: performance.now() when activate() was called (the reattach timing starts there).
 */
export async function reattachSessions(
  shells: ShellLauncher,
  refresh: RefreshManager,
  log: vscode.LogOutputChannel,
  activatedAt: number,
): Promise<void> {
  try {
    const outcome = await shells.reattachAll(windowFolders());
    const attached = performance.now();
    if (outcome.reattached > 0) {
      refresh.noteShellOpened();
      // bench/reattach.ts reads this line: activation → every reattached terminal showing its screen.
      const after = (t: number) => `${Math.round(t - activatedAt)} ms`;
      void outcome.screensShown.then((at) =>
        log.info(
          `Reattached ${outcome.reattached} Toolbox shell(s): engine and holders answered ${after(attached)} after activation, ` +
            (at === undefined
              ? 'but a terminal showed no screen within 10 s.'
              : `terminals opened at ${after(at.opened)}, every screen shown ${after(at.shown)} after activation.`),
        ),
      );
    }
    for (const line of outcome.gone) log.warn(line);
    if (outcome.gone.length > 0) {
      void vscode.window.showInformationMessage(
        plainText(
          outcome.gone.length === 1 ? outcome.gone[0]! : `${outcome.gone.length} Toolbox shells did not survive: ${outcome.gone.join(' ')}`,
          'message',
        ),
      );
    }
    if (outcome.failed.length > 0) {
      for (const line of outcome.failed) log.warn(`Could not reattach ${line}`);
      const retry = 'Retry';
      const answer = await showEngineError(
        `Toolbox could not reattach ${outcome.failed.length} shell(s); they are still recorded. ${outcome.failed[0]}`,
        log,
        retry,
      );
      if (answer === retry) await reattachSessions(shells, refresh, log, activatedAt);
    }
  } catch (err) {
    log.error(`Reattaching Toolbox shells failed: ${(err as Error).message}`);
  }
}
