import type * as JetStreamModule from '@nats-io/jetstream';
import type { JetStreamClient, JetStreamManager, JsMsg } from '@nats-io/jetstream';
import type { NatsConnection } from '@nats-io/nats-core';
import { BatchConsumer } from './batch-consumer';
import type { BusMessage, ConsumeOptions, MessageBus, PublishAck, Subscription } from './message-bus.port';
import { ensureTopology, streamOf, type BusNames, type ConsumerSpec, type TopologyOptions } from './topology';

/** The deployment's bus: NATS JetStream (docs/pipeline.md). */
export class JetStreamBus implements MessageBus {
  private readonly js: JetStreamClient;
  /**
   * Whether the connection is up now. It is never closed while the server is away (the client reconnects
   * forever), so "not closed" would report a stopped NATS as healthy; the client's status events say when
   * it lost the server and when it has it back.
   */
  private connected = true;

  private constructor(
    private readonly nc: NatsConnection,
    private readonly jsm: JetStreamManager,
    readonly names: BusNames,
    private readonly topology: TopologyOptions,
    private readonly publishTimeoutMs: number,
    client: typeof JetStreamModule,
  ) {
    this.js = client.jetstream(nc);
    void this.watchStatus();
  }

  private async watchStatus(): Promise<void> {
    for await (const s of this.nc.status()) {
      if (s.type === 'disconnect' || s.type === 'reconnecting') this.connected = false;
      else if (s.type === 'reconnect') this.connected = true;
    }
  }

  static async connect(nc: NatsConnection, names: BusNames, options: TopologyOptions & { publishTimeoutMs?: number } = {}): Promise<JetStreamBus> {
    // Loaded with the first connection, not with @evals/bus: the all-in-one never connects (issue 15).
    const client = require('@nats-io/jetstream') as typeof JetStreamModule;
    return new JetStreamBus(nc, await client.jetstreamManager(nc), names, options, options.publishTimeoutMs ?? 5_000, client);
  }

  ensureTopology(): Promise<void> {
    return ensureTopology(this.jsm, this.names, this.topology);
  }

  async publish(subject: string, payload: Uint8Array | string, messageId: string): Promise<PublishAck> {
    const ack = await this.js.publish(subject, payload, { msgID: messageId, timeout: this.publishTimeoutMs });
    return { seq: ack.seq, duplicate: ack.duplicate };
  }

  async consume(consumer: ConsumerSpec, options: ConsumeOptions): Promise<Subscription> {
    const batches = new BatchConsumer({
      js: this.js,
      stream: streamOf(this.names, consumer.stream),
      durable: consumer.durable,
      maxBatch: options.maxBatch,
      maxBatchBytes: options.maxBatchBytes,
      prefetch: options.prefetch,
      retryDelayMs: options.retryDelayMs,
      handler: (batch) => options.handler(batch.map(busMessage)),
      onError: options.onError ? (error, batch) => options.onError!(error, batch.map(busMessage)) : undefined,
    });
    await batches.start();
    return batches;
  }

  async allAcknowledgedBefore(consumer: ConsumerSpec, seq: number): Promise<boolean> {
    const info = await this.jsm.consumers.info(streamOf(this.names, consumer.stream), consumer.durable);
    return info.ack_floor.stream_seq >= seq - 1;
  }

  async pending(consumer: ConsumerSpec): Promise<number> {
    const info = await this.jsm.consumers.info(streamOf(this.names, consumer.stream), consumer.durable);
    return info.num_pending + info.num_ack_pending;
  }

  get healthy(): boolean {
    return this.connected && !this.nc.isClosed();
  }

  /** Drains the connection: what was published is flushed, subscriptions end. */
  async close(): Promise<void> {
    if (!this.nc.isClosed()) await this.nc.drain().catch(() => undefined);
  }
}

/** A JetStream delivery seen through the port; the JsMsg stays reachable for nothing else. */
function busMessage(msg: JsMsg): BusMessage {
  return new JetStreamDelivery(msg);
}

/**
 * One object per delivery, its methods on the prototype (a consumer handles thousands of deliveries a
 * second: five closures each were garbage). The message id is read from the headers only when asked - a
 * dead letter names it; nothing else does - since decoding the headers of every delivery showed in profiles.
 */
class JetStreamDelivery implements BusMessage {
  readonly subject: string;
  readonly data: Uint8Array;
  readonly seq: number;
  readonly deliveryCount: number;
  private id: string | null | undefined;

  constructor(private readonly msg: JsMsg) {
    this.subject = msg.subject;
    this.data = msg.data;
    this.seq = msg.seq;
    this.deliveryCount = msg.info.deliveryCount;
  }

  get messageId(): string | null {
    if (this.id === undefined) this.id = this.msg.headers?.get('Nats-Msg-Id') || null;
    return this.id;
  }

  ack(): void {
    this.msg.ack();
  }

  async ackConfirmed(): Promise<void> {
    await this.msg.ackAck();
  }

  nak(delayMs?: number): void {
    this.msg.nak(delayMs);
  }

  working(): void {
    this.msg.working();
  }
}
