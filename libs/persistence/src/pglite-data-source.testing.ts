import { startEmbeddedPostgres, type EmbeddedPostgresOptions } from '@evals/pglite';
import type { DataSource } from 'typeorm';
import { createDataSource } from './data-source';

/** A data source on a fresh in-memory PGlite (a pool of one, as the all-in-one uses), for the contracts' setups. */
export async function pgliteDataSource(connection: EmbeddedPostgresOptions['connection'] = 'in-process'): Promise<{ ds: DataSource; teardown(): Promise<void> }> {
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
