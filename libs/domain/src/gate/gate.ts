import { seededSample } from '@evals/stats';

/**
 * The regression gate (GT1-GT6) as a pure decision: everything it needs is gathered by the caller; this
 * says pass or fail, with every reason and warning. Any reason fails the gate; warnings never decide, but
 * are always shown (GT2: a missing judge credential is declared, never a silent pass).
 */
export type GateReasonCode = 'regressed' | 'below_pass_threshold' | 'judge_uncalibrated' | 'budget_blocked';
export type GateWarningCode = 'judge_credential_missing' | 'no_baseline' | 'inconclusive_noise';

export interface GateNote<C extends string> {
  readonly code: C;
  readonly message: string;
}

export type JudgeCalibrationStatus = 'certified' | 'not_certified' | 'not_certifiable' | 'uncalibrated';
export type BudgetDecision = 'allowed' | 'blocked' | 'throttled' | 'store_unreadable' | 'not_needed';

export interface GateInputs {
  readonly pass_rate: number | null;
  readonly passed: number;
  readonly n: number;
  readonly pass_threshold: number;
  /** The run's regression verdict against its baseline (G2). */
  readonly regression_verdict: string | null;
  readonly judge: {
    readonly used: boolean;
    readonly status: JudgeCalibrationStatus | null;
    readonly credential_missing: boolean;
    readonly cases_not_scored: number;
  };
  readonly budget: BudgetDecision;
}

export interface GateDecision {
  readonly verdict: 'pass' | 'fail';
  readonly reasons: ReadonlyArray<GateNote<GateReasonCode>>;
  readonly warnings: ReadonlyArray<GateNote<GateWarningCode>>;
}

export function decideGate(g: GateInputs): GateDecision {
  const reasons: GateNote<GateReasonCode>[] = [];
  const warnings: GateNote<GateWarningCode>[] = [];
  if (g.regression_verdict === 'regressed') {
    reasons.push({ code: 'regressed', message: 'the score dropped by more than the regression threshold and the pass-rate interval excludes zero (G2)' });
  } else if (g.regression_verdict === 'inconclusive_noise') {
    warnings.push({ code: 'inconclusive_noise', message: 'the score dropped by more than the threshold, but the pass-rate interval contains zero: not a regression (G2)' });
  } else if (g.regression_verdict === 'no_baseline' || g.regression_verdict === null) {
    warnings.push({ code: 'no_baseline', message: 'no baseline run to compare with: regression not checked' });
  }
  if (g.pass_rate === null || g.pass_rate < g.pass_threshold) {
    reasons.push({ code: 'below_pass_threshold', message: `pass rate ${g.passed}/${g.n} is below the suite's threshold ${g.pass_threshold} (R2)` });
  }
  if (g.budget === 'blocked' || g.budget === 'throttled' || g.budget === 'store_unreadable') {
    const why = g.budget === 'store_unreadable' ? 'the budget store could not be read' : `a ${g.budget === 'blocked' ? 'blocking' : 'throttling'} budget applies to judge calls`;
    reasons.push({ code: 'budget_blocked', message: `${why}: no judge spend (GT4)` });
  }
  if (g.judge.used && g.judge.status !== 'certified') {
    reasons.push({ code: 'judge_uncalibrated', message: `the suite uses llm_judge and the judge is ${g.judge.status ?? 'uncalibrated'} (J4)` });
  }
  if (g.judge.used && g.judge.credential_missing) {
    warnings.push({ code: 'judge_credential_missing', message: `no judge credential: ${g.judge.cases_not_scored} judge case(s) not scored, counted as failed (GT2)` });
  }
  return { verdict: reasons.length === 0 ? 'pass' : 'fail', reasons, warnings };
}

export interface GateSample {
  readonly size: number;
  readonly seed: string;
}

/** GT3: the seed chooses the sample - the same seed, the same cases, in suite order. */
export function sampleCaseIds(caseIds: readonly string[], sample: GateSample | undefined): readonly string[] {
  return sample ? seededSample(caseIds, sample.size, sample.seed) : caseIds;
}

export interface OverrideEntry {
  readonly after: 'pass' | 'fail';
}

/** GT5: the effective verdict is the last override's, or the recorded one; the recorded one never changes. */
export function effectiveVerdict(recorded: 'pass' | 'fail', overrides: readonly OverrideEntry[]): 'pass' | 'fail' {
  return overrides.length === 0 ? recorded : overrides[overrides.length - 1].after;
}

export const MIN_OVERRIDE_REASON_CHARS = 20;

/** GT5: a written, non-trivial reason: at least 20 characters, not one character repeated. */
export function overrideReasonProblem(reason: unknown): string | null {
  if (typeof reason !== 'string') return 'a written reason is required';
  const trimmed = reason.trim();
  if (trimmed.length < MIN_OVERRIDE_REASON_CHARS) return `the reason must be at least ${MIN_OVERRIDE_REASON_CHARS} characters`;
  if (new Set(trimmed.replace(/\s/g, '')).size < 5) return 'the reason must say something';
  return null;
}
