import 'reflect-metadata';
import { NestFactory } from '@nestjs/core';
import type { NestExpressApplication } from '@nestjs/platform-express';
import { JudgeConfigError } from '@evals/judge';
import { answerUnparsableRequests, ConfigError, JsonLogger, stdoutByTurn, serveAsyncApi, serveOpenApi, useBodyParsers } from '@evals/platform';
import { loadRegressionJudge } from './calibration.judge';
import { loadRegressionConfig } from './config';
import { RegressionModule } from './regression.module';

async function main(): Promise<void> {
  let config;
  let judge;
  try {
    config = loadRegressionConfig(process.env);
    judge = loadRegressionJudge(process.env);
  } catch (error) {
    if (error instanceof ConfigError || error instanceof JudgeConfigError) {
      process.stderr.write(`regression: ${error.message}\n`);
      process.exit(2);
    }
    throw error;
  }
  const logger = new JsonLogger('regression', config.logLevel, stdoutByTurn());
  const app = await NestFactory.create<NestExpressApplication>(RegressionModule.forRoot(config, logger, judge), { logger, bodyParser: false });
  // Calibrations and pairwise comparisons carry the outputs they judge (used in memory, never stored).
  useBodyParsers(app, 64, { yaml: false });
  answerUnparsableRequests(app.getHttpServer());
  app.enableShutdownHooks();
  serveOpenApi(app, 'regression', '0.1.0');
  serveAsyncApi(app, '0.1.0');
  await app.listen(config.httpPort, '0.0.0.0');
  logger.event('info', 'regression listening', { port: config.httpPort });
}

main().catch((error: unknown) => {
  process.stderr.write(`regression: failed to start: ${error instanceof Error ? `${error.name}: ${error.message}` : 'error'}\n`);
  process.exit(1);
});
