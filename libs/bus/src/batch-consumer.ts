import type { Consumer, ConsumerMessages, JetStreamClient, JsMsg } from '@nats-io/jetstream';

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
  private consumer: Consumer | undefined;
  private messages: ConsumerMessages | undefined;
  private readonly queue: JsMsg[] = [];
  private wake: (() => void) | undefined;
  private loop: Promise<void> | undefined;
  private stopping = false;
  private stopped: Promise<void> | undefined;
  private inFlight = 0;

  constructor(private readonly options: BatchConsumerOptions) {}

  async start(): Promise<void> {
    this.consumer = await this.options.js.consumers.get(this.options.stream, this.options.durable);
    this.messages = await this.consumer.consume({
      max_messages: this.options.prefetch ?? Math.min(Math.max(this.options.maxBatch, 16), 64),
      callback: (message) => {
        // Once stopping, the loop takes nothing more: stop() hands whatever is queued back.
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
    while (!this.stopping) {
      if (this.queue.length === 0) {
        await new Promise<void>((resolve) => (this.wake = resolve));
        this.wake = undefined;
        continue;
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
   * Graceful stop (X4): stop pulling, hand back (nak) whatever was delivered but not started, so another
   * process - or this durable's next one - gets it at once instead of after the ack wait, and let the batch
   * in hand finish and be acknowledged. Idempotent.
   */
  stop(): Promise<void> {
    return (this.stopped ??= this.shutdown());
  }

  private async shutdown(): Promise<void> {
    this.stopping = true;
    this.wake?.();
    // Unsubscribes from our pull inbox. The server still holds our last pull request, now with nobody listening.
    await this.messages?.close();
    // On NATS 2.9, a nak processed while the durable's only waiting pull requests are such dead ones is
    // mishandled: the server drops the request, loses the nak-ed message until the ack wait, and rewinds its
    // stream cursor, delivering the stream's last message again as new (deliveryCount 1). A consumer info
    // request makes the server prune pull requests nobody listens to (it reports num_waiting), and it is
    // answered after our unsubscribe took effect; once it is, the naks wait in the server's redelivery queue
    // for the next live pull - another process's, or this durable's next consume. Naking before the close
    // instead bounces the messages straight back to our own pull, deliveryCount climbing each time.
    await this.consumer?.info().catch(() => undefined);
    for (const message of this.queue.splice(0)) {
      try {
        message.nak();
      } catch {
        // The connection is gone: the server redelivers after the ack wait.
      }
    }
    await this.loop;
  }
}
