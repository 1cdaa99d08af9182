import { randomUUID } from 'node:crypto';
import { EventStore, StreamVersionConflict, type NewEvent } from '@evals/persistence';
import { migratedTestSchema } from '../../../test/support/isolation';
import { GroupedAppends } from './grouped-appends';

/** An event of `type` with ids of its own. */
const event = (type: string, id = randomUUID()): NewEvent => ({ type, version: 1, data: {}, metadata: { message_id: id, correlation_id: id, causation_id: id, occurred_at: '2026-12-04T00:00:00.000Z' } });

/** Issue 28: the ingestion's run-stream appends of one moment in one transaction, each with its own concurrency. */
describe('integration: GroupedAppends (PostgreSQL server)', () => {
  let db: Awaited<ReturnType<typeof migratedTestSchema>>;
  const store = new EventStore();
  const ds = () => db.ds;

  beforeAll(async () => {
    db = await migratedTestSchema('grouped');
  });

  afterAll(() => db?.close());

  const transactionsOf = async (streams: readonly string[]): Promise<number> => {
    const [{ n }] = await ds().query(`SELECT count(DISTINCT xmin::text)::int AS n FROM events WHERE stream_id = ANY($1::text[])`, [streams]);
    return n;
  };

  it('appends asked for together are one transaction, each stream at its own version, with its outbox rows', async () => {
    const appends = new GroupedAppends(ds(), store);
    const streams = Array.from({ length: 10 }, (_, i) => `grp-a-${i}`);
    await store.append(ds(), streams[3], 0, [event('run.opened')]);
    const stored = await Promise.all(streams.map((s, i) => appends.append(s, i === 3 ? 1 : 0, [event(i === 3 ? 'run.sealed' : 'run.opened')])));
    expect(stored.map((e) => e[0].stream_version)).toEqual(streams.map((_, i) => (i === 3 ? 2 : 1)));
    // The earlier append of streams[3] was its own transaction; the ten of the group are one more.
    expect(await transactionsOf(streams)).toBe(2);
    const [{ n }] = await ds().query(`SELECT count(*)::int AS n FROM outbox WHERE message_id = ANY($1::uuid[])`, [stored.flat().map((e) => e.metadata.message_id)]);
    expect(n).toBe(10);
  });

  it('a stale version fails only its own append (StreamVersionConflict); the rest of the group is committed', async () => {
    const appends = new GroupedAppends(ds(), store);
    await store.append(ds(), 'grp-b-stale', 0, [event('run.opened')]);
    const settled = await Promise.allSettled([appends.append('grp-b-0', 0, [event('run.opened')]), appends.append('grp-b-stale', 0, [event('run.opened')]), appends.append('grp-b-1', 0, [event('run.opened')])]);
    expect(settled.map((s) => s.status)).toEqual(['fulfilled', 'rejected', 'fulfilled']);
    expect((settled[1] as PromiseRejectedResult).reason).toBeInstanceOf(StreamVersionConflict);
    expect((await store.readStream(ds(), 'grp-b-stale')).length).toBe(1);
    expect((await store.readStream(ds(), 'grp-b-0')).length).toBe(1);
    expect((await store.readStream(ds(), 'grp-b-1')).length).toBe(1);
  });

  it('two appends to one stream in one group: the first is committed, the second conflicts as it would have alone', async () => {
    const appends = new GroupedAppends(ds(), store);
    const first = event('run.opened');
    const settled = await Promise.allSettled([appends.append('grp-c', 0, [first]), appends.append('grp-c', 0, [event('run.opened')]), appends.append('grp-c-other', 0, [event('run.opened')])]);
    expect(settled.map((s) => s.status)).toEqual(['fulfilled', 'rejected', 'fulfilled']);
    expect((settled[1] as PromiseRejectedResult).reason).toBeInstanceOf(StreamVersionConflict);
    expect((await store.readStream(ds(), 'grp-c')).map((e) => e.metadata.message_id)).toEqual([first.metadata.message_id]);
  });
});
