import type { ConsumerMessages, JetStreamClient, JsMsg } from '@nats-io/jetstream';

/**
 * A durable pull consumer processed in micro-batches: whatever JetStream has already delivered to us, up to
 * `maxBatch`, is handed to the handler at once. Under load that turns one round trip (and one database
 * transaction) per message into one per batch; when idle, a single message is handled alone without
 * waiting for a batch to fill.
 *
 * Deliveries land in our own queue (the library's callback mode) and one loop drains it, so what counts as
 * "already delivered" is exactly what we hold, not an estimate from the client's internals.
 *
 * The handler owns acknowledgement: it must ack, nak or term every message it is given. A handler that
 * throws naks the whole batch (with a delay) so nothing is lost; redelivery is harmless because every
 * handler is idempotent.
 */
export interface BatchConsumerOptions {
  readonly js: JetStreamClient;
  readonly stream: string;
  readonly durable: string;
  readonly maxBatch: number;
  readonly handler: (batch: JsMsg[]) => Promise<void>;
  readonly onError?: (error: unknown, batch: JsMsg[]) => void;
  /** Delay before a failed batch is redelivered. */
  readonly retryDelayMs?: number;
  /**
   * Messages requested from the server at a time. Bounded so that a burst of large messages (outputs of up
   * to 512 KiB) stays well under the server's per-client pending limit while we are busy.
   */
  readonly prefetch?: number;
}

export class BatchConsumer {
  private messages: ConsumerMessages | undefined;
  private readonly queue: JsMsg[] = [];
  private wake: (() => void) | undefined;
  private loop: Promise<void> | undefined;
  private stopping = false;
  private inFlight = 0;

  constructor(private readonly options: BatchConsumerOptions) {}

  async start(): Promise<void> {
    const consumer = await this.options.js.consumers.get(this.options.stream, this.options.durable);
    this.messages = await consumer.consume({
      max_messages: this.options.prefetch ?? Math.min(Math.max(this.options.maxBatch, 16), 64),
      callback: (message) => {
        if (this.stopping) {
          // Not ours to handle any more: give it straight back so another process takes it now.
          message.nak();
          return;
        }
        this.queue.push(message);
        this.wake?.();
      },
    });
    this.loop = this.run();
  }

  /** Messages being handled right now (for health and graceful shutdown). */
  get busy(): number {
    return this.inFlight;
  }

  private async run(): Promise<void> {
    while (!this.stopping || this.queue.length > 0) {
      if (this.queue.length === 0) {
        await new Promise<void>((resolve) => (this.wake = resolve));
        this.wake = undefined;
        continue;
      }
      if (this.stopping) {
        for (const message of this.queue.splice(0)) message.nak();
        break;
      }
      await this.handle(this.queue.splice(0, this.options.maxBatch));
    }
  }

  private async handle(batch: JsMsg[]): Promise<void> {
    this.inFlight += batch.length;
    try {
      await this.options.handler(batch);
    } catch (error) {
      this.options.onError?.(error, batch);
      for (const message of batch) message.nak(this.options.retryDelayMs ?? 1_000);
    } finally {
      this.inFlight -= batch.length;
    }
  }

  /**
   * Graceful stop (X4): stop pulling, let the batch in hand finish and be acknowledged, and hand back
   * (nak) whatever was delivered but not started, so nothing waits for an ack timeout.
   */
  async stop(): Promise<void> {
    this.stopping = true;
    await this.messages?.close();
    this.wake?.();
    await this.loop;
  }
}
