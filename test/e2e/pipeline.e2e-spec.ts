import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { randomUUID } from 'node:crypto';
import { AckPolicy, DeliverPolicy, jetstream, jetstreamManager, type JetStreamClient, type JetStreamManager } from '@nats-io/jetstream';
import { connect, type NatsConnection } from '@nats-io/transport-node';
import Redis from 'ioredis';
import { EvalsPublisher, jetStreamPort } from '@evals/publisher';
import { Client } from 'pg';
import { startCluster, eventually, type AppCluster } from '../support/app-processes';
import { createTestSchema, deleteTestStreams, type TestSchema, uniqueSuffix } from '../support/isolation';
import { testServers } from '../support/servers';

/**
 * The durable pipeline across processes (spec R1-R6, D1-D2, section 10): ingestion, scoring worker and
 * read model started as separate processes on the real PostgreSQL and NATS JetStream.
 */
const root = path.resolve(__dirname, '../..');
const suiteYaml = fs.readFileSync(path.join(root, 'examples/extraction-json.suite.yaml'), 'utf8');
const goodOutputs = fs
  .readFileSync(path.join(root, 'examples/extraction-json.good.outputs.jsonl'), 'utf8')
  .split('\n')
  .filter(Boolean)
  .map((l) => JSON.parse(l) as { case_id: string; output: string });

