import { StatsInputError, assertProbability } from './errors';
import { normalQuantile } from './normal';

export type SampleSizeMethod = 'pooled_normal' | 'arcsine';

/** Why a sample size is null: with no difference to detect, no finite number of cases detects it. */
export type SampleSizeUndefinedReason = 'no_difference';

export interface SampleSizePowerOptions {
  /** Significance level, 0 < alpha < 1. Default 0.05 (G8: 95% confidence). */
  readonly alpha?: number;
  /** Wanted power, alpha < power < 1. Default 0.8 (G8). */
  readonly power?: number;
  /** 2 (default) for a two-sided test, 1 for one-sided. */
  readonly sided?: 1 | 2;
}

export interface TwoProportionsSampleSizeInput extends SampleSizePowerOptions {
  readonly p1: number;
  readonly p2: number;
  /** Default `pooled_normal`. */
  readonly method?: SampleSizeMethod;
}

export interface TwoProportionsSampleSize {
  /** The real-valued solution of the power equation, per group; null when p1 = p2. */
  readonly n_exact: number | null;
  /** ceil(n_exact): the cases each run needs (G8). */
  readonly n_per_group: number | null;
  /** Present only when the sizes are null. */
  readonly reason?: SampleSizeUndefinedReason;
}

export interface PairedSampleSizeInput extends SampleSizePowerOptions {
  /** Probability that a case passes in the first run and fails in the second (cell b / n). */
  readonly p10: number;
  /** Probability that a case fails in the first run and passes in the second (cell c / n). */
  readonly p01: number;
}

export interface PairedSampleSize {
  readonly n_exact: number | null;
  /** ceil(n_exact): pairs, i.e. cases scored in both runs. */
  readonly n_pairs: number | null;
  readonly reason?: SampleSizeUndefinedReason;
}

const METHODS: readonly SampleSizeMethod[] = ['pooled_normal', 'arcsine'];

/**
 * Cases per group needed to detect p1 vs p2 with a two-proportion test (G8: the size an
 * `inconclusive_noise` comparison would have needed), defaults alpha 0.05, power 0.8, two-sided.
 * Each method reproduces its reference implementation exactly, not an approximation of it:
 *
 * `pooled_normal` (default): the z test with the pooled variance under H0 and without continuity
 * correction (Fleiss' formula, Statistical Methods for Rates and Proportions, without its continuity
 * correction), i.e. what R's `power.prop.test(p1=, p2=, power=, sig.level=)` solves. R's
 * default `strict = FALSE` leaves out the rejections in the wrong tail, so its power equation
 *   power = Phi((sqrt(n) |p1 - p2| - z_{1-alpha/s} sqrt(2 pbar qbar)) / sqrt(p1 q1 + p2 q2))
 * has the closed-form solution used here:
 *   n = (z_{1-alpha/s} sqrt(2 pbar qbar) + z_{power} sqrt(p1 q1 + p2 q2))^2 / (p1 - p2)^2,
 * pbar = (p1 + p2) / 2, qbar = 1 - pbar, s = sided. R finds the same root with uniroot at a tolerance
 * of about 1e-4, so R's printed n can differ from this one in the 5th decimal (R prints 76.70692 for
 * p1 = 0.5, p2 = 0.75, power = 0.9; the exact root is 76.706928...).
 *
 * `arcsine`: Cohen's effect size h = 2 asin(sqrt(p1)) - 2 asin(sqrt(p2)) (Cohen, Statistical Power
 * Analysis for the Behavioral Sciences, 2nd ed. 1988, ch. 6), as R's `pwr.2p.test(h =, power =)` and
 * statsmodels' `NormalIndPower` compute it. These count both rejection regions of a two-sided test,
 *   power = Phi(|h| sqrt(n/2) - z_{1-alpha/2}) + Phi(-|h| sqrt(n/2) - z_{1-alpha/2}),
 * so the familiar closed form 2 ((z_{1-alpha/2} + z_{power}) / h)^2, which drops the second term, is
 * slightly too large: 76.652967 instead of 76.652940 for p1 = 0.5, p2 = 0.75 at power 0.9, and 80.012
 * instead of pwr's 80 for h = 0.3 at the power pwr reports for n = 80. The equation is solved for
 * s = |h| sqrt(n/2) by bisection between 0 (power = alpha) and the closed-form value (power above the
 * target), then n = 2 (s / h)^2. One-sided, the second term is absent and the closed form is exact.
 *
 * p1 = p2: `{ n_exact: null, n_per_group: null, reason: 'no_difference' }`.
 * Invalid input throws: p1 or p2 outside [0, 1] (`INVALID_PROBABILITY`, `NOT_FINITE`); alpha outside
 * (0, 1), power not strictly between alpha and 1 (a power of alpha needs no data at all: a test that
 * ignores the data has it), sided other than 1 or 2, or an unknown method (`INVALID_OPTION`).
 */
