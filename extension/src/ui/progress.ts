/**
 * A progress notification a person can read during the long steps (pulling or building the
 * runtime image): the phase, the percent where it is known, and the time since it began,
 * refreshed every second; the raw output goes to the log, not here.
 */
import type * as vscode from 'vscode';
import { plainText } from './plainText';
import type { SessionProgress } from '../backend/api';

/** "1:05" for 65 s; seconds only below a minute ("9 s"). */
export function formatElapsed(ms: number): string {
  const s = Math.max(0, Math.floor(ms / 1000));
  if (s < 60) return `${s} s`;
  return `${Math.floor(s / 60)}:${String(s % 60).padStart(2, '0')}`;
}

/** The notification's message: "Building the runtime image: step 5 of 22 (…) · 18% · 1:05". */
export function formatProgress(message: string, percent: number | undefined, elapsedMs: number): string {
  const parts = [message];
  if (percent !== undefined && Number.isFinite(percent)) parts.push(`${Math.max(0, Math.min(100, Math.floor(percent)))}%`);
  // A step that ends within a couple of seconds needs no clock.
  if (elapsedMs >= 2000) parts.push(formatElapsed(elapsedMs));
  return parts.join(' · ');
}

/**
 * Reports steps into a VS Code progress, keeping the elapsed time of the current phase ticking.
 * A step with the same text before the colon ("Pulling the runtime image: …") is the same phase.
 */
export class PhaseProgress implements vscode.Disposable {
  private message: string | undefined;
  private percent: number | undefined;
  private phase = '';
  private since = Date.now();
  private readonly timer: NodeJS.Timeout;

  constructor(
    private readonly progress: vscode.Progress<{ message?: string }>,
    private readonly now: () => number = Date.now,
  ) {
    this.since = now();
    this.timer = setInterval(() => this.render(), 1000);
  }

  step(message: string, percent?: number): void {
    const phase = message.split(':')[0];
    if (phase !== this.phase) {
      this.phase = phase;
      this.since = this.now();
    }
    this.message = message;
    this.percent = percent;
    this.render();
  }

  private render(): void {
    if (this.message === undefined) return;
    this.progress.report({ message: plainText(formatProgress(this.message, this.percent, this.now() - this.since), 'message') });
  }

  dispose(): void {
    clearInterval(this.timer);
  }
}

/**
 * Runs a long backend step inside a cancellable progress notification: its steps go to a
 * PhaseProgress, its raw output line by line to `log`, Cancel aborts its signal. Undefined when
 * the user cancelled.
 */
export async function withPhaseProgress<T>(
  progress: vscode.Progress<{ message?: string }>,
  token: vscode.CancellationToken,
  log: (line: string) => void,
  run: (reporter: SessionProgress, signal: AbortSignal) => Promise<T>,
): Promise<T | undefined> {
  const abort = new AbortController();
  const sub = token.onCancellationRequested(() => abort.abort());
  const phases = new PhaseProgress(progress);
  try {
    return await run(
      {
        step: (message, percent) => phases.step(message, percent),
        log: (text) => {
          for (const line of text.split('\n')) if (line.trim()) log(line.trimEnd());
        },
      },
      abort.signal,
    );
  } catch (err) {
    if (abort.signal.aborted) return undefined;
    throw err;
  } finally {
    phases.dispose();
    sub.dispose();
  }
}
