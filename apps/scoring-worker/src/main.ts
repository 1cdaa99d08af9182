import 'reflect-metadata';
import { NestFactory } from '@nestjs/core';
import { answerUnparsableRequests, ConfigError, JsonLogger, stdoutByTurn, serveAsyncApi, serveOpenApi } from '@evals/platform';
import { loadWorkerConfig, type WorkerConfig } from './config';
import { APP_NAME, WorkerModule } from './worker.module';

/**
 * The scoring worker process. Configuration is read once and validated before anything connects: a bad
 * configuration prints every problem (never a secret's value) and exits with status 2.
 */
async function main(): Promise<void> {
  let config: WorkerConfig;
  try {
    config = loadWorkerConfig(process.env);
  } catch (error) {
    if (error instanceof ConfigError) {
      process.stderr.write(`${error.message}\n`);
      process.exit(2);
    }
    throw error;
  }
  const logger = new JsonLogger(APP_NAME, config.logLevel, stdoutByTurn());
  const app = await NestFactory.create(WorkerModule.forRoot(config, logger), { logger });
  app.enableShutdownHooks();
  answerUnparsableRequests(app.getHttpServer());
  serveOpenApi(app, 'scoring-worker', '0.1.0');
  serveAsyncApi(app, '0.1.0');
  await app.listen(config.httpPort);
  const judge = config.judge;
  logger.event('info', 'scoring worker started', {
    port: config.httpPort,
    // The pin and whether a key is set - never the key, never the endpoint's credentials (X3).
    judge_provider: judge?.provider ?? null,
    judge_model: judge?.model ?? null,
    judge_credential: judge ? (judge.provider === 'ollama' || Boolean(judge.apiKey) ? 'set' : 'missing') : null,
    verdict_cache: Boolean(judge && config.redisUrl),
  });
}

main().catch((error: unknown) => {
  // Boot happens before any work is consumed, so the message cannot quote an output; it is clamped anyway.
  const code = (error as { code?: unknown } | null)?.code;
  const line = {
    time: new Date().toISOString(),
    level: 'error',
    app: APP_NAME,
    msg: 'boot failed',
    error: error instanceof Error ? error.name : 'error',
    code: typeof code === 'string' ? code : null,
    detail: error instanceof Error ? error.message.slice(0, 300) : null,
  };
  process.stderr.write(`${JSON.stringify(line)}\n`);
  process.exit(1);
});
