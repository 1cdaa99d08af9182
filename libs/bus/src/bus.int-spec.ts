import { jetstream, jetstreamManager, type JetStreamClient, type JetStreamManager, type JsMsg } from '@nats-io/jetstream';
import { connect, type NatsConnection } from '@nats-io/transport-node';
import { testBusNames } from '../../../test/support/isolation';
import { testServers } from '../../../test/support/servers';
import { allAcknowledgedBefore } from './ack-floor';
import { BatchConsumer } from './batch-consumer';
import { JetStreamPublisher } from './publisher';
import { CONSUMERS, ensureTopology, streamOf, subjectOf, type BusNames } from './topology';

async function waitFor(predicate: () => boolean | Promise<boolean>, timeoutMs = 10_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await predicate())) {
    if (Date.now() > deadline) throw new Error('condition not met in time');
    await new Promise((r) => setTimeout(r, 20));
  }
}

describe('integration: JetStream topology, publisher and batch consumer', () => {
  let nc: NatsConnection;
  let js: JetStreamClient;
  let jsm: JetStreamManager;
  let names: BusNames;

  beforeEach(async () => {
    nc = await connect({ servers: testServers.nats.url });
    js = jetstream(nc);
    jsm = await jetstreamManager(nc);
    const t = testBusNames('bus');
    names = { streamPrefix: `BUS_${t.suffix}_`, subjectPrefix: `bus_${t.suffix}` };
    await ensureTopology(jsm, names, { storage: 'memory' });
  });

  afterEach(async () => {
    for (const s of ['EVALS_INBOUND', 'EVALS_WORK', 'EVALS_EVENTS', 'EVALS_OUTBOUND'] as const) {
      await jsm.streams.delete(streamOf(names, s)).catch(() => undefined);
    }
    await nc.close();
  });

  it('creates the four streams with prefixed subjects, idempotently', async () => {
    await ensureTopology(jsm, names, { storage: 'memory' });
    const inbound = await jsm.streams.info(streamOf(names, 'EVALS_INBOUND'));
    expect(inbound.config.subjects).toContain(subjectOf(names, 'evals.output.submitted'));
    expect(inbound.config.retention).toBe('workqueue');
    const events = await jsm.streams.info(streamOf(names, 'EVALS_EVENTS'));
    expect(events.config.retention).toBe('limits');
    const consumer = await jsm.consumers.info(streamOf(names, 'EVALS_WORK'), CONSUMERS.scoringWorker.durable);
    expect(consumer.config.max_deliver).toBe(-1);
  });

  it('de-duplicates a repeated publish with the same message id', async () => {
    const publisher = new JetStreamPublisher(js);
    const subject = subjectOf(names, 'evals.event.test');
    const first = await publisher.publish(subject, '{}', 'm-1');
    const again = await publisher.publish(subject, '{}', 'm-1');
    expect(again.duplicate).toBe(true);
    expect(again.seq).toBe(first.seq);
  });

  it('hands buffered messages over in batches, and a failed batch is redelivered, not lost', async () => {
    const publisher = new JetStreamPublisher(js);
    const subject = subjectOf(names, 'evals.work.score');
    for (let i = 0; i < 200; i++) await publisher.publish(subject, String(i), `w-${i}`);
    const seen = new Set<string>();
    const batchSizes: number[] = [];
    let failedOnce = false;
    const consumer = new BatchConsumer({
      js,
      stream: streamOf(names, 'EVALS_WORK'),
      durable: CONSUMERS.scoringWorker.durable,
      maxBatch: 50,
      retryDelayMs: 10,
      handler: async (batch: JsMsg[]) => {
        if (!failedOnce) {
          failedOnce = true;
          throw new Error('transient');
        }
        batchSizes.push(batch.length);
        for (const m of batch) {
          seen.add(m.string());
          m.ack();
        }
      },
    });
    await consumer.start();
    await waitFor(() => seen.size === 200);
    await consumer.stop();
    expect(Math.max(...batchSizes)).toBeGreaterThan(1);
    expect(Math.max(...batchSizes)).toBeLessThanOrEqual(50);
    await waitFor(async () => (await jsm.streams.info(streamOf(names, 'EVALS_WORK'))).state.messages === 0);
  });

  it('reports whether every message before a sequence is acknowledged (seal ordering)', async () => {
    const publisher = new JetStreamPublisher(js);
    const subject = subjectOf(names, 'evals.work.score');
    await publisher.publish(subject, 'a', 'a');
    await publisher.publish(subject, 'b', 'b');
    const seal = await publisher.publish(subjectOf(names, 'evals.work.seal'), 'seal', 'seal');
    const stream = streamOf(names, 'EVALS_WORK');
    const durable = CONSUMERS.scoringWorker.durable;
    expect(await allAcknowledgedBefore(jsm, stream, durable, seal.seq)).toBe(false);
    const consumer = await js.consumers.get(stream, durable);
    const msgs = await consumer.fetch({ max_messages: 2, expires: 1000 });
    for await (const m of msgs) {
      await m.ackAck();
    }
    expect(await allAcknowledgedBefore(jsm, stream, durable, seal.seq)).toBe(true);
  });
});
