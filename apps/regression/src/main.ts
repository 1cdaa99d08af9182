import 'reflect-metadata';
import { NestFactory } from '@nestjs/core';
import { ConfigError, JsonLogger, serveOpenApi } from '@evals/platform';
import { loadRegressionConfig } from './config';
import { RegressionModule } from './regression.module';

async function main(): Promise<void> {
  let config;
  try {
    config = loadRegressionConfig(process.env);
  } catch (error) {
    if (error instanceof ConfigError) {
      process.stderr.write(`regression: ${error.message}\n`);
      process.exit(2);
    }
    throw error;
  }
  const logger = new JsonLogger('regression', config.logLevel);
  const app = await NestFactory.create(RegressionModule.forRoot(config, logger), { logger });
  app.enableShutdownHooks();
  serveOpenApi(app, 'regression', '0.1.0');
  await app.listen(config.httpPort, '0.0.0.0');
  logger.event('info', 'regression listening', { port: config.httpPort });
}

main().catch((error: unknown) => {
  process.stderr.write(`regression: failed to start: ${error instanceof Error ? `${error.name}: ${error.message}` : 'error'}\n`);
  process.exit(1);
});
