import { APP_FILTER, APP_PIPE } from '@nestjs/core';
import { randomUUID } from 'node:crypto';
import type * as NatsTransport from '@nats-io/transport-node';
import { Controller, Get, Global, HttpStatus, Inject, Injectable, Module, Res, type DynamicModule, type OnApplicationBootstrap, type OnApplicationShutdown } from '@nestjs/common';
import { JetStreamBus, subjectOf, type BusNames, type ConsumerSpec, type MessageBus } from '@evals/bus';
import { createDataSource, migrate, OutboxRelay, warmPool } from '@evals/persistence';
import { API_KEY_STORE, sqlApiKeyStore } from './auth/api-key-store';
import { AuthModule } from './auth/auth.module';
import { ApiRoute } from './api-route';
import { Public } from './auth/decorators';
import { HealthDto } from './platform.dto';
import { KeysController } from './auth/keys.controller';
import { ProjectsController } from './auth/projects.controller';
import type { DataSource } from 'typeorm';
import type { Response as ExpressResponse } from 'express';
import type { CommonConfig } from './config';
import { ApiExceptionFilter } from './api-exception.filter';
import { EdgeTextPipe } from './edge-text.pipe';
import { JsonLogger } from './logger';
import { MetricsController, metrics } from './metrics';
import { BUS_NAMES, CLOCK, COMMON_CONFIG, DATA_SOURCE, ID_GENERATOR, LOGGER, MESSAGE_BUS, type Clock, type IdGenerator } from './tokens';
import { RUN_PROGRESS, RunProgress } from './run-progress';

/**
 * Relays the outbox rows to the bus (docs/pipeline.md). One per process, whatever apps it runs (the
 * all-in-one runs four); SKIP LOCKED lets the processes share the table. Stopped by ConnectionCloser,
 * before the bus and the database close.
 */
@Injectable()
export class OutboxRelayService implements OnApplicationBootstrap {
  readonly relay: OutboxRelay;

