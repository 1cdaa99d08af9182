import { batchLength, DEFAULT_MAX_BATCH_BYTES, type BatchLimits } from './batch-cut';
import type { BusMessage, ConsumeOptions, Subscription } from './message-bus.port';
import type { ConsumerSpec } from './topology';

/** A message as an in-process stream holds it. */
export interface StoredMessage {
  readonly seq: number;
  readonly subject: string;
  readonly data: Uint8Array;
  readonly messageId: string | null;
  /** Publish time, ms since the epoch (the bus's clock). */
  readonly time: number;
  /** Size of its journal record: what deleting it frees on disk. */
  readonly bytes: number;
  /** Durables of the stream that have yet to acknowledge it. */
  waiting: number;
}

/** A message a durable has not acknowledged yet. */
interface Unacked {
  readonly msg: StoredMessage;
  deliveries: number;
  /** Bumped on every hand-over, so nak/working of an earlier delivery cannot touch a later one. */
  token: number;
  /** Ack-wait while delivered, redelivery delay after a nak. */
  timer: NodeJS.Timeout | undefined;
}

interface Delivery {
  readonly message: BusMessage;
  /** False once the message was acknowledged or handed to someone else (ack wait expired). */
  current(): boolean;
}

/** NATS subject matching: `*` is one token, a trailing `>` one or more. */
export function subjectMatches(pattern: string, subject: string): boolean {
  const want = pattern.split('.');
  const have = subject.split('.');
  for (let i = 0; i < want.length; i++) {
    if (want[i] === '>') return have.length > i;
    if (i >= have.length || (want[i] !== '*' && want[i] !== have[i])) return false;
  }
  return want.length === have.length;
}

/**
 * A durable consumer: deliver-all from the start, explicit ack, redelivery after a nak (with its delay) or
 * after the ack wait. Its messages are shared by every subscription on it, like JetStream's pull consumers
 * shared by several processes.
 */
export class Durable {
  /** Insertion order is seq order (messages arrive in publish order), which allAcknowledgedBefore relies on. */
  readonly unacked = new Map<number, Unacked>();
  private readonly ready = new Set<number>();
  private readonly subscriptions: InProcessSubscription[] = [];
  private turn = 0;

  constructor(
    readonly spec: ConsumerSpec,
    /** The wire filter subject, when it has one. */
    readonly filter: string | null,
    private readonly ackWaitMs: number,
    private readonly acknowledged: (msg: StoredMessage, durable: Durable) => void,
    /** Resolves once every acknowledgement so far is recorded durably. */
    private readonly recorded: () => Promise<void>,
  ) {}

  matches(subject: string): boolean {
    return this.filter === null || subjectMatches(this.filter, subject);
  }

  /** A message this durable has to see: just published, or left unacknowledged in a replayed journal. */
  offer(msg: StoredMessage): void {
    this.unacked.set(msg.seq, { msg, deliveries: 0, token: 0, timer: undefined });
    this.ready.add(msg.seq);
    this.dispatch();
  }

  allAcknowledgedBefore(seq: number): boolean {
    const oldest = this.unacked.keys().next();
    return oldest.done === true || oldest.value >= seq;
  }

  subscribe(options: ConsumeOptions): InProcessSubscription {
    const subscription = new InProcessSubscription(this, options);
    this.subscriptions.push(subscription);
    this.dispatch();
    return subscription;
  }

  detach(subscription: InProcessSubscription): void {
    const index = this.subscriptions.indexOf(subscription);
    if (index >= 0) this.subscriptions.splice(index, 1);
  }

  /** Hands ready messages to subscriptions with room, one at a time in turn, so several share the work. */
  dispatch(): void {
    while (this.ready.size > 0) {
      const subscription = this.nextWithRoom();
      if (!subscription) return;
      const seq = this.ready.values().next().value as number;
      this.ready.delete(seq);
      subscription.push(this.deliver(this.unacked.get(seq)!));
    }
  }

  private nextWithRoom(): InProcessSubscription | undefined {
    const count = this.subscriptions.length;
    for (let i = 0; i < count; i++) {
      const candidate = this.subscriptions[(this.turn + i) % count];
      if (candidate.room > 0) {
        this.turn = (this.turn + i + 1) % count;
        return candidate;
      }
    }
    return undefined;
  }

