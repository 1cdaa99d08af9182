import { StatsInputError, type UndefinedReason, assertFinite } from './errors';

export type TrendDirection = 'improving' | 'declining' | 'flat' | 'insufficient_data';

export interface TrendResult {
  /** Change per run, or null with fewer than `minPoints` values. */
  readonly slope: number | null;
  /** Fitted value at the first run (x = 0), or null with the slope. */
  readonly intercept: number | null;
  readonly n: number;
  readonly direction: TrendDirection;
  readonly reason?: Extract<UndefinedReason, 'empty' | 'insufficient_data'>;
}

export interface TrendOptions {
  /**
   * |slope| below this is `flat`. Default 0.005 per run: on a pass rate or mean score in [0, 1], half a
   * percentage point per run, below what a typical suite of tens of cases can resolve.
   */
  readonly flatEpsilon?: number;
  /** Fewest runs that make a trend; default 2. */
  readonly minPoints?: number;
}

export const TREND_FLAT_EPSILON = 0.005;

/**
 * Ordinary least-squares line through (i, ys[i]), i = 0..n-1, the runs in chronological order, oldest
 * first (SC1). Higher is better (pass rate, score), so a positive slope is `improving`.
 *   slope = sum (i - mean_i)(y_i - mean_y) / sum (i - mean_i)^2,  intercept = mean_y - slope * mean_i
 * The slope is per run, not per unit of time: runs are not evenly spaced in time, and a scorecard asks
 * "is each run better than the last", not "how fast".
 */
export function leastSquaresTrend(ys: readonly number[], opts: TrendOptions = {}): TrendResult {
  const epsilon = opts.flatEpsilon ?? TREND_FLAT_EPSILON;
  const minPoints = opts.minPoints ?? 2;
  if (!Number.isFinite(epsilon) || epsilon < 0) {
    throw new StatsInputError('INVALID_OPTION', `flatEpsilon must be a finite number >= 0, got ${epsilon}`);
  }
  if (!Number.isSafeInteger(minPoints) || minPoints < 2) {
    throw new StatsInputError('INVALID_OPTION', `minPoints must be an integer >= 2, got ${minPoints}`);
  }
  const n = ys.length;
  ys.forEach((y, i) => assertFinite(y, `ys[${i}]`));
  if (n < minPoints) {
    return {
      slope: null,
      intercept: null,
      n,
      direction: 'insufficient_data',
      reason: n === 0 ? 'empty' : 'insufficient_data',
    };
  }
  const meanX = (n - 1) / 2;
  let meanY = 0;
  for (const y of ys) meanY += y;
  meanY /= n;
  let sxy = 0;
  let sxx = 0;
  for (let i = 0; i < n; i++) {
    const dx = i - meanX;
    sxy += dx * (ys[i] - meanY);
    sxx += dx * dx;
  }
  const slope = sxy / sxx;
  const intercept = meanY - slope * meanX;
  const direction: TrendDirection =
    slope === 0 || Math.abs(slope) < epsilon ? 'flat' : slope > 0 ? 'improving' : 'declining';
  return { slope, intercept, n, direction };
}
