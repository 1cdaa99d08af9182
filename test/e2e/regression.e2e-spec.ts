import { startCluster, type AppCluster } from '../support/app-processes';
import { untilProjected } from '../support/read-model';
import { createTestSchema, deleteTestStreams, type TestSchema, uniqueSuffix } from '../support/isolation';
import { readReference } from '../support/reference';

/**
 * Regression through the whole path (G1-G5): suites pushed and runs scored over HTTP by separate processes,
 * the comparison served by the API. Newcombe's published examples are reproduced end to end.
 */
interface Reference {
  statistic: string;
  inputs: Record<string, number>;
  expected: [number, number];
  tolerance: number;
}
const newcombe = readReference<Reference[]>('stats-reference.json').filter(
  (r) => r.statistic === 'newcombe10_diff_95',
);

describe('e2e: regression against a baseline, over HTTP', () => {
  let schema: TestSchema;
  let cluster: AppCluster;
  const suffix = uniqueSuffix();
  const streamPrefix = `E2G_${suffix}_`;

  beforeAll(async () => {
    schema = await createTestSchema('e2g');
    cluster = await startCluster({ schema: schema.schema, streamPrefix, subjectPrefix: `e2g_${suffix}`, apps: ['ingestion', 'scoring-worker', 'read-model', 'regression'] });
  }, 120_000);

  afterAll(async () => {
    await cluster?.stopAll();
    await deleteTestStreams(streamPrefix);
    await schema?.drop();
  });

  async function pushSuite(key: string, n: number, regressionThreshold = 0.01): Promise<number> {
    const suite = { key, default_scorer: { type: 'exact' }, pass_threshold: 0.5, regression_threshold: regressionThreshold, cases: Array.from({ length: n }, (_, i) => ({ id: `c${i}`, input: `q${i}`, expected: 'yes' })) };
    const res = await fetch(cluster.url('ingestion', '/v1/suites'), { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(suite) });
    const body = (await res.json()) as any;
    expect([200, 201]).toContain(res.status);
    return body.suite.version;
  }

  async function run(body: Record<string, unknown>, n: number, passing: number): Promise<any> {
    const outputs = Array.from({ length: n }, (_, i) => ({ case_id: `c${i}`, output: i < passing ? 'yes' : 'no' }));
    const res = await fetch(cluster.url('ingestion', '/v1/runs'), { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ subject_kind: 'agent', outputs, ...body }) });
    const json = (await res.json()) as any;
    if (res.status !== 200) throw new Error(`POST /v1/runs ${res.status}: ${JSON.stringify(json)}`);
    return json;
  }

  it.each(newcombe.map((r, i) => [`${r.inputs.x1}/${r.inputs.n1} vs ${r.inputs.x2}/${r.inputs.n2}`, i, r] as const))(
    'serves the published Newcombe interval for candidate %s (G1, G3)',
    async (_name, i, r) => {
      const { x1, n1, x2, n2 } = r.inputs;
      const key = `newcombe-${i}-${suffix}`;
      const baselineVersion = await pushSuite(key, n2);
      const base = await run({ run_id: `nb-${i}-${suffix}`, suite_key: key, suite_version: baselineVersion, subject_id: `s${i}` }, n2, x2);
      const candidateVersion = n1 === n2 ? baselineVersion : await pushSuite(key, n1);
      const cand = await run({ run_id: `nc-${i}-${suffix}`, suite_key: key, suite_version: candidateVersion, subject_id: `s${i}`, baseline_run_id: base.run.run_id }, n1, x1);
      const c = cand.regression.comparison;
      expect(cand.regression.chosen_by).toBe('explicit');
      expect(Math.abs(c.pass_rate_diff.lower - r.expected[0])).toBeLessThanOrEqual(r.tolerance);
      expect(Math.abs(c.pass_rate_diff.upper - r.expected[1])).toBeLessThanOrEqual(r.tolerance);
      expect(c.run).toMatchObject({ passed: x1, n: n1 });
      expect(c.baseline).toMatchObject({ passed: x2, n: n2 });
      if (candidateVersion !== baselineVersion) expect(c.changes.suite_version).toEqual({ baseline: baselineVersion, run: candidateVersion });
      const served = await untilProjected(async () => {
        const res = await fetch(cluster.url('read-model', `/v1/runs/${cand.run.run_id}`));
        return res.status === 200 ? ((await res.json()) as any) : null;
      });
      expect(served.regression).toEqual(cand.regression);
    },
    60_000,
  );

  it('a drop above the threshold whose interval contains zero is inconclusive_noise: no finding, and skipped as automatic baseline (G2, G4)', async () => {
    const key = `noise-${suffix}`;
    await pushSuite(key, 10, 0.1);
    const good = await run({ run_id: `good-${suffix}`, suite_key: key, subject_id: 'noise' }, 10, 9);
    expect(good.regression.verdict).toBe('no_baseline');
    const noisy = await run({ run_id: `noisy-${suffix}`, suite_key: key, subject_id: 'noise' }, 10, 7);
    expect(noisy.regression).toMatchObject({ verdict: 'inconclusive_noise', chosen_by: 'automatic', baseline_run_id: `good-${suffix}` });
    expect(noisy.regression.comparison.pass_rate_diff.lower).toBeLessThan(0);
    expect(noisy.regression.comparison.pass_rate_diff.upper).toBeGreaterThan(0);
    const next = await run({ run_id: `next-${suffix}`, suite_key: key, subject_id: 'noise' }, 10, 9);
    expect(next.regression.baseline_run_id).toBe(`good-${suffix}`);
    const findings = await fetch(cluster.url('ingestion', '/v1/runs'), { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ suite_key: key, subject_kind: 'agent', subject_id: 'noise', baseline_run_id: `nb-0-${suffix}`, outputs: [] }) });
    expect(findings.status).toBe(422);
    expect(((await findings.json()) as any).code).toBe('BASELINE_OTHER_SUITE');
  }, 60_000);

  it('a pinned baseline beats the automatic one, and an explicit one beats the pin (G5)', async () => {
    const key = `pins-${suffix}`;
    await pushSuite(key, 20, 0.1);
    const first = await run({ run_id: `p1-${suffix}`, suite_key: key, subject_id: 'pinned' }, 20, 18);
    await run({ run_id: `p2-${suffix}`, suite_key: key, subject_id: 'pinned' }, 20, 19);
    const pin = await fetch(cluster.url('regression', '/v1/baselines'), { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ suite_key: key, subject_kind: 'agent', subject_id: 'pinned', run_id: first.run.run_id }) });
    expect(pin.status).toBe(201);
    const listed = (await (await fetch(cluster.url('regression', `/v1/baselines?suite_key=${key}`))).json()) as any;
    expect(listed.pins).toEqual([expect.objectContaining({ run_id: first.run.run_id, subject_id: 'pinned', variant: null })]);
    const third = await run({ run_id: `p3-${suffix}`, suite_key: key, subject_id: 'pinned' }, 20, 18);
    expect(third.regression).toMatchObject({ chosen_by: 'pinned', baseline_run_id: first.run.run_id });
    const fourth = await run({ run_id: `p4-${suffix}`, suite_key: key, subject_id: 'pinned', baseline_run_id: `p2-${suffix}` }, 20, 18);
    expect(fourth.regression).toMatchObject({ chosen_by: 'explicit', baseline_run_id: `p2-${suffix}` });
    const otherSuite = await fetch(cluster.url('regression', '/v1/baselines'), { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ suite_key: `noise-${suffix}`, subject_kind: 'agent', subject_id: 'pinned', run_id: first.run.run_id }) });
    expect(otherSuite.status).toBe(422);
    expect(((await otherSuite.json()) as any).code).toBe('BASELINE_OTHER_SUITE');
  }, 60_000);

  it('serves the scorecard of a subject with several runs as JSON and CSV, field by field (SC1, GT6)', async () => {
    const key = `pins-${suffix}`;
    // The runs above were answered once their comparison was in the log; the read model projects the last
    // of them a moment later (ADR 0006, docs/read-model.md "Consistency"): wait for it, then check every field.
    const fourth = `p4-${suffix}`;
    await untilProjected(async () => {
      const res = await fetch(cluster.url('read-model', `/v1/runs/${fourth}`));
      return res.status === 404 ? null : ((await res.json()) as { regression?: unknown });
    }, fourth);
    const json = (await (await fetch(cluster.url('read-model', `/v1/scorecards?suite_key=${key}&format=json`))).json()) as any;
    expect(json.scorecards).toHaveLength(1);
    const card = json.scorecards[0];
    expect(card).toMatchObject({ suite_key: key, subject_kind: 'agent', subject_id: 'pinned', runs: 4, latest_run_id: `p4-${suffix}` });
    expect(card.latest_pass_rate).toMatchObject({ passed: 18, n: 20, rate: 0.9, level: 0.95 });
    expect(card.overall_pass_rate).toMatchObject({ passed: 73, n: 80 });
    expect(card.latest_pass_rate.lower).toBeLessThan(0.9);
    expect(card.trend).toMatchObject({ runs: 4, first_run_id: `p1-${suffix}`, last_run_id: `p4-${suffix}` });
    const res = await fetch(cluster.url('read-model', `/v1/scorecards?suite_key=${key}&format=csv`));
    expect(res.headers.get('content-type')).toContain('text/csv');
    const [header, row] = (await res.text()).split('\r\n');
    const fields = Object.fromEntries(header.split(',').map((h, i) => [h, row.split(',')[i]]));
    expect(fields).toMatchObject({
      suite_key: key,
      subject_id: 'pinned',
      runs: '4',
      latest_run_id: `p4-${suffix}`,
      latest_passed: '18',
      latest_n: '20',
      latest_pass_rate: '0.900000',
      latest_ci_lower: card.latest_pass_rate.lower.toFixed(6),
      latest_ci_upper: card.latest_pass_rate.upper.toFixed(6),
      overall_passed: '73',
      overall_n: '80',
      trend_direction: card.trend.direction,
      latest_verdict: card.latest_verdict,
    });
    expect((await fetch(cluster.url('read-model', '/v1/scorecards?format=xml'))).status).toBe(400);
  }, 60_000);
});
