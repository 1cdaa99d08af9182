/**
 * The scoring worker's judge path (S3, J1-J3, J6, GT2, GT4, D1) on the real PostgreSQL, NATS JetStream and
 * Redis, with the real LangChain client talking to the scripted OpenAI-compatible server.
 */
import { execFileSync } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { jetstream, jetstreamManager, type JetStreamClient, type JetStreamManager } from '@nats-io/jetstream';
import { connect, type NatsConnection } from '@nats-io/transport-node';
import Redis from 'ioredis';
import type { DataSource } from 'typeorm';
import { JetStreamBus, STREAMS, streamOf, subjectOf, type BusNames } from '@evals/bus';
import { RUN_EVENTS, WORK_SUBJECTS, encodeWork, runStreamId, type CasesScoredV2, type RunOpenedV1, type RunScoredV1, type WorkItem } from '@evals/domain';
import { loadJudgeConfig, verdictCacheKey, type JudgeAdapterConfig } from '@evals/judge';
import { EventStore, SuiteEvents, SuiteRepository, createDataSource, migrate, type NewEvent, type SuiteCaseRecord } from '@evals/persistence';
import { llmJudgeScorer } from '@evals/scorers';
import { REASONING_MARKER, candidateOutputOf, completion, startFakeOpenAI, verdictReply, type FakeOpenAI, type FakeScript } from '../../../test/support/fake-openai';
import { createTestSchema, testBusNames, testRedisPrefix, type TestSchema } from '../../../test/support/isolation';
import { testServers } from '../../../test/support/servers';
import { createWorkerJudge, type WorkerJudge } from './judge-scoring';
import type { BatchOutcome } from './scoring.service';
import { composeScoringService } from './worker.module';
import { workerSettings, type WorkerSettings } from './settings';
import { WorkConsumer } from './work-consumer';

const HMAC_SECRET = 'test-secret-0123456789abcdef0123456789';
const MODEL = 'gpt-4o-2024-08-06';
/** D1 canary in every output: it must reach the judge and nothing else. */
const CANARY = `OUTPUT-CANARY-${randomUUID().replace(/-/g, '')}`;
/** The fake's default usage per call and the pricing below: (321 * 2.5 + 54 * 10) / 1e6 dollars. */
const COST_PER_CALL = (321 * 2.5 + 54 * 10) / 1_000_000;

/** A judge that grades by what the output says: GOOD pass 0.9, MEH pass 0.3, BAD fail 0.1, BROKEN malformed. */
const byContent: FakeScript = (request) => {
  const output = candidateOutputOf(request) ?? '';
  if (output.includes('BROKEN')) return completion(`${REASONING_MARKER}: hmm.\n{"verdict": pass, "score": 0.9`);
  if (output.includes('GOOD')) return completion(verdictReply('pass', 0.9));
  if (output.includes('MEH')) return completion(verdictReply('pass', 0.3));
  return completion(verdictReply('fail', 0.1));
};

