import type { Consumer, ConsumerMessages, JetStreamClient, JsMsg } from '@nats-io/jetstream';
import { batchLength, DEFAULT_MAX_BATCH_BYTES, type BatchLimits } from './batch-cut';

/**
 * A durable pull consumer processed in micro-batches: whatever JetStream has already delivered to us, up to
 * `maxBatch` messages and `maxBatchBytes`, is handed to the handler at once. Under load that turns one round
 * trip (and one database transaction) per message into one per batch; when idle, a single message is handled
 * alone without waiting for a batch to fill.
 *
 * Back-pressure: deliveries are taken from the client's iterator into our queue only while the queue holds
 * less than one batch's worth. The client issues its next pull request only once the iterator has been read
 * up to it, so while the handler is busy the client stops pulling: what one process holds is bounded by the
 * batch in hand, one queued batch and `prefetch`, in count and in bytes, and the rest of the stream stays on
 * the server for another process of the durable. (Read in callback mode, the client pulled on regardless: a
 * worker folding a cold 100 000-case suite gathered a whole run's work messages, 75 MB, and died at its heap cap.)
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
  /** Payload bytes one batch holds at most (a larger message is handled alone). */
  readonly maxBatchBytes?: number;
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
  private queuedBytes = 0;
  private readonly limits: BatchLimits;
  /** Wakes the handling loop when a message is queued. */
  private wake: (() => void) | undefined;
  /** Wakes the intake when the queue has room again. */
  private roomy: (() => void) | undefined;
  private intake: Promise<void> | undefined;
  private loop: Promise<void> | undefined;
  private stopping = false;
  private stopped: Promise<void> | undefined;
  private inFlight = 0;

  constructor(private readonly options: BatchConsumerOptions) {
    this.limits = { maxBatch: options.maxBatch, maxBatchBytes: options.maxBatchBytes ?? DEFAULT_MAX_BATCH_BYTES };
  }

  async start(): Promise<void> {
    this.consumer = await this.options.js.consumers.get(this.options.stream, this.options.durable);
    this.messages = await this.consumer.consume({
      max_messages: this.options.prefetch ?? Math.min(Math.max(this.options.maxBatch, 16), 64),
    });
    this.intake = this.take(this.messages);
    this.loop = this.run();
  }

  /** Messages being handled right now (for health and graceful shutdown). */
  get busy(): number {
    return this.inFlight;
  }

  private get full(): boolean {
    return this.queue.length >= this.limits.maxBatch || this.queuedBytes >= this.limits.maxBatchBytes;
  }

  private async take(messages: ConsumerMessages): Promise<void> {
    try {
      for await (const message of messages) {
        this.queue.push(message);
        this.queuedBytes += message.data.length;
        this.wake?.();
        // Not reading the iterator is what stops the client's pulls. Once stopping, read on to the end, so
        // close() completes and what the client still held is queued to be handed back.
        while (this.full && !this.stopping) await new Promise<void>((resolve) => (this.roomy = resolve));
        this.roomy = undefined;
      }
    } catch (error) {
      // The iterator fails only when the consumer or the connection is gone; the loop ends with it.
      this.options.onError?.(error, []);
    }
  }

  private async run(): Promise<void> {
    while (!this.stopping) {
      if (this.queue.length === 0) {
        await new Promise<void>((resolve) => (this.wake = resolve));
        this.wake = undefined;
        continue;
      }
      // The iterator hands over one message per microtask turn: let it hand over everything the client
      // already holds before a batch is cut, or every batch would be a single message.
      if (!this.full) await new Promise<void>((resolve) => setImmediate(resolve));
      if (this.stopping) break;
      const batch = this.queue.splice(0, batchLength(this.queue.map((message) => message.data.length), this.limits));
      for (const message of batch) this.queuedBytes -= message.data.length;
      this.roomy?.();
      await this.handle(batch);
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
    this.roomy?.();
    // Unsubscribes from our pull inbox; resolves once the intake has read what the client still held. The
    // server still holds our last pull request, now with nobody listening.
    await this.messages?.close();
    await this.intake;
    // On NATS 2.9, a nak processed while the durable's only waiting pull requests are such dead ones is
    // mishandled: the server drops the request, loses the nak-ed message until the ack wait, and rewinds its
    // stream cursor, delivering the stream's last message again as new (deliveryCount 1). A consumer info
    // request makes the server prune pull requests nobody listens to (it reports num_waiting), and it is
    // answered after our unsubscribe took effect; once it is, the naks wait in the server's redelivery queue
    // for the next live pull - another process's, or this durable's next consume. Naking before the close
    // instead bounces the messages straight back to our own pull, deliveryCount climbing each time.
    await this.consumer?.info().catch(() => undefined);
    this.queuedBytes = 0;
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
