import { postgresDataSource, type TestDataSource } from './test-data-sources.testing';
import { RunLocks } from './run-locks';

/**
 * The run locks on the PostgreSQL server (docs/pipeline.md step 2): a seal of many runs (issue 28) holds each
 * of their locks exclusively until it commits, and two such seals over the same runs in opposite orders
 * never deadlock (one key order for all).
 */
describe('integration: run locks (PostgreSQL server)', () => {
  let db: TestDataSource;
  const locks = new RunLocks();

  beforeAll(async () => {
    db = await postgresDataSource('runlocks', 4);
  });

  afterAll(async () => {
    await db?.teardown();
  });

  /** Whether another session could take the run's lock shared, as a scoring transaction does. */
  async function freeForScoring(runId: string): Promise<boolean> {
    return db.ds.transaction(async (tx) => {
      const [{ ok }] = await tx.query(`SELECT pg_try_advisory_xact_lock_shared(72430002, hashtext($1)) AS ok`, [runId]);
      return ok;
    });
  }

  it('exclusiveAll holds every run it names until commit, and only those', async () => {
    let release!: () => void;
    const held = new Promise<void>((resolve) => (release = resolve));
    let locked!: () => void;
    const taken = new Promise<void>((resolve) => (locked = resolve));
    const seal = db.ds.transaction(async (tx) => {
      await locks.exclusiveAll(tx, ['lk-a', 'lk-b', 'lk-a']);
      locked();
      await held;
    });
    await taken;
    expect(await freeForScoring('lk-a')).toBe(false);
    expect(await freeForScoring('lk-b')).toBe(false);
    expect(await freeForScoring('lk-c')).toBe(true);
    release();
    await seal;
    expect(await freeForScoring('lk-b')).toBe(true);
  });

  it('two seals of the same runs named in opposite orders both complete (no deadlock)', async () => {
    const ids = Array.from({ length: 20 }, (_, i) => `lk-order-${i}`);
    const seal = (runIds: string[]) =>
      db.ds.transaction(async (tx) => {
        await locks.exclusiveAll(tx, runIds);
        await tx.query('SELECT pg_sleep(0.05)');
        return runIds.length;
      });
    await expect(Promise.all([seal(ids), seal([...ids].reverse()), seal([ids[7], ids[3]])])).resolves.toEqual([20, 20, 2]);
  });
});