  constructor(
    @Inject(DATA_SOURCE) dataSource: DataSource,
    @Inject(MESSAGE_BUS) bus: MessageBus,
    @Inject(BUS_NAMES) names: BusNames,
    @Inject(LOGGER) logger: JsonLogger,
  ) {
    let failing = false;
    this.relay = new OutboxRelay(dataSource, bus, {
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
}

const CONSUMER_SPECS = Symbol('CONSUMER_SPECS');

/**
 * Consumer lag (X2): every 10 s, the messages still pending for this app's durable consumers, as the
 * `evals_consumer_lag_messages` gauge - the signal an autoscaler should follow for the scoring worker.
 */
@Injectable()
export class ConsumerLagService implements OnApplicationBootstrap, OnApplicationShutdown {
  private timer: NodeJS.Timeout | undefined;

  constructor(
    @Inject(MESSAGE_BUS) private readonly bus: MessageBus,
    @Inject(CONSUMER_SPECS) private readonly consumers: readonly ConsumerSpec[],
  ) {}

  onApplicationBootstrap(): void {
    if (this.consumers.length === 0) return;
    const sample = async () => {
      for (const c of this.consumers) {
        try {
          metrics.consumerLag.set({ consumer: c.durable }, await this.bus.pending(c));
        } catch {
          // The bus is down: the last value stays; /health reports the outage.
        }
      }
    };
    void sample();
    this.timer = setInterval(() => void sample(), 10_000);
    this.timer.unref();
  }

  onApplicationShutdown(): void {
    if (this.timer) clearInterval(this.timer);
  }
}

@Controller()
@Public()
export class HealthController {
  constructor(
    @Inject(DATA_SOURCE) private readonly dataSource: DataSource,
    @Inject(MESSAGE_BUS) private readonly bus: MessageBus,
  ) {}

  /** Readiness and liveness (X2): the database answers and the bus connection is open. */
  @ApiRoute({
    tier: 'public',
    summary: 'Readiness and liveness (X2): the database answers and the bus connection is open',
    ok: [
      { status: 200, type: HealthDto, description: 'Everything is up.' },
      { status: 503, description: 'Something is down: `{status: down, checks}`.', schema: { type: 'object', required: ['status', 'checks'], properties: { status: { type: 'string', enum: ['down'] }, checks: { type: 'object', additionalProperties: { type: 'string', enum: ['up', 'down'] } } } } },
    ],
  })
  @Get('health')
  async health(@Res({ passthrough: true }) res: ExpressResponse): Promise<{ status: 'ok' | 'down'; checks: Record<string, 'up' | 'down'> }> {
    const checks: Record<string, 'up' | 'down'> = { database: 'down', bus: this.bus.healthy ? 'up' : 'down' };
    try {
      await this.dataSource.query('SELECT 1');
      checks.database = 'up';
    } catch {
      checks.database = 'down';
    }
    // Answered, not thrown: the probe's body says what is down (an exception would be reduced to a code).
    if (Object.values(checks).includes('down')) {
      res.status(HttpStatus.SERVICE_UNAVAILABLE);
      return { status: 'down', checks };
    }
    return { status: 'ok', checks };
  }
}

@Injectable()
class ConnectionCloser implements OnApplicationShutdown {
  constructor(
    @Inject(DATA_SOURCE) private readonly dataSource: DataSource,
    @Inject(MESSAGE_BUS) private readonly bus: MessageBus,
    private readonly outbox: OutboxRelayService,
  ) {}

  // The consumers stopped in beforeApplicationShutdown, so in-flight work is done: the relay finishes its
  // batch, then the bus and the database close, in that order.
  async onApplicationShutdown(): Promise<void> {
    await this.outbox.relay.stop();
    await this.bus.close().catch(() => undefined);
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
  /** The durable consumers this app reads, for the lag gauge. */
  readonly consumers?: readonly ConsumerSpec[];
  /** Serves key management (`/v1/keys`, admin tier) in this app; one app of the deployment does. */
  readonly keyManagement?: boolean;
  /**
   * The bus, when not JetStream at `config.natsUrl`: the embedded all-in-one passes its in-process bus
   * (docs/embedded.md). Its topology is ensured here like JetStream's.
   */
  readonly bus?: () => Promise<MessageBus>;
}

@Global()
@Module({})
export class InfrastructureModule {
  static forRoot(options: InfrastructureOptions): DynamicModule {
    const { config } = options;
    const names: BusNames = { streamPrefix: config.streamPrefix, subjectPrefix: config.subjectPrefix };
    return {
      module: InfrastructureModule,
      // Access control on every route of the app (docs/security.md): the guard, the boot-time tier check.
      imports: [
        AuthModule.forRoot({
          mode: config.authMode,
          rateLimitPerMinute: config.rateLimitPerMinute,
          redisUrl: config.redisUrl,
          redisKeyPrefix: `evals:ratelimit:${config.databaseSchema || 'default'}:`,
        }),
      ],
      controllers: [HealthController, MetricsController, ...(options.keyManagement ? [KeysController, ProjectsController] : [])],
      providers: [
        { provide: COMMON_CONFIG, useValue: config },
        { provide: LOGGER, useValue: options.logger },
        { provide: BUS_NAMES, useValue: names },
        { provide: CLOCK, useValue: { now: () => new Date() } satisfies Clock },
        { provide: ID_GENERATOR, useValue: { uuid: () => randomUUID() } satisfies IdGenerator },
        { provide: RUN_PROGRESS, useValue: new RunProgress() },
        {
          provide: DATA_SOURCE,
          useFactory: async () => {
            const poolSize = options.poolSize ?? config.databasePoolSize;
            const warm = Math.min(config.databasePoolWarm, poolSize);
            const ds = createDataSource({
              url: config.databaseUrl,
              schema: config.databaseSchema || undefined,
              poolSize,
              warmConnections: warm,
              applicationName: `evals-${options.app}`,
            });
            await ds.initialize();
            if (options.migrate ?? config.migrateMode === 'boot') await migrate(ds);
            else if (await ds.showMigrations()) {
              // A migration job owns the schema: starting on an older one would fail in stranger ways later.
              await ds.destroy();
              throw new Error('migrations are pending: run the migration job (npm run migrate) first');
            }
            // Before the consumers start: the first burst finds its connections open (DATABASE_POOL_WARM).
            await warmPool(ds, warm);
            return ds;
          },
        },
        {
          provide: MESSAGE_BUS,
          // Resolves only once the topology is ensured, so every durable consumer exists before anyone consumes.
          useFactory: async () => {
            // The transport loads only for a NATS server to reach: the embedded all-in-one has its own bus.
            const connect = () => (require('@nats-io/transport-node') as typeof NatsTransport).connect;
            const bus = options.bus
              ? await options.bus()
              : await JetStreamBus.connect(
                  // No async stack traces: capturing one per request costs more than the request on the hot path.
                  await connect()({ servers: config.natsUrl, name: `evals-${options.app}`, maxReconnectAttempts: -1, reconnectTimeWait: 500, noAsyncTraces: true }),
                  names,
                  { replicas: config.streamReplicas },
                );
            await bus.ensureTopology();
            return bus;
          },
        },
        { provide: API_KEY_STORE, useFactory: (ds: DataSource) => sqlApiKeyStore(ds, config.apiKeyPepper), inject: [DATA_SOURCE] },
        { provide: CONSUMER_SPECS, useValue: options.consumers ?? [] },
        { provide: APP_FILTER, useClass: ApiExceptionFilter },
        { provide: APP_PIPE, useClass: EdgeTextPipe },
        ConsumerLagService,
        OutboxRelayService,
        ConnectionCloser,
      ],
      exports: [COMMON_CONFIG, LOGGER, BUS_NAMES, CLOCK, ID_GENERATOR, RUN_PROGRESS, DATA_SOURCE, MESSAGE_BUS, API_KEY_STORE, OutboxRelayService],
    };
  }
}

