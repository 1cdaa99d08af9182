/**
 * Baseline selection (G4, G5): explicit beats pinned beats automatic. The automatic baseline is the last
 * *eligible* run of the same suite key and subject - and of the same variant when the run has one - and
 * never the run itself. Eligibility is the run model's rule (`baselineEligibility`): complete, and its own
 * verdict `no_regression` or `no_baseline`.
 */
import { baselineEligibility, type BaselineEligibility, type RunCompleteness } from '../runs/run.model';

export type BaselineChoice = 'explicit' | 'pinned' | 'automatic';

export interface CompletedRunRef {
  readonly run_id: string;
  readonly suite_key: string;
  readonly subject_kind: string;
  readonly subject_id: string;
  readonly variant: string | null;
  readonly completed_at: string;
  /** The run's own regression verdict, once decided. */
  readonly verdict: string | null;
  /** R7: whether every case was scored; absent in callers that predate it (taken as complete). */
  readonly completeness?: RunCompleteness;
}

export function eligibilityOf(r: CompletedRunRef): BaselineEligibility {
  return baselineEligibility({ completeness: r.completeness ?? 'complete', verdict: r.verdict });
}

export interface BaselineQuery {
  readonly run: CompletedRunRef;
  readonly explicit: CompletedRunRef | null;
  readonly pinned: CompletedRunRef | null;
  /** Completed runs of the same suite key and subject, any order. */
  readonly history: readonly CompletedRunRef[];
}

export type BaselineDecision =
  | { readonly kind: 'baseline'; readonly run: CompletedRunRef; readonly chosen_by: BaselineChoice }
  | { readonly kind: 'none' }
  | { readonly kind: 'refused'; readonly code: 'BASELINE_OTHER_SUITE' | 'BASELINE_IS_RUN'; readonly message: string };

export function chooseBaseline(q: BaselineQuery): BaselineDecision {
  if (q.explicit) {
    if (q.explicit.run_id === q.run.run_id) return { kind: 'refused', code: 'BASELINE_IS_RUN', message: 'a run cannot be its own baseline' };
    if (q.explicit.suite_key !== q.run.suite_key) {
      return { kind: 'refused', code: 'BASELINE_OTHER_SUITE', message: `baseline ${q.explicit.run_id} is a run of suite ${q.explicit.suite_key}, not ${q.run.suite_key}` };
    }
    return { kind: 'baseline', run: q.explicit, chosen_by: 'explicit' };
  }
  if (q.pinned && q.pinned.run_id !== q.run.run_id) return { kind: 'baseline', run: q.pinned, chosen_by: 'pinned' };
  const candidates = q.history.filter(
    (r) =>
      r.run_id !== q.run.run_id &&
      r.suite_key === q.run.suite_key &&
      r.subject_kind === q.run.subject_kind &&
      r.subject_id === q.run.subject_id &&
      (q.run.variant === null || r.variant === q.run.variant) &&
      eligibilityOf(r).eligible &&
      r.completed_at <= q.run.completed_at,
  );
  if (candidates.length === 0) return { kind: 'none' };
  const last = candidates.reduce((a, b) => (b.completed_at > a.completed_at || (b.completed_at === a.completed_at && b.run_id > a.run_id) ? b : a));
  return { kind: 'baseline', run: last, chosen_by: 'automatic' };
}

/** G4 beyond the seeds: what differs between the two runs, so a drop can be attributed. */
export interface RunFingerprint {
  readonly suite_version: number;
  readonly scorer_versions: Readonly<Record<string, string>>;
  readonly judge_model?: string | null;
  readonly prompt_version?: string | null;
}

export interface ChangeReport {
  readonly suite_version: { readonly baseline: number; readonly run: number } | null;
  readonly scorer_versions: ReadonlyArray<{ readonly scorer: string; readonly baseline: string | null; readonly run: string | null }>;
  readonly judge_model: { readonly baseline: string | null; readonly run: string | null } | null;
  readonly prompt_version: { readonly baseline: string | null; readonly run: string | null } | null;
  readonly anything_changed: boolean;
}

export function whatChanged(baseline: RunFingerprint, run: RunFingerprint): ChangeReport {
  const names = [...new Set([...Object.keys(baseline.scorer_versions), ...Object.keys(run.scorer_versions)])].sort();
  const scorers = names
    .map((scorer) => ({ scorer, baseline: baseline.scorer_versions[scorer] ?? null, run: run.scorer_versions[scorer] ?? null }))
    .filter((s) => s.baseline !== s.run);
  const pair = (a: string | null | undefined, b: string | null | undefined) => ((a ?? null) === (b ?? null) ? null : { baseline: a ?? null, run: b ?? null });
  const report = {
    suite_version: baseline.suite_version === run.suite_version ? null : { baseline: baseline.suite_version, run: run.suite_version },
    scorer_versions: scorers,
    judge_model: pair(baseline.judge_model, run.judge_model),
    prompt_version: pair(baseline.prompt_version, run.prompt_version),
  };
  return { ...report, anything_changed: report.suite_version !== null || scorers.length > 0 || report.judge_model !== null || report.prompt_version !== null };
}