export function sampleSizeTwoProportions(input: TwoProportionsSampleSizeInput): TwoProportionsSampleSize {
  const { p1, p2 } = input;
  assertProbability(p1, 'p1');
  assertProbability(p2, 'p2');
  const method = input.method ?? 'pooled_normal';
  if (!METHODS.includes(method)) {
    throw new StatsInputError('INVALID_OPTION', `method must be one of ${METHODS.join(', ')}, got ${String(method)}`);
  }
  const { alpha, power, sided } = powerOptions(input);
  if (p1 === p2) return { n_exact: null, n_per_group: null, reason: 'no_difference' };
  const zAlpha = normalQuantile(1 - alpha / sided);
  const zPower = normalQuantile(power);
  let nExact: number;
  if (method === 'pooled_normal') {
    const pbar = (p1 + p2) / 2;
    const root = zAlpha * Math.sqrt(2 * pbar * (1 - pbar)) + zPower * Math.sqrt(p1 * (1 - p1) + p2 * (1 - p2));
    nExact = (root * root) / ((p1 - p2) * (p1 - p2));
  } else {
    const h = Math.abs(2 * Math.asin(Math.sqrt(p1)) - 2 * Math.asin(Math.sqrt(p2)));
    // p1 != p2 gives h > 0: asin and sqrt are strictly increasing, and distinct doubles in [0, 1] stay
    // distinct through them at this scale.
    const s = sided === 1 ? zAlpha + zPower : solveTwoSidedShift(zAlpha, power, zAlpha + zPower);
    nExact = 2 * (s / h) * (s / h);
  }
  return { n_exact: nExact, n_per_group: Math.ceil(nExact) };
}

/**
 * Pairs (cases scored in both runs) needed for McNemar's test to detect p10 vs p01 (G7, G8), by
 * Connor RJ (1987), "Sample size for testing differences in proportions for the paired-sample design",
 * Biometrics 43:207-211:
 *   n = (z_{1-alpha/s} sqrt(psi) + z_{power} sqrt(psi - delta^2))^2 / delta^2,
 *   psi = p10 + p01 (the discordant share), delta = p10 - p01 (= p1 - p2 of the two runs).
 * This is the formula of the powerandsamplesize.com McNemar calculators and of pwrss's
 * `power.exact.mcnemar(method = "approximate")` (written there with the odds ratio p10 / p01).
 * Only discordant cases carry information, so for the same p1 - p2 a rerun whose runs mostly agree
 * (small psi) needs far fewer cases than two independent samples.
 *
 * p10 = p01: `{ n_exact: null, n_pairs: null, reason: 'no_difference' }`. p10 + p01 > 1 is not a table
 * (`INVALID_PROBABILITY`); the options are checked as for `sampleSizeTwoProportions`.
 */
export function sampleSizePaired(input: PairedSampleSizeInput): PairedSampleSize {
  const { p10, p01 } = input;
  assertProbability(p10, 'p10');
  assertProbability(p01, 'p01');
  if (p10 + p01 > 1) {
    throw new StatsInputError('INVALID_PROBABILITY', `p10 + p01 must not exceed 1, got ${p10} + ${p01}`);
  }
  const { alpha, power, sided } = powerOptions(input);
  if (p10 === p01) return { n_exact: null, n_pairs: null, reason: 'no_difference' };
  const psi = p10 + p01;
  const delta = p10 - p01;
  const zAlpha = normalQuantile(1 - alpha / sided);
  const zPower = normalQuantile(power);
  // psi >= |delta| >= delta^2 for a valid table; max(0, .) only absorbs rounding at psi = |delta| = 1.
  const root = zAlpha * Math.sqrt(psi) + zPower * Math.sqrt(Math.max(0, psi - delta * delta));
  const nExact = (root * root) / (delta * delta);
  return { n_exact: nExact, n_pairs: Math.ceil(nExact) };
}

