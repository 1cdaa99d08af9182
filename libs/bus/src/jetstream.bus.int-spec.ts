import { jetstreamManager, type JetStreamManager } from '@nats-io/jetstream';
import { connect, type NatsConnection } from '@nats-io/transport-node';
import { testBusNames } from '../../../test/support/isolation';
import { testServers } from '../../../test/support/servers';
import { JetStreamBus } from './jetstream.bus';
import { messageBusContract, waitFor } from './message-bus.contract';
import type { BusMessage } from './message-bus.port';
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

  it('hands unstarted messages back at once when no other subscription of the durable is running (X4, NATS 2.9)', async () => {
    const { bus, jsm, names } = opened;
    const stream = streamOf(names, 'EVALS_WORK');
    const durable = CONSUMERS.scoringWorker.durable;
    // Only a hand-back can bring them back within the deadline below; an ack-wait redelivery cannot.
    const ackWaitMs = ((await jsm.consumers.info(stream, durable)).config.ack_wait ?? 0) / 1e6;
    expect(ackWaitMs).toBeGreaterThanOrEqual(30_000);
    const seqs: number[] = [];
    for (let i = 0; i < 5; i++) seqs.push((await bus.publish(subjectOf(names, 'evals.work.score'), `u${i}`, `u-${i}`)).seq);

    const deliveries: Array<[number, number]> = [];
    let release!: () => void;
    const released = new Promise<void>((resolve) => (release = resolve));
    const leaving = await bus.consume(CONSUMERS.scoringWorker, {
      maxBatch: 1,
      prefetch: 20,
      handler: async ([m]) => {
        deliveries.push([m.seq, m.deliveryCount]);
        await released;
        m.ack();
      },
    });
    const later: BusMessage[] = [];
    let next: Awaited<ReturnType<typeof bus.consume>> | undefined;
    try {
      // All five delivered to the leaving subscription: one in hand, four buffered.
      await waitFor(async () => leaving.busy === 1 && (await jsm.consumers.info(stream, durable)).num_ack_pending === 5, 'all five delivered, one in hand');
      const stopped = leaving.stop();
      // The batch in hand takes a moment to finish, as a real one would.
      setTimeout(release, 200);
      await stopped;
      expect(deliveries).toEqual([[seqs[0], 1]]);
      // The replacement process starts a moment later: nothing of the durable is pulling meanwhile.
      await new Promise((resolve) => setTimeout(resolve, 500));
      next = await bus.consume(CONSUMERS.scoringWorker, {
        maxBatch: 10,
        handler: async (batch) => {
          for (const m of batch) {
            deliveries.push([m.seq, m.deliveryCount]);
            later.push(m);
            m.ack();
          }
        },
      });
      // Polled for at most 5 s (the ack wait is 60 s); on a timeout the assertions below show what did arrive.
      await waitFor(async () => later.length >= 4 && (await bus.pending(CONSUMERS.scoringWorker)) === 0, 'the four handed back', 5_000).catch(() => undefined);
      // Anything delivered twice would show up here too.
      await new Promise((resolve) => setTimeout(resolve, 300));
      // Each once more, as a redelivery (2): none left behind for the ack wait, none delivered again as new (1).
      expect(later.map((m) => [m.seq, m.deliveryCount])).toEqual(seqs.slice(1).map((seq) => [seq, 2]));
      expect(deliveries.filter(([, count]) => count === 1).map(([seq]) => seq)).toEqual([seqs[0]]);
      expect(await bus.pending(CONSUMERS.scoringWorker)).toBe(0);
    } finally {
      await leaving.stop();
      await next?.stop();
    }
  }, 30_000);
});
