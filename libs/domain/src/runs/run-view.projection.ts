import { toEvalResult, type EvalResult } from './eval-result';
import { baselineEligibility, type RunCompleteness, type RunVerdict } from './run.model';
import { evolveRun, type RunDoc } from './run.projection';
import type { RunEvent } from './run-events';

/**
 * What every record of a completed run starts with: which run of which suite and subject, when it completed
 * and what it scored. The regression app's verdict rows and the run views' projected verdict are different
 * records, owned by different apps (ADR 0006), that both begin with these facts.
 */
export interface CompletedRunFacts {
  readonly run_id: string;
  readonly suite_key: string;
  readonly suite_version: number;
  readonly subject_kind: string;
  readonly subject_id: string;
  readonly variant: string | null;
  /** The run's `run.scored` time (the document's `completed_at`), ISO 8601 with milliseconds, UTC. */
  readonly completed_at: string;
  readonly n: number;
  readonly passed: number;
  /** Mean case score, `score_sum / n` (0 for n = 0), as the regression app computed it. */
  readonly score: number;
}

/**
 * A run's regression decision as the run views show it: `run.compared` joined with the completed run
 * document (suite, subject, completion time, counts). The read model stores it (`read_run_verdicts`, for the
 * scorecards); the ingestion folds it from the run's stream (issue 27). Both build it here, with `evolveVerdict`.
 */
export interface ProjectedVerdict extends CompletedRunFacts {
  readonly verdict: RunVerdict;
  readonly completeness: RunCompleteness;
  readonly baseline_run_id: string | null;
  /** G5: explicit, pinned or automatic; null without a baseline. */
  readonly chosen_by: string | null;
  readonly comparison: unknown;
  /** G2: the finding raised for a regression. */
  readonly finding_id: string | null;
}

/** What one event does to a run's projected verdict. */
export type VerdictStep =
  /** Not a `run.compared`, or the run's decision is projected already (a run is compared once; the first stands). */
  | { readonly kind: 'unchanged' }
  /**
   * A `run.compared` whose run has not been projected as completed yet (no document, or no `run.scored`
   * applied): the row needs the run's suite, subject and final counts. The read model's projector reads
   * what is missing from the log or defers the event, as it does for any event of a run not opened yet.
   */
  | { readonly kind: 'awaiting_run'; readonly reason: 'not_opened' | 'not_scored' }
  | { readonly kind: 'recorded'; readonly verdict: ProjectedVerdict };

/**
 * The pure projection of `run.compared` (docs/read-model.md), beside `evolveRun`: the regression app's
 * decision (verdict, completeness, baseline, comparison, finding) joined with the completed run document
 * (suite, subject, completion time, counts). `current` is the verdict already projected for the run, `run`
 * its document. Every other event leaves the verdict as it is.
 *
 * The event is trusted as far as the run events' codec checked it (verdict and completeness in their sets,
 * ids safe, comparison an object or null): an unknown verdict never reaches this function.
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

/** The regression decision of a completed run as `GET /v1/runs/:id` and the gate answer it (G1-G5). */
export interface RegressionView {
  readonly verdict: string;
  readonly baseline_run_id: string | null;
  /** explicit, pinned or automatic (G5); null without a baseline. */
  readonly chosen_by: string | null;
  /** score drop, Newcombe interval, both pass counts and denominators, what changed; or an error. */
  readonly comparison: unknown;
  /** R7: `complete`, `incomplete` (cases left unscored) or `expired`. */
  readonly completeness: string;
  /** G4: whether this run may be the next automatic baseline, and if not, why. */
  readonly baseline_eligible: boolean;
  readonly baseline_ineligible_reason?: string;
}

export function regressionView(row: ProjectedVerdict | null): RegressionView | null {
  if (!row) return null;
  const eligibility = baselineEligibility({ completeness: row.completeness, verdict: row.verdict });
  return {
    verdict: row.verdict,
    baseline_run_id: row.baseline_run_id,
    chosen_by: row.chosen_by,
    comparison: row.comparison,
    completeness: row.completeness,
    baseline_eligible: eligibility.eligible,
    ...(eligibility.eligible ? {} : { baseline_ineligible_reason: eligibility.reason }),
  };
}

/** A run's document, EvalResult and projected verdict, folded from its stream. */
export interface FoldedRunView {
  /** Null until `run.opened` is in the stream. */
  readonly doc: RunDoc | null;
  readonly eval_result: EvalResult | null;
  readonly verdict: ProjectedVerdict | null;
}

/**
 * Folds a run's stream, in stream order, into what the read model's projector stores of it from the same
 * events (issue 27: the ingestion asks the log, not the read model's tables): the document by `evolveRun`,
 * the EvalResult by `toEvalResult` at the event that completes the run - the projector records it there
 * and never again - and the verdict by `evolveVerdict`.
 */
export function foldRunView(events: ReadonlyArray<{ readonly event: RunEvent; readonly occurred_at: string }>): FoldedRunView {
  let doc: RunDoc | null = null;
  let evalResult: EvalResult | null = null;
  let verdict: ProjectedVerdict | null = null;
  for (const { event, occurred_at } of events) {
    const before = doc;
    doc = evolveRun(before, event, { occurred_at });
    if (doc !== null && doc.status === 'completed' && before?.status !== 'completed') evalResult = toEvalResult(doc);
    const step = evolveVerdict(verdict, doc, event);
    if (step.kind === 'recorded') verdict = step.verdict;
  }
  return { doc, eval_result: evalResult, verdict };
}