function powerOptions(input: SampleSizePowerOptions): { alpha: number; power: number; sided: 1 | 2 } {
  const alpha = input.alpha ?? 0.05;
  const power = input.power ?? 0.8;
  const sided = input.sided ?? 2;
  if (typeof alpha !== 'number' || !Number.isFinite(alpha) || alpha <= 0 || alpha >= 1) {
    throw new StatsInputError('INVALID_OPTION', `alpha must lie strictly between 0 and 1, got ${String(alpha)}`);
  }
  // power > alpha also guarantees that every formula here has a positive root: z_{power} > -z_{1-alpha/s}.
  if (typeof power !== 'number' || !Number.isFinite(power) || power <= alpha || power >= 1) {
    throw new StatsInputError('INVALID_OPTION', `power must lie strictly between alpha (${alpha}) and 1, got ${String(power)}`);
  }
  if (sided !== 1 && sided !== 2) {
    throw new StatsInputError('INVALID_OPTION', `sided must be 1 or 2, got ${String(sided)}`);
  }
  return { alpha, power, sided };
}

/**
 * The s > 0 with Phi(s - z) + Phi(-s - z) = power, where z = z_{1-alpha/2}. The left side is alpha at
 * s = 0 and increases with s (its derivative is phi(s - z) - phi(s + z) > 0), and at the closed-form
 * s = z + z_{power} it already exceeds the target by the second term, so the root lies in (0, upper].
 */
function solveTwoSidedShift(z: number, power: number, upper: number): number {
  let lo = 0;
  let hi = upper;
  for (let i = 0; i < 2000; i++) {
    const mid = lo + (hi - lo) / 2;
    if (mid <= lo || mid >= hi) break;
    if (normalCdf(mid - z) + normalCdf(-mid - z) < power) lo = mid;
    else hi = mid;
  }
  return lo + (hi - lo) / 2;
}

const INV_SQRT_2PI = 0.3989422804014327;

/**
 * The standard normal CDF Phi(x). Below |x| = 3 Marsaglia's series (J Stat Softw 11(4), 2004)
 *   Phi(x) = 1/2 + phi(x) (x + x^3/3 + x^5/(3*5) + ...),
 * summed until the sum stops changing; beyond, the upper tail by Laplace's continued fraction
 *   1 - Phi(x) = phi(x) / (x + 1/(x + 2/(x + 3/(x + ...))))
 * evaluated with the modified Lentz algorithm, which keeps full relative precision deep in the tail
 * where 1 - Phi(x) would cancel. Absolute error below 1e-15 everywhere (normal.spec-style checks against
 * scipy in sample-size.spec.ts). Exported for those checks; the public API is the sample-size functions.
 */
export function normalCdf(x: number): number {
  if (Number.isNaN(x)) {
    throw new StatsInputError('NOT_FINITE', 'normalCdf needs a number, got NaN');
  }
  if (x === Number.POSITIVE_INFINITY) return 1;
  if (x === Number.NEGATIVE_INFINITY) return 0;
  const density = INV_SQRT_2PI * Math.exp(-0.5 * x * x);
  const ax = Math.abs(x);
  if (ax < 3) {
    const x2 = x * x;
    let term = x;
    let sum = x;
    for (let k = 1; k < 200; k++) {
      term *= x2 / (2 * k + 1);
      const next = sum + term;
      if (next === sum) break;
      sum = next;
    }
    return 0.5 + density * sum;
  }
  if (density === 0) return x < 0 ? 0 : 1;
  // Modified Lentz for b0 + a1/(b1 + a2/(b2 + ...)) with b_j = ax, a_j = j.
  const tiny = 1e-300;
  let f = ax;
  let cc = ax;
  let dd = 0;
  for (let j = 1; j < 5000; j++) {
    dd = ax + j * dd;
    if (dd === 0) dd = tiny;
    dd = 1 / dd;
    cc = ax + j / cc;
    if (cc === 0) cc = tiny;
    const step = cc * dd;
    f *= step;
    if (Math.abs(step - 1) < 1e-16) break;
  }
  const tail = density / f;
  return x < 0 ? tail : 1 - tail;
}
