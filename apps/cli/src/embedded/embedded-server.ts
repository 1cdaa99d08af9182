import 'reflect-metadata';
import { NestFactory } from '@nestjs/core';
import type { NestExpressApplication } from '@nestjs/platform-express';
import { InProcessBus, type MessageBus } from '@evals/bus';
import { startEmbeddedPostgres, type EmbeddedPostgres } from '@evals/persistence';
import { JsonLogger, serveOpenApi, type ConfigOptions } from '@evals/platform';
import { loadIngestionConfig } from '../../../ingestion/src/config';
import { loadReadModelConfig } from '../../../read-model/src/config';
import { loadRegressionJudge } from '../../../regression/src/calibration.judge';
import { loadWorkerConfig } from '../../../scoring-worker/src/config';
import { AllInOneModule } from './all-in-one.module';
import { claimDataDir, dataDirSecret } from './data-dir';

export interface EmbeddedServerOptions {
  /** The data directory (`.evals` by default, docs/embedded.md). */
  readonly dataDir: string;
  readonly env: Readonly<Record<string, string | undefined>>;
  /** 0: any free port. */
  readonly port: number;
  readonly host?: string;
  /** Write this server's URL into the directory, so other `evals` commands use it (`evals serve`). */
  readonly advertise?: boolean;
  /** Where the JSON log lines go (stdout for `evals serve`, stderr for a CLI command). */
  readonly log?: (line: string) => void;
  readonly logLevel?: 'debug' | 'info' | 'warn' | 'error';
}

export interface EmbeddedServer {
  readonly url: string;
  /** Which adapters it runs on: `embedded` or the configured server, per port. */
  readonly adapters: { readonly database: 'pglite' | 'postgresql'; readonly bus: 'in-process' | 'jetstream' };
  close(): Promise<void>;
}

const SERVERS_OPTIONAL: ConfigOptions = { servers: 'optional' };

/**
 * Starts the all-in-one (`evals serve`, and `evals run`/`gate`/... without --server): every empty one of
 * DATABASE_URL and NATS_URL is served by its embedded adapter - PGlite in `<dir>/postgres`, the
 * in-process bus journalled in `<dir>/bus` - and without REDIS_URL the rate limits and the verdict cache
 * live in memory. Access control defaults to disabled, since it listens on the loopback interface only.
 */
export async function startEmbeddedServer(options: EmbeddedServerOptions): Promise<EmbeddedServer> {
  const claim = claimDataDir(options.dataDir);
  const cleanups: Array<() => Promise<void>> = [async () => claim.release()];
  const cleanup = async () => {
    for (const step of cleanups.splice(0).reverse()) await step().catch(() => undefined);
  };
  try {
    const env: Record<string, string | undefined> = {
      ...options.env,
      EVALS_HMAC_SECRET: options.env.EVALS_HMAC_SECRET || dataDirSecret(claim.dir.root),
      EVALS_AUTH: options.env.EVALS_AUTH || 'disabled',
      PORT: String(options.port),
    };
    let ingestion = loadIngestionConfig(env, SERVERS_OPTIONAL);
    let worker = loadWorkerConfig(env, SERVERS_OPTIONAL);
    let readModel = loadReadModelConfig(env, SERVERS_OPTIONAL);
    const regressionJudge = loadRegressionJudge(env);

    let pg: EmbeddedPostgres | undefined;
    if (!ingestion.databaseUrl) {
      pg = await startEmbeddedPostgres(claim.dir.postgres);
      cleanups.push(() => pg!.stop());
      const embedded = { databaseUrl: pg.url, databaseSchema: '', databasePoolSize: 1, migrateMode: 'boot' as const };
      ingestion = { ...ingestion, ...embedded };
      worker = { ...worker, ...embedded };
      readModel = { ...readModel, ...embedded };
    }
    const names = { streamPrefix: ingestion.streamPrefix, subjectPrefix: ingestion.subjectPrefix };
    const bus: (() => Promise<MessageBus>) | undefined = ingestion.natsUrl ? undefined : () => InProcessBus.open(names, { dir: claim.dir.bus });

    const logger = new JsonLogger('evals', options.logLevel ?? ingestion.logLevel, options.log);
    const app = await NestFactory.create<NestExpressApplication>(
      AllInOneModule.forRoot({ ingestion, worker, readModel, regressionJudge }, logger, { ...(bus ? { bus } : {}), ...(pg ? { poolSize: 1 } : {}) }),
      { logger, bodyParser: false },
    );
    cleanups.push(() => app.close());
    app.useBodyParser('json', { limit: `${ingestion.bodyLimitMb}mb` });
    app.useBodyParser('text', { limit: `${ingestion.bodyLimitMb}mb`, type: ['application/yaml', 'application/x-yaml', 'text/yaml', 'text/plain'] });
    serveOpenApi(app, 'evals', '0.1.0');
    const host = options.host ?? '127.0.0.1';
    await app.listen(options.port, host);
    const address = app.getHttpServer().address() as { port: number };
    const url = `http://${host}:${address.port}`;
    if (options.advertise) claim.advertise(url);
    logger.event('info', 'all-in-one listening', { url, database: pg ? 'pglite' : 'postgresql', bus: bus ? 'in-process' : 'jetstream' });
    return { url, adapters: { database: pg ? 'pglite' : 'postgresql', bus: bus ? 'in-process' : 'jetstream' }, close: cleanup };
  } catch (error) {
    await cleanup();
    throw error;
  }
}
