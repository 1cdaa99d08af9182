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

  describe('the running relay (start, dispatch)', () => {
    /** Polls until every row is published, or fails after `ms` - far below the idle delay, so only a notification can get it there. */
    async function allPublishedWithin(ms: number): Promise<void> {
      const until = Date.now() + ms;
      for (;;) {
        const [{ n }] = await ds.query(`SELECT count(*)::int AS n FROM outbox WHERE published_at IS NULL`);
        if (n === 0) return;
        if (Date.now() > until) throw new Error(`${n} outbox rows still unpublished after ${ms} ms`);
        await new Promise((r) => setTimeout(r, 5));
      }
    }

    it('a commit while a tick is in flight is published at once, not after the idle delay', async () => {
      await ds.query(`UPDATE outbox SET published_at = now() WHERE published_at IS NULL`);
      const published: string[] = [];
      // An idle delay of a minute: a row that waited for it would fail the poll below.
      const relay = new OutboxRelay(ds, { publish: async (subject: string) => void published.push(subject) }, { idleDelayMs: 60_000 });
      const tick = relay.tick.bind(relay);
      let first = true;
      let appended: () => void = () => undefined;
      const committed = new Promise<void>((r) => (appended = r));
      relay.tick = async () => {
        const relayed = await tick();
        if (first) {
          // The first tick found the outbox empty; a writer commits before it returns.
          first = false;
          await store.append(ds, `run-${randomUUID()}`, 0, [event('run.sealed')]);
          appended();
        }
        return relayed;
      };
      relay.start();
      try {
        await committed;
        await allPublishedWithin(5_000);
        expect(published).toEqual(['evals.event.run.sealed']);
      } finally {
        await relay.stop();
      }
    });

    it('issue 28: a started relay publishes a commit\'s rows itself, with no tick after it (and none after the first, empty one)', async () => {
      await ds.query(`UPDATE outbox SET published_at = now() WHERE published_at IS NULL`);
      let ticks = 0;
      const relay = new OutboxRelay(ds, { publish: async () => undefined }, { idleDelayMs: 60_000 });
      const tick = relay.tick.bind(relay);
      let idle: () => void = () => undefined;
      const firstTickDone = new Promise<void>((r) => (idle = r));
      relay.tick = async () => {
        ticks++;
        const relayed = await tick();
        idle();
        return relayed;
      };
      relay.start();
      try {
        // The relay's first tick found the outbox empty and it went idle; only then are the rows written.
        await firstTickDone;
        await store.append(ds, `run-${randomUUID()}`, 0, [event('run.opened'), event('run.sealed')]);
        await allPublishedWithin(5_000);
        // The first tick (before the rows) found nothing; the commit's dispatch published both, and no
        // claim followed. An absence is watched for a bounded while: a relay that ticks on does within ms.
        for (let i = 0; i < 20; i++) await new Promise((r) => setTimeout(r, 5));
        expect(ticks).toBe(1);
      } finally {
        await relay.stop();
      }
    });
  });
});
