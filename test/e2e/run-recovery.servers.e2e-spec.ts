import { randomUUID } from 'node:crypto';
import { jetstream, type JetStreamClient } from '@nats-io/jetstream';
import { connect, type NatsConnection } from '@nats-io/transport-node';
import { Client } from 'pg';
import { encodeMessage, serializeMessage, SUBJECTS, type AnyMessage, type MessageData, type MessageVersion } from '@evals/contracts';
import { detailHash } from '@evals/domain';
import { eventually, startCluster, type AppCluster } from '../support/app-processes';
import { createTestSchema, deleteTestStreams, type TestSchema, uniqueSuffix } from '../support/isolation';
import { startNats, stopNats, testServers } from '../support/servers';

/**
 * R7 on the real servers (the four apps as processes, PostgreSQL, NATS JetStream): `POST /v1/runs` while NATS
 * is stopped answers 503 BUS_UNAVAILABLE with Retry-After - never a 500 - and the same request once NATS is
 * back completes the run with all its cases; over the bus, a second, different output for a case already
 * scored is dead-lettered DUPLICATE_OUTPUT by the scoring worker (naming run and case, never an output),
 * while the same output again stays silent (docs/pipeline.md step 2).
 */
describe('e2e: run recovery on the real servers (R7)', () => {
  let schema: TestSchema;
  let cluster: AppCluster;
  let nc: NatsConnection;
  let js: JetStreamClient;
  let db: Client;
  const suffix = uniqueSuffix();
  const streamPrefix = `E2V_${suffix}_`;
  const subjectPrefix = `e2v_${suffix}`;
  const CASES = 200;
  const SUITE = 'recovery';

  const suite = {
    key: SUITE,
    default_scorer: { type: 'exact' },
    pass_threshold: 0.5,
    regression_threshold: 0.1,
    cases: Array.from({ length: CASES }, (_, i) => ({ id: `c${i}`, input: `q${i}`, expected: `a${i}` })),
  };

  beforeAll(async () => {
    schema = await createTestSchema('e2v');
    cluster = await startCluster({ schema: schema.schema, streamPrefix, subjectPrefix, apps: ['ingestion', 'scoring-worker', 'read-model', 'regression'] });
    nc = await connect({ servers: testServers.nats.url, maxReconnectAttempts: -1, reconnectTimeWait: 250 });
    js = jetstream(nc);
    db = new Client({ connectionString: schema.url });
    await db.connect();
    const pushed = await fetch(cluster.url('ingestion', '/v1/suites'), { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(suite) });
    expect(pushed.status).toBe(201);
  }, 120_000);

  afterAll(async () => {
    await cluster?.stopAll();
    await db?.end();
    await nc?.close();
    await deleteTestStreams(streamPrefix);
    await schema?.drop();
  });

  async function postRun(body: unknown, timeoutMs = 60_000): Promise<{ status: number; body: any; retryAfter: string | null }> {
    const res = await fetch(cluster.url('ingestion', '/v1/runs'), {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(body),
      signal: AbortSignal.timeout(timeoutMs),
    });
    const text = await res.text();
    let parsed: unknown = text;
    try {
      parsed = JSON.parse(text);
    } catch {
      // not JSON: kept as text for the failure message
    }
    return { status: res.status, body: parsed, retryAfter: res.headers.get('retry-after') };
  }

  async function count(sql: string, params: unknown[] = []): Promise<number> {
    return Number((await db.query(sql, params)).rows[0].n);
  }

  async function healthy(app: 'ingestion' | 'scoring-worker' | 'read-model' | 'regression'): Promise<true | undefined> {
    try {
      const res = await fetch(cluster.url(app, '/health'), { signal: AbortSignal.timeout(2_000) });
      return res.status === 200 && ((await res.json()) as { status?: string }).status === 'ok' ? true : undefined;
    } catch {
      return undefined;
    }
  }

  type Inbound = typeof SUBJECTS.RUN_REQUESTED | typeof SUBJECTS.OUTPUT_SUBMITTED | typeof SUBJECTS.RUN_SEALED;

  /** Publishes one contract message as a producer would: encoded at the edge, its message id as Nats-Msg-Id. Returns that id. */
  async function publish<T extends Inbound>(type: T, data: MessageData<T, MessageVersion<T>>, id = randomUUID()): Promise<string> {
    const message = encodeMessage(type, 1 as MessageVersion<T>, data, { message_id: id, correlation_id: id, causation_id: id, occurred_at: new Date().toISOString() });
    await js.publish(`${subjectPrefix}.${type}`, serializeMessage(message as AnyMessage), { msgID: id });
    return id;
  }

  /** The EvalResult of a run, once the read model has projected it. */
  const evalResult = (runId: string) =>
    eventually(async () => (await db.query('SELECT result FROM eval_results WHERE run_id = $1', [runId])).rows[0]?.result as Record<string, any> | undefined, 60_000, `EvalResult of ${runId}`);

  const evidenceOf = (runId: string, caseId: string) =>
    db.query('SELECT passed, label, detail_hash FROM evidence WHERE run_id = $1 AND case_id = $2', [runId, caseId]).then((r) => r.rows as Array<{ passed: boolean; label: string; detail_hash: string }>);
  /** The keyed hash evidence keeps of an output (D2): which of two outputs a row holds, without the output. */
  const hashOf = (output: string) => detailHash(cluster.env.EVALS_HMAC_SECRET, output);

  /**
   * The dead letters of the work messages that forwarded these inbound messages: a forward's message id is
   * derived from its inbound message's id (`<id>:score:<i>`, docs/pipeline.md), which is a UUID here.
   */
  const lettersOf = (inboundIds: string[]) =>
    db
      .query(`SELECT code, reason, message_id, subject FROM dead_letters WHERE message_id LIKE ANY($1::text[]) ORDER BY id`, [inboundIds.map((id) => `${id}:%`)])
      .then((r) => r.rows as Array<{ code: string; reason: string; message_id: string; subject: string }>);

  it('POST /v1/runs while NATS is stopped: 503 BUS_UNAVAILABLE with Retry-After, never a 500; the same request once NATS is back completes the run with all its cases', async () => {
    const runId = `down-${suffix}`;
    const request = { run_id: runId, suite_key: SUITE, subject_kind: 'agent', subject_id: 'bus-down', source: 'ci', outputs: Array.from({ length: CASES }, (_, i) => ({ case_id: `c${i}`, output: i % 5 === 0 ? `wrong${i}` : `a${i}` })) };
    const passed = CASES - CASES / 5;
    // The pipeline works before the outage (every consumer is up).
    const before = await postRun({ ...request, run_id: `before-${suffix}` });
    expect(before.status).toBe(200);

    let during: { status: number; body: any; retryAfter: string | null } | undefined;
    let duringMs = 0;
    stopNats();
    try {
      const started = Date.now();
      // Bounded: the apps' JetStream publish times out after 5 s; an answer must come well before this.
      during = await postRun(request, 45_000);
      duringMs = Date.now() - started;
    } finally {
      await startNats();
    }
    expect(during.status).toBe(503);
    expect(during.body).toMatchObject({ code: 'BUS_UNAVAILABLE' });
    expect(during.retryAfter).toBe('2');
    expect(duringMs).toBeLessThan(45_000);
    // Opened, not sealed: the outputs did not reach the bus, so the run waits for its retry (or its TTL).
    expect(await count(`SELECT count(*) AS n FROM events WHERE stream_id = $1 AND type = 'run.sealed'`, [`run-${runId}`])).toBe(0);

    // NB: /health stays 200 (bus "up") through the outage today - the NATS connection is reconnecting, not
    // closed - so this wait is only a floor; the Retry-After loop below is what a client relies on.
    await eventually(() => healthy('ingestion'), 60_000, 'ingestion healthy after NATS restart');
    await eventually(async () => ((await Promise.all((['scoring-worker', 'read-model', 'regression'] as const).map(healthy))).every(Boolean) ? true : undefined), 60_000, 'every app healthy');

    // The same request again, as a client does: honouring Retry-After. The first one may still be refused: a
    // JetStream publish issued while the app's NATS client is reconnecting is never answered and times out (5 s).
    let retry = await postRun(request);
    const deadline = Date.now() + 30_000;
    while (retry.status === 503 && Date.now() < deadline) {
      expect(retry.body).toMatchObject({ code: 'BUS_UNAVAILABLE' });
      expect(retry.retryAfter).toBe('2');
      await new Promise((r) => setTimeout(r, Number(retry.retryAfter) * 1000));
      retry = await postRun(request);
    }
    expect(retry.status).toBe(200);
    expect(retry.body.run).toMatchObject({ run_id: runId, status: 'completed', missing_outputs: 0 });
    expect(retry.body.eval_result.metrics).toMatchObject({ n: CASES, passed, missing_outputs: 0 });
    expect(retry.body.regression.completeness).toBe('complete');
    expect(await count('SELECT count(*) AS n FROM evidence WHERE run_id = $1', [runId])).toBe(CASES);
    expect(await count(`SELECT count(*) AS n FROM events WHERE stream_id = $1 AND type = 'run.sealed'`, [`run-${runId}`])).toBe(1);
    expect(await count(`SELECT count(*) AS n FROM events WHERE stream_id = $1 AND type = 'run.opened'`, [`run-${runId}`])).toBe(1);
  }, 180_000);

  it('over the bus, a second different output for a scored case is dead-lettered DUPLICATE_OUTPUT naming run and case, never an output; the same output again is silent', async () => {
    const runId = `dup-${suffix}`;
    const first = `FIRST-${randomUUID()}`;
    const second = `SECOND-${randomUUID()}`;
    await publish(SUBJECTS.RUN_REQUESTED, { run_id: runId, suite_key: SUITE, subject_kind: 'agent', subject_id: 'dup-bot', source: 'sandbox' });

    // c0: two different outputs; the first is scored and stays.
    const m1 = await publish(SUBJECTS.OUTPUT_SUBMITTED, { run_id: runId, case_id: 'c0', output: first });
    await eventually(async () => ((await evidenceOf(runId, 'c0')).length > 0 ? true : undefined), 30_000, 'evidence of c0');
    const m2 = await publish(SUBJECTS.OUTPUT_SUBMITTED, { run_id: runId, case_id: 'c0', output: second });
    const letters = await eventually(async () => {
      const l = await lettersOf([m2]);
      return l.length > 0 ? l : undefined;
    }, 30_000, 'the DUPLICATE_OUTPUT letter');
    expect(letters).toHaveLength(1);
    expect(letters[0]).toMatchObject({ code: 'DUPLICATE_OUTPUT', message_id: expect.stringMatching(new RegExp(`^${m2}:`)), subject: 'evals.work.score' });
    expect(letters[0].reason).toContain(runId);
    expect(letters[0].reason).toMatch(/\bc0\b/);
    expect(letters[0].reason).not.toContain(first);
    expect(letters[0].reason).not.toContain(second);

    // c1: the same output twice under two message ids - a redelivery by content, not a second output.
    const m3 = await publish(SUBJECTS.OUTPUT_SUBMITTED, { run_id: runId, case_id: 'c1', output: 'a1' });
    await eventually(async () => ((await evidenceOf(runId, 'c1')).length > 0 ? true : undefined), 30_000, 'evidence of c1');
    const m4 = await publish(SUBJECTS.OUTPUT_SUBMITTED, { run_id: runId, case_id: 'c1', output: 'a1' });
    // c2: the same output twice, back to back: in one micro-batch or two, no letter.
    const m5 = await publish(SUBJECTS.OUTPUT_SUBMITTED, { run_id: runId, case_id: 'c2', output: 'a2' });
    const m6 = await publish(SUBJECTS.OUTPUT_SUBMITTED, { run_id: runId, case_id: 'c2', output: 'a2' });

    // The seal is scored only after every earlier work message was handled (docs/pipeline.md), so once the
    // run's result is there every letter these outputs could cause is written.
    await publish(SUBJECTS.RUN_SEALED, { run_id: runId });
    const result = await evalResult(runId);
    expect(result.metrics).toMatchObject({ n: CASES, missing_outputs: CASES - 3, passed: 2 });
    expect(await evidenceOf(runId, 'c0')).toEqual([expect.objectContaining({ passed: false, detail_hash: hashOf(first) })]);
    expect(await evidenceOf(runId, 'c1')).toEqual([expect.objectContaining({ passed: true, detail_hash: hashOf('a1') })]);
    expect(await evidenceOf(runId, 'c2')).toEqual([expect.objectContaining({ passed: true, detail_hash: hashOf('a2') })]);
    expect(await count('SELECT count(*) AS n FROM evidence WHERE run_id = $1', [runId])).toBe(CASES);

    expect((await lettersOf([m1, m2, m3, m4, m5, m6])).map((l) => [l.code, l.message_id.split(':')[0]])).toEqual([['DUPLICATE_OUTPUT', m2]]);
    // No letter of this run but that one, whatever its message id.
    const ofRun = await db.query(`SELECT code FROM dead_letters WHERE reason LIKE '%' || $1 || '%'`, [runId]);
    expect(ofRun.rows).toEqual([{ code: 'DUPLICATE_OUTPUT' }]);
    const all = (await db.query('SELECT reason FROM dead_letters')).rows.map((r) => r.reason as string).join('\n');
    expect(all).not.toContain(first);
    expect(all).not.toContain(second);
  }, 120_000);

  it('two different outputs for one case published back to back: one evidence row, the earlier output; one DUPLICATE_OUTPUT letter naming run and case', async () => {
    const runId = `dup-b2b-${suffix}`;
    const first = `FIRST-${randomUUID()}`;
    // The later output would pass: if it replaced the first, the case would pass.
    const second = 'a0';
    await publish(SUBJECTS.RUN_REQUESTED, { run_id: runId, suite_key: SUITE, subject_kind: 'agent', subject_id: 'dup-bot', source: 'sandbox' });
    const m1 = await publish(SUBJECTS.OUTPUT_SUBMITTED, { run_id: runId, case_id: 'c0', output: first });
    const m2 = await publish(SUBJECTS.OUTPUT_SUBMITTED, { run_id: runId, case_id: 'c0', output: second });
    await publish(SUBJECTS.RUN_SEALED, { run_id: runId });
    const result = await evalResult(runId);
    expect(result.metrics).toMatchObject({ n: CASES, missing_outputs: CASES - 1, passed: 0 });
    expect(await evidenceOf(runId, 'c0')).toEqual([expect.objectContaining({ passed: false, detail_hash: hashOf(first) })]);
    // Ingestion forwards the outputs of one micro-batch for one run as one work message, named after the first
    // inbound message; so the letter names the work message of m1 when both came in one batch, of m2 otherwise.
    const letters = await lettersOf([m1, m2]);
    expect(letters).toHaveLength(1);
    expect(letters[0]).toMatchObject({ code: 'DUPLICATE_OUTPUT', subject: 'evals.work.score', reason: `data.items[].case_id: run ${runId} already has another output for 1: c0` });
    expect(letters[0].reason).not.toContain(first);
    const ofRun = await db.query(`SELECT code FROM dead_letters WHERE reason LIKE '%' || $1 || '%'`, [runId]);
    expect(ofRun.rows).toEqual([{ code: 'DUPLICATE_OUTPUT' }]);
  }, 120_000);
});
