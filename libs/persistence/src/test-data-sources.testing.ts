import { startEmbeddedPostgres, type EmbeddedPostgresOptions } from '@evals/pglite';
import type { DataSource } from 'typeorm';
import { createTestSchema } from '../../../test/support/isolation';
import { testServers } from '../../../test/support/servers';
import { createDataSource, migrate } from './data-source';

/** A data source for a contract's setup, and what removes it. */
export interface TestDataSource {
  readonly ds: DataSource;
  teardown(): Promise<void>;
}

/** A data source on a fresh in-memory PGlite (a pool of one, as the all-in-one uses), for the contracts' setups. */
export async function pgliteDataSource(connection: EmbeddedPostgresOptions['connection'] = 'in-process'): Promise<TestDataSource> {
  const pg = await startEmbeddedPostgres(undefined, { connection });
  const ds = createDataSource({ url: pg.url, poolSize: 1 });
  await ds.initialize();
  return {
    ds,
    async teardown() {
      await ds.destroy();
      await pg.stop();
    },
  };
}

/** A data source on the test PostgreSQL server, in a schema of its own (named from `prefix`), dropped at teardown. */
export async function postgresDataSource(prefix: string, poolSize = 2): Promise<TestDataSource> {
  const schema = await createTestSchema(prefix);
  const ds = createDataSource({ url: testServers.postgres.url, schema: schema.schema, poolSize });
  await ds.initialize();
  return {
    ds,
    async teardown() {
      await ds.destroy();
      await schema.drop();
    },
  };
}

/**
 * The setup of a describe block: a data source from `open`, migrated before its tests and torn down after them.
 * Returns what reads it, once the block's tests run.
 */
export function migratedDataSource(open: () => Promise<TestDataSource>): () => DataSource {
  let source: TestDataSource | undefined;
  beforeAll(async () => {
    source = await open();
    await migrate(source.ds);
  }, 120_000);
  afterAll(async () => {
    await source?.teardown();
  });
  return () => source!.ds;
}
