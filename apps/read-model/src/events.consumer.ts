import { CONSUMERS, contractSubject, type BusMessage, type MessageBus, type Subscription } from '@evals/bus';
import { pgCode } from '@evals/persistence';
import type { DataSource } from 'typeorm';
import { performance } from 'node:perf_hooks';
import type { StoredEventLike } from './event-check';
import type { Delivery, ProjectorLogger, RunProjector } from './run.projector';

export interface EventsConsumerOptions {
  readonly dataSource: DataSource;
  readonly bus: Pick<MessageBus, 'consume' | 'names'>;
  readonly projector: RunProjector;
  readonly logger?: ProjectorLogger;
  /** Called after a commit that recorded runs' EvalResults or verdicts: wakes a request of this process waiting for them. */
  readonly onRecorded?: (runIds: readonly string[]) => void;
  readonly maxBatch?: number;
  /** Delay before a deferred event (its run.opened not seen yet) is offered again. */
  readonly deferDelayMs?: number;
  /** Delay before a batch whose transaction failed is redelivered. */
  readonly retryDelayMs?: number;
  /** Deliveries after which a still-unopenable event is dead-lettered (CONSUMERS.readModel). */
  readonly deadLetterAfter?: number;
}

/**
 * The read model's durable consumer `read-model` on EVALS_EVENTS (docs/pipeline.md, step 3). Each
 * micro-batch is projected in one transaction; messages are acknowledged only after it committed, so a
 * crash in between redelivers them and the inbox turns the repeat into a no-op. A failed transaction naks
 * the whole batch (the bus does). An event deferred by the projection (its run is not opened anywhere
 * yet) is nak'ed with a delay, and dead-lettered on its last allowed delivery.
 */
export class EventsConsumer {
  private subscription: Subscription | undefined;
  private readonly deadLetterAfter: number;

  constructor(private readonly options: EventsConsumerOptions) {
    this.deadLetterAfter = options.deadLetterAfter ?? CONSUMERS.readModel.deadLetterAfter;
  }

  async start(): Promise<void> {
    const options = this.options;
    this.subscription ??= await options.bus.consume(CONSUMERS.readModel, {
      maxBatch: options.maxBatch ?? 500,
      retryDelayMs: options.retryDelayMs ?? 1_000,
      handler: (batch) => this.handle(batch),
      onError: (error, batch) =>
        options.logger?.event('warn', 'read-model batch failed; redelivering', {
          size: batch.length,
          error: error instanceof Error ? error.name : 'error',
          code: pgCode(error),
        }),
    });
  }

  /** Finishes and acknowledges the batch in hand, hands back the rest (X4). */
  async stop(): Promise<void> {
    const subscription = this.subscription;
    this.subscription = undefined;
    await subscription?.stop();
  }

  get busy(): number {
    return this.subscription?.busy ?? 0;
  }

  async handle(batch: BusMessage[]): Promise<void> {
    const started = performance.now();
    const events = batch.map((m) => decode(m));
    const deliveries: Delivery[] = batch.map((m) => ({
      subject: contractSubject(this.options.bus.names, m.subject),
      stream_seq: m.seq,
      final: m.deliveryCount >= this.deadLetterAfter,
    }));
    const outcome = await this.options.dataSource.transaction((manager) =>
      this.options.projector.apply(manager, events, { deliveries }),
    );
    batch.forEach((message, i) => {
      if (outcome.statuses[i] === 'deferred') message.nak(this.options.deferDelayMs ?? 2_000);
      else message.ack();
    });
    if (outcome.resultsRecorded.length + outcome.verdictsRecorded.length > 0) this.options.onRecorded?.([...outcome.resultsRecorded, ...outcome.verdictsRecorded]);
    if (outcome.deadLettered > 0 || outcome.deferred > 0) {
      this.options.logger?.event('warn', 'read-model events not applied', { dead_lettered: outcome.deadLettered, deferred: outcome.deferred });
    }
    this.options.logger?.event('debug', 'read-model batch applied', {
      size: batch.length,
      applied: outcome.applied,
      duplicates: outcome.duplicates,
      results: outcome.resultsRecorded.length,
      checkpoint: outcome.checkpoint,
      ms: Math.round(performance.now() - started),
    });
  }
}

/** The JSON of one message, or null when the bytes are not one JSON text (dead-lettered by the projector). */
function decode(message: BusMessage): StoredEventLike | null {
  try {
    const value: unknown = JSON.parse(Buffer.from(message.data).toString('utf8'));
    return typeof value === 'object' && value !== null ? (value as StoredEventLike) : null;
  } catch {
    return null;
  }
}
