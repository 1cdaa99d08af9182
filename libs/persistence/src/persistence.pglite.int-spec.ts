import { createDataSource } from './data-source';
import { startEmbeddedPostgres, type EmbeddedPostgresOptions } from '@evals/pglite';
import { persistenceContract } from './persistence.contract';

function onPGlite(connection: EmbeddedPostgresOptions['connection']) {
  return async () => {
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
  };
}

// PGlite loads its WASM through a dynamic import, which Jest's module system runs only with Node's
// --experimental-vm-modules: `npm run test:int` passes it.
persistenceContract('PGlite, in this thread', onPGlite('in-process'));
// The all-in-one's connection (embedded-server.ts): PGlite in a worker thread, the same answers.
persistenceContract('PGlite in a worker thread, the embedded default', onPGlite('worker'));
