import { clamp } from './errors';
import { type CriticalValueOptions, criticalValue } from './normal';
import { assertSuccesses, wilsonBounds } from './wilson';

/** A difference of two proportions, p1 - p2, with its interval (G1, G3). */
export interface ProportionDifference {
  /** p1 - p2, or null when either sample is empty. */
  readonly diff: number | null;
  readonly lower: number;
  readonly upper: number;
  readonly p1: number | null;
  readonly p2: number | null;
  readonly x1: number;
  readonly n1: number;
  readonly x2: number;
  readonly n2: number;
  /** True when the whole interval lies on one side of zero: the only case G2 may call a regression. */
  readonly excludesZero: boolean;
  /** Present only when `diff` is null. */
  readonly reason?: 'empty';
}

/**
 * Newcombe (1998) method 10, the hybrid score interval for p1 - p2, built from the two Wilson intervals
 * (l1, u1) and (l2, u2):
 *   L = (p1 - p2) - sqrt((p1 - l1)^2 + (u2 - p2)^2)
 *   U = (p1 - p2) + sqrt((u1 - p1)^2 + (p2 - l2)^2)
 * It keeps Wilson's good behaviour at 0/n and n/n, where the Wald difference interval collapses to a point.
 * For G1 call it with the run first and the baseline second, so the difference reads `run - baseline`.
 * `opts`: `confidence` (default 0.95) or the critical value `z` itself, not both.
 *
 * n1 = 0 or n2 = 0: one proportion is unknown, so nothing is known about the difference. The result is
 * `diff: null`, the whole range [-1, 1], `excludesZero: false` and `reason: 'empty'`: an empty run or
 * baseline can never be called a regression.
 */
export function newcombeDiff(
  x1: number,
  n1: number,
  x2: number,
  n2: number,
  opts: CriticalValueOptions = {},
): ProportionDifference {
  assertSuccesses(x1, n1, 'x1');
  assertSuccesses(x2, n2, 'x2');
  const z = criticalValue(opts);
  const p1 = n1 === 0 ? null : x1 / n1;
  const p2 = n2 === 0 ? null : x2 / n2;
  if (p1 === null || p2 === null) {
    return { diff: null, lower: -1, upper: 1, p1, p2, x1, n1, x2, n2, excludesZero: false, reason: 'empty' };
  }
  const [l1, u1] = wilsonBounds(x1, n1, z);
  const [l2, u2] = wilsonBounds(x2, n2, z);
  const diff = p1 - p2;
  // Plain sqrt of a sum, not Math.hypot: a sum of two squares is order-free, so swapping the samples
  // mirrors the interval exactly (lower <-> -upper), bit for bit.
  const lower = clamp(diff - Math.sqrt(sq(p1 - l1) + sq(u2 - p2)), -1, 1);
  const upper = clamp(diff + Math.sqrt(sq(u1 - p1) + sq(p2 - l2)), -1, 1);
  return { diff, lower, upper, p1, p2, x1, n1, x2, n2, excludesZero: lower > 0 || upper < 0 };
}

function sq(v: number): number {
  return v * v;
}
