import { leastSquaresTrend, mean, wilson, TREND_FLAT_EPSILON } from '@evals/stats';
import type { ScopedCorrectedPassRate } from '../judge/calibration';
import type { RunCompleteness } from '../runs/run.model';

/** One completed run as a scorecard sees it. */
export interface ScorecardRun {
  readonly run_id: string;
  readonly suite_key: string;
  readonly suite_version: number;
  readonly subject_kind: string;
  readonly subject_id: string;
  readonly completed_at: string;
  readonly n: number;
  readonly passed: number;
  readonly score: number;
  readonly verdict: string;
  /** R7: runs with unscored cases (`incomplete`) or nobody's seal (`expired`) are shown, never pooled. */
  readonly completeness?: RunCompleteness;
  /** The run's comparison as recorded (`run.compared`): read for an inconclusive drop's cases needed (G8). */
  readonly comparison?: unknown;
}

export interface RateWithInterval {
  readonly rate: number | null;
  readonly passed: number;
  readonly n: number;
  readonly lower: number;
  readonly upper: number;
  readonly level: 0.95;
}

/**
 * SC1: per subject and suite - runs counted, latest and overall pass rate with denominator and 95% Wilson
 * interval, mean score, trend over the last N runs, latest verdict. docs/scorecards.md documents every field.
 */
export interface Scorecard {
  readonly suite_key: string;
  readonly subject_kind: string;
  readonly subject_id: string;
  readonly runs: number;
  /** Runs left out of the overall rate, the mean score and the trend: some cases unscored, or expired. */
  readonly runs_incomplete: number;
  readonly latest_run_id: string;
  readonly latest_completed_at: string;
  readonly latest_suite_version: number;
  readonly latest_pass_rate: RateWithInterval;
  /** Pooled over every case of every run counted: sum(passed) / sum(n). */
  readonly overall_pass_rate: RateWithInterval;
  /** Mean of the runs' mean case scores. */
  readonly mean_score: number;
  readonly trend: {
    /** Least-squares slope of pass rate per run, over the last `window` runs in completion order. */
    readonly slope_per_run: number | null;
    readonly direction: 'improving' | 'declining' | 'flat' | 'insufficient_data';
    readonly runs: number;
    readonly window: number;
    readonly flat_epsilon: number;
    readonly first_run_id: string | null;
    readonly last_run_id: string | null;
  };
  readonly latest_verdict: string;
  /** `complete`, `incomplete` or `expired`: an incomplete latest run's pass rate counts unscored cases as failed. */
  readonly latest_completeness: RunCompleteness;
  /** G8: when the latest run's drop was `inconclusive_noise`, the cases per run that would resolve it; else null. */
  readonly latest_cases_needed: number | null;
  /**
   * J4/J9 (GT6): the latest run's judge-corrected pass rate of its judged `llm_judge` cases, per certified
   * scope (Rogan-Gladen with the Lang & Reiczigel 95% interval and every denominator); empty when none applies.
   */
  readonly latest_judge_corrected_pass_rates: readonly ScopedCorrectedPassRate[];
}

export const DEFAULT_TREND_WINDOW = 10;

function rate(passed: number, n: number): RateWithInterval {
  const w = wilson(passed, n);
  return { rate: n === 0 ? null : passed / n, passed, n, lower: w.lower, upper: w.upper, level: 0.95 };
}

/**
 * Builds one scorecard from the completed runs of one suite and subject (any order). `latestJudgeCorrected`:
 * the latest run's corrected judge pass rates, read by the caller (they depend on today's certifications).
 */
export function buildScorecard(runs: readonly ScorecardRun[], window = DEFAULT_TREND_WINDOW, latestJudgeCorrected: readonly ScopedCorrectedPassRate[] = []): Scorecard | null {
  if (runs.length === 0) return null;
  const ordered = [...runs].sort((a, b) => (a.completed_at === b.completed_at ? a.run_id.localeCompare(b.run_id) : a.completed_at < b.completed_at ? -1 : 1));
  const latest = ordered[ordered.length - 1];
  // A run with unscored cases counts them as failed: pooled or trended, it would read as a drop that
  // never happened (the same masking that keeps it from being a baseline).
  const counted = ordered.filter((r) => (r.completeness ?? 'complete') === 'complete');
  const recent = counted.slice(-window);
  const trend = leastSquaresTrend(recent.map((r) => (r.n === 0 ? 0 : r.passed / r.n)));
  const totalPassed = counted.reduce((s, r) => s + r.passed, 0);
  const totalN = counted.reduce((s, r) => s + r.n, 0);
  return {
    suite_key: latest.suite_key,
    subject_kind: latest.subject_kind,
    subject_id: latest.subject_id,
    runs: ordered.length,
    runs_incomplete: ordered.length - counted.length,
    latest_run_id: latest.run_id,
    latest_completed_at: latest.completed_at,
    latest_suite_version: latest.suite_version,
    latest_pass_rate: rate(latest.passed, latest.n),
    overall_pass_rate: rate(totalPassed, totalN),
    mean_score: mean(counted.map((r) => r.score)) ?? 0,
    trend: {
      slope_per_run: trend.slope,
      direction: trend.direction,
      runs: recent.length,
      window,
      flat_epsilon: TREND_FLAT_EPSILON,
      first_run_id: recent[0]?.run_id ?? null,
      last_run_id: recent[recent.length - 1]?.run_id ?? null,
    },
    latest_verdict: latest.verdict,
    latest_completeness: latest.completeness ?? 'complete',
    latest_cases_needed: latest.verdict === 'inconclusive_noise' ? casesNeeded(latest.comparison) : null,
    latest_judge_corrected_pass_rates: latestJudgeCorrected,
  };
}

