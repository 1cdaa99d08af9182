import type { DataSource } from 'typeorm';

export interface RelayPublisher {
  publish(subject: string, payload: string, messageId: string): Promise<unknown>;
}

export interface OutboxRelayOptions {
  readonly batchSize?: number;
  readonly idleDelayMs?: number;
  readonly maxBackoffMs?: number;
  /** Maps a contract subject to the wire subject (deployment prefix). */
  readonly wireSubject?: (subject: string) => string;
  readonly onError?: (error: unknown) => void;
  readonly onPublished?: (count: number) => void;
}

/**
 * Relays committed outbox rows to the bus, oldest first, with the row's message id as the de-duplication
 * id (Nats-Msg-Id on JetStream): a relay that crashes between publishing and marking repeats itself, and
 * the bus drops the repeat.
 * Rows are claimed with SKIP LOCKED, so one relay per process is safe. When NATS is down the rows wait
 * and the relay backs off (G6): nothing is lost, publication is only late.
 */
export class OutboxRelay {
  private running = false;
  private loop: Promise<void> | undefined;
  private wake: (() => void) | undefined;
  private notified = false;

  constructor(
    private readonly dataSource: DataSource,
    private readonly publisher: RelayPublisher,
    private readonly options: OutboxRelayOptions = {},
  ) {}

  private get batchSize(): number {
    return this.options.batchSize ?? 500;
  }

  /** Publishes one batch; returns how many rows it relayed. */
  async tick(): Promise<number> {
    const wire = this.options.wireSubject ?? ((s: string) => s);
    return this.dataSource.transaction(async (manager) => {
      const rows: Array<{ id: string; subject: string; message_id: string; payload: unknown }> = await manager.query(
        `SELECT id, subject, message_id, payload FROM outbox WHERE published_at IS NULL
         ORDER BY id LIMIT $1 FOR UPDATE SKIP LOCKED`,
        [this.batchSize],
      );
      if (rows.length === 0) return 0;
      // Sent back to back on one connection, so the stream keeps the rows' order.
      await Promise.all(rows.map((r) => this.publisher.publish(wire(r.subject), JSON.stringify(r.payload), r.message_id)));
      await manager.query(`UPDATE outbox SET published_at = now() WHERE id = ANY($1::bigint[])`, [rows.map((r) => r.id)]);
      this.options.onPublished?.(rows.length);
      return rows.length;
    });
  }

  start(): void {
    if (this.running) return;
    this.running = true;
    this.loop = this.run();
  }

  /**
   * Wakes the relay right away (called after a local commit wrote outbox rows). A call while a tick is in
   * flight is remembered, not lost: that tick's SELECT may have run before the commit, and without the
   * flag those rows would wait out a whole idle delay - a hop of up to 100 ms on every event's way to the bus.
   */
  notify(): void {
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
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, backoff || (this.options.idleDelayMs ?? 100));
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
    this.wake?.();
    await this.loop;
  }
}
