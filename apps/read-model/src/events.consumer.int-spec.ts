import { randomUUID } from 'node:crypto';
import { jetstream, jetstreamManager, type JetStreamClient, type JetStreamManager } from '@nats-io/jetstream';
import { connect, type NatsConnection } from '@nats-io/transport-node';
import { SUBJECTS } from '@evals/contracts';
import { CONSUMERS, JetStreamBus, streamOf, subjectOf, type BusNames } from '@evals/bus';
import { createDataSource, eventSubject, migrate, RunReadModelRepository, toWire, type StoredEvent } from '@evals/persistence';
import type { DataSource } from 'typeorm';
import { createTestSchema, testBusNames, type TestSchema } from '../../../test/support/isolation';
import { testServers } from '../../../test/support/servers';
import { EventsConsumer } from './events.consumer';
import { RunProjector } from './run.projector';
import { asStored, result, RunScript } from './run-events.testing';

async function waitFor(predicate: () => boolean | Promise<boolean>, timeoutMs = 15_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await predicate())) {
    if (Date.now() > deadline) throw new Error('condition not met in time');
    await new Promise((r) => setTimeout(r, 25));
  }
}

describe('integration: read-model consumer on EVALS_EVENTS (R2, R3, R4)', () => {
  let schema: TestSchema;
  let ds: DataSource;
  let nc: NatsConnection;
  let js: JetStreamClient;
  let jsm: JetStreamManager;
  let names: BusNames;
  let consumer: EventsConsumer;
  const recorded: string[] = [];
  const repo = new RunReadModelRepository();

  const publish = (event: StoredEvent, msgId = event.metadata.message_id) =>
    js.publish(subjectOf(names, eventSubject(event.type)), JSON.stringify(toWire(event)), { msgID: msgId });
  const resultRows = async (runId: string) =>
    (await ds.query(`SELECT count(*)::int AS n FROM outbox WHERE subject = $1 AND payload->'data'->>'run_id' = $2`, [SUBJECTS.RESULT_RECORDED, runId]))[0].n;
  const idle = async () => {
    const info = await jsm.consumers.info(streamOf(names, 'EVALS_EVENTS'), CONSUMERS.readModel.durable);
    return info.num_ack_pending === 0 && info.num_pending === 0;
  };

  beforeAll(async () => {
    schema = await createTestSchema('rmconsumer');
    ds = createDataSource({ url: testServers.postgres.url, schema: schema.schema, poolSize: 4 });
    await ds.initialize();
    await migrate(ds);
    nc = await connect({ servers: testServers.nats.url });
    js = jetstream(nc);
    jsm = await jetstreamManager(nc);
    const t = testBusNames('rmc');
    names = { streamPrefix: `RMC_${t.suffix}_`, subjectPrefix: `rmc_${t.suffix}` };
    const bus = await JetStreamBus.connect(nc, names, { storage: 'memory' });
    await bus.ensureTopology();
    consumer = new EventsConsumer({
      dataSource: ds,
      bus,
      projector: new RunProjector({ uuid: () => randomUUID() }),
      onRecorded: (runIds) => recorded.push(...runIds),
      deferDelayMs: 50,
      retryDelayMs: 50,
    });
    await consumer.start();
  });

  afterAll(async () => {
    await consumer?.stop();
    for (const s of ['EVALS_INBOUND', 'EVALS_WORK', 'EVALS_EVENTS', 'EVALS_OUTBOUND'] as const) {
      await jsm?.streams.delete(streamOf(names, s)).catch(() => undefined);
    }
    await nc?.close();
    await ds?.destroy();
    await schema?.drop();
  });

  it('projects a run delivered in reverse order, acknowledges everything, records one EvalResult and wakes its waiters', async () => {
    const s = new RunScript('bus-reverse');
    const log = [
      await s.appendRun(ds, s.openedEvent()),
      await s.appendCases(ds, s.casesEvent([result('c1', 1), result('c2', 1), result('c3', 1)])),
      await s.appendRun(ds, s.sealedEvent()),
      await s.appendRun(ds, s.scoredEvent(4, 3, 3, ['c4'])),
    ];
    for (const e of [...log].reverse()) await publish(e);
    await waitFor(async () => (await ds.query(`SELECT 1 FROM eval_results WHERE run_id = 'bus-reverse'`)).length === 1);
    await waitFor(idle);
    expect(await repo.load(ds, 'bus-reverse')).toMatchObject({ status: 'completed', scored: 4, passed: 3, missing_outputs: 1 });
    expect(await resultRows('bus-reverse')).toBe(1);
    // Told once its EvalResult committed (RunProgress wakes a request of this process waiting for it).
    expect(recorded.filter((id) => id === 'bus-reverse')).toEqual(['bus-reverse']);
  });

  it('naks an event whose run.opened exists nowhere yet and applies it once the opening arrives', async () => {
    // Not in the log: only the bus knows these, and run.opened comes last.
    const s = new RunScript('bus-orphan');
    const opened = asStored(s.openedEvent(), 8_000_001, 'run-bus-orphan');
    const cases = asStored(s.casesEvent([result('c1', 1), result('c2', 0, false)]), 8_000_002, 'run-bus-orphan.cases.a');
    const scored = asStored(s.scoredEvent(4, 1, 1, ['c3', 'c4']), 8_000_003, 'run-bus-orphan', 2);
    await publish(cases);
    await publish(scored);
    const stream = streamOf(names, 'EVALS_EVENTS');
    await waitFor(async () => (await jsm.consumers.info(stream, CONSUMERS.readModel.durable)).num_redelivered > 0);
    expect(await repo.load(ds, 'bus-orphan')).toBeNull();
    await publish(opened);
    await waitFor(async () => (await repo.load(ds, 'bus-orphan'))?.status === 'completed');
    await waitFor(idle);
    expect(await repo.load(ds, 'bus-orphan')).toMatchObject({ status: 'completed', scored: 4, passed: 1, score_sum: 1 });
    expect(await resultRows('bus-orphan')).toBe(1);
  });

  it('ignores a re-published copy of every event (new Nats-Msg-Id, same event) and dead-letters bytes that are not JSON', async () => {
    const s = new RunScript('bus-repeat');
    const log = [
      await s.appendRun(ds, s.openedEvent()),
      await s.appendCases(ds, s.casesEvent([result('c1', 1), result('c2', 1), result('c3', 1), result('c4', 1)])),
      await s.appendRun(ds, s.scoredEvent(4, 4, 4)),
    ];
    for (const e of log) await publish(e);
    await waitFor(async () => (await repo.load(ds, 'bus-repeat'))?.status === 'completed');
    const doc = await repo.load(ds, 'bus-repeat');
    for (const e of log) await publish(e, randomUUID());
    const badSeq = (await js.publish(subjectOf(names, 'evals.event.run.sealed'), 'not json {', { msgID: randomUUID() })).seq;
    await waitFor(async () => (await ds.query(`SELECT 1 FROM dead_letters WHERE stream_seq = $1`, [badSeq])).length === 1);
    await waitFor(idle);
    expect(await repo.load(ds, 'bus-repeat')).toEqual(doc);
    expect(await resultRows('bus-repeat')).toBe(1);
    const [letter] = await ds.query(`SELECT subject, code, reason FROM dead_letters WHERE stream_seq = $1`, [badSeq]);
    expect(letter).toEqual({ subject: 'evals.event.run.sealed', code: 'INVALID_EVENT', reason: 'event: isObject' });
  });
});
