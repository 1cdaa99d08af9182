import { CONSUMERS } from '@evals/bus';
import { Inject, Injectable, Module, type DynamicModule, type OnApplicationShutdown } from '@nestjs/common';
import { DeadLetterRepository, EventStore, EvidenceRepository, JudgeEvidenceRepository, RunLocks, SuiteVersions } from '@evals/persistence';
import { BUS_NAMES, InfrastructureModule, metrics, type Clock, type IdGenerator, type JsonLogger } from '@evals/platform';
import type { BusNames, MessageBus } from '@evals/bus';
import type { DataSource } from 'typeorm';
import type { WorkerConfig } from './config';
import { EventStamper } from './event-stamper';
import { EvidenceWriter } from './evidence-writer';
import { createWorkerJudge, type WorkerJudge } from './judge-scoring';
import { OutputScorer } from './output-scorer';
import { RunCatalog, workerSuiteVersions } from './run-catalog';
import { RunEvidence } from './run-evidence';
import { RunSealer } from './run-sealer';
import { ScoringService } from './scoring.service';
import { workerSettings, type WorkerSettings } from './settings';
import { WORKER_CONFIG, WORKER_JUDGE, WORKER_SETTINGS } from './tokens';
import { WorkConsumerService } from './work-consumer.service';
import { WorkSettler } from './work-settler';

export const APP_NAME = 'scoring-worker';

/** Closes the verdict cache's Redis connection once the consumer has stopped (X4). */
@Injectable()
class JudgeCloser implements OnApplicationShutdown {
  constructor(@Inject(WORKER_JUDGE) private readonly judge: WorkerJudge | null) {}

  async onApplicationShutdown(): Promise<void> {
    await this.judge?.close();
  }
}

/**
 * The scoring worker (docs/pipeline.md step 2): shared infrastructure (database, the bus with its
 * topology, /health, the outbox relay) and the work consumer. The repositories are providers, injected into
 * the scoring service's collaborators; `composeScoringService` wires the same graph by hand, for the
 * integration tests that run the service without Nest.
 */
@Module({})
export class WorkerModule {
  static forRoot(config: WorkerConfig, logger: JsonLogger): DynamicModule {
    return {
      ...WorkerModule.features(config),
      imports: [InfrastructureModule.forRoot({ app: APP_NAME, config, logger, consumers: [CONSUMERS.scoringWorker] })],
    };
  }

  /** Providers only; the infrastructure (a global module) comes from whoever composes it. */
  static features(config: WorkerConfig): DynamicModule {
    return {
      module: WorkerModule,
      providers: [
        { provide: WORKER_CONFIG, useValue: config },
        {
          provide: WORKER_SETTINGS,
          useFactory: (names: BusNames): WorkerSettings => workerSettings({ names, maxBatch: config.maxBatch, hmacSecret: config.hmacSecret }),
          inject: [BUS_NAMES],
        },
        {
          provide: WORKER_JUDGE,
          // S3, J1: a judge when JUDGE_PROVIDER is set; its verdict cache (J6) is shared in Redis when REDIS_URL
          // is set, else this process's own memory.
          useFactory: (): WorkerJudge | null =>
            createWorkerJudge(config.judge, {
              redisUrl: config.redisUrl,
              memoryCache: true,
              cachePrefix: config.judgeCachePrefix,
              cacheTtlSeconds: config.judgeCacheTtlSeconds,
              keySecret: config.hmacSecret,
              // Issue 13: HTTP calls to the provider by outcome, counted where they are made.
              onCall: (outcome) => metrics.judgeCalls.inc({ outcome }),
            }),
        },
        JudgeCloser,
        // Adapters as providers, so the services get them injected (and unit tests their fakes).
        EventStore,
        { provide: SuiteVersions, useFactory: workerSuiteVersions, inject: [EventStore] },
        EvidenceRepository,
        JudgeEvidenceRepository,
        DeadLetterRepository,
        RunLocks,
        EventStamper,
        RunCatalog,
        RunEvidence,
        WorkSettler,
        EvidenceWriter,
        OutputScorer,
        RunSealer,
        // Injects MESSAGE_BUS, which resolves only once the topology is ensured: the durable exists before we consume.
        ScoringService,
        WorkConsumerService,
      ],
    };
  }
}

/**
 * The scoring service with its collaborators, wired by hand as the providers above wire them: for the
 * integration tests, which run the very same classes against the real servers without Nest.
 */
export function composeScoringService(
  dataSource: DataSource,
  bus: Pick<MessageBus, 'allAcknowledgedBefore'>,
  settings: WorkerSettings,
  clock: Clock,
  ids: IdGenerator,
  judge: WorkerJudge | null = null,
): ScoringService {
  const events = new EventStore();
  const stamper = new EventStamper(clock, ids);
  const evidence = new RunEvidence(new EvidenceRepository(), new JudgeEvidenceRepository(), new RunLocks());
  const settler = new WorkSettler(settings, dataSource, new DeadLetterRepository(), new RunCatalog(events, workerSuiteVersions(events)));
  const scorer = new OutputScorer(settings, judge, settler, new EvidenceWriter(dataSource, events, evidence, settler, stamper), stamper);
  return new ScoringService(settings, bus, settler, scorer, new RunSealer(dataSource, events, evidence, stamper));
}
