import { randomUUID } from 'node:crypto';
import { statementsSent } from '../../../test/support/statements';
import { postgresDataSource, type TestDataSource } from './test-data-sources.testing';
import { migrate } from './data-source';
import { EventStore, Outbox, type NewEvent } from './event-store';
import { OutboxRelay } from './outbox-relay';

/**
 * Issue 28: a started relay publishes the outbox rows an append wrote at the commit of its transaction, from
 * memory, and marks them by id - no claim of its own. What the outbox guarantees still holds: nothing of a
 * transaction that rolled back is published, and a row whose publish failed is left to the claim.
 */
describe('integration: outbox rows dispatched at their commit (PostgreSQL server)', () => {
  let db: TestDataSource;
  const store = new EventStore();
  const outbox = new Outbox();
  let relay: OutboxRelay | undefined;

  beforeAll(async () => {
    db = await postgresDataSource('dispatch', 3);
    await migrate(db.ds);
  }, 120_000);

  afterAll(async () => {
    await db?.teardown();
  });

  afterEach(async () => {
    await relay?.stop();
    relay = undefined;
    await db.ds.query(`DELETE FROM outbox`);
  });

  function event(type: string): NewEvent {
    const id = randomUUID();
    return { type, version: 1, data: { n: 1 }, metadata: { message_id: id, correlation_id: id, causation_id: id, occurred_at: '2026-12-07T00:00:00.000Z' } };
  }

  /** A relay whose idle poll never comes during a test: only a commit's dispatch can publish. */
  function started(publish: (subject: string, payload: string, id: string) => Promise<unknown>): OutboxRelay {
    relay = new OutboxRelay(db.ds, { publish }, { idleDelayMs: 600_000 });
    relay.start();
    return relay;
  }

  async function until(check: () => Promise<boolean> | boolean): Promise<void> {
    const deadline = Date.now() + 10_000;
    while (!(await check())) {
      if (Date.now() > deadline) throw new Error('timed out waiting');
      await new Promise((r) => setImmediate(r));
    }
  }

  const unpublished = async () => (await db.ds.query(`SELECT count(*)::int AS n FROM outbox WHERE published_at IS NULL`))[0].n as number;
  const claims = (sent: readonly string[]) => sent.filter((s) => s.startsWith('BEGIN; UPDATE outbox'));

  it('publishes a transaction\'s events at its commit, in log order, and marks them in one statement by id - no claim', async () => {
    const published: Array<{ subject: string; id: string; payload: string }> = [];
    const { sent } = await statementsSent(async () => {
      started(async (subject, payload, id) => published.push({ subject, id, payload }));
      const before = published.length;
      const events = [event('run.opened'), event('run.sealed')];
      await db.ds.transaction((m) => store.append(m, 'dispatch-a', 0, events));
      await until(async () => published.length === before + 2 && (await unpublished()) === 0);
      expect(published.map((p) => p.id)).toEqual(events.map((e) => e.metadata.message_id));
      expect(published.map((p) => p.subject)).toEqual(['evals.event.run.opened', 'evals.event.run.sealed']);
      // The wire form the claim would have published: the envelope with its place in the log.
      expect(JSON.parse(published[0].payload)).toMatchObject({ type: 'run.opened', version: 1, stream_id: 'dispatch-a', stream_version: 1, metadata: events[0].metadata });
    });
    const marks = sent.filter((s) => s.includes('UPDATE outbox SET published_at = now() WHERE id IN') && !s.includes('SELECT'));
    expect(marks).toHaveLength(1);
    // At most the loop's first claim, at start; none for the commit.
    expect(claims(sent).length).toBeLessThanOrEqual(1);
  });

  it('a rolled-back transaction publishes nothing, and rows written under a savepoint rolled back are not published with the rest', async () => {
    const published: string[] = [];
    started(async (_s, _p, id) => published.push(id));
    await expect(
      db.ds.transaction(async (m) => {
        await store.append(m, 'dispatch-rolled-back', 0, [event('run.opened')]);
        throw new Error('rolled back');
      }),
    ).rejects.toThrow('rolled back');

    const kept = event('run.opened');
    const dropped = event('run.sealed');
    const runner = db.ds.createQueryRunner();
    await runner.connect();
    try {
      await runner.startTransaction();
      await store.append(runner, 'dispatch-savepoint', 0, [kept]);
      await runner.startTransaction(); // a savepoint
      await store.append(runner, 'dispatch-savepoint', 1, [dropped]);
      await runner.rollbackTransaction(); // to the savepoint
      await runner.commitTransaction();
    } finally {
      await runner.release();
    }
    await until(async () => published.length >= 1 && (await unpublished()) === 0);
    expect(published).toEqual([kept.metadata.message_id]);
    const [{ n }] = await db.ds.query(`SELECT count(*)::int AS n FROM outbox`);
    expect(n).toBe(1);
  });

  it('an append outside a transaction and Outbox.add are dispatched when their statement returns', async () => {
    const published: string[] = [];
    started(async (_s, _p, id) => published.push(id));
    const e = event('run.opened');
    await store.append(db.ds, 'dispatch-autocommit', 0, [e]);
    const direct = randomUUID();
    await db.ds.transaction((m) => outbox.add(m, [{ subject: 'evals.result.recorded', message_id: direct, payload: { ok: true } }]));
    await until(async () => published.length === 2 && (await unpublished()) === 0);
    expect(published).toEqual([e.metadata.message_id, direct]);
  });

  it('a publish that fails leaves its rows to the claim, which publishes them under the same message ids', async () => {
    let failing = true;
    const published: string[] = [];
    const errors: unknown[] = [];
    relay = new OutboxRelay(
      db.ds,
      {
        publish: async (_s, _p, id) => {
          if (failing) throw new Error('bus down');
          published.push(id);
        },
      },
      // No grace: the claim may take the failed rows at once (a started relay's default leaves them 2 s to their dispatch).
      { idleDelayMs: 600_000, maxBackoffMs: 50, claimGraceMs: 0, onError: (error) => errors.push(error) },
    );
    relay.start();
    const e = event('run.opened');
    await db.ds.transaction((m) => store.append(m, 'dispatch-failing', 0, [e]));
    await until(() => errors.length > 0);
    expect(await unpublished()).toBe(1);
    failing = false;
    // The failed dispatch woke the claim, which retries with its backoff until the bus takes the row.
    await until(async () => published.length === 1 && (await unpublished()) === 0);
    expect(published).toEqual([e.metadata.message_id]);
  });

  it('a data source without a started relay gets no rows back and dispatches nothing: its rows wait for a claim', async () => {
    const { sent } = await statementsSent(() => store.append(db.ds, 'dispatch-none', 0, [event('run.opened')]));
    expect(sent).toHaveLength(1);
    expect(sent[0]).not.toContain('LEFT JOIN relayed');
    expect(await unpublished()).toBe(1);
  });
});
