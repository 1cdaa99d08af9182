import { randomUUID } from 'node:crypto';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { jetstream, jetstreamManager, type JetStreamClient, type JetStreamManager } from '@nats-io/jetstream';
import { connect, type NatsConnection } from '@nats-io/transport-node';
import { Pool } from 'pg';
import { eventually, startCluster, type AppCluster, type AppName } from '../support/app-processes';
import { createTestSchema, uniqueSuffix, type TestSchema } from '../support/isolation';
import { testServers } from '../support/servers';
import { natsService, otherTestRuns, waitUntilAlone, postgresService, redisService, type MachineService } from './machine-services';

/**
 * `npm run test:faults` (issue 18 part 1; docs/reliability.md "Faults"): the four apps on the real servers,
 * and during runs of 20 000 cases streamed over NATS, one fault each - SIGKILL of every app, the read model
 * killed again right as `run.scored` appears, NATS restarted, PostgreSQL restarted, Redis stopped and started.
 * After each, the invariants (R1, R3, R4, X4): evidence rows exactly N; the aggregate and every case's
 * evidence identical to the undisturbed run's; each case announced once, the run scored once, its EvalResult
 * recorded and put in the outbox once; no dead letter at all; and at the end, on NATS, as many
 * `evals.result.recorded` messages as EvalResults. It stops the machine's servers, so it is not part of
 * `npm test`, refuses to run beside another test run, and puts every server back as it found it.
 */
const CASES = Number(process.env.FAULTS_CASES ?? 20_000);
const STEP_TIMEOUT = 600_000;
/** A fault's test: waiting (5 min at most) for other test runs to end, then the run. */
const TEST_TIMEOUT = 5 * 60_000 + STEP_TIMEOUT;

interface Row {
  fault: string;
  runMs: number;
  /** How much longer than the undisturbed run. */
  delayMs: number;
  /** From the fault's injection to the component being back (started, listening). */
  downMs: number;
  /** From the component being back to the run's EvalResult. */
  toResultMs: number;
  /** Where the run was when the fault hit: outputs published, evidence rows. */
  at: string;
  invariants: string;
}

