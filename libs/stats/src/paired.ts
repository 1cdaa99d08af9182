import { StatsInputError, assertCount, clamp } from './errors';
import { type CriticalValueOptions, criticalValue } from './normal';
import { wilsonBounds } from './wilson';

/**
 * The paired 2 x 2 table of one suite run twice on the same cases (G7):
 *   a = passed in both runs, b = passed in the first run only,
 *   c = passed in the second run only, d = failed in both.
 * Newcombe (1998) calls the same cells e, f, g, h; ratesci and Fagerland et al. (2014) call them
 * x11, x12, x21, x22.
 */
export interface PairedCounts {
  readonly a: number;
  readonly b: number;
  readonly c: number;
  readonly d: number;
}

export type PairedMethod = 'newcombe10' | 'tango';

export interface PairedDiffOptions extends CriticalValueOptions {
  /** Default `newcombe10`. */
  readonly method?: PairedMethod;
}

/** p1 - p2 of paired proportions, p1 = (a + b) / n the first run's pass rate, p2 = (a + c) / n the second's. */
export interface PairedDifference {
  /** (b - c) / n, or null when n = 0. */
  readonly estimate: number | null;
  readonly lower: number;
  readonly upper: number;
  readonly p1: number | null;
  readonly p2: number | null;
  readonly n: number;
  readonly method: PairedMethod;
  /** True when the whole interval lies on one side of zero, as for `newcombeDiff` (G2). */
  readonly excludesZero: boolean;
  /** Present only when `estimate` is null. */
  readonly reason?: 'empty';
}

const METHODS: readonly PairedMethod[] = ['newcombe10', 'tango'];

/**
 * Interval for the difference of two paired proportions (G7): the same cases scored in two runs, so
 * the two pass rates are correlated and an independent-samples interval (`newcombeDiff`) is too wide
 * whenever the runs agree on most cases, which is the usual situation for a rerun.
 *
 * `newcombe10` (default): Newcombe RG (1998), "Improved confidence intervals for the difference between
 * binomial proportions based on paired data", Stat Med 17:2635-2650, method 10. With (l1, u1), (l2, u2)
 * the Wilson intervals of p1 and p2 and D = p1 - p2:
 *   L = D - sqrt((p1 - l1)^2 - 2 phi (p1 - l1)(u2 - p2) + (u2 - p2)^2)
 *   U = D + sqrt((u1 - p1)^2 - 2 phi (u1 - p1)(p2 - l2) + (p2 - l2)^2)
 * where phi estimates the correlation of the two runs with Newcombe's continuity correction:
 *   phi = max(ad - bc - n/2, 0) / sqrt((a+b)(c+d)(a+c)(b+d))   if ad > bc
 *   phi = (ad - bc) / sqrt((a+b)(c+d)(a+c)(b+d))                otherwise
 *   phi = 0 when any margin is 0 (the product under the root is 0).
 * The correction keeps a table with no discordant pairs, (k, 0, 0, k), from collapsing to a zero-width
 * interval, which the uncorrected phi = 1 would do (Newcombe's methods 8 and 9). Same form as the
 * `newcombeDiff` hybrid, so with phi = 0 the two coincide on the margins.
 *
 * `tango`: Tango T (1998), "Equivalence test and confidence interval for the difference in proportions
 * for the paired-sample design", Stat Med 17:891-908. The interval is every delta the score test does not
 * reject, |T(delta)| <= z, with
 *   T(delta) = (b - c - n delta) / sqrt(n (2 q(delta) + delta (1 - delta)))
 * and q(delta) the restricted maximum-likelihood estimate of the "second run only" cell probability,
 * the non-negative root of 2n q^2 + (-b - c + (2n - b + c) delta) q - c delta (1 - delta) = 0.
 * T decreases from +infinity at delta = -1 through 0 at the estimate to -infinity at delta = 1, so the
 * lower limit is found by bisection between -1 and the estimate, run to the last bit of a double:
 * deterministic and with no tolerance to choose. The upper limit is minus the lower limit of the table
 * with the runs swapped, so that swapping b and c mirrors the interval exactly.
 *
 * n = 0: nothing is known, so `{ estimate: null, lower: -1, upper: 1, excludesZero: false, reason: 'empty' }`.
 */
