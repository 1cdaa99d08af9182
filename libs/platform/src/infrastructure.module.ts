import { randomUUID } from 'node:crypto';
import { jetstream, jetstreamManager, type JetStreamClient, type JetStreamManager } from '@nats-io/jetstream';
import { connect, type NatsConnection } from '@nats-io/transport-node';
import { Controller, Get, Global, HttpException, HttpStatus, Inject, Injectable, Module, type DynamicModule, type OnApplicationBootstrap, type OnApplicationShutdown } from '@nestjs/common';
import { ensureTopology, JetStreamPublisher, subjectOf, type BusNames } from '@evals/bus';
import { createDataSource, migrate, OutboxRelay } from '@evals/persistence';
import type { DataSource } from 'typeorm';
import type { CommonConfig } from './config';
import { JsonLogger } from './logger';
import { MetricsController, metrics } from './metrics';
import { BUS_NAMES, CLOCK, COMMON_CONFIG, DATA_SOURCE, ID_GENERATOR, JETSTREAM, JETSTREAM_MANAGER, LOGGER, NATS_CONNECTION, type Clock, type IdGenerator } from './tokens';

/**
 * Relays this process's outbox rows to JetStream (docs/pipeline.md). Every app that appends events runs
 * one; SKIP LOCKED lets them share the table.
 */
@Injectable()
export class OutboxRelayService implements OnApplicationBootstrap, OnApplicationShutdown {
  readonly relay: OutboxRelay;

  constructor(
    @Inject(DATA_SOURCE) dataSource: DataSource,
    @Inject(JETSTREAM) js: JetStreamClient,
    @Inject(BUS_NAMES) names: BusNames,
    @Inject(LOGGER) logger: JsonLogger,
  ) {
    const publisher = new JetStreamPublisher(js);
    let failing = false;
    this.relay = new OutboxRelay(dataSource, publisher, {
      wireSubject: (s) => subjectOf(names, s),
      onError: (error) => {
        if (!failing) logger.event('warn', 'outbox relay cannot publish; rows wait', { error: error instanceof Error ? error.name : 'error' });
        failing = true;
      },
      onPublished: (count) => {
        metrics.outboxPublished.inc(count);
        if (failing) logger.event('info', 'outbox relay publishing again');
        failing = false;
      },
    });
  }

  onApplicationBootstrap(): void {
    this.relay.start();
  }

  async onApplicationShutdown(): Promise<void> {
    await this.relay.stop();
  }
}

@Controller()
export class HealthController {
  constructor(
    @Inject(DATA_SOURCE) private readonly dataSource: DataSource,
    @Inject(NATS_CONNECTION) private readonly nats: NatsConnection,
  ) {}

  /** Readiness and liveness (X2): the database answers and the bus connection is open. */
  @Get('health')
  async health(): Promise<{ status: 'ok'; checks: Record<string, 'up' | 'down'> }> {
    const checks: Record<string, 'up' | 'down'> = { database: 'down', nats: this.nats.isClosed() ? 'down' : 'up' };
    try {
      await this.dataSource.query('SELECT 1');
      checks.database = 'up';
    } catch {
      checks.database = 'down';
    }
    if (Object.values(checks).includes('down')) {
      throw new HttpException({ status: 'down', checks }, HttpStatus.SERVICE_UNAVAILABLE);
    }
    return { status: 'ok', checks };
  }
}

@Injectable()
class ConnectionCloser implements OnApplicationShutdown {
  constructor(
    @Inject(DATA_SOURCE) private readonly dataSource: DataSource,
    @Inject(NATS_CONNECTION) private readonly nats: NatsConnection,
  ) {}

  // Runs after every other shutdown hook of the app (module order): in-flight work is done by then.
  async onApplicationShutdown(): Promise<void> {
    await this.nats.drain().catch(() => undefined);
    if (this.dataSource.isInitialized) await this.dataSource.destroy();
  }
}

export interface InfrastructureOptions {
  readonly app: string;
  readonly config: CommonConfig;
  readonly logger: JsonLogger;
  /** Runs pending migrations at boot (under an advisory lock). Off when a migration job does it. */
  readonly migrate?: boolean;
  readonly poolSize?: number;
}

@Global()
@Module({})
export class InfrastructureModule {
  static forRoot(options: InfrastructureOptions): DynamicModule {
    const { config } = options;
    const names: BusNames = { streamPrefix: config.streamPrefix, subjectPrefix: config.subjectPrefix };
    return {
      module: InfrastructureModule,
      controllers: [HealthController, MetricsController],
      providers: [
        { provide: COMMON_CONFIG, useValue: config },
        { provide: LOGGER, useValue: options.logger },
        { provide: BUS_NAMES, useValue: names },
        { provide: CLOCK, useValue: { now: () => new Date() } satisfies Clock },
        { provide: ID_GENERATOR, useValue: { uuid: () => randomUUID() } satisfies IdGenerator },
        {
          provide: DATA_SOURCE,
          useFactory: async () => {
            const ds = createDataSource({
              url: config.databaseUrl,
              schema: config.databaseSchema || undefined,
              poolSize: options.poolSize ?? 10,
              applicationName: `evals-${options.app}`,
            });
            await ds.initialize();
            if (options.migrate ?? true) await migrate(ds);
            return ds;
          },
        },
        {
          provide: NATS_CONNECTION,
          useFactory: async () =>
            connect({ servers: config.natsUrl, name: `evals-${options.app}`, maxReconnectAttempts: -1, reconnectTimeWait: 500 }),
        },
        { provide: JETSTREAM, useFactory: (nc: NatsConnection) => jetstream(nc), inject: [NATS_CONNECTION] },
        {
          provide: JETSTREAM_MANAGER,
          useFactory: async (nc: NatsConnection) => {
            const jsm = await jetstreamManager(nc);
            await ensureTopology(jsm, names);
            return jsm;
          },
          inject: [NATS_CONNECTION],
        },
        ConnectionCloser,
      ],
      exports: [COMMON_CONFIG, LOGGER, BUS_NAMES, CLOCK, ID_GENERATOR, DATA_SOURCE, NATS_CONNECTION, JETSTREAM, JETSTREAM_MANAGER],
    };
  }
}

export type { JetStreamClient, JetStreamManager, NatsConnection };
