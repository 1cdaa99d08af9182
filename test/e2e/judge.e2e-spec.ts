import { execFileSync, spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import Redis from 'ioredis';
import { Client } from 'pg';
import { untilProjected } from '../support/read-model';
import { startCluster, type AppCluster } from '../support/app-processes';
import {
  REASONING_MARKER,
  candidateOutputOf,
  completion,
  pairwiseAnswersOf,
  pairwiseReply,
  startFakeOpenAI,
  verdictReply,
  type FakeOpenAI,
  type FakeScript,
} from '../support/fake-openai';
import { createTestSchema, deleteTestStreams, testRedisPrefix, type TestSchema, uniqueSuffix } from '../support/isolation';
import { OpenApiConformance } from '../support/openapi-conformance';
import { testServers } from '../support/servers';

/**
 * The judge through the whole service (S3, J1-J6, GT2, D1, D4): the scoring worker grades llm_judge cases
 * through a scripted OpenAI-compatible judge; the regression app calibrates the judge against human labels
 * and compares runs pairwise; `evals label`, `evals calibrate` and `evals compare` drive it from the
 * operator's terminal. The judge's reasoning (REASONING_MARKER) and the outputs (OUTPUT_CANARY) must appear
 * in no table, log line, cache value or API answer.
 */
const root = path.resolve(__dirname, '../..');
const MODEL = 'gpt-4o-2024-08-06';
const OUTPUT_CANARY = `OUT-CANARY-${uniqueSuffix()}`;
const Z = 1.959963984540054;

/** Wilson's 95% interval, written out: (p + z²/2n ± z·sqrt(p(1-p)/n + z²/4n²)) / (1 + z²/n). */
function wilsonByHand(x: number, n: number): [number, number] {
  const p = x / n;
  const d = 1 + (Z * Z) / n;
  const c = p + (Z * Z) / (2 * n);
  const h = Z * Math.sqrt((p * (1 - p)) / n + (Z * Z) / (4 * n * n));
  return [(c - h) / d, (c + h) / d];
}

/** Pearson's r of two series, written out (the point-biserial r is Pearson's with a 0/1 variable). */
function pearsonByHand(xs: number[], ys: number[]): number {
  const mx = xs.reduce((a, b) => a + b, 0) / xs.length;
  const my = ys.reduce((a, b) => a + b, 0) / ys.length;
  let sxy = 0;
  let sxx = 0;
  let syy = 0;
  xs.forEach((x, i) => {
    sxy += (x - mx) * (ys[i] - my);
    sxx += (x - mx) ** 2;
    syy += (ys[i] - my) ** 2;
  });
  return sxy / Math.sqrt(sxx * syy);
}

const sha256 = (t: string) => createHash('sha256').update(t, 'utf8').digest('hex');

/**
 * The scripted judge: grades by what the output says (JUDGE-PASS pass 0.9, JUDGE-BROKEN a malformed reply,
 * anything else fail 0.2); in pairwise requests prefers an answer containing BETTER, and when neither does,
 * always the answer shown first (an order-biased judge).
 */
const judgeScript: FakeScript = (request) => {
  const pair = pairwiseAnswersOf(request);
  if (pair) {
    if (pair.first.includes('BETTER') && !pair.second.includes('BETTER')) return completion(pairwiseReply('first'));
    if (pair.second.includes('BETTER') && !pair.first.includes('BETTER')) return completion(pairwiseReply('second'));
    return completion(pairwiseReply('first'));
  }
  const output = candidateOutputOf(request) ?? '';
  if (output.includes('JUDGE-BROKEN')) return completion(`${REASONING_MARKER}: the output\n{"verdict": "pass", "score": 0.9`);
  if (output.includes('JUDGE-PASS')) return completion(verdictReply('pass', 0.9));
  return completion(verdictReply('fail', 0.2));
};

jest.setTimeout(120_000);

describe('e2e: the judge across the service and the CLI (S3, J1-J6, D1, D4)', () => {
  let schema: TestSchema;
  let cluster: AppCluster;
  let fake: FakeOpenAI;
  let db: Client;
  let redis: Redis;
  const suffix = uniqueSuffix();
  const streamPrefix = `E2J_${suffix}_`;
  const cachePrefix = testRedisPrefix('e2j');
  /** Every API answer body, for the D1/J2 check at the end. */
  const answers: string[] = [];
  const work = fs.mkdtempSync(path.join(os.tmpdir(), 'evals-e2j-'));

  beforeAll(async () => {
    fake = await startFakeOpenAI(judgeScript);
    schema = await createTestSchema('e2j');
    cluster = await startCluster({
      schema: schema.schema,
      streamPrefix,
      subjectPrefix: `e2j_${suffix}`,
      apps: ['ingestion', 'scoring-worker', 'read-model', 'regression'],
      env: {
        JUDGE_PROVIDER: 'openai',
        JUDGE_MODEL: MODEL,
        JUDGE_BASE_URL: fake.baseUrl,
        JUDGE_API_KEY: 'test',
        JUDGE_INPUT_USD_PER_MTOK: '2.5',
        JUDGE_OUTPUT_USD_PER_MTOK: '10',
        JUDGE_MAX_RETRIES: '0',
        JUDGE_CACHE_PREFIX: cachePrefix,
      },
    });
    db = new Client({ connectionString: schema.url });
    await db.connect();
    redis = new Redis(testServers.redis.url, { maxRetriesPerRequest: 1 });
  }, 180_000);

  afterAll(async () => {
    await cluster?.stopAll();
    await deleteTestStreams(streamPrefix);
    await db?.end();
    await redis?.quit();
    await schema?.drop();
    await fake?.close();
  });

  beforeEach(() => {
    fake.script(judgeScript);
  });

  async function call(app: 'ingestion' | 'regression', method: 'GET' | 'POST', route: string, body?: unknown): Promise<{ status: number; body: any }> {
    const res = await fetch(cluster.url(app, route), {
      method,
      ...(body !== undefined ? { headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) } : {}),
    });
    const text = await res.text();
    answers.push(text);
    return { status: res.status, body: text ? JSON.parse(text) : null };
  }

  async function pushJudgeSuite(key: string, caseIds: string[]): Promise<void> {
    const suite = {
      key,
      default_scorer: { type: 'llm_judge', rubric: 'The answer resolves the request politely.', min_score: 0.5 },
      pass_threshold: 0.5,
      regression_threshold: 0.1,
      cases: caseIds.map((id) => ({ id, input: `request ${id}`, expected: 'a polite resolution' })),
    };
    const res = await call('ingestion', 'POST', '/v1/suites', suite);
    expect([200, 201]).toContain(res.status);
  }

  async function run(suiteKey: string, runId: string, outputs: Array<{ case_id: string; output: string }>): Promise<any> {
    const res = await call('ingestion', 'POST', '/v1/runs', { run_id: runId, suite_key: suiteKey, subject_kind: 'agent', subject_id: 'bot', outputs });
    if (res.status !== 200) throw new Error(`POST /v1/runs ${res.status}: ${JSON.stringify(res.body)}`);
    return res.body;
  }

  // --- S3: the worker grades llm_judge cases ---------------------------------------------------------------

  it('S3/J3: a run of an llm_judge suite is graded by the judge; a malformed verdict is judge_unparseable (a failed case); cost is never zero', async () => {
    const key = `judged-${suffix}`;
    await pushJudgeSuite(key, ['c1', 'c2', 'c3']);
    fake.reset();
    const runId = `judged-run-${suffix}`;
    const answer = await run(key, runId, [
      { case_id: 'c1', output: `JUDGE-PASS ${OUTPUT_CANARY}` },
      { case_id: 'c2', output: `JUDGE-BROKEN ${OUTPUT_CANARY}` },
      { case_id: 'c3', output: `nothing useful ${OUTPUT_CANARY}` },
    ]);
    expect(answer.run).toMatchObject({ status: 'completed' });
    expect(fake.requestCount).toBe(3);
    expect(fake.requests.every((r) => r.model === MODEL)).toBe(true);
    const { rows } = await db.query(`SELECT case_id, passed, score, label, judge_model, prompt_version, judge_cost_usd FROM evidence WHERE run_id = $1 ORDER BY case_id`, [runId]);
    expect(rows.map((r) => [r.case_id, r.passed, Number(r.score), r.label])).toEqual([
      ['c1', true, 0.9, 'judge_pass'],
      ['c2', false, 0, 'judge_unparseable'],
      ['c3', false, 0.2, 'judge_fail'],
    ]);
    for (const r of rows) {
      expect(r).toMatchObject({ judge_model: MODEL, prompt_version: 'judge-v1' });
      expect(Number(r.judge_cost_usd)).toBeGreaterThan(0);
    }
    const { rows: scored } = await db.query(`SELECT data FROM events WHERE stream_id = $1 AND type = 'run.scored'`, [`run-${runId}`]);
    expect(scored[0].data.judge).toMatchObject({ cases: 3, calls: 3, errors: 1, model: MODEL, prompt_version: 'judge-v1', input_tokens: 3 * 321, output_tokens: 3 * 54 });
    expect(scored[0].data.judge.cost_usd).toBeCloseTo((3 * (321 * 2.5 + 54 * 10)) / 1e6, 12);
  });

  // --- J4: calibration ------------------------------------------------------------------------------------

  /** Ten labelled items: tp 5, fn 1, fp 1, tn 3 (one of the tn through an unparseable reply). */
  const ten = [
    { id: 'a1', human: 'pass', output: 'JUDGE-PASS short' },
    { id: 'a2', human: 'pass', output: 'JUDGE-PASS a somewhat longer answer' },
    { id: 'a3', human: 'pass', output: 'JUDGE-PASS an answer of medium length here' },
    { id: 'a4', human: 'pass', output: 'JUDGE-PASS ok' },
    { id: 'a5', human: 'pass', output: 'JUDGE-PASS a very long answer that goes on and on about the refund policy' },
    { id: 'a6', human: 'pass', output: 'fine but the judge disagrees' },
    { id: 'a7', human: 'fail', output: 'JUDGE-PASS wrong but the judge likes it' },
    { id: 'a8', human: 'fail', output: 'no' },
    { id: 'a9', human: 'fail', output: 'JUDGE-BROKEN makes the judge stumble' },
    { id: 'a10', human: 'fail', output: 'rude reply' },
  ];
  /**
   * Sixty labelled items - the ten six times over, each copy its own output - so the set is large enough to
   * certify (J4: >= 50 items, >= 10 per human class): tp 30, fn 6, fp 6, tn 18 (6 of them unparseable).
   */
  const labelled = [0, 1, 2, 3, 4, 5].flatMap((copy) => ten.map((i) => ({ id: `${i.id}-${copy}`, human: i.human, output: `${i.output} copy ${copy} ${OUTPUT_CANARY}` })));

  const setItem = (i: { id: string; human: string; output: string }) => ({ item_id: i.id, output_hash: sha256(i.output), human_verdict: i.human, output_chars: i.output.length });
  const scopeOf = (rubric: string) => `rubric:${sha256(rubric)}`;

  it('J4: calibration reproduces hand-computed agreement, kappa, sensitivity, specificity, their intervals and the verbosity correlations; the report is stored with its scope', async () => {
    const created = await call('regression', 'POST', '/v1/calibration-sets', { name: 'hand', rubric: 'Resolves the request politely.', items: labelled.map(setItem) });
    expect(created.status).toBe(201);
    expect(created.body.items).toMatchObject({ count: 60, golden_outputs: 0, human_pass: 36 });
    const setId = created.body.set.id;
    fake.reset();
    const res = await call('regression', 'POST', '/v1/calibrations', { set_id: setId, outputs: labelled.map((i) => ({ item_id: i.id, output: i.output })) });
    expect(res.status).toBe(201);
    expect(fake.requestCount).toBe(60);
    const r = res.body.report;
    expect(res.body).toMatchObject({ set_id: setId, status: 'not_certified', judge_model: MODEL, prompt_version: 'judge-v1', scope: scopeOf('Resolves the request politely.') });
    expect(r.counts).toEqual({ tp: 30, fn: 6, fp: 6, tn: 18 });
    expect(r.set).toEqual({ n: 60, human_pass: 36, human_fail: 24, min_items: 50, min_per_class: 10, sufficient: true, reasons: [] });
    // Agreement 48/60 with Wilson's interval.
    expect(r.agreement).toMatchObject({ numerator: 48, denominator: 60 });
    expect(r.agreement.value).toBeCloseTo(0.8, 12);
    const [al, au] = wilsonByHand(48, 60);
    expect(r.agreement.lower).toBeCloseTo(al, 9);
    expect(r.agreement.upper).toBeCloseTo(au, 9);
    // Kappa: p_o = 0.8, p_e = 0.6 * 0.6 + 0.4 * 0.4 = 0.52, kappa = (0.8 - 0.52) / (1 - 0.52).
    expect(r.kappa.observed).toBeCloseTo(0.8, 12);
    expect(r.kappa.expected).toBeCloseTo(0.52, 12);
    expect(r.kappa.value).toBeCloseTo(0.28 / 0.48, 12);
    // Sensitivity 30/36 and specificity 18/24, with their denominators and intervals.
    expect(r.sensitivity).toMatchObject({ numerator: 30, denominator: 36 });
    expect(r.sensitivity.value).toBeCloseTo(30 / 36, 12);
    expect([r.sensitivity.lower, r.sensitivity.upper].map((x: number) => x.toFixed(9))).toEqual(wilsonByHand(30, 36).map((x) => x.toFixed(9)));
    expect(r.specificity).toMatchObject({ numerator: 18, denominator: 24 });
    expect([r.specificity.lower, r.specificity.upper].map((x: number) => x.toFixed(9))).toEqual(wilsonByHand(18, 24).map((x) => x.toFixed(9)));
    expect(r.human_pass_rate).toMatchObject({ numerator: 36, denominator: 60 });
    expect(r.judge_pass_rate).toMatchObject({ numerator: 36, denominator: 60 });
    // Verbosity: point-biserial r of output length against each verdict, and the judge's excess.
    const lengths = labelled.map((i) => i.output.length);
    const judgePass = labelled.map((i) => (i.output.startsWith('JUDGE-PASS') ? 1 : 0));
    const humanPass = labelled.map((i) => (i.human === 'pass' ? 1 : 0));
    expect(r.verbosity_bias.judge.r).toBeCloseTo(pearsonByHand(judgePass, lengths), 9);
    expect(r.verbosity_bias.human.r).toBeCloseTo(pearsonByHand(humanPass, lengths), 9);
    expect(r.verbosity_bias.excess).toBeCloseTo(pearsonByHand(judgePass, lengths) - pearsonByHand(humanPass, lengths), 9);
    expect(r.targets).toEqual({ agreement: 0.85, kappa: 0.6, min_items: 50, min_per_class: 10, agreement_basis: 'estimate' });
    expect(r.reasons).toEqual(['agreement_below_target', 'kappa_below_target']);
    expect(r.judge).toMatchObject({ calls: 60, unparseable: 6 });
    expect(r.judge.cost_usd).toBeGreaterThan(0);
    expect(r.items.find((i: any) => i.item_id === 'a9-0')).toEqual({ item_id: 'a9-0', human: 'fail', judge: 'fail', label: 'judge_unparseable' });

    const stored = await call('regression', 'GET', `/v1/calibrations/${res.body.report_id}`);
    expect(stored.body).toMatchObject({ report_id: res.body.report_id, status: 'not_certified', scope: scopeOf('Resolves the request politely.') });
    const { rows } = await db.query(`SELECT status, judge_model, prompt_version, scope, targets FROM calibration_reports WHERE id = $1`, [res.body.report_id]);
    expect(rows).toEqual([{ status: 'not_certified', judge_model: MODEL, prompt_version: 'judge-v1', scope: scopeOf('Resolves the request politely.'), targets: r.targets }]);
    await expect(db.query(`UPDATE calibration_reports SET status = 'certified'`)).rejects.toThrow(/append-only/);
  });

  it('J4/D4: a golden set keeps its outputs (clamped to 4 000 characters) and certifies a judge that agrees; the scopes are served for the gate', async () => {
    const agreeing = [
      ...Array.from({ length: 30 }, (_, i) => ({ id: `g${i}`, human: 'pass', output: `JUDGE-PASS golden ${i} ${OUTPUT_CANARY}` })),
      ...Array.from({ length: 29 }, (_, i) => ({ id: `h${i}`, human: 'fail', output: `golden fail ${i} ${OUTPUT_CANARY}` })),
    ];
    const long = { id: 'long', human: 'fail', output: `${'x'.repeat(5000)} ${OUTPUT_CANARY}` };
    const items = [...agreeing, long].map((i) => ({ ...setItem(i), golden_output: i.output }));
    const rubric = 'Resolves the request politely, golden.';
    const created = await call('regression', 'POST', '/v1/calibration-sets', { name: 'golden', golden: true, rubric, items });
    expect(created.status).toBe(201);
    expect(created.body.items).toMatchObject({ count: 60, golden_outputs: 60, golden_truncated: 1 });
    const setId = created.body.set.id;
    const { rows } = await db.query(`SELECT item_id, char_length(golden_output) AS n FROM calibration_items WHERE set_id = $1 AND item_id = 'long'`, [setId]);
    expect(rows).toEqual([{ item_id: 'long', n: 4000 }]);
    const read = await call('regression', 'GET', `/v1/calibration-sets/${setId}`);
    expect(read.body.items.find((i: any) => i.item_id === 'long').golden_output).toBe('truncated');
    expect(JSON.stringify(read.body)).not.toContain(OUTPUT_CANARY);

    // A truncated golden text is not judged: its output must come with the request.
    const missing = await call('regression', 'POST', '/v1/calibrations', { set_id: setId });
    expect(missing).toMatchObject({ status: 422, body: { code: 'OUTPUTS_MISSING' } });
    fake.reset();
    const res = await call('regression', 'POST', '/v1/calibrations', { set_id: setId, targets: { agreement: 0.95, kappa: 0.9 }, outputs: [{ item_id: 'long', output: long.output }] });
    expect(res.status).toBe(201);
    expect(fake.requestCount).toBe(60);
    expect(res.body.status).toBe('certified');
    expect(res.body.report).toMatchObject({ counts: { tp: 30, fn: 0, fp: 0, tn: 30 }, targets: { agreement: 0.95, kappa: 0.9 }, reasons: [] });
    expect(res.body.report.kappa.value).toBeCloseTo(1, 12);

    const scope = scopeOf(rubric);
    const status = await call('regression', 'GET', `/v1/judges/status?model=${MODEL}&prompt_version=judge-v1&scope=${scope}&passed=5&n=10`);
    expect(status.body).toMatchObject({ status: 'certified', scope, report_id: res.body.report_id, set_id: setId, judge_model: MODEL, prompt_version: 'judge-v1', n: 60, kappa: 1 });
    // 5 of 10 under Se 30/30, Sp 30/30: Rogan-Gladen (0.5 + 1 - 1) / (1 + 1 - 1) = 0.5, with its interval.
    expect(status.body.corrected_pass_rate).toMatchObject({ apparent: { passed: 5, n: 10 }, sensitivity: { x: 30, n: 30 }, specificity: { x: 30, n: 30 }, level: 0.95 });
    expect(status.body.corrected_pass_rate.rate).toBeCloseTo(0.5, 12);
    expect(status.body.corrected_pass_rate.lower).toBeLessThan(0.5);
    expect(status.body.corrected_pass_rate.upper).toBeGreaterThan(0.5);
    const defaulted = await call('regression', 'GET', '/v1/judges/status');
    expect(defaulted.body).toMatchObject({ status: 'certified', judge_model: MODEL, prompt_version: 'judge-v1' });
    expect(defaulted.body.certified_scopes).toContain(scope);
    expect(defaulted.body.scopes.map((x: any) => x.scope)).toEqual(expect.arrayContaining([scope, scopeOf('Resolves the request politely.')]));
    const other = await call('regression', 'GET', `/v1/judges/status?model=${MODEL}&prompt_version=judge-v9`);
    expect(other.body).toMatchObject({ status: 'uncalibrated', scopes: [] });

    // X1: each answer is one of the two the document describes, and every field it sends is declared there -
    // a client generated from docs/openapi.json reads all of it, typed (the scope's fields were missing once).
    const doc = JSON.parse(fs.readFileSync(path.resolve(__dirname, '../../docs/openapi.json'), 'utf8'));
    const conformance = new OpenApiConformance(doc);
    const declared = (name: string) => Object.keys(doc.components.schemas[name].properties);
    for (const [answer, schema] of [
      [status, 'JudgeScopeAnswerDto'],
      [defaulted, 'JudgePinSummaryDto'],
      [other, 'JudgePinSummaryDto'],
    ] as const) {
      expect(conformance.check('GET', '/v1/judges/status', answer.status, JSON.stringify(answer.body))).toEqual([]);
      expect(Object.keys(answer.body).filter((k) => !declared(schema).includes(k))).toEqual([]);
    }
    expect(conformance.judged).toBe(3);
  });

  it('J4: lowering a target is refused (422) before any judge call; a one-class or small set is insufficient_set with no judge call; D4 refuses text in a non-golden set', async () => {
    const created = await call('regression', 'POST', '/v1/calibration-sets', { name: 'refusals', rubric: 'r', items: labelled.slice(0, 4).map(setItem) });
    const setId = created.body.set.id;
    fake.reset();
    const { rows: before } = await db.query(`SELECT count(*)::int AS n FROM calibration_reports`);
    for (const targets of [{ agreement: 0.8 }, { kappa: 0.59 }, { min_items: 49 }, { min_per_class: 9 }]) {
      const low = await call('regression', 'POST', '/v1/calibrations', { set_id: setId, targets, outputs: labelled.slice(0, 4).map((i) => ({ item_id: i.id, output: i.output })) });
      expect(low).toMatchObject({ status: 422, body: { code: 'TARGET_BELOW_MINIMUM' } });
    }
    expect(fake.requestCount).toBe(0);
    expect((await db.query(`SELECT count(*)::int AS n FROM calibration_reports`)).rows).toEqual(before);

    // Four items, all human passes: refused from the labels alone, before any judge call (nothing spent).
    const onePass = await call('regression', 'POST', '/v1/calibrations', { set_id: setId, outputs: labelled.slice(0, 4).map((i) => ({ item_id: i.id, output: i.output })) });
    expect(onePass.status).toBe(201);
    expect(onePass.body).toMatchObject({
      status: 'insufficient_set',
      report: { set: { n: 4, human_pass: 4, human_fail: 0 }, reasons: ['human_labels_one_class', 'too_few_items', 'too_few_human_passes', 'too_few_human_fails'], judge: { calls: 0, cost_usd: 0 } },
    });
    expect(fake.requestCount).toBe(0);

    const text = await call('regression', 'POST', '/v1/calibration-sets', { name: 'x', rubric: 'r', items: [{ ...setItem(labelled[0]), golden_output: labelled[0].output }] });
    expect(text).toMatchObject({ status: 422, body: { code: 'GOLDEN_NOT_AUTHORISED' } });
    const big = await call('regression', 'POST', '/v1/calibration-sets', { name: 'big', rubric: 'r2', items: labelled.map(setItem) });
    const none = await call('regression', 'POST', '/v1/calibrations', { set_id: big.body.set.id });
    expect(none).toMatchObject({ status: 422, body: { code: 'OUTPUTS_MISSING' } });
    const wrong = await call('regression', 'POST', '/v1/calibrations', { set_id: big.body.set.id, outputs: [{ item_id: 'a1-0', output: 'another output' }] });
    expect(wrong).toMatchObject({ status: 422, body: { code: 'OUTPUT_HASH_MISMATCH' } });
    const broken = await fetch(cluster.url('regression', '/v1/calibrations'), { method: 'POST', headers: { 'content-type': 'application/json' }, body: `{"set_id": "${OUTPUT_CANARY}` });
    const brokenText = await broken.text();
    answers.push(brokenText);
    expect(broken.status).toBe(400);
    expect(brokenText).not.toContain(OUTPUT_CANARY);
  });

  // --- J4 + GT1: the gate checks the scope its cases use; the corrected pass rate ---------------------------

  /** Certifies the judge for `rubric` with 60 agreeing items (30 pass, 30 fail). */
  async function certify(rubric: string, tag: string): Promise<string> {
    const agreeing = [
      ...Array.from({ length: 30 }, (_, i) => ({ id: `${tag}p${i}`, human: 'pass', output: `JUDGE-PASS ${tag} ${i} ${OUTPUT_CANARY}` })),
      ...Array.from({ length: 30 }, (_, i) => ({ id: `${tag}f${i}`, human: 'fail', output: `${tag} fails ${i} ${OUTPUT_CANARY}` })),
    ];
    const set = await call('regression', 'POST', '/v1/calibration-sets', { name: tag, rubric, items: agreeing.map(setItem) });
    const res = await call('regression', 'POST', '/v1/calibrations', { set_id: set.body.set.id, outputs: agreeing.map((i) => ({ item_id: i.id, output: i.output })) });
    expect(res.body).toMatchObject({ status: 'certified', scope: scopeOf(rubric) });
    return res.body.report_id;
  }

  it('GT1/J4: a gate on a suite whose rubric is not certified fails judge_uncalibrated - with no judge call and the path in its message - though another rubric of the same pin is certified; once its own rubric is, it passes and the gate, the run and the scorecard (JSON and CSV) show the corrected pass rate', async () => {
    const key = `scoped-${suffix}`;
    const rubric = 'The answer resolves the request politely.'; // pushJudgeSuite's
    await pushJudgeSuite(key, ['c1', 'c2', 'c3', 'c4']);
    await certify('Another rubric: answers in the language of the request.', 'other');
    const outputs = [
      { case_id: 'c1', output: `JUDGE-PASS one ${OUTPUT_CANARY}` },
      { case_id: 'c2', output: `JUDGE-PASS two ${OUTPUT_CANARY}` },
      { case_id: 'c3', output: `JUDGE-PASS three ${OUTPUT_CANARY}` },
      { case_id: 'c4', output: `unhelpful ${OUTPUT_CANARY}` },
    ];
    fake.reset();
    const refused = await call('ingestion', 'POST', '/v1/gate', { suite_key: key, subject_kind: 'agent', subject_id: 'scoped', outputs });
    expect(refused.status).toBe(200);
    expect(fake.requestCount).toBe(0);
    expect(refused.body.recorded_verdict).toBe('fail');
    expect(refused.body.judge).toMatchObject({ used: true, status: 'uncalibrated', skipped: 'judge_uncalibrated', scopes: { needed: [scopeOf(rubric)], uncovered: [scopeOf(rubric)] } });
    const reason = refused.body.reasons.find((x: any) => x.code === 'judge_uncalibrated');
    expect(reason.message).toContain(scopeOf(rubric));
    for (const step of ['JUDGE_PROVIDER', 'evals label', 'evals calibrate', 'evals gate']) expect(reason.message).toContain(step);

    const reportId = await certify(rubric, 'own');
    fake.reset();
    const runId = `scoped-run-${suffix}`;
    const passed = await call('ingestion', 'POST', '/v1/gate', { suite_key: key, subject_kind: 'agent', subject_id: 'scoped', run_id: runId, outputs });
    expect(fake.requestCount).toBe(4);
    expect(passed.body).toMatchObject({ recorded_verdict: 'pass', judge: { status: 'certified', skipped: null, scopes: { uncovered: [], certified: [{ scope: scopeOf(rubric), report_id: reportId }] } } });
    // The judge passed 3 of 4; Se 30/30, Sp 30/30 on the calibration set: Rogan-Gladen 0.75, with its interval.
    const corrected = passed.body.judge.corrected_pass_rates;
    expect(corrected).toHaveLength(1);
    expect(corrected[0]).toMatchObject({ scope: scopeOf(rubric), apparent: { passed: 3, n: 4, rate: 0.75 }, sensitivity: { x: 30, n: 30 }, specificity: { x: 30, n: 30 }, level: 0.95 });
    expect(corrected[0].rate).toBeCloseTo((0.75 + 1 - 1) / (1 + 1 - 1), 12);
    expect(corrected[0].lower).toBeLessThan(0.75);
    expect(corrected[0].upper).toBeGreaterThan(0.75);
    const sameFigures = corrected[0];

    // The run, as the read model answers it.
    // The gate answered once the comparison was in the log; the read model projects it a moment later (ADR 0006).
    const run = await untilProjected(async () => {
      const res = await fetch(cluster.url('read-model', `/v1/runs/${runId}`));
      return res.status === 404 ? null : ((await res.json()) as any);
    }, runId);
    expect(run.judge_corrected_pass_rates).toEqual([{ judge_model: MODEL, prompt_version: 'judge-v1', ...sameFigures }]);

    // The scorecard, JSON and CSV, once the read model has projected the run's comparison.
    const deadline = Date.now() + 30_000;
    let card: any;
    for (;;) {
      const cards = await fetch(cluster.url('read-model', `/v1/scorecards?suite_key=${key}`)).then((r) => r.json() as Promise<any>);
      card = cards.scorecards.find((c: any) => c.latest_run_id === runId);
      if (card || Date.now() > deadline) break;
      await new Promise((r) => setTimeout(r, 100));
    }
    expect(card.latest_judge_corrected_pass_rates).toEqual([{ judge_model: MODEL, prompt_version: 'judge-v1', ...sameFigures }]);
    const csv = await fetch(cluster.url('read-model', `/v1/scorecards?suite_key=${key}&format=csv`)).then((r) => r.text());
    const [header, row] = csv.split('\r\n');
    const fields = Object.fromEntries(header!.split(',').map((h, i) => [h, row!.split(',')[i]]));
    // docs/scorecards.md: an integral number as it is, any other with six decimals.
    const csvNumber = (v: number) => (Number.isInteger(v) ? String(v) : v.toFixed(6));
    expect(fields).toMatchObject({
      latest_judge_corrected_scope: scopeOf(rubric),
      latest_judge_corrected_rate: csvNumber(corrected[0].rate),
      latest_judge_corrected_ci_lower: csvNumber(corrected[0].lower),
      latest_judge_corrected_ci_upper: csvNumber(corrected[0].upper),
      latest_judge_passed: '3',
      latest_judge_n: '4',
      latest_judge_sensitivity_x: '30',
      latest_judge_sensitivity_n: '30',
      latest_judge_specificity_x: '30',
      latest_judge_specificity_n: '30',
    });
    answers.push(JSON.stringify(run), JSON.stringify(card), csv);
  });

  // --- J5: pairwise -------------------------------------------------------------------------------------------

  it('J5: pairwise A/B judges each shared case in both orders; an order-biased judge declares no winner and the report says so', async () => {
    const key = `pairs-${suffix}`;
    await pushJudgeSuite(key, ['c1', 'c2', 'c3', 'c4', 'c5']);
    const runA = `pa-${suffix}`;
    const runB = `pb-${suffix}`;
    // The two runs only anchor the comparison (an empty run is refused: EMPTY_RUN, R7); c5 is not compared.
    await run(key, runA, [{ case_id: 'c5', output: 'anchor a' }]);
    await run(key, runB, [{ case_id: 'c5', output: 'anchor b' }]);
    const outputsA = ['c1', 'c2', 'c3', 'c4'].map((c, i) => ({ case_id: c, output: `${i < 2 ? 'BETTER ' : ''}answer A ${c} ${OUTPUT_CANARY}` }));
    const outputsB = ['c1', 'c2', 'c3', 'c4', 'c5'].map((c) => ({ case_id: c, output: `answer B ${c} ${OUTPUT_CANARY}` }));
    fake.reset();
    const res = await call('regression', 'POST', '/v1/comparisons', { run_a: runA, run_b: runB, outputs_a: outputsA, outputs_b: outputsB });
    expect(res.status).toBe(201);
    expect(fake.requestCount).toBe(8); // 4 shared cases, twice each
    const [lower, upper] = wilsonByHand(2, 4);
    expect(res.body).toMatchObject({ wins: 2, losses: 0, ties: 2, inconsistent_ties: 2, errors: 0, n: 4, shared: 4, only_a: 0, only_b: 1, judge_model: MODEL, prompt_version: 'pairwise-v1' });
    expect(res.body.position_consistency).toMatchObject({ rate: 0.5, consistent: 2, n: 4 });
    expect(res.body.position_consistency.lower).toBeCloseTo(lower, 9);
    expect(res.body.position_consistency.upper).toBeCloseTo(upper, 9);
    expect(res.body.cases.find((c: any) => c.case_id === 'c3')).toEqual({ case_id: 'c3', winner: 'tie', position_consistent: false, ab: 'first', ba: 'first' });
    expect(res.body.usage.cost_usd).toBeGreaterThan(0);

    // A purely order-biased judge: every case inconsistent, no winner, consistency 0 with its interval.
    fake.script(() => completion(pairwiseReply('first')));
    const biased = await call('regression', 'POST', '/v1/comparisons', { run_a: runA, run_b: runB, outputs_a: outputsA, outputs_b: outputsB, rubric: 'Which answer is more helpful?' });
    expect(biased.body).toMatchObject({ wins: 0, losses: 0, ties: 4, inconsistent_ties: 4, position_consistency: { rate: 0, consistent: 0, n: 4, lower: 0 } });
    expect(biased.body.position_consistency.upper).toBeCloseTo(wilsonByHand(0, 4)[1], 9);
    const stored = await call('regression', 'GET', `/v1/comparisons/${biased.body.comparison_id}`);
    expect(stored.body).toMatchObject({ comparison_id: biased.body.comparison_id, ties: 4 });
    await expect(db.query(`DELETE FROM comparison_reports`)).rejects.toThrow(/append-only/);
  });

  // --- the CLI ---------------------------------------------------------------------------------------------

  function cli(args: string[], input?: (child: ReturnType<typeof spawn>, out: () => string) => Promise<void>): Promise<{ code: number; out: string; err: string }> {
    return new Promise((resolve, reject) => {
      // Run from the operator's directory (a temporary one): the loader is resolved from the repository.
      const child = spawn(process.execPath, ['-r', require.resolve('@swc-node/register'), path.join(root, 'apps/cli/src/judge/standalone.ts'), ...args], {
        cwd: work,
        env: { ...process.env, SWC_NODE_PROJECT: path.join(root, 'tsconfig.json'), NO_COLOR: '1', EVALS_SERVER: cluster.url('ingestion', ''), EVALS_REGRESSION_SERVER: cluster.url('regression', '') },
        stdio: ['pipe', 'pipe', 'pipe'],
      });
      let out = '';
      let err = '';
      child.stdout.on('data', (d) => (out += d));
      child.stderr.on('data', (d) => (err += d));
      child.on('error', reject);
      child.on('close', (code) => resolve({ code: code ?? -1, out, err }));
      if (input) input(child, () => out).catch(reject);
      else child.stdin.end();
    });
  }

  async function until(probe: () => boolean, what: string): Promise<void> {
    const deadline = Date.now() + 30_000;
    while (!probe()) {
      if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
      await new Promise((r) => setTimeout(r, 20));
    }
  }

  it('evals label, driven by piped keystrokes, labels, quits, resumes and finishes a set; evals calibrate certifies; evals compare reports', async () => {
    const items = [
      { item_id: 'k1', case_id: 'c1', input: 'Where is my refund?', output: `JUDGE-PASS refund sent ${OUTPUT_CANARY}` },
      { item_id: 'k2', output: `no idea ${OUTPUT_CANARY}` },
      { item_id: 'k3', output: `JUDGE-PASS sorry, refunded ${OUTPUT_CANARY}` },
      { item_id: 'k4', output: `maybe later ${OUTPUT_CANARY}` },
      { item_id: 'k5', output: `JUDGE-PASS done ${OUTPUT_CANARY}` },
    ];
    fs.writeFileSync(path.join(work, 'items.jsonl'), items.map((i) => JSON.stringify(i)).join('\n') + '\n');
    const labelsFile = path.join(work, 'items.labels.jsonl');

    // First session: answer two items one keystroke at a time, then quit.
    const first = await cli(['label', '--set', 'items.jsonl'], async (child, out) => {
      // The item is written in several chunks (header, input, output, prompt): wait for its input, which fails
      // the test by timeout if the item never shows it.
      await until(() => out().includes('progress 0/5') && out().includes('Where is my refund?'), 'the first item with its input');
      child.stdin!.write('p\n');
      await until(() => out().includes('progress 1/5'), 'the second item');
      child.stdin!.write('f\n');
      await until(() => out().includes('progress 2/5'), 'the third item');
      child.stdin!.write('q\n');
    });
    expect(first.code).toBe(0);
    expect(first.out).toContain('stopped; run the same command again to resume');
    expect(fs.readFileSync(labelsFile, 'utf8').trim().split('\n')).toHaveLength(2);

    // Second session resumes at the third item and finishes the set.
    const second = await cli(['label', '--set', 'items.jsonl'], async (child, out) => {
      await until(() => out().includes('progress 2/5'), 'the resumed item');
      child.stdin!.write('p\nx\nf\n');
      await until(() => out().includes('progress 4/5'), 'the last item');
      child.stdin!.end('p\n');
    });
    expect(second.code).toBe(0);
    expect(second.out).toContain('resuming after item 2 of 5');
    expect(second.out).not.toContain('item 1 of 5');
    expect(second.out).toContain('answer p (pass), f (fail), s (skip) or q (quit)');
    expect(second.out).toContain('progress 5/5: every item answered, 5 labelled pass/fail');
    const lines = fs.readFileSync(labelsFile, 'utf8').trim().split('\n').map((l) => JSON.parse(l));
    expect(lines.map((l) => [l.item_id, l.human_verdict])).toEqual([
      ['k1', 'pass'],
      ['k2', 'fail'],
      ['k3', 'pass'],
      ['k4', 'fail'],
      ['k5', 'pass'],
    ]);
    expect(lines[0]).toEqual({ item_id: 'k1', output_hash: sha256(items[0].output), output_chars: items[0].output.length, human_verdict: 'pass' });
    expect(fs.readFileSync(labelsFile, 'utf8')).not.toContain(OUTPUT_CANARY);

    // evals calibrate on five labels: a set too small to certify anything - refused before any judge call, exit 1.
    fake.reset();
    const small = await cli(['calibrate', '--labels', 'items.labels.jsonl', '--items', 'items.jsonl', '--rubric', 'Resolves the request politely.', '--name', 'cli-small']);
    expect(small.code).toBe(1);
    expect(fake.requestCount).toBe(0);
    expect(small.out).toContain('set: 5 labelled item(s) - 3 pass, 2 fail; a set certifies only with at least 50 items and 10 of each class');
    expect(small.out).toContain('status: INSUFFICIENT SET (too_few_items, too_few_human_passes, too_few_human_fails)');

    // 55 more items, labelled as the humans would (the scripted judge agrees on every one): 60 items,
    // 30 pass and 30 fail -> certified, exit 0.
    const more = Array.from({ length: 55 }, (_, i) => ({ item_id: `m${i}`, output: `${i < 27 ? 'JUDGE-PASS ' : ''}more ${i} ${OUTPUT_CANARY}`, human: i < 27 ? 'pass' : 'fail' }));
    fs.appendFileSync(path.join(work, 'items.jsonl'), more.map((m) => JSON.stringify({ item_id: m.item_id, output: m.output })).join('\n') + '\n');
    fs.appendFileSync(labelsFile, more.map((m) => JSON.stringify({ item_id: m.item_id, output_hash: sha256(m.output), output_chars: m.output.length, human_verdict: m.human })).join('\n') + '\n');
    const calibrated = await cli(['calibrate', '--labels', 'items.labels.jsonl', '--items', 'items.jsonl', '--rubric', 'Resolves the request politely.', '--name', 'cli-set']);
    expect(calibrated.err).toBe('');
    expect(calibrated.code).toBe(0);
    const [lo, hi] = wilsonByHand(60, 60);
    expect(calibrated.out).toContain(`100.0% (60/60, 95% CI ${(lo * 100).toFixed(1)}-${(hi * 100).toFixed(1)}%)`);
    expect(calibrated.out).toContain(`scope rubric:${sha256('Resolves the request politely.')}`);
    expect(calibrated.out).toContain('status: CERTIFIED');
    const low = await cli(['calibrate', '--labels', 'items.labels.jsonl', '--items', 'items.jsonl', '--rubric', 'r', '--target-kappa', '0.5']);
    expect(low.code).toBe(2);
    expect(low.err).toContain('TARGET_BELOW_MINIMUM');
    const unreachable = await cli(['calibrate', '--labels', 'items.labels.jsonl', '--items', 'items.jsonl', '--rubric', 'r', '--regression-server', 'http://127.0.0.1:9']);
    expect(unreachable.code).toBe(3);

    // evals compare against the two runs of the pairwise test.
    fs.writeFileSync(path.join(work, 'a.jsonl'), `${JSON.stringify({ case_id: 'c1', output: `BETTER ${OUTPUT_CANARY}` })}\n`);
    fs.writeFileSync(path.join(work, 'b.jsonl'), `${JSON.stringify({ case_id: 'c1', output: `plain ${OUTPUT_CANARY}` })}\n`);
    const compared = await cli(['compare', '--a', 'a.jsonl', '--b', 'b.jsonl', '--run-a', `pa-${suffix}`, '--run-b', `pb-${suffix}`]);
    expect(compared.code).toBe(0);
    expect(compared.out).toContain('A wins 1, B wins 0, ties 0');
    expect(compared.out).toContain('position consistency 100.0% (1/1, 95% CI 20.7-100.0%)');
    answers.push(small.out, calibrated.out, compared.out, low.err);
  });

  // --- D1, J2: nothing leaks -------------------------------------------------------------------------------

  it('D1/J2: neither the reasoning nor any output is in a table (pg_dump), a log line, a cache value or an API answer', async () => {
    const dump = execFileSync('pg_dump', ['--data-only', '--schema', `${schema.schema}*`, testServers.postgres.url], { encoding: 'utf8', maxBuffer: 512 * 1024 * 1024 });
    expect(dump).toContain('judge_unparseable');
    expect(dump).toContain('calibration_reports');
    expect(dump).not.toContain(REASONING_MARKER);
    // Golden outputs are the one stored exception (D4); every other output is absent.
    const withoutGolden = dump
      .split('\n')
      .filter((line) => !/\tgolden (?:fail )?\d|\tJUDGE-PASS golden|\tx{100}/.test(line))
      .join('\n');
    expect(dump).toContain(OUTPUT_CANARY); // in the golden rows, and only there:
    expect(withoutGolden).not.toContain(OUTPUT_CANARY);
    const { rows } = await db.query(`SELECT count(*)::int AS n FROM calibration_items WHERE golden_output IS NOT NULL AND set_id NOT IN (SELECT id FROM calibration_sets WHERE golden)`);
    expect(rows).toEqual([{ n: 0 }]);
    const logs = cluster.logs();
    expect(logs).not.toContain(REASONING_MARKER);
    expect(logs).not.toContain(OUTPUT_CANARY);
    const keys: string[] = [];
    let cursor = '0';
    do {
      const [next, batch] = await redis.scan(cursor, 'MATCH', `${cachePrefix}*`, 'COUNT', 1000);
      cursor = next;
      keys.push(...batch);
    } while (cursor !== '0');
    for (const k of keys) {
      const v = (await redis.get(k)) ?? '';
      expect(`${k}${v}`).not.toContain(REASONING_MARKER);
      expect(`${k}${v}`).not.toContain(OUTPUT_CANARY);
    }
    const api = answers.join('\n');
    expect(api.length).toBeGreaterThan(1000);
    expect(api).not.toContain(REASONING_MARKER);
    expect(api).not.toContain(OUTPUT_CANARY);
  });
});
