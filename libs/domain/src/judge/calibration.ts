/**
 * Judge calibration (J4): how well the judge agrees with humans on a human-labelled set, and whether that
 * certifies it. The human label is the reference and "pass" the positive class.
 *
 * - percent agreement with its 95% Wilson interval;
 * - Cohen's kappa (agreement alone is not defensible under class imbalance);
 * - sensitivity and specificity with their denominators and intervals;
 * - verbosity bias: the point-biserial correlation of output length with the judge's verdict, beside the
 *   same for the human labels (a judge that rewards length more than humans do shows a positive excess).
 *
 * Certified when the set is large enough AND agreement >= the agreement target AND kappa is defined AND
 * kappa >= the kappa target. "Large enough" is at least 50 labelled items and at least 10 in each human
 * class: two agreeing items have a 95% agreement interval of 34-100% and certify nothing. A smaller or
 * one-class set is `insufficient_set`, decided from the human labels alone - before any judge call, so a
 * refused set costs nothing. Agreement is compared by its point estimate, or (`agreement_basis:
 * 'lower_bound'`, a raise) by the lower bound of its 95% Wilson interval. Every default is a minimum: a run
 * may raise it, never lower it.
 */
import { createHash } from 'node:crypto';
import {
  type CorrelationResult,
  type Rate,
  type RateWithInterval,
  cohenKappa,
  confusion,
  correctedPassRate as correctedRate,
  pointBiserial,
  wilson,
} from '@evals/stats';

export interface CalibrationItem {
  readonly human_pass: boolean;
  readonly judge_pass: boolean;
  /** Length of the graded output in characters (for the verbosity-bias correlation). */
  readonly output_chars: number;
}

/** What the agreement target is compared with: the point estimate, or the lower bound of its 95% interval (stricter). */
export type AgreementBasis = 'estimate' | 'lower_bound';

export interface CalibrationTargets {
  readonly agreement: number;
  readonly kappa: number;
  /** Labelled items a set needs before it can certify (J4). */
  readonly min_items: number;
  /** Labelled items each human class (pass, fail) needs before the set can certify. */
  readonly min_per_class: number;
  readonly agreement_basis: AgreementBasis;
}

/** J4 minimums: a run may raise them (and ask for the lower bound), never lower them. */
export const MIN_CALIBRATION_TARGETS: CalibrationTargets = Object.freeze({ agreement: 0.85, kappa: 0.6, min_items: 50, min_per_class: 10, agreement_basis: 'estimate' as const });

/**
 * `not_certifiable` is kept for reports stored before the set-size rule (a one-class set measured after its
 * judge calls); a one-class set is `insufficient_set` now, refused before any call.
 */
export type CalibrationStatus = 'certified' | 'not_certified' | 'not_certifiable' | 'insufficient_set';

export type CalibrationReason =
  | 'empty_set'
  | 'human_labels_one_class'
  | 'too_few_items'
  | 'too_few_human_passes'
  | 'too_few_human_fails'
  | 'agreement_below_target'
  | 'kappa_undefined'
  | 'kappa_below_target';

/** The human side of a set, checked against the size targets before the judge is asked anything. */
export interface CalibrationSetCheck {
  readonly n: number;
  readonly human_pass: number;
  readonly human_fail: number;
  readonly min_items: number;
  readonly min_per_class: number;
  /** True when the set may certify (it may still fail the agreement and kappa targets). */
  readonly sufficient: boolean;
  /** Why not (empty when sufficient): every shortfall, not just the first. */
  readonly reasons: readonly CalibrationReason[];
}

export interface KappaSummary {
  readonly value: number | null;
  /** Observed agreement p_o. */
  readonly observed: number | null;
  /** Chance agreement p_e. */
  readonly expected: number | null;
  readonly reason?: 'empty' | 'expected_agreement_is_one';
}

export interface VerbosityBias {
  /** Point-biserial r of the judge's verdict (pass = 1) against output length. */
  readonly judge: CorrelationResult;
  /** The same for the human labels. */
  readonly human: CorrelationResult;
  /** judge.r - human.r: how much more the judge's verdict follows length than the humans' does; null when either is. */
  readonly excess: number | null;
}

export interface CalibrationReport {
  readonly n: number;
  readonly counts: { readonly tp: number; readonly fp: number; readonly tn: number; readonly fn: number };
  readonly agreement: Rate;
  readonly kappa: KappaSummary;
  /** TP / (TP + FN): of the items humans passed, the share the judge passed. */
  readonly sensitivity: Rate;
  /** TN / (TN + FP): of the items humans failed, the share the judge failed. */
  readonly specificity: Rate;
  readonly human_pass_rate: Rate;
  readonly judge_pass_rate: Rate;
  readonly verbosity_bias: VerbosityBias;
  readonly targets: CalibrationTargets;
  /** The set's size against the size targets (J4). */
  readonly set: CalibrationSetCheck;
  readonly status: CalibrationStatus;
  /** Why the judge is not certified (empty when certified). */
  readonly reasons: readonly CalibrationReason[];
}

