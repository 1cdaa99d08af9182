import type { PoolClient, QueryResult } from 'pg';
import type { DataSource } from 'typeorm';
import { dispatchCommittedOutboxRows, type OutboxRowWritten } from './outbox-dispatch';

interface OutboxRow {
  readonly id: string;
  readonly subject: string;
  readonly message_id: string;
  readonly payload: unknown;
}

export interface RelayPublisher {
  publish(subject: string, payload: string, messageId: string): Promise<unknown>;
}

export interface OutboxRelayOptions {
  readonly batchSize?: number;
  /** How often a started relay claims when nothing woke it (default 1 s; see IDLE_DELAY_MS). */
  readonly idleDelayMs?: number;
  /**
   * How old an unpublished row must be before a started relay claims it (default 2 s): younger rows are their
   * writer's to dispatch at its commit. Rows of a dispatch that failed, or of a process that died, wait this long.
   */
  readonly claimGraceMs?: number;
  readonly maxBackoffMs?: number;
  /** Maps a contract subject to the wire subject (deployment prefix). */
  readonly wireSubject?: (subject: string) => string;
  readonly onError?: (error: unknown) => void;
  readonly onPublished?: (count: number) => void;
}

/**
 * The claim's period when nothing wakes it. Every committed row of this process is dispatched at its commit
 * (issue 28), so the claim is for what a dispatch left: rows of a publish that failed, of a process that died
 * before its mark, of a writer with no relay. 100 ms, when the claim was every row's way out, made four apps'
 * idle claims 80 round trips a second - as many as the pipeline's own at 50 runs a second.
 */
const IDLE_DELAY_MS = 1_000;

/**
 * Relays committed outbox rows to the bus with the row's message id as the de-duplication id (Nats-Msg-Id on
 * JetStream): a relay that crashes between publishing and marking repeats itself, and the bus drops the repeat.
 * Once started, it publishes each commit's rows at that commit (`dispatch`, outbox-dispatch.ts); its claim -
 * the oldest unpublished rows, with SKIP LOCKED, so relays of several processes take different rows - picks up
 * what a dispatch left. When NATS is down the rows wait and the relay backs off (G6): nothing is lost,
 * publication is only late.
 */
export class OutboxRelay {
  private running = false;
  private loop: Promise<void> | undefined;
  private wake: (() => void) | undefined;
  private notified = false;
  private unregister: (() => void) | undefined;
  /** Ids published by a dispatch, waiting for the mark in flight to finish; one mark statement takes them all. */
  private unmarked: string[] = [];
  private marking: Promise<void> | undefined;
  private readonly dispatches = new Set<Promise<void>>();

  constructor(
    private readonly dataSource: DataSource,
    private readonly publisher: RelayPublisher,
    private readonly options: OutboxRelayOptions = {},
  ) {
    if (!Number.isInteger(this.batchSize) || this.batchSize < 1) throw new RangeError(`the relay's batch size is a positive integer, got ${this.batchSize}`);
    if (!Number.isInteger(this.claimGraceMs) || this.claimGraceMs < 0) throw new RangeError(`the relay's claim grace is a whole number of ms, got ${this.claimGraceMs}`);
  }

  private get batchSize(): number {
    return this.options.batchSize ?? 500;
  }

  private get claimGraceMs(): number {
    return this.options.claimGraceMs ?? 2_000;
  }