describe('faults: the four apps on the real servers under SIGKILL and server restarts (issue 18)', () => {
  let schema: TestSchema;
  let cluster: AppCluster;
  let nc: NatsConnection;
  let js: JetStreamClient;
  let jsm: JetStreamManager;
  let db: Pool;
  const suffix = uniqueSuffix();
  const streamPrefix = `FLT_${suffix}_`;
  const subjectPrefix = `flt_${suffix}`;
  const subject = (s: string) => `${subjectPrefix}.${s}`;
  const services: MachineService[] = [natsService(), postgresService(), redisService()];
  const rows: Row[] = [];
  let baseline: { runId: string; ms: number; result: any };
  let runsStarted = 0;
  /** Outputs published so far, per run. */
  const published = new Map<string, number>();
  const started = Date.now();

  const bigSuite = {
    key: 'faults',
    default_scorer: { type: 'exact' },
    pass_threshold: 0.5,
    regression_threshold: 0.1,
    cases: Array.from({ length: CASES }, (_, i) => ({ id: `c${i}`, input: `q${i}`, expected: `a${i}` })),
  };
  const outputFor = (i: number) => (i % 3 === 0 ? `wrong${i}` : `a${i}`);

  beforeAll(async () => {
    for (const s of services) await s.capture();
    schema = await createTestSchema('flt');
    cluster = await startCluster({ schema: schema.schema, streamPrefix, subjectPrefix, apps: ['ingestion', 'scoring-worker', 'read-model', 'regression'] });
    nc = await connect({ servers: testServers.nats.url, maxReconnectAttempts: -1, reconnectTimeWait: 250 });
    js = jetstream(nc, { timeout: 10_000 });
    jsm = await jetstreamManager(nc);
    db = new Pool({ connectionString: schema.url, max: 2 });
    // A PostgreSQL restart ends idle connections: the pool replaces them.
    db.on('error', () => undefined);
    const res = await fetch(cluster.url('ingestion', '/v1/suites'), { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(bigSuite) });
    expect(res.status).toBe(201);
  }, 180_000);

  afterAll(async () => {
    // Every server back as it was, whatever failed above.
    const differences: string[] = [];
    for (const s of services) differences.push(...(await s.restore().catch((e: unknown) => [`${s.name}: ${String(e)}`])));
    await cluster?.stopAll();
    await db?.end().catch(() => undefined);
    if (jsm) for (const s of ['EVALS_INBOUND', 'EVALS_WORK', 'EVALS_EVENTS', 'EVALS_OUTBOUND']) await jsm.streams.delete(`${streamPrefix}${s}`).catch(() => undefined);
    await nc?.close().catch(() => undefined);
    await schema?.drop().catch(() => undefined);
    const report = formatReport(rows, baseline?.ms, Date.now() - started);
    const file = path.join(os.tmpdir(), `evals-faults-${suffix}.md`);
    fs.writeFileSync(file, report);
    process.stdout.write(`\n${report}\n(written to ${file})\n`);
    if (differences.length > 0) throw new Error(`servers not restored as found:\n${differences.join('\n')}`);
  }, 180_000);

  /** One query; null while PostgreSQL is away (the fault), so a poll goes on instead of failing. */
  async function query<T = any>(sql: string, params: unknown[] = []): Promise<T[] | null> {
    try {
      return (await db.query(sql, params)).rows as T[];
    } catch {
      return null;
    }
  }
  async function count(sql: string, params: unknown[] = []): Promise<number> {
    const rows = await query(sql, params);
    if (rows === null) throw new Error(`query failed: ${sql}`);
    return Number(rows[0].n);
  }

  /** Publishes until the server stores it: a retry carries the same id, so it is stored once (de-duplication). */
  async function publish(type: string, data: unknown): Promise<void> {
    const id = randomUUID();
    const payload = JSON.stringify({ schema: `${type}.v1`, type, version: 1, data, metadata: { message_id: id, occurred_at: new Date().toISOString() } });
    const deadline = Date.now() + 120_000;
    for (;;) {
      try {
        await js.publish(subject(type), payload, { msgID: id });
        return;
      } catch (error) {
        if (Date.now() > deadline) throw error;
        await new Promise((r) => setTimeout(r, 250));
      }
    }
  }
  async function streamRun(runId: string, n: number): Promise<void> {
    runsStarted++;
    published.set(runId, 0);
    await publish('evals.run.requested', { run_id: runId, suite_key: 'faults', subject_kind: 'agent', subject_id: 'fault-test', source: 'sandbox' });
    for (let start = 0; start < n; start += 500) {
      const chunk = Array.from({ length: Math.min(500, n - start) }, (_, k) => start + k);
      await Promise.all(chunk.map((i) => publish('evals.output.submitted', { run_id: runId, case_id: `c${i}`, output: outputFor(i) })));
      published.set(runId, start + chunk.length);
    }
    await publish('evals.run.sealed', { run_id: runId });
  }
  const resultOf = (runId: string) =>
    eventually(async () => (await query('SELECT result FROM eval_results WHERE run_id = $1', [runId]))?.[0]?.result, STEP_TIMEOUT, `EvalResult of ${runId}`);
  const evidenceCount = async (runId: string) => Number((await query('SELECT count(*) AS n FROM evidence WHERE run_id = $1', [runId]))?.[0]?.n ?? -1);
  /** A share of the outputs published: ingestion, the worker and the read model all busy with the run. */
  const published_ = (share: number) => (runId: string) =>
    eventually(async () => ((published.get(runId) ?? 0) >= CASES * share ? true : undefined), 180_000, `${share * 100}% of ${runId} published`);
  const halfPublished = published_(0.5);
  /** For a server's stop, which takes a few seconds to land: early enough to hit the run's middle. */
  const quarterPublished = published_(0.25);
  const firstEvidence = (runId: string) => eventually(async () => ((await evidenceCount(runId)) > 0 ? true : undefined), 180_000, `first evidence of ${runId}`);
  const runScored = (runId: string) =>
    eventually(async () => (Number((await query(`SELECT count(*) AS n FROM events WHERE stream_id = $1 AND type = 'run.scored'`, [`run-${runId}`]))?.[0]?.n ?? 0) > 0 ? true : undefined), STEP_TIMEOUT, `run.scored of ${runId}`);

  /** Every invariant of one disturbed run against the undisturbed one; returns them as the report says them. */
  async function checkInvariants(runId: string, result: any): Promise<string> {
    expect(await count('SELECT count(*) AS n FROM evidence WHERE run_id = $1', [runId])).toBe(CASES);
    expect(result.metrics).toEqual(baseline.result.metrics);
    expect(result.score).toBe(baseline.result.score);
    expect(result.passed).toBe(baseline.result.passed);
    const same = await count(
      `SELECT count(*) AS n FROM evidence x JOIN evidence y ON y.case_id = x.case_id AND y.run_id = $2
        WHERE x.run_id = $1 AND x.passed = y.passed AND x.score = y.score AND x.scorer = y.scorer`,
      [runId, baseline.runId],
    );
    expect(same).toBe(CASES);
    const announced = await count(`SELECT coalesce(sum((data->>'n')::int), 0) AS n FROM events WHERE type = 'cases.scored' AND data->>'run_id' = $1`, [runId]);
    const scored = await count(`SELECT count(*) AS n FROM events WHERE stream_id = $1 AND type = 'run.scored'`, [`run-${runId}`]);
    const outbox = await count(`SELECT count(*) AS n FROM outbox WHERE subject LIKE '%result.recorded' AND payload->'data'->>'run_id' = $1`, [runId]);
    expect({ announced, scored, outbox }).toEqual({ announced: CASES, scored: 1, outbox: 1 });
    const letters = await query<{ code: string; n: string }>('SELECT code, count(*) AS n FROM dead_letters GROUP BY code');
    expect(letters).toEqual([]);
    return `evidence ${CASES}/${CASES}, aggregate = undisturbed, ${same} cases alike, announced ${announced}, run.scored 1, result outbox 1, dead letters 0`;
  }

  /**
   * One disturbed run: streams it, waits for `trigger` (the first evidence: mid-run), injects the fault -
   * `inject` returns once the component is back - and checks the invariants once the EvalResult is there.
   */
  async function disturbedRun(fault: string, inject: (markDown: () => Promise<void>) => Promise<void>, trigger: (runId: string) => Promise<unknown>, stopsServer = false): Promise<void> {
    // Only a server's restart could fail somebody else's tests: those wait for the machine to be quiet.
    if (stopsServer) await waitUntilAlone(5 * 60_000);
    const runId = `${fault.replace(/[^a-z0-9]+/gi, '-').toLowerCase()}-${suffix}`;
    const t0 = Date.now();
    const streaming = streamRun(runId, CASES);
    streaming.catch(() => undefined);
    await trigger(runId);
    if (stopsServer && otherTestRuns().length > 0) throw new Error(`another test run started: not injecting ${fault} under it`);
    const progress = async () => `${published.get(runId)}/${CASES} published, ${await evidenceCount(runId)} scored`;
    let at = await progress();
    const injectedAt = Date.now();
    // A server's stop takes a moment to land (pg_ctlcluster is a script): where the run was once it is down.
    await inject(async () => {
      at = `${await progress()} once down`;
    });
    const backAt = Date.now();
    await streaming;
    const result = await resultOf(runId);
    const doneAt = Date.now();
    const invariants = await checkInvariants(runId, result);
    rows.push({ fault, runMs: doneAt - t0, delayMs: doneAt - t0 - baseline.ms, downMs: backAt - injectedAt, toResultMs: doneAt - backAt, at, invariants });
  }

  const killApp = (app: AppName) => async () => {
    await cluster.stop(app, 'SIGKILL');
    // Restarted at once, as a supervisor (systemd, Kubernetes) would.
    await cluster.start(app);
  };
  const restartServer = (service: MachineService, downMs: number) => async (markDown: () => Promise<void>) => {
    await service.stop();
    // The test's own pool is down with it: the evidence count reads -1 then.
    await markDown();
    try {
      await new Promise((r) => setTimeout(r, downMs));
    } finally {
      await service.start();
    }
  };
  const service = (name: MachineService['name']) => services.find((s) => s.name === name)!;

  it('an undisturbed run, the reference', async () => {
    const runId = `undisturbed-${suffix}`;
    const t0 = Date.now();
    await streamRun(runId, CASES);
    const result = await resultOf(runId);
    baseline = { runId, ms: Date.now() - t0, result };
    expect(result.metrics).toMatchObject({ n: CASES, missing_outputs: 0, passed: CASES - Math.ceil(CASES / 3) });
    expect(await count('SELECT count(*) AS n FROM evidence WHERE run_id = $1', [runId])).toBe(CASES);
  }, STEP_TIMEOUT);

  it('SIGKILL of ingestion mid-run', () => disturbedRun('SIGKILL ingestion', killApp('ingestion'), halfPublished), TEST_TIMEOUT);
  it('SIGKILL of the scoring worker mid-run', () => disturbedRun('SIGKILL scoring-worker', killApp('scoring-worker'), firstEvidence), TEST_TIMEOUT);
  it('SIGKILL of the read model mid-run', () => disturbedRun('SIGKILL read-model', killApp('read-model'), halfPublished), TEST_TIMEOUT);
  it('SIGKILL of the read model right as run.scored appears', () => disturbedRun('SIGKILL read-model at run.scored', killApp('read-model'), runScored), TEST_TIMEOUT);
  it('SIGKILL of regression mid-run', () => disturbedRun('SIGKILL regression', killApp('regression'), halfPublished), TEST_TIMEOUT);
  it('NATS restarted mid-run (down 5 s)', () => disturbedRun('NATS restarted', restartServer(service('NATS'), 5_000), quarterPublished, true), TEST_TIMEOUT);
  it('PostgreSQL restarted mid-run (down 5 s)', () => disturbedRun('PostgreSQL restarted', restartServer(service('PostgreSQL'), 5_000), quarterPublished, true), TEST_TIMEOUT);
  it('Redis stopped for 10 s and started mid-run', () => disturbedRun('Redis stopped 10 s', restartServer(service('Redis'), 10_000), quarterPublished, true), TEST_TIMEOUT);

  it('at the end: as many evals.result.recorded messages on NATS as EvalResults and outbox rows, every row relayed', async () => {
    const results = await count('SELECT count(*) AS n FROM eval_results');
    // Every run started completes, a fault's whose injection was skipped too.
    expect(results).toBe(runsStarted);
    const outbox = await count(`SELECT count(*) AS n FROM outbox WHERE subject LIKE '%result.recorded'`);
    expect(outbox).toBe(results);
    await eventually(async () => ((await count(`SELECT count(*) AS n FROM outbox WHERE published_at IS NULL`)) === 0 ? true : undefined), 120_000, 'outbox relayed');
    const info = await jsm.streams.info(`${streamPrefix}EVALS_OUTBOUND`, { subjects_filter: '>' });
    const published = info.state.subjects?.[subject('evals.result.recorded')] ?? 0;
    expect(published).toBe(results);
    rows.push({ fault: '(all runs)', runMs: 0, delayMs: 0, downMs: 0, toResultMs: 0, at: '', invariants: `${results} runs = ${results} EvalResults = ${outbox} outbox rows = ${published} messages on NATS` });
  }, 180_000);
});

function formatReport(rows: Row[], baselineMs: number | undefined, totalMs: number): string {
  const s = (ms: number) => (ms / 1000).toFixed(1);
  const lines = [
    `Fault suite: ${CASES} cases a run; undisturbed run ${baselineMs === undefined ? '?' : s(baselineMs)} s; whole suite ${s(totalMs)} s`,
    '',
    '| fault | hit when | run (s) | longer than undisturbed (s) | down (s) | back to EvalResult (s) | invariants held |',
    '|---|---|---|---|---|---|---|',
    ...rows.map((r) => (r.runMs === 0 ? `| ${r.fault} | | | | | | ${r.invariants} |` : `| ${r.fault} | ${r.at} | ${s(r.runMs)} | ${s(r.delayMs)} | ${s(r.downMs)} | ${s(r.toResultMs)} | ${r.invariants} |`)),
  ];
  return lines.join('\n');
}
