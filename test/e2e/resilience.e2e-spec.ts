import { randomUUID } from 'node:crypto';
import * as fs from 'node:fs';
import { jetstream, type JetStreamClient } from '@nats-io/jetstream';
import { connect, type NatsConnection } from '@nats-io/transport-node';
import { Client } from 'pg';
import { eventually, startCluster, type AppCluster } from '../support/app-processes';
import { createTestSchema, deleteTestStreams, type TestSchema, uniqueSuffix } from '../support/isolation';
import { testServers } from '../support/servers';

/**
 * Bad input loses nothing and stops nothing; a killed worker loses and duplicates nothing (spec R1, R3,
 * X4; section 10 dead letters).
 */
describe('e2e: dead letters and crash recovery', () => {
  let schema: TestSchema;
  let cluster: AppCluster;
  let nc: NatsConnection;
  let js: JetStreamClient;
  let db: Client;
  const suffix = uniqueSuffix();
  const streamPrefix = `E2R_${suffix}_`;
  const subjectPrefix = `e2r_${suffix}`;
  const subject = (s: string) => `${subjectPrefix}.${s}`;
  const CASES = 20_000;

  const bigSuite = {
    key: 'big',
    default_scorer: { type: 'exact' },
    pass_threshold: 0.5,
    regression_threshold: 0.1,
    cases: Array.from({ length: CASES }, (_, i) => ({ id: `c${i}`, input: `q${i}`, expected: `a${i}` })),
  };
  // Deterministic mix of passing and failing outputs.
  const outputFor = (i: number) => (i % 3 === 0 ? `wrong${i}` : `a${i}`);

  beforeAll(async () => {
    schema = await createTestSchema('e2r');
    cluster = await startCluster({ schema: schema.schema, streamPrefix, subjectPrefix, apps: ['ingestion', 'scoring-worker', 'read-model', 'regression'], env: { WORKER_MAX_BATCH: '2' } });
    nc = await connect({ servers: testServers.nats.url });
    js = jetstream(nc);
    db = new Client({ connectionString: schema.url });
    await db.connect();
    const res = await fetch(cluster.url('ingestion', '/v1/suites'), { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(bigSuite) });
    expect(res.status).toBe(201);
  }, 120_000);

  afterAll(async () => {
    await cluster?.stopAll();
    await db?.end();
    await nc?.close();
    await deleteTestStreams(streamPrefix);
    await schema?.drop();
  });

  function envelope(type: string, data: unknown, id = randomUUID()) {
    return { schema: `${type}.v1`, type, version: 1, data, metadata: { message_id: id, occurred_at: new Date().toISOString() } };
  }
  async function publishRaw(type: string, payload: string | Uint8Array, id = randomUUID()) {
    await js.publish(subject(type), payload, { msgID: id });
  }
  async function publish(type: string, data: unknown) {
    const e = envelope(type, data);
    await publishRaw(type, JSON.stringify(e), e.metadata.message_id);
  }
  async function count(sql: string, params: unknown[] = []): Promise<number> {
    return Number((await db.query(sql, params)).rows[0].n);
  }
  async function streamRun(runId: string, n: number) {
    await publish('evals.run.requested', { run_id: runId, suite_key: 'big', subject_kind: 'agent', subject_id: 'crash-test', source: 'sandbox' });
    // Pipelined in chunks: the order within the stream is the publish order on this one connection.
    for (let start = 0; start < n; start += 500) {
      const chunk = Array.from({ length: Math.min(500, n - start) }, (_, k) => start + k);
      await Promise.all(chunk.map((i) => publish('evals.output.submitted', { run_id: runId, case_id: `c${i}`, output: outputFor(i) })));
    }
    await publish('evals.run.sealed', { run_id: runId });
  }
  /**
   * What the evidence table's primary key (run_id, case_id) does not already guarantee, for a run that
   * completed: the `cases.scored` events (one stream per contributing message) announce every case exactly once (a case scored twice - announced
   * again after a redelivery - or lost between its row and its event makes the sum differ from N), the run is
   * scored once, its EvalResult recorded and put in the outbox once.
   */
  async function exactlyOnce(runId: string): Promise<{ announced: number; scoredEvents: number; resultRows: number }> {
    const announced = await count(`SELECT coalesce(sum((data->>'n')::int), 0) AS n FROM events WHERE type = 'cases.scored' AND data->>'run_id' = $1`, [runId]);
    const scoredEvents = await count(`SELECT count(*) AS n FROM events WHERE stream_id = $1 AND type = 'run.scored'`, [`run-${runId}`]);
    const resultRows = await count(`SELECT count(*) AS n FROM outbox WHERE subject LIKE '%result.recorded' AND payload->'data'->>'run_id' = $1`, [runId]);
    return { announced, scoredEvents, resultRows };
  }
  /** Cases of `a` whose evidence (pass, score, scorer) is the same as in `b`: N when the two runs were scored alike. */
  const sameEvidence = (a: string, b: string) =>
    count(
      `SELECT count(*) AS n FROM evidence x JOIN evidence y ON y.case_id = x.case_id AND y.run_id = $2
        WHERE x.run_id = $1 AND x.passed = y.passed AND x.score = y.score AND x.scorer = y.scorer`,
      [a, b],
    );
  const result = (runId: string) =>
    eventually(async () => (await db.query('SELECT result FROM eval_results WHERE run_id = $1', [runId])).rows[0]?.result, 180_000, `EvalResult of ${runId}`);

  it('dead-letters 1 000 malformed messages with their reasons while a valid run in between completes', async () => {
    const small = `valid-${suffix}`;
    const kinds: Array<[string, () => Promise<void>]> = [
      ['MALFORMED_JSON', () => publishRaw('evals.output.submitted', '{"not json')],
      ['INVALID_ENVELOPE', () => publishRaw('evals.run.sealed', JSON.stringify({ hello: 'world' }))],
      ['INVALID_PAYLOAD', () => publish('evals.output.submitted', { run_id: small, case_id: 'c1' })],
      ['INVALID_PAYLOAD', () => publish('evals.run.requested', { run_id: 'x', suite_key: 'big', subject_kind: 'agent', subject_id: 5, source: 'ci' })],
      ['SUITE_NOT_FOUND', () => publish('evals.run.requested', { run_id: `nosuite-${randomUUID()}`, suite_key: 'no-such-suite', subject_kind: 'agent', subject_id: 's', source: 'ci' })],
      ['UNKNOWN_CASE', () => publish('evals.output.submitted', { run_id: small, case_id: 'not-a-case', output: 'x' })],
      ['OUTPUT_TOO_LARGE', () => publish('evals.output.submitted', { run_id: small, case_id: 'c2', output: 'x'.repeat(600 * 1024) })],
    ];
    await publish('evals.run.requested', { run_id: small, suite_key: 'big', subject_kind: 'agent', subject_id: 'dlq-test', source: 'sandbox' });
    const expected = new Map<string, number>();
    for (let i = 0; i < 1000; i++) {
      const [code, send] = kinds[i % kinds.length];
      expected.set(code, (expected.get(code) ?? 0) + 1);
      await send();
      if (i === 500) {
        for (let c = 0; c < 10; c++) await publish('evals.output.submitted', { run_id: small, case_id: `c${c}`, output: outputFor(c) });
        await publish('evals.run.sealed', { run_id: small });
      }
    }
    const r = await result(small);
    expect(r.metrics.n).toBe(CASES);
    expect(r.metrics.missing_outputs).toBe(CASES - 10);
    await eventually(async () => ((await count('SELECT count(*) AS n FROM dead_letters')) >= 1000 ? true : undefined), 120_000, '1000 dead letters');
    const rows = (await db.query('SELECT code, count(*)::int AS n FROM dead_letters GROUP BY code')).rows as Array<{ code: string; n: number }>;
    // One dead letter per message, however often it was delivered.
    expect(await count('SELECT count(*) AS n FROM dead_letters')).toBe(1000);
    const byCode = Object.fromEntries(rows.map((x) => [x.code, x.n]));
    // UNKNOWN_CASE and OUTPUT_TOO_LARGE for a run that was sealed half way become RUN_SEALED: still dead-lettered with a reason.
    const afterSeal = (byCode.RUN_SEALED ?? 0) + (byCode.UNKNOWN_CASE ?? 0);
    expect(byCode.MALFORMED_JSON).toBe(expected.get('MALFORMED_JSON'));
    expect(byCode.INVALID_ENVELOPE).toBe(expected.get('INVALID_ENVELOPE'));
    expect(byCode.INVALID_PAYLOAD).toBe(expected.get('INVALID_PAYLOAD'));
    expect(byCode.SUITE_NOT_FOUND).toBe(expected.get('SUITE_NOT_FOUND'));
    expect(byCode.OUTPUT_TOO_LARGE).toBe(expected.get('OUTPUT_TOO_LARGE'));
    expect(afterSeal).toBe(expected.get('UNKNOWN_CASE'));
    const reasons = (await db.query('SELECT reason FROM dead_letters')).rows.map((x) => x.reason as string);
    expect(reasons.every((x) => x.length > 0)).toBe(true);
    expect(reasons.some((x) => x.includes('xxxxxxxx'))).toBe(false);
    // The service stayed up.
    expect((await fetch(cluster.url('ingestion', '/health'))).status).toBe(200);
  }, 300_000);

  it('a scoring worker killed with SIGKILL in the middle of a 20 000-case run loses and duplicates nothing', async () => {
    const killed = `killed-${suffix}`;
    // The kill lands while the outputs are still being published: the pipeline keeps up with one publisher,
    // so waiting for the publishing to end first could find the run already scored.
    const streaming = streamRun(killed, CASES);
    await eventually(async () => ((await count('SELECT count(*) AS n FROM evidence WHERE run_id = $1', [killed])) > 0 ? true : undefined), 120_000, 'first evidence');
    await cluster.stop('scoring-worker', 'SIGKILL');
    const before = await count('SELECT count(*) AS n FROM evidence WHERE run_id = $1', [killed]);
    await streaming;
    expect(before).toBeLessThan(CASES);
    await cluster.start('scoring-worker');
    const r = await result(killed);
    expect(await count('SELECT count(*) AS n FROM evidence WHERE run_id = $1', [killed])).toBe(CASES);
    // count(DISTINCT case_id) would equal count(*) under the primary key whatever happened: these can fail.
    expect(await exactlyOnce(killed)).toEqual({ announced: CASES, scoredEvents: 1, resultRows: 1 });

    const clean = `clean-${suffix}`;
    await streamRun(clean, CASES);
    const c = await result(clean);
    // The aggregate is the undisturbed run's, field by field, and so is every case's evidence.
    expect(r.metrics).toEqual(c.metrics);
    expect(r.score).toBe(c.score);
    expect(r.passed).toBe(c.passed);
    expect(r.metrics).toMatchObject({ n: CASES, missing_outputs: 0, passed: CASES - Math.ceil(CASES / 3) });
    expect(await sameEvidence(killed, clean)).toBe(CASES);
    expect(await exactlyOnce(clean)).toEqual({ announced: CASES, scoredEvents: 1, resultRows: 1 });
  }, 400_000);

  it('a scoring worker stopped with SIGTERM mid-run finishes or returns its in-flight work, and exits (X4)', async () => {
    const runId = `term-${suffix}`;
    const streaming = streamRun(runId, CASES);
    await eventually(async () => ((await count('SELECT count(*) AS n FROM evidence WHERE run_id = $1', [runId])) > 0 ? true : undefined), 120_000, 'first evidence');
    const worker = cluster.apps.get('scoring-worker')!;
    const logBefore = fs.statSync(worker.logFile).size;
    const started = Date.now();
    await cluster.stop('scoring-worker', 'SIGTERM');
    const stoppedIn = Date.now() - started;
    // The worker's own account of a graceful stop (X4): its consumer drained, which a crash never writes.
    const stopLog = fs.readFileSync(worker.logFile, 'utf8').slice(logBefore);
    const stopLines = stopLog.split('\n').filter((l) => l.startsWith('{')).map((l) => JSON.parse(l) as { app?: string; msg?: string; level?: string });
    expect(stopLines.filter((l) => l.app === 'scoring-worker' && l.msg === 'work consumer stopped')).toHaveLength(1);
    expect(stopLines.filter((l) => l.level === 'error')).toEqual([]);
    await streaming;
    // Exited by itself on the signal (Nest re-raises it after its hooks), not killed after the 20 s grace.
    expect(worker.child.exitCode === 0 || worker.child.signalCode === 'SIGTERM').toBe(true);
    expect(stoppedIn).toBeLessThan(20_000);
    const atStop = await count('SELECT count(*) AS n FROM evidence WHERE run_id = $1', [runId]);
    await cluster.start('scoring-worker');
    const r = await result(runId);
    expect(atStop).toBeLessThanOrEqual(CASES);
    expect(r.metrics).toMatchObject({ n: CASES, missing_outputs: 0, passed: CASES - Math.ceil(CASES / 3) });
    expect(await count('SELECT count(*) AS n FROM evidence WHERE run_id = $1', [runId])).toBe(CASES);
    // No case scored twice across the stop: each announced once, the run scored and its result recorded once.
    expect(await exactlyOnce(runId)).toEqual({ announced: CASES, scoredEvents: 1, resultRows: 1 });
  }, 400_000);
});
