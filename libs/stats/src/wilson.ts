import { StatsInputError, assertCount, clamp } from './errors';
import { type IntervalOptions, zForConfidence } from './normal';

/**
 * A proportion with its Wilson score interval (R2, SC1, J4, GT6). `n` is always there: a rate without its
 * denominator is not reported anywhere in this service.
 */
export interface WilsonInterval {
  /** successes / n, or null when n = 0. */
  readonly estimate: number | null;
  readonly lower: number;
  readonly upper: number;
  readonly successes: number;
  readonly n: number;
  /** Present only when `estimate` is null. */
  readonly reason?: 'empty';
}

export function assertSuccesses(successes: number, n: number, what = 'successes'): void {
  assertCount(successes, what);
  assertCount(n, 'n');
  if (successes > n) {
    throw new StatsInputError('SUCCESSES_EXCEED_N', `${what} (${successes}) must not exceed n (${n})`);
  }
}

/**
 * Wilson (1927) score interval: the set of p for which |p_hat - p| <= z * sqrt(p (1 - p) / n), solved in
 * closed form. Unlike the Wald interval it never leaves [0, 1] and stays honest at 0/n and n/n, which is
 * exactly where small eval suites live.
 *
 * n = 0 gives `{ estimate: null, lower: 0, upper: 1, reason: 'empty' }`: with no trials every proportion is
 * possible, so the interval is the whole range rather than a made-up point.
 */
export function wilson(successes: number, n: number, opts: IntervalOptions = {}): WilsonInterval {
  assertSuccesses(successes, n);
  const z = zForConfidence(opts.confidence);
  if (n === 0) return { estimate: null, lower: 0, upper: 1, successes: 0, n: 0, reason: 'empty' };
  const [lower, upper] = wilsonBounds(successes, n, z);
  return { estimate: successes / n, lower, upper, successes, n };
}

/**
 * The bounds for an explicit critical value. Exported for the test that shows why z = 1.96 is not good
 * enough; the public entry point is `wilson`.
 */
export function wilsonBounds(successes: number, n: number, z: number): [number, number] {
  const p = successes / n;
  const z2 = z * z;
  const denom = 1 + z2 / n;
  const centre = (p + z2 / (2 * n)) / denom;
  const half = (z / denom) * Math.sqrt((p * (1 - p)) / n + z2 / (4 * n * n));
  // At 0/n and n/n the closed form gives the boundary only up to rounding; the exact value is known.
  const lower = successes === 0 ? 0 : clamp(centre - half, 0, 1);
  const upper = successes === n ? 1 : clamp(centre + half, 0, 1);
  return [lower, upper];
}
