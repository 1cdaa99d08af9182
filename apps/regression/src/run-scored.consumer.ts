import { Inject, Injectable, type BeforeApplicationShutdown, type OnApplicationBootstrap } from '@nestjs/common';
import type { JetStreamClient, JsMsg } from '@nats-io/jetstream';
import { BatchConsumer, CONSUMERS, streamOf, type BusNames } from '@evals/bus';
import { parseRunEvent } from '@evals/domain';
import { DeadLetterRepository } from '@evals/persistence';
import { BUS_NAMES, DATA_SOURCE, JETSTREAM, LOGGER, metrics, OutboxRelayService, type JsonLogger } from '@evals/platform';
import type { DataSource } from 'typeorm';
import { RegressionService } from './regression.service';

/** Durable consumer of `run.scored` events (EVALS_EVENTS, durable `regression`). */
@Injectable()
export class RunScoredConsumer implements OnApplicationBootstrap, BeforeApplicationShutdown {
  private consumer: BatchConsumer | undefined;
  private readonly deadLetters = new DeadLetterRepository();

  constructor(
    private readonly regression: RegressionService,
    private readonly relay: OutboxRelayService,
    @Inject(DATA_SOURCE) private readonly db: DataSource,
    @Inject(JETSTREAM) private readonly js: JetStreamClient,
    @Inject(BUS_NAMES) private readonly names: BusNames,
    @Inject(LOGGER) private readonly logger: JsonLogger,
  ) {}

  async onApplicationBootstrap(): Promise<void> {
    this.consumer = new BatchConsumer({
      js: this.js,
      stream: streamOf(this.names, CONSUMERS.regression.stream),
      durable: CONSUMERS.regression.durable,
      maxBatch: 100,
      handler: (batch) => this.handle(batch),
      onError: (error) => this.logger.event('error', 'regression batch failed; redelivering', { error: error instanceof Error ? error.name : 'error' }),
    });
    await this.consumer.start();
  }

  async beforeApplicationShutdown(): Promise<void> {
    await this.consumer?.stop();
  }

  async handle(batch: readonly JsMsg[]): Promise<void> {
    metrics.messagesHandled.inc({ consumer: 'regression' }, batch.length);
    for (const msg of batch) {
      let raw: any;
      try {
        raw = msg.json();
      } catch {
        raw = null;
      }
      const event = parseRunEvent(raw);
      if ('error' in event) {
        await this.deadLetters.add(this.db, [{ subject: msg.subject, code: 'INVALID_EVENT', reason: event.error, message_id: raw?.metadata?.message_id ?? null, stream_seq: msg.seq }]);
        msg.ack();
        continue;
      }
      if (event.type !== 'run.scored') {
        msg.ack();
        continue;
      }
      const outcome = await this.db.transaction((m) => this.regression.decide(m, { data: event.data, metadata: raw.metadata }));
      if (outcome.kind === 'run_unknown') {
        if (msg.info.deliveryCount >= CONSUMERS.regression.deadLetterAfter) {
          await this.deadLetters.add(this.db, [{ subject: msg.subject, code: 'UNKNOWN_RUN', reason: 'run.scored for a run with no run.opened', message_id: raw.metadata?.message_id ?? null, stream_seq: msg.seq }]);
          msg.ack();
        } else msg.nak(1_000);
        continue;
      }
      if (outcome.kind === 'recorded') {
        this.logger.event('info', 'run compared', { run_id: outcome.row.run_id, verdict: outcome.row.verdict, baseline_run_id: outcome.row.baseline_run_id, finding: outcome.finding });
        if (outcome.finding) this.relay.relay.notify();
      }
      await msg.ackAck();
    }
  }
}
