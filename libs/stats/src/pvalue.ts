import { newcombeDiff } from './newcombe';
import { normalUpperTail } from './normal';
import { type PairedCounts, pairedDiff } from './paired';

/**
 * The p-value an interval implies (GT7): the smallest alpha at which the two-sided (1 - alpha) interval of
 * the difference excludes zero. With Z(alpha) = Phi^-1(1 - alpha / 2), the interval widens as z grows, so
 * it excludes zero for every z below one crossing z* and for none above it; then p = 2 (1 - Phi(z*)).
 * "p < 0.05" is exactly "the 95% interval excludes zero" - the test the gate already decides by (G2, G7)
 * - and the p-value carries that decision as one number that Holm's method can adjust (holm.ts).
 *
 * `p` is null (with `reason: 'empty'`) when the difference is unknown (an empty sample); `z` is z*. A zero
 * difference gives p = 1 (every interval contains its estimate). The crossing is found by bisection on z in
 * (0, 40) until the midpoint no longer lies strictly between the ends: deterministic, no tolerance to
 * choose; beyond z = 40 (p below 1e-300) p is 0.
 */
export interface IntervalPValue {
  readonly p: number | null;
  /** The crossing z*: the interval at this critical value has zero as its bound. null with `p` null or 1. */
  readonly z: number | null;
  readonly reason?: 'empty';
}

const Z_MAX = 40;

/** Two-sided p-value of `newcombeDiff(x1, n1, x2, n2)` (Newcombe 1998 hybrid score, method 10 for independent samples). */
export function newcombeDiffPValue(x1: number, n1: number, x2: number, n2: number): IntervalPValue {
  const at = (z: number) => newcombeDiff(x1, n1, x2, n2, { z });
  return invert(at(1).diff, (z) => at(z));
}

/** Two-sided p-value of `pairedDiff(counts)` (Newcombe 1998 paired method 10, `newcombe10`). */
export function pairedDiffPValue(counts: PairedCounts): IntervalPValue {
  const at = (z: number) => pairedDiff(counts, { z });
  return invert(at(1).estimate, (z) => at(z));
}

function invert(estimate: number | null, interval: (z: number) => { readonly lower: number; readonly upper: number }): IntervalPValue {
  if (estimate === null) return { p: null, z: null, reason: 'empty' };
  if (estimate === 0) return { p: 1, z: null };
  const excludes = (z: number) => {
    const i = interval(z);
    return estimate < 0 ? i.upper < 0 : i.lower > 0;
  };
  if (excludes(Z_MAX)) return { p: 2 * normalUpperTail(Z_MAX), z: Z_MAX };
  let lo = 0;
  let hi = Z_MAX;
  for (let i = 0; i < 2000; i++) {
    const mid = lo + (hi - lo) / 2;
    if (mid <= lo || mid >= hi) break;
    if (excludes(mid)) lo = mid;
    else hi = mid;
  }
  const z = lo + (hi - lo) / 2;
  return { p: Math.min(1, 2 * normalUpperTail(z)), z };
}