export type CalibrationErrorCode = 'TARGET_BELOW_MINIMUM' | 'TARGET_INVALID' | 'INVALID_ITEM';

/** A target below the J4 minimum, or not a valid proportion / kappa. */
export class CalibrationTargetError extends Error {
  override readonly name = 'CalibrationTargetError';

  constructor(
    readonly code: Extract<CalibrationErrorCode, 'TARGET_BELOW_MINIMUM' | 'TARGET_INVALID'>,
    message: string,
  ) {
    super(`${code}: ${message}`);
  }
}

/** A calibration item that is not two booleans and a non-negative length. */
export class CalibrationInputError extends Error {
  override readonly name = 'CalibrationInputError';
  readonly code = 'INVALID_ITEM' as const;

  constructor(message: string) {
    super(`INVALID_ITEM: ${message}`);
  }
}

/** Bounds a size target may be raised to: a set is at most 5 000 items (the service's limit). */
const MAX_SIZE_TARGET = 5_000;

/** The targets of a run: the minimums, raised where asked. A lower (or invalid) target throws. */
export function resolveCalibrationTargets(targets: Partial<CalibrationTargets> = {}): CalibrationTargets {
  const agreement = resolveTarget('agreement', targets.agreement, MIN_CALIBRATION_TARGETS.agreement, 0);
  const kappa = resolveTarget('kappa', targets.kappa, MIN_CALIBRATION_TARGETS.kappa, -1);
  const min_items = resolveSizeTarget('min_items', targets.min_items, MIN_CALIBRATION_TARGETS.min_items);
  const min_per_class = resolveSizeTarget('min_per_class', targets.min_per_class, MIN_CALIBRATION_TARGETS.min_per_class);
  const basis = targets.agreement_basis;
  if (basis !== undefined && basis !== 'estimate' && basis !== 'lower_bound') {
    throw new CalibrationTargetError('TARGET_INVALID', `agreement_basis must be estimate or lower_bound, got ${String(basis)}`);
  }
  return { agreement, kappa, min_items, min_per_class, agreement_basis: basis ?? MIN_CALIBRATION_TARGETS.agreement_basis };
}

function resolveSizeTarget(name: 'min_items' | 'min_per_class', value: number | undefined, minimum: number): number {
  if (value === undefined) return minimum;
  if (typeof value !== 'number' || !Number.isSafeInteger(value) || value < 1 || value > MAX_SIZE_TARGET) {
    throw new CalibrationTargetError('TARGET_INVALID', `${name} must be an integer from 1 to ${MAX_SIZE_TARGET}, got ${String(value)}`);
  }
  if (value < minimum) {
    throw new CalibrationTargetError('TARGET_BELOW_MINIMUM', `${name} ${value} is below the minimum ${minimum}; targets may be raised, never lowered (J4)`);
  }
  return value;
}

function resolveTarget(name: 'agreement' | 'kappa', value: number | undefined, minimum: number, floor: number): number {
  if (value === undefined) return minimum;
  if (typeof value !== 'number' || !Number.isFinite(value) || value < floor || value > 1) {
    throw new CalibrationTargetError('TARGET_INVALID', `${name} target must be a number in [${floor}, 1], got ${String(value)}`);
  }
  if (value < minimum) {
    throw new CalibrationTargetError('TARGET_BELOW_MINIMUM', `${name} target ${value} is below the minimum ${minimum}; targets may be raised, never lowered (J4)`);
  }
  return value;
}

function flat({ interval: _interval, ...rate }: RateWithInterval): Rate {
  return rate;
}

function rateOf(numerator: number, denominator: number): Rate {
  const w = wilson(numerator, denominator);
  const base = { value: w.estimate, numerator, denominator, lower: w.lower, upper: w.upper };
  return w.reason ? { ...base, reason: w.reason } : base;
}

function checkItems(items: readonly CalibrationItem[]): void {
  if (!Array.isArray(items)) throw new CalibrationInputError('calibration items must be an array');
  items.forEach((item, i) => {
    if (typeof item !== 'object' || item === null) throw new CalibrationInputError(`item ${i} must be an object`);
    if (typeof item.human_pass !== 'boolean') throw new CalibrationInputError(`item ${i}: human_pass must be a boolean`);
    if (typeof item.judge_pass !== 'boolean') throw new CalibrationInputError(`item ${i}: judge_pass must be a boolean`);
    if (typeof item.output_chars !== 'number' || !Number.isFinite(item.output_chars) || item.output_chars < 0) {
      throw new CalibrationInputError(`item ${i}: output_chars must be a finite number >= 0`);
    }
  });
}

