import { createDataSource } from './data-source';
import { startEmbeddedPostgres } from './embedded-postgres';
import { persistenceContract } from './persistence.contract';

// PGlite loads its WASM through a dynamic import, which Jest's module system runs only with Node's
// --experimental-vm-modules: `npm run test:int` passes it.
persistenceContract('PGlite, the embedded default', async () => {
  const pg = await startEmbeddedPostgres();
  const ds = createDataSource({ url: pg.url, poolSize: 1 });
  await ds.initialize();
  return {
    ds,
    async teardown() {
      await ds.destroy();
      await pg.stop();
    },
  };
});
