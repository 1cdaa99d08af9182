import type { Consumer, ConsumerMessages, JetStreamClient, JsMsg } from '@nats-io/jetstream';

/**
 * A durable pull consumer processed in micro-batches: whatever JetStream has already buffered for us, up to
 * `maxBatch`, is handed to the handler at once. Under load that turns one round trip (and one database
 * transaction) per message into one per batch; when idle, a single message is handled alone without
 * waiting for a batch to fill.
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
}

export class BatchConsumer {
  private messages: ConsumerMessages | undefined;
  private loop: Promise<void> | undefined;
  private stopping = false;
  private inFlight = 0;

  constructor(private readonly options: BatchConsumerOptions) {}

  async start(): Promise<void> {
    const consumer: Consumer = await this.options.js.consumers.get(this.options.stream, this.options.durable);
    this.messages = await consumer.consume({ max_messages: Math.max(this.options.maxBatch * 2, 64) });
    this.loop = this.run(this.messages);
  }

  /** Messages being handled right now (for health and graceful shutdown). */
  get busy(): number {
    return this.inFlight;
  }

  private async run(messages: ConsumerMessages): Promise<void> {
    let batch: JsMsg[] = [];
    for await (const message of messages) {
      if (this.stopping) {
        // Not ours to handle any more: give it straight back so another process takes it now.
        message.nak();
        continue;
      }
      batch.push(message);
      if (batch.length < this.options.maxBatch && messages.getPending() > 0) continue;
      const current = batch;
      batch = [];
      await this.handle(current);
    }
    if (batch.length > 0) await this.handle(batch);
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
   * (nak) whatever was buffered but not started, so nothing waits for an ack timeout.
   */
  async stop(): Promise<void> {
    this.stopping = true;
    await this.messages?.close();
    await this.loop;
  }
}