/**
 * J4: whether a set of human labels is large enough to certify anything - from the labels alone, so the
 * caller can refuse it before paying for a single judge call. Targets must be resolved already.
 */
export function checkCalibrationSet(humanPass: readonly boolean[], targets: CalibrationTargets): CalibrationSetCheck {
  const n = humanPass.length;
  const passes = humanPass.filter(Boolean).length;
  const fails = n - passes;
  const reasons: CalibrationReason[] = [];
  if (n === 0) reasons.push('empty_set');
  else if (passes === 0 || fails === 0) reasons.push('human_labels_one_class');
  if (n < targets.min_items) reasons.push('too_few_items');
  if (passes < targets.min_per_class) reasons.push('too_few_human_passes');
  if (fails < targets.min_per_class) reasons.push('too_few_human_fails');
  return { n, human_pass: passes, human_fail: fails, min_items: targets.min_items, min_per_class: targets.min_per_class, sufficient: reasons.length === 0, reasons };
}

/** J4: the calibration report of a judge against human labels. Targets are validated first. */
export function calibrate(items: readonly CalibrationItem[], targets?: Partial<CalibrationTargets>): CalibrationReport {
  const resolved = resolveCalibrationTargets(targets);
  checkItems(items);
  const set = checkCalibrationSet(
    items.map((i) => i.human_pass),
    resolved,
  );
  const human = items.map((i) => i.human_pass);
  const judge = items.map((i) => i.judge_pass);
  const lengths = items.map((i) => i.output_chars);

  const c = confusion({ reference: human, predicted: judge });
  // Rows: human pass / fail; columns: judge pass / fail.
  const k = cohenKappa([
    [c.tp, c.fn],
    [c.fp, c.tn],
  ]);
  const kappa: KappaSummary = k.reason
    ? { value: null, observed: k.observed, expected: k.expected, reason: k.reason }
    : { value: k.kappa, observed: k.observed, expected: k.expected };

  const judgeBias = pointBiserial(judge, lengths);
  const humanBias = pointBiserial(human, lengths);
  const excess = judgeBias.r !== null && humanBias.r !== null ? judgeBias.r - humanBias.r : null;

  const humanPasses = c.tp + c.fn;
  const reasons: CalibrationReason[] = [];
  let status: CalibrationStatus;
  if (!set.sufficient) {
    status = 'insufficient_set';
    reasons.push(...set.reasons);
  } else {
    const agreement = resolved.agreement_basis === 'lower_bound' ? c.agreement.lower : (c.agreement.value ?? 0);
    if (agreement < resolved.agreement) reasons.push('agreement_below_target');
    if (kappa.value === null) reasons.push('kappa_undefined');
    else if (kappa.value < resolved.kappa) reasons.push('kappa_below_target');
    status = reasons.length === 0 ? 'certified' : 'not_certified';
  }

  return {
    n: c.n,
    counts: { tp: c.tp, fp: c.fp, tn: c.tn, fn: c.fn },
    agreement: flat(c.agreement),
    kappa,
    sensitivity: flat(c.sensitivity),
    specificity: flat(c.specificity),
    human_pass_rate: rateOf(humanPasses, c.n),
    judge_pass_rate: rateOf(c.tp + c.fp, c.n),
    verbosity_bias: { judge: judgeBias, human: humanBias, excess },
    targets: resolved,
    set,
    status,
    reasons,
  };
}

/**
 * The judge-corrected pass rate of a run's judge cases (J4, J9, GT6): the rate humans would give, estimated
 * from the judge's apparent passes and its sensitivity and specificity on the calibration set (Rogan &
 * Gladen 1978), with the 95% interval of Lang & Reiczigel (2014) that carries the uncertainty of all three
 * samples (`correctedPassRate` of libs/stats), clamped to [0, 1]. Every denominator is reported.
 */
export interface CorrectedJudgePassRate {
  /** Judge cases passed (x) of judge cases judged (n), as the judge saw them. */
  readonly apparent: { readonly passed: number; readonly n: number; readonly rate: number | null };
  /** Sensitivity and specificity from the calibration report: judge passes of human passes, judge fails of human fails. */
  readonly sensitivity: { readonly x: number; readonly n: number };
  readonly specificity: { readonly x: number; readonly n: number };
  /** The corrected rate, or null (see `reason`); the interval is then the whole [0, 1]. */
  readonly rate: number | null;
  readonly lower: number;
  readonly upper: number;
  readonly level: 0.95;
  readonly method: 'rogan_gladen_lang_reiczigel_2014';
  readonly reason?: 'empty' | 'youden_not_positive';
}

