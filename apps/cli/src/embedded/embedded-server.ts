import 'reflect-metadata';
import { NestFactory } from '@nestjs/core';
import type { NestExpressApplication } from '@nestjs/platform-express';
import { InProcessBus, type MessageBus } from '@evals/bus';
import { startEmbeddedPostgres, type EmbeddedPostgres } from '@evals/persistence';
import { answerUnparsableRequests, ConfigError, JsonLogger, serveAsyncApi, serveOpenApi, type ConfigOptions, useBodyParsers } from '@evals/platform';
import { loadIngestionConfig } from '../../../ingestion/src';
import { loadReadModelConfig } from '../../../read-model/src';
import { loadRegressionJudge } from '../../../regression/src';
import { loadWorkerConfig } from '../../../scoring-worker/src';
import { AllInOneModule } from './all-in-one.module';
import { claimDataDir, dataDirSecret, type OwnerMode } from './data-dir';

export interface EmbeddedServerOptions {
  /** The data directory (`.evals` by default, docs/embedded.md). */
  readonly dataDir: string;
  readonly env: Readonly<Record<string, string | undefined>>;
  /** 0: any free port. */
  readonly port: number;
  readonly host?: string;
  /**
   * `serve`: the URL goes into the directory, so other `evals` commands use this server; `command`: a CLI
   * command's own server, which others wait for instead of using (it stops with its command).
   */
  readonly mode: OwnerMode;
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
  const claim = claimDataDir(options.dataDir, options.mode);
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
    if (Boolean(ingestion.databaseUrl) !== Boolean(ingestion.natsUrl)) {
      // A private PGlite behind a shared bus would take the cluster's work into a database nobody else reads;
      // a shared database behind a private bus would drain the cluster's outbox into this process.
      throw new ConfigError([`${ingestion.databaseUrl ? 'NATS_URL' : 'DATABASE_URL'}: set both DATABASE_URL and NATS_URL (a deployment's servers) or neither (embedded)`]);
    }

    let pg: EmbeddedPostgres | undefined;
    if (!ingestion.databaseUrl) {
      pg = await startEmbeddedPostgres(claim.dir.postgres, { socketDir: claim.dir.root });
      cleanups.push(() => pg!.stop());
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
          opened = await InProcessBus.open(names, { dir: claim.dir.bus });
          return opened;
        };
    // The app closes the bus; this is for a start-up that failed before there was an app to close it.
    cleanups.push(async () => opened?.close());

    const logger = new JsonLogger('evals', options.logLevel ?? ingestion.logLevel, options.log);
    const app = await NestFactory.create<NestExpressApplication>(
      AllInOneModule.forRoot({ ingestion, worker, readModel, regressionJudge }, logger, { ...(bus ? { bus } : {}), ...(pg ? { poolSize: 1 } : {}) }),
      // A failing provider (a damaged journal, a migration) throws here instead of exiting the process, so
      // the command can clean up and answer with its own exit code.
      { logger, bodyParser: false, abortOnError: false },
    );
    cleanups.push(() => app.close());
    useBodyParsers(app, ingestion.bodyLimitMb);
    answerUnparsableRequests(app.getHttpServer());
    if (options.mode === 'serve') {
      // The documents are built from every route's metadata (a tenth of a second and more); a command's own
      // server is reached by that command only, which never reads them.
      serveOpenApi(app, 'evals', '0.1.0');
      serveAsyncApi(app, '0.1.0');
    }
    const host = options.host ?? '127.0.0.1';
    await app.listen(options.port, host);
    const address = app.getHttpServer().address() as { port: number };
    const url = `http://${host.includes(':') ? `[${host}]` : host}:${address.port}`;
    if (options.mode === 'serve') claim.advertise(url);
    logger.event('info', 'all-in-one listening', { url, database: pg ? 'pglite' : 'postgresql', bus: bus ? 'in-process' : 'jetstream' });
    return { url, adapters: { database: pg ? 'pglite' : 'postgresql', bus: bus ? 'in-process' : 'jetstream' }, close: cleanup };
  } catch (error) {
    await cleanup();
    throw error;
  }
}