  private deliver(entry: Unacked): Delivery {
    entry.deliveries++;
    const token = ++entry.token;
    this.armAckWait(entry);
    const { msg } = entry;
    const current = () => this.unacked.get(msg.seq) === entry && entry.token === token;
    return {
      current,
      message: {
        subject: msg.subject,
        data: msg.data.slice(),
        seq: msg.seq,
        deliveryCount: entry.deliveries,
        messageId: msg.messageId,
        // An ack counts even from a delivery that timed out meanwhile: the work was done.
        ack: () => this.ack(msg.seq),
        ackConfirmed: async () => {
          this.ack(msg.seq);
          await this.recorded();
        },
        nak: (delayMs) => {
          if (current()) this.release(entry, delayMs ?? 0);
        },
        working: () => {
          if (current()) this.armAckWait(entry);
        },
      },
    };
  }

  private ack(seq: number): void {
    const entry = this.unacked.get(seq);
    if (!entry) return;
    clearTimeout(entry.timer);
    this.unacked.delete(seq);
    this.ready.delete(seq);
    this.acknowledged(entry.msg, this);
  }

  /** Back to the queue, now or after `delayMs`. */
  private release(entry: Unacked, delayMs: number): void {
    clearTimeout(entry.timer);
    entry.timer = undefined;
    entry.token++;
    const requeue = () => {
      entry.timer = undefined;
      if (this.unacked.get(entry.msg.seq) !== entry) return;
      this.ready.add(entry.msg.seq);
      this.dispatch();
    };
    if (delayMs > 0) entry.timer = setTimeout(requeue, delayMs).unref();
    else requeue();
  }

  private armAckWait(entry: Unacked): void {
    clearTimeout(entry.timer);
    entry.timer = setTimeout(() => this.release(entry, 0), this.ackWaitMs).unref();
  }

  /** Stops every timer (the bus is closing); nothing is redelivered any more. */
  dispose(): void {
    for (const entry of this.unacked.values()) {
      clearTimeout(entry.timer);
      entry.timer = undefined;
    }
    this.ready.clear();
  }
}

/**
 * One consume() call: the same micro-batch loop as BatchConsumer (batch-consumer.ts) over the durable's
 * deliveries. Whatever is buffered is handed over at once up to maxBatch and maxBatchBytes; a lone message is
 * handled alone. The durable hands this subscription at most `prefetch` deliveries beyond the batch in hand
 * (`room`), the bound BatchConsumer keeps by not reading its client's iterator; no byte bound is needed here,
 * since a buffered delivery is a reference to a message the journal holds anyway.
 */
export class InProcessSubscription implements Subscription {
  private readonly buffer: Delivery[] = [];
  private readonly prefetch: number;
  private readonly limits: BatchLimits;
  private wake: (() => void) | undefined;
  private loop: Promise<void> | undefined;
  private stopping = false;
  private inFlight = 0;

  constructor(
    private readonly durable: Durable,
    private readonly options: ConsumeOptions,
  ) {
    this.prefetch = options.prefetch ?? Math.min(Math.max(options.maxBatch, 16), 64);
    this.limits = { maxBatch: options.maxBatch, maxBatchBytes: options.maxBatchBytes ?? DEFAULT_MAX_BATCH_BYTES };
    this.loop = this.run();
  }

  get busy(): number {
    return this.inFlight;
  }

  /** Deliveries this subscription may still buffer (none once stopping). */
  get room(): number {
    return this.stopping ? 0 : this.prefetch - this.buffer.length;
  }

  push(delivery: Delivery): void {
    this.buffer.push(delivery);
    this.wake?.();
  }

  private async run(): Promise<void> {
    while (!this.stopping || this.buffer.length > 0) {
      if (this.buffer.length === 0) {
        await new Promise<void>((resolve) => (this.wake = resolve));
        this.wake = undefined;
        continue;
      }
      if (this.stopping) {
        for (const delivery of this.buffer.splice(0)) if (delivery.current()) delivery.message.nak();
        break;
      }
      const batch = this.buffer
        .splice(0, batchLength(this.buffer.map((delivery) => delivery.message.data.length), this.limits))
        .filter((delivery) => delivery.current())
        .map((delivery) => delivery.message);
      // Room was freed: refill the buffer while this batch is handled.
      this.durable.dispatch();
      if (batch.length > 0) await this.handle(batch);
    }
  }

  private async handle(batch: BusMessage[]): Promise<void> {
    this.inFlight += batch.length;
    try {
      await this.options.handler(batch);
    } catch (error) {
      try {
        this.options.onError?.(error, batch);
      } catch {
        // A failing error reporter must not stop the loop; the batch is handed back below either way.
      }
      for (const message of batch) message.nak(this.options.retryDelayMs ?? 1_000);
    } finally {
      this.inFlight -= batch.length;
    }
  }

  /** Graceful stop (X4): no new messages, the batch in hand finishes, the buffered rest is handed back. */
  async stop(): Promise<void> {
    if (!this.stopping) {
      this.stopping = true;
      this.durable.detach(this);
      this.wake?.();
    }
    await this.loop;
  }
}
