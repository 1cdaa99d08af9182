import { createHash } from 'node:crypto';
import { Client } from 'pg';
import { buildJudgeMessages, judgeMessageChars } from '@evals/domain';
import { startCluster, type AppCluster } from '../support/app-processes';
import { candidateOutputOf, completion, errorReply, startFakeOpenAI, verdictReply, type FakeOpenAI, type FakeScript } from '../support/fake-openai';
import { createTestSchema, deleteTestStreams, testRedisPrefix, type TestSchema, uniqueSuffix } from '../support/isolation';

/**
 * Issue 13, parts 3, 4 and the metrics half of 5, through the whole service: the scoring worker calls a
 * scripted OpenAI-compatible judge over real HTTP with the real LangChain client.
 *
 * - Flaky verdicts: a suite with `repeats: 3` whose judge flips its verdict on given outputs -> the run's
 *   stability and unstable case ids exactly as scripted, the gate warns `judge_unstable`; a stable judge
 *   gives stability 1 and no warning.
 * - Budgets in money: an estimate over what is left blocks with zero judge requests; a throttle judges
 *   exactly the cases that fit; spent grows by the recorded cost (`GET /v1/budgets`); the budget table
 *   renamed away refuses the spend and the ingestion log says why.
 * - `evals_judge_calls_total` counts HTTP calls to the provider (every request the fake server saw from the
 *   worker), not cases.
 */
const MODEL = 'gpt-4o-2024-08-06';
const RUBRIC = 'The answer resolves the request politely.';
const PRICE = { input_per_mtok_usd: 2.5, output_per_mtok_usd: 10 };
/** Tokens the fake server reports per call (fake-openai's `completion` default). */
const USAGE = { prompt_tokens: 321, completion_tokens: 54 };
const COST_PER_CALL = (USAGE.prompt_tokens * PRICE.input_per_mtok_usd + USAGE.completion_tokens * PRICE.output_per_mtok_usd) / 1e6;
const ESTIMATED_OUTPUT_TOKENS = 400;

const sha256 = (t: string) => createHash('sha256').update(t, 'utf8').digest('hex');

/** Outputs containing FLIP get pass, fail, pass, ... on successive requests for that output; FAIL fails; anything else passes. */
function flippingJudge(): FakeScript {
  const seen = new Map<string, number>();
  return (request) => {
    const output = candidateOutputOf(request);
    if (output === null) return errorReply(400, 'not a judge request');
    const n = seen.get(output) ?? 0;
    seen.set(output, n + 1);
    if (output.includes('FLIP')) return completion(verdictReply(n % 2 === 0 ? 'pass' : 'fail', n % 2 === 0 ? 0.9 : 0.1));
    if (output.includes('FAIL')) return completion(verdictReply('fail', 0.1));
    return completion(verdictReply('pass', 0.9));
  };
}

jest.setTimeout(180_000);

