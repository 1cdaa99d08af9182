import 'reflect-metadata';
import { NestFactory } from '@nestjs/core';
import type { NestExpressApplication } from '@nestjs/platform-express';
import { answerUnparsableRequests, ConfigError, JsonLogger, stdoutByTurn, serveAsyncApi, serveOpenApi, useBodyParsers } from '@evals/platform';
import { loadIngestionConfig } from './config';
import { IngestionModule } from './ingestion.module';

async function main(): Promise<void> {
  let config;
  try {
    config = loadIngestionConfig(process.env);
  } catch (error) {
    if (error instanceof ConfigError) {
      process.stderr.write(`ingestion: ${error.message}\n`);
      process.exit(2);
    }
    throw error;
  }
  const logger = new JsonLogger('ingestion', config.logLevel, stdoutByTurn());
  const app = await NestFactory.create<NestExpressApplication>(IngestionModule.forRoot(config, logger), { logger, bodyParser: false });
  useBodyParsers(app, config.bodyLimitMb);
  answerUnparsableRequests(app.getHttpServer());
  app.enableShutdownHooks();
  serveOpenApi(app, 'ingestion', '0.1.0');
  serveAsyncApi(app, '0.1.0');
  await app.listen(config.httpPort, '0.0.0.0');
  logger.event('info', 'ingestion listening', { port: config.httpPort });
}

main().catch((error: unknown) => {
  process.stderr.write(`ingestion: failed to start: ${error instanceof Error ? `${error.name}: ${error.message}` : 'error'}\n`);
  process.exit(1);
});