  /**
   * Publishes one batch; returns how many rows it relayed. Two round trips (issue 28: every app's relay
   * ticks once per commit it notifies, and four round trips a tick were a share of the machine at 5 000
   * cases/s): the transaction's start and the claim go as one simple query, and the claim marks the rows it
   * takes, so the commit after the publishes is the second. A publish that fails rolls the marks back: the
   * rows wait for the next tick, as before. `now()` is the transaction's start either way.
   */
  async tick(): Promise<number> {
    const wire = this.options.wireSubject ?? ((s: string) => s);
    const runner = this.dataSource.createQueryRunner();
    const client = (await runner.connect()) as PoolClient;
    try {
      // Inlined, not a parameter: a simple query of two statements takes none. An integer, checked at construction.
      // The ids are bigserial values PostgreSQL gave this process, digits only: inlined like the batch size.
      // A started relay leaves young rows to their writers' dispatch (any process's): claimed here as well,
      // they would be published twice and their marks would wait on this claim's row locks.
      const leave = this.running ? ` AND created_at < now() - interval '${this.claimGraceMs} milliseconds'` : '';
      const [, claimed] = (await client.query(
        `BEGIN; UPDATE outbox SET published_at = now() WHERE id IN (
           SELECT id FROM outbox WHERE published_at IS NULL${leave} ORDER BY id LIMIT ${this.batchSize} FOR UPDATE SKIP LOCKED)
         RETURNING id, subject, message_id, payload`,
      )) as unknown as [unknown, QueryResult<OutboxRow>];
      // RETURNING keeps no order: the rows go out oldest first, as they were claimed.
      const rows = claimed.rows.sort((a, b) => a.id.length - b.id.length || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
      // Sent back to back on one connection, so the stream keeps the rows' order.
      await Promise.all(rows.map((r) => this.publisher.publish(wire(r.subject), JSON.stringify(r.payload), r.message_id)));
      await client.query('COMMIT');
      if (rows.length > 0) this.options.onPublished?.(rows.length);
      return rows.length;
    } catch (error) {
      // A publish that failed, or a statement that left the transaction aborted: nothing is marked.
      await client.query('ROLLBACK').catch(() => undefined);
      throw error;
    } finally {
      await runner.release();
    }
  }

  start(): void {
    if (this.running) return;
    this.running = true;
    this.unregister = dispatchCommittedOutboxRows(this.dataSource, (rows) => this.dispatch(rows));
    this.loop = this.run();
  }

  /**
   * Publishes rows the moment the transaction that wrote them committed (issue 28, outbox-dispatch.ts), then
   * marks them in one statement by primary key - shared with any dispatch that ends while a mark is in flight.
   * A publish that fails marks nothing of its rows and hands them to the claim; so does a process that dies
   * first. Either way the claim publishes them again under the same message ids, which the bus de-duplicates.
   */
  dispatch(rows: readonly OutboxRowWritten[]): void {
    if (!this.running || rows.length === 0) return;
    const wire = this.options.wireSubject ?? ((s: string) => s);
    const ordered = [...rows].sort((a, b) => a.id.length - b.id.length || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
    // Issued in commit order on one connection, so the stream keeps each process's order, as the claim does.
    const published = Promise.all(ordered.map((r) => this.publisher.publish(wire(r.subject), JSON.stringify(r.payload), r.message_id)));
    const done = published.then(
      () => {
        this.options.onPublished?.(ordered.length);
        this.unmarked.push(...ordered.map((r) => r.id));
        return this.markPublished();
      },
      (error: unknown) => {
        this.options.onError?.(error);
        this.claimSoon();
      },
    );
    this.dispatches.add(done);
    void done.finally(() => this.dispatches.delete(done));
  }

  private markPublished(): Promise<void> {
    this.marking ??= this.markLoop();
    return this.marking;
  }

  private async markLoop(): Promise<void> {
    try {
      while (this.unmarked.length > 0) {
        const ids = this.unmarked;
        this.unmarked = [];
        try {
          // One round trip, and no wait for the WAL flush: a mark lost in a crash only has the claim publish its
          // rows once more, under the same message ids. The ids are PostgreSQL's bigserial values, digits only.
          await this.dataSource.query(
            `BEGIN; SET LOCAL synchronous_commit = off; UPDATE outbox SET published_at = now() WHERE id IN (${ids.join(',')}) AND published_at IS NULL; COMMIT`,
          );
        } catch (error) {
          // Published but not marked: the claim will publish them once more, and the bus drop the repeat.
          this.options.onError?.(error);
        }
      }
    } finally {
      // In the turn that found nothing left: an id pushed after it starts a loop of its own.
      this.marking = undefined;
    }
  }


  /** Wakes the claim (a dispatch failed: its rows are the claim's now). */
  private claimSoon(): void {
    this.notified = true;
    this.wake?.();
  }

  private async run(): Promise<void> {
    let backoff = 0;
    while (this.running) {
      this.notified = false;
      let relayed = 0;
      try {
        relayed = await this.tick();
        backoff = 0;
      } catch (error) {
        this.options.onError?.(error);
        backoff = Math.min(backoff === 0 ? 100 : backoff * 2, this.options.maxBackoffMs ?? 5_000);
      }
      // Straight on only when there may be more: a full batch, or a commit notified meanwhile. A partial
      // batch with no notification drained the outbox as far as this process knows, and one more tick would
      // be an empty transaction per burst; rows of other processes or un-notified writers wait the idle delay.
      if (backoff === 0 && (relayed >= this.batchSize || this.notified)) continue;
      // Stopped during the tick, when there was no wait to wake: do not start one (it would hold stop() for
      // the idle delay).
      if (!this.running) break;
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, backoff || (this.options.idleDelayMs ?? IDLE_DELAY_MS));
        this.wake = () => {
          clearTimeout(timer);
          resolve();
        };
        // A notification between the tick's end and this wait: do not sleep on it.
        if (this.notified && backoff === 0) this.wake();
      });
      this.wake = undefined;
    }
  }

  /** Finishes the batch in hand, then stops (X4). */
  async stop(): Promise<void> {
    this.running = false;
    this.unregister?.();
    this.unregister = undefined;
    this.wake?.();
    await this.loop;
    // Dispatches already under way publish and mark; rows of commits after this wait for the next start's claim.
    await Promise.allSettled([...this.dispatches]);
  }
}
