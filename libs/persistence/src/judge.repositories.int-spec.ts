import { randomUUID } from 'node:crypto';
import { DEFAULT_PROJECT } from '@evals/contracts';
import type { DataSource } from 'typeorm';
import { createTestSchema, type TestSchema } from '../../../test/support/isolation';
import { testServers } from '../../../test/support/servers';
import { CalibrationRepository } from './calibration.repository';
import { ComparisonRepository } from './comparison.repository';
import { createDataSource, migrate } from './data-source';
import { JudgeEvidenceRepository } from './judge-evidence.repository';
import { JudgePinQueries } from './dashboard.queries';
import { JudgeStatusRepository, judgeCorrectedPassRate } from './judge-status.repository';

const MODEL = 'gpt-4o-2024-08-06';
const rate = (numerator: number, denominator: number) => ({ value: numerator / denominator, numerator, denominator, lower: 0, upper: 1 });
const report = (status: string, sens = rate(9, 10), spec = rate(8, 10)) => ({
  n: 20,
  agreement: rate(17, 20),
  kappa: { value: 0.7, observed: 0.85, expected: 0.5 },
  sensitivity: sens,
  specificity: spec,
  targets: { agreement: 0.85, kappa: 0.6 },
  status,
  reasons: status === 'certified' ? [] : ['kappa_below_target'],
});