function casesNeeded(comparison: unknown): number | null {
  const needed = typeof comparison === 'object' && comparison !== null ? (comparison as { cases_needed?: { per_run?: unknown } }).cases_needed : undefined;
  return typeof needed?.per_run === 'number' ? needed.per_run : null;
}

/** Stable CSV columns (docs/scorecards.md): renaming or reordering one is a breaking change. */
export const SCORECARD_CSV_COLUMNS = [
  'suite_key',
  'subject_kind',
  'subject_id',
  'runs',
  'latest_run_id',
  'latest_completed_at',
  'latest_suite_version',
  'latest_pass_rate',
  'latest_passed',
  'latest_n',
  'latest_ci_lower',
  'latest_ci_upper',
  'overall_pass_rate',
  'overall_passed',
  'overall_n',
  'overall_ci_lower',
  'overall_ci_upper',
  'mean_score',
  'trend_slope_per_run',
  'trend_direction',
  'trend_runs',
  'latest_verdict',
  'latest_completeness',
  'runs_incomplete',
  'latest_cases_needed',
  'latest_judge_corrected_scope',
  'latest_judge_corrected_rate',
  'latest_judge_corrected_ci_lower',
  'latest_judge_corrected_ci_upper',
  'latest_judge_passed',
  'latest_judge_n',
  'latest_judge_sensitivity_x',
  'latest_judge_sensitivity_n',
  'latest_judge_specificity_x',
  'latest_judge_specificity_n',
] as const;

function text(value: string | number | null): string {
  if (value === null) return '';
  return typeof value === 'number' ? (Number.isInteger(value) ? String(value) : value.toFixed(6)) : value;
}

function cell(value: string | number | null): string {
  const t = text(value);
  return /[",\n\r]/.test(t) ? `"${t.replace(/"/g, '""')}"` : t;
}

/** One column of the corrected rates: one value per scope, `;`-separated in scope order (usually one scope). */
function perScope(rates: readonly ScopedCorrectedPassRate[], pick: (r: ScopedCorrectedPassRate) => string | number | null): string | null {
  return rates.length === 0 ? null : rates.map((r) => text(pick(r))).join(';');
}

/** RFC 4180 CSV, CRLF line ends, a header row, numbers with six decimals. */
export function scorecardsToCsv(cards: readonly Scorecard[]): string {
  const rows = cards.map((c) => [
    c.suite_key,
    c.subject_kind,
    c.subject_id,
    c.runs,
    c.latest_run_id,
    c.latest_completed_at,
    c.latest_suite_version,
    c.latest_pass_rate.rate,
    c.latest_pass_rate.passed,
    c.latest_pass_rate.n,
    c.latest_pass_rate.lower,
    c.latest_pass_rate.upper,
    c.overall_pass_rate.rate,
    c.overall_pass_rate.passed,
    c.overall_pass_rate.n,
    c.overall_pass_rate.lower,
    c.overall_pass_rate.upper,
    c.mean_score,
    c.trend.slope_per_run,
    c.trend.direction,
    c.trend.runs,
    c.latest_verdict,
    c.latest_completeness,
    c.runs_incomplete,
    c.latest_cases_needed,
    perScope(c.latest_judge_corrected_pass_rates, (r) => r.scope),
    perScope(c.latest_judge_corrected_pass_rates, (r) => r.rate),
    perScope(c.latest_judge_corrected_pass_rates, (r) => r.lower),
    perScope(c.latest_judge_corrected_pass_rates, (r) => r.upper),
    perScope(c.latest_judge_corrected_pass_rates, (r) => r.apparent.passed),
    perScope(c.latest_judge_corrected_pass_rates, (r) => r.apparent.n),
    perScope(c.latest_judge_corrected_pass_rates, (r) => r.sensitivity.x),
    perScope(c.latest_judge_corrected_pass_rates, (r) => r.sensitivity.n),
    perScope(c.latest_judge_corrected_pass_rates, (r) => r.specificity.x),
    perScope(c.latest_judge_corrected_pass_rates, (r) => r.specificity.n),
  ]);
  return [SCORECARD_CSV_COLUMNS.join(','), ...rows.map((r) => r.map(cell).join(','))].join('\r\n') + '\r\n';
}
