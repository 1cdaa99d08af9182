import { CONSUMERS } from '@evals/bus';
import { Inject, Injectable, Module, type DynamicModule, type OnApplicationShutdown } from '@nestjs/common';
import {
  BUS_NAMES,
  CLOCK,
  DATA_SOURCE,
  ID_GENERATOR,
  InfrastructureModule,
  MESSAGE_BUS,
  type Clock,
  type IdGenerator,
  type JsonLogger,
} from '@evals/platform';
import type { BusNames, MessageBus } from '@evals/bus';
import type { DataSource } from 'typeorm';
import type { WorkerConfig } from './config';
import { createWorkerJudge, type WorkerJudge } from './judge-scoring';
import { ScoringService } from './scoring.service';
import { workerSettings, type WorkerSettings } from './settings';
import { WORKER_CONFIG, WORKER_JUDGE, WORKER_SETTINGS } from './tokens';
import { WorkConsumerService } from './work-consumer.service';

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
 * topology, /health, the outbox relay) and the work consumer. ScoringService is framework-free and built
 * by a factory, so the integration tests construct the very same class without Nest.
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
            }),
        },
        JudgeCloser,
        {
          provide: ScoringService,
          // MESSAGE_BUS resolves only once the topology is ensured, so the durable exists before we consume.
          useFactory: (ds: DataSource, bus: MessageBus, settings: WorkerSettings, clock: Clock, ids: IdGenerator, judge: WorkerJudge | null) =>
            new ScoringService(ds, bus, settings, clock, ids, judge),
          inject: [DATA_SOURCE, MESSAGE_BUS, WORKER_SETTINGS, CLOCK, ID_GENERATOR, WORKER_JUDGE],
        },
        WorkConsumerService,
      ],
    };
  }
}
