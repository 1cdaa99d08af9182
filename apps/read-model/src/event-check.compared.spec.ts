import { randomUUID } from 'node:crypto';
import type { RunComparedV1 } from '@evals/domain';
import { checkEvent } from './event-check';

/** The decision as the regression app records it; its comparison is opaque to the check (an object or null). */
const decision: RunComparedV1 = {
  run_id: 'ci-7',
  verdict: 'no_regression',
  completeness: 'incomplete',
  baseline_run_id: 'ci-6',
  chosen_by: 'pinned',
  comparison: { score_drop: 0.05 },
  finding_id: null,
};

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
    expect(checkEvent(stored({ run_id: 'ci-7', verdict: 'no_baseline' })).ok).toBe(true);
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
