import { Inject, Injectable, type BeforeApplicationShutdown, type OnApplicationBootstrap } from '@nestjs/common';
import { CONSUMERS, type BusMessage, type MessageBus, type Subscription } from '@evals/bus';
import { parseRunEvent } from '@evals/domain';
import { DeadLetterRepository } from '@evals/persistence';
import { DATA_SOURCE, LOGGER, MESSAGE_BUS, metrics, OutboxRelayService, type JsonLogger } from '@evals/platform';
import type { DataSource } from 'typeorm';
import { RegressionService } from './regression.service';

/** Durable consumer of `run.scored` events (EVALS_EVENTS, durable `regression`). */
@Injectable()
export class RunScoredConsumer implements OnApplicationBootstrap, BeforeApplicationShutdown {
  private subscription: Subscription | undefined;
  private readonly deadLetters = new DeadLetterRepository();

  constructor(
    private readonly regression: RegressionService,
    private readonly relay: OutboxRelayService,
    @Inject(DATA_SOURCE) private readonly db: DataSource,
    @Inject(MESSAGE_BUS) private readonly bus: MessageBus,
    @Inject(LOGGER) private readonly logger: JsonLogger,
  ) {}

  async onApplicationBootstrap(): Promise<void> {
    this.subscription = await this.bus.consume(CONSUMERS.regression, {
      maxBatch: 100,
      handler: (batch) => this.handle(batch),
      onError: (error) => this.logger.event('error', 'regression batch failed; redelivering', { error: error instanceof Error ? error.name : 'error' }),
    });
  }

  async beforeApplicationShutdown(): Promise<void> {
    await this.subscription?.stop();
  }

  async handle(batch: readonly BusMessage[]): Promise<void> {
    metrics.messagesHandled.inc({ consumer: 'regression' }, batch.length);
    for (const msg of batch) {
      let raw: any;
      try {
        raw = JSON.parse(Buffer.from(msg.data).toString('utf8'));
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
        if (msg.deliveryCount >= CONSUMERS.regression.deadLetterAfter) {
          await this.deadLetters.add(this.db, [{ subject: msg.subject, code: 'UNKNOWN_RUN', reason: 'run.scored for a run with no run.opened', message_id: raw.metadata?.message_id ?? null, stream_seq: msg.seq }]);
          msg.ack();
        } else msg.nak(1_000);
        continue;
      }
      if (outcome.kind === 'recorded') {
        this.logger.event('info', 'run compared', { project: outcome.row.project, run_id: outcome.row.run_id, verdict: outcome.row.verdict, baseline_run_id: outcome.row.baseline_run_id, finding: outcome.finding });
        if (outcome.finding) this.relay.relay.notify();
      }
      await msg.ackConfirmed();
    }
  }
}
