import { randomUUID } from 'node:crypto';
import { jetstream, jetstreamManager, type JetStreamClient, type JetStreamManager } from '@nats-io/jetstream';
import { connect, type NatsConnection } from '@nats-io/transport-node';
import type { DataSource } from 'typeorm';
import { JetStreamBus, STREAMS, streamOf, subjectOf, type BusMessage, type BusNames } from '@evals/bus';
import {
  MAX_CASES_PER_EVENT,
  MISSING_OUTPUT,
  RUN_EVENTS,
  caseOutcomesOf,
  WORK_SUBJECTS,
  detailHash,
  detailKeyId,
  encodeWork,
  runStreamId,
  type CasesScoredV3,
  type RunOpenedV1,
  type RunScoredV1,
  type ScoreWorkV1,
  type WorkItem,
} from '@evals/domain';
import { EventStore, EvidenceRepository, RunLocks, SuiteRepository, createDataSource, migrate, type NewEvent } from '@evals/persistence';
import { createTestSchema, testBusNames, type TestSchema } from '../../../test/support/isolation';
import { testServers } from '../../../test/support/servers';
import { statementsSent } from '../../../test/support/statements';
import type { BatchOutcome, ScoringService } from './scoring.service';
import { composeScoringService } from './worker.module';
import { workerSettings, type WorkerSettings } from './settings';
import { WorkConsumer } from './work-consumer';

const HMAC_SECRET = 'test-secret-0123456789abcdef0123456789';
/** D1 canary: every output carries it; it must appear in no table and no log line. */
const CANARY = `CANARY${randomUUID().replace(/-/g, '')}`;

