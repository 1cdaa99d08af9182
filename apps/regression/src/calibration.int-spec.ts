import { createHash } from 'node:crypto';
import { HttpException } from '@nestjs/common';
import { DEFAULT_PROJECT } from '@evals/contracts';
import { JUDGE_ERROR_CODES } from '@evals/domain';
import { LangChainJudge } from '@evals/judge';
import { createDataSource, migrate } from '@evals/persistence';
import { ApiError } from '@evals/platform';
import { correctedPassRate } from '@evals/stats';
import type { DataSource } from 'typeorm';
import { candidateOutputOf, completion, scripts, startFakeOpenAI, verdictReply, type FakeOpenAI, type FakeScript } from '../../../test/support/fake-openai';
import { createTestSchema, type TestSchema } from '../../../test/support/isolation';
import { readReference } from '../../../test/support/reference';
import { testServers } from '../../../test/support/servers';
import { CalibrationService } from './calibration.service';
import { publishSuite } from './suite-log.testing';

/**
 * Calibration that a tiny set cannot fake (J4, issue 13), through the regression app's CalibrationService with
 * the real LangChain client over real HTTP to a scripted OpenAI-compatible judge, on the real PostgreSQL:
 * - a 2-item and a 49-item set are `insufficient_set`, with zero requests at the judge;
 * - a 60-item set with 12 human fails certifies when it meets the targets;
 * - a report for rubric B does not replace rubric A's; a refused set displaces nothing;
 * - the PandaLM set (849 real items) goes through the calibration path and is not certified: its judge
 *   clears kappa, not agreement - every figure recomputed here, independently.
 */
const MODEL = 'gpt-4o-2024-08-06';
const Z = 1.959963984540054;
const sha256 = (t: string) => createHash('sha256').update(t, 'utf8').digest('hex');

/** Wilson's 95% interval, written out. */
function wilsonByHand(x: number, n: number): [number, number] {
  const p = x / n;
  const d = 1 + (Z * Z) / n;
  const c = p + (Z * Z) / (2 * n);
  const h = Z * Math.sqrt((p * (1 - p)) / n + (Z * Z) / (4 * n * n));
  return [(c - h) / d, (c + h) / d];
}

/** One labelled item: the human's verdict, and the verdict the scripted judge will give its output. */
interface Labelled {
  readonly id: string;
  readonly human: 'pass' | 'fail';
  readonly judge: 'pass' | 'fail';
  readonly chars: number;
}

jest.setTimeout(120_000);

