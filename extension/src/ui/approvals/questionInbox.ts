/**
 * What an inbox of questions waiting for the user in this window does, whoever asks: the agents'
 * questions (ui/approvals/approvalInbox.ts, issue 28) and the connections held in the egress policy's ask
 * mode (ui/egress/egressInbox.ts, issue 30). A question waits, keyed by its id, until the user
 * answers it, its time runs out, its asker hangs up (its signal aborts) or the inbox is disposed;
 * it is answered once: the first answer wins and a later one (a second click, a stale
 * notification) changes nothing. How the last questions left is kept, so a late click can say
 * what happened.
 *
 * Each inbox extends this with what is its own: which questions it refuses at once and with what
 * answer, what the user's answer may be, the answer a time-out, a hang-up and a closing window give,
 * and the words for each.
 *
 * No vscode import: unit-tested under plain node through the inboxes
 * (test/unit/approval-inbox.test.ts, test/unit/egress-ui.test.ts).
 */

/** A timer the inbox can set and clear (setTimeout by default; a test passes its own clock). */
export interface InboxTimers {
  set(fn: () => void, ms: number): unknown;
  clear(handle: unknown): void;
}

/**
 * setTimeout and clearTimeout; with `keepAlive` false a waiting question's timer keeps no process
 * alive (Node's unref).
 */
export function realTimers(keepAlive: boolean): InboxTimers {
  return {
    set: (fn, ms) => {
      const t = setTimeout(fn, ms);
      if (!keepAlive) t.unref?.();
      return t;
    },
    clear: (handle) => clearTimeout(handle as NodeJS.Timeout),
  };
}

/** How a question leaves without the user: its answer, and the words howLeft gives (by default, the inbox's words for that answer). */
export interface Ending<A> {
  answer: A;
  how?: string;
}

interface Waiting<Q, A> {
  question: Q;
  resolve(answer: A): void;
  timer: unknown;
  signal: AbortSignal;
  onAbort(): void;
}

/** Questions whose way out is remembered for a late click. */
const GONE_KEPT = 64;

export abstract class QuestionInbox<Q extends { readonly id: string }, A> {
  private readonly waiting = new Map<string, Waiting<Q, A>>();
  /** How the last questions left (id → words), so a late click on one can say what happened. */
  private readonly gone = new Map<string, string>();
  private readonly listeners = new Set<() => void>();
  private isClosed = false;

  /**
   * `leftAs`: how a question left, in words, from the answer it got (what howLeft says, unless the
   * ending names its own words).
   */
  protected constructor(
    private readonly timers: InboxTimers,
    private readonly leftAs: (answer: A) => string,
  ) {}

  /** Called after a question arrives or leaves (answered, timed out, abandoned, the inbox closed). */
  onDidChange(listener: () => void): { dispose(): void } {
    this.listeners.add(listener);
    return { dispose: () => void this.listeners.delete(listener) };
  }

  /** The questions waiting, oldest first. */
  pending(): readonly Q[] {
    return [...this.waiting.values()].map((w) => w.question);
  }

  /** A waiting question by id; undefined once it has left. */
  get(id: string): Q | undefined {
    return this.waiting.get(id)?.question;
  }

  /** How a question that has left the inbox left, in words; undefined when unknown or still waiting. */
  howLeft(id: string): string | undefined {
    return this.gone.get(id);
  }

  get size(): number {
    return this.waiting.size;
  }

  /** The inbox has been closed: every later question is refused. */
  protected get closed(): boolean {
    return this.isClosed;
  }

  /**
   * Puts a question in the inbox (the caller has refused what it refuses: a closed inbox, an
   * aborted signal, an id already waiting) and resolves with its answer: the user's, `timedOut`'s
   * after `timeoutMs`, or `aborted`'s when `signal` aborts.
   */
  protected wait(question: Q, signal: AbortSignal, timeoutMs: number, timedOut: Ending<A>, aborted: Ending<A> = timedOut): Promise<A> {
    return new Promise<A>((resolve) => {
      const onAbort = () => this.settle(question.id, aborted.answer, aborted.how);
      const timer = this.timers.set(() => this.settle(question.id, timedOut.answer, timedOut.how), timeoutMs);
      this.waiting.set(question.id, { question, resolve, timer, signal, onAbort });
      signal.addEventListener('abort', onAbort, { once: true });
      this.fire();
    });
  }

  /** Answers a waiting question and tells the listeners; false when it is no longer waiting. */
  protected settle(id: string, answer: A, how?: string): boolean {
    return this.end(id, answer, how, true);
  }

  /** Answers each of these waiting questions alike, then tells the listeners once (when any left); how many left. */
  protected settleAll(ids: readonly string[], answer: A, how?: string): number {
    const left = ids.filter((id) => this.end(id, answer, how, false)).length;
    if (left > 0) this.fire();
    return left;
  }

  /** The window is going away: every waiting question, and every later one (see `closed`), gets `ending`. */
  protected close(ending: Ending<A>): void {
    if (this.isClosed) return;
    this.isClosed = true;
    for (const id of [...this.waiting.keys()]) this.end(id, ending.answer, ending.how, false);
    this.fire();
    this.listeners.clear();
  }

  private end(id: string, answer: A, how: string | undefined, fire: boolean): boolean {
    const entry = this.waiting.get(id);
    if (entry === undefined) return false;
    this.waiting.delete(id);
    this.gone.set(id, how ?? this.leftAs(answer));
    if (this.gone.size > GONE_KEPT) this.gone.delete(this.gone.keys().next().value!);
    this.timers.clear(entry.timer);
    entry.signal.removeEventListener('abort', entry.onAbort);
    entry.resolve(answer);
    if (fire) this.fire();
    return true;
  }

  private fire(): void {
    for (const listener of [...this.listeners]) {
      try {
        listener();
      } catch {
        // A listener that fails (a view being disposed) must not keep the answer from the asker.
      }
    }
  }
}
