import { StatsInputError } from './errors';

/**
 * The two-sided 95% standard normal quantile, Phi^-1(0.975), to double precision. Published 4-decimal
 * interval values are computed with it; the common shortcut 1.96 moves some of them in the 4th decimal
 * (see wilson.spec.ts), so every 95% interval in this library uses this constant, never 1.96.
 */
export const Z_95 = 1.959963984540054;

export const DEFAULT_CONFIDENCE = 0.95;

/**
 * Inverse of the standard normal CDF, by Wichura's algorithm AS 241 (PPND16, Applied Statistics 37:477-484,
 * 1988): rational approximations with a relative error about 1e-16, so confidence levels other than 95%
 * get quantiles as exact as the hard-coded one.
 */
export function normalQuantile(p: number): number {
  if (typeof p !== 'number' || !Number.isFinite(p) || p <= 0 || p >= 1) {
    throw new StatsInputError('INVALID_PROBABILITY', `normalQuantile needs 0 < p < 1, got ${String(p)}`);
  }
  const q = p - 0.5;
  if (Math.abs(q) <= 0.425) {
    const r = 0.180625 - q * q;
    return (
      (q *
        (((((((r * 2509.0809287301226727 + 33430.575583588128105) * r + 67265.770927008700853) * r +
          45921.953931549871457) *
          r +
          13731.693765509461125) *
          r +
          1971.5909503065514427) *
          r +
          133.14166789178437745) *
          r +
          3.387132872796366608)) /
      (((((((r * 5226.495278852545925 + 28729.085735721942674) * r + 39307.89580009271061) * r +
        21213.794301586595867) *
        r +
        5394.1960214247511077) *
        r +
        687.1870074920579083) *
        r +
        42.313330701600911252) *
        r +
        1)
    );
  }
  // Tails: work with the smaller of p and 1 - p so that precision is not lost to 1 - p rounding.
  let r = q < 0 ? p : 1 - p;
  r = Math.sqrt(-Math.log(r));
  let x: number;
  if (r <= 5) {
    r -= 1.6;
    x =
      (((((((r * 7.7454501427834140764e-4 + 0.0227238449892691845833) * r + 0.24178072517745061177) * r +
        1.27045825245236838258) *
        r +
        3.64784832476320460504) *
        r +
        5.7694972214606914055) *
        r +
        4.6303378461565452959) *
        r +
        1.42343711074968357734) /
      (((((((r * 1.05075007164441684324e-9 + 5.475938084995344946e-4) * r + 0.0151986665636164571966) * r +
        0.14810397642748007459) *
        r +
        0.68976733498510000455) *
        r +
        1.6763848301838038494) *
        r +
        2.05319162663775882187) *
        r +
        1);
  } else {
    r -= 5;
    x =
      (((((((r * 2.01033439929228813265e-7 + 2.71155556874348757815e-5) * r + 0.0012426609473880784386) * r +
        0.026532189526576123093) *
        r +
        0.29656057182850489123) *
        r +
        1.7848265399172913358) *
        r +
        5.4637849111641143699) *
        r +
        6.6579046435011037772) /
      (((((((r * 2.04426310338993978564e-15 + 1.4215117583164458887e-7) * r + 1.8463183175100546818e-5) * r +
        7.868691311456132591e-4) *
        r +
        0.0148753612908506148525) *
        r +
        0.13692988092273580531) *
        r +
        0.59983220655588793769) *
        r +
        1);
  }
  return q < 0 ? -x : x;
}

/**
 * The two-sided critical value for a confidence level: Phi^-1((1 + confidence) / 2). 0.95 returns the
 * constant itself, so the default path does not depend on the approximation at all.
 */
export function zForConfidence(confidence: number = DEFAULT_CONFIDENCE): number {
  if (typeof confidence !== 'number' || !Number.isFinite(confidence) || confidence <= 0 || confidence >= 1) {
    throw new StatsInputError('INVALID_CONFIDENCE', `confidence must lie strictly between 0 and 1, got ${String(confidence)}`);
  }
  if (confidence === DEFAULT_CONFIDENCE) return Z_95;
  return normalQuantile((1 + confidence) / 2);
}

/** Options shared by every interval. */
export interface IntervalOptions {
  /** Two-sided confidence level, strictly between 0 and 1. Default 0.95 (GT6: every rate carries a 95% interval). */
  readonly confidence?: number;
}

/** Options of the intervals that also take the critical value itself. */
export interface CriticalValueOptions extends IntervalOptions {
  /**
   * An explicit two-sided critical value, for reproducing a table printed with another z (1.96, say) or for
   * inverting an interval into its p-value (pvalue.ts). Give `z` or `confidence`, not both. Default `Z_95`
   * through `confidence` 0.95.
   */
  readonly z?: number;
}

/** The critical value of `opts`: its `z`, or the quantile of its `confidence`; both given is an error. */
export function criticalValue(opts: CriticalValueOptions): number {
  if (opts.z === undefined) return zForConfidence(opts.confidence);
  if (opts.confidence !== undefined) {
    throw new StatsInputError('INVALID_OPTION', 'give either z or confidence, not both');
  }
  if (typeof opts.z !== 'number' || !Number.isFinite(opts.z) || opts.z <= 0) {
    throw new StatsInputError('INVALID_OPTION', `z must be a finite number > 0, got ${String(opts.z)}`);
  }
  return opts.z;
}

/**
 * The standard normal upper tail Q(z) = 1 - Phi(z), computed directly (no 1 - Phi cancellation), by Hart's
 * algorithm 5666 (Hart et al. 1968, "Computer Approximations") as given in double precision by West G
 * (2005), "Better approximations to cumulative normal functions", Wilmott Magazine 70-76: a rational
 * approximation for |z| < 7.07 (relative error below 1e-13 up to z = 3, checked against scipy's norm.sf)
 * and a continued fraction beyond (relative error about 1e-8, absolute below 1e-21). 0 beyond 37. NaN throws `NOT_FINITE`.
 */
export function normalUpperTail(z: number): number {
  if (typeof z !== 'number' || Number.isNaN(z)) throw new StatsInputError('NOT_FINITE', `normalUpperTail needs a number, got ${String(z)}`);
  const x = Math.abs(z);
  let tail: number;
  if (x > 37) {
    tail = 0;
  } else {
    const e = Math.exp((-x * x) / 2);
    if (x < 7.07106781186547) {
      const num = horner(x, [3.52624965998911e-2, 0.700383064443688, 6.37396220353165, 33.912866078383, 112.079291497871, 221.213596169931, 220.206867912376]);
      const den = horner(x, [8.83883476483184e-2, 1.75566716318264, 16.064177579207, 86.7807322029461, 296.564248779674, 637.333633378831, 793.826512519948, 440.413735824752]);
      tail = (e * num) / den;
    } else {
      let cf = x + 0.65;
      cf = x + 4 / cf;
      cf = x + 3 / cf;
      cf = x + 2 / cf;
      cf = x + 1 / cf;
      tail = e / cf / 2.506628274631;
    }
  }
  return z >= 0 ? tail : 1 - tail;
}

/** The polynomial with coefficients from the highest power down, at x, by Horner's rule. */
function horner(x: number, coefficients: readonly number[]): number {
  return coefficients.reduce((acc, c) => acc * x + c, 0);
}