/**
 * Corrects `passed` of `n` judged cases for a calibration's sensitivity and specificity. The counts come
 * from the report's rates (`numerator` of `denominator`), never from the rounded values.
 */
export function correctedJudgePassRate(
  apparent: { readonly passed: number; readonly n: number },
  calibration: Pick<CalibrationReport, 'sensitivity' | 'specificity'>,
): CorrectedJudgePassRate {
  const se = { x: calibration.sensitivity.numerator, n: calibration.sensitivity.denominator };
  const sp = { x: calibration.specificity.numerator, n: calibration.specificity.denominator };
  const r = correctedRate({ x: apparent.passed, n: apparent.n, se, sp });
  return {
    apparent: { passed: apparent.passed, n: apparent.n, rate: apparent.n === 0 ? null : apparent.passed / apparent.n },
    sensitivity: se,
    specificity: sp,
    rate: r.point,
    lower: r.lower,
    upper: r.upper,
    level: 0.95,
    method: 'rogan_gladen_lang_reiczigel_2014',
    ...(r.reason ? { reason: r.reason } : {}),
  };
}

// --- scope -------------------------------------------------------------------------------------------------

/**
 * What a certification covers (J4): a judge pin (model, prompt version) measured against ONE rubric - named by
 * its hash - or against the cases of one suite. A judge certified on one rubric says nothing about another.
 * Written `rubric:<sha256 hex>` or `suite:<suite key>`.
 */
export type CalibrationScope = `rubric:${string}` | `suite:${string}`;

/** SHA-256 hex of a rubric's UTF-8 text: how a scope names the rubric a set was labelled against. */
export function rubricHash(rubric: string): string {
  return createHash('sha256').update(rubric, 'utf8').digest('hex');
}

export function rubricScope(rubric: string): CalibrationScope {
  return `rubric:${rubricHash(rubric)}`;
}

export function suiteScope(suiteKey: string): CalibrationScope {
  return `suite:${suiteKey}`;
}

/**
 * The scope a set is measured for: its suite when it names one (the cases' own rubrics are judged), else the
 * rubric its items were labelled against.
 */
export function calibrationScopeOf(set: { readonly suite_key: string | null; readonly rubric: string | null }): CalibrationScope {
  if (set.suite_key !== null) return suiteScope(set.suite_key);
  if (set.rubric === null) throw new CalibrationInputError('a calibration set needs a rubric or a suite');
  return rubricScope(set.rubric);
}


/** One `llm_judge` case of a run as the correction sees it: its rubric, whether the judge passed it. */
export interface JudgedCase {
  readonly rubric: string;
  readonly passed: boolean;
}

export interface ScopedCorrectedPassRate extends CorrectedJudgePassRate {
  /** The certified scope whose sensitivity and specificity corrected these cases. */
  readonly scope: CalibrationScope;
}

/**
 * The corrected pass rate of a run's judged cases, per certified scope that covers them (J4, J9): the suite's
 * scope corrects every case at once; otherwise the cases of each certified rubric are corrected by that
 * rubric's calibration. Cases no certified scope covers are not corrected (and the gate fails them anyway,
 * `judge_uncalibrated`). Only cases the judge actually judged belong here: an unscored case (no judge, no
 * credential, a refused budget) was never judged and has no apparent verdict to correct.
 */
export function correctedPassRatesByScope(
  suiteKey: string,
  cases: readonly JudgedCase[],
  certified: ReadonlyMap<string, Pick<CalibrationReport, 'sensitivity' | 'specificity'>>,
): ScopedCorrectedPassRate[] {
  if (cases.length === 0) return [];
  const suite = certified.get(suiteScope(suiteKey));
  if (suite) {
    const passed = cases.filter((c) => c.passed).length;
    return [{ scope: suiteScope(suiteKey), ...correctedJudgePassRate({ passed, n: cases.length }, suite) }];
  }
  const groups = new Map<CalibrationScope, { passed: number; n: number }>();
  for (const c of cases) {
    const scope = rubricScope(c.rubric);
    if (!certified.has(scope)) continue;
    const g = groups.get(scope) ?? { passed: 0, n: 0 };
    groups.set(scope, { passed: g.passed + (c.passed ? 1 : 0), n: g.n + 1 });
  }
  return [...groups.entries()]
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
    .map(([scope, counts]) => ({ scope, ...correctedJudgePassRate(counts, certified.get(scope)!) }));
}
