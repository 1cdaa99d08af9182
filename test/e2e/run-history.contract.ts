/**
 * A history that only trustworthy runs enter (issue 12: R7, G4, G7, GT1-GT2), over HTTP, as a part of the
 * HTTP API contract: the same assertions on `evals serve` (embedded) and on the four apps (real servers).
 * Each scenario is one a user meets in ordinary use, and each was once a way to poison the baseline that
 * the next verdict rests on.
 */
import { uniqueSuffix } from '../support/isolation';
import { untilProjected } from '../support/read-model';

export interface HistoryReply {
  readonly status: number;
  readonly json: any;
  readonly text: string;
}

export interface HistoryClient {
  post(app: 'ingestion' | 'read' | 'regression', path: string, body: unknown): Promise<HistoryReply>;
  get(app: 'ingestion' | 'read' | 'regression', path: string): Promise<HistoryReply>;
}

const expectStatus = (r: HistoryReply, status: number): void => {
  if (r.status !== status) throw new Error(`expected HTTP ${status}, got ${r.status}: ${r.text.slice(0, 2000)}`);
};

export function runHistoryContract(client: () => HistoryClient): void {
  describe('a history only trustworthy runs enter (R7, G4, G7)', () => {
    const sfx = uniqueSuffix();
    const exact = (i: number) => ({ id: `c${i}`, input: `question ${i}`, expected: 'yes' });
    const suite = (key: string, extra: unknown[] = []) => ({
      key,
      default_scorer: { type: 'exact' },
      pass_threshold: 0.5,
      regression_threshold: 0.1,
      cases: [...Array.from({ length: 11 }, (_, i) => exact(i)), ...extra],
    });
    const outputs = (passing: number, n = 11) => Array.from({ length: n }, (_, i) => ({ case_id: `c${i}`, output: i < passing ? 'yes' : 'no' }));

    async function push(body: unknown): Promise<number> {
      const r = await client().post('ingestion', '/v1/suites', body);
      expectStatus(r, 201);
      return r.json.suite.version;
    }

    /** The read model's view of a run the ingestion answered: waited for until it carries the verdict. */
    const readView = (runId: string) =>
      untilProjected(async () => {
        const v = await client().get('read', `/v1/runs/${encodeURIComponent(runId)}`);
        return v.status === 200 ? v.json : null;
      }, `run ${runId}`);

    /** A synchronous run (R5); the scorecards and views read after it come from the read model, so it is waited for. */
    async function run(body: Record<string, unknown>): Promise<any> {
      const r = await client().post('ingestion', '/v1/runs', { subject_kind: 'agent', ...body });
      expectStatus(r, 200);
      await readView(r.json.run.run_id);
      return r.json;
    }

    it('an empty outputs list is refused (422 EMPTY_RUN) and recorded nowhere; the next regression is still caught', async () => {
      const key = `hist-empty-${sfx}`;
      await push(suite(key));
      const base = await run({ run_id: `he-base-${sfx}`, suite_key: key, subject_id: 'bot', outputs: outputs(10) });
      expect(base.regression).toMatchObject({ verdict: 'no_baseline', completeness: 'complete', baseline_eligible: true });

      const empty = await client().post('ingestion', '/v1/runs', { run_id: `he-empty-${sfx}`, suite_key: key, subject_kind: 'agent', subject_id: 'bot', outputs: [] });
      expectStatus(empty, 422);
      expect(empty.json).toMatchObject({ code: 'EMPTY_RUN', field: 'outputs' });
      expectStatus(await client().get('read', `/v1/runs/he-empty-${sfx}`), 404);

      const cand = await run({ run_id: `he-cand-${sfx}`, suite_key: key, subject_id: 'bot', outputs: outputs(1) });
      expect(cand.regression).toMatchObject({ verdict: 'regressed', baseline_run_id: `he-base-${sfx}`, chosen_by: 'automatic' });
      expect(cand.regression.comparison).toMatchObject({ run: { passed: 1, n: 11 }, baseline: { passed: 10, n: 11 } });
    }, 60_000);

    it('a regressed run is not the next automatic baseline (the ratchet)', async () => {
      const key = `hist-ratchet-${sfx}`;
      await push(suite(key));
      await run({ run_id: `hr-base-${sfx}`, suite_key: key, subject_id: 'bot', outputs: outputs(10) });
      const bad = await run({ run_id: `hr-bad-${sfx}`, suite_key: key, subject_id: 'bot', outputs: outputs(1) });
      expect(bad.regression).toMatchObject({ verdict: 'regressed', baseline_eligible: false, baseline_ineligible_reason: 'regressed' });
      // Just as bad: against the regressed run it would compare equal and pass.
      const next = await run({ run_id: `hr-next-${sfx}`, suite_key: key, subject_id: 'bot', outputs: outputs(1) });
      expect(next.regression).toMatchObject({ verdict: 'regressed', baseline_run_id: `hr-base-${sfx}` });
    }, 60_000);

    it('a gate whose judge is skipped fails for its judge reason, raises no finding, is incomplete and no baseline', async () => {
      const key = `hist-judge-${sfx}`;
      // v1: deterministic cases only; v2 adds one llm_judge case this target has no judge for (GT2).
      await push(suite(key));
      const v2 = await push(suite(key, [{ id: 'j0', input: 'be polite', scorer: { type: 'llm_judge', rubric: 'Is the answer polite?' } }]));
      const base = await run({ run_id: `hj-base-${sfx}`, suite_key: key, suite_version: 1, subject_id: 'bot', outputs: outputs(10) });
      expect(base.regression).toMatchObject({ completeness: 'complete' });

      const g = await client().post('ingestion', '/v1/gate', {
        suite_key: key,
        suite_version: v2,
        subject_kind: 'agent',
        subject_id: 'bot',
        outputs: [...outputs(10), { case_id: 'j0', output: 'thank you' }],
      });
      expectStatus(g, 200);
      expect(g.json.recorded_verdict).toBe('fail');
      const reasons = (g.json.reasons as Array<{ code: string }>).map((r) => r.code);
      expect(reasons.some((c) => c.startsWith('judge_'))).toBe(true);
      expect(reasons).not.toContain('regressed');
      const gateRunId = g.json.run.run_id;
      // Compared on the 11 cases both runs scored: nothing dropped, so no finding.
      expect(g.json.comparison).toMatchObject({ verdict: 'no_regression', baseline_run_id: `hj-base-${sfx}` });
      expect(g.json.comparison.compared_cases).toMatchObject({ run: { n: 11, of: 12 }, left_out: { unscored_in_run: 1 } });
      const view = await readView(gateRunId);
      expect(view.regression).toMatchObject({ completeness: 'incomplete', baseline_eligible: false, baseline_ineligible_reason: 'incomplete' });
      const finding = await client().get('regression', `/v1/findings/${gateRunId}`);
      expectStatus(finding, 404);

      // The next good run is compared with the last eligible run, not the gate's incomplete one.
      const next = await run({ run_id: `hj-next-${sfx}`, suite_key: key, suite_version: 1, subject_id: 'bot', outputs: outputs(10) });
      expect(next.regression).toMatchObject({ verdict: 'no_regression', baseline_run_id: `hj-base-${sfx}` });

      // The scorecard shows the incomplete run but keeps it out of the pooled rate.
      const cards = await client().get('read', `/v1/scorecards?suite_key=${key}&subject_id=bot`);
      expectStatus(cards, 200);
      expect(cards.json.scorecards).toEqual([expect.objectContaining({ runs: 3, runs_incomplete: 1, overall_pass_rate: expect.objectContaining({ passed: 20, n: 22 }) })]);
    }, 60_000);

    it('a second output for a case in one request: 422 DUPLICATE_OUTPUT naming it, and nothing recorded', async () => {
      const key = `hist-dup-${sfx}`;
      await push(suite(key));
      const r = await client().post('ingestion', '/v1/runs', {
        run_id: `hd-${sfx}`,
        suite_key: key,
        subject_kind: 'agent',
        subject_id: 'bot',
        outputs: [...outputs(11), { case_id: 'c1', output: 'another answer' }],
      });
      expectStatus(r, 422);
      expect(r.json).toMatchObject({ code: 'DUPLICATE_OUTPUT', field: 'outputs[11].case_id' });
      expect(r.text).not.toContain('another answer');
      expectStatus(await client().get('read', `/v1/runs/hd-${sfx}`), 404);
    }, 60_000);

    it('the same 200 cases scored twice: the paired interval decides a 12-case drop the independent one cannot (G7)', async () => {
      const key = `hist-paired-${sfx}`;
      const cases = Array.from({ length: 200 }, (_, i) => exact(i));
      await push({ key, default_scorer: { type: 'exact' }, pass_threshold: 0.1, regression_threshold: 0.05, cases });
      const answers = (passing: number) => Array.from({ length: 200 }, (_, i) => ({ case_id: `c${i}`, output: i < passing ? 'yes' : 'no' }));
      await run({ run_id: `hp-base-${sfx}`, suite_key: key, subject_id: 'bot', outputs: answers(100) });
      // The 12 cases c88..c99 flip from pass to fail; nothing flips the other way.
      const cand = await run({ run_id: `hp-cand-${sfx}`, suite_key: key, subject_id: 'bot', outputs: answers(88) });
      const c = cand.regression.comparison;
      expect(c.pass_rate_diff.lower).toBeLessThan(0);
      expect(c.pass_rate_diff.upper).toBeGreaterThan(0);
      expect(c.paired_diff).toMatchObject({ baseline_only: 12, run_only: 0, n: 200, method: 'newcombe_paired_10' });
      expect(c.paired_diff.upper).toBeLessThan(0);
      expect(c).toMatchObject({ decided_by: 'paired', verdict: 'regressed' });
      expect(cand.regression.verdict).toBe('regressed');
      // The finding carries the interval that decided, and the counts of the same 200 cases.
      const finding = await client().get('regression', `/v1/findings/hp-cand-${sfx}`);
      expectStatus(finding, 200);
      const f = finding.json.finding ?? finding.json;
      expect(f.pass_rate_diff).toMatchObject({ method: 'newcombe_paired_10', lower: c.paired_diff.lower, upper: c.paired_diff.upper });
      expect(f).toMatchObject({ run: { passed: 88, n: 200 }, baseline: { passed: 100, n: 200 } });
      // ...and both intervals, with b, c and n of the paired one (G7).
      expect(f.decided_by).toBe('paired');
      expect(f.paired_diff).toMatchObject({ baseline_only: 12, run_only: 0, n: 200, lower: c.paired_diff.lower, upper: c.paired_diff.upper });
      expect(f.independent_diff).toMatchObject({ method: 'newcombe_hybrid_score', lower: c.pass_rate_diff.lower, upper: c.pass_rate_diff.upper });
      expect(f.independent_diff.lower).toBeLessThan(0);
      expect(f.independent_diff.upper).toBeGreaterThan(0);
    }, 60_000);

    it('an inconclusive drop states the cases per run that would resolve it (G8)', async () => {
      const key = `hist-needed-${sfx}`;
      const cases = Array.from({ length: 40 }, (_, i) => exact(i));
      await push({ key, default_scorer: { type: 'exact' }, pass_threshold: 0.1, regression_threshold: 0.01, cases });
      // Baseline passes c0..c19; the candidate loses c17..c19 and gains c20: 3 flips down, 1 up.
      const answers = (pass: (i: number) => boolean) => Array.from({ length: 40 }, (_, i) => ({ case_id: `c${i}`, output: pass(i) ? 'yes' : 'no' }));
      await run({ run_id: `hn-base-${sfx}`, suite_key: key, subject_id: 'bot', outputs: answers((i) => i < 20) });
      const cand = await run({ run_id: `hn-cand-${sfx}`, suite_key: key, subject_id: 'bot', outputs: answers((i) => i < 17 || i === 20) });
      const c = cand.regression.comparison;
      expect(c).toMatchObject({ verdict: 'inconclusive_noise', decided_by: 'paired' });
      // Connor (1987) for McNemar: psi = 4/40, delta = 2/40, 95% two-sided, 80% power.
      const [za, zb, psi, delta] = [1.959963984540054, 0.8416212335729143, 0.1, 0.05];
      const expected = Math.ceil((za * Math.sqrt(psi) + zb * Math.sqrt(psi - delta * delta)) ** 2 / delta ** 2);
      expect(c.cases_needed).toMatchObject({ per_run: expected, have: 40, method: 'mcnemar_connor' });
      // And the scorecard of the subject says it of its latest run.
      const cards = await client().get('read', `/v1/scorecards?suite_key=${key}&subject_id=bot`);
      expectStatus(cards, 200);
      expect(cards.json.scorecards[0]).toMatchObject({ latest_verdict: 'inconclusive_noise', latest_cases_needed: expected });
    }, 60_000);

    it('the same run_id with the same content is the same run; with other content 409 RUN_ID_CONFLICT', async () => {
      const key = `hist-conflict-${sfx}`;
      await push(suite(key));
      const body = { run_id: `hc-${sfx}`, suite_key: key, subject_id: 'bot', outputs: outputs(10) };
      const first = await run(body);
      const again = await run(body);
      expect(again.run.run_id).toBe(first.run.run_id);
      expect(again.run.summary).toEqual(first.run.summary);
      const other = await client().post('ingestion', '/v1/runs', { subject_kind: 'agent', ...body, outputs: outputs(3) });
      expectStatus(other, 409);
      expect(other.json).toMatchObject({ code: 'RUN_ID_CONFLICT', field: 'run_id' });
    }, 60_000);
  });
}