export function pairedDiff(counts: PairedCounts, opts: PairedDiffOptions = {}): PairedDifference {
  const { a, b, c, d } = counts;
  assertCount(a, 'a');
  assertCount(b, 'b');
  assertCount(c, 'c');
  assertCount(d, 'd');
  const method = opts.method ?? 'newcombe10';
  if (!METHODS.includes(method)) {
    throw new StatsInputError('INVALID_OPTION', `method must be one of ${METHODS.join(', ')}, got ${String(method)}`);
  }
  const z = criticalValue(opts);
  const n = a + b + c + d;
  if (!Number.isSafeInteger(n)) {
    throw new StatsInputError('NOT_INTEGER', `a + b + c + d must be a safe integer, got ${n}`);
  }
  if (n === 0) {
    return { estimate: null, lower: -1, upper: 1, p1: null, p2: null, n, method, excludesZero: false, reason: 'empty' };
  }
  const p1 = (a + b) / n;
  const p2 = (a + c) / n;
  // (b - c) / n, not p1 - p2: the same number without the rounding of two divisions, and exactly the
  // point where Tango's statistic is 0.
  const estimate = (b - c) / n;
  const [lower, upper] = method === 'tango' ? tangoBounds(b, c, n, z) : newcombe10Bounds(a, b, c, d, n, z);
  return { estimate, lower, upper, p1, p2, n, method, excludesZero: lower > 0 || upper < 0 };
}

/** Newcombe's corrected phi (method 10). */
export function newcombePhi(a: number, b: number, c: number, d: number): number {
  const product = (a + b) * (c + d) * (a + c) * (b + d);
  if (product === 0) return 0;
  const cross = a * d - b * c;
  const n = a + b + c + d;
  const numerator = cross > 0 ? Math.max(cross - n / 2, 0) : cross;
  return numerator / Math.sqrt(product);
}

function newcombe10Bounds(a: number, b: number, c: number, d: number, n: number, z: number): [number, number] {
  const p1 = (a + b) / n;
  const p2 = (a + c) / n;
  const [l1, u1] = wilsonBounds(a + b, n, z);
  const [l2, u2] = wilsonBounds(a + c, n, z);
  const phi = newcombePhi(a, b, c, d);
  const diff = p1 - p2;
  const lower = clamp(diff - combined(p1 - l1, u2 - p2, phi), -1, 1);
  const upper = clamp(diff + combined(u1 - p1, p2 - l2, phi), -1, 1);
  return [lower, upper];
}

/**
 * sqrt(x^2 + y^2 - 2 phi x y), written so that it is symmetric in x and y bit for bit: swapping the two
 * runs (b <-> c) then mirrors the interval exactly, as `newcombeDiff` does. Never negative: |phi| <= 1
 * makes the radicand at least (|x| - |y|)^2, and max(0, .) absorbs rounding.
 */
function combined(x: number, y: number, phi: number): number {
  return Math.sqrt(Math.max(0, x * x + y * y - 2 * phi * (x * y)));
}

function tangoBounds(b: number, c: number, n: number, z: number): [number, number] {
  // The upper limit of (b, c) is minus the lower limit of the swapped table (c, b), by the symmetry
  // T_{c,b}(-delta) = -T_{b,c}(delta). Computing it that way, rather than by a second search on the other
  // side, makes swapping the runs mirror the interval bit for bit, as for newcombe10.
  return [tangoLower(b, c, n, z), -tangoLower(c, b, n, z)];
}

/** The Tango lower limit: the delta below the estimate where T(delta) = z. */
function tangoLower(b: number, c: number, n: number, z: number): number {
  const estimate = (b - c) / n;
  // At estimate = -1 (every case passed only in the second run) the limit is the end of the range; T is
  // not defined there (0 / 0), so it is set, not searched.
  if (estimate === -1) return -1;
  return bisectDecreasing((delta) => tangoScore(b, c, n, delta) - z, -1, estimate);
}

/** Tango's score statistic T(delta) for H0: p1 - p2 = delta, -1 < delta < 1. */
export function tangoScore(b: number, c: number, n: number, delta: number): number {
  const qa = 2 * n;
  const qb = -b - c + (2 * n - b + c) * delta;
  const qc = -c * delta * (1 - delta);
  const root = Math.sqrt(Math.max(0, qb * qb - 4 * qa * qc));
  // The non-negative root of qa q^2 + qb q + qc = 0, in the form that does not subtract nearly equal
  // numbers: (-qb + root) / (2 qa) loses every digit when qb > 0 and qa qc is small.
  const q = qb >= 0 ? (-2 * qc) / (qb + root) : (root - qb) / (2 * qa);
  return (b - c - n * delta) / Math.sqrt(n * (2 * q + delta * (1 - delta)));
}

/**
 * The root of f on the open interval (lo, hi), for f > 0 near lo and f < 0 near hi. Plain bisection until
 * the midpoint no longer lies strictly between the ends (about 60 halvings), so the answer is the same
 * on every platform and is within one or two ulps of the true crossing. The ends are never evaluated.
 */
function bisectDecreasing(f: (x: number) => number, lo: number, hi: number): number {
  for (let i = 0; i < 2000; i++) {
    const mid = lo + (hi - lo) / 2;
    if (mid <= lo || mid >= hi) break;
    if (f(mid) > 0) lo = mid;
    else hi = mid;
  }
  return lo + (hi - lo) / 2;
}
