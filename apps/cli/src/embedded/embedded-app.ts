import 'reflect-metadata';
import { NestFactory } from '@nestjs/core';
import type { NestExpressApplication } from '@nestjs/platform-express';
import { InProcessBus, type MessageBus } from '@evals/bus';
import type { EmbeddedPostgres } from '@evals/pglite';
import { answerUnparsableRequests, ConfigError, JsonLogger, serveAsyncApi, serveOpenApi, type ConfigOptions, useBodyParsers } from '@evals/platform';
import { loadIngestionConfig } from '../../../ingestion/src';
import { loadReadModelConfig } from '../../../read-model/src';
import { loadRegressionJudge } from '../../../regression/src';
import { loadWorkerConfig } from '../../../scoring-worker/src';
import { AllInOneModule } from './all-in-one.module';
import type { DataDir } from './data-dir';
import type { EmbeddedServer, EmbeddedServerOptions } from './embedded-server';

const SERVERS_OPTIONAL: ConfigOptions = { servers: 'optional' };

export interface AllInOneStart extends EmbeddedServerOptions {
  /** The environment with the data directory's defaults filled in. */
  readonly env: Record<string, string | undefined>;
  readonly dir: DataDir;
  /** The embedded PostgreSQL, already starting (embedded-server.ts), when DATABASE_URL is empty. */
  readonly database: Promise<EmbeddedPostgres> | undefined;
  /** Where each step that must be undone on a failure or at close is recorded, last undone first. */
  readonly cleanups: Array<() => Promise<void>>;
}

/**
 * The framework half of startEmbeddedServer, loaded only once PGlite's start is under way: the four apps'
 * configurations, the in-process bus, the Nest application of AllInOneModule, listening.
 */
export async function startAllInOne(start: AllInOneStart): Promise<Omit<EmbeddedServer, 'close'>> {
  const { env, cleanups } = start;
  let ingestion = loadIngestionConfig(env, SERVERS_OPTIONAL);
  let worker = loadWorkerConfig(env, SERVERS_OPTIONAL);
  let readModel = loadReadModelConfig(env, SERVERS_OPTIONAL);
  const regressionJudge = loadRegressionJudge(env);
  if (Boolean(ingestion.databaseUrl) !== Boolean(ingestion.natsUrl)) {
    // A private PGlite behind a shared bus would take the cluster's work into a database nobody else reads;
    // a shared database behind a private bus would drain the cluster's outbox into this process.
    throw new ConfigError([`${ingestion.databaseUrl ? 'NATS_URL' : 'DATABASE_URL'}: set both DATABASE_URL and NATS_URL (a deployment's servers) or neither (embedded)`]);
  }

  let pg: EmbeddedPostgres | undefined;
  if (!ingestion.databaseUrl) {
    if (!start.database) throw new ConfigError(['DATABASE_URL: not a PostgreSQL URL and not empty']);
    pg = await start.database;
    const embedded = { databaseUrl: pg.url, databaseSchema: '', databasePoolSize: 1, migrateMode: 'boot' as const };
    ingestion = { ...ingestion, ...embedded };
    worker = { ...worker, ...embedded };
    readModel = { ...readModel, ...embedded };
  }
  const names = { streamPrefix: ingestion.streamPrefix, subjectPrefix: ingestion.subjectPrefix };
  let opened: MessageBus | undefined;
  const bus: (() => Promise<MessageBus>) | undefined = ingestion.natsUrl
    ? undefined
    : async () => {
        opened = await InProcessBus.open(names, { dir: start.dir.bus });
        return opened;
      };
  // The app closes the bus; this is for a start-up that failed before there was an app to close it.
  cleanups.push(async () => opened?.close());

  const logger = new JsonLogger('evals', start.logLevel ?? ingestion.logLevel, start.log);
  const app = await NestFactory.create<NestExpressApplication>(
    AllInOneModule.forRoot({ ingestion, worker, readModel, regressionJudge }, logger, { ...(bus ? { bus } : {}), ...(pg ? { poolSize: 1 } : {}) }),
    // A failing provider (a damaged journal, a migration) throws here instead of exiting the process, so
    // the command can clean up and answer with its own exit code.
    { logger, bodyParser: false, abortOnError: false },
  );
  cleanups.push(() => app.close());
  useBodyParsers(app, ingestion.bodyLimitMb);
  answerUnparsableRequests(app.getHttpServer());
  if (start.mode === 'serve') {
    // The documents are built from every route's metadata (a tenth of a second and more); a command's own
    // server is reached by that command only, which never reads them.
    serveOpenApi(app, 'evals', '0.1.0');
    serveAsyncApi(app, '0.1.0');
  }
  const host = start.host ?? '127.0.0.1';
  await app.listen(start.port, host);
  const address = app.getHttpServer().address() as { port: number };
  const url = `http://${host.includes(':') ? `[${host}]` : host}:${address.port}`;
  logger.event('info', 'all-in-one listening', { url, database: pg ? 'pglite' : 'postgresql', bus: bus ? 'in-process' : 'jetstream' });
  return { url, adapters: { database: pg ? 'pglite' : 'postgresql', bus: bus ? 'in-process' : 'jetstream' } };
}
