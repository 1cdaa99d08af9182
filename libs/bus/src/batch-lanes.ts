/**
 * The pieces that let a consumer handle a micro-batch's runs concurrently while a seal still knows every
 * message of its run published before it was handled: what of the batch is settled, one shared ack-floor
 * question for the seals that are ready together, what a process handled itself (so its seals ask the floor
 * only about the rest), and a bound on the lanes at work. The ingestion's inbound consumer (issue 15: its
 * runs' opens and seals) and the scoring worker (issue 28: its seals) use them; they are pure (no bus
 * client), fed by the consumer's own `allAcknowledgedBefore`.
 */
import { Coalescer } from './coalescer';

/**
 * Which messages of one micro-batch are settled: acknowledged once their effects were durable, or not
 * (handed back, or left to the batch's redelivery) - and so what a seal has to wait for.
 *
 * A seal needs every output of its run published before it forwarded. Those in the batch are in its own
 * lane, before it, so handled already. Those outside the batch (another process's, a batch of ours that was
 * handed back) are covered by the ack floor - but the floor also stops at every message of this batch that
 * other lanes are still handling, though none of them is an output of this run. So a seal at `seq` asks the
 * floor only below `from`, the start of the run of consecutive batch seqs that ends right before it: below
 * `from` the batch's own messages must be settled first (acknowledged, or the floor cannot pass them); from
 * `from` to `seq` there is no message outside the batch at all. Messages that could feed any run (session
 * signals, which open and feed monitor windows) are waited for wherever they are.
 */
export class BatchSettlement {
  private readonly seqs: number[];
  private readonly inBatch: ReadonlySet<number>;
  /** seq -> true (acknowledged) / false (not); absent while open. */
  private readonly settled = new Map<number, boolean>();
  /** Index in `seqs` of the lowest seq still open. */
  private lowestOpen = 0;
  private lowestNotAcked = Infinity;
  private waiters: Array<{ readonly seq: number; readonly resolve: (ok: boolean) => void }> = [];

  constructor(
    seqs: readonly number[],
    /** Messages every seal after them waits for, in or out of its range (see above). */
    private readonly barriers: readonly number[] = [],
  ) {
    this.seqs = [...seqs].sort((a, b) => a - b);
    this.inBatch = new Set(seqs);
  }

  acked(seqs: readonly number[]): void {
    this.settle(seqs, true);
  }

  /** First settlement wins: a message acknowledged stays so whatever happens to its lane later. */
  notAcked(seqs: readonly number[]): void {
    this.settle(seqs, false);
  }

  /**
   * Where the seal at `seq` must ask the ack floor from - every message before the answer acknowledged is
   * what it needs - once the batch's messages below that are settled; null when one of them was not
   * acknowledged (the floor cannot pass it: the seal waits for a redelivery).
   */
  async sealFloor(seq: number): Promise<number | null> {
    let from = seq;
    while (this.inBatch.has(from - 1)) from--;
    for (const b of this.barriers) if (b >= from && b < seq) from = b + 1;
    return (await this.allSettledBefore(from)) ? from : null;
  }

  /** Whether every message of the batch before `seq` was acknowledged, once that is known. */
  allSettledBefore(seq: number): Promise<boolean> {
    const known = this.answer(seq);
    if (known !== null) return Promise.resolve(known);
    return new Promise((resolve) => this.waiters.push({ seq, resolve }));
  }

  private settle(seqs: readonly number[], ok: boolean): void {
    for (const seq of seqs) {
      if (this.settled.has(seq)) continue;
      this.settled.set(seq, ok);
      if (!ok && seq < this.lowestNotAcked) this.lowestNotAcked = seq;
    }
    while (this.lowestOpen < this.seqs.length && this.settled.has(this.seqs[this.lowestOpen])) this.lowestOpen++;
    if (this.waiters.length === 0) return;
    const waiting: typeof this.waiters = [];
    for (const w of this.waiters) {
      const known = this.answer(w.seq);
      if (known === null) waiting.push(w);
      else w.resolve(known);
    }
    this.waiters = waiting;
  }

  private answer(seq: number): boolean | null {
    if (this.lowestNotAcked < seq) return false;
    const open = this.lowestOpen < this.seqs.length ? this.seqs[this.lowestOpen] : Infinity;
    return open >= seq ? true : null;
  }
}

/**
 * The durable consumer's ack floor, asked for many seals with as few consumer-info requests as possible:
 * one request at a time, and every seal that became ready meanwhile is answered by the next. The bus port
 * answers "all acknowledged before seq?" for one seq; the floor only moves forward, so the largest seq of a
 * round is asked first (the common answer, yes, settles every seal of the round) and a "no" is narrowed by
 * bisection. A "yes" is remembered: it stays true.
 */
