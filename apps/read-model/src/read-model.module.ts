import { CONSUMERS } from '@evals/bus';
import { Module, type DynamicModule } from '@nestjs/common';
import {
  BUS_NAMES,
  DATA_SOURCE,
  ID_GENERATOR,
  InfrastructureModule,
  MESSAGE_BUS,
  LOGGER,
  RUN_PROGRESS,
  type IdGenerator,
  type JsonLogger,
  type RunProgress,
} from '@evals/platform';
import type { MessageBus } from '@evals/bus';
import type { DataSource } from 'typeorm';
import type { ReadModelConfig } from './config';
import { EventsConsumer } from './events.consumer';
import { RunProjector } from './run.projector';
import { RunQueries } from '@evals/persistence';
import { RUN_QUERIES, RunsController } from './runs.controller';
import { ScorecardsController } from './scorecards.controller';
import { DASHBOARD_CONTROLLERS, dashboardProviders } from './dashboard/dashboard.providers';

export const READ_MODEL_CONFIG = Symbol('READ_MODEL_CONFIG');
const EVENTS_CONSUMER = Symbol('EVENTS_CONSUMER');

/**
 * Starts the consumer once the app is up, and stops it before any other shutdown hook runs (X4): the batch
 * in hand commits and is acknowledged while the database, the relay and the bus are still there.
 */
class EventsConsumerLifecycle {
  constructor(
    private readonly consumer: EventsConsumer,
    private readonly logger: JsonLogger,
  ) {}

  async onApplicationBootstrap(): Promise<void> {
    await this.consumer.start();
    this.logger.event('info', 'read-model consumer started');
  }

  async beforeApplicationShutdown(): Promise<void> {
    await this.consumer.stop();
    this.logger.event('info', 'read-model consumer stopped');
  }
}

@Module({})
export class ReadModelModule {
  static forRoot(config: ReadModelConfig, logger: JsonLogger): DynamicModule {
    return {
      ...ReadModelModule.features(config),
      imports: [InfrastructureModule.forRoot({ app: 'read-model', config, logger, consumers: [CONSUMERS.readModel] })],
    };
  }

  /** Controllers and providers only; the infrastructure (a global module) comes from whoever composes it. */
  static features(config: ReadModelConfig): DynamicModule {
    return {
      module: ReadModelModule,
      controllers: [RunsController, ScorecardsController, ...DASHBOARD_CONTROLLERS],
      providers: [
        { provide: READ_MODEL_CONFIG, useValue: config },
        ...dashboardProviders(config),
        {
          provide: RunProjector,
          useFactory: (ids: IdGenerator, log: JsonLogger) => new RunProjector(ids, log),
          inject: [ID_GENERATOR, LOGGER],
        },
        { provide: RUN_QUERIES, useFactory: (ds: DataSource) => new RunQueries(ds), inject: [DATA_SOURCE] },
        {
          provide: EVENTS_CONSUMER,
          // MESSAGE_BUS resolves once the topology (streams, durable consumer) exists.
          useFactory: (ds: DataSource, bus: MessageBus, projector: RunProjector, log: JsonLogger, progress: RunProgress) =>
            new EventsConsumerLifecycle(
              new EventsConsumer({
                dataSource: ds,
                bus,
                projector,
                logger: log,
                maxBatch: config.maxBatch,
                onRecorded: (runIds) => progress.recorded(runIds),
              }),
              log,
            ),
          inject: [DATA_SOURCE, MESSAGE_BUS, RunProjector, LOGGER, RUN_PROGRESS],
        },
      ],
    };
  }
}
