/** What one item of a group came to: its value, or the error that item alone failed with. */
export type ItemOutcome<O> = { readonly ok: true; readonly value: O } | { readonly ok: false; readonly error: unknown };

/**
 * Many callers, one round trip: the items submitted in the same turn of the event loop - and while a group is
 * being handled - are handed to `handle` together, at most `max` at a time, one group after another. The
 * seals of a micro-batch become ready together: the ack floor is asked once for all of them (AckFloorProbe),
 * and the scoring worker seals them in one transaction (issue 28: a fixed cost per seal - a transaction, its
 * lock, its stream read, its aggregate - was the worker's bound at 50 runs a second). A group that throws fails each of its items with that error; `handle` answers per item
 * otherwise, so one item's refusal is not another's.
 */
export class Coalescer<I, O> {
  private queued: Array<{ readonly item: I; readonly resolve: (value: O) => void; readonly reject: (error: unknown) => void }> = [];
  private running = false;
  /** Groups handled (tests, diagnostics). */
  groups = 0;

  constructor(
    private readonly handle: (items: readonly I[]) => Promise<ReadonlyArray<ItemOutcome<O>>>,
    private readonly max: number,
  ) {
    if (!(max >= 1)) throw new RangeError(`a group holds at least one item, got ${max}`);
  }

  submit(item: I): Promise<O> {
    return new Promise<O>((resolve, reject) => {
      this.queued.push({ item, resolve, reject });
      if (!this.running) void this.pump();
    });
  }

  private async pump(): Promise<void> {
    this.running = true;
    try {
      // Callers that become ready together (one settlement resolving many waiters) do so within one turn.
      await new Promise<void>((resolve) => setImmediate(resolve));
      while (this.queued.length > 0) {
        const group = this.queued.splice(0, this.max);
        this.groups++;
        let outcomes: ReadonlyArray<ItemOutcome<O>>;
        try {
          outcomes = await this.handle(group.map((g) => g.item));
          if (outcomes.length !== group.length) throw new Error(`a group of ${group.length} answered ${outcomes.length} outcomes`);
        } catch (error) {
          for (const g of group) g.reject(error);
          continue;
        }
        outcomes.forEach((o, i) => (o.ok ? group[i].resolve(o.value) : group[i].reject(o.error)));
      }
    } finally {
      this.running = false;
    }
  }
}
