import { DataSource } from 'typeorm';
import { testServers } from '../../../test/support/servers';
import { createDataSource, warmPool } from './data-source';

/**
 * A pool warmed at boot (issue 28): the connections are open on the server before any query needs them, and
 * the pool keeps them however idle, so the first burst does not open them while it waits.
 */
describe('integration: warmPool (PostgreSQL server)', () => {
  const name = `evals-warm-${process.pid}`;
  let ds: DataSource | undefined;
  let probe: DataSource;

  beforeAll(async () => {
    probe = createDataSource({ url: testServers.postgres.url, poolSize: 1, applicationName: `${name}-probe` });
    await probe.initialize();
  });

  afterEach(async () => {
    if (ds?.isInitialized) await ds.destroy();
  });

  afterAll(async () => {
    await probe?.destroy();
  });

  async function serverConnections(): Promise<number> {
    const [{ n }] = await probe.query(`SELECT count(*)::int AS n FROM pg_stat_activity WHERE application_name = $1`, [name]);
    return n;
  }

  /** pg-pool's own view: connections it holds, and how many it keeps when idle. */
  function pool(source: DataSource): { totalCount: number; idleCount: number; options: { min: number } } {
    return (source.driver as unknown as { master: { totalCount: number; idleCount: number; options: { min: number } } }).master;
  }

  it('opens the connections it is asked for at once, hands them back idle, and the pool keeps them', async () => {
    ds = createDataSource({ url: testServers.postgres.url, poolSize: 4, warmConnections: 3, applicationName: name });
    await ds.initialize();
    await warmPool(ds, 3);
    expect(await serverConnections()).toBe(3);
    expect(pool(ds)).toMatchObject({ totalCount: 3, idleCount: 3 });
    // Above this count pg-pool closes a connection idle for 10 s; at or below it, never.
    expect(pool(ds).options.min).toBe(3);
  });

  it('keeps none by default, and never more than the pool', async () => {
    ds = createDataSource({ url: testServers.postgres.url, poolSize: 2, applicationName: name });
    expect(pool(await ds.initialize()).options.min).toBe(0);
    await ds.destroy();
    ds = createDataSource({ url: testServers.postgres.url, poolSize: 2, warmConnections: 5, applicationName: name });
    expect(pool(await ds.initialize()).options.min).toBe(2);
  });
});