describe('integration: certification a tiny set cannot fake - sizes, scopes, PandaLM (J4, issue 13)', () => {
  let schema: TestSchema;
  let ds: DataSource;
  let fake: FakeOpenAI;
  let service: CalibrationService;
  /** What the scripted judge answers, by the exact output it is shown. */
  const verdicts = new Map<string, 'pass' | 'fail'>();
  const scripted: FakeScript = (request) => completion(verdictReply(verdicts.get(candidateOutputOf(request) ?? '') ?? 'fail', verdicts.get(candidateOutputOf(request) ?? '') === 'pass' ? 0.9 : 0.1));

  beforeAll(async () => {
    fake = await startFakeOpenAI(scripted);
    schema = await createTestSchema('calscope');
    ds = createDataSource({ url: testServers.postgres.url, schema: schema.schema, poolSize: 4 });
    await ds.initialize();
    await migrate(ds);
    const judge = new LangChainJudge({
      provider: 'openai',
      model: MODEL,
      baseUrl: fake.baseUrl,
      apiKey: 'test',
      timeoutMs: 20_000,
      maxRetries: 0,
      concurrency: 16,
      pricing: { input_per_mtok_usd: 2.5, output_per_mtok_usd: 10 },
    });
    service = new CalibrationService(judge);
  });

  afterAll(async () => {
    await ds?.destroy();
    await schema?.drop();
    await fake?.close();
  });

  const outputOf = (set: string, id: string) => `${set}:${id}`;

  /** Stores a set of `items` labelled against `rubric`; the judge will answer each output as scripted. */
  async function createSet(name: string, rubric: string, items: readonly Labelled[]): Promise<string> {
    for (const i of items) verdicts.set(outputOf(name, i.id), i.judge);
    const answer = await service.createSet(ds, DEFAULT_PROJECT, {
      name,
      rubric,
      items: items.map((i) => ({ item_id: i.id, output_hash: sha256(outputOf(name, i.id)), human_verdict: i.human, output_chars: i.chars })),
    });
    return answer.set.id;
  }

  async function calibrate(name: string, setId: string, items: readonly Labelled[], targets?: Record<string, unknown>) {
    return service.calibrate(ds, DEFAULT_PROJECT, { set_id: setId, ...(targets ? { targets } : {}), outputs: items.map((i) => ({ item_id: i.id, output: outputOf(name, i.id) })) });
  }

  /** `tp` agreeing passes, `fn` human passes the judge fails, `fp` human fails the judge passes, `tn` agreeing fails. */
  function items(prefix: string, c: { tp: number; fn: number; fp: number; tn: number }): Labelled[] {
    const out: Labelled[] = [];
    const add = (count: number, human: 'pass' | 'fail', judge: 'pass' | 'fail') => {
      for (let k = 0; k < count; k++) out.push({ id: `${prefix}${out.length}`, human, judge, chars: 20 + ((out.length * 37) % 200) });
    };
    add(c.tp, 'pass', 'pass');
    add(c.fn, 'pass', 'fail');
    add(c.fp, 'fail', 'pass');
    add(c.tn, 'fail', 'fail');
    return out;
  }

  async function refusal(p: Promise<unknown>): Promise<{ status: number; body: any }> {
    try {
      await p;
    } catch (e) {
      if (e instanceof HttpException) return { status: e.getStatus(), body: e.getResponse() };
      if (e instanceof ApiError) return { status: e.status, body: { code: e.code, message: e.message, details: e.details } };
      throw e;
    }
    throw new Error('expected a refusal');
  }

  const RUBRIC_A = 'Routes the ticket to the team that owns it.';
  const RUBRIC_B = 'Answers in the language of the request.';
  const scopeA = `rubric:${sha256(RUBRIC_A)}`;
  const scopeB = `rubric:${sha256(RUBRIC_B)}`;
  let certifiedA: string;

  it('a 60-item set with 12 human fails certifies when it meets the targets; 60 judge requests; scoped to its rubric', async () => {
    const set = items('a', { tp: 47, fn: 1, fp: 1, tn: 11 });
    const setId = await createSet('sixty', RUBRIC_A, set);
    fake.reset();
    const answer = await calibrate('sixty', setId, set);
    expect(fake.requestCount).toBe(60);
    expect(answer).toMatchObject({ status: 'certified', scope: scopeA, judge_model: MODEL, prompt_version: 'judge-v1' });
    const r = answer.report as any;
    expect(r.set).toEqual({ n: 60, human_pass: 48, human_fail: 12, min_items: 50, min_per_class: 10, sufficient: true, reasons: [] });
    expect(r.counts).toEqual({ tp: 47, fn: 1, fp: 1, tn: 11 });
    // Agreement 58/60 with Wilson's interval; kappa with p_e = 0.8^2 + 0.2^2 = 0.68.
    expect(r.agreement).toMatchObject({ numerator: 58, denominator: 60 });
    expect(r.agreement.lower).toBeCloseTo(wilsonByHand(58, 60)[0], 9);
    expect(r.kappa.value).toBeCloseTo((58 / 60 - 0.68) / (1 - 0.68), 12);
    certifiedA = answer.report_id;

    // The same set, asked to certify on the lower bound of the agreement interval: 0.886 clears 0.85 too.
    const strict = await calibrate('sixty', setId, set, { agreement_basis: 'lower_bound' });
    expect(wilsonByHand(58, 60)[0]).toBeGreaterThan(0.85);
    expect(strict).toMatchObject({ status: 'certified', report: { targets: { agreement_basis: 'lower_bound' } } });
    certifiedA = strict.report_id;
  });

  it('a 2-item set (1 pass, 1 fail) is insufficient_set with its counts; zero requests at the judge; it displaces nothing', async () => {
    const two = items('t', { tp: 1, fn: 0, fp: 0, tn: 1 });
    const setId = await createSet('two', RUBRIC_A, two);
    fake.reset();
    const answer = await calibrate('two', setId, two);
    expect(fake.requestCount).toBe(0);
    expect(answer).toMatchObject({
      status: 'insufficient_set',
      scope: scopeA,
      report: {
        status: 'insufficient_set',
        n: 2,
        set: { n: 2, human_pass: 1, human_fail: 1, min_items: 50, min_per_class: 10, sufficient: false },
        reasons: ['too_few_items', 'too_few_human_passes', 'too_few_human_fails'],
        judge: { calls: 0, cost_usd: 0 },
      },
    });
    // Stored as evidence of the attempt (append-only), with its scope.
    expect(await ds.query(`SELECT status, scope FROM calibration_reports WHERE id = $1`, [answer.report_id])).toEqual([{ status: 'insufficient_set', scope: scopeA }]);
    // The scope's standing is still the 60-item set's report.
    const status: any = await service.judgeStatus(ds, DEFAULT_PROJECT, { scope: scopeA });
    expect(status).toMatchObject({ status: 'certified', report_id: certifiedA, scope: scopeA, n: 60 });
  });

  it('a 49-item set is insufficient_set (too_few_items) before its outputs are even read: zero requests', async () => {
    const fortyNine = items('f', { tp: 30, fn: 0, fp: 0, tn: 19 });
    const setId = await createSet('forty-nine', RUBRIC_A, fortyNine);
    fake.reset();
    // No outputs sent: the refusal comes from the human labels alone.
    const answer = await service.calibrate(ds, DEFAULT_PROJECT, { set_id: setId });
    expect(fake.requestCount).toBe(0);
    expect(answer).toMatchObject({ status: 'insufficient_set', report: { set: { n: 49, human_pass: 30, human_fail: 19 }, reasons: ['too_few_items'] } });
    // A one-class set, however large, is refused the same way before any call.
    const oneClass = items('o', { tp: 60, fn: 0, fp: 0, tn: 0 });
    const oneId = await createSet('one-class', RUBRIC_A, oneClass);
    const one = await calibrate('one-class', oneId, oneClass);
    expect(fake.requestCount).toBe(0);
    expect(one).toMatchObject({ status: 'insufficient_set', report: { reasons: ['human_labels_one_class', 'too_few_human_fails'] } });
    // Lowering a size target is refused before anything is read or paid for.
    const low = await refusal(calibrate('sixty', setId, fortyNine, { min_items: 49 }));
    expect(low).toMatchObject({ status: 422, body: { code: 'TARGET_BELOW_MINIMUM' } });
    expect(fake.requestCount).toBe(0);
  });

  it("a report for rubric B does not replace rubric A's; GET /v1/judges/status lists both scopes; the corrected pass rate under a certified scope", async () => {
    const poor = items('b', { tp: 30, fn: 18, fp: 6, tn: 6 });
    const setId = await createSet('rubric-b', RUBRIC_B, poor);
    fake.reset();
    const answer = await calibrate('rubric-b', setId, poor);
    expect(fake.requestCount).toBe(60);
    expect(answer).toMatchObject({ status: 'not_certified', scope: scopeB });

    const a: any = await service.judgeStatus(ds, DEFAULT_PROJECT, { scope: scopeA });
    expect(a).toMatchObject({ status: 'certified', report_id: certifiedA });
    const b: any = await service.judgeStatus(ds, DEFAULT_PROJECT, { scope: scopeB });
    expect(b).toMatchObject({ status: 'not_certified', report_id: answer.report_id });
    const all: any = await service.judgeStatus(ds, DEFAULT_PROJECT, {});
    expect(all).toMatchObject({ judge_model: MODEL, prompt_version: 'judge-v1', status: 'certified', certified_scopes: [scopeA] });
    expect(all.scopes.map((s: any) => [s.scope, s.status]).sort()).toEqual([
      [scopeA, 'certified'],
      [scopeB, 'not_certified'],
    ].sort());
    expect(await service.judgeStatus(ds, DEFAULT_PROJECT, { scope: `rubric:${sha256('never measured')}` })).toMatchObject({ status: 'uncalibrated', report_id: null });

    // 30 of 40 judged cases passed by the judge, corrected with A's Se 47/48 and Sp 11/12.
    const corrected: any = await service.judgeStatus(ds, DEFAULT_PROJECT, { scope: scopeA, passed: '30', n: '40' });
    const expected = correctedPassRate({ x: 30, n: 40, se: { x: 47, n: 48 }, sp: { x: 11, n: 12 } });
    expect(corrected.corrected_pass_rate).toMatchObject({ apparent: { passed: 30, n: 40 }, sensitivity: { x: 47, n: 48 }, specificity: { x: 11, n: 12 }, rate: expected.point, lower: expected.lower, upper: expected.upper });
    // Rogan-Gladen by hand: (0.75 + 11/12 - 1) / (47/48 + 11/12 - 1).
    expect(corrected.corrected_pass_rate.rate).toBeCloseTo((0.75 + 11 / 12 - 1) / (47 / 48 + 11 / 12 - 1), 12);
    expect((await service.judgeStatus(ds, DEFAULT_PROJECT, { scope: scopeB, passed: '30', n: '40' }) as any).corrected_pass_rate).toBeNull();
    expect(await refusal(service.judgeStatus(ds, DEFAULT_PROJECT, { passed: '3', n: '2', scope: scopeA }))).toMatchObject({ status: 400 });
  });

  it('a judge that cannot be measured (every call a provider error): 502 JUDGE_CALL_FAILED counting the unanswered items by error code; no report stored', async () => {
    const set = items('c', { tp: 48, fn: 0, fp: 0, tn: 12 });
    const setId = await createSet('unreachable', RUBRIC_A, set);
    const before = (await ds.query(`SELECT count(*)::int AS n FROM calibration_reports`))[0].n;
    fake.script(scripts.status(500));
    try {
      const refused = await refusal(calibrate('unreachable', setId, set));
      expect(refused).toMatchObject({ status: 502, body: { code: 'JUDGE_CALL_FAILED' } });
      // The typed `details.judge_errors` of docs/openapi.json (ApiErrorDetailsDto): every item, by its code.
      const counts = refused.body.details.judge_errors as Record<string, number>;
      expect(Object.values(counts).reduce((a, b) => a + b, 0)).toBe(60);
      for (const code of Object.keys(counts)) expect(JUDGE_ERROR_CODES).toContain(code);
      expect(Object.keys(refused.body.details)).toEqual(['judge_errors']);
    } finally {
      fake.script(scripted);
    }
    expect((await ds.query(`SELECT count(*)::int AS n FROM calibration_reports`))[0].n).toBe(before);
    expect(await service.judgeStatus(ds, DEFAULT_PROJECT, { scope: scopeA })).toMatchObject({ status: 'certified', report_id: certifiedA });
  });

  it('the PandaLM set (849 items) through the calibration path: every figure recomputed here; kappa clears 0.6, agreement misses 0.85: not certified', async () => {
    interface PandaItem {
      readonly id: string;
      readonly human_pass: boolean;
      readonly judge_pass: boolean;
      readonly len_a: number;
    }
    const raw = readReference<PandaItem[]>('judge-calibration-2.json');
    expect(raw).toHaveLength(849);
    const panda: Labelled[] = raw.map((r) => ({ id: r.id, human: r.human_pass ? 'pass' : 'fail', judge: r.judge_pass ? 'pass' : 'fail', chars: r.len_a }));
    const setId = await createSet('pandalm', 'Response 1 is the better answer to the instruction.', panda);
    fake.reset();
    const answer = await calibrate('pandalm', setId, panda);
    // The scripted judge replays the published gpt-3.5-turbo verdict of each item, one HTTP call each.
    expect(fake.requestCount).toBe(849);

    let tp = 0;
    let fn = 0;
    let fp = 0;
    let tn = 0;
    for (const r of raw) {
      if (r.human_pass && r.judge_pass) tp++;
      else if (r.human_pass) fn++;
      else if (r.judge_pass) fp++;
      else tn++;
    }
    const n = raw.length;
    const po = (tp + tn) / n;
    const pe = ((tp + fn) / n) * ((tp + fp) / n) + ((fp + tn) / n) * ((fn + tn) / n);
    const kappa = (po - pe) / (1 - pe);
    expect(kappa).toBeGreaterThanOrEqual(0.6);
    expect(po).toBeLessThan(0.85);

    const r = answer.report as any;
    expect(r.counts).toEqual({ tp, fn, fp, tn });
    expect(r.agreement).toMatchObject({ numerator: tp + tn, denominator: n });
    expect(r.agreement.value).toBeCloseTo(po, 12);
    expect([r.agreement.lower, r.agreement.upper].map((x: number) => x.toFixed(9))).toEqual(wilsonByHand(tp + tn, n).map((x) => x.toFixed(9)));
    expect(r.kappa.value).toBeCloseTo(kappa, 12);
    expect(r.sensitivity).toMatchObject({ numerator: tp, denominator: tp + fn });
    expect(r.specificity).toMatchObject({ numerator: tn, denominator: tn + fp });
    expect(answer).toMatchObject({ status: 'not_certified', report: { reasons: ['agreement_below_target'], set: { n: 849, sufficient: true } } });
  });
  /**
   * Issue 30 (ADR 0009): a set, its report and the judge's standing belong to the project that labelled the set.
   * team-b labels rubric A - which default certified above - and its judge fails there: default stays
   * certified, team-b is not, and neither sees the other's set or report (the 404 of a missing one).
   */
  describe('per project (issue 30)', () => {
    const B = 'team-b';
    let teamBSet: string;
    let teamBReport: string;

    it("team-b's labels on rubric A neither displace default's certification nor borrow it", async () => {
      const poor = items('tb', { tp: 30, fn: 18, fp: 6, tn: 6 });
      for (const i of poor) verdicts.set(outputOf('team-b', i.id), i.judge);
      const created = await service.createSet(ds, B, {
        name: 'team-b rubric A',
        rubric: RUBRIC_A,
        items: poor.map((i) => ({ item_id: i.id, output_hash: sha256(outputOf('team-b', i.id)), human_verdict: i.human, output_chars: i.chars })),
      });
      teamBSet = created.set.id;
      const answer = await service.calibrate(ds, B, { set_id: teamBSet, outputs: poor.map((i) => ({ item_id: i.id, output: outputOf('team-b', i.id) })) });
      expect(answer).toMatchObject({ status: 'not_certified', scope: scopeA });
      teamBReport = answer.report_id;

      // The newest report of scope A is team-b's, and it is not certified: default's standing is still its own.
      expect(await service.judgeStatus(ds, DEFAULT_PROJECT, { scope: scopeA })).toMatchObject({ status: 'certified', report_id: certifiedA });
      expect(await service.judgeStatus(ds, B, { scope: scopeA })).toMatchObject({ status: 'not_certified', report_id: teamBReport });
      // Without a scope: team-b's pin is certified for nothing, although default's is for A.
      expect(await service.judgeStatus(ds, B, {})).toMatchObject({ status: 'not_certified', certified_scopes: [] });
      expect(await service.judgeStatus(ds, DEFAULT_PROJECT, {})).toMatchObject({ status: 'certified', certified_scopes: [scopeA] });
      // A project that labelled nothing is uncalibrated, whatever the others measured.
      expect(await service.judgeStatus(ds, 'team-c', { scope: scopeA })).toMatchObject({ status: 'uncalibrated', report_id: null });
    });

    it('calibration.reported carries the project outside default, and nothing new in default', async () => {
      const facts: Array<{ report_id: string; data: Record<string, unknown> }> = await ds.query(
        `SELECT data->>'report_id' AS report_id, data FROM events WHERE type = 'calibration.reported' AND data->>'report_id' = ANY($1::text[])`,
        [[teamBReport, certifiedA]],
      );
      const byId = new Map(facts.map((f) => [f.report_id, f.data]));
      expect(byId.get(teamBReport)).toMatchObject({ project: B, scope: scopeA, status: 'not_certified' });
      expect(byId.get(certifiedA)).not.toHaveProperty('project');
      expect(await ds.query(`SELECT project FROM calibration_reports WHERE id = $1`, [teamBReport])).toEqual([{ project: B }]);
    });

    it("another project's set or report answers what a missing one does", async () => {
      const defaultSet = await createSet('default-only', RUBRIC_B, items('dd', { tp: 1, fn: 0, fp: 0, tn: 1 }));
      const missing = '00000000-0000-4000-8000-000000000000';
      const setMissing = await refusal(service.getSet(ds, B, missing));
      expect(setMissing).toMatchObject({ status: 404, body: { code: 'SET_NOT_FOUND' } });
      for (const [project, id] of [[B, defaultSet], [DEFAULT_PROJECT, teamBSet]] as const) {
        const refused = await refusal(service.getSet(ds, project, id));
        expect(refused).toEqual({ status: setMissing.status, body: { ...setMissing.body, message: `no calibration set ${id}` } });
      }
      expect(await refusal(service.calibrate(ds, B, { set_id: defaultSet }))).toMatchObject({ status: 404, body: { code: 'SET_NOT_FOUND', message: `no calibration set ${defaultSet}` } });
      expect(await refusal(service.report(ds, DEFAULT_PROJECT, teamBReport))).toMatchObject({ status: 404, body: { code: 'REPORT_NOT_FOUND', message: `no calibration report ${teamBReport}` } });
      // Each project reads its own set with its own reports.
      const own = await service.getSet(ds, B, teamBSet);
      expect(own.reports.map((r) => r.report_id)).toEqual([teamBReport]);
      expect((await service.report(ds, B, teamBReport)).report_id).toBe(teamBReport);
    });

    it("a set's suite is the suite of that key in the set's project, when it is created and when it is calibrated", async () => {
      const caseIds = Array.from({ length: 60 }, (_, i) => `s${i}`);
      // Only team-b has suite `cal-suite`; its cases carry their own rubric (the suite's default llm_judge).
      await publishSuite(ds, B, 'cal-suite', 1, { type: 'llm_judge', rubric: 'Team b answers in French.' }, caseIds);
      const labelled = caseIds.map((id, i) => ({ id, human: i < 48 ? ('pass' as const) : ('fail' as const), judge: i < 48 ? ('pass' as const) : ('fail' as const), chars: 10 }));
      for (const i of labelled) verdicts.set(outputOf('cal-suite', i.id), i.judge);
      const body = {
        name: 'suite set',
        suite_key: 'cal-suite',
        items: labelled.map((i) => ({ item_id: i.id, case_id: i.id, output_hash: sha256(outputOf('cal-suite', i.id)), human_verdict: i.human, output_chars: i.chars })),
      };
      expect(await refusal(service.createSet(ds, DEFAULT_PROJECT, body))).toMatchObject({ status: 404, body: { code: 'SUITE_NOT_FOUND' } });
      const created = await service.createSet(ds, B, body);
      expect(created.set).toMatchObject({ suite_key: 'cal-suite', suite_version: 1 });
      const answer = await service.calibrate(ds, B, { set_id: created.set.id, outputs: labelled.map((i) => ({ item_id: i.id, output: outputOf('cal-suite', i.id) })) });
      expect(answer).toMatchObject({ status: 'certified', scope: 'suite:cal-suite' });
      expect(await service.judgeStatus(ds, B, { scope: 'suite:cal-suite' })).toMatchObject({ status: 'certified', report_id: answer.report_id });
      expect(await service.judgeStatus(ds, DEFAULT_PROJECT, { scope: 'suite:cal-suite' })).toMatchObject({ status: 'uncalibrated' });
    });
  });
});
