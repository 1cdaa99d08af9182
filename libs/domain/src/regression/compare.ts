import { newcombeDiff, newcombeDiffPValue, pairedDiff, pairedDiffPValue, sampleSizePaired, sampleSizeTwoProportions } from '@evals/stats';

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
  /**
   * G7: `paired` when both runs scored the same cases (one suite version, the cases scored in both) and the
   * paired interval decided; `independent` otherwise (two suite versions: two samples of different cases).
   */
  readonly decided_by: 'paired' | 'independent';
  /**
   * G7: the same difference from the discordant pairs - `baseline_only` passed in the baseline only,
   * `run_only` in the run only, of `n` cases scored in both - with Newcombe's paired interval (1998, Stat
   * Med 17:2635, method 10). Present whenever the comparison is paired.
   */
  readonly paired_diff?: {
    readonly diff: number | null;
    readonly lower: number;
    readonly upper: number;
    readonly level: 0.95;
    readonly method: 'newcombe_paired_10';
    readonly baseline_only: number;
    readonly run_only: number;
    readonly n: number;
  };
  /**
   * G8: for an `inconclusive_noise` drop, the cases each run would need for a drop of this size to be
   * resolved at 95% confidence (two-sided) with 80% power, by the formula of the test that decided
   * (McNemar's, Connor 1987, for paired; Fleiss' pooled normal, as R's power.prop.test, otherwise).
   */
  readonly cases_needed?: { readonly per_run: number; readonly have: number; readonly method: 'mcnemar_connor' | 'pooled_normal'; readonly alpha: 0.05; readonly power: 0.8 } | null;
}

/** The 2 x 2 of one suite version's cases scored in both runs: passed in both, baseline only, run only, neither. */
export interface PairedCells {
  readonly both: number;
  readonly baseline_only: number;
  readonly run_only: number;
  readonly neither: number;
}

/**
 * G1-G2: a run regressed when its score dropped by more than the suite's regression threshold AND the 95%
 * interval of the pass-rate difference excludes zero. A drop above the threshold whose interval contains
 * zero is `inconclusive_noise`: on a small suite, a few flipped cases are not evidence (G3).
 */
export function compareRuns(run: RunAggregate, baseline: RunAggregate, regressionThreshold: number, paired?: PairedCells): Comparison {
  const d = newcombeDiff(run.passed, run.n, baseline.passed, baseline.n);
  // run - baseline: in pairedDiff's terms the run is the first sample, so its `b` (first only) is run_only.
  const p = paired ? pairedDiff({ a: paired.both, b: paired.run_only, c: paired.baseline_only, d: paired.neither }) : null;
  const scoreDrop = baseline.score - run.score;
  // "Excludes zero" on the side of a drop: with deterministic scorers a score drop is a pass-rate drop, and
  // when a judge's graded scores fall while the pass rate significantly rose, the signals disagree - that
  // is no evidence of a regression. Paired cases decide by the paired interval: the same cases scored
  // twice vary far less than two samples of cases, so the independent interval would waste that power.
  const excludesZero = p ? p.estimate !== null && p.upper < 0 : d.diff !== null && d.upper < 0;
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
    decided_by: p ? 'paired' : 'independent',
    ...(p && paired
      ? {
          paired_diff: {
            diff: p.estimate,
            lower: p.lower,
            upper: p.upper,
            level: 0.95 as const,
            method: 'newcombe_paired_10' as const,
            baseline_only: paired.baseline_only,
            run_only: paired.run_only,
            n: p.n,
          },
        }
      : {}),
    ...(verdict === 'inconclusive_noise' ? { cases_needed: casesNeeded(run, baseline, paired) } : {}),
  };
}

/**
 * G8: cases per run for a drop of the size observed to be resolved (95%, two-sided; 80% power), assuming
 * the observed rates are the true ones; null when the observed rates give no drop to power (e.g. the score
 * dropped but the pass rate did not).
 */
function casesNeeded(run: RunAggregate, baseline: RunAggregate, paired?: PairedCells): Comparison['cases_needed'] {
  const common = { alpha: 0.05 as const, power: 0.8 as const };
  if (paired) {
    const n = paired.both + paired.baseline_only + paired.run_only + paired.neither;
    if (n === 0 || paired.baseline_only <= paired.run_only) return null;
    const s = sampleSizePaired({ p10: paired.baseline_only / n, p01: paired.run_only / n });
    return s.n_pairs === null ? null : { per_run: s.n_pairs, have: n, method: 'mcnemar_connor', ...common };
  }
  if (run.n === 0 || baseline.n === 0) return null;
  const p1 = baseline.passed / baseline.n;
  const p2 = run.passed / run.n;
  if (p2 >= p1) return null;
  const s = sampleSizeTwoProportions({ p1, p2 });
  return s.n_per_group === null ? null : { per_run: s.n_per_group, have: Math.min(run.n, baseline.n), method: 'pooled_normal', ...common };
}

/** What `regressionPValue` reads of a comparison: the shape `compareRuns` returns, as the gate reports it. */
export interface RegressionTestFacts {
  readonly verdict: string;
  readonly decided_by?: 'paired' | 'independent';
  readonly run: { readonly passed: number; readonly n: number };
  readonly baseline: { readonly passed: number; readonly n: number };
  readonly paired_diff?: { readonly baseline_only: number; readonly run_only: number; readonly n: number };
}

/**
 * GT7: the raw p-value of a comparison's regression test, by the interval that decided it (G2, G7): the
 * smallest alpha at which that interval excludes zero on the side of a drop (libs/stats pvalue.ts), so that
 * p < 0.05 is exactly the 95% interval's `upper < 0`. A pass rate that did not fall gives 1 (no evidence of
 * a drop, however strong the evidence of a rise). null - no regression test - when there is no comparison
 * or its score did not drop by more than the threshold (`no_baseline`, `no_regression`): only a drop above
 * the threshold is ever tested, so only such a drop takes part in a family's Holm adjustment.
 */
export function regressionPValue(c: RegressionTestFacts | null): number | null {
  if (!c || (c.verdict !== 'regressed' && c.verdict !== 'inconclusive_noise')) return null;
  if (c.decided_by === 'paired' && c.paired_diff) {
    // The paired table as compareRuns builds it: the run first, so its `b` (first only) is run_only.
    const { run_only: b, baseline_only: c2, n } = c.paired_diff;
    const a = c.run.passed - b;
    const r = pairedDiffPValue({ a, b, c: c2, d: n - a - b - c2 });
    return r.p === null ? null : b < c2 ? r.p : 1;
  }
  const r = newcombeDiffPValue(c.run.passed, c.run.n, c.baseline.passed, c.baseline.n);
  if (r.p === null) return null;
  return c.run.passed * c.baseline.n < c.baseline.passed * c.run.n ? r.p : 1;
}
