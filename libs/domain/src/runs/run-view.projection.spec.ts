import type { RunComparedV1, RunEvent, RunOpenedV1 } from './run-events';
import { toEvalResult } from './eval-result';
import { evolveRun, type RunDoc } from './run.projection';
import { evolveVerdict, foldRunView, regressionView, type ProjectedVerdict } from './run-view.projection';

const OPENED: RunOpenedV1 = {
  run_id: 'ci-2',
  suite_key: 'support-triage',
  suite_version: 3,
  suite_content_hash: 'sha256:abc',
  pass_threshold: 0.6,
  regression_threshold: 0.1,
  subject_kind: 'agent',
  subject_id: 'support-bot',
  variant: 'prompt-v7',
  baseline_run_id: null,
  source: 'ci',
  case_count: 4,
  scorer_versions: { exact: '1.0.0' },
};

const COMPARISON = {
  verdict: 'regressed',
  score_drop: 0.5,
  pass_rate_diff: { diff: -0.5, lower: -0.8, upper: -0.1, level: 0.95, method: 'newcombe' },
  compared_cases: { run: { n: 4, of: 4 }, baseline: { n: 4, of: 4 } },
  chosen_by: 'automatic',
  baseline_eligible: true,
};

function fold(events: Array<[RunEvent, string]>): RunDoc | null {
  return events.reduce<RunDoc | null>((doc, [e, at]) => evolveRun(doc, e, { occurred_at: at }), null);
}

const opened: RunEvent = { type: 'run.opened', version: 1, data: OPENED };
const sealed: RunEvent = { type: 'run.sealed', version: 1, data: { run_id: 'ci-2' } };
const scored: RunEvent = { type: 'run.scored', version: 1, data: { run_id: 'ci-2', n: 4, passed: 1, score_sum: 1.5, missing_case_ids: [] } };
const decision: RunComparedV1 = {
  run_id: 'ci-2',
  verdict: 'regressed',
  completeness: 'complete',
  baseline_run_id: 'ci-1',
  chosen_by: 'automatic',
  comparison: COMPARISON,
  finding_id: '6f1c1f37-51b5-4a4f-9b1e-0d4f2a0c9a11',
};
const compared: RunEvent = { type: 'run.compared', version: 1, data: decision };

const openDoc = fold([[opened, '2026-11-30T09:00:00.000Z']]);
const sealedDoc = fold([
  [opened, '2026-11-30T09:00:00.000Z'],
  [sealed, '2026-11-30T09:01:00.000Z'],
]);
const completedDoc = fold([
  [opened, '2026-11-30T09:00:00.000Z'],
  [sealed, '2026-11-30T09:01:00.000Z'],
  [scored, '2026-11-30T09:02:00.000Z'],
]);

/** The decision's fields, joined with the completed document's suite, subject, completion time and counts. */
const EXPECTED: ProjectedVerdict = {
  suite_key: 'support-triage',
  suite_version: 3,
  subject_kind: 'agent',
  subject_id: 'support-bot',
  variant: 'prompt-v7',
  completed_at: '2026-11-30T09:02:00.000Z',
  n: 4,
  passed: 1,
  score: 0.375,
  ...(decision as Required<RunComparedV1>),
};

