/**
 * One timer for a burst of calls: the first call schedules `fn` `ms` later, the calls until it runs
 * join that run. Redraws that would otherwise follow every event (timeline entries, connections)
 * and the peer-default check's one delayed run use it (extension.ts, ui/views/registerViews.ts).
 */
export interface Coalesced {
  (): void;
  /** Drops a scheduled run (the next call schedules again). */
  cancel(): void;
  /** The same as cancel: a Coalesced goes into context.subscriptions. */
  dispose(): void;
}

/** `unref`: a scheduled run keeps no process alive (the startup benchmark's child exits after activation). */
export function coalesce(fn: () => void, ms: number, options: { unref?: boolean } = {}): Coalesced {
  let timer: NodeJS.Timeout | undefined;
  const cancel = () => {
    clearTimeout(timer);
    timer = undefined;
  };
  return Object.assign(
    () => {
      if (timer !== undefined) return;
      timer = setTimeout(() => {
        timer = undefined;
        fn();
      }, ms);
      if (options.unref) timer.unref();
    },
    { cancel, dispose: cancel },
  );
}
