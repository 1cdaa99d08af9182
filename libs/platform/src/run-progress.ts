/**
 * Wakes a request that waits for a run (the ingestion's RunWaiter, R5) when the read model of the same
 * process has just committed that run's EvalResult or regression verdict - the all-in-one of `evals run` and
 * `evals serve` (docs/embedded.md), where both live in one process. A waiter polled the read model with a
 * backoff of up to 200 ms, which was about a tenth of a warm 10 000-case run spent waiting after the run was
 * done (issue 15, docs/benchmarks.md). Across processes (a deployment) nothing calls `recorded` and the
 * waiter's polling is what it always was: this only ever shortens a wait, it decides nothing.
 */
export class RunProgress {
  private readonly waiting = new Map<string, Set<() => void>>();

  /** The read model committed something that completes these runs' views. */
  recorded(runIds: readonly string[]): void {
    for (const runId of runIds) {
      const wakers = this.waiting.get(runId);
      if (!wakers) continue;
      this.waiting.delete(runId);
      for (const wake of wakers) wake();
    }
  }

  /**
   * A wait that ends at the next `recorded` of `runId`, or after `ms`, whichever is first (or at `cancel`).
   * Taken BEFORE the waiter reads the run, so a commit between the read and the wait is not missed.
   */
  next(runId: string, ms: number): { readonly woken: Promise<void>; cancel(): void } {
    let wakers = this.waiting.get(runId);
    if (!wakers) this.waiting.set(runId, (wakers = new Set()));
    const set = wakers;
    let wake!: () => void;
    const woken = new Promise<void>((resolve) => {
      wake = () => {
        clearTimeout(timer);
        set.delete(wake);
        if (set.size === 0 && this.waiting.get(runId) === set) this.waiting.delete(runId);
        resolve();
      };
    });
    const timer = setTimeout(wake, ms);
    set.add(wake);
    return { woken, cancel: wake };
  }

  /** Runs somebody waits for (the tests: nothing is left behind). */
  get waitedFor(): number {
    return this.waiting.size;
  }
}

/** The process's one RunProgress (libs/platform's InfrastructureModule provides it). */
export const RUN_PROGRESS = Symbol('RUN_PROGRESS');
