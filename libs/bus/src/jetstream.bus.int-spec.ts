import { jetstreamManager, type JetStreamManager } from '@nats-io/jetstream';
import { connect, type NatsConnection } from '@nats-io/transport-node';
import { testBusNames } from '../../../test/support/isolation';
import { startNats, stopNats, testServers } from '../../../test/support/servers';
import { JetStreamBus } from './jetstream.bus';
import { messageBusContract, waitFor } from './message-bus.contract';
import { CONSUMERS, STREAMS, streamOf, subjectOf, type BusNames } from './topology';

/** A JetStreamBus on its own connection and stream names; teardown deletes the streams. */
async function openJetStream(): Promise<{ bus: JetStreamBus; jsm: JetStreamManager; names: BusNames; teardown(): Promise<void> }> {
  const nc: NatsConnection = await connect({ servers: testServers.nats.url });
  const jsm = await jetstreamManager(nc);
  const t = testBusNames('bus');
  const names: BusNames = { streamPrefix: `BUS_${t.suffix}_`, subjectPrefix: `bus_${t.suffix}` };
  const bus = await JetStreamBus.connect(nc, names, { storage: 'memory' });
  return {
    bus,
    jsm,
    names,
    async teardown() {
      for (const spec of STREAMS) await jsm.streams.delete(streamOf(names, spec.name)).catch(() => undefined);
      await bus.close();
    },
  };
}

messageBusContract('JetStream', openJetStream);

describe('integration: JetStream topology', () => {
  let opened: Awaited<ReturnType<typeof openJetStream>>;

  beforeEach(async () => {
    opened = await openJetStream();
    await opened.bus.ensureTopology();
  });

  afterEach(() => opened.teardown());

  it('creates the four streams with prefixed subjects and their retention, idempotently', async () => {
    const { bus, jsm, names } = opened;
    await bus.ensureTopology();
    const inbound = await jsm.streams.info(streamOf(names, 'EVALS_INBOUND'));
    expect(inbound.config.subjects).toContain(subjectOf(names, 'evals.output.submitted'));
    expect(inbound.config.retention).toBe('workqueue');
    expect(inbound.config.storage).toBe('memory');
    const events = await jsm.streams.info(streamOf(names, 'EVALS_EVENTS'));
    expect(events.config.retention).toBe('limits');
    const consumer = await jsm.consumers.info(streamOf(names, 'EVALS_WORK'), CONSUMERS.scoringWorker.durable);
    expect(consumer.config.max_deliver).toBe(-1);
    expect(consumer.config.ack_policy).toBe('explicit');
    const regression = await jsm.consumers.info(streamOf(names, 'EVALS_EVENTS'), CONSUMERS.regression.durable);
    expect(regression.config.filter_subject).toBe(subjectOf(names, 'evals.event.run.scored'));
  });

  it('removes an acknowledged work-queue message from the stream itself', async () => {
    const { bus, jsm, names } = opened;
    for (let i = 0; i < 20; i++) await bus.publish(subjectOf(names, 'evals.work.score'), String(i), `w-${i}`);
    expect((await jsm.streams.info(streamOf(names, 'EVALS_WORK'))).state.messages).toBe(20);
    const sub = await bus.consume(CONSUMERS.scoringWorker, {
      maxBatch: 50,
      handler: async (batch) => {
        for (const m of batch) m.ack();
      },
    });
    try {
      await waitFor(async () => (await jsm.streams.info(streamOf(names, 'EVALS_WORK'))).state.messages === 0, 'the stream emptied');
    } finally {
      await sub.stop();
    }
  }, 30_000);
});

describe('integration: JetStream health follows the server (X2)', () => {
  it('is unhealthy while NATS is stopped and healthy again once it is back (the connection itself never closes)', async () => {
    const nc: NatsConnection = await connect({ servers: testServers.nats.url, maxReconnectAttempts: -1, reconnectTimeWait: 200 });
    const bus = await JetStreamBus.connect(nc, { streamPrefix: 'HEALTH_', subjectPrefix: 'health' });
    try {
      expect(bus.healthy).toBe(true);
      stopNats();
      try {
        await waitFor(() => !bus.healthy, 'unhealthy while NATS is stopped', 15_000);
        expect(nc.isClosed()).toBe(false);
      } finally {
        await startNats();
      }
      await waitFor(() => bus.healthy, 'healthy once NATS is back', 20_000);
    } finally {
      await bus.close();
    }
  }, 60_000);
});
