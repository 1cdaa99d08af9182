import { Inject, Injectable, type BeforeApplicationShutdown, type OnApplicationBootstrap } from '@nestjs/common';
import type { MessageBus } from '@evals/bus';
import { LOGGER, MESSAGE_BUS, metrics, type JsonLogger } from '@evals/platform';
import type { BatchOutcome } from './scoring.service';
import { ScoringService } from './scoring.service';
import type { WorkerSettings } from './settings';
import { WORKER_SETTINGS } from './tokens';
import { WorkConsumer } from './work-consumer';

/** Runs the work consumer for the app's lifetime: started at bootstrap, drained before shutdown (X4). */
@Injectable()
export class WorkConsumerService implements OnApplicationBootstrap, BeforeApplicationShutdown {
  private readonly consumer: WorkConsumer;

  constructor(
    @Inject(MESSAGE_BUS) bus: MessageBus,
    @Inject(WORKER_SETTINGS) private readonly settings: WorkerSettings,
    @Inject(ScoringService) scoring: ScoringService,
    @Inject(LOGGER) private readonly logger: JsonLogger,
  ) {
    this.consumer = new WorkConsumer(bus, settings, scoring, logger, { onBatch: record });
  }

  async onApplicationBootstrap(): Promise<void> {
    await this.consumer.start();
    this.logger.event('info', 'consuming work', { stream: this.settings.stream, durable: this.settings.durable, max_batch: this.settings.maxBatch });
  }

  // Before any onApplicationShutdown hook: the relay and the connections are still up while the batch in
  // hand commits and is acknowledged.
  async beforeApplicationShutdown(): Promise<void> {
    await this.consumer.stop();
    this.logger.event('info', 'work consumer stopped');
  }
}

/** Labels of judge cases failed without a call: no judge, no key, or the gate's budget or calibration said no. */
const JUDGE_SKIP_LABELS = new Set(['judge_not_configured', 'judge_credential_missing', 'budget_blocked', 'budget_throttled', 'judge_uncalibrated']);

/** Prometheus counters (X2): codes and names as labels, never an id. */
function record(outcome: BatchOutcome): void {
  metrics.messagesHandled.inc({ consumer: 'scoring-worker' }, outcome.messages);
  for (const [scorer, count] of Object.entries(outcome.scoredByScorer)) metrics.casesScored.inc({ scorer }, count);
  if (outcome.sealedRunIds.length > 0) metrics.runsCompleted.inc(outcome.sealedRunIds.length);
  for (const letter of outcome.deadLettered) metrics.deadLettered.inc({ subject: letter.subject, code: letter.code });
  // Cases by label; HTTP calls are counted where they are made (the judge's `onCall`, createWorkerJudge).
  for (const [label, count] of Object.entries(outcome.judge.labels)) {
    metrics.judgeCases.inc({ label }, count);
    if (JUDGE_SKIP_LABELS.has(label)) metrics.judgeSkipped.inc({ reason: label }, count);
  }
  if (outcome.judge.cacheHits > 0) metrics.cacheLookups.inc({ result: 'hit' }, outcome.judge.cacheHits);
  if (outcome.judge.cacheMisses > 0) metrics.cacheLookups.inc({ result: 'miss' }, outcome.judge.cacheMisses);
}