async function waitFor<T>(probe: () => Promise<T | undefined | false> | T | undefined | false, what: string, timeoutMs = 15_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (value !== undefined && value !== false) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

jest.setTimeout(30_000);

describe('integration: scoring worker (docs/pipeline.md step 2)', () => {
  let schema: TestSchema;
  let ds: DataSource;
  let nc: NatsConnection;
  let js: JetStreamClient;
  let jsm: JetStreamManager;
  let names: BusNames;
  let bus: JetStreamBus;
  let settings: WorkerSettings;
  let consumers: WorkConsumer[] = [];
  let outcomes: BatchOutcome[] = [];
  const logLines: string[] = [];
  const store = new EventStore();
  const suites = new SuiteRepository();

  /** Per table: rows seen across the tests, and rows containing the canary (D1). */
  const canaryReport = new Map<string, { rows: number; leaks: number }>();
  /** The codes of every dead letter scanned above, across the tests. */
  const letterCodes: string[] = [];

  beforeAll(async () => {
    nc = await connect({ servers: testServers.nats.url });
    js = jetstream(nc);
    jsm = await jetstreamManager(nc);
  });

  // Each test gets its own schema and its own streams (dead letters are unique per subject and stream sequence).
  beforeEach(async () => {
    schema = await createTestSchema('worker');
    ds = createDataSource({ url: testServers.postgres.url, schema: schema.schema, poolSize: 8 });
    await ds.initialize();
    await migrate(ds);
    const t = testBusNames('w');
    names = { streamPrefix: `W_${t.suffix}_`, subjectPrefix: `w_${t.suffix}` };
    bus = await JetStreamBus.connect(nc, names, { storage: 'memory' });
    await bus.ensureTopology();
    settings = workerSettings({ names, maxBatch: 50, hmacSecret: HMAC_SECRET, retryDelayMs: 50, sealWaitMs: 50, deadLetterAfter: 3 });
    consumers = [];
    outcomes = [];
  });

  afterEach(async () => {
    await Promise.all(consumers.map((c) => c.stop()));
    for (const spec of STREAMS) await jsm.streams.delete(streamOf(names, spec.name)).catch(() => undefined);
    for (const table of ['events', 'outbox', 'evidence', 'dead_letters']) {
      const [{ total, leaks }] = await ds.query(`SELECT count(*)::int AS total, count(*) FILTER (WHERE t::text LIKE $1)::int AS leaks FROM ${table} t`, [`%${CANARY}%`]);
      const seen = canaryReport.get(table) ?? { rows: 0, leaks: 0 };
      canaryReport.set(table, { rows: seen.rows + total, leaks: seen.leaks + leaks });
    }
    letterCodes.push(...(await ds.query(`SELECT code FROM dead_letters`)).map((r: { code: string }) => r.code));
    await ds.destroy();
    await schema.drop();
  });

  afterAll(async () => {
    await nc?.close();
  });

  // --- helpers ---------------------------------------------------------------------------------------------

  function newService(): ScoringService {
    return composeScoringService(ds, bus, settings, { now: () => new Date() }, { uuid: () => randomUUID() });
  }

  async function startConsumer(service = newService(), onBatch?: (o: BatchOutcome) => void): Promise<WorkConsumer> {
    const logger = { event: (level: string, msg: string, fields: object = {}) => void logLines.push(JSON.stringify({ level, msg, ...fields })) };
    const consumer = new WorkConsumer(bus, settings, service, logger, {
      onBatch: (o) => {
        outcomes.push(o);
        onBatch?.(o);
      },
    });
    consumers.push(consumer);
    await consumer.start();
    return consumer;
  }

  /** A stored suite version of `caseCount` cases c1..cN, scored by `contains: ok`. */
  async function createSuite(caseCount: number): Promise<{ key: string; caseIds: string[] }> {
    const key = `suite-${randomUUID().slice(0, 8)}`;
    const caseIds = Array.from({ length: caseCount }, (_, i) => `c${i + 1}`);
    await suites.insert(ds, {
      suite_key: key,
      version: 1,
      content_hash: 'a'.repeat(64),
      description: null,
      default_scorer: { type: 'contains', value: 'ok' },
      pass_threshold: 0.5,
      regression_threshold: 0.1,
      golden_fixtures: false,
      case_count: caseCount,
      cases: caseIds.map((case_id) => ({ case_id, input: null, expected: null, scorer: null, tags: [] })),
    });
    return { key, caseIds };
  }

  function event(type: string, data: object): NewEvent {
    const id = randomUUID();
    return { type, version: 1, data, metadata: { message_id: id, correlation_id: id, causation_id: id, occurred_at: new Date().toISOString() } };
  }

  async function openRun(suiteKey: string, caseCount: number, runId = `run-${randomUUID()}`, sealed = true, extra: Partial<RunOpenedV1> = {}): Promise<string> {
    const opened: RunOpenedV1 = {
      run_id: runId,
      suite_key: suiteKey,
      suite_version: 1,
      suite_content_hash: 'a'.repeat(64),
      pass_threshold: 0.5,
      regression_threshold: 0.1,
      subject_kind: 'agent',
      subject_id: 'agent-1',
      variant: null,
      baseline_run_id: null,
      source: 'ci',
      case_count: caseCount,
      scorer_versions: { contains: '1.0.0' },
      ...extra,
    };
    const events = [event(RUN_EVENTS.opened, opened)];
    if (sealed) events.push(event(RUN_EVENTS.sealed, { run_id: runId }));
    await store.append(ds, runStreamId(runId), 0, events);
    return runId;
  }

  /** Publishes a work message; returns its message id (the Nats-Msg-Id is separate, so a copy can be re-sent). */
  async function publishScore(runId: string, items: WorkItem[], messageId = randomUUID(), natsId = randomUUID(), data: ScoreWorkV1 = { run_id: runId, items }): Promise<{ messageId: string; payload: string; seq: number }> {
    const payload = encodeWork({
      type: WORK_SUBJECTS.score,
      version: 1,
      data,
      metadata: { message_id: messageId, correlation_id: `corr-${runId}`, causation_id: messageId, occurred_at: new Date().toISOString() },
    });
    const ack = await js.publish(subjectOf(names, WORK_SUBJECTS.score), payload, { msgID: natsId });
    return { messageId, payload, seq: ack.seq };
  }

  async function publishSeal(runId: string): Promise<string> {
    const messageId = randomUUID();
    const payload = encodeWork({
      type: WORK_SUBJECTS.seal,
      version: 1,
      data: { run_id: runId },
      metadata: { message_id: messageId, correlation_id: `corr-${runId}`, causation_id: messageId, occurred_at: new Date().toISOString() },
    });
    await js.publish(subjectOf(names, WORK_SUBJECTS.seal), payload, { msgID: randomUUID() });
    return messageId;
  }

  async function evidenceOf(runId: string): Promise<Array<{ case_id: string; passed: boolean; score: number; label: string; detail_hash: string | null; output_chars: number | null }>> {
    const rows = await ds.query(`SELECT case_id, passed, score, label, detail_hash, output_chars FROM evidence WHERE run_id = $1 ORDER BY case_id`, [runId]);
    return rows.map((r: any) => ({ ...r, score: Number(r.score) }));
  }

  async function casesScored(runId: string): Promise<Array<{ stream_id: string; version: number; data: CasesScoredV3; metadata: any }>> {
    return ds.query(`SELECT stream_id, version, data, metadata FROM events WHERE type = $1 AND data->>'run_id' = $2 ORDER BY position`, [RUN_EVENTS.casesScored, runId]);
  }

  async function runScored(runId: string): Promise<Array<{ stream_version: number; data: RunScoredV1; metadata: any }>> {
    return ds.query(`SELECT stream_version, data, metadata FROM events WHERE stream_id = $1 AND type = $2`, [runStreamId(runId), RUN_EVENTS.scored]);
  }

  async function workStreamEmpty(): Promise<boolean> {
    return (await jsm.streams.info(streamOf(names, 'EVALS_WORK'))).state.messages === 0;
  }

  const handled = () => outcomes.reduce((n, o) => n + o.messages, 0);

  async function lettersOf(code: string): Promise<Array<{ code: string; reason: string; message_id: string; subject: string; stream_seq: number }>> {
    const rows = await ds.query(`SELECT code, reason, message_id, subject, stream_seq FROM dead_letters WHERE code = $1 ORDER BY id`, [code]);
    return rows.map((r: any) => ({ ...r, stream_seq: Number(r.stream_seq) }));
  }

  /** Every message handed out so far is acknowledged and none is waiting: the worker is done. */
  async function drained(): Promise<boolean> {
    if (!(await workStreamEmpty())) return false;
    const info = await jsm.consumers.info(settings.stream, settings.durable);
    return info.num_ack_pending === 0 && info.num_pending === 0;
  }

  // --- tests -----------------------------------------------------------------------------------------------

  it('R3/D2: scores a work message into evidence and one cases.scored event; unknown case ids are dead-lettered; first of a repeated case wins', async () => {
    const { key } = await createSuite(5);
    const runId = await openRun(key, 5);
    await startConsumer();
    const items = [
      { case_id: 'c1', output: `ok ${CANARY}` },
      { case_id: 'c2', output: `nope ${CANARY}` },
      { case_id: 'c1', output: `nope again ${CANARY}` },
      { case_id: 'zz-unknown', output: `ok ${CANARY}` },
      { case_id: 'c3', output: 'ok' },
    ];
    const sent = await publishScore(runId, items);

    const rows = await waitFor(async () => {
      const r = await evidenceOf(runId);
      return r.length === 3 ? r : undefined;
    }, 'evidence rows');
    expect(rows.map((r) => [r.case_id, r.passed, r.score, r.label])).toEqual([
      ['c1', true, 1, 'contains_all'],
      ['c2', false, 0, 'missing_value'],
      ['c3', true, 1, 'contains_all'],
    ]);
    expect(rows[0].detail_hash).toBe(detailHash(HMAC_SECRET, `ok ${CANARY}`));
    expect(rows[0].output_chars).toBe(`ok ${CANARY}`.length);

    const events = await casesScored(runId);
    expect(events).toHaveLength(1);
    expect(events[0].stream_id).toBe(`${runStreamId(runId)}.cases.${sent.messageId}`);
    // v3: the counts of the rows just inserted and their results, columnar - never the output (issue 27, D1).
    expect(events[0].version).toBe(3);
    expect(events[0].data).toMatchObject({ run_id: runId, n: 3, passed: 2, score_sum: 2, case_ids: ['c1', 'c2', 'c3'] });
    expect(caseOutcomesOf({ type: 'cases.scored', version: 3, data: events[0].data }, '').map((o) => [o.case_id, o.passed, o.score, o.label])).toEqual(
      rows.map((r) => [r.case_id, r.passed, r.score, r.label]),
    );
    expect(JSON.stringify(events)).not.toContain(CANARY);
    expect(events[0].metadata).toMatchObject({ causation_id: sent.messageId, correlation_id: `corr-${runId}` });
    const [{ n: outboxRows }] = await ds.query(`SELECT count(*)::int AS n FROM outbox WHERE message_id = $1::uuid AND subject = 'evals.event.cases.scored'`, [events[0].metadata.message_id]);
    expect(outboxRows).toBe(1);

    const letters = await waitFor(async () => {
      const l = await ds.query(`SELECT code, reason, message_id, subject FROM dead_letters WHERE message_id = $1`, [sent.messageId]);
      return l.length > 0 ? l : undefined;
    }, 'UNKNOWN_CASE dead letter');
    expect(letters).toEqual([expect.objectContaining({ code: 'UNKNOWN_CASE', subject: WORK_SUBJECTS.score })]);
    expect(letters[0].reason).toBe(`data.items[].case_id: 1 not a case of suite ${key} v1: zz-unknown`);
    await waitFor(workStreamEmpty, 'work stream drained');
  });

  it('D2: takes the keyed hashes a work message carries only under its own key id, for rows and repeats alike; otherwise hashes the output itself', async () => {
    const { key } = await createSuite(4);
    const runId = await openRun(key, 4);
    await startConsumer();
    const output = `ok ${CANARY}`;
    // Stands in for the ingestion's hash: only a hash taken from the message can end up in the evidence.
    const carried = 'a'.repeat(64);
    const items = [
      { case_id: 'c1', output, detail_hash: carried },
      // A repeat compared by the carried hash: the same as the row's, so a redelivery, not DUPLICATE_OUTPUT.
      { case_id: 'c1', output, detail_hash: carried },
      { case_id: 'c2', output },
    ];
    await publishScore(runId, items, randomUUID(), randomUUID(), { run_id: runId, detail_key: detailKeyId(HMAC_SECRET), items });
    const other = [{ case_id: 'c3', output, detail_hash: 'b'.repeat(64) }];
    await publishScore(runId, other, randomUUID(), randomUUID(), { run_id: runId, detail_key: detailKeyId(`${HMAC_SECRET}-rotated`), items: other });
    await publishScore(runId, [{ case_id: 'c4', output }]);

    const rows = await waitFor(async () => {
      const r = await evidenceOf(runId);
      return r.length === 4 ? r : undefined;
    }, 'evidence rows');
    const own = detailHash(HMAC_SECRET, output);
    expect(rows.map((r) => [r.case_id, r.detail_hash])).toEqual([
      ['c1', carried],
      ['c2', own],
      ['c3', own],
      ['c4', own],
    ]);
    await waitFor(drained, 'worker drained');
    expect(await ds.query(`SELECT code FROM dead_letters`)).toEqual([]);
  });

  it('a redelivered work message (same message, new Nats-Msg-Id) inserts nothing and emits no event', async () => {
    const { key } = await createSuite(3);
    const runId = await openRun(key, 3);
    await startConsumer();
    const items = [
      { case_id: 'c1', output: `ok ${CANARY}` },
      { case_id: 'c2', output: `no ${CANARY}` },
    ];
    const first = await publishScore(runId, items);
    await waitFor(async () => (await casesScored(runId)).length === 1, 'first cases.scored');
    const before = await evidenceOf(runId);

    await js.publish(subjectOf(names, WORK_SUBJECTS.score), first.payload, { msgID: randomUUID() });
    await waitFor(() => handled() >= 2, 'the copy handled');
    await waitFor(workStreamEmpty, 'work stream drained');

    expect(await evidenceOf(runId)).toEqual(before);
    expect(await casesScored(runId)).toHaveLength(1);
    expect(outcomes.reduce((n, o) => n + o.duplicates, 0)).toBe(2);
  });

  it(`a large batch is announced in cases.scored v3 events of at most ${MAX_CASES_PER_EVENT} cases on its own stream, a few bytes per case`, async () => {
    const total = 2_500;
    const { key, caseIds } = await createSuite(total);
    const runId = await openRun(key, total);
    await startConsumer();
    const sent = await publishScore(runId, caseIds.map((case_id) => ({ case_id, output: `ok ${CANARY}` })));
    const events = await waitFor(async () => {
      const e = await casesScored(runId);
      return e.length === 2 ? e : undefined;
    }, 'the cases.scored events');
    expect(events.map((e) => e.stream_id)).toEqual([`${runStreamId(runId)}.cases.${sent.messageId}`, `${runStreamId(runId)}.cases.${sent.messageId}`]);
    expect(events.map((e) => [e.version, e.data.n, e.data.passed])).toEqual([
      [3, MAX_CASES_PER_EVENT, MAX_CASES_PER_EVENT],
      [3, total - MAX_CASES_PER_EVENT, total - MAX_CASES_PER_EVENT],
    ]);
    expect(events.flatMap((e) => e.data.case_ids)).toEqual([...caseIds].sort());
    const [{ biggest, total_bytes }] = await ds.query(
      `SELECT max(octet_length(payload::text))::int AS biggest, sum(octet_length(payload::text))::int AS total_bytes FROM outbox WHERE subject = 'evals.event.cases.scored' AND payload->'data'->>'run_id' = $1`,
      [runId],
    );
    // Ids of 2 to 5 characters: the whole announcement stays under 16 bytes a case (v1 was ~150).
    expect(total_bytes / total).toBeLessThan(16);
    expect(biggest).toBeLessThan(32_768);
  });

  it('R1/R2: a seal waits while earlier work is unacknowledged, then writes missing_output evidence and run.scored', async () => {
    const { key, caseIds } = await createSuite(4);
    const runId = await openRun(key, 4);
    await publishScore(runId, [
      { case_id: 'c1', output: `ok ${CANARY}` },
      { case_id: 'c2', output: `bad ${CANARY}` },
    ]);
    // Another "process" of the same durable holds the score message, un-acked.
    const raw = await js.consumers.get(settings.stream, settings.durable);
    const held = await raw.next({ expires: 5_000 });
    expect(held).not.toBeNull();
    const sealId = await publishSeal(runId);

    await startConsumer();
    await waitFor(() => outcomes.reduce((n, o) => n + o.sealsWaiting, 0) >= 3, 'the seal to wait three times');
    expect(await runScored(runId)).toHaveLength(0);
    expect(await evidenceOf(runId)).toHaveLength(0);

    // The holder gives it back: the worker scores it, and only then the seal completes.
    held!.nak();
    const [scored] = await waitFor(async () => {
      const s = await runScored(runId);
      return s.length === 1 ? s : undefined;
    }, 'run.scored');
    expect(scored.stream_version).toBe(3);
    expect(scored.data).toEqual({ run_id: runId, n: 4, passed: 1, score_sum: 1, missing_count: 2, missing_case_ids: ['c3', 'c4'] });
    expect(scored.metadata).toMatchObject({ causation_id: sealId, correlation_id: `corr-${runId}` });
    const rows = await evidenceOf(runId);
    expect(rows.map((r) => r.case_id)).toEqual(caseIds);
    expect(rows.filter((r) => r.label === MISSING_OUTPUT).map((r) => [r.case_id, r.passed, r.score, r.detail_hash, r.output_chars])).toEqual([
      ['c3', false, 0, null, null],
      ['c4', false, 0, null, null],
    ]);
    expect(rows.find((r) => r.case_id === 'c1')).toMatchObject({ passed: true, label: 'contains_all' });
    // The seal's rows cross like the others: one cases.scored v3 on the run's `.missing` stream (issue 27).
    const missing = (await casesScored(runId)).filter((e) => e.stream_id === `${runStreamId(runId)}.missing`);
    expect(missing.map((e) => [e.data.case_ids, e.data.labels, e.data.passed])).toEqual([[['c3', 'c4'], [MISSING_OUTPUT], 0]]);
    // Its waits were redeliveries beyond deadLetterAfter (3), yet never counted toward dead-lettering.
    expect(await ds.query(`SELECT code FROM dead_letters`)).toEqual([]);

    // A repeated seal finds the run scored; a late output cannot change the published aggregate.
    const eventsBefore = (await casesScored(runId)).length;
    await publishSeal(runId);
    await publishScore(runId, [{ case_id: 'c3', output: `ok ${CANARY}` }]);
    await waitFor(workStreamEmpty, 'work stream drained');
    await waitFor(async () => (await jsm.consumers.info(settings.stream, settings.durable)).num_ack_pending === 0, 'all settled');
    expect(await runScored(runId)).toHaveLength(1);
    expect(await casesScored(runId)).toHaveLength(eventsBefore);
    expect((await evidenceOf(runId)).find((r) => r.case_id === 'c3')).toMatchObject({ label: MISSING_OUTPUT });
  });

  it('issue 28: the seals of one micro-batch are handled together, with no ack-floor request and one transaction; a seal behind work handed back waits, one before it does not', async () => {
    const { key } = await createSuite(3);
    // Counts the consumer-info requests the seals make (one each, one after the other, before issue 28).
    let floorRequests = 0;
    const counting = new Proxy(bus, {
      get(target, prop, receiver) {
        if (prop === 'allAcknowledgedBefore') return (...args: Parameters<JetStreamBus['allAcknowledgedBefore']>) => (floorRequests++, target.allAcknowledgedBefore(...args));
        const value = Reflect.get(target, prop, receiver);
        return typeof value === 'function' ? value.bind(target) : value;
      },
    });
    const together = await Promise.all(Array.from({ length: 6 }, () => openRun(key, 3)));
    for (const runId of together) await publishScore(runId, [{ case_id: 'c1', output: 'ok' }]);
    for (const runId of together) await publishSeal(runId);
    await startConsumer(composeScoringService(ds, counting, settings, { now: () => new Date() }, { uuid: () => randomUUID() }));
    await waitFor(async () => ((await Promise.all(together.map(runScored))).every((s) => s.length === 1) ? true : undefined), 'the six runs scored');
    const sealingBatch = outcomes.find((o) => o.sealedRunIds.length > 0)!;
    expect([...sealingBatch.sealedRunIds].sort()).toEqual([...together].sort());
    // This process handled every message before the seals itself (HandledLedger): the server is asked nothing.
    expect(floorRequests).toBe(0);
    // ...and sealed in one transaction (RunSealer's group): the six run.scored rows share one transaction id.
    const [{ n: sealTransactions }] = await ds.query(`SELECT count(DISTINCT xmin::text)::int AS n FROM events WHERE type = 'run.scored' AND stream_id = ANY($1::text[])`, [together.map(runStreamId)]);
    expect(sealTransactions).toBe(1);
    for (const runId of together) expect((await runScored(runId))[0].data).toMatchObject({ n: 3, passed: 1, missing_count: 2 });

    // Behind a work message handed back (its run not opened yet), a seal waits; the seal before it does not.
    await Promise.all(consumers.map((c) => c.stop()));
    consumers = [];
    outcomes = [];
    const before = await openRun(key, 3);
    const behind = await openRun(key, 3);
    const later = `run-${randomUUID()}`;
    await publishScore(before, [{ case_id: 'c1', output: 'ok' }]);
    await publishSeal(before);
    await publishScore(later, [{ case_id: 'c1', output: 'ok' }]);
    await publishScore(behind, [{ case_id: 'c2', output: 'ok' }]);
    await publishSeal(behind);
    await startConsumer();
    await waitFor(async () => ((await runScored(before)).length === 1 ? true : undefined), 'the seal before the handed-back work');
    // The batch's outcome is reported after its seal's acknowledgement is confirmed, which follows the commit.
    await waitFor(() => outcomes.length > 0, 'the batch outcome');
    expect(outcomes[0]).toMatchObject({ sealedRunIds: [before], sealsWaiting: 1 });
    expect(await runScored(behind)).toHaveLength(0);
    // Once the late run is opened, its work is scored, and the waiting seal completes with the other run's evidence.
    await openRun(key, 3, later);
    await waitFor(async () => ((await runScored(behind)).length === 1 ? true : undefined), 'the seal behind it');
    expect((await runScored(behind))[0].data).toMatchObject({ n: 3, passed: 1, missing_count: 2 });
    expect(await ds.query(`SELECT code FROM dead_letters`)).toEqual([]);
  });

  it('issue 28: a seal handed back to wait does not hold up the seals behind it: another run\'s seal asks the floor only about what this process did not handle', async () => {
    const { key } = await createSuite(2);
    const [a, b] = await Promise.all([openRun(key, 2), openRun(key, 2)]);
    // Run a's output is held by another "process" of the durable; run a's seal must wait for it.
    await publishScore(a, [{ case_id: 'c1', output: 'ok' }]);
    const raw = await js.consumers.get(settings.stream, settings.durable);
    const held = await raw.next({ expires: 5_000 });
    expect(held).not.toBeNull();
    await publishSeal(a);
    // Handed back for a minute: the server's ack floor cannot pass a's seal until then.
    const patient = workerSettings({ names, maxBatch: 50, hmacSecret: HMAC_SECRET, retryDelayMs: 50, sealWaitMs: 60_000, deadLetterAfter: 3 });
    await startConsumer(composeScoringService(ds, bus, patient, { now: () => new Date() }, { uuid: () => randomUUID() }));
    await waitFor(() => outcomes.some((o) => o.sealsWaiting > 0), 'run a\'s seal to wait');

    // The other process finishes a's output; run b's output and seal come after a's waiting seal.
    held!.ack();
    await publishScore(b, [{ case_id: 'c1', output: 'ok' }]);
    await publishSeal(b);
    // Before issue 28's ledger b waited for a's seal's redelivery, a minute away.
    const [scored] = await waitFor(async () => {
      const s = await runScored(b);
      return s.length === 1 ? s : undefined;
    }, 'run b scored', 10_000);
    expect(scored.data).toMatchObject({ run_id: b, n: 2, passed: 1, missing_count: 1 });
    expect(await runScored(a)).toHaveLength(0);
    expect(outcomes.reduce((n, o) => n + o.sealsWaiting, 0)).toBe(1);
  });

  it('issue 28: the score messages of one micro-batch insert their runs\' evidence in one statement and append every run\'s cases.scored in one', async () => {
    const { key, caseIds } = await createSuite(70);
    const runs = await Promise.all(Array.from({ length: 5 }, () => openRun(key, 70, undefined, false)));
    // 70 cases a run: above COPY_MIN_ROWS, so a statement per run would have been a COPY each (and its savepoint).
    for (const runId of runs) await publishScore(runId, caseIds.map((case_id) => ({ case_id, output: 'ok' })));
    const { sent } = await statementsSent(async () => {
      await startConsumer();
      await waitFor(async () => ((await Promise.all(runs.map(casesScored))).every((e) => e.length === 1) ? true : undefined), 'every run announced');
    });
    const scoring = outcomes.filter((o) => o.inserted > 0);
    expect(scoring.some((o) => o.messages > 1)).toBe(true);
    const evidenceWrites = sent.filter((q) => /^\s*(COPY evidence|INSERT INTO evidence)/.test(q));
    const appends = sent.filter((q) => /INSERT INTO events/.test(q));
    expect(evidenceWrites).toHaveLength(scoring.length);
    expect(appends).toHaveLength(scoring.length);
    for (const runId of runs) {
      expect(await evidenceOf(runId)).toHaveLength(70);
      const [announced] = await casesScored(runId);
      expect(announced.stream_id.startsWith(`${runStreamId(runId)}.cases.`)).toBe(true);
      expect(caseOutcomesOf({ type: 'cases.scored', version: 3, data: announced.data }, '').map((o) => o.case_id).sort()).toEqual([...caseIds].sort());
    }
  });

  it('issue 28: the seal of a group of runs reads their evidence once; every aggregate is the one a query after the seal counts', async () => {
    const { key } = await createSuite(7);
    const complete = await openRun(key, 7);
    const missing = await openRun(key, 7);
    // Scores no sum of which is a round decimal: the seal's sum must be PostgreSQL's, bit for bit.
    const fractional = await openRun(key, 7);
    const monitor = await openRun(key, 7, undefined, true, { source: 'session_sample' });
    const row = (runId: string, caseId: string, score: number) => ({
      run_id: runId,
      case_id: caseId,
      scorer: 'contains',
      scorer_version: '1.0.0',
      score,
      passed: score >= 0.5,
      label: 'scored',
      detail_hash: 'a'.repeat(64),
      output_chars: 2,
      scored_at: new Date().toISOString(),
    });
    // No scorer of this suite gives these scores: written directly, and one case of each run scored by a
    // message of the seals' batch (the seals of one batch are sealed in one group, as in the benchmark).
    await new EvidenceRepository().insertBatch(ds, [
      ...['c1', 'c2', 'c3', 'c4', 'c5', 'c6'].map((c) => row(complete, c, 1)),
      row(missing, 'c5', 0),
      ...[0.1, 0.2, 0.3, 1 / 3, 0.7].map((score, i) => row(fractional, `c${i + 1}`, score)),
      ...['c1@s1', 'c3@s2', 'c3@s3'].map((c, i) => row(monitor, c, [0.9, 0.15, 0.6][i])),
    ]);
    const scoredCase = new Map([
      [complete, 'c7'],
      [missing, 'c2'],
      [fractional, 'c6'],
      [monitor, 'c2@s4'],
    ]);
    const group = [...scoredCase.keys()];
    for (const [runId, caseId] of scoredCase) await publishScore(runId, [{ case_id: caseId, output: 'ok' }]);
    for (const runId of group) await publishSeal(runId);
    const { sent, clients } = await statementsSent(async () => {
      await startConsumer();
      await waitFor(async () => ((await Promise.all(group.map(runScored))).every((s) => s.length === 1) ? true : undefined), 'the group scored');
    });
    const [{ n: sealTransactions }] = await ds.query(`SELECT count(DISTINCT xmin::text)::int AS n FROM events WHERE type = 'run.scored' AND stream_id = ANY($1::text[])`, [group.map(runStreamId)]);
    expect(sealTransactions).toBe(1);
    // The seal's transaction, on its connection: the exclusive lock, the streams, the evidence - once, case
    // ids and aggregates together, where a query of each read the same rows twice - the missing rows, the append.
    const lock = sent.findIndex((q) => q.includes('pg_advisory_xact_lock('));
    const commit = sent.findIndex((q, i) => i > lock && clients[i] === clients[lock] && q === 'COMMIT');
    const seal = sent.slice(lock, commit).filter((_, i) => clients[lock + i] === clients[lock]);
    const kind = (q: string) => /^\s*(SELECT pg_advisory_xact_lock\(|SELECT [^]* FROM events WHERE stream_id = ANY|SELECT [^]* FROM evidence|INSERT INTO evidence|WITH inserted AS \(\s*INSERT INTO events)/.exec(q)?.[1].replace(/\s+/g, ' ') ?? q;
    expect(seal.map(kind)).toEqual([
      'SELECT pg_advisory_xact_lock(',
      expect.stringMatching(/FROM events WHERE stream_id = ANY$/),
      expect.stringMatching(/FROM evidence$/),
      'INSERT INTO evidence',
      'WITH inserted AS ( INSERT INTO events',
    ]);
    expect(sent.filter((q) => /\bFROM evidence\b/.test(q))).toHaveLength(1);

    const scored = new Map(await Promise.all(group.map(async (runId) => [runId, (await runScored(runId))[0].data] as const)));
    // Each is the aggregate of the run's evidence as it stands after the seal, its missing_output rows counted.
    for (const runId of group) {
      const [after] = await ds.query(
        `SELECT count(*)::int AS n, count(*) FILTER (WHERE passed)::int AS passed, coalesce(sum(score), 0)::float8 AS score_sum FROM evidence WHERE run_id = $1`,
        [runId],
      );
      const { n, passed, score_sum } = scored.get(runId)!;
      expect({ n, passed, score_sum }).toEqual(after);
    }
    expect(scored.get(complete)).toEqual({ run_id: complete, n: 7, passed: 7, score_sum: 7, missing_count: 0, missing_case_ids: [] });
    expect(scored.get(missing)).toEqual({ run_id: missing, n: 7, passed: 1, score_sum: 1, missing_count: 5, missing_case_ids: ['c1', 'c3', 'c4', 'c6', 'c7'] });
    expect(scored.get(fractional)).toMatchObject({ n: 7, passed: 2, missing_count: 1, missing_case_ids: ['c7'] });
    expect(scored.get(fractional)!.score_sum).toBeCloseTo(2.6333333333, 9);
    expect(scored.get(monitor)).toMatchObject({ n: 4, passed: 3, missing_count: 0, missing_case_ids: [] });
    expect(scored.get(monitor)!.score_sum).toBeCloseTo(2.65, 12);
  });

  it('dead-letters undecodable work with its reason (never the payload) and goes on', async () => {
    const { key } = await createSuite(2);
    const runId = await openRun(key, 2);
    await startConsumer();
    const subject = subjectOf(names, WORK_SUBJECTS.score);
    await js.publish(subject, `{"not json ${CANARY}`, { msgID: 'bad-json' });
    await js.publish(
      subject,
      JSON.stringify({ schema: 'evals.work.score.v1', type: WORK_SUBJECTS.score, version: 1, data: { run_id: runId, items: [{ case_id: 'c1', output: 42 }] }, metadata: { message_id: 'm-bad-output' } }),
      { msgID: 'bad-output' },
    );
    await js.publish(
      subject,
      JSON.stringify({ schema: 'evals.work.seal.v1', type: WORK_SUBJECTS.seal, version: 1, data: { run_id: runId }, metadata: { message_id: 'm-wrong-subject' } }),
      { msgID: 'wrong-subject' },
    );
    await publishScore(runId, [{ case_id: 'c1', output: `ok ${CANARY}` }]);

    await waitFor(async () => (await evidenceOf(runId)).length === 1, 'the valid message scored');
    const letters = await waitFor(async () => {
      const l = await ds.query(`SELECT code, reason, message_id, subject, stream_seq FROM dead_letters WHERE message_id = ANY($1) ORDER BY stream_seq`, [['bad-json', 'bad-output', 'wrong-subject']]);
      return l.length === 3 ? l : undefined;
    }, 'three dead letters');
    expect(letters.map((l: any) => [l.code, l.reason, l.subject])).toEqual([
      ['INVALID_WORK', 'malformed JSON', WORK_SUBJECTS.score],
      ['INVALID_WORK', 'data.items[0].output: not a string', WORK_SUBJECTS.score],
      ['INVALID_WORK', 'type: does not match the subject', WORK_SUBJECTS.score],
    ]);
    await waitFor(workStreamEmpty, 'work stream drained (dead letters terminated)');
  });

  it('an unknown run is retried (scored once it is opened) and dead-lettered UNKNOWN_RUN after deadLetterAfter deliveries', async () => {
    const { key } = await createSuite(2);
    await startConsumer();
    const lateRun = `run-${randomUUID()}`;
    const neverRun = `run-${randomUUID()}`;
    const never = await publishScore(neverRun, [{ case_id: 'c1', output: `ok ${CANARY}` }]);
    await publishScore(lateRun, [{ case_id: 'c1', output: `ok ${CANARY}` }]);
    await waitFor(() => outcomes.some((o) => o.retried > 0), 'a retry');
    await openRun(key, 2, lateRun);
    await waitFor(async () => (await evidenceOf(lateRun)).length === 1, 'the late-opened run scored');

    const [letter] = await waitFor(async () => {
      const l = await ds.query(`SELECT code, reason, stream_seq FROM dead_letters WHERE code = 'UNKNOWN_RUN' AND stream_seq = $1`, [never.seq]);
      return l.length === 1 ? l : undefined;
    }, 'UNKNOWN_RUN dead letter');
    expect(letter.reason).toContain(neverRun);
    expect(letter.reason).toContain(`after ${settings.deadLetterAfter} deliveries`);
    await waitFor(workStreamEmpty, 'work stream drained');
    expect(await evidenceOf(neverRun)).toHaveLength(0);
  });

  it('two workers on one durable score 2 000 cases in 20 messages (sent twice) into exactly 2 000 evidence rows', async () => {
    const total = 2_000;
    const { key, caseIds } = await createSuite(total);
    const runId = await openRun(key, total);
    settings = { ...settings, maxBatch: 4 };
    const payloads: string[] = [];
    for (let m = 0; m < 20; m++) {
      const items = caseIds.slice(m * 100, (m + 1) * 100).map((case_id, i) => ({ case_id, output: i % 2 === 0 ? `ok ${CANARY}` : `no ${CANARY}` }));
      payloads.push((await publishScore(runId, items)).payload);
    }
    // Every message again (a redelivery storm), so the two workers race on the same cases.
    for (const p of payloads) await js.publish(subjectOf(names, WORK_SUBJECTS.score), p, { msgID: randomUUID() });
    await publishSeal(runId);
    const perWorker = [0, 0];
    await Promise.all([startConsumer(newService(), (o) => (perWorker[0] += o.messages)), startConsumer(newService(), (o) => (perWorker[1] += o.messages))]);

    const [scored] = await waitFor(async () => {
      const s = await runScored(runId);
      return s.length === 1 ? s : undefined;
    }, 'run.scored', 60_000);
    const [{ n }] = await ds.query(`SELECT count(*)::int AS n FROM evidence WHERE run_id = $1`, [runId]);
    expect(n).toBe(total);
    expect(scored.data).toMatchObject({ n: total, passed: total / 2, score_sum: total / 2, missing_case_ids: [] });
    // Every case announced exactly once across both workers: the counts add up to the run, no more.
    const announced = (await casesScored(runId)).reduce((sum, e) => sum + e.data.n, 0);
    expect(announced).toBe(total);
    await waitFor(workStreamEmpty, 'work stream drained');
    // Both workers took part (each holds at most 16 messages at a time, of 41).
    expect(perWorker[0]).toBeGreaterThan(0);
    expect(perWorker[1]).toBeGreaterThan(0);
  }, 90_000);

  // --- a second output for a case (issue 12): dead-lettered by content, a redelivery stays silent -------------

  it('the same work message delivered twice, and another message with the identical output: one evidence row per case, no dead letter', async () => {
    const { key } = await createSuite(3);
    const runId = await openRun(key, 3);
    await startConsumer();
    const first = await publishScore(runId, [
      { case_id: 'c1', output: `ok ${CANARY}` },
      { case_id: 'c2', output: `no ${CANARY}` },
    ]);
    await waitFor(async () => (await evidenceOf(runId)).length === 2, 'first scored');
    // At-least-once: the very same message again, then another message (its own id) with the same output.
    await js.publish(subjectOf(names, WORK_SUBJECTS.score), first.payload, { msgID: randomUUID() });
    await publishScore(runId, [{ case_id: 'c1', output: `ok ${CANARY}` }]);
    await waitFor(() => handled() >= 3, 'the copies handled');
    await waitFor(drained, 'work drained');

    const rows = await evidenceOf(runId);
    expect(rows.map((r) => [r.case_id, r.detail_hash])).toEqual([
      ['c1', detailHash(HMAC_SECRET, `ok ${CANARY}`)],
      ['c2', detailHash(HMAC_SECRET, `no ${CANARY}`)],
    ]);
    expect(await ds.query(`SELECT code FROM dead_letters`)).toEqual([]);
    expect(await casesScored(runId)).toHaveLength(1);
    expect(outcomes.reduce((n, o) => n + o.duplicates, 0)).toBe(3);
  });

  it('DUPLICATE_OUTPUT: a different second output for a case, in one batch or after the first was stored, is dead-lettered naming run and case; the first stays; the rest is scored', async () => {
    const { key } = await createSuite(4);
    const runId = await openRun(key, 4);
    // Both in one batch (published before the worker starts): the earlier by stream order wins.
    await publishScore(runId, [{ case_id: 'c1', output: `ok first ${CANARY}` }]);
    const b = await publishScore(runId, [
      { case_id: 'c2', output: `ok ${CANARY}` },
      { case_id: 'c1', output: `no, second ${CANARY}` },
    ]);
    await startConsumer();
    await waitFor(async () => (await lettersOf('DUPLICATE_OUTPUT')).length === 1, 'the in-batch DUPLICATE_OUTPUT');
    // After the first was stored: another message with a third output for c1 (and a new case, c3).
    const c = await publishScore(runId, [
      { case_id: 'c3', output: `ok ${CANARY}` },
      { case_id: 'c1', output: `third ${CANARY}` },
    ]);
    await waitFor(async () => (await lettersOf('DUPLICATE_OUTPUT')).length === 2, 'the stored-row DUPLICATE_OUTPUT');
    await waitFor(drained, 'work drained');

    const rows = await evidenceOf(runId);
    expect(rows.map((r) => [r.case_id, r.detail_hash])).toEqual([
      ['c1', detailHash(HMAC_SECRET, `ok first ${CANARY}`)],
      ['c2', detailHash(HMAC_SECRET, `ok ${CANARY}`)],
      ['c3', detailHash(HMAC_SECRET, `ok ${CANARY}`)],
    ]);
    const letters = await lettersOf('DUPLICATE_OUTPUT');
    expect(letters.map((l) => [l.message_id, l.subject, l.stream_seq, l.reason])).toEqual([
      [b.messageId, WORK_SUBJECTS.score, b.seq, `data.items[].case_id: run ${runId} already has another output for 1: c1`],
      [c.messageId, WORK_SUBJECTS.score, c.seq, `data.items[].case_id: run ${runId} already has another output for 1: c1`],
    ]);
    // D1: no output, and no keyed hash of one, in a reason.
    const hashes = [`ok first ${CANARY}`, `no, second ${CANARY}`, `third ${CANARY}`].map((o) => detailHash(HMAC_SECRET, o));
    for (const l of letters) {
      expect(l.reason).not.toContain(CANARY);
      for (const h of hashes) expect(l.reason).not.toContain(h);
    }
    expect(outcomes.reduce((n, o) => n + o.duplicates, 0)).toBe(0);
    expect(outcomes.flatMap((o) => o.deadLettered)).toEqual([
      { subject: WORK_SUBJECTS.score, code: 'DUPLICATE_OUTPUT' },
      { subject: WORK_SUBJECTS.score, code: 'DUPLICATE_OUTPUT' },
    ]);
    // A copy of the refused message published again (a stream sequence of its own) is refused again; its own
    // c3 is a silent redelivery; the evidence does not change.
    const copy = await js.publish(subjectOf(names, WORK_SUBJECTS.score), c.payload, { msgID: randomUUID() });
    await waitFor(async () => (await lettersOf('DUPLICATE_OUTPUT')).length === 3, 'the copy refused');
    await waitFor(drained, 'work drained again');
    expect((await lettersOf('DUPLICATE_OUTPUT'))[2]).toMatchObject({ message_id: c.messageId, stream_seq: copy.seq });
    expect(outcomes.reduce((n, o) => n + o.duplicates, 0)).toBe(1);
    expect(await evidenceOf(runId)).toEqual(rows);
  });

  it('OUTPUT_AFTER_SEAL: an output for a case the seal scored missing_output is dead-lettered; the evidence and run.scored stay', async () => {
    const { key } = await createSuite(3);
    const runId = await openRun(key, 3);
    await startConsumer();
    await publishScore(runId, [{ case_id: 'c1', output: `ok ${CANARY}` }]);
    await publishSeal(runId);
    const [scored] = await waitFor(async () => {
      const s = await runScored(runId);
      return s.length === 1 ? s : undefined;
    }, 'run.scored');
    expect(scored.data).toMatchObject({ missing_count: 2, missing_case_ids: ['c2', 'c3'] });

    const late = await publishScore(runId, [
      { case_id: 'c2', output: `ok late ${CANARY}` },
      { case_id: 'c1', output: `ok ${CANARY}` },
    ]);
    const [letter] = await waitFor(async () => {
      const l = await lettersOf('OUTPUT_AFTER_SEAL');
      return l.length === 1 ? l : undefined;
    }, 'OUTPUT_AFTER_SEAL');
    expect(letter).toMatchObject({ message_id: late.messageId, subject: WORK_SUBJECTS.score, reason: `data.items[].case_id: run ${runId} was scored without an output for 1: c2` });
    expect(letter.reason).not.toContain(CANARY);
    await waitFor(drained, 'work drained');
    expect((await evidenceOf(runId)).map((r) => [r.case_id, r.label])).toEqual([
      ['c1', 'contains_all'],
      ['c2', MISSING_OUTPUT],
      ['c3', MISSING_OUTPUT],
    ]);
    expect(await runScored(runId)).toHaveLength(1);
    expect(await lettersOf('DUPLICATE_OUTPUT')).toEqual([]);
  });

  it('two workers racing on one case with different outputs: exactly one evidence row and one DUPLICATE_OUTPUT letter, for the output not stored', async () => {
    const { key } = await createSuite(3);
    const [a, b] = [newService(), newService()];
    for (let round = 0; round < 3; round++) {
      const runId = await openRun(key, 3);
      const message = (items: WorkItem[], seq: number) => {
        const messageId = randomUUID();
        const payload = encodeWork({
          type: WORK_SUBJECTS.score,
          version: 1,
          data: { run_id: runId, items },
          metadata: { message_id: messageId, correlation_id: messageId, causation_id: messageId, occurred_at: new Date().toISOString() },
        });
        const msg: BusMessage = {
          subject: subjectOf(names, WORK_SUBJECTS.score),
          data: new TextEncoder().encode(payload),
          seq,
          deliveryCount: 1,
          messageId,
          ack: () => undefined,
          ackConfirmed: async () => undefined,
          nak: () => undefined,
          working: () => undefined,
        };
        return { msg, messageId };
      };
      const first = message([{ case_id: 'c1', output: `ok A ${CANARY}` }, { case_id: 'c2', output: `ok ${CANARY}` }], 100 + round * 2);
      const second = message([{ case_id: 'c1', output: `ok B ${CANARY}` }, { case_id: 'c3', output: `ok ${CANARY}` }], 101 + round * 2);

      // Hold the run's lock exclusively, so both workers queue behind it and then insert side by side.
      const holder = ds.createQueryRunner();
      await holder.connect();
      await holder.startTransaction();
      await new RunLocks().exclusive(holder, runId);
      const racing = Promise.all([a.handle([first.msg]), b.handle([second.msg])]);
      await waitFor(async () => {
        const [{ n }] = await ds.query(
          `SELECT count(*)::int AS n FROM pg_locks WHERE locktype = 'advisory' AND NOT granted AND objid::bigint = (hashtext($1)::bigint & 4294967295)`,
          [runId],
        );
        return n >= 2;
      }, 'both workers waiting on the run');
      await holder.commitTransaction();
      await holder.release();
      const [oa, ob] = await racing;

      const rows = await evidenceOf(runId);
      expect(rows.map((r) => r.case_id)).toEqual(['c1', 'c2', 'c3']);
      const stored = rows[0].detail_hash;
      const loser = stored === detailHash(HMAC_SECRET, `ok A ${CANARY}`) ? second : first;
      expect([detailHash(HMAC_SECRET, `ok A ${CANARY}`), detailHash(HMAC_SECRET, `ok B ${CANARY}`)]).toContain(stored);
      const letters = await ds.query(`SELECT code, reason, message_id FROM dead_letters WHERE reason LIKE $1`, [`%${runId}%`]);
      expect(letters).toEqual([{ code: 'DUPLICATE_OUTPUT', message_id: loser.messageId, reason: `data.items[].case_id: run ${runId} already has another output for 1: c1` }]);
      expect(oa.inserted + ob.inserted).toBe(3);
      expect(oa.duplicates + ob.duplicates).toBe(0);
      expect([...oa.deadLettered, ...ob.deadLettered]).toEqual([{ subject: WORK_SUBJECTS.score, code: 'DUPLICATE_OUTPUT' }]);
      // Every row announced once: the counts of both cases.scored events add up to the rows.
      expect((await casesScored(runId)).reduce((n, e) => n + e.data.n, 0)).toBe(3);
    }
  });

  // --- the seal through the run's model (R7) -----------------------------------------------------------------

  it('R7: a seal for a run still open is handed back, scored once the run is sealed, and dead-lettered RUN_NOT_SEALED only after deadLetterAfter deliveries', async () => {
    const { key } = await createSuite(2);
    settings = { ...settings, retryDelayMs: 400 };
    const later = await openRun(key, 2, undefined, false);
    const never = await openRun(key, 2, undefined, false);
    await publishScore(later, [{ case_id: 'c1', output: `ok ${CANARY}` }]);
    await publishSeal(later);
    await publishSeal(never);
    await startConsumer();
    await waitFor(() => outcomes.reduce((n, o) => n + o.retried, 0) >= 2, 'both seals handed back');
    expect(await runScored(later)).toHaveLength(0);
    expect(await ds.query(`SELECT code FROM dead_letters`)).toEqual([]);

    // Its owner seals it: the next delivery completes it.
    await store.append(ds, runStreamId(later), 1, [event(RUN_EVENTS.sealed, { run_id: later })]);
    const [scored] = await waitFor(async () => {
      const s = await runScored(later);
      return s.length === 1 ? s : undefined;
    }, 'run.scored of the sealed run');
    expect(scored.stream_version).toBe(3);
    expect(scored.data).toEqual({ run_id: later, n: 2, passed: 1, score_sum: 1, missing_count: 1, missing_case_ids: ['c2'] });

    const [letter] = await waitFor(async () => {
      const l = await lettersOf('RUN_NOT_SEALED');
      return l.length === 1 ? l : undefined;
    }, 'RUN_NOT_SEALED', 10_000);
    expect(letter.subject).toBe(WORK_SUBJECTS.seal);
    expect(letter.reason).toBe(`run ${never}: not sealed after ${settings.deadLetterAfter} deliveries`);
    // Nothing of the refused seal was kept: no missing_output rows, no run.scored.
    expect(await evidenceOf(never)).toEqual([]);
    expect(await runScored(never)).toEqual([]);
    await waitFor(drained, 'work drained');
  });

  it('R1/GT3/D3: the seal lists as missing only the sample of a sampled gate run, and nothing for a monitor run', async () => {
    const { key } = await createSuite(4);
    const sampled = await openRun(key, 2, undefined, true, { sample: { size: 2, seed: 'seed-1', case_ids: ['c4', 'c2'] } });
    const monitor = await openRun(key, 4, undefined, true, { source: 'session_sample' });
    await startConsumer();
    await publishScore(sampled, [{ case_id: 'c2', output: `ok ${CANARY}` }]);
    await publishScore(monitor, [
      { case_id: 'c1@session-1', output: `ok ${CANARY}` },
      { case_id: 'c3@session-2', output: `no ${CANARY}` },
    ]);
    await publishSeal(sampled);
    await publishSeal(monitor);
    const scoredOf = (runId: string) =>
      waitFor(async () => {
        const s = await runScored(runId);
        return s.length === 1 ? s[0].data : undefined;
      }, `run.scored of ${runId}`);
    expect(await scoredOf(sampled)).toEqual({ run_id: sampled, n: 2, passed: 1, score_sum: 1, missing_count: 1, missing_case_ids: ['c4'] });
    expect((await evidenceOf(sampled)).map((r) => [r.case_id, r.label])).toEqual([
      ['c2', 'contains_all'],
      ['c4', MISSING_OUTPUT],
    ]);
    expect(await scoredOf(monitor)).toEqual({ run_id: monitor, n: 2, passed: 1, score_sum: 1, missing_count: 0, missing_case_ids: [] });
  });

  it('D1: the candidate outputs (canary) appear in no row of events, outbox, evidence, dead_letters, and no log line', () => {
    for (const table of ['events', 'outbox', 'evidence', 'dead_letters']) {
      const report = canaryReport.get(table);
      expect({ table, hadRows: (report?.rows ?? 0) > 0, leaks: report?.leaks }).toEqual({ table, hadRows: true, leaks: 0 });
    }
    expect(logLines.length).toBeGreaterThan(0);
    expect(logLines.filter((l) => l.includes(CANARY))).toEqual([]);
    // The letters of second outputs (DUPLICATE_OUTPUT, OUTPUT_AFTER_SEAL) were among the rows scanned.
    expect(letterCodes).toEqual(expect.arrayContaining(['UNKNOWN_CASE', 'DUPLICATE_OUTPUT', 'OUTPUT_AFTER_SEAL']));
  });
});
