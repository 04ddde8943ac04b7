/**
 * The exit guard of a benchmark child process (bench/startupChild.ts): after its last line the
 * child must exit by itself, since the parent waits for it (execFileSync). One that is still
 * running `graceMs` later holds something that keeps its event loop alive (a timer, a socket);
 * the guard then names what on stderr and exits with status 1, so the benchmark fails with that
 * message instead of hanging. The guard's own timer is unref'd: it keeps nothing alive.
 */

/** How long a benchmark child may live after its last line. */
export const EXIT_GRACE_MS = 10_000;

export interface ExitGuardDeps {
  setTimer(fire: () => void, ms: number): { unref(): unknown };
  /** What the process holds now: process.getActiveResourcesInfo(). */
  resources(): string[];
  /** Says why and ends the process with a failure. */
  fail(message: string): void;
}

const nodeDeps: ExitGuardDeps = {
  setTimer: (fire, ms) => setTimeout(fire, ms),
  resources: () => process.getActiveResourcesInfo(),
  fail: (message) => {
    process.stderr.write(`${message}\n`);
    process.exit(1);
  },
};

/** Arms the guard; call it right after the child's last line. */
export function armExitGuard(who: string, graceMs = EXIT_GRACE_MS, deps: ExitGuardDeps = nodeDeps): void {
  deps.setTimer(() => deps.fail(stillRunningMessage(who, graceMs, deps.resources())), graceMs).unref();
}

/** `Timeout ×2, PipeWrap ×2`: the resources by kind, most first. */
export function stillRunningMessage(who: string, graceMs: number, resources: readonly string[]): string {
  const counts = new Map<string, number>();
  for (const r of resources) counts.set(r, (counts.get(r) ?? 0) + 1);
  const held = [...counts]
    .sort((a, b) => b[1] - a[1] || a[0].localeCompare(b[0]))
    .map(([kind, n]) => (n > 1 ? `${kind} ×${n}` : kind))
    .join(', ');
  return (
    `${who} has not exited ${graceMs / 1000} s after its last line. It still holds ${held || 'nothing listed'} ` +
    '(process.getActiveResourcesInfo(), which lists its stdio pipes too): something it started keeps it alive.'
  );
}
