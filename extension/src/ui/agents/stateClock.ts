/**
 * The clock that redraws the time each agent session has spent in its state ("working 3 min").
 * It runs only while the window has Toolbox terminals: a window without any holds no timer, so
 * an idle window does no periodic work and a process that activated the extension can still
 * exit (bench/startupChild.ts relies on that).
 */
/** How often the time in each state is redrawn. */
export const STATE_CLOCK_MS = 30_000;

/** The timer functions, injected so a test can see when the clock runs. */
export interface IntervalTimers {
  setInterval(tick: () => void, ms: number): unknown;
  clearInterval(handle: unknown): void;
}

const nodeTimers: IntervalTimers = {
  setInterval: (tick, ms) => setInterval(tick, ms),
  clearInterval: (handle) => clearInterval(handle as NodeJS.Timeout),
};

export class StateClock {
  private handle: unknown;

  /**
   * `hasTerminals`: whether the window has Toolbox terminals now; `redraw`: called on each tick.
   * Call `sync()` whenever the terminals may have changed (opened, ended, closed).
   */
  constructor(
    private readonly hasTerminals: () => boolean,
    private readonly redraw: () => void,
    private readonly timers: IntervalTimers = nodeTimers,
    private readonly periodMs: number = STATE_CLOCK_MS,
  ) {}

  /** Whether the clock is running. */
  get running(): boolean {
    return this.handle !== undefined;
  }

  /** Starts the clock when the first terminal appeared, stops it when the last one went. */
  sync(): void {
    const wanted = this.hasTerminals();
    if (wanted && this.handle === undefined) this.handle = this.timers.setInterval(() => this.redraw(), this.periodMs);
    else if (!wanted && this.handle !== undefined) this.stop();
  }

  dispose(): void {
    this.stop();
  }

  private stop(): void {
    if (this.handle !== undefined) this.timers.clearInterval(this.handle);
    this.handle = undefined;
  }
}