async function waitFor<T>(probe: () => Promise<T | undefined | false> | T | undefined | false, what: string, timeoutMs = 20_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (value !== undefined && value !== false) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

jest.setTimeout(60_000);

describe('integration: the scoring worker grades llm_judge cases through the judge (S3, J1-J3, J6, GT2, GT4)', () => {
  let schema: TestSchema;
  let ds: DataSource;
  let nc: NatsConnection;
  let js: JetStreamClient;
  let jsm: JetStreamManager;
  let names: BusNames;
  let bus: JetStreamBus;
  let settings: WorkerSettings;
  let fake: FakeOpenAI;
  let redis: Redis;
  let prefix: string;
  let consumers: WorkConsumer[] = [];
  let judges: WorkerJudge[] = [];
  let outcomes: BatchOutcome[] = [];
  const logLines: string[] = [];
  const store = new EventStore();
  const suites = new SuiteRepository();

  beforeAll(async () => {
    nc = await connect({ servers: testServers.nats.url });
    js = jetstream(nc);
    jsm = await jetstreamManager(nc);
    fake = await startFakeOpenAI(byContent);
    redis = new Redis(testServers.redis.url, { maxRetriesPerRequest: 1 });
    schema = await createTestSchema('wjudge');
    ds = createDataSource({ url: testServers.postgres.url, schema: schema.schema, poolSize: 8 });
    await ds.initialize();
    await migrate(ds);
  });

  beforeEach(async () => {
    const t = testBusNames('wj');
    names = { streamPrefix: `WJ_${t.suffix}_`, subjectPrefix: `wj_${t.suffix}` };
    bus = await JetStreamBus.connect(nc, names, { storage: 'memory' });
    await bus.ensureTopology();
    settings = workerSettings({ names, maxBatch: 50, hmacSecret: HMAC_SECRET, retryDelayMs: 50, sealWaitMs: 50, deadLetterAfter: 3, judgeHeartbeatMs: 200 });
    prefix = testRedisPrefix('wjudge');
    fake.reset();
    fake.script(byContent);
    consumers = [];
    judges = [];
    outcomes = [];
  });

  afterEach(async () => {
    await Promise.all(consumers.map((c) => c.stop()));
    await Promise.all(judges.map((j) => j.close()));
    for (const spec of STREAMS) await jsm.streams.delete(streamOf(names, spec.name)).catch(() => undefined);
  });

  afterAll(async () => {
    // D1, J2: after every test of this file, neither the output nor the judge's reasoning is anywhere in
    // the schema (pg_dump of all its data), the worker's log lines or Redis.
    const dump = execFileSync('pg_dump', ['--data-only', '--schema', `${schema.schema}*`, testServers.postgres.url], { encoding: 'utf8', maxBuffer: 256 * 1024 * 1024 });
    expect(dump).toContain('judge_pass');
    expect(dump).not.toContain(REASONING_MARKER);
    expect(dump).not.toContain(CANARY);
    const logs = logLines.join('\n');
    expect(logs).not.toContain(REASONING_MARKER);
    expect(logs).not.toContain(CANARY);
    await ds.destroy();
    await schema.drop();
    await redis.quit();
    await fake.close();
    await nc.close();
  });

  // --- helpers ---------------------------------------------------------------------------------------------

  function judgeConfig(env: Record<string, string> = {}): JudgeAdapterConfig {
    return loadJudgeConfig({
      JUDGE_PROVIDER: 'openai',
      JUDGE_MODEL: MODEL,
      JUDGE_BASE_URL: fake.baseUrl,
      JUDGE_API_KEY: 'test',
      JUDGE_INPUT_USD_PER_MTOK: '2.5',
      JUDGE_OUTPUT_USD_PER_MTOK: '10',
      JUDGE_MAX_RETRIES: '0',
      ...env,
    })!;
  }

  async function startWorker(options: { judge?: 'none' | JudgeAdapterConfig; cache?: boolean } = {}): Promise<void> {
    const config = options.judge === 'none' ? null : (options.judge ?? judgeConfig());
    const judge = createWorkerJudge(config, options.cache === false ? {} : { redisUrl: testServers.redis.url, cachePrefix: prefix, cacheTtlSeconds: 300, keySecret: HMAC_SECRET });
    if (judge) judges.push(judge);
    const service = composeScoringService(ds, bus, settings, { now: () => new Date() }, { uuid: () => randomUUID() }, judge);
    const logger = { event: (level: string, msg: string, fields: object = {}) => void logLines.push(JSON.stringify({ level, msg, ...fields })) };
    const consumer = new WorkConsumer(bus, settings, service, logger, { onBatch: (o) => outcomes.push(o) });
    consumers.push(consumer);
    await consumer.start();
  }

  /** A suite of `judged` llm_judge cases j1..jN (with input and expected) and one `exact` case x1. */
  async function createSuite(judged: number): Promise<string> {
    const key = `judge-${randomUUID().slice(0, 8)}`;
    const cases = [
      ...Array.from({ length: judged }, (_, i) => ({ case_id: `j${i + 1}`, input: `question ${i + 1}`, expected: 'a polite refund', scorer: null, tags: [] })),
      { case_id: 'x1', input: 'q', expected: 'yes', scorer: { type: 'exact' }, tags: [] },
    ];
    await suites.insert(ds, {
      suite_key: key,
      version: 1,
      content_hash: 'b'.repeat(64),
      description: null,
      default_scorer: { type: 'llm_judge', rubric: 'The answer offers a refund politely.', min_score: 0.5 },
      pass_threshold: 0.5,
      regression_threshold: 0.1,
      golden_fixtures: false,
      case_count: cases.length,
      cases,
    });
    return key;
  }

  /**
   * Issue 30: a suite version of `project`, written to the log as the ingestion publishes it (the worker
   * folds only its stream): the same key and version may be another project's too.
   */
  async function publishSuite(project: string, key: string, defaultScorer: Record<string, unknown>, cases: SuiteCaseRecord[]): Promise<void> {
    const events = new SuiteEvents(store);
    await ds.transaction(async (tx) => {
      const head = { project, suite_key: key, version: 1, content_hash: 'b'.repeat(64), description: null, default_scorer: defaultScorer, pass_threshold: 0.5, regression_threshold: 0.1, golden_fixtures: false };
      await events.published(tx, { ...head, case_count: cases.length, created_at: new Date().toISOString() });
      await events.pages(tx, project, key, 1, cases, 0);
    });
  }

  function event(type: string, data: object): NewEvent {
    const id = randomUUID();
    return { type, version: 1, data, metadata: { message_id: id, correlation_id: id, causation_id: id, occurred_at: new Date().toISOString() } };
  }

  async function openRun(suiteKey: string, caseCount: number, extra: Partial<RunOpenedV1> = {}): Promise<string> {
    const runId = `run-${randomUUID()}`;
    const opened: RunOpenedV1 = {
      run_id: runId,
      suite_key: suiteKey,
      suite_version: 1,
      suite_content_hash: 'b'.repeat(64),
      pass_threshold: 0.5,
      regression_threshold: 0.1,
      subject_kind: 'agent',
      subject_id: 'agent-1',
      variant: null,
      baseline_run_id: null,
      source: 'ci',
      case_count: caseCount,
      scorer_versions: { llm_judge: '1.0.0', exact: '1.0.0' },
      ...extra,
    };
    await store.append(ds, runStreamId(runId), 0, [event(RUN_EVENTS.opened, opened), event(RUN_EVENTS.sealed, { run_id: runId })]);
    return runId;
  }

  /** Publishes a work message; returns its message id. */
  async function publish(type: typeof WORK_SUBJECTS.score | typeof WORK_SUBJECTS.seal, data: object): Promise<string> {
    const id = randomUUID();
    const payload = encodeWork({ type, version: 1, data, metadata: { message_id: id, correlation_id: id, causation_id: id, occurred_at: new Date().toISOString() } } as never);
    await js.publish(subjectOf(names, type), payload, { msgID: randomUUID() });
    return id;
  }

  async function scoreAndSeal(runId: string, items: WorkItem[]): Promise<RunScoredV1> {
    await publish(WORK_SUBJECTS.score, { run_id: runId, items });
    await publish(WORK_SUBJECTS.seal, { run_id: runId });
    const [scored] = await waitFor(async () => {
      const rows: Array<{ data: RunScoredV1 }> = await ds.query(`SELECT data FROM events WHERE stream_id = $1 AND type = $2`, [runStreamId(runId), RUN_EVENTS.scored]);
      return rows.length === 1 ? rows : undefined;
    }, 'run.scored');
    return scored.data;
  }

  async function evidenceOf(runId: string): Promise<any[]> {
    const rows = await ds.query(
      `SELECT case_id, scorer, passed, score, label, output_chars, judge_model, prompt_version, judge_cost_usd, judge_input_tokens, judge_output_tokens, judge_cached
       FROM evidence WHERE run_id = $1 ORDER BY case_id`,
      [runId],
    );
    return rows.map((r: any) => ({ ...r, score: Number(r.score), judge_cost_usd: r.judge_cost_usd === null ? null : Number(r.judge_cost_usd) }));
  }

  async function redisEntries(): Promise<Array<[string, string | null]>> {
    const keys: string[] = [];
    let cursor = '0';
    do {
      const [next, batch] = await redis.scan(cursor, 'MATCH', `${prefix}*`, 'COUNT', 1000);
      cursor = next;
      keys.push(...batch);
    } while (cursor !== '0');
    return Promise.all(keys.map(async (k) => [k, await redis.get(k)] as [string, string | null]));
  }

  // --- tests -----------------------------------------------------------------------------------------------

  it('S3/J3: grades each llm_judge case with the rubric, input and expected; an unparseable verdict fails with its code; cost never zero', async () => {
    const key = await createSuite(4);
    const runId = await openRun(key, 5);
    await startWorker();
    const outputs = { j1: `GOOD ${CANARY}`, j2: `MEH ${CANARY}`, j3: `BAD ${CANARY}`, j4: `BROKEN ${CANARY}` };
    const scored = await scoreAndSeal(runId, [...Object.entries(outputs).map(([case_id, output]) => ({ case_id, output })), { case_id: 'x1', output: 'yes' }]);

    const rows = await evidenceOf(runId);
    expect(rows.map((r) => [r.case_id, r.passed, r.score, r.label])).toEqual([
      ['j1', true, 0.9, 'judge_pass'],
      ['j2', false, 0.3, 'judge_below_min_score'],
      ['j3', false, 0.1, 'judge_fail'],
      ['j4', false, 0, 'judge_unparseable'],
      ['x1', true, 1, 'match'],
    ]);
    for (const r of rows.filter((x) => x.scorer === 'llm_judge')) {
      expect(r).toMatchObject({ judge_model: MODEL, prompt_version: 'judge-v1', judge_input_tokens: 321, judge_output_tokens: 54, judge_cached: null });
      // An unparseable reply was paid for too: its cost is recorded, never zero (pricing set).
      expect(r.judge_cost_usd).toBeCloseTo(COST_PER_CALL, 12);
      expect(r.output_chars).toBe(outputs[r.case_id as keyof typeof outputs].length);
    }
    expect(rows.find((r) => r.case_id === 'x1')).toMatchObject({ judge_model: null, judge_cost_usd: null });

    // The judge saw the case's rubric, task input and expected answer beside the output.
    expect(fake.requestCount).toBe(4);
    const j1 = fake.requests.find((r) => candidateOutputOf(r)?.startsWith('GOOD'))!;
    const user = j1.messages.find((m) => m.role === 'user')!.content;
    expect(user).toContain('The answer offers a refund politely.');
    expect(user).toContain('<task_input>\nquestion 1\n</task_input>');
    expect(user).toContain('a polite refund');
    expect(j1.model).toBe(MODEL);

    // cases.scored (v2) counts the rows it announces - the judge pin of each is its evidence row, above;
    // run.scored sums the run's usage.
    const events: Array<{ data: CasesScoredV2 }> = await ds.query(`SELECT data FROM events WHERE type = $1 AND data->>'run_id' = $2`, [RUN_EVENTS.casesScored, runId]);
    expect(events.reduce((n, e) => n + e.data.n, 0)).toBe(rows.filter((r) => r.label !== 'missing_output').length);
    expect(events.reduce((n, e) => n + e.data.passed, 0)).toBe(rows.filter((r) => r.passed && r.label !== 'missing_output').length);
    expect(scored).toMatchObject({ n: 5, passed: 2 });
    expect(scored.judge).toEqual({
      cases: 4,
      calls: 4,
      errors: 1,
      credential_missing: 0,
      not_configured: 0,
      skipped: 0,
      cache_hits: 0,
      cache_misses: 0,
      input_tokens: 4 * 321,
      output_tokens: 4 * 54,
      cost_usd: expect.closeTo(4 * COST_PER_CALL, 12),
      model: MODEL,
      prompt_version: 'judge-v1',
    });
    expect(outcomes.reduce((n, o) => n + (o.judge.labels['judge_unparseable'] ?? 0), 0)).toBe(1);
  });

  it('J1: at most JUDGE_CONCURRENCY calls in flight; a redelivered output is not judged (nor paid for) again', async () => {
    const key = await createSuite(8);
    const runId = await openRun(key, 9);
    fake.script((request, index) => ({ ...byContent(request, index), delayMs: 40 }) as never);
    await startWorker({ judge: judgeConfig({ JUDGE_CONCURRENCY: '2' }) });
    const items = Array.from({ length: 8 }, (_, i) => ({ case_id: `j${i + 1}`, output: `GOOD ${i} ${CANARY}` }));
    await publish(WORK_SUBJECTS.score, { run_id: runId, items });
    await waitFor(async () => (await evidenceOf(runId)).length === 8, '8 judged rows');
    expect(fake.maxConcurrent).toBe(2);
    expect(fake.requestCount).toBe(8);

    await publish(WORK_SUBJECTS.score, { run_id: runId, items: items.slice(0, 3) });
    await waitFor(() => outcomes.reduce((n, o) => n + o.duplicates, 0) >= 3, 'the copies seen as duplicates');
    expect(fake.requestCount).toBe(8);
  });

  it('a different second output for a judged case is dead-lettered DUPLICATE_OUTPUT without a judge call; the same output again is silent', async () => {
    const key = await createSuite(2);
    const runId = await openRun(key, 3);
    await startWorker({ cache: false });
    await publish(WORK_SUBJECTS.score, { run_id: runId, items: [{ case_id: 'j1', output: `GOOD ${CANARY}` }] });
    await waitFor(async () => (await evidenceOf(runId)).length === 1, 'j1 judged');
    expect(fake.requestCount).toBe(1);

    const again = await publish(WORK_SUBJECTS.score, { run_id: runId, items: [{ case_id: 'j1', output: `GOOD ${CANARY}` }] });
    const other = await publish(WORK_SUBJECTS.score, {
      run_id: runId,
      items: [
        { case_id: 'j1', output: `BAD ${CANARY}` },
        { case_id: 'j2', output: `MEH ${CANARY}` },
      ],
    });
    await waitFor(async () => (await evidenceOf(runId)).length === 2, 'j2 judged');
    const letters = await waitFor(async () => {
      const l = await ds.query(`SELECT code, reason, message_id FROM dead_letters WHERE message_id = ANY($1)`, [[again, other]]);
      return l.length > 0 ? l : undefined;
    }, 'the DUPLICATE_OUTPUT letter');
    expect(letters).toEqual([{ code: 'DUPLICATE_OUTPUT', message_id: other, reason: `data.items[].case_id: run ${runId} already has another output for 1: j1` }]);
    // Only j2 was judged: neither the copy nor the second output of j1 was sent to (or paid to) the judge.
    expect(fake.requestCount).toBe(2);
    expect((await evidenceOf(runId)).map((r) => [r.case_id, r.label])).toEqual([
      ['j1', 'judge_pass'],
      ['j2', 'judge_below_min_score'],
    ]);
    expect(outcomes.reduce((n, o) => n + o.duplicates, 0)).toBe(1);
  });

  it('J6: a gate run (judge_cache) records verdicts and answers a repeat from the cache with no HTTP call; an ordinary run calls again', async () => {
    const key = await createSuite(3);
    await startWorker();
    const items = [
      { case_id: 'j1', output: `GOOD ${CANARY}` },
      { case_id: 'j2', output: `BAD ${CANARY}` },
      { case_id: 'j3', output: `BROKEN ${CANARY}` },
    ];
    const first = await scoreAndSeal(await openRun(key, 4, { judge_cache: true }), items);
    expect(first.judge).toMatchObject({ calls: 3, cache_hits: 0, cache_misses: 3, errors: 1 });
    expect(fake.requestCount).toBe(3);
    // Errors are not recorded: two verdicts, each `{verdict, score}` and nothing else (D1, J2).
    const entries = await redisEntries();
    expect(entries).toHaveLength(2);
    for (const [k, v] of entries) {
      expect(k).toMatch(new RegExp(`^${prefix}[0-9a-f]{64}$`));
      expect(Object.keys(JSON.parse(v!)).sort()).toEqual(['score', 'verdict']);
      expect(`${k}${v}`).not.toContain(CANARY);
      expect(`${k}${v}`).not.toContain(REASONING_MARKER);
    }

    fake.reset();
    const secondRun = await openRun(key, 4, { judge_cache: true });
    const second = await scoreAndSeal(secondRun, items);
    expect(fake.requestCount).toBe(1); // only the unparseable one, which was never recorded
    expect(second.judge).toMatchObject({ calls: 1, cache_hits: 2, cache_misses: 1, input_tokens: 321, cost_usd: expect.closeTo(COST_PER_CALL, 12) });
    const rows = await evidenceOf(secondRun);
    expect(rows.filter((r) => r.judge_cached === true).map((r) => [r.case_id, r.label, r.judge_cost_usd])).toEqual([
      ['j1', 'judge_pass', 0],
      ['j2', 'judge_fail', 0],
    ]);

    fake.reset();
    const ordinary = await scoreAndSeal(await openRun(key, 4), items);
    expect(fake.requestCount).toBe(3);
    expect(ordinary.judge).toMatchObject({ calls: 3, cache_hits: 0, cache_misses: 0 });
  });

  it('GT4: a run opened with judge_skip makes no judge call; its judge cases fail with that label', async () => {
    const key = await createSuite(2);
    await startWorker();
    const scored = await scoreAndSeal(await openRun(key, 3, { judge_skip: 'budget_blocked' } as Partial<RunOpenedV1>), [
      { case_id: 'j1', output: `GOOD ${CANARY}` },
      { case_id: 'j2', output: `GOOD ${CANARY}` },
      { case_id: 'x1', output: 'yes' },
    ]);
    expect(fake.requestCount).toBe(0);
    expect(scored).toMatchObject({ n: 3, passed: 1 });
    expect(scored.judge).toMatchObject({ cases: 2, calls: 0, skipped: 2, cost_usd: 0, model: null });

    // The skip label wins even where no judge is configured: the gate's reason is what the evidence says.
    await Promise.all(consumers.map((c) => c.stop()));
    consumers = [];
    await startWorker({ judge: 'none' });
    const runId = await openRun(key, 3, { judge_skip: 'judge_uncalibrated' } as Partial<RunOpenedV1>);
    await scoreAndSeal(runId, [{ case_id: 'j1', output: `GOOD ${CANARY}` }]);
    expect((await evidenceOf(runId)).map((r) => [r.case_id, r.label])).toEqual([
      ['j1', 'judge_uncalibrated'],
      ['j2', 'missing_output'],
      ['x1', 'missing_output'],
    ]);
    expect(fake.requestCount).toBe(0);
  });

  it('GT2: no judge credential fails every judge case judge_credential_missing with no HTTP call; no judge at all keeps judge_not_configured', async () => {
    const key = await createSuite(2);
    const noKey = judgeConfig();
    await startWorker({ judge: { ...noKey, apiKey: undefined } });
    const items = [
      { case_id: 'j1', output: `GOOD ${CANARY}` },
      { case_id: 'j2', output: `GOOD ${CANARY}` },
    ];
    const missing = await scoreAndSeal(await openRun(key, 3), items);
    expect(fake.requestCount).toBe(0);
    expect(missing).toMatchObject({ passed: 0 });
    expect(missing.judge).toMatchObject({ cases: 2, calls: 0, errors: 0, credential_missing: 2, model: MODEL, prompt_version: 'judge-v1' });

    await Promise.all(consumers.map((c) => c.stop()));
    consumers = [];
    await startWorker({ judge: 'none' });
    const runId = await openRun(key, 3);
    const none = await scoreAndSeal(runId, items);
    expect(fake.requestCount).toBe(0);
    expect((await evidenceOf(runId)).map((r) => r.label)).toEqual(['judge_not_configured', 'judge_not_configured', 'missing_output']);
    expect(none.judge).toMatchObject({ cases: 2, calls: 0, not_configured: 2, credential_missing: 0, model: null });
  });

  describe('issue 30: two projects on the same suite key (docs/adr/0009-projects.md)', () => {
    const project = (id: string): Partial<RunOpenedV1> => ({ project: id });

    it("scores each run against its own project's suite version, though both have the same key, version and case ids", async () => {
      const key = `shared-${randomUUID().slice(0, 8)}`;
      const cases = (expected: string) => ['x1', 'x2'].map((case_id) => ({ case_id, input: 'q', expected, scorer: null, tags: [] }));
      // The same key and version: `default` expects "alpha", team-b expects "beta".
      await publishSuite('default', key, { type: 'exact' }, cases('alpha'));
      await publishSuite('team-b', key, { type: 'exact' }, cases('beta'));
      await startWorker();
      const items = [
        { case_id: 'x1', output: 'alpha' },
        { case_id: 'x2', output: 'beta' },
      ];
      // The default run first, so the worker's suite cache holds `default`'s version when team-b's run comes.
      const mine = await openRun(key, 2);
      await scoreAndSeal(mine, items);
      const theirs = await openRun(key, 2, project('team-b'));
      await scoreAndSeal(theirs, items);
      const labels = async (runId: string) => (await evidenceOf(runId)).map((r) => [r.case_id, r.label]);
      expect(await labels(mine)).toEqual([
        ['x1', 'match'],
        ['x2', 'mismatch'],
      ]);
      expect(await labels(theirs)).toEqual([
        ['x1', 'mismatch'],
        ['x2', 'match'],
      ]);
      // A project without that suite key is not scored against another project's: its version is unknown.
      const orphan = await openRun(key, 2, project('team-c'));
      await publish(WORK_SUBJECTS.score, { run_id: orphan, items });
      const [letter] = await waitFor(async () => {
        const rows: Array<{ code: string }> = await ds.query(`SELECT code FROM dead_letters WHERE reason LIKE $1`, [`%${orphan}%`]);
        return rows.length > 0 ? rows : undefined;
      }, 'the dead letter of the run of team-c');
      expect(letter.code).toBe('UNKNOWN_SUITE_VERSION');
      expect(await evidenceOf(orphan)).toEqual([]);
    });

    it("a gate run's verdict cache is per project: another project's recorded verdict is a miss; default keeps its keys", async () => {
      const key = `judged-${randomUUID().slice(0, 8)}`;
      const rubric = 'The answer offers a refund politely.';
      const cases = [{ case_id: 'j1', input: 'question 1', expected: 'a polite refund', scorer: null, tags: [] }];
      await publishSuite('default', key, { type: 'llm_judge', rubric, min_score: 0.5 }, cases);
      await publishSuite('team-b', key, { type: 'llm_judge', rubric, min_score: 0.5 }, cases);
      await startWorker();
      const items = [{ case_id: 'j1', output: `GOOD ${CANARY}` }];
      const gate = { judge_cache: true };
      const keyOf = (extra: { project?: string }) =>
        `${prefix}${verdictCacheKey({ request: { output: items[0].output, rubric, expected: 'a polite refund', input: 'question 1' }, model: MODEL, prompt_version: 'judge-v1', scorer_version: llmJudgeScorer.version, repeat: 0, ...extra }, HMAC_SECRET)}`;

      const first = await scoreAndSeal(await openRun(key, 1, gate), items);
      expect(first.judge).toMatchObject({ calls: 1, cache_hits: 0, cache_misses: 1 });
      // The default project's entry is keyed exactly as before projects: no project in the key material.
      expect((await redisEntries()).map(([k]) => k)).toEqual([keyOf({})]);

      // team-b's gate judges the same output with the same rubric: a miss and a call, and an entry of its own.
      const theirs = await scoreAndSeal(await openRun(key, 1, { ...gate, ...project('team-b') }), items);
      expect(theirs.judge).toMatchObject({ calls: 1, cache_hits: 0, cache_misses: 1 });
      expect(fake.requestCount).toBe(2);
      expect((await redisEntries()).map(([k]) => k).sort()).toEqual([keyOf({}), keyOf({ project: 'team-b' })].sort());

      // Each project's next gate run hits its own entry, with no call.
      const again = await scoreAndSeal(await openRun(key, 1, { ...gate, ...project('team-b') }), items);
      const mineAgain = await scoreAndSeal(await openRun(key, 1, gate), items);
      expect([again.judge, mineAgain.judge]).toMatchObject([
        { calls: 0, cache_hits: 1 },
        { calls: 0, cache_hits: 1 },
      ]);
      expect(fake.requestCount).toBe(2);
    });
  });
});
