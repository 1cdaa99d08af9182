import { seededSample } from '@evals/stats';

/**
 * The regression gate (GT1-GT6) as a pure decision: everything it needs is gathered by the caller; this
 * says pass or fail, with every reason and warning. Any reason fails the gate; warnings never decide, but
 * are always shown (GT2: a missing judge credential is declared, never a silent pass).
 */
export type GateReasonCode = 'regressed' | 'below_pass_threshold' | 'judge_uncalibrated' | 'budget_blocked' | 'judge_unstable';
export type GateWarningCode = 'judge_credential_missing' | 'judge_not_configured' | 'no_baseline' | 'inconclusive_noise' | 'judge_unstable' | 'budget_throttled' | 'budget_over_limit';

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
    /** No judge configured at all (JUDGE_PROVIDER unset). */
    readonly not_configured?: boolean;
    /** J4: the certification scopes the gated cases need that the pin does not have certified. */
    readonly uncovered_scopes?: readonly string[];
  };
  readonly budget: BudgetDecision;
  /** Issue 13: what the budget decision weighed - the estimate, what was left, the budget that decided. */
  readonly budget_plan?: {
    readonly estimate_usd: number;
    readonly left_usd: number | null;
    readonly scope: string | null;
    readonly judged: number | null;
    readonly over_limit_scopes: readonly string[];
  };
  /**
   * Issue 13: the run's verdict stability (cases judged with `repeats`), the least stability the gate
   * accepts (default 0.9) and whether falling below it fails the gate (else it warns).
   */
  readonly stability?: {
    readonly rate: number | null;
    readonly lower: number;
    readonly upper: number;
    readonly cases: number;
    readonly unstable_case_ids: readonly string[];
    readonly min: number;
    readonly fail: boolean;
  } | null;
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
  budgetNotes(g, reasons, warnings);
  stabilityNote(g, reasons, warnings);
  if (g.judge.used && g.judge.status !== 'certified') {
    reasons.push({ code: 'judge_uncalibrated', message: uncalibratedMessage(g.judge) });
  }
  if (g.judge.used && g.judge.not_configured) {
    warnings.push({ code: 'judge_not_configured', message: `no judge configured (JUDGE_PROVIDER): ${g.judge.cases_not_scored} judge case(s) not scored, counted as failed (GT2)` });
  }
  if (g.judge.used && g.judge.credential_missing) {
    warnings.push({ code: 'judge_credential_missing', message: `no judge credential: ${g.judge.cases_not_scored} judge case(s) not scored, counted as failed (GT2)` });
  }
  return { verdict: reasons.length === 0 ? 'pass' : 'fail', reasons, warnings };
}

/** The path from an `llm_judge` suite to a passing gate, named in the failure that needs it (J4). */
export const JUDGE_CERTIFICATION_PATH =
  'to certify it: point the services at a judge provider (JUDGE_PROVIDER, JUDGE_MODEL, JUDGE_API_KEY), label at least 50 outputs - 10 pass and 10 fail - with `evals label`, measure the judge with `evals calibrate --suite <key>` (or `--rubric`), then run `evals gate` again (docs/calibration.md)';

function uncalibratedMessage(j: GateInputs['judge']): string {
  const what = j.not_configured
    ? 'no judge is configured'
    : `the judge is ${j.status ?? 'uncalibrated'}${j.uncovered_scopes && j.uncovered_scopes.length > 0 ? ` for ${j.uncovered_scopes.join(', ')}` : ''}`;
  return `the suite uses llm_judge and ${what} (J4); ${JUDGE_CERTIFICATION_PATH}`;
}

const usd = (v: number | null | undefined): string => (v === null || v === undefined ? 'unknown' : `$${v.toFixed(4)}`);

/** GT4 in money (issue 13): a refused spend fails with the estimate and what is left; a throttle or an `allow` budget over its limit warns. */
function budgetNotes(g: GateInputs, reasons: GateNote<GateReasonCode>[], warnings: GateNote<GateWarningCode>[]): void {
  const p = g.budget_plan;
  if (g.budget === 'store_unreadable') {
    reasons.push({ code: 'budget_blocked', message: 'the budget store could not be read: no judge spend (GT4)' });
  } else if (g.budget === 'blocked') {
    const what = p ? `the judge spend estimated at ${usd(p.estimate_usd)} exceeds the ${usd(p.left_usd)} left of budget ${p.scope ?? 'judge'}` : 'a blocking budget applies to judge calls';
    reasons.push({ code: 'budget_blocked', message: `${what}: no judge spend (GT4)` });
  } else if (g.budget === 'throttled') {
    const what = p ? `the judge spend estimated at ${usd(p.estimate_usd)} exceeds the ${usd(p.left_usd)} left of budget ${p.scope ?? 'judge'}: ${p.judged ?? 0} judge case(s) judged` : 'a throttling budget applies';
    warnings.push({ code: 'budget_throttled', message: `${what}, the rest unscored and counted as failed (GT4)` });
  }
  if (p && p.over_limit_scopes.length > 0) {
    warnings.push({ code: 'budget_over_limit', message: `the judge spend estimated at ${usd(p.estimate_usd)} is over the limit of budget(s) ${p.over_limit_scopes.join(', ')} (mode allow) (GT4)` });
  }
}

/** Issue 13: a judge whose repeated verdicts disagree on too many cases - a warning, or a reason when asked to fail on it. */
function stabilityNote(g: GateInputs, reasons: GateNote<GateReasonCode>[], warnings: GateNote<GateWarningCode>[]): void {
  const s = g.stability;
  if (!s || s.rate === null || s.rate >= s.min) return;
  const shown = s.unstable_case_ids.slice(0, 10).join(', ') + (s.unstable_case_ids.length > 10 ? ', ...' : '');
  const message = `verdict stability ${(s.rate * 100).toFixed(1)}% (95% CI ${(s.lower * 100).toFixed(1)}-${(s.upper * 100).toFixed(1)}%, ${s.cases} case(s) judged with repeats) is below ${s.min}: the judge disagrees with itself on ${shown}`;
  (s.fail ? reasons : warnings).push({ code: 'judge_unstable', message });
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
/** An audit entry is read by people: a reason longer than a page is refused, not stored. */
export const MAX_OVERRIDE_REASON_CHARS = 2000;

/** GT5: a written, non-trivial reason: 20 to 2 000 characters once trimmed, not one character repeated. */
export function overrideReasonProblem(reason: unknown): string | null {
  if (typeof reason !== 'string') return 'a written reason is required';
  const trimmed = reason.trim();
  if (trimmed.length < MIN_OVERRIDE_REASON_CHARS) return `the reason must be at least ${MIN_OVERRIDE_REASON_CHARS} characters`;
  if (trimmed.length > MAX_OVERRIDE_REASON_CHARS) return `the reason must be at most ${MAX_OVERRIDE_REASON_CHARS} characters`;
  if (new Set(trimmed.replace(/\s/g, '')).size < 5) return 'the reason must say something';
  return null;
}
