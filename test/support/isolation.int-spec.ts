import { connect } from '@nats-io/transport-node';
import { jetstream, jetstreamManager } from '@nats-io/jetstream';
import Redis from 'ioredis';
import { Client } from 'pg';
import { createTestSchema, testBusNames, testRedisPrefix } from './isolation';
import { deploymentSchemas } from '@evals/persistence';
import { testServers } from './servers';

// Test infrastructure: the isolation every integration test relies on holds on the real servers.
describe('integration: test isolation on the real servers', () => {
  it('gives two tests two PostgreSQL schemas that cannot see each other', async () => {
    const [a, b] = await Promise.all([createTestSchema(), createTestSchema()]);
    const clientA = new Client({ connectionString: a.url });
    const clientB = new Client({ connectionString: b.url });
    await Promise.all([clientA.connect(), clientB.connect()]);
    try {
      await clientA.query('CREATE TABLE marker (v text)');
      await clientA.query("INSERT INTO marker VALUES ('a')");
      await clientB.query('CREATE TABLE marker (v text)');
      const seenByB = await clientB.query('SELECT count(*)::int AS n FROM marker');
      expect(seenByB.rows[0].n).toBe(0);
      const path = await clientA.query('SHOW search_path');
      expect(path.rows[0].search_path).toBe(deploymentSchemas(a.schema).join(','));
    } finally {
      await Promise.all([clientA.end(), clientB.end()]);
      await Promise.all([a.drop(), b.drop()]);
    }
  });

  it('gives each test its own JetStream stream and subjects', async () => {
    const nc = await connect({ servers: testServers.nats.url });
    const names = testBusNames();
    const stream = names.stream('EVENTS');
    try {
      const jsm = await jetstreamManager(nc);
      await jsm.streams.add({ name: stream, subjects: [names.subject('>')] });
      const js = jetstream(nc);
      const ack = await js.publish(names.subject('probe'), 'x', { msgID: 'probe-1' });
      const dup = await js.publish(names.subject('probe'), 'x', { msgID: 'probe-1' });
      expect(ack.seq).toBe(1);
      expect(dup.duplicate).toBe(true);
      const info = await jsm.streams.info(stream);
      expect(info.state.messages).toBe(1);
      await jsm.streams.delete(stream);
    } finally {
      await nc.close();
    }
  });

  it('gives each test its own Redis key prefix', async () => {
    const redis = new Redis(testServers.redis.url);
    const [p1, p2] = [testRedisPrefix(), testRedisPrefix()];
    try {
      await redis.set(`${p1}k`, 'v', 'EX', 30);
      expect(p1).not.toBe(p2);
      expect(await redis.keys(`${p2}*`)).toEqual([]);
      expect(await redis.get(`${p1}k`)).toBe('v');
    } finally {
      await redis.del(`${p1}k`);
      redis.disconnect();
    }
  });
});