export class AckFloorProbe {
  /** Every message before this seq is known to be acknowledged. */
  private known = 0;
  // The seals of lanes that settled together become ready in the same turn: one round answers them all.
  private readonly rounds = new Coalescer<number, boolean>(async (seqs) => {
    await this.answer(seqs);
    return seqs.map((seq) => ({ ok: true, value: seq <= this.known }));
  }, Number.MAX_SAFE_INTEGER);
  /** Consumer-info requests made (tests, diagnostics). */
  requests = 0;

  constructor(private readonly ask: (seq: number) => Promise<boolean>) {}

  allAcknowledgedBefore(seq: number): Promise<boolean> {
    if (seq <= this.known) return Promise.resolve(true);
    return this.rounds.submit(seq);
  }

  private async answer(seqs: readonly number[]): Promise<void> {
    const open = [...new Set(seqs)].filter((s) => s > this.known).sort((a, b) => a - b);
    // Invariant: open[< lo] are acknowledged-before, open[>= hi] are not.
    let lo = 0;
    let hi = open.length;
    while (lo < hi) {
      const mid = hi === open.length ? hi - 1 : (lo + hi) >>> 1;
      this.requests++;
      if (await this.ask(open[mid])) {
        lo = mid + 1;
        if (open[mid] > this.known) this.known = open[mid];
      } else {
        hi = mid;
      }
    }
  }
}

/**
 * Whether every message before a seal is handled, for one durable consumer in one process: what this process
 * handled it knows, and only the rest is asked of the server's ack floor. Handled: a message whose effects
 * the process committed before acknowledging it, or one no seal waits for (another seal).
 *
 * The floor alone says so for all processes at once, but it stops at any message still unacknowledged - among
 * them another run's seal handed back to wait, whose own wait then stops the next seal, and so on: at 50 runs
 * a second three seals in four waited a redelivery delay for no output of their run (issue 28). Here only a
 * gap - a message of another process, one handed back, one not seen - is asked about, and only up to the gap.
 *
 * Memory: the seqs above the contiguous prefix, at most `maxHeld` (past that a seq is not recorded, and the
 * server is asked instead: slower, never wrong).
 */
export class HandledLedger {
  /** Every seq up to this one is acknowledged (the server said so) or handled here. */
  private contiguous = 0;
  private readonly held = new Set<number>();

  constructor(
    /** The server's floor, e.g. an AckFloorProbe: one consumer-info request for every seal asking at once. */
    private readonly floor: Pick<AckFloorProbe, 'allAcknowledgedBefore'>,
    private readonly maxHeld = 65_536,
  ) {}

  /** The message at `seq` was handled to the end here: its effects committed, or it feeds no seal. */
  handled(seq: number): void {
    if (seq <= this.contiguous) return;
    if (seq === this.contiguous + 1) {
      this.contiguous = seq;
      this.advance();
    } else if (this.held.size < this.maxHeld) {
      this.held.add(seq);
    }
  }

  /** Whether every message before `seq` is handled: here, or acknowledged by whichever process had it. */
  async allHandledBefore(seq: number): Promise<boolean> {
    const gap = this.gapBefore(seq);
    if (gap === null) return true;
    if (!(await this.floor.allAcknowledgedBefore(gap + 1))) return false;
    // Every seq from the gap up to `seq` was held here, so the prefix now reaches past them all.
    this.acknowledgedBefore(gap + 1);
    return true;
  }

  /** Seqs held above the contiguous prefix (tests, diagnostics). */
  get size(): number {
    return this.held.size;
  }

  /** The highest seq before `seq` not known handled; null: none. */
  private gapBefore(seq: number): number | null {
    let s = seq - 1;
    while (s > this.contiguous && this.held.has(s)) s--;
    return s > this.contiguous ? s : null;
  }

  /** The server's floor: every message before `seq` is acknowledged. */
  private acknowledgedBefore(seq: number): void {
    if (seq - 1 <= this.contiguous) return;
    this.contiguous = seq - 1;
    for (const s of this.held) if (s <= this.contiguous) this.held.delete(s);
    this.advance();
  }

  private advance(): void {
    while (this.held.delete(this.contiguous + 1)) this.contiguous++;
  }
}

/** At most `max` holders at once; the next waiter takes a released slot over directly. */
export class Limiter {
  private active = 0;
  private readonly queue: Array<() => void> = [];

  constructor(private readonly max: number) {}

  async acquire(): Promise<void> {
    if (this.active < this.max) {
      this.active++;
      return;
    }
    await new Promise<void>((resolve) => this.queue.push(resolve));
  }

  release(): void {
    const next = this.queue.shift();
    if (next) next();
    else this.active--;
  }
}
