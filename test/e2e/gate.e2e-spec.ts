import { Client } from 'pg';
import { startCluster, type AppCluster } from '../support/app-processes';
import { createTestSchema, deleteTestStreams, type TestSchema, uniqueSuffix } from '../support/isolation';

/** The regression gate over HTTP, across processes (GT1-GT6, docs/gate.md). */
describe('e2e: the regression gate', () => {
  let schema: TestSchema;
  let cluster: AppCluster;
  let db: Client;
  const suffix = uniqueSuffix();
  const streamPrefix = `E2T_${suffix}_`;
  const key = `gate-${suffix}`;
  const judgeKey = `gate-judge-${suffix}`;
  const N = 40;

  beforeAll(async () => {
    schema = await createTestSchema('e2t');
    cluster = await startCluster({ schema: schema.schema, streamPrefix, subjectPrefix: `e2t_${suffix}`, apps: ['ingestion', 'scoring-worker', 'read-model', 'regression'] });
    db = new Client({ connectionString: schema.url });
    await db.connect();
    const cases = Array.from({ length: N }, (_, i) => ({ id: `c${i}`, input: `q${i}`, expected: 'yes' }));
    for (const suite of [
      { key, default_scorer: { type: 'exact' }, pass_threshold: 0.8, regression_threshold: 0.1, cases },
      { key: judgeKey, default_scorer: { type: 'exact' }, pass_threshold: 0.5, regression_threshold: 0.1, cases: [...cases.slice(0, 10), { id: 'tone', input: 'be kind', scorer: { type: 'llm_judge', rubric: 'Is the answer polite?' } }] },
    ]) {
      const res = await fetch(cluster.url('ingestion', '/v1/suites'), { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(suite) });
      expect(res.status).toBe(201);
    }
  }, 120_000);

  afterAll(async () => {
    await cluster?.stopAll();
    await db?.end();
    await deleteTestStreams(streamPrefix);
    await schema?.drop();
  });

  const outputs = (passing: number, n = N) => Array.from({ length: n }, (_, i) => ({ case_id: `c${i}`, output: i < passing ? 'yes' : 'no' }));

  async function post(route: string, body: unknown): Promise<{ status: number; json: any }> {
    const res = await fetch(cluster.url('ingestion', route), { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
    return { status: res.status, json: await res.json() };
  }

  const gate = (subject: string, over: Record<string, unknown>) => post('/v1/gate', { suite_key: key, subject_kind: 'agent', subject_id: subject, ...over });

  it('passes a good run, with every rate carrying its denominator and interval (GT1, GT6)', async () => {
    const r = await gate('pass', { outputs: outputs(38) });
    expect(r.status).toBe(200);
    expect(r.json).toMatchObject({ recorded_verdict: 'pass', effective_verdict: 'pass', reasons: [], budget: { decision: 'not_needed' } });
    expect(r.json.warnings.map((w: any) => w.code)).toEqual(['no_baseline']);
    expect(r.json.run).toMatchObject({ n: N, passed: 38, pass_rate: 38 / N, pass_threshold: 0.8 });
    expect(r.json.run.pass_rate_ci).toMatchObject({ level: 0.95 });
    expect(r.json.run.pass_rate_ci.lower).toBeLessThan(38 / N);
    expect(r.json.cases).toHaveLength(N);
  }, 60_000);

  it('fails below the pass threshold (R2)', async () => {
    const r = await gate('low', { outputs: outputs(20) });
    expect(r.json.recorded_verdict).toBe('fail');
    expect(r.json.reasons.map((x: any) => x.code)).toEqual(['below_pass_threshold']);
  }, 60_000);

  it('fails a regression against the baseline (G2), with the comparison in the verdict', async () => {
    await gate('reg', { outputs: outputs(40), run_id: `base-${suffix}` });
    const r = await gate('reg', { outputs: outputs(33) });
    expect(r.json.reasons.map((x: any) => x.code)).toEqual(['regressed']);
    expect(r.json.comparison).toMatchObject({ verdict: 'regressed', baseline_run_id: `base-${suffix}`, chosen_by: 'automatic', run: { passed: 33, n: N }, baseline: { passed: 40, n: N } });
    expect(r.json.comparison.pass_rate_diff.upper).toBeLessThan(0);
  }, 60_000);

  it('the same seed gives the same sample, another seed another one (GT3)', async () => {
    const all = outputs(N);
    const a = await gate('sample', { outputs: all, sample: { size: 10, seed: 'ci-42' } });
    const b = await gate('sample2', { outputs: all, sample: { size: 10, seed: 'ci-42' } });
    const c = await gate('sample3', { outputs: all, sample: { size: 10, seed: 'ci-43' } });
    const ids = (x: any) => x.json.cases.map((k: any) => k.case_id).sort();
    expect(a.json.run.n).toBe(10);
    expect(ids(a)).toEqual(ids(b));
    expect(ids(a)).not.toEqual(ids(c));
    expect(a.json.sample).toEqual({ size: 10, seed: 'ci-42' });
  }, 60_000);

  it('a suite with llm_judge and no judge configured: judge_uncalibrated saying the path to a passing gate, and a declared warning - never a silent pass (GT1, GT2)', async () => {
    const r = await post('/v1/gate', { suite_key: judgeKey, subject_kind: 'agent', subject_id: 'judge', outputs: [...outputs(10, 10), { case_id: 'tone', output: 'Thank you!' }] });
    expect(r.json.recorded_verdict).toBe('fail');
    expect(r.json.reasons.map((x: any) => x.code)).toContain('judge_uncalibrated');
    const reason = r.json.reasons.find((x: any) => x.code === 'judge_uncalibrated').message;
    for (const step of ['JUDGE_PROVIDER', 'evals label', 'evals calibrate', 'evals gate']) expect(reason).toContain(step);
    // One label per cause (issue 13): no judge configured is judge_not_configured, in the gate as in a run.
    expect(r.json.warnings.map((x: any) => x.code)).toContain('judge_not_configured');
    expect(r.json.judge).toMatchObject({ used: true, cases_not_scored: 1, skipped: 'judge_not_configured' });
    expect(r.json.cases.find((k: any) => k.case_id === 'tone')).toMatchObject({ passed: false, label: 'judge_not_configured' });
  }, 60_000);

  // Issue 13: a budget is money - a limit, a spend and a window - and its mode applies only to a spend that
  // does not fit in what is left. $0 of $10 spent leaves room whatever the mode (no judge here: no price, an
  // estimate of $0). Block and throttle of a priced judge: test/e2e/judge-budget.e2e-spec.ts.
  it.each(['allow', 'throttle', 'block'] as const)('budget %s with room: allowed before any judge spend (GT4)', async (mode) => {
    await db.query(`INSERT INTO budgets (scope, limit_usd, spent_usd, mode) VALUES ('judge', 10, 0, $1) ON CONFLICT (project, scope) DO UPDATE SET mode = EXCLUDED.mode`, [mode]);
    const r = await post('/v1/gate', { suite_key: judgeKey, subject_kind: 'agent', subject_id: `budget-${mode}`, outputs: [...outputs(10, 10), { case_id: 'tone', output: 'Thanks' }] });
    expect(r.json.budget).toMatchObject({ decision: 'allowed', estimate_usd: 0, left_usd: 10 });
    expect(r.json.reasons.map((x: any) => x.code)).not.toContain('budget_blocked');
    expect(r.json.judge.skipped).not.toBe('budget_blocked');
  }, 60_000);

  it('budget store unreadable: no spend, fails budget_blocked (GT4)', async () => {
    await db.query(`ALTER TABLE budgets RENAME TO budgets_unreadable`);
    try {
      const r = await post('/v1/gate', { suite_key: judgeKey, subject_kind: 'agent', subject_id: 'budget-down', outputs: outputs(10, 10) });
      expect(r.json.budget).toEqual({ decision: 'store_unreadable' });
      expect(r.json.reasons.map((x: any) => x.code)).toContain('budget_blocked');
      expect(r.json.judge.skipped).toBe('budget_blocked');
    } finally {
      await db.query(`ALTER TABLE budgets_unreadable RENAME TO budgets`);
    }
  }, 60_000);

  it('override: refused without a reason, audited, changes the effective verdict and never the recorded one (GT5)', async () => {
    const failed = await gate('override', { outputs: outputs(10) });
    const id = failed.json.gate_id;
    expect(failed.json.recorded_verdict).toBe('fail');
    expect((await post(`/v1/gate/${id}/override`, {})).status).toBe(400);
    expect((await post(`/v1/gate/${id}/override`, { reason: 'ok' })).status).toBe(400);
    const reason = 'Known upstream outage; release approved by the incident commander';
    const o = await post(`/v1/gate/${id}/override`, { reason });
    expect(o.status).toBe(200);
    expect(o.json).toMatchObject({ recorded_verdict: 'fail', effective_verdict: 'pass', override: { reason, before: 'fail', after: 'pass' } });
    const status = (await (await fetch(cluster.url('ingestion', `/v1/gate/${id}`))).json()) as any;
    expect(status).toMatchObject({ recorded_verdict: 'fail', effective_verdict: 'pass' });
    const audit = (await db.query(`SELECT reason, before, after FROM gate_overrides WHERE gate_id = $1`, [id])).rows;
    expect(audit).toEqual([{ reason, before: 'fail', after: 'pass' }]);
    await expect(db.query(`UPDATE gate_verdicts SET recorded_verdict = 'pass' WHERE gate_id = $1`, [id])).rejects.toThrow(/append-only/);
    expect((await post(`/v1/gate/${id}/override`, { reason })).status).toBe(409);
  }, 60_000);
});
