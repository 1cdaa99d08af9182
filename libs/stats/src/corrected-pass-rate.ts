import { StatsInputError, assertCount, assertFinite, clamp } from './errors';
import { type CriticalValueOptions, criticalValue } from './normal';
import { roganGladen } from './rogan-gladen';
import { assertSuccesses } from './wilson';

/** A rate measured on a calibration set: `x` of `n` (e.g. true positives of the human passes). */
export interface CalibrationCount {
  readonly x: number;
  readonly n: number;
}

export interface CorrectedPassRateInput {
  /**
   * Apparent passes: what the judge passed. May be fractional when it is a judged rate times n (e.g. a mean
   * verdict); it must lie in [0, n].
   */
  readonly x: number;
  /** Cases judged (an integer count). */
  readonly n: number;
  /** Sensitivity from the calibration set: the judge passed `x` of the `n` items the human passed (TP of TP + FN). */
  readonly se: CalibrationCount;
  /** Specificity from the calibration set: the judge failed `x` of the `n` items the human failed (TN of TN + FP). */
  readonly sp: CalibrationCount;
}

/** `confidence` or the critical value `z` itself (default Z_95 = zForConfidence(0.95)); not both. */
export type CorrectedPassRateOptions = CriticalValueOptions;

export interface CorrectedPassRate {
  /** The Rogan-Gladen corrected pass rate in [0, 1], or null (see `reason`). */
  readonly point: number | null;
  readonly lower: number;
  readonly upper: number;
  /** Present only when `point` is null. */
  readonly reason?: 'empty' | 'youden_not_positive';
}

/**
 * The judge-corrected pass rate (J9): the share of cases that truly pass, estimated from the judge's
 * apparent pass rate x/n and the judge's sensitivity and specificity measured on a calibration set, with an
 * interval that carries the uncertainty of all three binomial samples.
 *
 * Point: Rogan & Gladen (1978), (x/n + Sp - 1) / (Se + Sp - 1), clamped to [0, 1] (`roganGladen`).
 *
 * Interval: Lang Z, Reiczigel J (2014) "Confidence limits for prevalence of disease adjusted for estimated
 * sensitivity and specificity", Preventive Veterinary Medicine 113:13-22, eqs. 4, 6, 7, 16, 17. The plain
 * delta-method (Wald) interval of the Rogan-Gladen estimate under-covers like the binomial Wald interval, so
 * they adapt Agresti & Coull (1998): add z^2/2 passes and z^2/2 fails to the judged sample, one positive and
 * one negative to each calibration sample, then shift the centre by a second-order bias term:
 *   n' = n + z^2,  AP' = (x + z^2/2) / n'
 *   Se' = (se.x + 1) / (se.n + 2),  Sp' = (sp.x + 1) / (sp.n + 2),  J' = Se' + Sp' - 1
 *   P' = (AP' + Sp' - 1) / J'
 *   Var = [AP'(1 - AP')/n' + P'^2 Se'(1 - Se')/(se.n + 2) + (1 - P')^2 Sp'(1 - Sp')/(sp.n + 2)] / J'^2
 *   d   = 2 z^2 [P' Se'(1 - Se')/(se.n + 2) - (1 - P') Sp'(1 - Sp')/(sp.n + 2)]
 *   [lower, upper] = P' + d -/+ z sqrt(Var), clamped to [0, 1]
 * The paper prints (1 + P)^2 in eq. 4; (1 - P)^2 is the delta-method term and is what the authors' own script
 * (CI4TruePrevalence_15_03_2013.r) and the R package asht (prevSeSp, which notes the typo) compute.
 *
 * One addition of ours: the interval is centred on P' + d, not on the point, and with a calibration class of
 * a handful of items (e.g. 3 of 3 judged right, which the pseudo-counts pull to 4/5) it can miss the point.
 * The bounds are then widened to reach the point, never narrowed, so a reported rate always lies inside its
 * own interval; none of the published examples is affected.
 *
 * Undefined, as `point: null` with the whole range [0, 1]:
 * - `empty`: n = 0, or no human passes (se.n = 0) or no human fails (sp.n = 0) in the calibration set.
 * - `youden_not_positive`: Se + Sp <= 1, a judge no better than chance (as in `roganGladen`); also when the
 *   adjusted J' <= 0, which can happen with J > 0 only for a near-chance judge on a tiny calibration class,
 *   where the interval formula divides by a J' of the wrong sign.
 *
 * Invalid input throws `StatsInputError`: n, se.n, se.x, sp.n, sp.x must be integer counts with x <= n;
 * x must be finite and in [0, n]; z must be finite and positive.
 */
export function correctedPassRate(input: CorrectedPassRateInput, opts: CorrectedPassRateOptions = {}): CorrectedPassRate {
  const { x, n, se, sp } = input;
  assertCount(n, 'n');
  assertFinite(x, 'x');
  if (x < 0) throw new StatsInputError('NEGATIVE_COUNT', `x must not be negative, got ${x}`);
  if (x > n) throw new StatsInputError('SUCCESSES_EXCEED_N', `x (${x}) must not exceed n (${n})`);
  assertSuccesses(se.x, se.n, 'se.x');
  assertSuccesses(sp.x, sp.n, 'sp.x');
  const z = criticalValue(opts);

  if (n === 0 || se.n === 0 || sp.n === 0) return { point: null, lower: 0, upper: 1, reason: 'empty' };
  const rg = roganGladen(x / n, se.x / se.n, sp.x / sp.n);
  if (rg.corrected === null) return { point: null, lower: 0, upper: 1, reason: 'youden_not_positive' };
  const point = rg.corrected;

  const z2 = z * z;
  const nAp = n + z2;
  const ap = (x + z2 / 2) / nAp;
  const nSe = se.n + 2;
  const nSp = sp.n + 2;
  const sens = (se.x + 1) / nSe;
  const spec = (sp.x + 1) / nSp;
  const youden = sens + spec - 1;
  if (youden <= 0) return { point: null, lower: 0, upper: 1, reason: 'youden_not_positive' };

  // Unclamped on purpose: the paper's P' may leave [0, 1]; the bounds are clamped at the end.
  const p = (ap + spec - 1) / youden;
  const varSe = (sens * (1 - sens)) / nSe;
  const varSp = (spec * (1 - spec)) / nSp;
  const variance = ((ap * (1 - ap)) / nAp + p * p * varSe + (1 - p) * (1 - p) * varSp) / (youden * youden);
  const shift = 2 * z2 * (p * varSe - (1 - p) * varSp);
  const half = z * Math.sqrt(variance);
  const lower = clamp(p + shift - half, 0, 1);
  const upper = clamp(p + shift + half, 0, 1);
  return { point, lower: Math.min(lower, point), upper: Math.max(upper, point) };
}

