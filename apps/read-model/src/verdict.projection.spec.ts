import { randomUUID } from 'node:crypto';
import { evolveRun, type RunComparedV1, type RunDoc, type RunEvent, type RunOpenedV1 } from '@evals/domain';
import { checkEvent } from './event-check';
import { evolveVerdict, type ProjectedVerdict } from './verdict.projection';

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

const EXPECTED: ProjectedVerdict = {
  run_id: 'ci-2',
  suite_key: 'support-triage',
  suite_version: 3,
  subject_kind: 'agent',
  subject_id: 'support-bot',
  variant: 'prompt-v7',
  completed_at: '2026-11-30T09:02:00.000Z',
  n: 4,
  passed: 1,
  score: 0.375,
  verdict: 'regressed',
  completeness: 'complete',
  baseline_run_id: 'ci-1',
  chosen_by: 'automatic',
  comparison: COMPARISON,
  finding_id: '6f1c1f37-51b5-4a4f-9b1e-0d4f2a0c9a11',
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

describe('checkEvent: run.compared at the edge (D1: reasons name fields, never values)', () => {
  const SECRET = 'sk-live-SECRET-VALUE-1234';
  const stored = (data: object) => ({
    type: 'run.compared',
    version: 1,
    data,
    metadata: { message_id: randomUUID(), occurred_at: '2026-11-30T09:03:00.000Z' },
    position: 42,
  });

  it('accepts the decision the regression app records, and the bare one of older logs', () => {
    expect(checkEvent(stored(decision))).toMatchObject({ ok: true, value: { event: { type: 'run.compared', data: decision }, position: 42 } });
    expect(checkEvent(stored({ run_id: 'ci-2', verdict: 'no_baseline' })).ok).toBe(true);
    const refused = { ...decision, verdict: 'no_baseline', baseline_run_id: 'ci-9', chosen_by: null, comparison: { error: { code: 'BASELINE_NOT_FOUND', message: 'baseline ci-9 is not a completed run' } }, finding_id: null };
    expect(checkEvent(stored(refused)).ok).toBe(true);
  });

  it('refuses an unknown verdict', () => {
    const r = checkEvent(stored({ ...decision, verdict: SECRET }));
    expect(r).toMatchObject({ ok: false, reason: 'data.verdict: isRunVerdict' });
    expect(JSON.stringify(r)).not.toContain('SECRET');
  });

  it('refuses every field the projection stores that it could not store, naming the fields only', () => {
    const r = checkEvent(
      stored({ run_id: SECRET + ' /', verdict: 'regressed', completeness: SECRET, baseline_run_id: SECRET + '/..', chosen_by: SECRET, comparison: [SECRET], finding_id: SECRET }),
    );
    expect(r).toMatchObject({
      ok: false,
      reason:
        'data.run_id: isSafeId; data.completeness: isRunCompleteness; data.baseline_run_id: isSafeIdOrNull; data.chosen_by: isBaselineChoiceOrNull; data.comparison: isObjectOrNull; data.finding_id: isUuidOrNull',
    });
    expect(JSON.stringify(r)).not.toContain('SECRET');
    expect(checkEvent(stored({ ...decision, comparison: 'a string' }))).toMatchObject({ ok: false, reason: 'data.comparison: isObjectOrNull' });
    expect(checkEvent(stored({ ...decision, completeness: null }))).toMatchObject({ ok: false, reason: 'data.completeness: isRunCompleteness' });
  });
});
