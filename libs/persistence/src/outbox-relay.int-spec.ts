import { statementsSent } from '../../../test/support/statements';
import { postgresDataSource, type TestDataSource } from './test-data-sources.testing';
import { migrate } from './data-source';
import { OutboxRelay } from './outbox-relay';

/**
 * The relay's tick on the PostgreSQL server (issue 28): two round trips whether it finds rows or not - the
 * transaction's start with the claim that marks them, then the commit -, rows out oldest first across
 * ticks, and a publish that fails marks nothing. Its contract (once per row, kept while the bus refuses) is
 * in persistence.contract.ts.
 */
describe('integration: the outbox relay tick (PostgreSQL server)', () => {
  let db: TestDataSource;

  beforeAll(async () => {
    db = await postgresDataSource('relaytick', 2);
    await migrate(db.ds);
  });

  afterAll(async () => {
    await db?.teardown();
  });

  beforeEach(async () => {
    await db.ds.query(`DELETE FROM outbox`);
  });

  async function addRows(count: number): Promise<string[]> {
    const rows: Array<{ message_id: string }> = await db.ds.query(
      `INSERT INTO outbox (subject, message_id, payload)
       SELECT 'evals.relay.test', gen_random_uuid(), jsonb_build_object('n', g) FROM generate_series(1, $1::int) g
       RETURNING message_id`,
      [count],
    );
    return rows.map((r) => r.message_id);
  }

  it('publishes a batch in two round trips, oldest first, and an empty tick costs two as well', async () => {
    const ids = await addRows(30);
    const published: string[] = [];
    const relay = new OutboxRelay(db.ds, { publish: async (_s: string, _p: string, id: string) => published.push(id) }, { batchSize: 12 });
    const first = await statementsSent(() => relay.tick());
    expect(first.result).toBe(12);
    expect(first.sent).toHaveLength(2);
    expect(first.sent[1]).toBe('COMMIT');
    while ((await relay.tick()) > 0);
    expect(published).toEqual(ids);
    const empty = await statementsSent(() => relay.tick());
    expect(empty.result).toBe(0);
    expect(empty.sent).toHaveLength(2);
    const [{ n }] = await db.ds.query(`SELECT count(*)::int AS n FROM outbox WHERE published_at IS NULL`);
    expect(n).toBe(0);
  });

  it('a publish that fails marks nothing: the next tick sends the same rows again, in order', async () => {
    const ids = await addRows(5);
    let calls = 0;
    const published: string[] = [];
    const relay = new OutboxRelay(db.ds, {
      publish: async (_s: string, _p: string, id: string) => {
        if (++calls === 3) throw new Error('bus down');
        published.push(id);
      },
    });
    await expect(relay.tick()).rejects.toThrow('bus down');
    const [{ n }] = await db.ds.query(`SELECT count(*)::int AS n FROM outbox WHERE published_at IS NULL`);
    expect(n).toBe(5);
    published.length = 0;
    expect(await relay.tick()).toBe(5);
    expect(published).toEqual(ids);
  });

  it('stopped while a claim is publishing, it finishes that claim and stops - it does not begin an idle wait (.ci/run caught stop() held for the idle delay)', async () => {
    const ids = await addRows(3);
    let release!: () => void;
    const publishing = new Promise<void>((resolve) => (release = resolve));
    let claimed!: () => void;
    const inClaim = new Promise<void>((resolve) => (claimed = resolve));
    const published: string[] = [];
    const relay = new OutboxRelay(
      db.ds,
      {
        publish: async (_s: string, _p: string, id: string) => {
          claimed();
          await publishing;
          published.push(id);
        },
      },
      // An idle delay no test outlives, and no grace: the first claim takes the rows.
      { idleDelayMs: 600_000, claimGraceMs: 0 },
    );
    relay.start();
    await inClaim;
    const stopping = relay.stop();
    release();
    // Before the fix the loop went on into a 600 s wait after this claim, with nothing left to wake it.
    const outcome = await Promise.race([stopping.then(() => 'stopped'), new Promise((r) => setTimeout(() => r('still waiting after 5 s'), 5_000))]);
    expect(outcome).toBe('stopped');
    expect(published).toEqual(ids);
    const [{ n }] = await db.ds.query(`SELECT count(*)::int AS n FROM outbox WHERE published_at IS NULL`);
    expect(n).toBe(0);
  }, 15_000);

  it('refuses a batch size that is not a positive integer (it is inlined into the claim)', () => {
    expect(() => new OutboxRelay(db.ds, { publish: async () => undefined }, { batchSize: 1.5 })).toThrow(RangeError);
    expect(() => new OutboxRelay(db.ds, { publish: async () => undefined }, { batchSize: 0 })).toThrow(RangeError);
  });
});
