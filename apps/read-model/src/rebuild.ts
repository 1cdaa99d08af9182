import { randomUUID } from 'node:crypto';
import { ConfigError, JsonLogger } from '@evals/platform';
import { createDataSource, migrate } from '@evals/persistence';
import { loadRebuildConfig } from './config';
import { rebuildReadModel } from './rebuild-read-model';
import { RunProjector } from './run.projector';

/**
 * `npm run rebuild:read-model`: empties the run read model and replays the whole event log from PostgreSQL
 * through the live projector (docs/read-model.md, "Rebuild"). Needs DATABASE_URL (and DATABASE_SCHEMA
 * when the tables live in one); optional REBUILD_PAGE_SIZE. Exit 0 done, 1 failed (nothing changed), 2 bad
 * configuration.
 */
async function main(): Promise<number> {
  let config;
  try {
    config = loadRebuildConfig();
  } catch (error) {
    if (error instanceof ConfigError) {
      process.stderr.write(`${error.message}\n`);
      return 2;
    }
    throw error;
  }
  const logger = new JsonLogger('read-model-rebuild', config.logLevel);
  const dataSource = createDataSource({ url: config.databaseUrl, schema: config.databaseSchema || undefined, poolSize: 2, applicationName: 'evals-read-model-rebuild' });
  try {
    await dataSource.initialize();
    await migrate(dataSource);
    const report = await rebuildReadModel(dataSource, new RunProjector({ uuid: () => randomUUID() }, logger), { pageSize: config.pageSize, logger });
    logger.event('info', 'read model rebuilt', { ...report });
    return 0;
  } catch (error) {
    // The event log holds no candidate output (D1), so the error text may be shown to the operator.
    logger.event('error', 'rebuild failed; the read model is unchanged', {
      error: error instanceof Error ? `${error.name}: ${error.message}`.slice(0, 500) : 'error',
      code: (error as { code?: string })?.code,
    });
    return 1;
  } finally {
    if (dataSource.isInitialized) await dataSource.destroy();
  }
}

main().then(
  (code) => process.exit(code),
  () => process.exit(1),
);