describe('e2e: flaky verdicts, budgets in money and honest judge metrics (issue 13 parts 3-5)', () => {
  let schema: TestSchema;
  let cluster: AppCluster;
  let fake: FakeOpenAI;
  let db: Client;
  const suffix = uniqueSuffix();
  const streamPrefix = `E2B_${suffix}_`;
  /** Requests the fake judge received from the regression app (calibration), not the worker. */
  let calibrationRequests = 0;

  beforeAll(async () => {
    fake = await startFakeOpenAI(flippingJudge());
    schema = await createTestSchema('e2b');
    cluster = await startCluster({
      schema: schema.schema,
      streamPrefix,
      subjectPrefix: `e2b_${suffix}`,
      apps: ['ingestion', 'scoring-worker', 'read-model', 'regression'],
      env: {
        JUDGE_PROVIDER: 'openai',
        JUDGE_MODEL: MODEL,
        JUDGE_BASE_URL: fake.baseUrl,
        JUDGE_API_KEY: 'test',
        JUDGE_INPUT_USD_PER_MTOK: String(PRICE.input_per_mtok_usd),
        JUDGE_OUTPUT_USD_PER_MTOK: String(PRICE.output_per_mtok_usd),
        JUDGE_MAX_RETRIES: '0',
        JUDGE_CACHE_PREFIX: testRedisPrefix('e2b'),
        JUDGE_ESTIMATED_REPLY_LENGTH: String(ESTIMATED_OUTPUT_TOKENS),
      },
    });
    db = new Client({ connectionString: schema.url });
    await db.connect();

    // Certify the judge for RUBRIC (J4): 60 labelled items, 12 of them fails, on which it agrees with the humans.
    const items = Array.from({ length: 60 }, (_, i) => {
      const human = i < 12 ? 'fail' : 'pass';
      const output = `calibration item ${i} ${human === 'fail' ? 'FAIL' : 'fine'} ${suffix}`;
      return { item_id: `k${i}`, human, output };
    });
    const set = await call('regression', 'POST', '/v1/calibration-sets', {
      name: 'budget-e2e',
      rubric: RUBRIC,
      items: items.map((i) => ({ item_id: i.item_id, output_hash: sha256(i.output), human_verdict: i.human, output_chars: i.output.length })),
    });
    expect([200, 201]).toContain(set.status);
    const calibrated = await call('regression', 'POST', '/v1/calibrations', { set_id: set.body.set.id, outputs: items.map((i) => ({ item_id: i.item_id, output: i.output })) });
    expect(calibrated.body.status).toBe('certified');
    calibrationRequests = fake.requestCount;
  }, 240_000);

  afterAll(async () => {
    await cluster?.stopAll();
    await deleteTestStreams(streamPrefix);
    await db?.end();
    await schema?.drop();
    await fake?.close();
  });

  async function call(app: 'ingestion' | 'regression' | 'scoring-worker', method: 'GET' | 'POST', route: string, body?: unknown): Promise<{ status: number; body: any; text: string }> {
    const res = await fetch(cluster.url(app, route), {
      method,
      ...(body !== undefined ? { headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) } : {}),
    });
    const text = await res.text();
    let parsed: unknown = null;
    try {
      parsed = text ? JSON.parse(text) : null;
    } catch {
      parsed = null;
    }
    return { status: res.status, body: parsed, text };
  }

  async function pushSuite(key: string, caseIds: readonly string[], repeats?: number): Promise<void> {
    const res = await call('ingestion', 'POST', '/v1/suites', {
      key,
      default_scorer: { type: 'llm_judge', rubric: RUBRIC, ...(repeats ? { repeats } : {}) },
      pass_threshold: 0.5,
      regression_threshold: 0.1,
      cases: caseIds.map((id) => ({ id, input: `request ${id}` })),
    });
    expect([200, 201]).toContain(res.status);
  }

  async function gate(suiteKey: string, outputs: Array<{ case_id: string; output: string }>): Promise<any> {
    const res = await call('ingestion', 'POST', '/v1/gate', { suite_key: suiteKey, subject_kind: 'agent', subject_id: 'bot', outputs });
    if (res.status !== 200) throw new Error(`POST /v1/gate ${res.status}: ${res.text}`);
    return res.body;
  }

  async function runScored(runId: string): Promise<any> {
    const { rows } = await db.query(`SELECT data FROM events WHERE stream_id = $1 AND type = 'run.scored'`, [`run-${runId}`]);
    return rows[0]?.data;
  }

  // --- part 3: flaky verdicts -------------------------------------------------------------------------------

  it('a judge scripted to flip on f2 and f5 (repeats: 3): stability 4/6 with its Wilson interval, unstable ids exactly f2, f5, 18 calls; the gate warns judge_unstable', async () => {
    const key = `flaky-${suffix}`;
    const ids = ['f1', 'f2', 'f3', 'f4', 'f5', 'f6'];
    await pushSuite(key, ids, 3);
    const outputs = ids.map((id) => ({ case_id: id, output: `${id === 'f2' || id === 'f5' ? 'FLIP' : 'steady'} answer ${id} ${suffix}` }));

    // An ordinary run: each case judged three times, the majority kept.
    const before = fake.requestCount;
    const runId = `flaky-run-${suffix}`;
    const res = await call('ingestion', 'POST', '/v1/runs', { run_id: runId, suite_key: key, subject_kind: 'agent', subject_id: 'bot', outputs });
    expect(res.status).toBe(200);
    expect(fake.requestCount - before).toBe(18);
    const scored = await runScored(runId);
    expect(scored.judge_stability).toEqual({ repeats: 3, cases: 6, stable: 4, unstable_case_ids: ['f2', 'f5'] });
    // The run reports it (GET /v1/runs/:id, the read model's run document): the rate with its interval.
    expect(res.body.run.judge_stability).toMatchObject({ repeats: 3, cases: 6, stable: 4, unstable_case_ids: ['f2', 'f5'] });
    expect(res.body.run.judge_stability.rate).toBeCloseTo(4 / 6, 12);
    expect(scored.judge).toMatchObject({ cases: 6, calls: 18 });
    expect(scored.judge.cost_usd).toBeCloseTo(18 * COST_PER_CALL, 12);
    const { rows } = await db.query(`SELECT case_id, judge_repeats, judge_pass_votes FROM evidence WHERE run_id = $1 ORDER BY case_id`, [runId]);
    expect(rows.map((r) => [r.case_id, r.judge_repeats, r.judge_pass_votes])).toEqual([
      ['f1', 3, 3],
      ['f2', 3, expect.any(Number)],
      ['f3', 3, 3],
      ['f4', 3, 3],
      ['f5', 3, expect.any(Number)],
      ['f6', 3, 3],
    ]);
    for (const r of rows.filter((x) => x.case_id === 'f2' || x.case_id === 'f5')) expect([1, 2]).toContain(r.judge_pass_votes);

    // The gate: a fresh run of the same suite (new outputs, so the verdict cache has nothing), judge_unstable raised.
    const gated = await gate(key, outputs.map((o) => ({ ...o, output: `${o.output} gate` })));
    expect(gated.warnings.map((w: { code: string }) => w.code)).toContain('judge_unstable');
    const warning = gated.warnings.find((w: { code: string }) => w.code === 'judge_unstable');
    expect(warning.message).toContain('f2, f5');
    // Wilson 95% for 4/6, written out: (p + z²/2n ± z·sqrt(p(1-p)/n + z²/4n²)) / (1 + z²/n).
    const z = 1.959963984540054;
    const p = 4 / 6;
    const n = 6;
    const centre = p + (z * z) / (2 * n);
    const half = z * Math.sqrt((p * (1 - p)) / n + (z * z) / (4 * n * n));
    expect(gated.judge.stability).toMatchObject({ repeats: 3, cases: 6, stable: 4, unstable_case_ids: ['f2', 'f5'], min: 0.9 });
    expect(gated.judge.stability.rate).toBeCloseTo(p, 12);
    expect(gated.judge.stability.lower).toBeCloseTo((centre - half) / (1 + (z * z) / n), 9);
    expect(gated.judge.stability.upper).toBeCloseTo((centre + half) / (1 + (z * z) / n), 9);
  });

  it('a stable judge (repeats: 2) gives stability 1 and no judge_unstable', async () => {
    const key = `stable-${suffix}`;
    const ids = ['s1', 's2', 's3', 's4'];
    await pushSuite(key, ids, 2);
    const gated = await gate(
      key,
      ids.map((id) => ({ case_id: id, output: `steady answer ${id} ${suffix}` })),
    );
    expect(gated.judge.stability).toMatchObject({ repeats: 2, cases: 4, stable: 4, rate: 1, unstable_case_ids: [] });
    expect(gated.warnings.map((w: { code: string }) => w.code)).not.toContain('judge_unstable');
    expect(gated.recorded_verdict).toBe('pass');
  });

  // --- part 4: budgets in money -----------------------------------------------------------------------------

  const budgetCases = ['b1', 'b2', 'b3', 'b4', 'b5'];
  /** Five outputs of one length, so every case's estimate is the same. */
  const budgetOutputs = (tag: string) => budgetCases.map((id) => ({ case_id: id, output: `budget answer ${id} ${tag} ${suffix}` }));

  /** The estimate of one case, computed here independently of the gate: prompt tokens (ceil(chars/4)) and the assumed reply. */
  function estimateOf(id: string, output: string): number {
    const chars = judgeMessageChars(buildJudgeMessages({ output, rubric: RUBRIC, input: `request ${id}` }));
    return (Math.ceil(chars / 4) * PRICE.input_per_mtok_usd + ESTIMATED_OUTPUT_TOKENS * PRICE.output_per_mtok_usd) / 1e6;
  }

  it('block: an estimate over what is left is refused budget_blocked, with the estimate and what is left, and zero judge requests', async () => {
    const key = `blocked-${suffix}`;
    await pushSuite(key, budgetCases);
    await db.query(`INSERT INTO budgets (scope, limit_usd, spent_usd, mode, period) VALUES ($1, 0.001, 0, 'block', 'month')`, [`suite:${key}`]);
    const outputs = budgetOutputs('blocked');
    const estimate = outputs.reduce((s, o) => s + estimateOf(o.case_id, o.output), 0);
    expect(estimate).toBeGreaterThan(0.001);

    const before = fake.requestCount;
    const gated = await gate(key, outputs);
    expect(fake.requestCount - before).toBe(0);
    expect(gated.recorded_verdict).toBe('fail');
    expect(gated.budget).toMatchObject({ decision: 'blocked', scope: `suite:${key}`, left_usd: 0.001 });
    expect(gated.budget.estimate_usd).toBeCloseTo(estimate, 12);
    const reason = gated.reasons.find((r: { code: string }) => r.code === 'budget_blocked');
    expect(reason.message).toContain(`estimated at $${estimate.toFixed(4)} exceeds the $0.0010 left of budget suite:${key}`);
    expect(gated.cases.every((c: { label: string; passed: boolean }) => c.label === 'budget_blocked' && !c.passed)).toBe(true);
  });

  it('throttle: exactly the cases that fit are judged, the rest unscored (never a pass); spent grows by the recorded cost', async () => {
    const key = `throttled-${suffix}`;
    await pushSuite(key, budgetCases);
    const outputs = budgetOutputs('throttled');
    const each = outputs.map((o) => estimateOf(o.case_id, o.output));
    // Room for three cases and a half: b1, b2, b3 fit.
    const limit = each[0]! + each[1]! + each[2]! + each[3]! / 2;
    await db.query(`INSERT INTO budgets (scope, limit_usd, spent_usd, mode, period) VALUES ($1, $2, 0, 'throttle', 'month')`, [`suite:${key}`, limit]);

    const before = fake.requestCount;
    const gated = await gate(key, outputs);
    expect(fake.requestCount - before).toBe(3);
    expect(fake.requests.slice(before).map((r) => candidateOutputOf(r)).sort()).toEqual(outputs.slice(0, 3).map((o) => o.output).sort());
    expect(gated.budget).toMatchObject({ decision: 'throttled', judged_case_ids: ['b1', 'b2', 'b3'] });
    expect(gated.cases.map((c: { case_id: string; label: string; passed: boolean }) => [c.case_id, c.label, c.passed])).toEqual([
      ['b1', 'judge_pass', true],
      ['b2', 'judge_pass', true],
      ['b3', 'judge_pass', true],
      ['b4', 'budget_throttled', false],
      ['b5', 'budget_throttled', false],
    ]);
    expect(gated.warnings.map((w: { code: string }) => w.code)).toContain('budget_throttled');
    expect(gated.judge.usage).toMatchObject({ calls: 3, skipped: 2 });

    // The actual spend went to the ledger; the budget's spent amount follows from it.
    const recorded = gated.judge.usage.cost_usd;
    expect(recorded).toBeCloseTo(3 * COST_PER_CALL, 12);
    const { rows } = await db.query(`SELECT amount_usd::float8 AS usd, judge_model, suite_key FROM budget_spend WHERE gate_id = $1`, [gated.gate_id]);
    expect(rows).toHaveLength(1);
    expect(rows[0]).toMatchObject({ judge_model: MODEL, suite_key: key });
    expect(rows[0].usd).toBeCloseTo(recorded, 12);
    const listed = await call('ingestion', 'GET', '/v1/budgets');
    expect(listed.status).toBe(200);
    const mine = listed.body.budgets.find((b: { scope: string }) => b.scope === `suite:${key}`);
    expect(mine).toMatchObject({ mode: 'throttle', period: 'month' });
    expect(mine.limit_usd).toBeCloseTo(limit, 12);
    expect(mine.spent_usd).toBeCloseTo(recorded, 12);
    expect(mine.left_usd).toBeCloseTo(limit - recorded, 12);

    // A second gate with the same outputs: the three judged are cache hits (no spend); spent does not move.
    const again = await gate(key, outputs);
    expect(again.budget.decision).toBe('throttled');
    const after = (await call('ingestion', 'GET', '/v1/budgets')).body.budgets.find((b: { scope: string }) => b.scope === `suite:${key}`);
    expect(after.spent_usd).toBeCloseTo(recorded + again.judge.usage.cost_usd, 12);
  });

  it('the budget table renamed away: the spend is refused (budget_blocked, store_unreadable), no judge request, and the log says why', async () => {
    const key = `nostore-${suffix}`;
    await pushSuite(key, budgetCases);
    await db.query(`ALTER TABLE budgets RENAME TO budgets_renamed_away`);
    try {
      const before = fake.requestCount;
      const gated = await gate(key, budgetOutputs('nostore'));
      expect(fake.requestCount - before).toBe(0);
      expect(gated.budget).toEqual({ decision: 'store_unreadable' });
      expect(gated.reasons.map((r: { code: string }) => r.code)).toContain('budget_blocked');
      const listed = await call('ingestion', 'GET', '/v1/budgets');
      expect(listed.status).toBe(500);
    } finally {
      await db.query(`ALTER TABLE budgets_renamed_away RENAME TO budgets`);
    }
    const log = cluster.logs();
    expect(log).toMatch(/budget store unreadable: judge spend refused \(GT4\).*relation \\?"budgets\\?" does not exist/);
  });

  // --- part 5: the metrics ----------------------------------------------------------------------------------

  it('evals_judge_calls_total counts HTTP calls to the provider (every worker request the fake server saw); budget refusals and skips have their own counters', async () => {
    const worker = await call('scoring-worker', 'GET', '/metrics');
    const sum = (name: string, text: string, label?: string) =>
      text
        .split('\n')
        .filter((l) => l.startsWith(`${name}{`) && (label === undefined || l.includes(label)))
        .reduce((s, l) => s + Number(l.slice(l.lastIndexOf(' ') + 1)), 0);
    expect(sum('evals_judge_calls_total', worker.text)).toBe(fake.requestCount - calibrationRequests);
    expect(sum('evals_judge_calls_total', worker.text, 'outcome="ok"')).toBe(fake.requestCount - calibrationRequests);
    expect(sum('evals_judge_skipped_total', worker.text, 'reason="budget_throttled"')).toBeGreaterThanOrEqual(2);
    expect(sum('evals_judge_skipped_total', worker.text, 'reason="budget_blocked"')).toBeGreaterThanOrEqual(5);
    expect(sum('evals_verdict_cache_lookups_total', worker.text, 'result="hit"')).toBeGreaterThanOrEqual(2);
    const ingestion = await call('ingestion', 'GET', '/metrics');
    expect(sum('evals_judge_budget_refusals_total', ingestion.text, 'decision="blocked"')).toBe(1);
    expect(sum('evals_judge_budget_refusals_total', ingestion.text, 'decision="store_unreadable"')).toBe(1);
    expect(sum('evals_judge_budget_refusals_total', ingestion.text, 'decision="throttled"')).toBe(2);
  });

  // --- part 3, calibration: self-agreement beside agreement with the humans -----------------------------

  it('calibration with repeats: 3 reports self-agreement 45/50 (five items scripted to flip) beside agreement with the humans', async () => {
    const items = Array.from({ length: 50 }, (_, i) => {
      const human = i < 10 ? 'fail' : 'pass';
      const flips = i >= 10 && i < 15;
      return { item_id: `r${i}`, human, output: `self item ${i} ${human === 'fail' ? 'FAIL' : flips ? 'FLIP' : 'fine'} ${suffix}` };
    });
    const set = await call('regression', 'POST', '/v1/calibration-sets', {
      name: 'self-agreement',
      rubric: 'Another rubric, measured for its self-agreement.',
      items: items.map((i) => ({ item_id: i.item_id, output_hash: sha256(i.output), human_verdict: i.human, output_chars: i.output.length })),
    });
    expect([200, 201]).toContain(set.status);
    const bad = await call('regression', 'POST', '/v1/calibrations', { set_id: set.body.set.id, repeats: 11, outputs: [] });
    expect([bad.status, bad.body.code, bad.body.field]).toEqual([400, 'INVALID_REQUEST', 'repeats']);
    const before = fake.requestCount;
    const res = await call('regression', 'POST', '/v1/calibrations', { set_id: set.body.set.id, repeats: 3, outputs: items.map((i) => ({ item_id: i.item_id, output: i.output })) });
    expect([200, 201]).toContain(res.status);
    expect(fake.requestCount - before).toBe(150);
    // The first call of every item agrees with the humans (a FLIP item's first answer is pass).
    expect(res.body.report.agreement).toMatchObject({ value: 1 });
    expect(res.body.report.self_agreement).toMatchObject({ repeats: 3, items: 50, agreeing: 45, rate: 0.9, extra_calls: 100 });
    expect(res.body.report.self_agreement.cost_usd).toBeCloseTo(100 * COST_PER_CALL, 12);
  });
});
