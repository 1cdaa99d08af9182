import 'reflect-metadata';
import { NestFactory } from '@nestjs/core';
import type { NestExpressApplication } from '@nestjs/platform-express';
import { InProcessBus, type MessageBus } from '@evals/bus';
import { JsonLogger } from '@evals/platform';
import { testServers } from '../../../test/support/servers';
import { AllInOneModule } from '../../cli/src/embedded/all-in-one.module';
import { loadReadModelConfig } from '../../read-model/src';
import { loadWorkerConfig } from '../../scoring-worker/src';
import { loadIngestionConfig } from '.';

/** The all-in-one composition an ingestion int-spec talks HTTP to: its app, its base URL, its in-process bus. */
export interface AllInOneUnderTest {
  readonly app: NestExpressApplication;
  readonly base: string;
  readonly inner: InProcessBus;
}

/**
 * Starts the four apps in one process on the test PostgreSQL (a schema of the caller's) and the real
 * in-process bus - `wrap` may put a bus of the test's around it - with EVALS_AUTH=disabled (the request's
 * project is then the X-Evals-Project header's, issue 30), listening on a free port.
 */
export async function startAllInOne(
  schema: string,
  env: Record<string, string>,
  logLine: (line: string) => void,
  wrap: (inner: InProcessBus) => MessageBus = (inner) => inner,
): Promise<AllInOneUnderTest> {
  const all: Record<string, string> = { DATABASE_URL: testServers.postgres.url, DATABASE_SCHEMA: schema, DATABASE_POOL_SIZE: '6', EVALS_AUTH: 'disabled', PORT: '0', RUN_TIMEOUT_MS: '60000', ...env };
  const optional = { servers: 'optional' as const };
  const ingestion = loadIngestionConfig(all, optional);
  const inner = await InProcessBus.open({ streamPrefix: ingestion.streamPrefix, subjectPrefix: ingestion.subjectPrefix });
  const bus = wrap(inner);
  const logger = new JsonLogger('ingestion-it', (all.LOG_LEVEL ?? 'info') as ConstructorParameters<typeof JsonLogger>[1], logLine);
  const app = await NestFactory.create<NestExpressApplication>(
    AllInOneModule.forRoot({ ingestion, worker: loadWorkerConfig(all, optional), readModel: loadReadModelConfig(all, optional), regressionJudge: null }, logger, { bus: async () => bus }),
    { logger, bodyParser: false, abortOnError: false },
  );
  app.useBodyParser('json', { limit: '16mb' });
  await app.listen(0, '127.0.0.1');
  return { app, inner, base: `http://127.0.0.1:${(app.getHttpServer().address() as { port: number }).port}` };
}