describe('evolveVerdict: the read model projection of run.compared', () => {
  it('joins the decision with the completed run document: suite, subject, completion time, counts and score', () => {
    expect(evolveVerdict(null, completedDoc, compared)).toEqual({ kind: 'recorded', verdict: EXPECTED });
  });

  it('waits for the run like the other events: no document yet, or not scored yet (the projector reads the log or defers)', () => {
    expect(evolveVerdict(null, null, compared)).toEqual({ kind: 'awaiting_run', reason: 'not_opened' });
    expect(evolveVerdict(null, openDoc, compared)).toEqual({ kind: 'awaiting_run', reason: 'not_scored' });
    expect(evolveVerdict(null, sealedDoc, compared)).toEqual({ kind: 'awaiting_run', reason: 'not_scored' });
  });

  it('a redelivered (or second) run.compared changes nothing: the first decision stands', () => {
    const first = evolveVerdict(null, completedDoc, compared);
    if (first.kind !== 'recorded') throw new Error('expected a verdict');
    expect(evolveVerdict(first.verdict, completedDoc, compared)).toEqual({ kind: 'unchanged' });
    const other: RunEvent = { type: 'run.compared', version: 1, data: { ...decision, verdict: 'no_regression', finding_id: null } };
    expect(evolveVerdict(first.verdict, completedDoc, other)).toEqual({ kind: 'unchanged' });
  });

  it('ignores every other event, and run.compared leaves the run document itself as it is', () => {
    for (const e of [opened, sealed, scored]) {
      expect(evolveVerdict(null, completedDoc, e)).toEqual({ kind: 'unchanged' });
      expect(evolveVerdict(EXPECTED, completedDoc, e)).toEqual({ kind: 'unchanged' });
    }
    expect(evolveRun(completedDoc, compared, { occurred_at: '2026-11-30T09:03:00.000Z' })).toBe(completedDoc);
  });

  it('a decision without a baseline: nulls, not undefined; an empty run scores 0', () => {
    const empty = fold([
      [opened, '2026-11-30T09:00:00.000Z'],
      [{ type: 'run.scored', version: 1, data: { run_id: 'ci-2', n: 0, passed: 0, score_sum: 0, missing_case_ids: [] } }, '2026-11-30T09:02:00.000Z'],
    ]);
    const step = evolveVerdict(null, empty, { type: 'run.compared', version: 1, data: { run_id: 'ci-2', verdict: 'no_baseline', completeness: 'complete' } });
    expect(step).toEqual({
      kind: 'recorded',
      verdict: { ...EXPECTED, n: 0, passed: 0, score: 0, verdict: 'no_baseline', baseline_run_id: null, chosen_by: null, comparison: null, finding_id: null },
    });
  });

  it('a run.compared from before it carried the decision: completeness from the document (a missing output: incomplete)', () => {
    const missing = fold([
      [opened, '2026-11-30T09:00:00.000Z'],
      [{ type: 'run.scored', version: 1, data: { run_id: 'ci-2', n: 4, passed: 1, score_sum: 1, missing_case_ids: ['c4'] } }, '2026-11-30T09:02:00.000Z'],
    ]);
    const bare: RunEvent = { type: 'run.compared', version: 1, data: { run_id: 'ci-2', verdict: 'no_baseline' } };
    expect(evolveVerdict(null, missing, bare)).toMatchObject({ kind: 'recorded', verdict: { completeness: 'incomplete', comparison: null } });
    expect(evolveVerdict(null, completedDoc, bare)).toMatchObject({ kind: 'recorded', verdict: { completeness: 'complete' } });
  });
});


describe('foldRunView: a run stream folded as the read model projects it (issue 27)', () => {
  const at = (minute: number) => `2026-11-30T09:0${minute}:00.000Z`;
  const stream = [opened, sealed, scored, compared].map((event, i) => ({ event, occurred_at: at(i) }));

  it('gives the document, the EvalResult recorded at completion and the verdict the projection stores', () => {
    const folded = foldRunView(stream);
    expect(folded.doc).toEqual(completedDoc);
    expect(folded.eval_result).toEqual(toEvalResult(completedDoc!));
    expect(folded.eval_result).toMatchObject({ run_id: 'ci-2', occurred_at: at(2), passed: false, metrics: { n: 4, passed: 1, pass_rate: 0.25 } });
    expect(folded.verdict).toEqual(EXPECTED);
    expect(regressionView(folded.verdict)).toEqual({
      verdict: 'regressed',
      baseline_run_id: 'ci-1',
      chosen_by: 'automatic',
      comparison: COMPARISON,
      completeness: 'complete',
      baseline_eligible: false,
      baseline_ineligible_reason: 'regressed',
    });
  });

  it('has no EvalResult before run.scored and no verdict before run.compared; nothing at all before run.opened', () => {
    expect(foldRunView(stream.slice(0, 2))).toEqual({ doc: sealedDoc, eval_result: null, verdict: null });
    expect(foldRunView(stream.slice(0, 3))).toMatchObject({ eval_result: toEvalResult(completedDoc!), verdict: null });
    expect(foldRunView(stream.slice(1))).toEqual({ doc: null, eval_result: null, verdict: null });
    expect(regressionView(null)).toBeNull();
  });

  it('keeps the first decision and the EvalResult of the completion, whatever the stream holds after it', () => {
    const late = [
      ...stream,
      { event: { type: 'run.compared', version: 1, data: { ...decision, verdict: 'no_regression', finding_id: null } } as RunEvent, occurred_at: at(5) },
      { event: { type: 'run.scored', version: 1, data: { run_id: 'ci-2', n: 4, passed: 4, score_sum: 4, missing_case_ids: [] } } as RunEvent, occurred_at: at(6) },
    ];
    const folded = foldRunView(late);
    expect(folded.verdict).toEqual(EXPECTED);
    expect(folded.eval_result).toEqual(foldRunView(stream).eval_result);
  });
});
