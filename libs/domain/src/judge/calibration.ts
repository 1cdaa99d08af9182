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
 * Certified when agreement >= the agreement target AND kappa is defined AND kappa >= the kappa target.
 * The defaults (0.85, 0.6) are minimums: a run may raise them, never lower them. A set whose human labels
 * are all one class cannot measure chance-corrected agreement and certifies nothing (`not_certifiable`).
 */
import { type CorrelationResult, type Rate, type RateWithInterval, cohenKappa, confusion, pointBiserial, roganGladen, wilson } from '@evals/stats';

export interface CalibrationItem {
  readonly human_pass: boolean;
  readonly judge_pass: boolean;
  /** Length of the graded output in characters (for the verbosity-bias correlation). */
  readonly output_chars: number;
}

export interface CalibrationTargets {
  readonly agreement: number;
  readonly kappa: number;
}

/** J4 minimums: a run may raise them, never lower them. */
export const MIN_CALIBRATION_TARGETS: CalibrationTargets = Object.freeze({ agreement: 0.85, kappa: 0.6 });

export type CalibrationStatus = 'certified' | 'not_certified' | 'not_certifiable';

export type CalibrationReason =
  | 'empty_set'
  | 'human_labels_one_class'
  | 'agreement_below_target'
  | 'kappa_undefined'
  | 'kappa_below_target';

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

/** The targets of a run: the minimums, raised where asked. A lower (or invalid) target throws. */
export function resolveCalibrationTargets(targets: Partial<CalibrationTargets> = {}): CalibrationTargets {
  const agreement = resolveTarget('agreement', targets.agreement, MIN_CALIBRATION_TARGETS.agreement, 0);
  const kappa = resolveTarget('kappa', targets.kappa, MIN_CALIBRATION_TARGETS.kappa, -1);
  return { agreement, kappa };
}

function resolveTarget(name: keyof CalibrationTargets, value: number | undefined, minimum: number, floor: number): number {
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

/** J4: the calibration report of a judge against human labels. Targets are validated first. */
export function calibrate(items: readonly CalibrationItem[], targets?: Partial<CalibrationTargets>): CalibrationReport {
  const resolved = resolveCalibrationTargets(targets);
  checkItems(items);
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
  if (c.n === 0) {
    status = 'not_certifiable';
    reasons.push('empty_set');
  } else if (humanPasses === 0 || humanPasses === c.n) {
    status = 'not_certifiable';
    reasons.push('human_labels_one_class');
  } else {
    if ((c.agreement.value ?? 0) < resolved.agreement) reasons.push('agreement_below_target');
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
    status,
    reasons,
  };
}

export interface CorrectedPassRate {
  /** The judge's apparent pass rate, as given. */
  readonly apparent: number;
  /** Rogan-Gladen estimate of the pass rate humans would give, or null when it cannot be corrected. */
  readonly corrected: number | null;
  readonly reason?: 'sensitivity_undefined' | 'specificity_undefined' | 'youden_not_positive';
}

/**
 * The judge's apparent pass rate corrected for its measured sensitivity and specificity (Rogan & Gladen
 * 1978): an estimate of the rate humans would give. Null when the calibration lacks either rate or the
 * judge is no better than chance on it.
 */
export function correctedPassRate(apparent: number, calibration: Pick<CalibrationReport, 'sensitivity' | 'specificity'>): CorrectedPassRate {
  const sens = calibration.sensitivity.value;
  const spec = calibration.specificity.value;
  if (sens === null) return { apparent, corrected: null, reason: 'sensitivity_undefined' };
  if (spec === null) return { apparent, corrected: null, reason: 'specificity_undefined' };
  const r = roganGladen(apparent, sens, spec);
  return r.reason ? { apparent, corrected: null, reason: r.reason } : { apparent, corrected: r.corrected };
}
