import { CONSUMERS } from '@evals/bus';
import { Module, type DynamicModule } from '@nestjs/common';
import {
  BUS_NAMES,
  DATA_SOURCE,
  ID_GENERATOR,
  InfrastructureModule,
  JETSTREAM,
  JETSTREAM_MANAGER,
  LOGGER,
  OutboxRelayService,
  type IdGenerator,
  type JetStreamClient,
  type JsonLogger,
} from '@evals/platform';
import type { BusNames } from '@evals/bus';
import type { DataSource } from 'typeorm';
import type { ReadModelConfig } from './config';
import { EventsConsumer } from './events.consumer';
import { RunProjector } from './run.projector';
import { RunQueries } from '@evals/persistence';
import { RUN_QUERIES, RunsController } from './runs.controller';
import { ScorecardsController } from './scorecards.controller';

export const READ_MODEL_CONFIG = Symbol('READ_MODEL_CONFIG');
const EVENTS_CONSUMER = Symbol('EVENTS_CONSUMER');

/**
 * Starts the consumer once the app is up, and stops it before any other shutdown hook runs (X4): the batch
 * in hand commits and is acknowledged while the database, the relay and NATS are still there.
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
      module: ReadModelModule,
      imports: [InfrastructureModule.forRoot({ app: 'read-model', config, logger, consumers: [CONSUMERS.readModel] })],
      controllers: [RunsController, ScorecardsController],
      providers: [
        { provide: READ_MODEL_CONFIG, useValue: config },
        OutboxRelayService,
        {
          provide: RunProjector,
          useFactory: (ids: IdGenerator, log: JsonLogger) => new RunProjector(ids, log),
          inject: [ID_GENERATOR, LOGGER],
        },
        { provide: RUN_QUERIES, useFactory: (ds: DataSource) => new RunQueries(ds), inject: [DATA_SOURCE] },
        {
          provide: EVENTS_CONSUMER,
          // JETSTREAM_MANAGER is injected so the topology (streams, durable consumer) exists before starting.
          useFactory: (ds: DataSource, js: JetStreamClient, _jsm: unknown, names: BusNames, projector: RunProjector, relay: OutboxRelayService, log: JsonLogger) =>
            new EventsConsumerLifecycle(
              new EventsConsumer({
                dataSource: ds,
                js,
                names,
                projector,
                logger: log,
                maxBatch: config.maxBatch,
                onOutboxRows: () => relay.relay.notify(),
              }),
              log,
            ),
          inject: [DATA_SOURCE, JETSTREAM, JETSTREAM_MANAGER, BUS_NAMES, RunProjector, OutboxRelayService, LOGGER],
        },
      ],
    };
  }
}
