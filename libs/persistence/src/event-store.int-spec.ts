import { randomUUID } from 'node:crypto';
import { jetstream, jetstreamManager } from '@nats-io/jetstream';
import { connect, type NatsConnection } from '@nats-io/transport-node';
import type { DataSource } from 'typeorm';
import { createTestSchema, testBusNames, type TestSchema } from '../../../test/support/isolation';
import { testServers } from '../../../test/support/servers';
import { createDataSource, migrate } from './data-source';
import { EventStore, type NewEvent } from './event-store';
import { OutboxRelay } from './outbox-relay';

function event(type: string, data: object = {}): NewEvent {
  const id = randomUUID();
  return { type, version: 1, data, metadata: { message_id: id, correlation_id: id, causation_id: id, occurred_at: '2026-11-30T00:00:00.000Z' } };
}

// The event store and outbox themselves are in persistence.contract.ts (on PostgreSQL and on PGlite).
describe('integration: the outbox relayed to the real JetStream', () => {
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
      await store.append(ds, 'run-r', 0, [event('run.opened'), event('run.sealed')]);
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
  });
});
