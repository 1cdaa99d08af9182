import type { BusNames, ConsumerSpec } from './topology';

/**
 * The bus as the apps see it (docs/pipeline.md): streams of subjects, durable consumers with explicit
 * acknowledgement, at-least-once delivery and de-duplication by message id. Two adapters implement it with
 * the same semantics - JetStream for a deployment, an in-process bus for the embedded all-in-one default -
 * and one contract test suite (message-bus.contract.ts) runs against both.
 */
export interface BusMessage {
  /** The subject as it travelled (with the deployment prefix; `contractSubject` removes it). */
  readonly subject: string;
  readonly data: Uint8Array;
  /** The stream sequence: increasing in publish order within a stream. */
  readonly seq: number;
  /** 1 on the first delivery, 2 on the first redelivery, ... */
  readonly deliveryCount: number;
  /** The id it was published with (de-duplication key), when it had one. */
  readonly messageId: string | null;
  ack(): void;
  /**
   * Acknowledges and resolves once the bus has recorded it: after this, the message is never redelivered
   * and the consumer's ack floor has moved past it (a seal waiting on `allAcknowledgedBefore` sees it).
   */
  ackConfirmed(): Promise<void>;
  /** Hands the message back; it is redelivered after `delayMs` (immediately when absent). */
  nak(delayMs?: number): void;
  /** Still being handled: restarts the ack-wait timer so a slow batch is not redelivered meanwhile. */
  working(): void;
}

export interface PublishAck {
  readonly seq: number;
  /** True when a message with the same id was already stored: nothing new was stored. */
  readonly duplicate: boolean;
}

/** The one way this service puts bytes on the bus: always with a message id, so retries de-duplicate. */
export interface MessagePublisher {
  publish(subject: string, payload: Uint8Array | string, messageId: string): Promise<PublishAck>;
}

export interface ConsumeOptions {
  /** Messages handed to the handler at once, at most. */
  readonly maxBatch: number;
  /** Payload bytes handed to the handler at once, at most (a larger message comes alone); default 8 MiB. */
  readonly maxBatchBytes?: number;
  /**
   * Owns acknowledgement: it must ack or nak every message it is given. A handler that throws naks the
   * whole batch (after `retryDelayMs`) so nothing is lost; redelivery is harmless because handlers are
   * idempotent.
   */
  readonly handler: (batch: BusMessage[]) => Promise<void>;
  readonly onError?: (error: unknown, batch: readonly BusMessage[]) => void;
  readonly retryDelayMs?: number;
  /** Messages held undelivered-to-the-handler at a time (bounded so a burst of large ones stays small). */
  readonly prefetch?: number;
}

export interface Subscription {
  /** Messages being handled right now (health, graceful shutdown). */
  readonly busy: number;
  /** Graceful stop (X4): stop taking messages, finish the batch in hand, hand the rest back. */
  stop(): Promise<void>;
}

export interface MessageBus extends MessagePublisher {
  readonly names: BusNames;
  /** Creates every stream and durable consumer of the topology; idempotent. */
  ensureTopology(): Promise<void>;
  consume(consumer: ConsumerSpec, options: ConsumeOptions): Promise<Subscription>;
  /**
   * True when every message of the consumer's stream before `seq` has been acknowledged by it. A seal waits
   * on it for the outputs published before it, which other batches (or processes) may still be handling.
   */
  allAcknowledgedBefore(consumer: ConsumerSpec, seq: number): Promise<boolean>;
  /** Messages not yet acknowledged by the consumer (lag gauge, X2). */
  pending(consumer: ConsumerSpec): Promise<number>;
  /** Connected and able to publish (health). */
  readonly healthy: boolean;
  close(): Promise<void>;
}
