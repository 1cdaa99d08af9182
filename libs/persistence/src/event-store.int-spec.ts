import { randomUUID } from 'node:crypto';
import { jetstream, jetstreamManager } from '@nats-io/jetstream';
import { connect, type NatsConnection } from '@nats-io/transport-node';
import type { DataSource } from 'typeorm';
import { createTestSchema, testBusNames, type TestSchema } from '../../../test/support/isolation';
import { testServers } from '../../../test/support/servers';
import { createDataSource, migrate } from './data-source';
import { EventStore, StreamVersionConflict, type NewEvent } from './event-store';
import { OutboxRelay } from './outbox-relay';

function event(type: string, data: object = {}): NewEvent {
  const id = randomUUID();
  return { type, version: 1, data, metadata: { message_id: id, correlation_id: id, causation_id: id, occurred_at: '2026-11-30T00:00:00.000Z' } };
}

describe('integration: event store and transactional outbox', () => {
  let schema: TestSchema;
  let ds: DataSource;
  const store = new EventStore();

  beforeAll(async () => {
    schema = await createTestSchema('eventstore');
    ds = createDataSource({ url: testServers.postgres.url, schema: schema.schema, poolSize: 4 });
    await ds.initialize();
    await migrate(ds);
  });

  afterAll(async () => {
    await ds?.destroy();
    await schema?.drop();
  });

  it('appends with stream versions and global positions, and writes one outbox row per event', async () => {
    const stored = await ds.transaction((m) => store.append(m, 'run-a', 0, [event('run.opened'), event('run.sealed')]));
    expect(stored.map((e) => e.stream_version)).toEqual([1, 2]);
    expect(stored[1].position).toBeGreaterThan(stored[0].position);
    const outbox = await ds.query(`SELECT subject, payload FROM outbox WHERE message_id = ANY($1::uuid[]) ORDER BY id`, [stored.map((e) => e.metadata.message_id)]);
    expect(outbox.map((r: any) => r.subject)).toEqual(['evals.event.run.opened', 'evals.event.run.sealed']);
    expect(outbox[0].payload).toMatchObject({ schema: 'run.opened.v1', stream_id: 'run-a', stream_version: 1, position: stored[0].position });
    expect((await store.readStream(ds, 'run-a')).map((e) => e.type)).toEqual(['run.opened', 'run.sealed']);
  });

  it('refuses a writer whose expected version is stale (optimistic concurrency), and rolls back its outbox rows', async () => {
    await store.append(ds, 'run-b', 0, [event('run.opened')]);
    const late = event('run.sealed');
    await expect(ds.transaction((m) => store.append(m, 'run-b', 0, [late]))).rejects.toBeInstanceOf(StreamVersionConflict);
    const [{ n }] = await ds.query(`SELECT count(*)::int AS n FROM outbox WHERE message_id = $1`, [late.metadata.message_id]);
    expect(n).toBe(0);
  });

  it('of two concurrent writers at the same version exactly one wins', async () => {
    await store.append(ds, 'run-c', 0, [event('run.opened')]);
    const results = await Promise.allSettled(
      Array.from({ length: 4 }, () => ds.transaction((m) => store.append(m, 'run-c', 1, [event('run.sealed')]))),
    );
    expect(results.filter((r) => r.status === 'fulfilled')).toHaveLength(1);
    expect((await store.readStream(ds, 'run-c')).length).toBe(2);
  });

  describe('relay to JetStream', () => {
    let nc: NatsConnection;
    const names = testBusNames('relay');
    const stream = names.stream('EVENTS');

    beforeAll(async () => {
      nc = await connect({ servers: testServers.nats.url });
      const jsm = await jetstreamManager(nc);
      await jsm.streams.add({ name: stream, subjects: [names.subject('>')] });
    });

    afterAll(async () => {
      const jsm = await jetstreamManager(nc);
      await jsm.streams.delete(stream).catch(() => undefined);
      await nc.close();
    });

    it('publishes every unpublished row once, with the message id as Nats-Msg-Id; a repeated relay is de-duplicated', async () => {
      const js = jetstream(nc);
      const publisher = { publish: (s: string, p: string, id: string) => js.publish(s, p, { msgID: id }) };
      const relay = new OutboxRelay(ds, publisher, { wireSubject: (s) => names.subject(s) });
      let relayed = 0;
      while ((await relay.tick()) > 0) relayed++;
      const [{ n }] = await ds.query(`SELECT count(*)::int AS n FROM outbox`);
      const info = await (await jetstreamManager(nc)).streams.info(stream);
      expect(info.state.messages).toBe(n);
      // Simulate a relay that crashed after publishing but before marking: publish everything again.
      const rows = await ds.query(`SELECT subject, message_id, payload FROM outbox`);
      for (const r of rows) await publisher.publish(names.subject(r.subject), JSON.stringify(r.payload), r.message_id);
      expect((await (await jetstreamManager(nc)).streams.info(stream)).state.messages).toBe(n);
      expect(relayed).toBeGreaterThan(0);
    });

    it('keeps rows when the bus refuses them, and publishes them once it is back (G6)', async () => {
      await store.append(ds, 'run-d', 0, [event('run.opened')]);
      let up = false;
      const sent: string[] = [];
      const flaky = {
        publish: async (_s: string, _p: string, id: string) => {
          if (!up) throw new Error('NATS down');
          sent.push(id);
        },
      };
      const relay = new OutboxRelay(ds, flaky);
      await expect(relay.tick()).rejects.toThrow('NATS down');
      const [{ n }] = await ds.query(`SELECT count(*)::int AS n FROM outbox WHERE published_at IS NULL`);
      expect(n).toBe(1);
      up = true;
      expect(await relay.tick()).toBe(1);
      expect(sent).toHaveLength(1);
    });
  });
});