describe('e2e: runs over HTTP and over NATS, through separate processes', () => {
  let schema: TestSchema;
  let cluster: AppCluster;
  let nc: NatsConnection;
  let js: JetStreamClient;
  let jsm: JetStreamManager;
  const suffix = uniqueSuffix();
  const streamPrefix = `E2E_${suffix}_`;
  const subjectPrefix = `e2e_${suffix}`;
  const subject = (s: string) => `${subjectPrefix}.${s}`;

  beforeAll(async () => {
    schema = await createTestSchema('e2e');
    cluster = await startCluster({ schema: schema.schema, streamPrefix, subjectPrefix, apps: ['ingestion', 'scoring-worker', 'read-model', 'regression'] });
    nc = await connect({ servers: testServers.nats.url });
    js = jetstream(nc);
    jsm = await jetstreamManager(nc);
    const pushed = await fetch(cluster.url('ingestion', '/v1/suites'), { method: 'POST', headers: { 'content-type': 'application/yaml' }, body: suiteYaml });
    expect(pushed.status).toBe(201);
  }, 120_000);

  afterAll(async () => {
    await cluster?.stopAll();
    await nc?.close();
    await deleteTestStreams(streamPrefix);
    await schema?.drop();
  });

  function envelope(type: string, data: unknown) {
    const id = randomUUID();
    return { schema: `${type}.v1`, type, version: 1, data, metadata: { message_id: id, correlation_id: id, causation_id: id, occurred_at: new Date().toISOString() } };
  }

  async function publish(type: string, data: unknown) {
    const message = envelope(type, data);
    await js.publish(subject(type), JSON.stringify(message), { msgID: message.metadata.message_id });
  }

  /** Reads every evals.result.recorded published so far, from the outbound stream (R4). */
  async function recordedResults(): Promise<Array<Record<string, any>>> {
    const stream = `${streamPrefix}EVALS_OUTBOUND`;
    const name = `probe_${uniqueSuffix()}`;
    await jsm.consumers.add(stream, { name, ack_policy: AckPolicy.None, deliver_policy: DeliverPolicy.All, filter_subject: subject('evals.result.recorded'), inactive_threshold: 60_000_000_000 });
    const consumer = await js.consumers.get(stream, name);
    const info = await jsm.streams.info(stream);
    const out: Array<Record<string, any>> = [];
    if (info.state.messages > 0) {
      const msgs = await consumer.fetch({ max_messages: 1000, expires: 1000 });
      for await (const m of msgs) {
        out.push(m.json());
        if (m.info.pending === 0) break;
      }
    }
    await jsm.consumers.delete(stream, name).catch(() => undefined);
    return out;
  }

  const resultFor = (runId: string) =>
    eventually(async () => (await recordedResults()).find((r) => r.data?.run_id === runId), 60_000, `evals.result.recorded for ${runId}`);

  const comparable = (r: Record<string, any>) => {
    const { run_id: _run, occurred_at: _at, metrics, ...rest } = r;
    const { source: _source, ...m } = metrics;
    return { ...rest, metrics: m };
  };

  let httpResult: Record<string, any>;

  it('each app is connected to PostgreSQL as its own role, and only as it (issue 27)', async () => {
    const admin = new Client({ connectionString: testServers.postgres.url });
    await admin.connect();
    try {
      for (const [app, role] of [['ingestion', 'evals_ingestion'], ['scoring-worker', 'evals_scoring'], ['read-model', 'evals_read_model'], ['regression', 'evals_regression']]) {
        const rows = (await admin.query('SELECT DISTINCT usename FROM pg_stat_activity WHERE application_name = $1', [`evals-${app}`])).rows as Array<{ usename: string }>;
        expect({ app, users: rows.map((r) => r.usename) }).toEqual({ app, users: [role] });
      }
    } finally {
      await admin.end();
    }
  });

  it('POST /v1/runs answers with the completed run and its EvalResult (R2, R3, R5)', async () => {
    const res = await fetch(cluster.url('ingestion', '/v1/runs'), {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ run_id: `http-${suffix}`, suite_key: 'extraction-json', subject_kind: 'agent', subject_id: 'extractor', outputs: goodOutputs }),
    });
    expect(res.status).toBe(200);
    const body = (await res.json()) as any;
    expect(body.run.status).toBe('completed');
    httpResult = body.eval_result;
    expect(Object.keys(httpResult).sort()).toEqual(['metrics', 'occurred_at', 'passed', 'run_id', 'score', 'subject_id', 'subject_kind', 'suite', 'suite_version', 'variant'].sort());
    expect(httpResult.metrics.n).toBe(goodOutputs.length);
    expect(body.run.summary.pass_rate_ci.level).toBe(0.95);
    const again = await fetch(cluster.url('ingestion', '/v1/runs'), {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ run_id: `http-${suffix}`, suite_key: 'extraction-json', subject_kind: 'agent', subject_id: 'extractor', outputs: goodOutputs }),
    });
    expect(((await again.json()) as any).eval_result).toEqual(httpResult);
  }, 60_000);

  it('the same run over NATS with inline outputs gives the same EvalResult on evals.result.recorded (R4)', async () => {
    const runId = `nats-inline-${suffix}`;
    await publish('evals.run.requested', { run_id: runId, suite_key: 'extraction-json', subject_kind: 'agent', subject_id: 'extractor', source: 'sandbox', outputs: goodOutputs });
    const message = await resultFor(runId);
    expect(message.schema).toBe('evals.result.recorded.v1');
    expect(comparable(message.data)).toEqual(comparable(httpResult));
    const http = (await recordedResults()).find((r) => r.data.run_id === `http-${suffix}`);
    expect(http?.data).toEqual(httpResult);
  }, 60_000);

  it('streamed outputs then evals.run.sealed give the same EvalResult; missing cases fail (R1)', async () => {
    const runId = `nats-stream-${suffix}`;
    await publish('evals.run.requested', { run_id: runId, suite_key: 'extraction-json', subject_kind: 'agent', subject_id: 'extractor', source: 'sandbox' });
    for (const o of goodOutputs) await publish('evals.output.submitted', { run_id: runId, case_id: o.case_id, output: o.output });
    await publish('evals.run.sealed', { run_id: runId });
    const message = await resultFor(runId);
    expect(comparable(message.data)).toEqual(comparable(httpResult));

    const partial = `nats-partial-${suffix}`;
    await publish('evals.run.requested', { run_id: partial, suite_key: 'extraction-json', subject_kind: 'agent', subject_id: 'extractor', source: 'sandbox' });
    for (const o of goodOutputs.slice(0, 3)) await publish('evals.output.submitted', { run_id: partial, case_id: o.case_id, output: o.output });
    await publish('evals.run.sealed', { run_id: partial });
    const partialResult = (await resultFor(partial)).data;
    expect(partialResult.metrics.n).toBe(goodOutputs.length);
    expect(partialResult.metrics.missing_outputs).toBe(goodOutputs.length - 3);
  }, 90_000);

  it('outputs in batches (evals.outputs.submitted) give the same EvalResult; an invalid output is dead-lettered alone (issue 28)', async () => {
    const runId = `nats-batch-${suffix}`;
    await publish('evals.run.requested', { run_id: runId, suite_key: 'extraction-json', subject_kind: 'agent', subject_id: 'extractor', source: 'sandbox' });
    const [first, ...rest] = goodOutputs;
    // The second batch repeats the first one's output (a partly repeated batch) and carries one for a case the
    // suite does not have and one that is not a string: each case is recorded once, the two refused alone.
    await publish('evals.outputs.submitted', { run_id: runId, outputs: [first] });
    await publish('evals.outputs.submitted', { run_id: runId, outputs: [first, { case_id: 'no-such-case', output: 'x' }, ...rest, { case_id: rest[0]!.case_id, output: 7 }] });
    await publish('evals.run.sealed', { run_id: runId });
    const message = await resultFor(runId);
    expect(comparable(message.data)).toEqual(comparable(httpResult));
    const letters = await eventually(async () => {
      const out = execFileSync('psql', [testServers.postgres.url, '-tAc', `SELECT code || ':' || item_index || ':' || coalesce(case_id, '') FROM "${schema.schema}".dead_letters WHERE subject = 'evals.outputs.submitted' ORDER BY item_index`]).toString().trim();
      return out.split('\n').length === 2 ? out.split('\n') : undefined;
    }, 30_000, 'the two dead letters of the batch');
    expect(letters).toEqual(['UNKNOWN_CASE:1:no-such-case', `INVALID_PAYLOAD:${rest.length + 2}:${rest[0]!.case_id}`]);
  }, 90_000);

  it('a run published with @evals/publisher (batches of two, a window of two) gives the same EvalResult (issue 28)', async () => {
    const runId = `publisher-${suffix}`;
    const publisher = new EvalsPublisher(jetStreamPort(js, subjectPrefix), { sessionId: randomUUID(), batchOutputs: 2, maxInFlight: 2 });
    const run = await publisher.open({ run_id: runId, suite_key: 'extraction-json', subject_kind: 'agent', subject_id: 'extractor', source: 'sandbox' });
    for (const o of goodOutputs) await run.output(o.case_id, o.output);
    const summary = await run.seal();
    expect(summary.batches).toBe(Math.ceil(goodOutputs.length / 2));
    expect(comparable((await resultFor(runId)).data)).toEqual(comparable(httpResult));
  }, 90_000);

  it('canaries in outputs appear in no table, stream, Redis key or log line (D1, D2)', async () => {
    const marker = `CANARY-${randomUUID()}`;
    const email = `canary.${suffix}@example.org`;
    const apiKey = `sk-canary${suffix}ABCDEFGHIJKLMNOP`;
    const canaryOutputs = goodOutputs.map((o) => ({ case_id: o.case_id, output: `${o.output} ${marker} ${email} ${apiKey}` }));
    const res = await fetch(cluster.url('ingestion', '/v1/runs'), {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ run_id: `canary-http-${suffix}`, suite_key: 'extraction-json', subject_kind: 'agent', subject_id: 'extractor', outputs: canaryOutputs }),
    });
    expect(res.status).toBe(200);
    const runId = `canary-nats-${suffix}`;
    await publish('evals.run.requested', { run_id: runId, suite_key: 'extraction-json', subject_kind: 'agent', subject_id: 'extractor', source: 'sandbox' });
    for (const o of canaryOutputs) await publish('evals.output.submitted', { run_id: runId, case_id: o.case_id, output: o.output });
    await publish('evals.run.sealed', { run_id: runId });
    await resultFor(runId);
    // The same outputs in a batch (issue 28), one of them refused alone.
    const batchRun = `canary-batch-${suffix}`;
    await publish('evals.run.requested', { run_id: batchRun, suite_key: 'extraction-json', subject_kind: 'agent', subject_id: 'extractor', source: 'sandbox' });
    await publish('evals.outputs.submitted', { run_id: batchRun, outputs: [...canaryOutputs, { case_id: 'no-such-case', output: marker }] });
    await publish('evals.run.sealed', { run_id: batchRun });
    await resultFor(batchRun);
    // A refused message with a canary is dead-lettered without it.
    await publish('evals.output.submitted', { run_id: runId, case_id: 'no-such-case', output: marker });
    await eventually(async () => {
      const out = execFileSync('psql', [testServers.postgres.url, '-tAc', `SELECT count(*) FROM "${schema.schema}".dead_letters WHERE code = 'RUN_SEALED' OR code = 'UNKNOWN_CASE'`]).toString().trim();
      return Number(out) > 0 ? true : undefined;
    }, 30_000, 'dead letter');

    const needles = [marker, email, apiKey];
    const dump = execFileSync('pg_dump', ['--data-only', '--schema', `${schema.schema}*`, testServers.postgres.url], { maxBuffer: 512 * 1024 * 1024 }).toString();
    expect(dump).toContain('extraction-json'); // the dump really has this test's data
    for (const n of needles) expect(dump).not.toContain(n);

    let streamBytes = '';
    for (const s of ['EVALS_INBOUND', 'EVALS_WORK', 'EVALS_EVENTS', 'EVALS_OUTBOUND']) {
      const name = `${streamPrefix}${s}`;
      const info = await jsm.streams.info(name);
      for (let seq = info.state.first_seq; seq <= info.state.last_seq && info.state.messages > 0; seq++) {
        const m = await jsm.streams.getMessage(name, { seq }).catch(() => null);
        if (m) streamBytes += `${m.subject} ${m.string()}\n`;
      }
    }
    expect(streamBytes).toContain('evals.result.recorded');
    for (const n of needles) expect(streamBytes).not.toContain(n);

    const redis = new Redis(testServers.redis.url);
    try {
      let cursor = '0';
      let redisText = '';
      do {
        const [next, keys] = await redis.scan(cursor, 'COUNT', 1000);
        cursor = next;
        for (const key of keys) {
          const type = await redis.type(key);
          const value = type === 'string' ? await redis.get(key) : type === 'hash' ? JSON.stringify(await redis.hgetall(key)) : '';
          redisText += `${key} ${value}\n`;
        }
      } while (cursor !== '0');
      for (const n of needles) expect(redisText).not.toContain(n);
    } finally {
      redis.disconnect();
    }

    const logs = cluster.logs();
    expect(logs.length).toBeGreaterThan(0);
    for (const n of needles) expect(logs).not.toContain(n);
  }, 120_000);

  it('serves the OpenAPI document generated from the code, and Prometheus metrics (X1, X2)', async () => {
    const doc = (await (await fetch(cluster.url('ingestion', '/openapi.json'))).json()) as any;
    expect(doc.openapi).toMatch(/^3\./);
    expect(Object.keys(doc.paths)).toEqual(expect.arrayContaining(['/v1/runs', '/v1/suites', '/v1/suites/{key}', '/v1/gate', '/v1/gate/{id}/override']));
    const readDoc = (await (await fetch(cluster.url('read-model', '/openapi.json'))).json()) as any;
    expect(Object.keys(readDoc.paths)).toEqual(expect.arrayContaining(['/v1/runs/{id}', '/v1/runs/{id}/events', '/v1/scorecards']));
    const metrics = await (await fetch(cluster.url('scoring-worker', '/metrics'))).text();
    expect(metrics).toMatch(/evals_cases_scored_total\{scorer="json_equal"\} [1-9]/);
    expect(metrics).toContain('evals_consumer_lag_messages');
  });

  it('refuses a 2 MiB output: 413 OUTPUT_TOO_LARGE over HTTP without echoing it; the bus server refuses it at publish', async () => {
    const marker = `BIG-${randomUUID()}`;
    const big = marker + 'x'.repeat(2 * 1024 * 1024);
    const res = await fetch(cluster.url('ingestion', '/v1/runs'), {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ suite_key: 'extraction-json', subject_kind: 'agent', subject_id: 'extractor', outputs: [{ case_id: goodOutputs[0].case_id, output: big }] }),
    });
    const text = await res.text();
    expect(res.status).toBe(413);
    expect(JSON.parse(text)).toMatchObject({ code: 'OUTPUT_TOO_LARGE', field: 'outputs[0].output' });
    expect(text).not.toContain(marker);
    // NATS's default max_payload (1 MiB) stops it before it reaches us: nothing to lose, the publisher is told.
    await expect(publish('evals.output.submitted', { run_id: 'x', case_id: 'y', output: big })).rejects.toThrow(/payload/i);
  });
});
