import { newcombeDiff } from '@evals/stats';

/** What the comparison needs of a run: its aggregate (R2). */
export interface RunAggregate {
  readonly run_id: string;
  readonly n: number;
  readonly passed: number;
  /** Mean case score in [0, 1]. */
  readonly score: number;
}

export type RegressionVerdict = 'regressed' | 'inconclusive_noise' | 'no_regression';

export interface Comparison {
  readonly run_id: string;
  readonly baseline_run_id: string;
  /** G1: baseline.score - run.score. Positive is worse. */
  readonly score_drop: number;
  readonly regression_threshold: number;
  /** G1: run pass rate minus baseline pass rate, with Newcombe's hybrid score 95% interval (method 10). */
  readonly pass_rate_diff: {
    readonly diff: number | null;
    readonly lower: number;
    readonly upper: number;
    readonly level: 0.95;
    readonly method: 'newcombe_hybrid_score';
  };
  /** G3: both denominators, always. */
  readonly run: { readonly passed: number; readonly n: number; readonly pass_rate: number | null };
  readonly baseline: { readonly passed: number; readonly n: number; readonly pass_rate: number | null };
  readonly verdict: RegressionVerdict;
}

/**
 * G1-G2: a run regressed when its score dropped by more than the suite's regression threshold AND the 95%
 * interval of the pass-rate difference excludes zero. A drop above the threshold whose interval contains
 * zero is `inconclusive_noise`: on a small suite, a few flipped cases are not evidence (G3).
 */
export function compareRuns(run: RunAggregate, baseline: RunAggregate, regressionThreshold: number): Comparison {
  const d = newcombeDiff(run.passed, run.n, baseline.passed, baseline.n);
  const scoreDrop = baseline.score - run.score;
  // "Excludes zero" on the side of a drop: with deterministic scorers a score drop is a pass-rate drop, and
  // when a judge's graded scores fall while the pass rate significantly rose, the signals disagree - that
  // is no evidence of a regression.
  const excludesZero = d.diff !== null && d.upper < 0;
  const verdict: RegressionVerdict =
    scoreDrop > regressionThreshold ? (excludesZero ? 'regressed' : 'inconclusive_noise') : 'no_regression';
  return {
    run_id: run.run_id,
    baseline_run_id: baseline.run_id,
    score_drop: scoreDrop,
    regression_threshold: regressionThreshold,
    pass_rate_diff: { diff: d.diff, lower: d.lower, upper: d.upper, level: 0.95, method: 'newcombe_hybrid_score' },
    run: { passed: run.passed, n: run.n, pass_rate: run.n === 0 ? null : run.passed / run.n },
    baseline: { passed: baseline.passed, n: baseline.n, pass_rate: baseline.n === 0 ? null : baseline.passed / baseline.n },
    verdict,
  };
}
