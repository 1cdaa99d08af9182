import { execFileSync } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { jetstream, type JetStreamClient } from '@nats-io/jetstream';
import { connect, type NatsConnection } from '@nats-io/transport-node';
import { Client } from 'pg';
import { eventually, startCluster, type AppCluster } from '../support/app-processes';
import { createTestSchema, deleteTestStreams, type TestSchema, uniqueSuffix } from '../support/isolation';
import { testServers } from '../support/servers';

/**
 * The session monitor end to end (D3): sampled session signals in, a monitor run per subject and window,
 * its EvalResult out - and no text of a session anywhere.
 */
const WINDOW_SECONDS = 5;

describe('e2e: the session monitor', () => {
  let schema: TestSchema;
  let cluster: AppCluster;
  let nc: NatsConnection;
  let js: JetStreamClient;
  let db: Client;
  const suffix = uniqueSuffix();
  const streamPrefix = `E2M_${suffix}_`;
  const subjectPrefix = `e2m_${suffix}`;
  const suiteKey = `guard-${suffix}`;

  beforeAll(async () => {
    schema = await createTestSchema('e2m');
    cluster = await startCluster({
      schema: schema.schema,
      streamPrefix,
      subjectPrefix,
      apps: ['ingestion', 'scoring-worker', 'read-model', 'regression'],
      env: { EVALS_MONITOR_SUITES: suiteKey, EVALS_MONITOR_WINDOW_SECONDS: String(WINDOW_SECONDS), EVALS_MONITOR_GRACE_SECONDS: '1' },
    });
    nc = await connect({ servers: testServers.nats.url });
    js = jetstream(nc);
    db = new Client({ connectionString: schema.url });
    await db.connect();
    const suite = {
      key: suiteKey,
      description: 'Behavioural guard rails of sampled sessions',
      default_scorer: { type: 'exact' },
      pass_threshold: 0.75,
      regression_threshold: 0.1,
      cases: [
        { id: 'cost', input: { signal_field: 'cost_usd' }, scorer: { type: 'numeric_range', max: 0.05 } },
        { id: 'state', input: { signal_field: 'state' }, expected: 'completed', scorer: { type: 'exact' } },
        { id: 'severity', input: { signal_field: 'max_severity' }, scorer: { type: 'not_contains', value: ['high', 'critical'] } },
        { id: 'tokens', input: { signal_field: 'tokens_total' }, scorer: { type: 'numeric_range', max: 5000 } },
      ],
    };
    const res = await fetch(cluster.url('ingestion', '/v1/suites'), { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(suite) });
    // With the body, so a refusal says why.
    expect({ status: res.status, body: await res.text() }).toMatchObject({ status: 201 });
  }, 120_000);

  afterAll(async () => {
    await cluster?.stopAll();
    await db?.end();
    await nc?.close();
    await deleteTestStreams(streamPrefix);
    await schema?.drop();
  });

  async function publish(data: Record<string, unknown>) {
    const id = randomUUID();
    const envelope = { schema: 'evals.session.signal.v1', type: 'evals.session.signal', version: 1, data, metadata: { message_id: id, occurred_at: new Date().toISOString() } };
    await js.publish(`${subjectPrefix}.evals.session.signal`, JSON.stringify(envelope), { msgID: id });
  }

  it('scores signals into one run per subject and window, closes the window, and records its EvalResult', async () => {
    // Start at the beginning of a window, so every signal below falls in it and it is still open.
    const width = WINDOW_SECONDS * 1000;
    await eventually(async () => (Date.now() % width < 1000 ? true : undefined), width * 2, 'start of a window');
    const occurredAt = new Date(Math.floor(Date.now() / width) * width + 10).toISOString();
    const base = { subject_kind: 'agent', subject_id: 'bot', occurred_at: occurredAt };
    await publish({ ...base, session_id: 's1', state: 'completed', finding_count: 0, max_severity: 'none', tokens_in: 1000, tokens_out: 200, cost_usd: 0.01 });
    await publish({ ...base, session_id: 's2', state: 'completed', finding_count: 1, max_severity: 'high', tokens_in: 4000, tokens_out: 2000, cost_usd: 0.08 });
    await publish({ ...base, session_id: 's3', state: 'failed', finding_count: 0, max_severity: 'none', tokens_in: 300, tokens_out: 10, cost_usd: 0.002 });
    const canary = `TRANSCRIPT-CANARY-${randomUUID()}`;
    // A text field is not part of the contract: the signal is refused and its text never read (D3, D1).
    await publish({ ...base, session_id: 's4', state: 'completed', finding_count: 0, max_severity: 'none', tokens_in: 1, tokens_out: 1, cost_usd: 0, transcript: canary });

    const row = await eventually(
      async () => (await db.query(`SELECT run_id, result FROM eval_results WHERE run_id LIKE $1`, [`monitor.${suiteKey}.agent.bot.%`])).rows[0],
      60_000,
      'the monitor run EvalResult',
    );
    // s1 passes all 4; s2 fails cost, severity and tokens; s3 fails state: 4 + 1 + 3 of 12.
    expect(row.result).toMatchObject({ suite: suiteKey, subject_kind: 'agent', subject_id: 'bot', run_id: row.run_id, metrics: { n: 12, passed: 8, missing_outputs: 0, source: 'session_sample' } });
    expect(row.result.passed).toBe(8 / 12 >= 0.75);
    const evidence = (await db.query(`SELECT case_id, passed FROM evidence WHERE run_id = $1 ORDER BY case_id`, [row.run_id])).rows;
    expect(evidence.map((e) => e.case_id)).toContain('cost@s2');
    expect(evidence.find((e) => e.case_id === 'cost@s2').passed).toBe(false);

    const letters = (await db.query(`SELECT code, reason FROM dead_letters WHERE subject = 'evals.session.signal'`)).rows;
    expect(letters).toEqual([expect.objectContaining({ code: 'INVALID_PAYLOAD' })]);

    const dump = execFileSync('pg_dump', ['--data-only', '--schema', `${schema.schema}*`, testServers.postgres.url], { maxBuffer: 256 * 1024 * 1024 }).toString();
    expect(dump).toContain(suiteKey);
    expect(dump).not.toContain(canary);
    expect(cluster.logs()).not.toContain(canary);

    const cards = (await (await fetch(cluster.url('read-model', `/v1/scorecards?suite_key=${suiteKey}`))).json()) as any;
    expect(cards.scorecards[0]).toMatchObject({ subject_id: 'bot', runs: 1, latest_pass_rate: { passed: 8, n: 12 } });
  }, 90_000);
});
