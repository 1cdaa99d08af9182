import 'reflect-metadata';
import { NestFactory } from '@nestjs/core';
import type { NestExpressApplication } from '@nestjs/platform-express';
import { answerUnparsableRequests, ConfigError, JsonLogger, stdoutByTurn, serveAsyncApi, serveOpenApi, useBodyParsers } from '@evals/platform';
import { loadReadModelConfig } from './config';
import { ReadModelModule } from './read-model.module';

/** The read-model process (docs/read-model.md): projects EVALS_EVENTS and serves the runs API on PORT (3003). */
async function main(): Promise<void> {
  let config;
  try {
    config = loadReadModelConfig(process.env);
  } catch (error) {
    if (error instanceof ConfigError) {
      process.stderr.write(`read-model: ${error.message}\n`);
      process.exit(2);
    }
    throw error;
  }
  const logger = new JsonLogger('read-model', config.logLevel, stdoutByTurn());
  const app = await NestFactory.create<NestExpressApplication>(ReadModelModule.forRoot(config, logger), { logger, bodyParser: false });
  // Read-only routes: a JSON body is parsed (small, depth-checked) only to be refused cleanly.
  useBodyParsers(app, 1, { yaml: false });
  answerUnparsableRequests(app.getHttpServer());
  app.enableShutdownHooks();
  serveOpenApi(app, 'read-model', '0.1.0');
  serveAsyncApi(app, '0.1.0');
  await app.listen(config.httpPort, '0.0.0.0');
  logger.event('info', 'read-model listening', { port: config.httpPort });
}

main().catch((error: unknown) => {
  process.stderr.write(`read-model: failed to start: ${error instanceof Error ? `${error.name}: ${error.message}` : 'error'}\n`);
  process.exit(1);
});
