import { Inject, Injectable, type BeforeApplicationShutdown, type OnApplicationBootstrap } from '@nestjs/common';
import { acknowledgeAll, CONSUMERS, type BusMessage, type MessageBus, type Subscription } from '@evals/bus';
import { parseRunEvent } from '@evals/domain';
import { DeadLetterRepository } from '@evals/persistence';
import { DATA_SOURCE, LOGGER, MESSAGE_BUS, metrics, type JsonLogger } from '@evals/platform';
import type { DataSource, EntityManager } from 'typeorm';
import { RegressionService } from './regression.service';

/** How long an event handed back (its run not known yet, or it failed) waits before it is delivered again. */
const RETRY_DELAY_MS = 1_000;

/** Durable consumer of `run.scored` events (EVALS_EVENTS, durable `regression`). */
@Injectable()
export class RunScoredConsumer implements OnApplicationBootstrap, BeforeApplicationShutdown {
  private subscription: Subscription | undefined;
  private readonly deadLetters = new DeadLetterRepository();

  constructor(
    private readonly regression: RegressionService,
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

  /**
   * A micro-batch's run.scored events decided in one transaction, in stream order (a run may be the next
   * one's baseline: it sees the verdict decided before it in the batch), then acknowledged: one commit and
   * one confirmed ack a batch instead of one each a run (issue 28: at 50 runs a second they were a fifth of
   * this app's work), and a fixed number of statements a batch, not a few a run. A batch that fails - or
   * that raced another process for a verdict or a stream (VerdictRecordedMeanwhile, StreamVersionConflict) -
   * is decided again one event a transaction, so an event that cannot be decided fails alone and the others
   * are not held back with it.
   */
  async handle(batch: readonly BusMessage[]): Promise<void> {
    metrics.messagesHandled.inc({ consumer: 'regression' }, batch.length);
    let settled: Settled[];
    try {
      settled = await this.db.transaction((m) => this.decideAll(m, batch));
    } catch (error) {
      if (batch.length === 1) throw error;
      settled = [];
      for (const msg of batch) {
        try {
          settled.push(...(await this.db.transaction((m) => this.decideAll(m, [msg]))));
        } catch (alone) {
          this.logger.event('error', 'run.scored failed; redelivering', { stream_seq: msg.seq, error: alone instanceof Error ? alone.name : 'error' });
          settled.push({ msg, retry: true });
        }
      }
    }
    const done: BusMessage[] = [];
    for (const { msg, retry, compared } of settled) {
      if (retry) msg.nak(RETRY_DELAY_MS);
      else done.push(msg);
      if (compared) this.logger.event('info', 'run compared', compared);
    }
    await acknowledgeAll(done);
  }

  /** Decides each event on `sql` (one transaction); what to do with each message once it commits. */
  private async decideAll(sql: EntityManager, batch: readonly BusMessage[]): Promise<Settled[]> {
    const parsed = batch.map((msg) => {
      let raw: any;
      try {
        raw = JSON.parse(Buffer.from(msg.data).toString('utf8'));
      } catch {
        raw = null;
      }
      return { msg, raw, event: parseRunEvent(raw) };
    });
    // The batch's runs read together, before the first decision, and its decisions written together after
    // the last (RegressionService.readAhead, write).
    const batched = await this.regression.readAhead(
      sql,
      parsed.flatMap(({ event }) => (!('error' in event) && event.type === 'run.scored' ? [event.data] : [])),
    );
    const settled: Settled[] = [];
    for (const { msg, raw, event } of parsed) {
      if ('error' in event) {
        await this.deadLetters.add(sql, [{ subject: msg.subject, code: 'INVALID_EVENT', reason: event.error, message_id: raw?.metadata?.message_id ?? null, stream_seq: msg.seq }]);
        settled.push({ msg });
        continue;
      }
      if (event.type !== 'run.scored') {
        settled.push({ msg });
        continue;
      }
      const outcome = await this.regression.decide(sql, { data: event.data, metadata: raw.metadata }, batched);
      if (outcome.kind === 'run_unknown') {
        const final = msg.deliveryCount >= CONSUMERS.regression.deadLetterAfter;
        if (final) await this.deadLetters.add(sql, [{ subject: msg.subject, code: 'UNKNOWN_RUN', reason: 'run.scored for a run with no run.opened', message_id: raw.metadata?.message_id ?? null, stream_seq: msg.seq }]);
        settled.push({ msg, retry: !final });
        continue;
      }
      if (outcome.kind === 'recorded') {
        const { row, finding } = outcome;
        settled.push({ msg, compared: { project: row.project, run_id: row.run_id, verdict: row.verdict, baseline_run_id: row.baseline_run_id, finding } });
      } else settled.push({ msg });
    }
    // A verdict recorded meanwhile by another process: this event was a duplicate after all (a batch of one decision).
    const duplicates = await this.regression.write(sql, batched);
    return duplicates.size === 0 ? settled : settled.map((s) => (s.compared && duplicates.has(String(s.compared.run_id)) ? { msg: s.msg } : s));
  }
}

/** One message of a batch once its transaction committed: handed back for later (`retry`), or acknowledged. */
interface Settled {
  readonly msg: BusMessage;
  readonly retry?: boolean;
  /** The verdict recorded, for the log line. */
  readonly compared?: Record<string, string | number | boolean | null>;
}
