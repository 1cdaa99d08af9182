import { createTestSchema } from '../../../test/support/isolation';
import { testServers } from '../../../test/support/servers';
import { createDataSource } from './data-source';
import { persistenceContract } from './persistence.contract';

persistenceContract('PostgreSQL server', async () => {
  const schema = await createTestSchema('pcontract');
  const ds = createDataSource({ url: testServers.postgres.url, schema: schema.schema, poolSize: 4 });
  await ds.initialize();
  return {
    ds,
    async teardown() {
      await ds.destroy();
      await schema.drop();
    },
  };
});
