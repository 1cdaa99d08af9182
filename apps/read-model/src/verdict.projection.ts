import type { RunDoc, RunEvent } from '@evals/domain';
import type { RunReadModelRepository } from '@evals/persistence';

/** One row of `read_run_verdicts`: a run's regression decision as the read model projects it. */
export type ProjectedVerdict = NonNullable<Awaited<ReturnType<RunReadModelRepository['loadVerdict']>>>;

/** What one event does to a run's projected verdict. */
export type VerdictStep =
  /** Not a `run.compared`, or the run's decision is projected already (a run is compared once; the first stands). */
  | { readonly kind: 'unchanged' }
  /**
   * A `run.compared` whose run the read model has not projected as completed yet (no document, or no
   * `run.scored` applied): the row needs the run's suite, subject and final counts. The projector reads
   * what is missing from the log or defers the event, as it does for any event of a run not opened yet.
   */
  | { readonly kind: 'awaiting_run'; readonly reason: 'not_opened' | 'not_scored' }
  | { readonly kind: 'recorded'; readonly verdict: ProjectedVerdict };

/**
 * The read model's pure projection of `run.compared` (docs/read-model.md), beside `evolveRun`: the
 * regression app's decision (verdict, completeness, baseline, comparison, finding) joined with the read
 * model's own completed run document (suite, subject, completion time, counts). `current` is the verdict
 * already projected for the run, `run` its document. Every other event leaves the verdict as it is.
 *
 * The event is trusted as far as `checkEvent` checked it (verdict and completeness in their sets, ids safe,
 * comparison an object or null): an unknown verdict never reaches this function.
 */
export function evolveVerdict(current: ProjectedVerdict | null, run: RunDoc | null, event: RunEvent): VerdictStep {
  if (event.type !== 'run.compared') return { kind: 'unchanged' };
  if (current !== null) return { kind: 'unchanged' };
  if (run === null) return { kind: 'awaiting_run', reason: 'not_opened' };
  if (run.status !== 'completed' || run.completed_at === null) return { kind: 'awaiting_run', reason: 'not_scored' };
  const d = event.data;
  return {
    kind: 'recorded',
    verdict: {
      run_id: run.run_id,
      suite_key: run.suite_key,
      suite_version: run.suite_version,
      subject_kind: run.subject_kind,
      subject_id: run.subject_id,
      variant: run.variant,
      completed_at: run.completed_at,
      // run.scored replaced the counts with the ones computed from the evidence: the regression app's n,
      // passed and score (score_sum / n, 0 for an empty run) exactly.
      n: run.scored,
      passed: run.passed,
      score: run.scored === 0 ? 0 : run.score_sum / run.scored,
      verdict: d.verdict,
      // Absent only in run.compared written before the event carried the whole decision: taken from what
      // the document knows (a missing output makes a run incomplete; expiry and judge gaps are not in it).
      completeness: d.completeness ?? (run.missing_outputs > 0 ? 'incomplete' : 'complete'),
      baseline_run_id: d.baseline_run_id ?? null,
      chosen_by: d.chosen_by ?? null,
      comparison: d.comparison ?? null,
      finding_id: d.finding_id ?? null,
    },
  };
}