// J4, J5, D4: the judge's evidence tables are append-only in the database; the latest report is a pin's status.
describe('integration: judge repositories and their append-only tables (J4, J5, D4)', () => {
  let schema: TestSchema;
  let ds: DataSource;
  const calibration = new CalibrationRepository();
  const status = new JudgeStatusRepository();
  const comparisons = new ComparisonRepository();
  const evidence = new JudgeEvidenceRepository();
  const setId = randomUUID();

  beforeAll(async () => {
    schema = await createTestSchema('judgerepo');
    ds = createDataSource({ url: testServers.postgres.url, schema: schema.schema, poolSize: 2 });
    await ds.initialize();
    await migrate(ds);
    await calibration.createSet(ds, DEFAULT_PROJECT, { id: setId, name: 'set', golden: true, rubric: 'r', suite_key: null, suite_version: null, item_count: 2 }, [
      { item_id: 'i1', case_id: null, output_hash: 'a'.repeat(64), human_verdict: 'pass', output_chars: 5, golden_output: 'hello', golden_input: null },
      { item_id: 'i2', case_id: 'c2', output_hash: 'b'.repeat(64), human_verdict: 'fail', output_chars: 2, golden_output: null, golden_input: null },
    ]);
    await comparisons.add(ds, DEFAULT_PROJECT, { id: randomUUID(), run_a: 'a', run_b: 'b', judge_model: MODEL, prompt_version: 'pairwise-v1', rubric_hash: 'c'.repeat(64), report: { ties: 1 } });
  });

  afterAll(async () => {
    await ds?.destroy();
    await schema?.drop();
  });

  it('per scope: an uncalibrated scope, then the latest measured report of that scope wins - never another scope\'s; the corrected pass rate only when certified', async () => {
    const A = `rubric:${'a'.repeat(64)}`;
    const B = `rubric:${'b'.repeat(64)}`;
    const add = (scope: string | null, s: 'certified' | 'not_certified' | 'insufficient_set') =>
      calibration.addReport(ds, DEFAULT_PROJECT, { id: randomUUID(), set_id: setId, judge_model: MODEL, prompt_version: 'judge-v1', scope, targets: { agreement: 0.85, kappa: 0.6 }, report: report(s), status: s });
    expect(await status.status(ds, DEFAULT_PROJECT, MODEL, 'judge-v1', A)).toMatchObject({ status: 'uncalibrated', scope: A, report_id: null, reasons: ['never_calibrated'] });
    const first = await add(A, 'not_certified');
    const notYet = await status.status(ds, DEFAULT_PROJECT, MODEL, 'judge-v1', A);
    expect(notYet).toMatchObject({ status: 'not_certified', report_id: first.id, kappa: 0.7, reasons: ['kappa_below_target'] });
    expect(judgeCorrectedPassRate(notYet, { passed: 6, n: 10 })).toBeNull();
    const second = await add(A, 'certified');
    // Rubric B's report, newer, replaces nothing of A's; a refused set and a pre-scope report displace nothing.
    const other = await add(B, 'not_certified');
    await add(A, 'insufficient_set');
    await add(null, 'not_certified');
    const certified = await status.status(ds, DEFAULT_PROJECT, MODEL, 'judge-v1', A);
    expect(certified).toMatchObject({ status: 'certified', report_id: second.id, set_id: setId, n: 20 });
    expect(await status.status(ds, DEFAULT_PROJECT, MODEL, 'judge-v1', B)).toMatchObject({ status: 'not_certified', report_id: other.id });
    expect((await status.scopes(ds, DEFAULT_PROJECT, MODEL, 'judge-v1')).map((s) => [s.scope, s.status])).toEqual([
      [A, 'certified'],
      [B, 'not_certified'],
    ]);
    // Rogan-Gladen: (0.6 + 0.8 - 1) / (0.9 + 0.8 - 1) = 0.4 / 0.7, with the denominators it was computed from.
    const corrected = judgeCorrectedPassRate(certified, { passed: 6, n: 10 })!;
    expect(corrected.rate).toBeCloseTo(0.4 / 0.7, 12);
    expect(corrected).toMatchObject({ apparent: { passed: 6, n: 10 }, sensitivity: { x: 9, n: 10 }, specificity: { x: 8, n: 10 } });
    expect(await status.status(ds, DEFAULT_PROJECT, MODEL, 'judge-v2', A)).toMatchObject({ status: 'uncalibrated' });
    expect(await status.scopes(ds, DEFAULT_PROJECT, MODEL, 'judge-v2')).toEqual([]);
    await expect(add('global', 'certified')).rejects.toThrow(/check/i);
  });

  it("per project (issue 30): the same scope certified in one project is uncalibrated in the other; sets, items, reports and comparisons are read only from their own", async () => {
    const T = 'team-t';
    const S = 'suite:shared';
    const teamSet = randomUUID();
    await calibration.createSet(ds, T, { id: teamSet, name: 'team set', golden: false, rubric: 'r', suite_key: null, suite_version: null, item_count: 1 }, [
      { item_id: 't1', case_id: null, output_hash: 'c'.repeat(64), human_verdict: 'pass', output_chars: 3, golden_output: null, golden_input: null },
    ]);
    const certified = await calibration.addReport(ds, T, { id: randomUUID(), set_id: teamSet, judge_model: MODEL, prompt_version: 'judge-p', scope: S, targets: {}, report: report('certified'), status: 'certified' });
    expect(await status.status(ds, T, MODEL, 'judge-p', S)).toMatchObject({ status: 'certified', report_id: certified.id });
    expect(await status.status(ds, DEFAULT_PROJECT, MODEL, 'judge-p', S)).toMatchObject({ status: 'uncalibrated', report_id: null });
    expect(await status.scopes(ds, DEFAULT_PROJECT, MODEL, 'judge-p')).toEqual([]);
    expect((await status.scopes(ds, T, MODEL, 'judge-p')).map((x) => x.report_id)).toEqual([certified.id]);
    // GET /v1/judges: each project lists the pins its own reports measured.
    const pins = new JudgePinQueries();
    expect((await pins.list(ds, T)).map((p) => [p.prompt_version, p.status, p.set_name])).toEqual([['judge-p', 'certified', 'team set']]);
    expect((await pins.list(ds, DEFAULT_PROJECT)).map((p) => p.prompt_version)).not.toContain('judge-p');

    expect(await calibration.findSet(ds, DEFAULT_PROJECT, teamSet)).toBeNull();
    expect(await calibration.items(ds, DEFAULT_PROJECT, teamSet)).toEqual([]);
    expect((await calibration.items(ds, T, teamSet)).map((i) => i.item_id)).toEqual(['t1']);
    expect(await calibration.findReport(ds, DEFAULT_PROJECT, certified.id)).toBeNull();
    expect(await calibration.reportsForSet(ds, DEFAULT_PROJECT, teamSet)).toEqual([]);
    expect(await calibration.findSet(ds, T, setId)).toBeNull();
    // A report never attaches to another project's set: nothing stored, no fact in the log.
    const foreign = randomUUID();
    await expect(calibration.addReport(ds, T, { id: foreign, set_id: setId, judge_model: MODEL, prompt_version: 'judge-p', scope: S, targets: {}, report: report('certified'), status: 'certified' })).rejects.toThrow(/not a set of project team-t/);
    expect(await ds.query(`SELECT 1 FROM events WHERE message_id = $1`, [foreign])).toEqual([]);

    const cmp = await comparisons.add(ds, T, { id: randomUUID(), run_a: 'a', run_b: 'b', judge_model: MODEL, prompt_version: 'pairwise-v1', rubric_hash: 'd'.repeat(64), report: {} });
    expect(await comparisons.find(ds, T, cmp.id)).toMatchObject({ id: cmp.id });
    expect(await comparisons.find(ds, DEFAULT_PROJECT, cmp.id)).toBeNull();
  });

  it('a golden text over 4 000 characters and a bad hash or verdict are refused by the database itself', async () => {
    const bad = (over: Record<string, unknown>) =>
      calibration.createSet(ds, DEFAULT_PROJECT, { id: randomUUID(), name: 'x', golden: true, rubric: 'r', suite_key: null, suite_version: null, item_count: 1 }, [
        { item_id: 'i', case_id: null, output_hash: 'a'.repeat(64), human_verdict: 'pass', output_chars: 1, golden_output: null, golden_input: null, ...over } as never,
      ]);
    await expect(bad({ golden_output: 'x'.repeat(4001) })).rejects.toThrow(/check/i);
    await expect(bad({ output_hash: 'XYZ' })).rejects.toThrow(/check/i);
    await expect(bad({ human_verdict: 'maybe' })).rejects.toThrow(/check/i);
  });

  it.each([
    ['calibration_sets', `UPDATE calibration_sets SET name = 'x'`],
    ['calibration_items', `UPDATE calibration_items SET human_verdict = 'pass'`],
    ['calibration_reports', `UPDATE calibration_reports SET status = 'certified'`],
    ['comparison_reports', `UPDATE comparison_reports SET report = '{}'`],
  ])('%s: UPDATE, DELETE and TRUNCATE fail in the database', async (table, update) => {
    const [{ n: before }] = await ds.query(`SELECT count(*)::int AS n FROM ${table}`);
    expect(before).toBeGreaterThan(0);
    await expect(ds.query(update)).rejects.toThrow(new RegExp(`table ${table} is append-only: UPDATE refused`));
    await expect(ds.query(`DELETE FROM ${table}`)).rejects.toThrow(new RegExp(`table ${table} is append-only: DELETE refused`));
    await expect(ds.query(`TRUNCATE ${table} CASCADE`)).rejects.toThrow(/append-only: TRUNCATE refused/);
  });

  // Issue 15: a batch of some size in a transaction goes by COPY; the judge columns, NULLs included, must come
  // back exactly as the statement wrote them.
  it('judged evidence by COPY in a transaction: every judge column round-trips, NULLs included, and a redelivery writes nothing', async () => {
    const rows = Array.from({ length: 90 }, (_, i) => ({
      run_id: 'r-copy',
      case_id: `c${i}`,
      scorer: 'llm_judge',
      scorer_version: '1.0.0',
      score: i % 2 ? 0.75 : 0,
      passed: i % 2 === 1,
      label: i % 2 ? 'judge_pass' : 'judge_fail',
      detail_hash: 'h'.repeat(43),
      output_chars: i,
      scored_at: '2026-12-02T04:00:00.000Z',
      judge: {
        judge_model: MODEL,
        prompt_version: 'judge-v1',
        judge_cost_usd: i * 0.0001,
        judge_input_tokens: 100 + i,
        judge_output_tokens: i,
        judge_cached: i % 3 === 0 ? null : i % 3 === 1,
        ...(i % 4 === 0 ? { judge_repeats: 3, judge_pass_votes: i % 8 === 0 ? 2 : 1 } : {}),
      },
    }));
    expect(await ds.transaction((tx) => evidence.insertBatch(tx, rows))).toHaveLength(90);
    expect(await ds.transaction((tx) => evidence.insertBatch(tx, rows))).toHaveLength(0);
    const stored: Array<Record<string, unknown>> = await ds.query(
      `SELECT case_id, judge_model, prompt_version, judge_cost_usd, judge_input_tokens, judge_output_tokens, judge_cached, judge_repeats, judge_pass_votes
       FROM evidence WHERE run_id = 'r-copy' ORDER BY output_chars`,
    );
    expect(stored).toEqual(
      rows.map((r) => ({
        case_id: r.case_id,
        judge_model: MODEL,
        prompt_version: 'judge-v1',
        judge_cost_usd: r.judge.judge_cost_usd,
        judge_input_tokens: r.judge.judge_input_tokens,
        judge_output_tokens: r.judge.judge_output_tokens,
        judge_cached: r.judge.judge_cached,
        judge_repeats: r.judge.judge_repeats ?? null,
        judge_pass_votes: r.judge.judge_pass_votes ?? null,
      })),
    );
  });

  it('judged evidence: inserted once and summed per run', async () => {
    const row = (case_id: string, label: string, cached: boolean | null, cost: number) => ({
      run_id: 'r1',
      case_id,
      scorer: 'llm_judge',
      scorer_version: '1.0.0',
      score: label === 'judge_pass' ? 0.9 : 0,
      passed: label === 'judge_pass',
      label,
      detail_hash: 'h',
      output_chars: 10,
      scored_at: new Date().toISOString(),
      judge: { judge_model: MODEL, prompt_version: 'judge-v1', judge_cost_usd: cost, judge_input_tokens: cost > 0 ? 100 : 0, judge_output_tokens: cost > 0 ? 10 : 0, judge_cached: cached },
    });
    const rows = [row('c1', 'judge_pass', false, 0.001), row('c2', 'judge_pass', true, 0), row('c3', 'judge_unparseable', false, 0.002), row('c4', 'judge_credential_missing', false, 0)];
    expect(await evidence.insertBatch(ds, rows)).toHaveLength(4);
    expect(await evidence.insertBatch(ds, rows)).toHaveLength(0);
    expect(await evidence.existing(ds, 'r1', ['c1', 'c9'])).toEqual(new Set(['c1']));
    expect(await evidence.runUsage(ds, 'r1')).toEqual({
      cases: 4,
      calls: 2,
      errors: 1,
      credential_missing: 1,
      not_configured: 0,
      skipped: 0,
      cache_hits: 1,
      cache_misses: 3,
      input_tokens: 200,
      output_tokens: 20,
      cost_usd: expect.closeTo(0.003, 12),
      model: MODEL,
      prompt_version: 'judge-v1',
    });
    expect(await evidence.runUsage(ds, 'none')).toBeNull();
  });
});
